"""A confirmation modal: says what will change and returns True only on an explicit yes."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from session_browser.tui.common.render import printable


class ConfirmScreen(ModalScreen[bool]):
    """``y`` (or the Yes button) confirms; ``n``, Esc or the No button (focused) cancels.

    ``body`` is shown as it is: build it from ``rich.text.Text`` so that untrusted file
    names and ids are never read as markup.
    """

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    #confirm {
        width: 90%;
        max-width: 110;
        height: auto;
        max-height: 80%;
        border: thick $warning;
        background: $surface;
        padding: 0 1;
    }
    #confirm-title { text-style: bold; padding: 0 0 1 0; }
    #confirm-body { height: auto; max-height: 20; }
    #confirm-buttons { height: auto; align-horizontal: right; padding: 1 0 0 0; }
    #confirm-buttons Button { margin: 0 0 0 2; min-width: 14; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, title: str, body: Text, *, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.title_text = title
        self.body = body
        self.yes_label = yes
        self.no_label = no

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Static(Text(printable(self.title_text, one_line=True)), id="confirm-title")
            with VerticalScroll(id="confirm-body"):
                yield Static(self.body)
            with Horizontal(id="confirm-buttons"):
                yes = Text(f"{printable(self.yes_label, one_line=True)} (y)")
                no = Text(f"{printable(self.no_label, one_line=True)} (n/Esc)")
                yield Button(yes, variant="warning", id="confirm-yes")
                yield Button(no, id="confirm-no")

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)
