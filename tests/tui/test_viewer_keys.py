"""The viewer under fast typing and at the end of a session: a find typed as one burst keeps
its term, and a hit in the last screenful opens with the cursor on it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input

from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.viewer.screen import ViewerScreen
from session_browser.tui.viewer.transcript import TranscriptView

from .conftest import until as _until
from .stores import BASE, HOUR, NOW, _session, conversation, long_session
from .test_live_state import _burst
from .test_reading import write

SIZE = (120, 36)


async def _open(pilot: Pilot[int], app: SessionBrowserApp, anchor: int, terms: list[str]) -> Any:
    app.open_session("long", store="", anchor=anchor, terms=terms, title="long")
    await _until(pilot, lambda: isinstance(app.screen, ViewerScreen) and app.screen.loaded, 60)
    viewer = app.screen
    assert isinstance(viewer, ViewerScreen)
    return viewer, viewer.query_one(TranscriptView)


async def test_find_typed_as_one_burst_in_a_big_session_keeps_the_term(tmp_path: Path) -> None:
    store = long_session(tmp_path, 20_000)
    app = SessionBrowserApp(Backend([store], indexed=False), now=NOW, animate=False)
    async with app.run_test(size=SIZE) as pilot:
        viewer, view = await _open(pilot, app, -1, [])
        await _until(pilot, lambda: view.has_focus, 10)
        _burst(app, "slash", *"message 12345", "enter")
        await _until(pilot, lambda: viewer.matches == [12345], 30)
        find = viewer.query_one("#find", Input)
        assert find.value == "message 12345"
        assert viewer.terms == ["message", "12345"]
        await _until(pilot, lambda: view.cursor == 12345 and not find.display, 10)


def _wrapped_session(root: Path, count: int) -> Path:
    """One session of ``count`` messages of very different lengths (many wrap)."""
    store = root / "sessions"
    turns = [
        ("user" if i % 2 == 0 else "assistant", f"message {i} " + "lorem ipsum dolor " * (i % 23))
        for i in range(count)
    ]
    data = _session("long", conversation(BASE, turns, gap=HOUR), title="A long session")
    write(store, data)
    return store


async def test_a_hit_in_the_last_screenful_opens_with_the_cursor_on_it(tmp_path: Path) -> None:
    store = _wrapped_session(tmp_path, 400)
    app = SessionBrowserApp(Backend([store], indexed=False), now=NOW, animate=False)
    copied: list[str] = []
    app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        for anchor in (388, 393, 396, 399):
            _viewer, view = await _open(pilot, app, anchor, ["message", str(anchor)])
            await pilot.pause()
            await pilot.pause()
            assert view.cursor == anchor, (anchor, view.cursor)
            await pilot.press("y")
            await _until(pilot, lambda: len(copied) > 0, 5)
            assert copied.pop().startswith(f"message {anchor} ")
            await pilot.press("escape")
            await _until(pilot, lambda: not isinstance(app.screen, ViewerScreen), 10)
