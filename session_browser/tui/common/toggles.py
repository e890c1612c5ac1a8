"""Check boxes and radio buttons whose state reads without colour.

Textual draws both as a coloured block holding the same mark whether on or off (``▐X▌``,
``▐●▌``): only the colour says which. These draw the state as text, ``[x]`` / ``[ ]`` and
``(•)`` / ``( )``, so it reads on a monochrome terminal, in a screenshot, to a screen
reader and to colour-blind eyes; the colour stays as a second cue.
"""

from __future__ import annotations

from textual.content import Content
from textual.style import Style
from textual.widgets import Checkbox, RadioButton


def _mark(on: bool, marks: tuple[str, str], style: Style) -> Content:
    """``marks[0]`` in the button's colours when on, ``marks[1]`` plain when off."""
    return Content.assemble((marks[0], style)) if on else Content(marks[1])


class TextCheckbox(Checkbox):
    """A :class:`Checkbox` drawn ``[x] label`` when on and ``[ ] label`` when off."""

    @property
    def _button(self) -> Content:
        return _mark(self.value, ("[x]", "[ ]"), self.get_visual_style("toggle--button"))


class TextRadioButton(RadioButton):
    """A :class:`RadioButton` drawn ``(•) label`` when on and ``( ) label`` when off."""

    @property
    def _button(self) -> Content:
        return _mark(self.value, ("(•)", "( )"), self.get_visual_style("toggle--button"))
