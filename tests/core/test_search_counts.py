"""A count on unchanged data is the same count, whatever the page asked for; ``index+scan``
is said only when files were really scanned."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from session_browser.core.index import SqliteSessionStore
from session_browser.core.index import plan as index_plan
from session_browser.core.multi import StoreGroup

from .test_index import put


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    d = tmp_path / "sessions"
    for i in range(300):
        put(d, f"s{i:03d}", [f"restaurant booking {i}", "a table for two", f"restaurant {i}"],
            updated=f"2026-01-{1 + i % 28:02d}T00:00:00+00:00")
    put(d, "other", ["weather report", "sunny"])
    return d


def test_a_count_beyond_the_budget_is_the_same_count_every_time(
    store_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 600 postings of "restaurant", a budget of 250: the count is a lower bound, and the same
    # lower bound whatever the page size (the candidates read grow with it) and however
    # often it is asked.
    monkeypatch.setattr(index_plan, "COUNT_BUDGET", 250)
    with SqliteSessionStore(store_dir, db_path=tmp_path / "i.sqlite3") as index:
        group = StoreGroup([index])
        seen = []
        for limit in (5, 60, 5, 100, 5):
            res = group.search_ex("restaurant", limit=limit)
            seen.append((res.matched_sessions, res.matched_exact))
            assert res.error is None and res.mode == "index"
        assert len(set(seen)) == 1, seen
        count, exact = seen[0]
        assert not exact and 100 <= count < 300
        # the sessions of the first 250 matching messages in row order, as the messages say
        db = sqlite3.connect(tmp_path / "i.sqlite3")
        try:
            owners = db.execute(
                "SELECT count(DISTINCT m.sid) FROM (SELECT rowid FROM fts WHERE fts MATCH "
                "'restaurant' ORDER BY rowid LIMIT 250) f JOIN messages m ON m.id = f.rowid"
            ).fetchone()[0]
        finally:
            db.close()
        assert count == owners
        # within the budget the count is exact
        monkeypatch.setattr(index_plan, "COUNT_BUDGET", 3000)
        res = group.search_ex("restaurant", limit=5)
        assert (res.matched_sessions, res.matched_exact) == (300, True)


def test_index_scan_only_when_files_were_scanned(store_dir: Path, tmp_path: Path) -> None:
    # A reconcile runs (it finds nothing to do and waits in its progress report): the index
    # is complete, nothing is scanned, and the search says "index".
    with SqliteSessionStore(store_dir, db_path=tmp_path / "i.sqlite3") as index:
        group = StoreGroup([index])
        inside, release = threading.Event(), threading.Event()

        def progress(_done: int, _total: int) -> None:
            inside.set()
            release.wait(60)

        worker = threading.Thread(target=lambda: index.reconcile(progress=progress))
        worker.start()
        try:
            assert inside.wait(60)
            assert index.indexing
            for query in ('"round trip"', "weather", "restaurant"):
                res = group.search_ex(query, limit=5)
                assert res.mode == "index", (query, res.mode)
            assert group.search_ex("weather", limit=5).matched_sessions == 1
        finally:
            release.set()
            worker.join(60)
        # (a search while files really are scanned says index+scan: test_index.py,
        # test_background_reconcile_answers_meanwhile)
