"""Help: every binding of every part of the app, with the keys the keymap gives them."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

# ⟨binding id⟩ stands for the first key of that binding, as the keymap gives it.
KEY_RULES = """\
One key, one meaning: Enter opens or runs, Esc (or q) goes back, Ctrl+S runs or saves what the
screen is for (the search: save the query; Export, Import: run), the F-keys switch screens,
Space marks a row, and a letter is the same action wherever it is bound (the rescue letters
r/R/m/f/d/u belong to the quarantine, so the viewer uses ⟨viewer.metadata⟩ for metadata, \
⟨viewer.full_message⟩ for a whole message and ⟨viewer.raw⟩ for raw text)."""

CONTEXT_HELP = """\
Search: type to search (debounced); Enter opens the best hit, ↓ moves into the hits; \
⟨hits.explain⟩ explains a score; Esc or / goes back to the query; ⟨main.history⟩ recalls an \
earlier query; ⟨main.more_hits⟩ (or moving onto the last row) shows the next page of hits; \
⟨main.save_search⟩ saves the query under a name, ⟨app.saved⟩ lists the saved searches; \
⟨main.search_mode⟩ switches between hybrid search (words and meaning, once 'session-browser \
index vectors' has run) and lexical search (words only).
Query language: words find sessions with any of them, those with more of them (and rarer
ones) first; case and accents do not matter. "a phrase": the words next to each other, in
order. -word leaves out sessions that contain it. migrat*: any word starting with it.
role:user, archived:yes: only user turns, only archived turns. since:2026-01-31 and
until:2026-02-28 (or since:7d, since:yesterday): by the message's time. session:ID,
agent:NAME, source:pi, project:. narrow to one session, an agent, a store kind or source tag,
this working dir. When nothing matches, a typo-tolerant pass runs and says which word it
replaced.
Recent (⟨app.recent⟩): type to filter by title or id; ↓ or Enter moves into the list; there \
⟨recent.sort⟩ sorts, ⟨recent.mark⟩ marks, ⟨recent.mark_all⟩ marks all (or none); other \
letters go back to the filter.
Viewer: the archived turns (before compaction) are marked ┆ and labelled "archived"; a rule
marks where compaction happened; the [Session Summary] message is labelled SUMMARY. It
follows the session: turns appended while it is open appear (at the end, it moves with them).
Context (⟨viewer.widen⟩/⟨viewer.narrow⟩): how many turns around the current match are shown \
in full: ±0, ±1, ±3, ±10, ±30 or all (the default); the others collapse to their first line. \
The level is remembered.
Keys can be remapped in keymap.toml (binding id = "keys") in the config dir shown below."""

_KEY_REF = re.compile(r"⟨([a-z_.]+)⟩")


def with_keys(text: str, key_for: Callable[[str], str]) -> str:
    """``text`` with every ⟨binding id⟩ replaced by that binding's key."""
    return _KEY_REF.sub(lambda m: key_for(m.group(1)), text)


def binding_rows(
    sections: Iterable[tuple[str, Iterable[BindingType]]],
    app: App[Any],
    keymap: Mapping[str, str],
) -> Table:
    table = Table(box=None, show_header=True, header_style="bold", expand=True, pad_edge=False)
    table.add_column("Where", no_wrap=True)
    table.add_column("Keys", no_wrap=True)
    table.add_column("Action")
    table.add_column("Binding id", style="dim", no_wrap=True)
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

    def __init__(
        self,
        sections: list[tuple[str, list[BindingType]]],
        config_hint: str,
        *,
        keymap: Mapping[str, str],
        key_for: Callable[[str], str],
    ) -> None:
        """``keymap``: binding id -> the keys the user gave it; ``key_for``: the key a
        binding id is shown with, the keymap applied."""
        super().__init__()
        self.sections = sections
        self.config_hint = config_hint
        self.keymap = keymap
        self.key_for = key_for

    def compose(self) -> ComposeResult:
        with Vertical(id="help"):
            yield Static(Text("Keys", style="bold"), id="help-title")
            with VerticalScroll(id="help-body"):
                yield Static(binding_rows(self.sections, self.app, self.keymap))
                rules = KEY_RULES + "\n" + CONTEXT_HELP
                yield Static(Text("\n" + with_keys(rules, self.key_for)))
                yield Static(Text(self.config_hint, style="dim"))
            yield Static(Text("Esc closes · Ctrl+P offers every action by name", style="dim"))

    def action_close(self) -> None:
        self.dismiss(None)
