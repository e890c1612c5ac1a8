"""Small modal screens: why a hit scored as it did, and any text shown verbatim."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from session_browser.core.explaining import explain_lines
from session_browser.core.model import SessionHit
from session_browser.tui.common.render import one_line, printable


class TextScreen(ModalScreen[None]):
    """A title and a body shown literally (untrusted text is never markup)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,enter", "close", "Close", id="modal.close"),
    ]

    def __init__(self, title: str, body: str) -> None:
        super().__init__()
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        with Vertical(id="modal"):
            yield Static(Text(printable(self.title_text, one_line=True), style="bold"))
            with VerticalScroll(id="modal-body"):
                yield Static(Text(printable(self.body)))
            yield Static(Text("Esc closes", style="dim"), id="modal-foot")

    def action_close(self) -> None:
        self.dismiss(None)


def explain_text(hit: SessionHit) -> str:
    """The explanation of a hit's score, as lines of ``key: value`` (the core's
    :func:`~session_browser.core.explaining.explain_lines`; the screen escapes them)."""
    return "\n".join(explain_lines(hit))


class ExplainScreen(TextScreen):
    def __init__(self, hit: SessionHit) -> None:
        super().__init__(f"Why this hit: {one_line(hit.display_title)}", explain_text(hit))
