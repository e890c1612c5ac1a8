"""The header (title, pane tabs, attention badge) and the status line."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, cast

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import ProgressBar, Static

from session_browser.tui.backend import IndexState


class AppHeader(Horizontal):
    """One line: the app name, where you are, and a badge slot for files needing attention."""

    def __init__(self, where: str = "", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.where = where

    def compose(self) -> ComposeResult:
        yield Static(Text("session-browser", style="bold"), id="header-title")
        yield Static(Text(self.where), id="header-where")
        yield Static("", id="attention-badge")

    def on_mount(self) -> None:
        self.watch(self.app, "attention", self._attention, init=True)

    def set_where(self, where: Text | str) -> None:
        self.query_one("#header-where", Static).update(
            where if isinstance(where, Text) else Text(where)
        )

    def _attention(self, count: int) -> None:
        badge = self.query_one("#attention-badge", Static)
        badge.display = count > 0
        badge.update(Text(f" {count} in quarantine · F4 ", end=""))


#: How the status line names each source kind (its key in the sources table otherwise).
KIND_TITLES = {
    "praisonai": "PraisonAI",
    "pi": "Pi",
    "claude": "Claude Code",
    "codex": "Codex",
    "gemini": "Gemini CLI",
    "opencode": "OpenCode",
    "kimi": "Kimi Code CLI",
    "aider": "Aider",
    "cline": "Cline / Roo Code",
    "goose": "Goose",
    "copilot": "Copilot CLI",
    "team": "team index",
}
SEPARATOR = " · "


@dataclass(frozen=True)
class StatusPart:
    """One segment of the status line: its text, a shorter form (or None), and how much it
    matters (a narrow line shortens, then drops, the lowest first; ``droppable=False``: never
    dropped, only shortened)."""

    text: str
    short: str | None = None
    rank: int = 0
    droppable: bool = True


def stores_part(kinds: Sequence[str]) -> str:
    """The stores as counts per source kind, in their order: ``PraisonAI ×2 + Pi``."""
    counts: dict[str, int] = {}
    for kind in kinds:
        counts[kind] = counts.get(kind, 0) + 1
    names = [
        KIND_TITLES.get(kind, kind) + (f" ×{n}" if n > 1 else "") for kind, n in counts.items()
    ]
    return " + ".join(names) if names else "no store"


def fit_status(parts: Sequence[StatusPart], width: int) -> str:
    """The parts joined, fitted into ``width`` cells: from the lowest rank up, a part is
    shortened, then dropped, until the line fits (a part that is not droppable stays)."""
    shown: list[str | None] = [p.text for p in parts]

    def line() -> str:
        return SEPARATOR.join(t for t in shown if t is not None)

    for i in sorted(range(len(parts)), key=lambda i: parts[i].rank):
        if cell_len(line()) <= width:
            break
        part = parts[i]
        if part.short is not None:
            shown[i] = part.short
        if cell_len(line()) > width and part.droppable:
            shown[i] = None
    return line()


class StatusSource(Protocol):
    """What the app keeps of its status line: the whole text and the parts it is made of."""

    status_text: str
    status_parts: tuple[StatusPart, ...]


class StatusLine(Static):
    """Counts, index state, the stores by kind and the vault note (kept by the app, shown
    on every screen), fitted to the line's width: the index state is never cut off."""

    @property
    def source(self) -> StatusSource:
        return cast(StatusSource, self.app)

    def on_mount(self) -> None:
        self.watch(self.app, "status_text", self._status, init=True)

    def on_resize(self, event: events.Resize) -> None:
        self._status(self.source.status_text)

    def _status(self, text: str) -> None:
        parts: Sequence[StatusPart] = self.source.status_parts
        width = self.content_size.width or self.app.size.width
        fitted = fit_status(parts, width) if parts else text
        self.update(Text(fitted, no_wrap=True, overflow="ellipsis", end=""))


class IndexBar(Horizontal):
    """Shown while the index builds: files done of total, a progress bar, how to cancel.

    Searches keep answering meanwhile (the files not indexed yet are scanned)."""

    def compose(self) -> ComposeResult:
        yield Static("", id="index-label")
        yield ProgressBar(total=1, show_eta=False, id="index-progress")
        yield Static(Text(" Ctrl+G cancel ", end=""), id="index-cancel")

    def on_mount(self) -> None:
        self.watch(self.app, "index_info", self._update, init=True)

    def _update(self, state: IndexState) -> None:
        # Only when there are files to index: a check of an up-to-date index shows no bar.
        self.display = state.mode == "building" and state.total > 0
        if not self.display:
            return
        label = self.query_one("#index-label", Static)
        label.update(
            Text(f"Building the search index: {state.done:,} of {state.total:,} files", end="")
        )
        self.query_one("#index-progress", ProgressBar).update(
            total=state.total, progress=state.done
        )

    async def on_click(self) -> None:
        await self.app.run_action("cancel_index")
