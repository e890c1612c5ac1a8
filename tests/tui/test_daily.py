"""Daily-use habits: paging past the first hits, a viewer that follows its session, saved
searches, one key map."""

from __future__ import annotations

import json
from pathlib import Path

from session_browser.tui.backend import SEARCH_LIMIT
from session_browser.tui.widgets.hits import HitList

from .conftest import make_app, screen_text, settle
from .stores import BASE, HOUR, _msg, _session

SIZE = (120, 36)


def _many(store: Path, n: int, word: str = "zebracorn") -> None:
    store.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        ts = BASE + i * HOUR
        data = _session(
            f"s{i:03d}",
            [_msg("user", f"{word} number {i}", ts), _msg("assistant", "noted", ts + 1)],
            title=f"Session {i}",
        )
        (store / f"s{i:03d}.json").write_text(json.dumps(data), encoding="utf-8")


async def test_more_hits_past_the_first_page_keep_the_cursor(tmp_path: Path) -> None:
    store = tmp_path / "many"
    _many(store, SEARCH_LIMIT + 12)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"zebracorn")
        await settle(pilot, app)
        hits = app.screen.query_one(HitList)
        assert len(hits.hits) == SEARCH_LIMIT
        assert hits.more and hits.row_count == SEARCH_LIMIT + 1
        await pilot.press("down")  # into the list
        await pilot.press("down", "down")
        assert hits.cursor == 2
        await pilot.press("ctrl+n")  # the next page, the cursor stays
        await settle(pilot, app)
        assert len(hits.hits) == SEARCH_LIMIT + 12
        assert hits.cursor == 2 and not hits.more
        assert hits.row_count == len(hits.hits)
        await pilot.press("ctrl+n")  # nothing more: says so
        await settle(pilot, app)
        assert any("Every matching session" in str(n.message) for n in app._notifications)

        # A new query starts at one page again; moving onto the last row fetches more.
        await pilot.press("escape", "ctrl+a", "ctrl+k", *"number")
        await settle(pilot, app)
        assert len(hits.hits) == SEARCH_LIMIT
        assert "more" in screen_text(app) or hits.more
        await pilot.press("down", "end")  # the cursor reaches the "more" row
        await settle(pilot, app)
        assert len(hits.hits) == SEARCH_LIMIT + 12
        assert hits.cursor == SEARCH_LIMIT  # on the first hit of the new page
        assert {h.session_id for h in hits.hits} == {f"s{i:03d}" for i in range(62)}
