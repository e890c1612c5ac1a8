"""Every pane shows the current state: a status counted earlier never replaces a newer one,
a pane switched to is read again, keys typed right after a switch reach the new screen."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend

from .conftest import screen_text
from .conftest import until as _until
from .stores import NOW

SIZE = (120, 36)


def _write(store: Path, sid: str, text: str, ts: float) -> None:
    data = {
        "session_id": sid,
        "messages": [{"role": "user", "content": text, "timestamp": ts}],
        "created_at": "2026-01-01T00:00:00+00:00",
        "updated_at": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(ts)),
        "metadata": {"title": f"Session {sid}"},
    }
    tmp = store / f".{sid}.tmp"
    tmp.write_text(json.dumps(data), encoding="utf-8")
    tmp.replace(store / f"{sid}.json")


class _LateFirstCount(Backend):
    """The real backend; the count taken while the build is still listing the files (0
    sessions so far) is held until the test lets it go: a worker slowed by load."""

    def __init__(self, dirs: list[Path]) -> None:
        super().__init__(dirs)
        self.held = threading.Event()
        self.release = threading.Event()

    def count(self, text: str = "") -> int:
        n = super().count(text)
        if n == 0 and self.index_state().mode == "building" and not self.held.is_set():
            self.held.set()
            self.release.wait(60)
        return n


async def test_a_count_taken_before_the_build_listed_its_files_never_shows_an_empty_store(
    tmp_path: Path,
) -> None:
    store = tmp_path / "many"
    store.mkdir()
    for i in range(300):
        _write(store, f"s{i:05d}", f"note {i} about walrus{i}", 1.7e9 + i)
    backend = _LateFirstCount([store])
    # A slowed build start: the build lists the files only when the test says so.
    source = backend.stores[0].source  # type: ignore[attr-defined]
    listed = threading.Event()
    list_files = source.list_files

    def slow_list() -> Any:
        listed.wait(60)
        return list_files()

    source.list_files = slow_list
    app = SessionBrowserApp(backend, now=NOW, store_labels=["many"], animate=False)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await _until(pilot, backend.held.is_set, 20)  # a count of 0 is in hand
            listed.set()
            await _until(
                pilot,
                lambda: app.index_state.mode == "ready" and app.session_count == 300,
                60,
            )
            backend.release.set()  # the old count of 0 arrives now
            await app.workers.wait_for_complete()
            await pilot.pause()
            await pilot.pause()
            assert app.session_count == 300
            assert "300 sessions" in app.status_text
            assert not app.main.query_one("#empty-state").display
            assert "No sessions here yet" not in screen_text(app)
    finally:
        backend.release.set()
        listed.set()
        backend.close()


def _burst(app: SessionBrowserApp, *keys: str) -> None:
    """Keys as a terminal sends them, all at once: none waits for the app to be idle."""
    from textual import events

    driver = app._driver
    assert driver is not None
    for key in keys:
        char = key if len(key) == 1 else None
        event = events.Key(key, char)
        event.set_sender(app)
        driver.send_message(event)


async def test_each_pane_shows_the_current_state_when_switched_to(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Files change while another pane is shown (and no periodic look comes: on a large
    store the last one may still run): the pane switched to is current."""
    import session_browser.tui.app as app_module
    from session_browser.tui.recent.listing import RecentList
    from session_browser.tui.search.hits import HitList

    monkeypatch.setattr(app_module, "LIVE_POLL", 3600.0)
    store = tmp_path / "sessions"
    store.mkdir()
    base = time.time() - 3 * 86400
    for n, sid in enumerate(("alpha", "beta", "gamma")):
        _write(store, sid, f"{sid} walrus plan", base + n * 3600)
    backend = Backend([store])
    app = SessionBrowserApp(backend, now=NOW, store_labels=["s"], animate=False)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await _until(pilot, lambda: app.index_state.mode == "ready", 30)
            recent = app.main.query_one(RecentList)
            hits = app.main.query_one(HitList)
            await pilot.press("f3")

            def order() -> list[str]:
                return [s.session_id for s in recent.pages.get(0, [])]

            await _until(pilot, lambda: order() == ["gamma", "beta", "alpha"], 10)
            await pilot.press("f2", *"walrus")
            await _until(pilot, lambda: len(hits.hits) == 3, 10)
            await _until(pilot, lambda: "3 sessions" in app.status_text, 10)

            # Underneath, while Search is shown: alpha gets a turn, delta is new.
            _write(store, "alpha", "alpha walrus plan, and more", time.time())
            _write(store, "delta", "delta walrus too", time.time() - 60)
            await pilot.press("f3")
            await _until(pilot, lambda: order() == ["alpha", "delta", "gamma", "beta"], 10)
            assert recent.total == 4
            await _until(pilot, lambda: "4 sessions" in app.status_text, 10)
            assert {"alpha", "delta"} <= recent.fresh  # marked new, not dropped

            # Back on Search: the query is asked again, delta is among the hits.
            _write(store, "epsilon", "epsilon walrus as well", time.time() - 120)
            await pilot.press("f2")
            await _until(
                pilot,
                lambda: (
                    {h.session_id for h in hits.hits}
                    == {"alpha", "beta", "gamma", "delta", "epsilon"}
                ),
                10,
            )
            await _until(pilot, lambda: "5 sessions" in app.status_text, 10)
    finally:
        backend.close()


async def test_keys_typed_right_after_a_switch_go_to_the_screen_switched_to(
    tmp_path: Path,
) -> None:
    from textual.widgets import Input

    from session_browser.tui.viewer.screen import ViewerScreen

    store = tmp_path / "sessions"
    store.mkdir()
    for n, sid in enumerate(("alpha", "beta")):
        _write(store, sid, f"{sid} walrus plan", time.time() - 86400 + n)
    backend = Backend([store], indexed=False)
    app = SessionBrowserApp(backend, now=NOW, store_labels=["s"], animate=False)
    async with app.run_test(size=SIZE) as pilot:
        query = app.main.query_one("#query", Input)
        filt = app.main.query_one("#filter", Input)
        # Recent (the filter focused), then F2 and a word at once.
        await pilot.press("f3")
        await _until(pilot, lambda: app.main.focused is filt, 10)
        _burst(app, "f2", *"walrus")
        await _until(pilot, lambda: query.value == "walrus", 10)
        assert filt.value == ""
        # F3 and a filter at once.
        _burst(app, "f3", *"bet")
        await _until(pilot, lambda: filt.value == "bet", 10)
        assert query.value == "walrus"
        # From the viewer: Esc, F2 and more of the query at once.
        await pilot.press("f2")
        await _until(pilot, lambda: app.main.focused is query, 10)
        app.open_session("alpha", store="", anchor=0, terms=[], title="")
        await _until(pilot, lambda: isinstance(app.screen, ViewerScreen), 10)
        await _until(pilot, lambda: app.screen.focused is not None, 10)
        _burst(app, "escape", "f2", *"2x")
        await _until(pilot, lambda: query.value == "walrus2x", 10)
        assert not isinstance(app.screen, ViewerScreen)
        assert filt.value == "bet"


async def test_the_status_line_drops_a_skipped_file_once_it_is_fixed(tmp_path: Path) -> None:
    """A damaged file is skipped by the index and the status line says so; once it is
    fixed (restored) underneath, the note goes with the next look at the stores."""
    store = tmp_path / "sessions"
    store.mkdir()
    _write(store, "alpha", "alpha walrus plan", time.time() - 3600)
    (store / "beta.json").write_text('{"session_id": "beta", "messages": [', encoding="utf-8")
    backend = Backend([store])
    app = SessionBrowserApp(backend, now=NOW, store_labels=["s"], animate=False)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await _until(pilot, lambda: app.index_state.mode == "ready", 30)
            await _until(pilot, lambda: "1 file skipped" in app.status_text, 10)
            assert "1 session ·" in app.status_text
            _write(store, "beta", "beta is whole again", time.time())
            await _until(pilot, lambda: "2 sessions" in app.status_text, 10)
            await _until(pilot, lambda: "skipped" not in app.status_text, 10)
    finally:
        backend.close()
