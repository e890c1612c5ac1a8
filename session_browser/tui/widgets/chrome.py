"""The header (title, pane tabs, attention badge) and the status line."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Static


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
