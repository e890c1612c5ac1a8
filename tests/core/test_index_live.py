"""What a running app asks the index: what changed since it last looked, and the list and
search answers while a first build is still running."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from session_browser.core.index import SqliteSessionStore
from session_browser.core.multi import StoreGroup


def _session(sid: str, text: str, ts: float, title: str | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "session_id": sid,
        "messages": [{"role": "user", "content": text, "timestamp": ts}],
        "created_at": "2026-01-01T00:00:00+00:00",
        "updated_at": datetime.fromtimestamp(ts, UTC).isoformat(),
        "metadata": {},
    }
    if title is not None:
        data["metadata"]["title"] = title
    return data


def _write(d: Path, sid: str, data: dict[str, Any], mtime: float) -> Path:
    path = d / f"{sid}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    os.utime(path, (mtime, mtime))
    return path


def _many(d: Path, count: int) -> Path:
    d.mkdir(parents=True)
    for i in range(count):
        _write(
            d, f"s{i:04d}", _session(f"s{i:04d}", f"note {i} about walrus{i}", 1.7e9 + i), 1.7e9 + i
        )
    return d


def test_changed_since_names_added_and_appended_sessions(tmp_path: Path) -> None:
    d = _many(tmp_path / "s", 5)
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        start = store.generation()
        assert start > 0
        assert store.changed_since(start) == {}
        # A turn appended to one session, and a new session.
        data = _session("s0002", "note 2 about walrus2", 1.7e9 + 2)
        data["messages"].append({"role": "assistant", "content": "appended", "timestamp": 1.8e9})
        _write(d, "s0002", data, 1.8e9)
        _write(d, "fresh", _session("fresh", "a brand new one", 1.8e9 + 1), 1.8e9 + 1)
        report = store.reconcile()
        assert (report.added, report.updated) == (1, 1)
        changed = store.changed_since(start)
        assert set(changed) == {"s0002", "fresh"}
        assert all(gen > start for gen in changed.values())
        later = store.generation()
        assert later == max(changed.values())
        assert store.changed_since(later) == {}
        # A removal never makes the generation go back (a later change is still "after").
        (d / "fresh.json").unlink()
        store.reconcile()
        assert store.generation() == later


def _blocked_build(d: Path, db: Path) -> tuple[SqliteSessionStore, sqlite3.Connection]:
    """A store whose first build has listed every file and waits (a writer holds the
    index) before writing its first batch."""
    store = SqliteSessionStore(d, db_path=db, reconcile="none")
    blocker = sqlite3.connect(store.db_path, timeout=30.0, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    store.start_reconcile()
    deadline = time.monotonic() + 30
    while store.progress[1] == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert store.indexing and store.progress[1] > 0
    return store, blocker


def test_the_list_shows_unindexed_files_while_the_first_build_runs(tmp_path: Path) -> None:
    d = _many(tmp_path / "s", 40)
    _write(d, "titled", _session("titled", "x", 1.9e9, title="The newest one"), 1.9e9)
    store, blocker = _blocked_build(d, tmp_path / "i.sqlite3")
    try:
        assert store.count() == 41
        assert store.count(text="s003") == 10
        page = store.browse(limit=3)
        assert [s.session_id for s in page] == ["titled", "s0039", "s0038"]
        assert page[0].title == "The newest one"  # read from the file
        assert page[1].message_count == 1
        assert [s.session_id for s in store.browse(offset=39, limit=5)] == ["s0001", "s0000"]
        assert store.browse(limit=2, sort="size")[0].session_id == "titled"
        group = StoreGroup([store])
        assert group.count() == 41
        assert group.browse(limit=1)[0].session_id == "titled"
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
        store.start_reconcile().join(30)
    try:
        assert not store.indexing
        assert store.count() == 41  # indexed now: each session once
        assert [s.session_id for s in store.browse(limit=2)] == ["titled", "s0039"]
    finally:
        store.close()


def test_a_search_during_the_build_reads_only_the_newest_pending_files(tmp_path: Path) -> None:
    d = _many(tmp_path / "s", 60)
    store, blocker = _blocked_build(d, tmp_path / "i.sqlite3")
    try:
        store.pending_scan_files = 10
        newest = store.search_ex("walrus55", limit=5)
        assert [h.session_id for h in newest.hits] == ["s0055"]
        assert not newest.matched_exact  # 50 files were not read
        assert newest.searched == (10, 60)  # 50 files were not read: it says so
        assert any("searched 10 of 60 sessions" in w for w in newest.warnings)
        oldest = store.search_ex("walrus3", limit=5)
        assert oldest.hits == []  # not read yet: an older file waits for the index
        store.pending_scan_files = 1000
        every = store.search_ex("walrus3", limit=5)
        assert [h.session_id for h in every.hits] == ["s0003"]
        assert every.matched_exact
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
        store.close()


def test_a_search_while_the_build_lists_its_files_waits_for_the_list(tmp_path: Path) -> None:
    """A search that comes while a first build is still listing the dir (a slow disk, a
    loaded machine) waits for the list: it never answers "nothing" from an empty index."""
    d = _many(tmp_path / "s", 30)
    store = SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3", reconcile="none")
    listing, go = threading.Event(), threading.Event()
    list_files = store.source.list_files

    def slow_list() -> dict[str, tuple[int, int, int]]:
        listing.set()
        assert go.wait(30)
        return list_files()

    store.source.list_files = slow_list  # type: ignore[method-assign]
    answers: list[list[str]] = []
    try:
        store.start_reconcile()
        assert listing.wait(30)
        searching = threading.Thread(
            target=lambda: answers.append(
                [h.session_id for h in store.search_ex("walrus29", limit=5).hits]
            )
        )
        searching.start()
        searching.join(0.3)
        assert answers == []  # still waiting for the list
        go.set()
        searching.join(30)
        assert answers == [["s0029"]]
    finally:
        go.set()
        store.close()


def test_a_word_only_a_pending_file_holds_is_found_not_corrected(tmp_path: Path) -> None:
    d = _many(tmp_path / "s", 60)
    store = SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3")  # indexed: walrus0..59
    try:
        for i in range(600, 620):  # then new files, listed but not indexed yet
            sid = f"s{i:04d}"
            _write(d, sid, _session(sid, f"note {i} about walrus{i}", 1.8e9 + i), 1.8e9 + i)
        blocker = sqlite3.connect(store.db_path, timeout=30.0, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        try:
            store.start_reconcile()
            deadline = time.monotonic() + 30
            while store.progress[1] != 20 and time.monotonic() < deadline:
                time.sleep(0.02)
            result = store.search_ex("walrus600", limit=5)
            assert [h.session_id for h in result.hits] == ["s0600"]
            assert not result.fuzzy  # not "walrus60", a close spelling the index holds
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
    finally:
        store.close()
