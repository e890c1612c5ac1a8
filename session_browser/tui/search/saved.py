"""Saved searches: name the current query (Ctrl+S in the search pane), list and run them."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from session_browser.core.saved_searches import SavedSearch, SavedSearchesError, delete_search
from session_browser.tui.common.render import printable


class SaveSearchScreen(ModalScreen[str | None]):
    """Asks for a name for ``query``; Enter saves (returns the name), Esc cancels."""

    DEFAULT_CSS = """
    SaveSearchScreen #modal { height: auto; max-height: 12; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="save_search.cancel"),
    ]

    def __init__(self, query: str, names: list[str]) -> None:
        super().__init__()
        self.query_text = query
        self.names = names

    def compose(self) -> ComposeResult:
        with Vertical(id="modal"):
            yield Static(Text("Save this search", style="bold"))
            yield Static(Text(printable(self.query_text, one_line=True), style="italic"))
            yield Input(
                value=self.query_text[:80], placeholder="Name", id="save-name", select_on_focus=True
            )
            hint = "Enter saves (a search of the same name is replaced) · Esc cancels"
            yield Static(Text(hint, style="dim"))

    @on(Input.Submitted, "#save-name")
    def _submitted(self, event: Input.Submitted) -> None:
        name = event.value.strip()
        if name:
            self.dismiss(name)

    def action_cancel(self) -> None:
        self.dismiss(None)


class SavedSearchesScreen(ModalScreen[str | None]):
    """The saved searches: Enter runs one (returns its query), d deletes it, Esc closes."""

    DEFAULT_CSS = """
    SavedSearchesScreen #saved-list { height: 1fr; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "cancel", "Close", id="saved.close"),
        Binding("d,delete", "delete", "Delete", id="saved.delete"),
    ]

    def __init__(self, searches: list[SavedSearch]) -> None:
        super().__init__()
        self.searches = list(searches)

    def compose(self) -> ComposeResult:
        with Vertical(id="modal"):
            yield Static(Text("Saved searches", style="bold"))
            yield OptionList(*self._options(), id="saved-list")
            yield Static(Text("Enter runs · d deletes · Esc closes", style="dim"))

    def _options(self) -> list[Option]:
        out: list[Option] = []
        for search in self.searches:
            text = Text(printable(search.name, one_line=True), style="bold", end="")
            text.append("  ")
            text.append(printable(search.query, one_line=True), style="italic")
            out.append(Option(text))
        return out

    @on(OptionList.OptionSelected, "#saved-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.searches[event.option_index].query)

    def action_delete(self) -> None:
        options = self.query_one("#saved-list", OptionList)
        index = options.highlighted
        if index is None or not 0 <= index < len(self.searches):
            return
        name = self.searches[index].name
        try:
            delete_search(name)
        except (OSError, SavedSearchesError) as exc:
            self.notify(f"Cannot delete {name!r}: {exc}", severity="error")
            return
        self.searches.pop(index)
        options.remove_option_at_index(index)
        self.notify(f"Deleted the saved search {name!r}.", timeout=2)

    def action_cancel(self) -> None:
        self.dismiss(None)
