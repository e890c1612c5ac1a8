"""A Line-API list of variable-height rows: prefix sums of row heights and ``bisect``.

No widget per row: only the lines on screen are rendered (and cached), so a list of
100,000 rows costs one list of integers.
"""

from __future__ import annotations

from itertools import accumulate
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from session_browser.tui.common.lineview import LineView
from session_browser.tui.common.render import error_text


def component_style(widget: Widget, name: str) -> Style:
    """The rich style of component class ``name`` of ``widget``, with a theme's automatic
    colours (``$text``, ``$text-muted``: "auto 60%") resolved against the widget's
    background, as Textual resolves them for its own text (a partial style leaves them as
    plain white, unreadable on a light theme)."""
    style = widget.get_component_rich_style(name, partial=True)
    styles = widget.get_component_styles(name)
    if styles.has_rule("color"):
        color = styles.color
        background = widget.background_colors[1]
        if styles.auto_color or color.auto:
            color = background.get_contrast_text(color.a)
        if color.a < 1.0:  # blended on the background, as Textual draws it
            color = background + color
        style = style + Style(color=color.rich_color)
    return style


def right_column(line: Text, right: str, width: int, style: Style) -> None:
    """End ``line`` with ``right`` flush right; what does not fit before it is cut with …
    (the right-hand column always shows whole)."""
    room = width - len(right) - 2  # a space between, and one cell spare at the edge
    if line.cell_len > room:
        line.truncate(max(1, room), overflow="ellipsis")
    line.append(" " * max(1, width - line.cell_len - len(right) - 1))
    line.append(right, style=style)


class RowList(LineView, can_focus=True):
    """Subclasses implement :meth:`row_lines` (the Text lines of one row)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "rowlist--cursor",
        "rowlist--dim",
        "rowlist--title",
        "rowlist--badge",
        "rowlist--match",
        "rowlist--accent",
    }

    DEFAULT_CSS = """
    RowList { overflow-x: hidden; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor_up", "Up", show=False, id="list.up"),
        Binding("down", "cursor_down", "Down", show=False, id="list.down"),
        Binding("pageup", "page_up_rows", "Page up", show=False, id="list.page_up"),
        Binding("pagedown", "page_down_rows", "Page down", show=False, id="list.page_down"),
        Binding("home", "first", "First", show=False, id="list.first"),
        Binding("end", "last", "Last", show=False, id="list.last"),
        Binding("enter", "open", "Open", id="list.open"),
    ]

    cursor: reactive[int] = reactive(0, always_update=True)

    class Opened(Message):
        """Enter was pressed on row ``index``."""

        def __init__(self, sender: RowList, index: int) -> None:
            super().__init__()
            self.list = sender
            self.index = index

        @property
        def control(self) -> RowList:
            return self.list

    class CursorMoved(Message):
        def __init__(self, sender: RowList, index: int) -> None:
            super().__init__()
            self.list = sender
            self.index = index

        @property
        def control(self) -> RowList:
            return self.list

    class TypedText(Message):
        """A printable key the list does not bind: the screen puts it on its text field
        (the query, the filter), as the list had never taken the focus from it."""

        def __init__(self, sender: RowList, text: str) -> None:
            super().__init__()
            self.list = sender
            self.text = text

        @property
        def control(self) -> RowList:
            return self.list

    def on_key(self, event: events.Key) -> None:
        """Printable keys the list does not bind go to the screen's text field."""
        if not (event.is_printable and event.character):
            return
        if event.key in self.screen.active_bindings:  # e, s, a, space, ?, / keep their action
            return
        event.stop()
        event.prevent_default()
        self.post_message(self.TypedText(self, event.character))

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.compact = False  # one line a row

    # ------------------------------------------------------------------ model

    @property
    def row_count(self) -> int:
        return len(self._offsets) - 1

    def set_heights(self, heights: list[int]) -> None:
        """Replace the rows: ``heights[i]`` lines for row ``i``."""
        self._offsets = [0, *accumulate(heights)]
        self.invalidate()
        self.virtual_size = Size(self.size.width, self._offsets[-1])
        if self.cursor >= self.row_count:
            self.cursor = max(0, self.row_count - 1)

    def set_compact(self, compact: bool) -> None:
        """One line a row (or the full rows again); the cursor stays on its row."""
        if compact == self.compact:
            return
        self.compact = compact
        cursor = self.cursor
        self.set_heights(self.row_heights())
        self.move_cursor(cursor)

    def row_heights(self) -> list[int]:
        """The height of every row as the list is now (for :meth:`set_compact`)."""
        return [1] * self.row_count

    def invalidate(self) -> None:
        """Forget cached lines (the data behind the rows changed)."""
        self.forget_lines()

    def row_at(self, y: int) -> int:
        """The row holding virtual line ``y`` (-1 past the end)."""
        return self.block_at(y)

    def row_lines(self, index: int, width: int) -> list[Text]:
        raise NotImplementedError

    def safe_row_lines(self, index: int, width: int) -> list[Text]:
        """:meth:`row_lines`, or a placeholder saying why when a row's data cannot be shown
        (one bad session never takes the list, or the app, down)."""
        try:
            return self.row_lines(index, width)
        except Exception as exc:
            return [Text(f" ⚠ this row cannot be shown ({error_text(exc)})", style="bold")]

    # ------------------------------------------------------------------ rendering

    def style_of(self, name: str) -> Style:
        return component_style(self, f"rowlist--{name}")

    def on_mount(self) -> None:
        # Cached lines carry the colours of the theme they were drawn in.
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.invalidate())

    def render_block_line(self, row: int, line: int, width: int) -> Strip:
        base = self.rich_style
        lines = self.safe_row_lines(row, width)
        text = lines[line] if line < len(lines) else Text("")
        text.no_wrap = True
        text.end = ""
        text.truncate(width, overflow="ellipsis")
        segments = list(text.render(self.app.console))
        strip = Strip(segments).adjust_cell_length(width)
        style = base
        if row == self.cursor:
            style = base + self.get_component_rich_style("rowlist--cursor")
            strip = Strip([Segment("▌", style + self.style_of("accent")), *strip.crop(1, width)])
        return strip.apply_style(style)

    def on_resize(self) -> None:
        self._strips.clear()
        self.virtual_size = Size(self.size.width, self._offsets[-1])

    # ------------------------------------------------------------------ cursor

    def watch_cursor(self, old: int, new: int) -> None:
        # The two rows the cursor left and reached are drawn again; every other line stays.
        self.forget_block(old)
        self.forget_block(new)
        if 0 <= new < self.row_count:
            self.scroll_to_region(
                Region(0, self._offsets[new], 1, self._offsets[new + 1] - self._offsets[new]),
                animate=False,
                force=True,
            )
            self.post_message(self.CursorMoved(self, new))

    def move_cursor(self, index: int) -> None:
        if self.row_count:
            self.cursor = max(0, min(index, self.row_count - 1))

    def action_cursor_up(self) -> None:
        self.move_cursor(self.cursor - 1)

    def action_cursor_down(self) -> None:
        self.move_cursor(self.cursor + 1)

    def _rows_per_page(self) -> int:
        if not self.row_count:
            return 1
        avg = max(1, self._offsets[-1] // self.row_count)
        return max(1, self.scrollable_content_region.height // avg)

    def action_page_up_rows(self) -> None:
        self.move_cursor(self.cursor - self._rows_per_page())

    def action_page_down_rows(self) -> None:
        self.move_cursor(self.cursor + self._rows_per_page())

    def action_first(self) -> None:
        self.move_cursor(0)

    def action_last(self) -> None:
        self.move_cursor(self.row_count - 1)

    def action_open(self) -> None:
        if 0 <= self.cursor < self.row_count:
            self.post_message(self.Opened(self, self.cursor))

    async def _on_click(self, event: events.Click) -> None:
        row = self.row_at(event.y + int(self.scroll_offset.y))
        if row >= 0:
            if row == self.cursor and event.chain >= 2:
                self.action_open()
            self.cursor = row
