"""The quarantine workbench: corrupt and spill files, a salvage preview, and undoable actions.

Every file read and every action runs in a thread worker calling
:mod:`session_browser.core.quarantine`; each action is first run as a dry run, whose list of
files is what the confirmation shows, and only a "yes" runs it for real.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Footer, Static
from textual.worker import get_current_worker

from session_browser.core import quarantine as q
from session_browser.core import recall
from session_browser.core.actions.rescue import store_holding, writable_stores
from session_browser.core.model import JSONDict, content_text
from session_browser.tui.common.base import ContextScreen, RestoreIdScreen, shown_path
from session_browser.tui.common.chrome import AppHeader, StatusLine
from session_browser.tui.common.confirm import ConfirmScreen
from session_browser.tui.common.render import (
    human_size,
    one_line,
    printable,
    role_label,
    short_time,
    when_text,
)
from session_browser.tui.common.rowlist import RowList

if TYPE_CHECKING:
    from session_browser.tui.app import ScreenContext

ROW_HEIGHT = 2
LIST_ROWS = 8  # lines of the file list before it scrolls
MAX_PREVIEW_MESSAGES = 400
ACTIONS = ("restore", "merge", "fold", "discard")


# --------------------------------------------------------------------------- helpers


def message_line(msg: JSONDict, index: int | None = None) -> Text:
    """One message as one line: index, role, time, the start of its text."""
    line = Text(end="", no_wrap=True, overflow="ellipsis")
    if index is not None:
        line.append(f"#{index:<4}", style="dim")
    line.append(f"{role_label(str(msg.get('role', '?'))):<10}", style="bold")
    stamp = short_time(msg.get("timestamp"))
    line.append(f"{stamp or '-':<20}", style="dim")
    line.append(one_line(content_text(msg.get("content")))[:300])
    return line


def change_lines(files: list[JSONDict], key: str = "change") -> Text:
    """The files an action changes, one per line: ``modify  ~/…/x.json``."""
    text = Text(end="")
    for f in files:
        text.append(f"  {f.get(key, '?'):<7} ", style="bold")
        text.append(shown_path(str(f.get("path", ""))))
        text.append("\n")
    return text


# --------------------------------------------------------------------------- messages


@dataclass
class Preview:
    """What the preview panes show for one item (built in a worker)."""

    item: q.QuarantineItem
    salvage: q.Salvage | None = None
    comparison: q.Comparison | None = None
    live: list[JSONDict] = field(default_factory=list)
    error: str | None = None


class ItemsLoaded(Message):
    def __init__(
        self, items: list[q.QuarantineItem], error: str | None = None, seq: int = 0
    ) -> None:
        super().__init__()
        self.items = items
        self.error = error
        self.seq = seq  # the app's status number when the listing started


class PreviewLoaded(Message):
    def __init__(self, generation: int, preview: Preview) -> None:
        super().__init__()
        self.generation = generation
        self.preview = preview


class ActionPlanned(Message):
    """The dry run of an action: what it would change (or why it cannot run)."""

    def __init__(
        self,
        action: str,
        item: q.QuarantineItem | None,
        plan: q.ActionResult | JSONDict | None,
        error: str | None = None,
        *,
        warning: bool = False,
        new_id: str | None = None,
    ) -> None:
        super().__init__()
        self.action = action
        self.item = item
        self.plan = plan
        self.error = error
        self.warning = warning  # a refusal to say as a warning (a second restore)
        self.new_id = new_id


class ActionFinished(Message):
    def __init__(
        self, action: str, result: q.ActionResult | JSONDict | None, error: str | None = None
    ) -> None:
        super().__init__()
        self.action = action
        self.result = result
        self.error = error


# --------------------------------------------------------------------------- the list


class QuarantineList(RowList):
    """Two lines a file: kind, name, size, age; session, live or not, the parse error."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Preview", id="quarantine.preview"),
    ]

    def __init__(self, *, now: datetime, id: str | None = None) -> None:
        super().__init__(id=id)
        self.now = now
        self.items: list[q.QuarantineItem] = []

    def set_items(self, items: list[q.QuarantineItem]) -> None:
        self.items = items
        self.set_heights([ROW_HEIGHT] * len(items))
        self.invalidate()

    def current(self) -> q.QuarantineItem | None:
        if 0 <= self.cursor < len(self.items):
            return self.items[self.cursor]
        return None

    def row_lines(self, index: int, width: int) -> list[Text]:
        item = self.items[index]
        dim = self.style_of("dim")
        first = Text(" ", end="")
        first.append(f" {item.kind:<7} ", style=self.style_of("badge"))
        first.append(" ")
        first.append(one_line(item.name), style=self.style_of("title"))
        ref = item.at_ms / 1000.0 if item.at_ms is not None else item.mtime
        right = f"{human_size(item.size)} · {when_text(ref, self.now)}"
        pad = width - first.cell_len - len(right) - 1
        if pad > 0:
            first.append(" " * pad)
        else:
            first.append("  ")
        first.append(right, style=dim)
        second = Text("   session ", style=dim, end="")
        second.append(one_line(item.session_id or "?"), style=self.style_of("accent"))
        if item.id_source == "name":
            second.append(" (from the file name)", style=dim)
        if item.inner_id is not None:  # shown only: actions use the name's session
            second.append(" ⚠ its bytes claim ", style=self.style_of("match"))
            second.append(one_line(item.inner_id), style=self.style_of("match"))
        second.append(" · ", style=dim)
        if item.kind == q.KIND_LIVE:
            second.append("live file, damaged", style=self.style_of("match"))
        elif item.live_exists:
            second.append("live session exists", style=dim)
        else:
            second.append("no live session", style=self.style_of("match"))
        second.append(" · ", style=dim)
        if item.status:  # what was already done with it, before the (long) parse error
            second.append(one_line(item.status), style="bold green")
            second.append(" · ", style=dim)
        if item.problem is not None:
            second.append(one_line(str(item.problem)))
        elif item.kind == q.KIND_SPILL:
            n = item.message_count or 0
            second.append(f"{n} unsaved turn{'s' if n != 1 else ''}, parses cleanly")
        else:
            second.append("parses cleanly")
        return [first, second]


class QuarantineScreen(ContextScreen):
    """Corrupt and spill files: see what broke, how much can be saved, put it back, undo."""

    CSS_PATH = "../quarantine.tcss"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "back", "Back", id="quarantine.back"),
        Binding("r", "act('restore')", "Restore", id="quarantine.restore"),
        Binding("R", "restore_as", "Restore as…", id="quarantine.restore_as"),
        Binding("m", "act('merge')", "Merge missing", id="quarantine.merge"),
        Binding("f", "act('fold')", "Fold spill", id="quarantine.fold"),
        Binding("d,delete", "act('discard')", "Discard", id="quarantine.discard"),
        Binding("u", "undo", "Undo last", id="quarantine.undo"),
        Binding("f5,ctrl+r", "reload", "Reload", show=False, id="quarantine.reload"),
    ]

    def __init__(self, context: ScreenContext) -> None:
        super().__init__(context)
        self.items: list[q.QuarantineItem] = []
        self.preview: Preview | None = None
        self.loaded = False
        self.busy = False
        self._generation = 0
        self._select_after_load: str | None = None

    def compose(self) -> ComposeResult:
        yield AppHeader("Quarantine", id="header")
        yield Static(Text("Looking for corrupt and spill files…"), id="q-info")
        yield QuarantineList(now=self.context.now, id="q-list")
        yield Static("", id="q-empty")
        with Horizontal(id="q-preview"):
            salvage = VerticalScroll(Static("", id="q-salvage-body"), id="q-salvage")
            salvage.border_title = "Salvage preview"
            yield salvage
            live = VerticalScroll(Static("", id="q-live-body"), id="q-live")
            live.border_title = "Live session"
            yield live
        yield Static(self._keys_line(), id="q-keys")
        yield StatusLine(id="status")
        yield Footer()

    def _keys_line(self) -> Text:
        return Text(
            "r restore (a live file in place) · R restore as… · m merge missing · f fold spill · "
            "d discard · u undo · Tab: panes",
            style="dim",
            no_wrap=True,
            overflow="ellipsis",
            end="",
        )

    def on_mount(self) -> None:
        self.query_one("#q-empty").display = False
        self.query_one(QuarantineList).focus()
        self.load_items()

    # ------------------------------------------------------------------ loading

    @work(thread=True, exclusive=True, group="quarantine-list", exit_on_error=False)
    def load_items(self) -> None:
        seq = self.browser.status_seq()
        try:
            items = q.list_items(writable_stores(self.context.backend.stores))
        except Exception as exc:  # shown, never fatal
            self.post_message(ItemsLoaded([], f"{type(exc).__name__}: {exc}", seq))
            return
        self.post_message(ItemsLoaded(items, seq=seq))

    def on_items_loaded(self, message: ItemsLoaded) -> None:
        self.loaded = True
        self.items = message.items
        lst = self.query_one(QuarantineList)
        wanted = self._select_after_load
        self._select_after_load = None
        previous = lst.current()
        lst.set_items(message.items)
        lst.styles.height = min(LIST_ROWS, ROW_HEIGHT * len(message.items)) + 2
        target = wanted or (str(previous.path) if previous else None)
        for i, item in enumerate(message.items):
            if str(item.path) == target:
                lst.cursor = i
                break
        if not message.error:
            self.browser.set_attention(len(message.items), message.seq)
        info = Text(end="")
        if message.error:
            info.append(printable(message.error, one_line=True), style="bold red")
        else:
            n = len(message.items)
            corrupt = sum(1 for it in message.items if it.kind == q.KIND_CORRUPT)
            live = sum(1 for it in message.items if it.kind == q.KIND_LIVE)
            info.append(f"{n} file{'s' if n != 1 else ''} waiting for attention", style="bold")
            info.append(f": {corrupt} corrupt, {n - corrupt - live} spill")
            if live:
                info.append(f", {live} damaged live", style="bold red")
            info.append(" · ↑/↓ select")
        self.query_one("#q-info", Static).update(info)
        empty = self.query_one("#q-empty", Static)
        has = bool(message.items)
        lst.display = has
        self.query_one("#q-preview").display = has
        empty.display = not has
        if not has:
            empty.update(self._empty_text())
            self.preview = None
        else:
            self._load_preview()
        self.refresh_bindings()

    def _empty_text(self) -> Text:
        text = Text(end="")
        text.append("Nothing in quarantine.\n\n", style="bold")
        text.append(
            "No corrupt session files (*.json.corrupt-*), no damaged live session files and "
            "no spill files were found in:\n"
        )
        for store in writable_stores(self.context.backend.stores):
            text.append(f"  {shown_path(store.session_dir)}\n")
            text.append(f"  {shown_path(store.spill_dir)}\n")
        text.append("\nu undoes the last quarantine action, if any. Esc goes back.")
        return text

    @on(RowList.Opened, "#q-list")
    def _opened(self) -> None:
        self.query_one("#q-salvage").focus()

    @on(RowList.CursorMoved, "#q-list")
    def _cursor_moved(self) -> None:
        if self.loaded:
            self._load_preview()
            self.refresh_bindings()

    def _load_preview(self) -> None:
        item = self.query_one(QuarantineList).current()
        if item is None:
            return
        self._generation += 1
        self.load_preview(self._generation, item)

    @work(thread=True, exclusive=True, group="quarantine-preview", exit_on_error=False)
    def load_preview(self, generation: int, item: q.QuarantineItem) -> None:
        preview = Preview(item)
        try:
            store = store_holding(self.context.backend.stores, item)
            preview.salvage = q.salvage(item)
            if get_current_worker().is_cancelled:
                return
            preview.comparison = q.compare(store, preview.salvage)
            sid = preview.salvage.session_id
            if sid and preview.comparison.live_exists:
                live = store.read_raw(sid)
                preview.live = recall.project(live) if live else []
        except Exception as exc:  # a vanished or unreadable file: shown, never fatal
            preview.error = f"{type(exc).__name__}: {exc}"
        self.post_message(PreviewLoaded(generation, preview))

    def on_preview_loaded(self, message: PreviewLoaded) -> None:
        if message.generation != self._generation:
            return
        self.preview = message.preview
        self.query_one("#q-salvage-body", Static).update(self._salvage_text(message.preview))
        self.query_one("#q-live-body", Static).update(self._live_text(message.preview))
        self.refresh_bindings()

    # ------------------------------------------------------------------ preview text

    def _salvage_text(self, preview: Preview) -> RenderableType:
        item = preview.item
        head = Text(end="")
        head.append(one_line(item.name), style="bold")
        head.append("\n")
        if preview.error or preview.salvage is None:
            head.append(printable(preview.error or "no preview", one_line=True), style="red")
            return head
        s = preview.salvage
        head.append("error: ", style="bold")
        head.append(one_line(str(s.problem)) if s.problem else "none (parses cleanly)")
        head.append("\n")
        archived = f" + {len(s.archived_messages)} archived" if s.archived_messages else ""
        head.append(
            f"{s.method}: {len(s.messages)} message(s){archived} recovered · "
            f"{s.kept_bytes} of {s.total_bytes} bytes kept, {s.lost_bytes} lost\n"
        )
        if s.invalid_utf8:
            runs = ", ".join(f"{a}-{b - 1}" for a, b in s.invalid_utf8[:8])
            more = f" and {len(s.invalid_utf8) - 8} more" if len(s.invalid_utf8) > 8 else ""
            head.append(f"invalid UTF-8 at bytes {runs}{more} (shown as \ufffd)\n", style="yellow")
        if s.partial:
            p = s.partial
            head.append("lost: ", style="bold red")
            role = one_line(p.get("role") or "?")
            head.append(
                f"a partial {role} message at byte {p.get('offset')}, "
                f"{p.get('chars')} characters cut off\n"
            )
        for entry in s.skipped_entries[:6]:
            head.append("skipped: ", style="bold")
            head.append(one_line(entry))
            head.append("\n")
        for note in s.notes:
            head.append("note: ", style="dim")
            head.append(one_line(note), style="dim")
            head.append("\n")
        lines: list[RenderableType] = [head]
        if s.partial and s.partial.get("fragment"):
            fragment = Text("  ", no_wrap=True, overflow="ellipsis")
            fragment.append(one_line(str(s.partial["fragment"]))[:300], style="dim italic")
            lines.append(fragment)
        comp = preview.comparison
        compared = comp is not None and comp.live_exists
        missing = {id(m) for _, m in comp.missing} if comp else set()
        if comp is not None and compared:
            lines.append(
                Text(
                    f"\n+ {len(comp.missing)} the live file lacks · "
                    f"= {comp.present} it already has",
                    style="bold",
                )
            )
        else:
            lines.append(Text(f"\n{s.recovered} recovered message(s):", style="bold"))
        for n, (name, msg) in enumerate(s.all_messages()):
            if n >= MAX_PREVIEW_MESSAGES:
                lines.append(Text(f"… {s.recovered - n} more", style="dim"))
                break
            new = id(msg) in missing
            line = Text(no_wrap=True, overflow="ellipsis")
            if compared:
                line.append("+ " if new else "= ", style="bold green" if new else "dim")
            if name == "archived_messages":
                line.append("[archived] ", style="dim")
            line.append_text(message_line(msg))
            if compared and new:
                line.stylize("green", 2)
            lines.append(line)
        return Group(*lines)

    def _live_text(self, preview: Preview) -> RenderableType:
        text = Text(end="")
        s, comp = preview.salvage, preview.comparison
        if s is None or comp is None:
            return text
        sid = s.session_id or preview.item.session_id
        text.append("session ", style="dim")
        text.append(one_line(sid or "?"), style="bold")
        text.append("\n")
        if preview.item.kind == q.KIND_LIVE:
            text.append("This is the live file itself, and it is damaged.\n", style="bold red")
            text.append(
                f"r restores the {s.recovered} recovered message(s) in place: the damaged "
                "bytes move aside (a .corrupt- copy) and u puts them back, byte-identical.\n"
                "R restores them under another id instead; nothing is written before you "
                "confirm.\n"
            )
            return text
        if not comp.live_exists:
            text.append("No live session with this id.\n", style="bold yellow")
            if preview.item.kind == q.KIND_SPILL:
                text.append("f folds the spill into a new session file with this id.\n")
            elif s.recovered:
                text.append(
                    f"r restores the {s.recovered} recovered message(s) as a new session "
                    f"(id {one_line(sid or 'salvaged')}-restored).\n"
                )
            else:
                text.append("Nothing was recovered: d moves the file to the trash.\n")
            return text
        added = len(comp.missing)
        verb = "folding the spill" if preview.item.kind == q.KIND_SPILL else "a merge"
        text.append(
            f"{comp.live_messages} message(s) now; {verb} adds {added} (+) → "
            f"{comp.live_messages + added}\n"
        )
        lines: list[RenderableType] = [text]
        merged, _ = q.merge_in_time_order(list(preview.live), [m for _, m in comp.missing])
        new = {id(m) for _, m in comp.missing}
        for n, msg in enumerate(merged):
            if n >= MAX_PREVIEW_MESSAGES:
                lines.append(Text(f"… {len(merged) - n} more", style="dim"))
                break
            if not isinstance(msg, dict):
                continue
            line = Text(no_wrap=True, overflow="ellipsis")
            if id(msg) in new:
                line.append("+ ", style="bold green")
                line.append_text(message_line(msg))
                line.stylize("green", 2)
            else:
                line.append("  ")
                if msg.get("archived"):
                    line.append("[archived] ", style="dim")
                line.append_text(message_line(msg))
            lines.append(line)
        return Group(*lines)

    # ------------------------------------------------------------------ bindings

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "act":
            item = self.query_one(QuarantineList).current() if self.loaded else None
            if item is None or self.busy:
                return None
            return True  # an action that does not apply says why (a toast)
        if action == "restore_as":
            item = self.query_one(QuarantineList).current() if self.loaded else None
            return None if item is None or self.busy else True
        if action == "undo":
            return None if self.busy else True
        return True

    # ------------------------------------------------------------------ actions

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_reload(self) -> None:
        self.load_items()

    def action_act(self, action: str) -> None:
        item = self.query_one(QuarantineList).current()
        if item is None or self.busy or action not in ACTIONS:
            return
        why = q.unavailable(item, action)
        if why is not None:
            self.notify(printable(why, one_line=True), title=f"Cannot {action}", timeout=6)
            return
        self.plan_action(action, item)

    def action_restore_as(self) -> None:
        item = self.query_one(QuarantineList).current()
        if item is None or self.busy:
            return
        why = q.unavailable(item, "restore")
        if why is not None:
            self.notify(printable(why, one_line=True), title="Cannot restore", timeout=6)
            return
        sid = item.session_id or "salvaged"
        in_place = item.kind == q.KIND_LIVE or not item.live_exists
        default = sid if in_place else f"{sid}-restored"

        def chosen(new_id: str | None) -> None:
            if new_id is None:
                self.notify("Cancelled; nothing changed.", timeout=3)
            elif not new_id.strip():
                self.notify("The session id is empty.", title="Cannot restore", severity="error")
            else:
                self.plan_action("restore", item, new_id)

        self.app.push_screen(RestoreIdScreen(item, default), chosen)

    @work(thread=True, exclusive=True, group="quarantine-action", exit_on_error=False)
    def plan_action(self, action: str, item: q.QuarantineItem, new_id: str | None = None) -> None:
        try:
            plan = self._run(action, item, dry_run=True, new_id=new_id)
        except q.AlreadyRestored as exc:
            self.post_message(ActionPlanned(action, item, None, str(exc), warning=True))
            return
        except (q.QuarantineError, OSError, ValueError) as exc:
            self.post_message(ActionPlanned(action, item, None, str(exc)))
            return
        self.post_message(ActionPlanned(action, item, plan, new_id=new_id))

    def _run(
        self, action: str, item: q.QuarantineItem, *, dry_run: bool, new_id: str | None = None
    ) -> q.ActionResult:
        store = store_holding(self.context.backend.stores, item)
        if action == "restore":
            return q.restore(store, item, new_session_id=new_id, dry_run=dry_run)
        if action == "merge":
            return q.merge(store, item, dry_run=dry_run)
        if action == "fold":
            return q.fold(store, item, dry_run=dry_run)
        return q.discard(item, dry_run=dry_run)

    def on_action_planned(self, message: ActionPlanned) -> None:
        if message.warning:
            self.notify(
                printable(message.error or "", one_line=True) + ". R restores under a chosen id.",
                title="Already restored",
                severity="warning",
                timeout=8,
            )
            return
        if message.error or message.plan is None:
            self.notify(
                printable(message.error or "cannot do that", one_line=True),
                title=f"Cannot {message.action}",
                severity="error",
            )
            return
        if message.action == "undo":
            self._confirm_undo(message.plan)
            return
        plan = message.plan
        assert isinstance(plan, q.ActionResult) and message.item is not None
        item = message.item
        if not plan.files:
            self.notify("The live session already has every recovered message.", timeout=4)
            return
        sid = one_line(plan.session_id or "?")
        in_place = any(f.get("change") == "modify" for f in plan.files)
        titles = {
            "restore": (
                f"Restore session {sid} in place from {plan.added} recovered message(s)?"
                if in_place
                else f"Restore {plan.added} message(s) as the new session {sid}?"
            ),
            "merge": f"Merge {plan.added} missing message(s) into session {sid}?",
            "fold": f"Fold {plan.added} spilled message(s) into session {sid}?",
            "discard": f"Move {one_line(item.name)} to the trash?",
        }
        body = Text(end="")
        body.append("These files will change:\n", style="bold")
        body.append_text(change_lines(plan.files))
        for note in plan.notes:
            body.append(f"{printable(note, one_line=True)}\n", style="dim")
        # the trash folder the discard moves the file into, as the plan names it
        trash = [Path(str(f.get("path"))).parent for f in plan.files if f.get("role") == "trash"]
        where = shown_path(str(trash[0])) if trash else "the trash"
        body.append(
            "\nEvery file is backed up in the journal first: u undoes it, byte-identical."
            if message.action != "discard"
            else f"\nThe file is moved to {where}, never deleted: u brings it back."
        )
        action = message.action
        new_id = message.new_id

        def answered(ok: bool | None) -> None:
            if ok:
                self.busy = True
                self.refresh_bindings()
                self.do_action(action, item, new_id)
            else:
                self.notify("Cancelled; nothing changed.", timeout=3)

        self.app.push_screen(ConfirmScreen(titles[action], body, yes=action.capitalize()), answered)

    @work(thread=True, exclusive=True, group="quarantine-action", exit_on_error=False)
    def do_action(self, action: str, item: q.QuarantineItem, new_id: str | None = None) -> None:
        try:
            result = self._run(action, item, dry_run=False, new_id=new_id)
        except (q.QuarantineError, OSError, ValueError) as exc:
            self.post_message(ActionFinished(action, None, str(exc)))
            return
        self.context.backend.refresh()
        self.post_message(ActionFinished(action, result))

    def action_undo(self) -> None:
        if not self.busy:
            self.plan_undo()

    @work(thread=True, exclusive=True, group="quarantine-action", exit_on_error=False)
    def plan_undo(self) -> None:
        try:
            plan = q.undo(dry_run=True, stores=writable_stores(self.context.backend.stores))
        except (q.QuarantineError, OSError) as exc:
            self.post_message(ActionPlanned("undo", None, None, str(exc)))
            return
        self.post_message(ActionPlanned("undo", None, plan))

    def _confirm_undo(self, plan: q.ActionResult | JSONDict) -> None:
        assert isinstance(plan, dict)
        action_id = str(plan.get("action_id", ""))
        body = Text(end="")
        body.append("These files will be put back as they were before the action:\n", style="bold")
        body.append_text(change_lines(list(plan.get("files") or []), key="restore"))
        body.append(f"\nJournal entry {printable(action_id, one_line=True)}.")
        title = f"Undo the last {one_line(str(plan.get('action') or 'action'))}?"

        def answered(ok: bool | None) -> None:
            if ok:
                self.busy = True
                self.refresh_bindings()
                self.do_undo(action_id)
            else:
                self.notify("Cancelled; nothing changed.", timeout=3)

        self.app.push_screen(ConfirmScreen(title, body, yes="Undo"), answered)

    @work(thread=True, exclusive=True, group="quarantine-action", exit_on_error=False)
    def do_undo(self, action_id: str) -> None:
        try:
            # The open stores hear of every file put back or removed: their indexes follow.
            result = q.undo(action_id, stores=writable_stores(self.context.backend.stores))
        except (q.QuarantineError, OSError) as exc:
            self.post_message(ActionFinished("undo", None, str(exc)))
            return
        self.context.backend.refresh()
        self.post_message(ActionFinished("undo", result))

    def on_action_finished(self, message: ActionFinished) -> None:
        self.busy = False
        self.refresh_bindings()
        if message.error or message.result is None:
            self.notify(
                printable(message.error or "failed", one_line=True),
                title=f"{message.action.capitalize()} failed; nothing changed",
                severity="error",
                timeout=8,
            )
            self.load_items()
            return
        result = message.result
        if isinstance(result, dict):
            files = len(result.get("files") or [])
            self.notify(
                f"Undone: {one_line(str(result.get('action')))} "
                f"({files} file{'s' if files != 1 else ''} put back).",
                timeout=5,
            )
            item_path = next(
                (str(f["path"]) for f in result.get("files") or [] if f.get("restore") == "write"),
                None,
            )
            self._select_after_load = item_path
        else:
            sid = one_line(result.session_id or "?")
            done = {
                "restore": (
                    f"Restored session {sid} in place from {result.added} message(s)."
                    if any(f.get("change") == "modify" for f in result.files)
                    else f"Restored {result.added} message(s) as session {sid}."
                ),
                "merge": f"Merged {result.added} message(s) into session {sid}.",
                "fold": f"Folded {result.added} message(s) into session {sid}.",
                "discard": f"Moved {one_line(Path(result.item).name)} to the trash.",
            }[result.action]
            self.notify(done + " u undoes it.", timeout=6)
        self.load_items()
        self._refresh_app()
