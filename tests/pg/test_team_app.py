"""The app opened on the team index: it searches and reads sessions from PostgreSQL (the files
are on the machines that pushed them)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from session_browser.core.pgindex import push_stores
from session_browser.core.sources import SOURCES
from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.search.hits import HitList
from session_browser.tui.viewer.screen import ViewerScreen
from session_browser.tui.viewer.transcript import TranscriptView
from tests.tui.conftest import settle

from .corpus import write_store


async def _settle(pilot: Pilot[int], app: SessionBrowserApp) -> None:
    await settle(pilot, app)  # by state: the debounce fired, the workers done, answers handled


def test_the_app_searches_and_opens_a_pushed_session(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSION_BROWSER_CONFIG_DIR", str(tmp_path / "config"))
    d = write_store(tmp_path / "store")
    push_stores(pg_url, [(SOURCES["praisonai"].source(d), "praisonai")])
    for path in d.glob("*.json"):
        path.unlink()  # only the team index holds them now

    async def run() -> None:
        app = SessionBrowserApp(Backend([pg_url]), store_labels=["team"], animate=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await _settle(pilot, app)
            assert app.focused is app.screen.query_one("#query", Input)
            await pilot.press(*"resume parser")
            await _settle(pilot, app)
            hits = app.screen.query_one(HitList)
            assert [h.session_id for h in hits.hits] == ["cafe"]
            await pilot.press("enter")
            await _settle(pilot, app)
            assert isinstance(app.screen, ViewerScreen)
            view = app.screen.query_one(TranscriptView)
            assert len(view.messages) == 2

    asyncio.run(run())
