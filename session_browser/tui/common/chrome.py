"""The header (title, pane tabs, attention badge) and the status line."""

from __future__ import annotations

from rich.text import Text
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


class StatusLine(Static):
    """Store path(s), counts and index state (kept by the app, shown on every screen)."""

    def on_mount(self) -> None:
        self.watch(self.app, "status_text", self._status, init=True)

    def _status(self, text: str) -> None:
        self.update(Text(text, no_wrap=True, overflow="ellipsis", end=""))


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
