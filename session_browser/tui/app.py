"""The Textual app: search, read, browse; every store call in a thread worker."""

from __future__ import annotations

import itertools
import os
import shlex
import subprocess
import threading
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import events, work
from textual.app import App, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.driver import Driver
from textual.notifications import SeverityLevel
from textual.reactive import reactive
from textual.screen import Screen

from session_browser.core.paths import config_dir
from session_browser.core.settings import load_settings, save_settings
from session_browser.tui.backend import Backend, IndexState, LiveChanges, release_free_memory
from session_browser.tui.commands import ActionsProvider
from session_browser.tui.common.base import ContextScreen
from session_browser.tui.common.chrome import SEPARATOR, StatusPart, stores_part
from session_browser.tui.common.confirm import ConfirmScreen
from session_browser.tui.common.errors import ReportsWorkerErrors
from session_browser.tui.common.explain import TextScreen
from session_browser.tui.common.render import error_text, printable
from session_browser.tui.common.rowlist import RowList
from session_browser.tui.help.screen import HelpScreen
from session_browser.tui.keymap import KeymapError, keymap_path, keymap_problems, load_keymap
from session_browser.tui.messages import StoreStatus
from session_browser.tui.recent.listing import RecentList
from session_browser.tui.rescue.screen import QuarantineList, QuarantineScreen
from session_browser.tui.search.hits import HitList
from session_browser.tui.search.saved import SavedSearchesScreen, SaveSearchScreen
from session_browser.tui.search.screen import MainScreen
from session_browser.tui.transfer.screen import ExportScreen, ImportScreen
from session_browser.tui.viewer.screen import ViewerScreen
from session_browser.tui.viewer.transcript import TranscriptView

DARK_THEME = "textual-dark"
LIGHT_THEME = "textual-light"
INDEX_POLL = 0.25  # seconds between progress reads while the index builds
COUNT_EVERY = 8  # polls between session counts while it builds
LIVE_POLL = 1.0  # seconds between looks for new or changed session files
# The longest a typed key waits for the one before it to be handled (a key whose widget
# went away on the way: its screen closed).
KEY_WAIT = 1.0

#: The screens opened on what the user has in hand (a :class:`ScreenContext`).
CONTEXT_SCREENS: tuple[type[ContextScreen], ...] = (QuarantineScreen, ExportScreen, ImportScreen)


class QuitConfirm(ConfirmScreen):
    """What Ctrl+C asks (it copies in a text field elsewhere; Ctrl+Q quits at once)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "answer(True)", "Quit", show=False, id="confirm.quit_again"),
    ]

    def __init__(self) -> None:
        super().__init__(
            "Quit session-browser?",
            Text("Ctrl+C again or y quits; Ctrl+Q always quits at once."),
            yes="Quit",
            no="Stay",
        )


@dataclass
class ScreenContext:
    """What an added screen gets: the stores, the clock, and what the user has in hand."""

    app: SessionBrowserApp
    backend: Backend
    now: datetime
    session_ids: list[str] = field(default_factory=list)
    current_session: str | None = None


class SessionBrowserApp(ReportsWorkerErrors, App[int]):
    """Find a conversation by one word, read it in context, see what you worked on."""

    CSS_PATH = "app.tcss"
    TITLE = "session-browser"
    COMMANDS: ClassVar[Any] = App.COMMANDS | {ActionsProvider}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1,question_mark", "help", "Help", id="app.help"),
        Binding("f2", "show_search", "Search", id="app.search"),
        Binding("f3", "show_recent", "Recent", id="app.recent"),
        Binding("f4", "open_quarantine", "Quarantine", id="app.quarantine"),
        Binding("f6", "open_export", "Export", show=False, id="app.export"),
        Binding("f7", "open_import", "Import", show=False, id="app.import"),
        Binding("ctrl+t", "toggle_theme", "Theme", id="app.theme"),
        Binding("f8", "toggle_compact", "Compact", show=False, id="app.compact"),
        Binding("f9", "saved_searches", "Saved searches", show=False, id="app.saved"),
        Binding("ctrl+o", "open_in_pager", "Open in $PAGER", show=False, id="app.pager"),
        Binding("ctrl+y", "copy_session_id", "Copy session id", show=False, id="app.copy_id"),
        Binding("ctrl+d", "forget_session", "Forget session…", show=False, id="app.forget"),
        Binding("ctrl+g", "cancel_index", "Cancel index build", id="app.cancel_index"),
        # The same key (and id, so a keymap moves both) when no build runs: it says so, and
        # the footer does not offer a cancel there is nothing to cancel.
        Binding("ctrl+g", "no_index_build", "", show=False, id="app.cancel_index"),
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True),
    ]

    status_text: reactive[str] = reactive("")
    index_info: reactive[IndexState] = reactive(IndexState)
    attention: reactive[int] = reactive(0)

    def __init__(
        self,
        backend: Backend,
        *,
        now: datetime | None = None,
        store_labels: list[str] | None = None,
        keymap: dict[str, str] | None = None,
        theme: str | None = None,
        animate: bool = True,
        show_timings: bool = True,
        missing_stores: list[str] | None = None,
        store_title: str | None = None,
    ) -> None:
        super().__init__()
        # Off in snapshot tests: a measured duration would change the picture run to run.
        self.show_timings = show_timings
        self.backend = backend
        self.store_labels = store_labels or backend.store_paths()
        self.missing_stores = list(missing_stores or [])
        # What the status line calls the stores (None: their kinds, "PraisonAI ×2 + Pi").
        self.store_title = store_title
        # None: the live clock (relative ages stay right in a long-running app); tests fix it.
        self._fixed_now = now
        # An indexed store builds from the start: until the first progress read, say so
        # (never "no sessions" while a build is on its way).
        self.index_state = IndexState("building") if backend.indexed else IndexState()
        self.session_count: int | None = None
        self.skipped_files: int | None = None  # files the index could not take
        # Each status is numbered when its counts are taken; per field, the number of the
        # one shown (a slower worker's older count never replaces a newer one).
        self._status_seqs = itertools.count(1)
        self._shown_seq = {"sessions": 0, "attention": 0, "skipped": 0}
        # Whether the session count shown was taken with no build running or about to
        # start (a count of 0 then is an empty store; during a build it is "none yet").
        self._count_settled = False
        self._errors_shown: set[str] = set()  # each worker error is told once
        self._keymap_error: str | None = None
        self._binding_keys: dict[str, str] | None = None  # binding id -> its default keys
        self._index_timer: Any = None
        self._live_timer: Any = None
        self._live_worker: Any = None
        self._polls = 0
        # A build started (or about to start) and not yet seen ending: one that ends before
        # the first poll (a small store, an index up to date but for a deleted file) is still
        # a build that ended, and a count taken before it starts is not final.
        self._pass_pending = backend.indexed
        self._done_at_refresh = 0
        self._total_seen = 0  # the build's file count last shown (0: still listing files)
        # A key (or paste) on its way through the widgets, and the ones typed meanwhile: they
        # go out one at a time, each to the widget focused once the one before is handled.
        self._key_in_flight: events.Event | None = None
        self._held_keys: deque[events.Event] = deque()
        self._key_timer: Any = None
        self.vault_note = ""  # the status line's vault segment (read by a worker)
        self.status_parts: tuple[StatusPart, ...] = ()  # what status_text is made of
        self._vault_reads = 0  # reads of it asked for: only the last one's answer is shown
        if keymap is None:
            try:
                keymap = load_keymap()
            except KeymapError as exc:
                keymap = {}
                self._keymap_error = str(exc)
        self.set_keymap(keymap)
        self._keymap_problems = keymap_problems(keymap, self.help_sections()) if keymap else []
        self.settings = load_settings()
        self._settings_lock = threading.Lock()
        remembered = self.settings.theme if self.settings.theme in self.available_themes else None
        self.theme = theme or remembered or DARK_THEME
        if not animate:
            self.animation_level = "none"

    async def on_event(self, event: events.Event) -> None:
        """Keys and pastes are handled one after the other: one typed while the one before
        is still on its way (a switch of screen or pane, ``/`` opening the find field) waits
        for it, then goes to the widget focused by then. Without this Textual hands every
        queued key to the widget focused when it arrives, and the keys typed right after
        F2 went to the pane that was left."""
        typed = isinstance(event, (events.Key, events.Paste)) and not event.is_forwarded
        if not typed:
            await super().on_event(event)
            return
        if self._key_in_flight is not None:
            self._held_keys.append(event)
            return
        await self._send_key(event)

    async def _send_key(self, event: events.Event) -> None:
        target = self.focused or (self.screen if self._screen_stack else None)
        await super().on_event(event)
        if target is None or not event.is_forwarded:
            return  # handled here (a priority binding), or nothing to send it to
        self._key_in_flight = event
        self._key_timer = self.set_timer(KEY_WAIT, partial(self._key_done, event))
        self._follow_key(event, target)

    def _follow_key(self, event: events.Event, node: Any) -> None:
        """Once ``node`` has handled ``event``: done when it stopped there, else follow it
        to the parent it bubbled to (the app runs the key's binding last)."""

        def after() -> None:
            parent = node.parent if node is not self else None
            if event._stop_propagation or not event.bubble or parent is None:
                self.call_later(self._key_done, event)
            else:
                self._follow_key(event, parent)

        if not node.call_later(after):
            self.call_later(self._key_done, event)  # the widget is gone

    async def _key_done(self, event: events.Event) -> None:
        if self._key_in_flight is not event:
            return
        self._key_in_flight = None
        if self._key_timer is not None:
            self._key_timer.stop()
            self._key_timer = None
        while self._held_keys and self._key_in_flight is None:
            await self._send_key(self._held_keys.popleft())

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver, reading a bracketed paste whole (:mod:`.common.paste`)."""
        from session_browser.tui.common.paste import use_paste_parser

        use_paste_parser()
        return super().get_driver_class()

    @property
    def now(self) -> datetime:
        """The clock relative ages are measured against: live unless one was given."""
        return self._fixed_now or datetime.now(UTC)

    @property
    def fixed_now(self) -> datetime | None:
        return self._fixed_now

    # ------------------------------------------------------------------ start

    def get_default_screen(self) -> Screen[Any]:
        return MainScreen()

    def on_mount(self) -> None:
        self._set_status()
        if self._keymap_error:
            self.notify(printable(self._keymap_error, one_line=True), severity="error")
        if self._keymap_problems:
            self.notify(
                "\n".join(self._keymap_problems),
                title=f"Keymap {keymap_path() or config_dir() / 'keymap.toml'}",
                severity="warning",
                timeout=12,
            )
        if self.missing_stores:
            names = ", ".join(printable(m, one_line=True) for m in self.missing_stores)
            self.notify(f"Store not found (not a directory): {names}", severity="warning")
        self.start_index()
        self.read_vault_note()
        self._live_timer = self.set_interval(LIVE_POLL, self._look_for_changes)

    def on_unmount(self) -> None:
        """Stop the index build and close every store (threads, databases, watchers)."""
        self.close_backend()

    def close_backend(self) -> None:
        if self._index_timer is not None:
            self._index_timer.stop()
            self._index_timer = None
        if self._live_timer is not None:
            self._live_timer.stop()
            self._live_timer = None
        self.backend.close()

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every toast of the app (and of its screens and widgets) goes through here.

        Messages carry session ids, file names and error texts: they are shown literally,
        never parsed as markup (``markup`` is ignored), with control characters escaped.
        """
        super().notify(
            printable(str(message)),
            title=printable(str(title), one_line=True),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    @property
    def main(self) -> MainScreen:
        screen = self.screen_stack[0] if self.screen_stack else self.screen
        assert isinstance(screen, MainScreen)
        return screen

    def main_shown(self) -> MainScreen | None:
        """The main screen; None while the app closes (its screens are gone, and a late
        message from a worker or a timer finds nothing to update)."""
        return self.main if self.screen_stack else None

    @work(thread=True, exclusive=True, group="index-start", exit_on_error=False)
    def start_index(self) -> None:
        """Count what the index holds, then start the background build (which also resumes a
        stopped one) and count again."""
        self._pass_pending = True
        self._post_status()
        try:
            self.backend.start_index()
        except Exception as exc:  # the scan fallback still works
            self.call_from_thread(
                self.notify, f"index unavailable: {printable(str(exc), one_line=True)}"
            )
        self.call_from_thread(self._poll_index)
        self._post_status()

    def read_vault_note(self) -> None:
        """Read the vault segment of the status line again (see :meth:`_read_vault_note`);
        an answer to an earlier read that comes back later is dropped."""
        self._vault_reads += 1
        self._read_vault_note(self._vault_reads)

    @work(thread=True, group="vault-note", exit_on_error=False)
    def _read_vault_note(self, read: int) -> None:
        """The vault segment of the status line, read off the UI thread (settings files
        and the vault's catalog): what deletes history, how many deleted sessions it keeps."""
        from session_browser.tui.common.vaultline import vault_segment

        kinds = [s.source_kind for s in self.backend.stores]
        note = vault_segment(kinds) if self.backend.vault else ""  # the demo keeps no vault
        self.call_from_thread(self._set_vault_note, note, read)

    def _set_vault_note(self, note: str, read: int) -> None:
        if read != self._vault_reads or note == self.vault_note:
            return  # a newer read is on its way, or nothing changed
        self.vault_note = note
        self._set_status()

    @work(thread=True, exclusive=True, group="status", exit_on_error=False)
    def refresh_status(self, *, skipped: bool = False, attention: bool = True) -> None:
        self._post_status(skipped=skipped, attention=attention)

    def _post_status(self, *, skipped: bool = False, attention: bool = True) -> None:
        """Counts for the status line; with ``skipped`` (after a build), also how many files
        the index skipped (the index status lists the files, which takes a dir scan); without
        ``attention``, the session count only (the quarantine listing reads every store's
        dir: not again every few seconds while a build runs)."""
        seq = self.status_seq()
        state = self.backend.index_state()
        # Read before counting: a build that ends while we count leaves this count unsettled
        # (the status after the build is the final one).
        settled = not self._pass_pending and state.mode != "building"
        count: int | None
        try:
            count = self.backend.count("")
        except Exception as exc:  # unknown, not zero: never "no sessions here" on an error
            count = None
            self.call_from_thread(self.report_error, exc, where="counting the sessions")
        # The count first (it is quick); the quarantine listing reads a dir of every store.
        self.post_message(StoreStatus(count, state, None, seq=seq, settled=settled))
        if not attention and not skipped:
            return
        waiting = self.backend.quarantine_count() if attention else None
        skipped_now = self.backend.skipped_files() if skipped else None
        self.post_message(StoreStatus(count, state, waiting, skipped_now, seq=seq, settled=settled))

    def status_seq(self) -> int:
        """The number of a status about to be taken (any thread): later is newer."""
        return next(self._status_seqs)

    def set_attention(self, waiting: int, seq: int) -> None:
        """Files waiting in quarantine, counted as status number ``seq`` (a screen that
        listed them); an older count is not shown over it."""
        if seq >= self._shown_seq["attention"]:
            self._shown_seq["attention"] = seq
            self.attention = waiting

    def _look_for_changes(self) -> None:
        """Every :data:`LIVE_POLL` seconds: whether the session the viewer shows changed,
        and, outside a build, what changed on disk. An index is not looked at after its
        build was stopped or failed (a look would finish it here, unasked)."""
        viewer = self.open_viewer()
        if viewer is not None and viewer.loaded and not viewer.reloading:
            self.check_viewer(viewer, viewer.identity)
        state = self.index_state
        if self.backend.indexed and (state.mode != "ready" or state.error):
            return
        if self._live_worker is not None and self._live_worker.is_running:
            return  # the last look is still on (a full pass over a large dir): no pile-up
        self._live_worker = self.check_changes()

    def look_now(self) -> None:
        """A pane or screen was switched to: look at the stores now rather than at the next
        periodic look (which on a large store may still be running), and count again;
        what changed reloads the lists (:meth:`_show_changes`)."""
        self.refresh_status(skipped=bool(self.skipped_files))
        if self.backend.indexed and self.index_state.mode != "ready":
            return  # a build runs (its end reloads everything) or was stopped
        if self._live_worker is not None and self._live_worker.is_running:
            return
        self._live_worker = self.check_changes()

    def open_viewer(self) -> ViewerScreen | None:
        """The viewer nearest the top of the screen stack (under an added screen, too)."""
        for screen in reversed(self.screen_stack):
            if isinstance(screen, ViewerScreen):
                return screen
        return None

    @work(thread=True, exclusive=True, group="live-viewer", exit_on_error=False)
    def check_viewer(self, viewer: ViewerScreen, known: tuple[int, ...] | None) -> None:
        """One ``stat`` of the viewer's session file: a turn appended (or any rewrite)
        reloads the viewer."""
        now = self.backend.session_identity(viewer.session_id, viewer.store_label)
        if now is not None and now != known:
            self.call_from_thread(self._session_changed, viewer)

    def _session_changed(self, viewer: ViewerScreen) -> None:
        if viewer.is_attached and not viewer.reloading:
            viewer.reload()
            if viewer.session_id in self.backend.fresh:  # the reader is looking at it
                self.mark_seen(viewer.session_id)

    @work(thread=True, exclusive=True, group="live", exit_on_error=False)
    def check_changes(self) -> None:
        changes = self.backend.check_changes()
        if changes.changed:
            self.call_from_thread(self._show_changes, changes)

    def _show_changes(self, changes: LiveChanges) -> None:
        """New or changed sessions: marked in both lists, which are asked again (the
        cursor stays on its session), and the counts refreshed."""
        main = self.main_shown()
        if main is None:
            return
        viewer = self.open_viewer()
        if viewer is not None and viewer.session_id in changes.fresh:
            self.mark_seen(viewer.session_id)  # the reader is looking at it
        main.set_fresh(changes.fresh)
        # The skipped files too: a file restored or fixed meanwhile is no longer skipped.
        self.refresh_status(skipped=True)
        self.read_vault_note()  # a session deleted meanwhile is kept now
        self._refresh_lists(recent=True)

    @work(thread=True, group="live-seen", exit_on_error=False)
    def mark_seen(self, session_id: str) -> None:
        self.backend.mark_seen(session_id)
        self.call_from_thread(self._set_fresh)

    def _set_fresh(self) -> None:
        main = self.main_shown()
        if main is not None:
            main.set_fresh(self.backend.fresh)

    def report_error(self, error: BaseException | str, *, where: str = "") -> None:
        """Tell the user of a failure once (the same text again stays quiet). Every screen's
        failed worker comes here (:class:`ReportsWorkerErrors`)."""
        text = error if isinstance(error, str) else error_text(error)
        if text in self._errors_shown:
            return
        self._errors_shown.add(text)
        what = where.replace("_", " ").strip()
        self.notify(text, title=f"Failed: {what}" if what else "Failed", severity="error")

    def _poll_index(self) -> None:
        """While the index builds: progress from the stores' in-memory counters (no I/O)."""
        state = self.backend.index_state()
        was_building = self.index_state.mode == "building"
        if state.error and state.error != self.index_state.error:
            self.report_error(
                f"The index build failed: {state.error}. What was indexed before stays"
                " searchable; Ctrl+P › Resume index build tries again."
            )
        self.index_state = state
        self.index_info = state
        self._set_status()
        self.refresh_bindings()
        if state.mode == "building":
            if self._index_timer is None:
                self._index_timer = self.set_interval(INDEX_POLL, self._poll_index)
            self._polls += 1
            if state.total != self._total_seen:
                # The build has listed the files: they are listed and searched (the newest
                # first) before they are indexed, so ask both lists again now.
                self._total_seen = state.total
                self.refresh_status(attention=False)
                self._refresh_lists(recent=True)
            elif self._polls % COUNT_EVERY == 0:
                release_free_memory()  # what the last batches freed (the build's peak)
                self.refresh_status(attention=False)
                if state.done != self._done_at_refresh:  # more is searchable: ask again
                    self._done_at_refresh = state.done
                    self._refresh_lists(recent=False)
            return
        if self._index_timer is not None:
            self._index_timer.stop()
            self._index_timer = None
        if was_building or self._pass_pending:
            self._pass_pending = False
            release_free_memory()
            self.refresh_status(skipped=True)
            self.read_vault_note()  # the build noted the sessions deleted since
            self._refresh_lists(recent=True)

    def _refresh_lists(self, *, recent: bool) -> None:
        """Ask the current query again (and reload the recent list) after the index grew."""
        main = self.main_shown()
        if main is None or not main.query("#query"):  # closing, or not composed yet
            return
        main.rerun_search(keep_cursor=True)
        if recent:
            main.reload_recent(keep_cursor=True)

    def on_store_status(self, message: StoreStatus) -> None:
        """Each field of a status replaces what is shown unless a newer count of it was
        shown already (workers finish in any order)."""
        shown = self._shown_seq
        if message.seq >= shown["sessions"]:
            shown["sessions"] = message.seq
            self.session_count = message.sessions
            self._count_settled = message.settled
        if message.attention is not None and message.seq >= shown["attention"]:
            shown["attention"] = message.seq
            self.attention = message.attention
        if message.skipped is not None and message.seq >= shown["skipped"]:
            shown["skipped"] = message.seq
            self.skipped_files = message.skipped
        self._set_status()
        self.update_empty()

    def update_empty(self) -> None:
        """The empty state when the stores hold no session (once the main screen is up)."""
        main = self.main_shown()
        # Closing, or not composed yet (its on_mount calls this).
        if main is None or not main.query("#empty-state"):
            return
        # While the index builds it holds few sessions yet: that is not an empty store (the
        # status after the build decides).
        building = self.index_state.mode == "building" or (
            self.backend.index_state().mode == "building"
        )
        empty = self.session_count == 0 and self._count_settled and not building
        if empty != bool(main.query_one("#empty-state").display):
            main.show_empty(self.empty_text() if empty else None)

    def action_cancel_index(self) -> None:
        if self.backend.index_state().mode != "building":
            self.notify("No index build is running.", timeout=3)
            self._poll_index()
            return
        if self.backend.cancel_index():
            self.notify(
                "Index build stopped: what is indexed so far stays searchable."
                " Ctrl+P › Resume index build picks up the rest.",
                timeout=5,
            )
        self._poll_index()

    def action_resume_index(self) -> None:
        if self.index_state.mode == "building":
            self.notify("The index is already building.", timeout=3)
            return
        if not self.backend.indexed:
            self.notify("These stores have no index (the files are scanned).", timeout=3)
            return
        self.start_index()

    def action_no_index_build(self) -> None:
        self.notify("No index build is running.", timeout=3)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_index":
            return self.index_state.mode == "building"
        if action == "no_index_build":
            return self.index_state.mode != "building"
        return True

    def _set_status(self) -> None:
        """The status line's parts (:class:`StatusPart`; each screen's line fits them to its
        width) and their whole text (:attr:`status_text`)."""
        parts: list[StatusPart] = []
        if self.session_count is not None:
            n = self.session_count
            # While a build lists the files the count is of the indexed ones; once listed,
            # the files not indexed yet are counted (and listed) too.
            listing = self.index_state.mode == "building" and not self.index_state.total
            count = f"{n:,} session{'s' if n != 1 else ''}"
            so_far = f"{count} indexed so far" if listing else count
            parts.append(StatusPart(so_far, count, rank=3))
        state = self.index_state
        parts.append(StatusPart(state.describe(), state.describe_short(), rank=4, droppable=False))
        if self.skipped_files:
            k = self.skipped_files
            files = f"{k:,} file{'s' if k != 1 else ''} skipped"
            parts.append(StatusPart(f"{files} — session-browser index status", files, rank=2))
        stores = self.store_title or stores_part([s.source_kind for s in self.backend.stores])
        parts.append(StatusPart(printable(stores, one_line=True), rank=1))
        if self.vault_note:
            parts.append(StatusPart(self.vault_note, rank=0))
        self.status_parts = tuple(parts)
        self.status_text = SEPARATOR.join(p.text for p in parts)

    def empty_text(self) -> Text:
        text = Text(end="")
        if self.index_state.error:  # not an empty store: a store we could not read
            text.append(
                "No session could be listed: the index build failed:\n"
                f"  {printable(self.index_state.error, one_line=True)}\n"
                "(session-browser index status says more; Ctrl+P › Resume index build"
                " tries again)\n\n",
                style="bold",
            )
        else:
            text.append("No sessions here yet.\n\n", style="bold")
        for missing in self.missing_stores:
            text.append(
                f"Not found: {printable(missing, one_line=True)} is not a directory.\n",
                style="bold",
            )
        if self.missing_stores:
            text.append("\n")
        text.append("Looked in:\n")
        for label in self.store_labels:
            text.append(f"  {printable(label, one_line=True)}\n")
        text.append(
            "\nPoint the browser at a session dir with\n"
            "  session-browser --store DIR   (repeatable)\n"
            "or try it on generated sample conversations with\n"
            "  session-browser --demo\n\n"
            "PraisonAI writes sessions to ~/.praisonai/sessions (or $PRAISONAI_HOME/sessions);\n"
            "a project keeps its own in ./.praisonai/sessions.\n\n"
            "F1 help · Ctrl+P commands · Ctrl+Q quit"
        )
        return text

    # ------------------------------------------------------------------ navigation

    def open_session(
        self,
        session_id: str,
        *,
        store: str,
        anchor: int,
        terms: list[str],
        title: str,
        agent: str | None = None,
        dropped: bool = False,
    ) -> None:
        if session_id in self.backend.fresh:
            self.mark_seen(session_id)
        self.push_screen(
            ViewerScreen(
                session_id, store=store, anchor=anchor, terms=terms, title=title, agent=agent
            ).seeking_dropped(dropped)
        )

    def _to_main(self) -> MainScreen:
        while len(self.screen_stack) > 1:
            self.pop_screen()
        return self.main

    def action_show_search(self) -> None:
        self._to_main().show_pane("search")

    def action_show_recent(self) -> None:
        self._to_main().show_pane("recent")

    def action_saved_searches(self) -> None:
        """F9: the saved searches; Enter runs one in the search pane."""
        from session_browser.core.saved_searches import SavedSearchesError, load_saved

        if isinstance(self.screen, SavedSearchesScreen):
            return
        try:
            searches = load_saved()
        except SavedSearchesError as exc:
            self.notify(f"{exc}: fix or remove it to use saved searches.", severity="warning")
            return
        if not searches:
            key = self.key_for("main.save_search")
            self.notify(f"No saved searches yet: {key} in the search pane saves the query.")
            return

        def chosen(query: str | None) -> None:
            if query:
                self.run_saved_query(query)

        self.push_screen(SavedSearchesScreen(searches), chosen)

    def run_saved_query(self, query: str) -> None:
        self._to_main().run_query(query)

    def action_toggle_theme(self) -> None:
        self.theme = LIGHT_THEME if self.current_theme.dark else DARK_THEME
        self.notify(f"Theme: {self.theme}", timeout=2)
        self.settings.theme = self.theme
        self.save_settings()

    def action_toggle_compact(self) -> None:
        """One line a hit and a recent session (or the full rows again); remembered."""
        self.settings.compact = not self.settings.compact
        self.main.apply_compact(self.settings.compact)
        self.save_settings()
        self.notify("Compact rows" if self.settings.compact else "Full rows", timeout=2)

    @work(thread=True, group="settings", exit_on_error=False)
    def save_settings(self) -> None:
        """Remember the choices for the next start, off the UI thread (a failure is told,
        never fatal). Each write writes the current choices, so the last one wins."""
        with self._settings_lock:
            try:
                save_settings(self.settings)
            except OSError as exc:
                self.call_from_thread(self.report_error, exc, where="saving the settings")

    def help_sections(self) -> list[tuple[str, list[BindingType]]]:
        return [
            (
                "Everywhere",
                [
                    b
                    for b in type(self).BINDINGS
                    if not (isinstance(b, Binding) and b.action == "no_index_build")
                ],
            ),
            ("Search / Recent", [*MainScreen.BINDINGS]),
            ("Lists", [*RowList.BINDINGS]),
            ("Hits", [*HitList.BINDINGS]),
            ("Recent list", [*RecentList.BINDINGS]),
            ("Viewer", [*ViewerScreen.BINDINGS]),
            ("Transcript", [*TranscriptView.BINDINGS]),
            ("Dialogs", [*TextScreen.BINDINGS]),
            ("Saved searches", [*SavedSearchesScreen.BINDINGS, *SaveSearchScreen.BINDINGS]),
            ("Quarantine", [*QuarantineScreen.BINDINGS]),
            ("Quarantine list", [*QuarantineList.BINDINGS]),
            ("Export", [*ExportScreen.BINDINGS]),
            ("Import", [*ImportScreen.BINDINGS]),
            ("Confirmations", [*ConfirmScreen.BINDINGS]),
        ]

    def key_for(self, binding_id: str) -> str:
        """The first key of binding ``binding_id`` as shown (the keymap applied): what the
        app's own texts name, so they follow a remapped key."""
        if self._binding_keys is None:
            self._binding_keys = {
                b.id: b.key
                for _section, bindings in self.help_sections()
                for b in bindings
                if isinstance(b, Binding) and b.id
            }
        keys = self._keymap.get(binding_id, self._binding_keys.get(binding_id, ""))
        first = keys.split(",")[0].strip()
        return str(self.get_key_display(Binding(first, ""))) if first else binding_id

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        hint = (
            f"Keymap file: {printable(str(config_dir() / 'keymap.toml'), one_line=True)}"
            ' (e.g.  "viewer.next_hit" = "n,ctrl+n")'
        )
        self.push_screen(
            HelpScreen(self.help_sections(), hint, keymap=dict(self._keymap), key_for=self.key_for)
        )

    # ------------------------------------------------------------------ one session

    def session_in_hand(self) -> tuple[str, str] | None:
        """(id, store label) of the session shown in the viewer, else of the row under the
        cursor of the main screen's pane; None when there is none."""
        current = self.screen
        if isinstance(current, ViewerScreen):
            return current.session_id, current.store_label
        if current is not self.main:
            return None
        return self.main.session_under_cursor()

    def _session_file(self) -> tuple[str, Path] | None:
        held = self.session_in_hand()
        if held is None:
            self.notify("No session here: pick one in a list first.", timeout=3)
            return None
        path = self.backend.group.session_file(*held)
        if path is None:
            self.notify(f"No file holds session {held[0]} (it may be gone).", severity="warning")
            return None
        return held[0], path

    def action_copy_session_id(self) -> None:
        held = self.session_in_hand()
        if held is None:
            self.notify("No session here: pick one in a list first.", timeout=3)
            return
        self.copy_to_clipboard(held[0])
        self.notify(f"Copied the session id {held[0]}.", timeout=3)

    def action_forget_session(self) -> None:
        """Forget the session in hand (viewer or Recent): what goes where is asked first."""
        held = self.session_in_hand()
        if held is None:
            self.notify("No session here: pick one in a list first.", timeout=3)
            return
        self._plan_forget(held[0])

    @work(thread=True, exclusive=True, group="forget", exit_on_error=False)
    def _plan_forget(self, session_id: str) -> None:
        from session_browser.core.forget.plan import ForgetError, plan
        from session_browser.core.pgindex.conn import PgIndexError, index_url

        try:
            found = plan([session_id], team_url=index_url())
        except (ForgetError, PgIndexError, OSError) as exc:
            self.call_from_thread(self.notify, str(exc), severity="error")
            return
        self.call_from_thread(self._confirm_forget, session_id, found)

    def _confirm_forget(self, session_id: str, found: Any) -> None:
        from session_browser.tui.common.forget import forget_body

        if found.empty:
            self.notify(f"Nothing we keep holds session {session_id}.", timeout=4)
            return

        def answered(ok: bool | None) -> None:
            if ok:
                self._forget(session_id, found)
            else:
                self.notify("Cancelled; nothing changed.", timeout=3)

        title = f"Forget session {printable(session_id, one_line=True)}?"
        self.push_screen(ConfirmScreen(title, forget_body(found), yes="Forget"), answered)

    @work(thread=True, exclusive=True, group="forget", exit_on_error=False)
    def _forget(self, session_id: str, found: Any) -> None:
        import sqlite3

        from session_browser.core.forget.plan import carry_out
        from session_browser.core.pgindex.conn import PgIndexError
        from session_browser.core.vault.errors import VaultError

        try:
            done = carry_out(found)
        except (sqlite3.Error, VaultError, PgIndexError, OSError) as exc:
            self.call_from_thread(
                self.notify, f"Forget stopped: {exc}; run it again.", severity="error"
            )
            return
        self.backend.refresh()
        self.call_from_thread(self._forgotten, session_id, len(done.lines))

    def _forgotten(self, session_id: str, places: int) -> None:
        if isinstance(self.screen, ViewerScreen) and self.screen.session_id == session_id:
            self.pop_screen()
        self.notify(f"Forgot session {session_id} in {places} place(s).", timeout=5)
        self._refresh_lists(recent=True)

    def action_copy_session_path(self) -> None:
        found = self._session_file()
        if found is not None:
            self.copy_to_clipboard(str(found[1]))
            self.notify(f"Copied the file path {found[1]}.", timeout=3)

    def action_open_in_pager(self) -> None:
        self._run_on_file("PAGER", "less")

    def action_open_in_editor(self) -> None:
        self._run_on_file("EDITOR", "vi")

    def _run_on_file(self, variable: str, fallback: str) -> None:
        """Hand the terminal to ``$PAGER`` / ``$EDITOR`` on the session's file, then back."""
        found = self._session_file()
        if found is None:
            return
        command = os.environ.get(variable, "").strip() or fallback
        try:
            argv = [*shlex.split(command), str(found[1])]
        except ValueError as exc:
            self.report_error(f"${variable} cannot be read as a command: {exc}")
            return
        try:
            with self.suspend():
                subprocess.run(argv, check=False)
        except SuspendNotSupported:
            self.notify("This terminal cannot be handed over to another program.", timeout=4)
        except OSError as exc:
            self.report_error(exc, where=f"running ${variable}")
        self.refresh()

    # ------------------------------------------------------------------ added screens

    def screen_context(self) -> ScreenContext:
        current = self.screen
        session = current.session_id if isinstance(current, ViewerScreen) else None
        ids = [session] if session else self.main.current_session_ids()
        return ScreenContext(self, self.backend, self.now, ids, session)

    def open_context_screen(self, screen_class: type[ContextScreen]) -> None:
        """Open quarantine, export or import on what the user has in hand. The F-keys switch
        between these screens: the one on top goes (never a stack of them that takes an Esc
        each), whatever is under it (a viewer) stays."""
        while len(self.screen_stack) > 1 and isinstance(self.screen, CONTEXT_SCREENS):
            if type(self.screen) is screen_class:
                return  # already there
            self.pop_screen()
        self.push_screen(screen_class(self.screen_context()))

    def action_help_quit(self) -> None:
        """Ctrl+C: ask whether to quit (Ctrl+C again, or y, quits)."""
        if isinstance(self.screen, QuitConfirm):
            self.exit()
            return
        if isinstance(self.screen, ConfirmScreen):
            return  # another question is open: it is answered first

        def answered(yes: bool | None) -> None:
            if yes:
                self.exit()

        self.push_screen(QuitConfirm(), answered)

    def action_open_quarantine(self) -> None:
        self.open_context_screen(QuarantineScreen)

    def action_open_export(self) -> None:
        self.open_context_screen(ExportScreen)

    def action_open_import(self) -> None:
        self.open_context_screen(ImportScreen)
