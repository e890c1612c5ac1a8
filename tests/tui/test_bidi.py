"""Bidi marks (U+200E, U+200F) in titles, ids and file names are shown as visible escapes on
every screen: the hit list, the recent list, the viewer's top line, the quarantine list, the
status line and toasts (issue 16; the other hostile fixtures carry only U+202E)."""

from __future__ import annotations

import json
from pathlib import Path

from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.recent.listing import RecentList
from session_browser.tui.search.hits import HitList
from session_browser.tui.viewer.screen import ViewerScreen

from .conftest import screen_text
from .conftest import settle_workers as settle
from .stores import NOW

SIZE = (150, 36)
LRM, RLM = "\u200e", "\u200f"
SID = f"bidi{RLM}id{LRM}x"
TITLE = f"quince {LRM}ltr{RLM} title"
SHOWN_SID = "bidi\\u200fid\\u200ex"
SHOWN_TITLE = "quince \\u200eltr\\u200f title"


def bidi_store(root: Path) -> Path:
    """A store dir whose own name has a bidi mark, one session with marks in its id and
    title, and a quarantined file with a mark in its name."""
    sessions = root / f"store{RLM}dir" / "sessions"
    sessions.mkdir(parents=True)
    data = {
        "session_id": SID,
        "messages": [
            {"role": "user", "content": "quince jam recipe", "timestamp": 1767225600.0},
            {"role": "assistant", "content": "boil the quince", "timestamp": 1767225660.0},
        ],
        "created_at": "2026-01-01T00:00:00+00:00",
        "updated_at": "2026-01-01T00:01:00+00:00",
        "metadata": {"title": TITLE},
    }
    (sessions / "bidi.json").write_text(json.dumps(data), encoding="utf-8")
    raw = json.dumps({**data, "session_id": f"q{RLM}uarantined"}).encode()
    (sessions / f"file{LRM}name{RLM}.json.corrupt-1700000000000").write_bytes(raw[:-5])
    return sessions


def no_bidi(text: str) -> None:
    assert LRM not in text and RLM not in text, [c for c in text if c in (LRM, RLM)]


async def test_bidi_marks_are_escaped_on_every_screen(tmp_path: Path) -> None:
    sessions = bidi_store(tmp_path)
    missing = f"/nowhere{RLM}/sessions"
    app = SessionBrowserApp(
        Backend([sessions], indexed=False), now=NOW, animate=False, missing_stores=[missing]
    )
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot, app)
        # Toast: the missing store's name (the status line names stores by kind, not dir).
        assert any("/nowhere\\u200f/sessions" in n.message for n in app._notifications)
        text = screen_text(app)
        assert "nowhere\\u200f" in text
        no_bidi(text)
        # Hits: title and id.
        await pilot.press(*"quince")
        await settle(pilot, app)
        hits = app.main.query_one("#hits", HitList)
        assert [h.session_id for h in hits.hits] == [SID]
        text = screen_text(app)
        assert SHOWN_TITLE in text and SHOWN_SID in text
        no_bidi(text)
        # Viewer's top line: title and id; a toast naming the session.
        hits.focus()
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, ViewerScreen)
        text = screen_text(app)
        assert f"{SHOWN_TITLE}  ·  {SHOWN_SID}" in text
        no_bidi(text)
        app.notify(f"Copied from {SID}")
        await pilot.pause()
        assert app._notifications and list(app._notifications)[-1].message == (
            f"Copied from {SHOWN_SID}"
        )
        no_bidi(screen_text(app))
        # Recent: title and id.
        await pilot.press("escape", "f3")
        await settle(pilot, app)
        recent = app.main.query_one("#recent", RecentList)
        assert recent.total == 1
        text = screen_text(app)
        assert SHOWN_TITLE in text and SHOWN_SID in text
        no_bidi(text)
        # Quarantine: the corrupt file's name and the id inside it.
        await pilot.press("f4")
        await settle(pilot, app)
        text = screen_text(app)
        assert "file\\u200ename\\u200f.json.corrupt-1700000000000" in text, text
        no_bidi(text)
        assert app.is_running and app.return_code is None
