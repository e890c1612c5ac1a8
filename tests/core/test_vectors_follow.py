"""Vectors follow the index: after an update adds, grows or drops sessions, the vectors of what
changed are built by a process of their own (real processes, real SQLite files); meanwhile a
search in hybrid mode answers at once and says the vectors are being updated, and ``index
status`` says how far they are. An index whose vectors were never built starts nothing."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import pytest

from session_browser.core import paths
from session_browser.core.embed import HashEmbedder
from session_browser.core.index import SqliteSessionStore
from session_browser.core.index import vectors as vec
from session_browser.core.index.semantic import UPDATING
from session_browser.core.search import hybrid

from .test_hybrid import FILLER, T0, TARGET, put

DAY = 86400.0


def wait_for(what: Callable[[], bool], timeout: float = 120.0) -> None:
    """Until ``what()`` holds (polled), failing after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def embedded(db: Path) -> dict[str, int]:
    """File -> messages embedded, as the vectors file says."""
    with closing(sqlite3.connect(vec.vectors_path(db))) as conn:
        return dict(conn.execute("SELECT file, messages FROM files"))


def settled(db: Path, files: int) -> bool:
    return not vec.updating(db) and len(embedded(db)) == files


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SqliteSessionStore]:
    monkeypatch.setenv(hybrid.ENV, "hybrid")
    d = tmp_path / "sessions"
    for i, texts in enumerate(FILLER):
        put(d, f"filler-{i}", texts, T0 + i * DAY)
    s = SqliteSessionStore(d, db_path=tmp_path / "index.db", reconcile="sync", vault=False)
    try:
        yield s
    finally:
        s.close()


def name(sid: str) -> str:
    return f"{paths.safe_id(sid)}.json"


def test_an_index_without_vectors_starts_nothing(store: SqliteSessionStore, tmp_path: Path) -> None:
    put(tmp_path / "sessions", "target", TARGET, T0)
    assert store.reconcile().added == 1
    assert not vec.vectors_path(store.db_path).exists()
    assert not vec.updating(store.db_path)


def test_vectors_follow_an_update_in_the_background(
    store: SqliteSessionStore, tmp_path: Path
) -> None:
    db = Path(store.db_path)
    vec.build_vectors(db, HashEmbedder(64))
    d = tmp_path / "sessions"
    # a build is running (this test holds it): the update's process waits behind it
    with vec._building(vec.vectors_path(db)):
        put(d, "target", TARGET, T0 + 3 * DAY)
        assert store.reconcile().added == 1
        # a search does not wait for the vectors: it answers, and says they lag
        found = store.search_ex("pharmacy", limit=5)
        assert "+hybrid" in found.mode and UPDATING in found.warnings
        status = vec.vectors_status(db)
        assert status is not None
        assert (status["sessions"], status["of_sessions"], status["updating"]) == (
            len(FILLER),
            len(FILLER) + 1,
            True,
        )
        assert name("target") not in embedded(db)
    wait_for(lambda: settled(db, len(FILLER) + 1))
    assert embedded(db)[name("target")] == len(TARGET)
    found = store.search_ex("pharmacy", limit=5)
    assert "+hybrid" in found.mode and UPDATING not in found.warnings
    # a grown session: its new turns follow; a deleted one: its vectors go
    put(d, "target", [*TARGET, "One more turn about the gym."], T0 + 3 * DAY)
    (d / name("filler-0")).unlink()
    report = store.reconcile()
    assert (report.updated, report.removed) == (1, 1)
    wait_for(lambda: settled(db, len(FILLER)) and embedded(db)[name("target")] > len(TARGET))
    assert name("filler-0") not in embedded(db)
    assert embedded(db)[name("target")] == len(TARGET) + 1


def test_vectors_of_an_older_layout_answer_lexically_until_built_again(
    store: SqliteSessionStore,
) -> None:
    db = Path(store.db_path)
    with closing(sqlite3.connect(vec.vectors_path(db))) as old:  # layout 1: no text hashes
        old.executescript(
            """
            CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE files(file TEXT PRIMARY KEY, size INTEGER, messages INTEGER);
            CREATE TABLE windows(file TEXT, pos INTEGER, first INTEGER, last INTEGER,
                vec BLOB, PRIMARY KEY(file, pos)) WITHOUT ROWID;
            INSERT INTO meta VALUES ('schema', '1'), ('model', 'hash-words-64'), ('dim', '64');
            """
        )
    found = store.search_ex("flexbox", limit=5)
    assert found.mode == "index" and any("another version" in w for w in found.warnings)
    # an update does not rebuild them behind the user's back (a whole store, niced)
    assert vec.follow(db)
    for child in vec._children:
        assert child.wait(120) == 0
    with closing(sqlite3.connect(vec.vectors_path(db))) as kept:
        assert dict(kept.execute("SELECT key, value FROM meta"))["schema"] == "1"
    log = Path(str(vec.vectors_path(db)) + ".log").read_text()
    assert "older layout: not updated" in log
    report = vec.build_vectors(db, HashEmbedder(64))
    assert report.sessions == len(FILLER) and report.embedded == len(FILLER)
    found = store.search_ex("flexbox", limit=5)
    assert "+hybrid" in found.mode and not found.warnings


def test_updates_while_the_process_starts_start_no_other(
    store: SqliteSessionStore, tmp_path: Path
) -> None:
    """The live refresh reconciles every second: the updates that come while the follow
    process starts (the interpreter, the model) must not each start one. At most two run at
    a time: one building, one waiting behind it."""
    db = Path(store.db_path)
    vec.build_vectors(db, HashEmbedder(64))
    put(tmp_path / "sessions", "target", TARGET, T0 + 3 * DAY)
    assert store.reconcile().added == 1  # (starts the first one)
    started = [vec.follow(db) for _ in range(8)]
    assert sum(started) <= 1, started
    wait_for(lambda: settled(db, len(FILLER) + 1))
    for child in vec._children:
        assert child.wait(120) == 0
