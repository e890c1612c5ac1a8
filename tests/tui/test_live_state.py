"""Every pane shows the current state: a status counted earlier never replaces a newer one,
a pane switched to is read again, keys typed right after a switch reach the new screen."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend

from .conftest import screen_text
from .stores import NOW

SIZE = (120, 36)


async def _until(pilot: Pilot[int], check: Any, seconds: float) -> None:
    """Wait (pressing nothing) until ``check()``, at most ``seconds``."""
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > seconds:
            raise AssertionError(f"not within {seconds} s")
        await pilot.pause(0.05)


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
