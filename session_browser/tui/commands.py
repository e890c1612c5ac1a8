"""The command palette: every action of the app, by name."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from session_browser.tui.common.render import printable

if TYPE_CHECKING:
    from session_browser.tui.app import SessionBrowserApp


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    action: str  # "app.x" or "screen.x"
    screen: str = ""  # the screen class name it applies to ("" = everywhere)


COMMANDS: tuple[Command, ...] = (
    Command("Search", "Search every session (F2)", "app.show_search"),
    Command("Recent sessions", "What was I working on? (F3)", "app.show_recent"),
    Command("Help: keys", "Every key binding (F1 or ?)", "app.help"),
    Command("Toggle light/dark theme", "Switch light and dark (Ctrl+T)", "app.toggle_theme"),
    Command("Choose theme", "Pick any theme", "app.change_theme"),
    Command("Quarantine", "Corrupt and spill files to rescue (F4)", "app.open_quarantine"),
    Command("Export", "Export sessions to JSON, Markdown or HTML (F6)", "app.open_export"),
    Command("Import", "Import a payload, dry run first (F7)", "app.open_import"),
    Command("Cancel index build", "Stop building the search index (Ctrl+G)", "app.cancel_index"),
    Command(
        "Resume index build",
        "Index new and changed files (and finish a stopped build)",
        "app.resume_index",
    ),
    Command("Quit", "Leave the app (Ctrl+Q)", "app.quit"),
    Command("Saved searches", "List and run the saved searches (F9)", "app.saved_searches"),
    Command(
        "Save search", "Save the query under a name (Ctrl+S)", "screen.save_search", "MainScreen"
    ),
    Command("Compact rows", "One line a hit and a recent session (F8)", "app.toggle_compact"),
    Command("Open session in $PAGER", "The session's file (Ctrl+O)", "app.open_in_pager"),
    Command("Open session in $EDITOR", "The session's file", "app.open_in_editor"),
    Command("Copy session id", "The session in hand (Ctrl+Y)", "app.copy_session_id"),
    Command("Copy session file path", "The session's file", "app.copy_session_path"),
    Command(
        "Forget this session…",
        "Erase it from every copy we keep, after saying where (Ctrl+D)",
        "app.forget_session",
    ),
    Command("Explain hit score", "Why the hit scored so (e)", "screen.explain_hit", "MainScreen"),
    Command(
        "Search mode",
        "Hybrid (words and meaning) or lexical (words only) (Ctrl+B)",
        "screen.toggle_search_mode",
        "MainScreen",
    ),
    Command(
        "Sort recent sessions",
        "updated/created/size (s in the list)",
        "screen.cycle_sort",
        "MainScreen",
    ),
    Command(
        "Mark all recent sessions",
        "Mark every listed session, or unmark them all (a)",
        "screen.mark_all",
        "MainScreen",
    ),
    Command("Clear marks", "Unmark every session", "screen.clear_marks", "MainScreen"),
    Command("Next hit in session", "n", "screen.next_hit", "ViewerScreen"),
    Command("Previous hit in session", "N", "screen.prev_hit", "ViewerScreen"),
    Command("Next user turn", "]", "screen.next_user", "ViewerScreen"),
    Command("Previous user turn", "[", "screen.prev_user", "ViewerScreen"),
    Command("Go to start", "g", "screen.first", "ViewerScreen"),
    Command("Go to end", "G", "screen.last", "ViewerScreen"),
    Command("Find in session", "/", "screen.find", "ViewerScreen"),
    Command("Widen context", "+", "screen.widen", "ViewerScreen"),
    Command("Narrow context", "-", "screen.narrow", "ViewerScreen"),
    Command("Copy message", "y", "screen.copy", "ViewerScreen"),
    Command("Message metadata", "i", "screen.metadata", "ViewerScreen"),
    Command("Show the long message whole", "w", "screen.full_message", "ViewerScreen"),
    Command("Raw text / rendered Markdown", "v", "screen.toggle_raw", "ViewerScreen"),
    Command("Copy code block", "c", "screen.copy_code", "ViewerScreen"),
    Command("Tool calls and thinking", "t", "screen.toggle_hidden", "ViewerScreen"),
    Command(
        "Copy resume command",
        "Claude Code / Codex: the command that resumes this session (C)",
        "screen.copy_resume",
        "ViewerScreen",
    ),
    Command("Back", "Close the viewer (Esc)", "screen.back", "ViewerScreen"),
    Command(
        "Restore",
        "Save what can be read as a new session, a damaged live file in place (r)",
        "screen.act('restore')",
        "QuarantineScreen",
    ),
    Command(
        "Restore as…",
        "Choose the session id to restore under; its own id restores in place (R)",
        "screen.restore_as",
        "QuarantineScreen",
    ),
    Command(
        "Merge missing messages",
        "Add the recovered messages the live session lacks (m)",
        "screen.act('merge')",
        "QuarantineScreen",
    ),
    Command(
        "Fold spill file",
        "Fold spilled messages back in (f)",
        "screen.act('fold')",
        "QuarantineScreen",
    ),
    Command(
        "Discard file",
        "Move the file to the trash (d)",
        "screen.act('discard')",
        "QuarantineScreen",
    ),
    Command("Undo last action", "Put the files back (u)", "screen.undo", "QuarantineScreen"),
    Command("Reload quarantine", "List the files again (F5)", "screen.reload", "QuarantineScreen"),
    Command("Back", "Close the quarantine (Esc)", "screen.back", "QuarantineScreen"),
    Command("Run the export", "Write the file (Ctrl+S)", "screen.export", "ExportScreen"),
    Command("Back", "Close the export (Esc)", "screen.back", "ExportScreen"),
    Command("Import: dry run", "What would change (F5)", "screen.dry_run", "ImportScreen"),
    Command("Run the import", "Write the sessions (Ctrl+S)", "screen.run_import", "ImportScreen"),
    Command("Back", "Close the import (Esc)", "screen.back", "ImportScreen"),
)


class ActionsProvider(Provider):
    """Offers :data:`COMMANDS` that apply to the screen the palette was opened on."""

    def _commands(self) -> list[Command]:
        name = type(self.screen).__name__
        return [c for c in COMMANDS if not c.screen or c.screen == name]

    async def _run(self, action: str) -> None:
        if action.startswith("screen."):
            await self.app.run_action(action.removeprefix("screen."), self.screen)
        else:
            await self.app.run_action(action)

    def _saved(self) -> list[tuple[str, str]]:
        """(name, query) of every saved search ([] when the file cannot be read: F9 says why)."""
        from session_browser.core.saved_searches import SavedSearchesError, load_saved

        try:
            return [(s.name, s.query) for s in load_saved()]
        except SavedSearchesError:
            return []

    async def _run_saved(self, query: str) -> None:
        cast("SessionBrowserApp", self.app).run_saved_query(query)  # the app's own palette

    async def discover(self) -> Hits:
        for command in self._commands():
            yield DiscoveryHit(command.name, partial(self._run, command.action), help=command.help)
        for name, query in self._saved():
            yield DiscoveryHit(
                printable(f"Saved search: {name}", one_line=True),
                partial(self._run_saved, query),
                help=printable(query, one_line=True),
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._commands():
            score = matcher.match(command.name)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(command.name),
                    partial(self._run, command.action),
                    help=command.help,
                )
        for name, saved_query in self._saved():
            title = printable(f"Saved search: {name}", one_line=True)
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(title),
                    partial(self._run_saved, saved_query),
                    help=printable(saved_query, one_line=True),
                )
