"""Reading comfort: titles with their agent, Markdown, hidden content, highlight terms."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from session_browser.core.paths import safe_id
from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.screens.viewer import ViewerScreen
from session_browser.tui.widgets.hits import HitList
from session_browser.tui.widgets.recent import RecentList

from .conftest import make_app, screen_text
from .stores import BASE, _session, conversation

SIZE = (120, 36)


def write(store: Path, data: dict[str, Any]) -> None:
    store.mkdir(parents=True, exist_ok=True)
    path = store / f"{safe_id(data['session_id'])}.json"
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")


async def settle(pilot: Pilot[int], app: SessionBrowserApp) -> None:
    await pilot.pause(0.16)
    for _ in range(2):
        await app.workers.wait_for_complete()
        await pilot.pause()


def agent_store(root: Path) -> Path:
    store = root / "sessions"
    for i, question in enumerate(["How do I rotate a PDF?", "Plan a weekend in Porto"]):
        turns = [("user", question), ("assistant", "Here is how, in short.")]
        write(
            store,
            _session(f"chat-{i}", conversation(BASE + i * 86400, turns), agent_name="ChatGPT"),
        )
    return store


async def test_titles_are_first_user_messages_with_the_agent_beside(tmp_path: Path) -> None:
    app = make_app(agent_store(tmp_path / "home"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press(*"rotate")
        await settle(pilot, app)
        hits = app.screen.query_one(HitList)
        assert [h.title for h in hits.hits] == ["How do I rotate a PDF?"]
        assert "How do I rotate a PDF? · ChatGPT" in screen_text(app)
        await pilot.press("enter", "enter")
        await settle(pilot, app)
        assert isinstance(app.screen, ViewerScreen)
        assert "How do I rotate a PDF? · ChatGPT  ·  chat-0" in screen_text(app)
        await pilot.press("escape", "f3")
        await settle(pilot, app)
        recent = app.screen.query_one(RecentList)
        assert recent.total == 2
        text = screen_text(app)
        assert "Plan a weekend in Porto · ChatGPT" in text
        assert "How do I rotate a PDF? · ChatGPT" in text
