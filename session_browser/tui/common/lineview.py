"""The one Line-API base of the app's long views (the hit and Recent lists, the transcript).

Content is a sequence of *blocks* (a list row, a message) laid out one under another; block
``b`` covers virtual lines ``offsets[b]`` to ``offsets[b + 1]``. Only the lines on screen are
rendered (Textual's ``render_line``), each once per width, into an LRU cache of strips. A
change to one block (the cursor leaving it or arriving on it) drops that block's strips and
repaints its lines alone: the rest of the screen is served from the cache untouched.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from typing import ClassVar

from textual.scroll_view import ScrollView
from textual.strip import Strip

StripKey = tuple[int, int, int]  # (block, line in the block, width)


class LineView(ScrollView):
    """A :class:`ScrollView` of blocks of lines, with an LRU cache of rendered strips.

    Subclasses set ``_offsets`` (``[0, end of block 0, end of block 1, ...]``) and implement
    :meth:`render_block_line`; :meth:`forget_block` and :meth:`forget_lines` are their ways
    to say what changed.
    """

    STRIP_CACHE: ClassVar[int] = 2000  # strips kept (a few screens, at any width)

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._offsets: list[int] = [0]
        self._strips: OrderedDict[StripKey, Strip] = OrderedDict()

    @property
    def line_count(self) -> int:
        """Virtual lines of all the blocks."""
        return self._offsets[-1]

    def block_at(self, y: int) -> int:
        """The block holding virtual line ``y`` (-1 outside every block)."""
        if y < 0 or y >= self._offsets[-1]:
            return -1
        return bisect_right(self._offsets, y) - 1

    def render_block_line(self, block: int, line: int, width: int) -> Strip:
        """Line ``line`` of block ``block`` at ``width`` cells, styled (never cropped)."""
        raise NotImplementedError

    def blank_line(self, width: int) -> Strip:
        return Strip.blank(width, self.rich_style)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        vy = y + scroll_y
        block = self.block_at(vy)
        if block < 0:
            return self.blank_line(width)
        key = (block, vy - self._offsets[block], width)
        strips = self._strips
        strip = strips.get(key)
        if strip is None:
            strip = self.render_block_line(key[0], key[1], width)
            strips[key] = strip
            if len(strips) > self.STRIP_CACHE:
                strips.popitem(last=False)
        else:
            strips.move_to_end(key)
        return strip.crop(scroll_x, scroll_x + width)

    def forget_lines(self) -> None:
        """Every cached strip is stale (the data, the theme or the layout changed)."""
        self._strips.clear()
        self.refresh()

    def forget_block(self, block: int) -> None:
        """Block ``block`` changed: its strips go, and its lines alone are repainted."""
        if not 0 <= block < len(self._offsets) - 1:
            return
        for key in [k for k in self._strips if k[0] == block]:
            del self._strips[key]
        top = self._offsets[block]
        self.refresh_lines(top, self._offsets[block + 1] - top)
