"""Small modal screens: why a hit scored as it did, and any text shown verbatim."""

from __future__ import annotations

import json
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

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
    """The explanation of a hit's score, as lines of ``key: value``."""
    lines = [
        f"session: {one_line(hit.session_id)}",
        f"score: {hit.score:.4g}",
        f"matched message: #{hit.anchor_index}" + (" (archived turn)" if hit.archived else ""),
    ]
    if hit.automated:
        lines.append("automated session: demoted")
    continuations = [f for f in hit.folded if f != hit.session_id]
    if continuations:
        lines.append("folded continuations: " + ", ".join(one_line(f) for f in continuations))
    if len(continuations) < len(hit.folded):
        lines.append(f"other versions folded: {len(hit.folded) - len(continuations)}")
    explain = dict(hit.explain or {})
    if explain:
        lines.append("")
        lines.append("how the store scored it:")
        for key, value in explain.items():
            rendered = value if isinstance(value, str) else json.dumps(value, default=str)
            lines.append(f"  {key}: {rendered}")
    return "\n".join(lines)


class ExplainScreen(TextScreen):
    def __init__(self, hit: SessionHit) -> None:
        super().__init__(f"Why this hit: {one_line(hit.display_title)}", explain_text(hit))
