"""The running app follows its stores: files written while it runs show up by themselves
(marked new), and a first run lists and answers before the index is built."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from textual import events

from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.recent.listing import RecentList
from session_browser.tui.search.hits import HitList

from .conftest import screen_text
from .conftest import until as _until
from .stores import NOW

SIZE = (120, 36)


def _session(sid: str, texts: list[str], ts: float) -> dict[str, Any]:
    stamp = datetime.fromtimestamp(ts, UTC).isoformat()
    return {
        "session_id": sid,
        "messages": [
            {"role": "user" if i % 2 == 0 else "assistant", "content": t, "timestamp": ts + i}
            for i, t in enumerate(texts)
        ],
        "created_at": stamp,
        "updated_at": stamp,
        "metadata": {"title": f"Session {sid}"},
    }


def _write(store: Path, data: dict[str, Any]) -> None:
    path = store / f"{data['session_id']}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    tmp.replace(path)  # as an agent saves: one rename, never a half-written file


async def test_files_written_while_the_app_runs_appear_by_themselves_marked_new(
    tmp_path: Path,
) -> None:
    store = tmp_path / "sessions"
    store.mkdir()
    base = time.time() - 3 * 86400
    for n, sid in enumerate(("alpha", "beta", "gamma")):
        words = "the zebracorn plan" if sid == "alpha" else "nothing to see"
        _write(store, _session(sid, [f"{sid} {words}", "ok"], base + n * 3600))
    backend = Backend([store])
    app = SessionBrowserApp(backend, now=NOW, store_labels=["live"], animate=False)
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: app.index_state.mode == "ready", 20)
        await pilot.press(*"zebracorn")
        hits = app.main.query_one(HitList)
        await _until(pilot, lambda: [h.session_id for h in hits.hits] == ["alpha"], 10)
        recent = app.main.query_one(RecentList)
        await _until(pilot, lambda: recent.total == 3, 10)
        await pilot.pause(1.5)  # the app has looked at the stores at least once since
        assert not hits.fresh and not recent.fresh

        # An agent appends a turn to beta and starts a new session, delta.
        now = time.time()
        beta = _session("beta", ["beta nothing to see", "ok"], base + 3600)
        beta["messages"].append({"role": "user", "content": "zebracorn again", "timestamp": now})
        beta["updated_at"] = datetime.fromtimestamp(now, UTC).isoformat()
        _write(store, beta)
        _write(store, _session("delta", ["a zebracorn question", "an answer"], now + 1))

        def shown() -> bool:
            ids = {h.session_id for h in hits.hits}
            first = recent.pages.get(0, [])
            return (
                ids == {"alpha", "beta", "delta"}
                and [s.session_id for s in first[:2]] == ["delta", "beta"]
                and recent.total == 4
                and {"beta", "delta"} <= hits.fresh
                and {"beta", "delta"} <= recent.fresh
            )

        took = await _until(pilot, shown, 2.0)
        assert took < 2.0
        assert "alpha" not in hits.fresh  # unchanged: not new
        text = screen_text(app)
        assert "Session delta  new " in text and "Session beta  new " in text
        assert "Session alpha  new" not in text
        app.action_show_recent()
        await _until(pilot, lambda: "Session delta  new " in screen_text(app), 30)
        text = screen_text(app)
        assert "Session delta  new " in text and "Session gamma  new" not in text

        # Opening a new session is looking at it: it is not new any more.
        app.open_session("delta", store="", anchor=0, terms=[], title="")
        await _until(pilot, lambda: "delta" not in recent.fresh, 5)
        assert "beta" in recent.fresh


def _many_sessions(root: Path, count: int) -> Path:
    root.mkdir(parents=True)
    for i in range(count):
        _write(root, _session(f"s{i:05d}", [f"note {i} about walrus{i}"], 1.7e9 + i * 60))
    return root


async def test_a_first_run_lists_and_answers_before_the_index_is_built(tmp_path: Path) -> None:
    store = _many_sessions(tmp_path / "many", 1200)
    backend = Backend([store])  # indexed; nothing built yet
    # Hold the index's write lock: the build lists every file, parses a batch and waits.
    blocker = sqlite3.connect(backend.stores[0].db_path, timeout=30.0, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    app = SessionBrowserApp(backend, now=NOW, store_labels=["many"], animate=False)
    try:
        async with app.run_test(size=SIZE) as pilot:
            recent = app.main.query_one(RecentList)
            await _until(pilot, lambda: recent.total == 1200 and 0 in recent.pages, 5)
            assert app.index_state.mode == "building"  # not built, yet listed
            assert backend.stores[0].count() == 1200
            first = recent.pages[0]
            assert [s.session_id for s in first[:2]] == ["s01199", "s01198"]
            assert first[0].display_title == "Session s01199"  # read from the file
            await pilot.press(*"walrus1190")
            hits = app.main.query_one(HitList)
            await _until(pilot, lambda: [h.session_id for h in hits.hits] == ["s01190"], 5)
            assert app.index_state.mode == "building"
            info = str(app.main.query_one("#search-info").render())
            assert "searched 100 of 1,200 sessions; full results when the index is ready" in info
            # The status line counts every session and says how far the index is.
            await _until(pilot, lambda: "1,200 sessions ·" in app.status_text, 5)
            assert "index building 0% — 0 of 1,200 files" in app.status_text
            assert "indexed so far" not in app.status_text
            blocker.execute("ROLLBACK")
            await _until(pilot, lambda: app.index_state.mode == "ready", 60)
            await _until(pilot, lambda: "1,200 sessions · index ready" in app.status_text, 10)
    finally:
        blocker.close()
        backend.group.close()


async def test_a_stopped_build_is_not_finished_by_looking_for_changes(tmp_path: Path) -> None:
    store = _many_sessions(tmp_path / "many", 1200)
    backend = Backend([store])
    blocker = sqlite3.connect(backend.stores[0].db_path, timeout=30.0, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    app = SessionBrowserApp(backend, now=NOW, store_labels=["many"], animate=False)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await _until(pilot, lambda: app.index_state.total == 1200, 10)
            await pilot.press("ctrl+g")
            blocker.execute("ROLLBACK")
            await _until(pilot, lambda: app.index_state.mode == "cancelled", 20)
            await pilot.pause(2.5)  # two looks at the stores
            assert app.index_state.mode == "cancelled"
            assert not backend.stores[0].indexing
            assert backend.stores[0].count() < 1200  # the rest waits for Resume
    finally:
        blocker.close()
        backend.group.close()


def test_a_search_superseded_while_another_runs_is_not_run(tmp_path: Path) -> None:
    """One search at a time: a keystroke's search that was overtaken by the next one
    while it waited never runs (while a build runs, each search reads files)."""
    import threading

    store = tmp_path / "sessions"
    store.mkdir()
    _write(store, _session("alpha", ["the zebracorn plan", "ok"], time.time()))
    backend = Backend([store])
    backend.group.start_reconcile()
    try:
        results: dict[str, Any] = {}
        overtaken = threading.Event()

        def search(name: str, cancelled: threading.Event) -> None:
            results[name] = backend.search("zebracorn", is_cancelled=cancelled.is_set)

        with backend._search_lock:  # a search is running
            waiting = threading.Thread(target=search, args=("old", overtaken))
            current = threading.Thread(target=search, args=("new", threading.Event()))
            waiting.start()
            current.start()
            time.sleep(0.2)
            assert not results  # both wait for the running one
            overtaken.set()  # the next keystroke came
        waiting.join(10)
        current.join(10)
        assert results["old"].error == "superseded" and results["old"].hits == []
        assert [h.session_id for h in results["new"].hits] == ["alpha"]
    finally:
        backend.close()


class _CountingBackend(Backend):
    """The real backend, noting the queries it was asked to search."""

    def __init__(self, dirs: list[Path]) -> None:
        super().__init__(dirs)
        self.asked: list[str] = []

    def search(self, query: str, **kwargs: Any) -> Any:
        self.asked.append(query)
        return super().search(query, **kwargs)


async def test_while_the_index_builds_a_search_waits_for_a_pause_in_typing(
    tmp_path: Path,
) -> None:
    store = _many_sessions(tmp_path / "many", 1200)
    backend = _CountingBackend([store])
    blocker = sqlite3.connect(backend.stores[0].db_path, timeout=30.0, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    app = SessionBrowserApp(backend, now=NOW, store_labels=["many"], animate=False)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await _until(pilot, lambda: app.index_state.total == 1200, 10)
            await pilot.pause()
            driver = app._driver
            assert driver is not None
            for char in "walrus1190":  # a fast typist: a key every 20 ms (the pause is 200 ms)
                key = events.Key(char, char)
                key.set_sender(app)
                driver.send_message(key)  # as the terminal sends it (no wait for idle)
                await asyncio.sleep(0.02)
            hits = app.main.query_one(HitList)
            await _until(pilot, lambda: [h.session_id for h in hits.hits] == ["s01190"], 5)
            assert backend.asked == ["walrus1190"]  # no search per keystroke
            blocker.execute("ROLLBACK")  # let the build go on, so closing is quick
    finally:
        blocker.close()
        backend.group.close()


async def test_a_late_status_or_change_while_closing_updates_nothing(store: Path) -> None:
    """A worker's message handled after the screens are gone (the app closing while the
    index builds): nothing to update, never a crash."""
    from session_browser.tui.backend import LiveChanges
    from session_browser.tui.messages import StoreStatus

    app = SessionBrowserApp(Backend([store], indexed=False), now=NOW, animate=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
    assert not app.screen_stack and app.main_shown() is None
    app.on_store_status(StoreStatus(0, app.index_state, 0, 0))
    app._refresh_lists(recent=True)
    app._show_changes(LiveChanges(changed=True, fresh=frozenset({"billing-plan"})))
    app._set_fresh()
