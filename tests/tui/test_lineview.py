"""The one Line-API base of the hit list and the transcript: a cursor move draws again only
the lines of the row (or message) the cursor left and the one it reached; every other line
on screen comes from the strip cache as it was."""

from __future__ import annotations

from pathlib import Path

from textual.strip import Strip

from session_browser.tui.common.lineview import LineView
from session_browser.tui.search.hits import HitList
from session_browser.tui.viewer.screen import ViewerScreen
from session_browser.tui.viewer.transcript import TranscriptView

from .conftest import make_app, settle

SIZE = (120, 36)


def drawn_blocks(view: LineView, before: dict[tuple[int, int, int], Strip]) -> set[int]:
    """The blocks whose lines on screen were drawn anew since ``before`` was taken."""
    top = int(view.scroll_offset.y)
    blocks = set()
    for y in range(view.scrollable_content_region.height):
        view.render_line(y)
        block = view.block_at(top + y)
        key = (block, top + y - view._offsets[block], view.scrollable_content_region.width)
        if block >= 0 and before.get(key) is not view._strips.get(key):
            blocks.add(block)
    return blocks


async def test_a_cursor_move_draws_only_the_two_rows_again(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"the")
        await settle(pilot, app)
        hits = app.main.query_one(HitList)
        assert len(hits.hits) >= 3
        hits.focus()
        await pilot.pause()
        cached = dict(hits._strips)
        assert drawn_blocks(hits, cached) == set()  # nothing changed: all from the cache
        cached = dict(hits._strips)
        await pilot.press("down")
        await pilot.pause()
        assert hits.cursor == 1
        assert drawn_blocks(hits, cached) == {0, 1}


async def test_a_cursor_move_draws_only_the_two_messages_again(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.open_session("billing-plan", store="", anchor=0, terms=[], title="")
        await settle(pilot, app)
        assert isinstance(app.screen, ViewerScreen)
        view = app.screen.query_one(TranscriptView)
        assert len(view.messages) == 6 and view.cursor == 0 and view._block_of[:2] == [0, 1]
        cached = dict(view._strips)
        assert drawn_blocks(view, cached) == set()
        cached = dict(view._strips)
        view.cursor = 1
        await pilot.pause()
        assert drawn_blocks(view, cached) == {0, 1}
