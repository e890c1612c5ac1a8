"""Help: every binding of every part of the app, with the keys the keymap gives them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

CONTEXT_HELP = """\
Search: type to search (debounced); Enter or ↓ moves into the hits; Enter opens a hit at the
matching message; e explains its score; Esc or / goes back to the query.
Query language: words find sessions with any of them, those with more of them (and rarer
ones) first; case and accents do not matter. "a phrase": the words next to each other, in
order. -word leaves out sessions that contain it. migrat*: any word starting with it.
role:user, archived:yes: only user turns, only archived turns. since:2026-01-31 and
until:2026-02-28: by the message's time. session:ID, agent:NAME, source:pi, project:. narrow
to one session, an agent, a store kind or source tag, this working dir. When nothing matches,
a typo-tolerant pass runs and says which word it replaced.
Recent (F3): type to filter by title or id; ↓ or Enter moves into the list; there s sorts,
Space marks, a marks all (or none); other letters go back to the filter.
Viewer: the archived turns (before compaction) are marked ┆ and labelled "archived"; a rule
marks where compaction happened; the [Session Summary] message is labelled SUMMARY.
Context (+/-): how many turns around the current match are shown in full: ±0, ±1, ±3, ±10,
±30 or all (the default); the others collapse to their first line.
Keys can be remapped in keymap.toml (binding id = "keys") in the config dir shown below."""


def binding_rows(sections: Iterable[tuple[str, Iterable[BindingType]]], app: Any) -> Table:
    table = Table(box=None, show_header=True, header_style="bold", expand=True, pad_edge=False)
    table.add_column("Where", no_wrap=True)
    table.add_column("Keys", no_wrap=True)
    table.add_column("Action")
    table.add_column("Binding id", style="dim", no_wrap=True)
    keymap: dict[str, str] = getattr(app, "_keymap", {}) or {}
    for section, bindings in sections:
        first = True
        for binding in bindings:
            if not isinstance(binding, Binding):
                continue
            keys = keymap.get(binding.id or "", binding.key)
            shown = ", ".join(
                app.get_key_display(Binding(k.strip(), binding.action)) for k in keys.split(",")
            )
            table.add_row(
                Text(section if first else ""),
                Text(shown, style="bold"),
                Text(binding.description or binding.action),
                Text(binding.id or ""),
            )
            first = False
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,f1,question_mark", "close", "Close", id="help.close"),
    ]

    def __init__(self, sections: list[tuple[str, list[BindingType]]], config_hint: str) -> None:
        super().__init__()
        self.sections = sections
        self.config_hint = config_hint

    def compose(self) -> ComposeResult:
        with Vertical(id="help"):
            yield Static(Text("Keys", style="bold"), id="help-title")
            with VerticalScroll(id="help-body"):
                yield Static(binding_rows(self.sections, self.app))
                yield Static(Text("\n" + CONTEXT_HELP))
                yield Static(Text(self.config_hint, style="dim"))
            yield Static(Text("Esc closes · Ctrl+P offers every action by name", style="dim"))

    def action_close(self) -> None:
        self.dismiss(None)
