"""The query history keeps every query whose hits were left on screen a moment (as a shell
keeps every command run), not only those a session was opened from; never one that found
nothing, and an Up walk through the history does not reorder it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from session_browser.core.history import load_history, remember
from session_browser.core.search.results import SearchResult
from session_browser.tui import search as search_pkg
from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.search.hits import HitList
from session_browser.tui.search.screen import MainScreen

from .conftest import make_app, settle

SIZE = (120, 36)
GUARD = 30.0  # seconds: a history entry that never comes fails the test


async def history_becomes(pilot: Pilot[int], want: list[str]) -> None:
    """Wait until the history file holds ``want`` (the screen writes it off its thread)."""
    deadline = time.monotonic() + GUARD
    while load_history() != want:
        assert time.monotonic() < deadline, load_history()
        await pilot.pause(0.05)


async def hits_for(pilot: Pilot[int], app: SessionBrowserApp, query: str) -> None:
    """Wait until the query box holds ``query`` and its hits are shown (the search runs off
    the UI thread, so a settled screen may not have them yet)."""
    deadline = time.monotonic() + GUARD
    while not (
        app.screen.query_one("#query", Input).value == query
        and app.screen.query_one(HitList).hits
    ):
        assert time.monotonic() < deadline, app.screen.query_one("#query", Input).value
        await pilot.pause(0.05)


async def type_query(pilot: Pilot[int], app: SessionBrowserApp, text: str) -> None:
    app.screen.query_one("#query", Input).value = ""
    await pilot.press(*text)
    await settle(pilot, app)


async def test_a_query_left_on_screen_is_kept_without_opening_a_hit(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await type_query(pilot, app, "chargefox")
        assert [h.session_id for h in app.screen.query_one(HitList).hits] == ["billing-plan"]
        await history_becomes(pilot, ["chargefox"])
        assert isinstance(app.screen, MainScreen)  # nothing was opened


async def test_a_query_without_hits_is_not_kept(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_pkg.screen, "REMEMBER_AFTER", 0.01)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await type_query(pilot, app, "zzqqnothingmatches")
        assert app.screen.query_one(HitList).hits == []
        await type_query(pilot, app, "retention")
        assert app.screen.query_one(HitList).hits
        await history_becomes(pilot, ["retention"])


async def test_walking_the_history_does_not_reorder_it(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_pkg.screen, "REMEMBER_AFTER", 0.01)
    remember("chargefox")
    remember("retention")
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        field = app.screen.query_one("#query", Input)
        await pilot.press("up")
        await settle(pilot, app)
        await hits_for(pilot, app, "retention")
        await pilot.press("up")
        await settle(pilot, app)
        await hits_for(pilot, app, "chargefox")
        assert field.value == "chargefox"
        assert load_history() == ["chargefox", "retention"]
        # Typed after the walk, a query is kept again.
        await type_query(pilot, app, "billing")
        await history_becomes(pilot, ["chargefox", "retention", "billing"])


async def test_a_refresh_during_the_debounce_of_a_recalled_query_shows_its_hits(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lists asked again (a build's progress, a change on disk) between the Up and the
    end of its debounce: the hits of the recalled query still come."""
    remember("retention")
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        search = app.backend.search

        def slow_search(*args: Any, **kwargs: Any) -> SearchResult:
            time.sleep(0.2)  # still searching when the debounce ends
            return search(*args, **kwargs)

        monkeypatch.setattr(app.backend, "search", slow_search)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        screen.action_history_older()
        await pilot.pause()  # the recalled query's search waits for its debounce
        screen.rerun_search(keep_cursor=True)
        await hits_for(pilot, app, "retention")
