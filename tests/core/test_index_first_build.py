"""A search during a first build answers from the part indexed so far plus the newest files
not indexed yet, counts a session once, and says how much of the store it searched."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from session_browser.core.index import SqliteSessionStore
from session_browser.core.multi import StoreGroup
from session_browser.core.notes import INDEXING, code_of

from .test_index import put

FILES = 1200  # batches of 500: the build pauses after 500 and after 1,000 files
WORD = "quokkafish"
T0 = 1_700_000_000


class Paused:
    """Holds a build after each batch it committed until the test lets it go on."""

    def __init__(self) -> None:
        self.at: list[int] = []
        self.reached = threading.Event()
        self.go = threading.Event()

    def __call__(self, done: int, total: int) -> None:
        if done == 0:  # the files are listed: no batch yet
            return
        self.at.append(done)
        self.reached.set()
        assert self.go.wait(30), "the test never let the build go on"
        self.go.clear()

    def wait(self) -> int:
        assert self.reached.wait(30), "the build never reached a batch"
        self.reached.clear()
        return self.at[-1]

    def release(self) -> None:
        self.go.set()


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    """1,200 sessions, file times one minute apart (a build indexes the oldest first). The
    word is only in an archived turn of the oldest session (indexed in the first batch), in
    session 800 (the second batch) and in the newest one (read by every search meanwhile)."""
    d = tmp_path / "sessions"
    for i in range(FILES):
        texts = [f"note {i} about the harbour", "a reply about tides"]
        archived = None
        if i == 0:
            archived = [f"the archived {WORD} turn", "an old answer"]
        elif i in (800, FILES - 1):
            texts = [f"a {WORD} at last {i}", "a reply"]
        path = put(d, f"s{i:04d}", texts, archived=archived)
        os.utime(path, (T0 + i * 60, T0 + i * 60))
    return d


@pytest.fixture
def index(store_dir: Path, tmp_path: Path) -> Iterator[SqliteSessionStore]:
    with SqliteSessionStore(store_dir, db_path=tmp_path / "i.sqlite3", reconcile="none") as st:
        yield st


def hit_ids(result: object) -> set[str]:
    return {h.session_id for h in getattr(result, "hits", [])}


def test_a_search_during_the_first_build_reads_the_indexed_part_and_the_newest_files(
    index: SqliteSessionStore, tmp_path: Path
) -> None:
    other_dir = tmp_path / "other"
    for i in range(10):
        put(other_dir, f"o{i}", [f"elsewhere {i}"])
    paused = Paused()
    with SqliteSessionStore(other_dir, db_path=tmp_path / "o.sqlite3") as other:
        both = StoreGroup([index, other])
        # Searched once before anything is indexed: the word is nowhere in the index yet.
        assert hit_ids(index.search_ex(WORD, limit=20)) == set()
        thread = threading.Thread(target=lambda: index.reconcile(progress=paused))
        thread.start()
        try:
            assert paused.wait() == 500
            assert index.indexing
            res = index.search_ex(WORD, limit=20)
            # the oldest session (indexed) and the newest (not indexed yet, read): not 800
            assert hit_ids(res) == {"s0000", "s1199"}
            assert res.mode == "index+scan"
            assert res.matched_sessions == 2 and not res.matched_exact
            assert res.searched == (600, FILES)  # 500 indexed + the newest 100 read
            notes = [w for w in res.warnings if code_of(w) == INDEXING]
            assert notes == ["searched 600 of 1,200 sessions; full results when the index is ready"]
            hit = next(h for h in res.hits if h.session_id == "s0000")
            assert hit.archived and WORD in hit.snippet  # the archived turn is the hit
            # A group counts the stores that are ready as searched whole.
            grouped = both.search_ex(WORD, limit=20)
            assert hit_ids(grouped) == {"s0000", "s1199"}
            assert grouped.searched == (610, FILES + 10)
            assert [w for w in grouped.warnings if code_of(w) == INDEXING] == [
                "searched 610 of 1,210 sessions; full results when the index is ready"
            ]
            assert grouped.as_dict()["searched"] == [610, FILES + 10]
            paused.release()

            assert paused.wait() == 1000
            res = index.search_ex(WORD, limit=20)
            assert hit_ids(res) == {"s0000", "s0800", "s1199"}
            assert res.matched_sessions == 3
            assert res.searched == (1100, FILES)
            paused.release()

            assert paused.wait() == FILES  # the last batch: every file is indexed
            res = index.search_ex(WORD, limit=20)
            assert hit_ids(res) == {"s0000", "s0800", "s1199"}
            assert res.searched is None
            paused.release()
        finally:
            paused.go.set()
            thread.join(60)
        assert not thread.is_alive()
        done = both.search_ex(WORD, limit=20)
        assert hit_ids(done) == {"s0000", "s0800", "s1199"}
        assert done.matched_sessions == 3 and done.matched_exact
        assert done.searched is None and done.mode == "index"
        assert not [w for w in done.warnings if code_of(w) == INDEXING]


def test_a_session_is_counted_once_while_its_file_moves_from_waiting_to_indexed(
    index: SqliteSessionStore,
) -> None:
    """Searches racing the build's commits: every search finds every indexed-or-newest hit,
    and never the same session twice (a file is in the snapshot or on the waiting list)."""
    stop = threading.Event()
    seen: list[tuple[list[str], tuple[int, int] | None]] = []
    failures: list[BaseException] = []

    def search() -> None:
        try:
            while not stop.is_set():
                res = index.search_ex(WORD, limit=20)
                seen.append(([h.session_id for h in res.hits], res.searched))
        except BaseException as exc:  # reported below
            failures.append(exc)

    searcher = threading.Thread(target=search)
    searcher.start()
    try:
        index.reconcile()
    finally:
        stop.set()
        searcher.join(60)
    assert not failures
    assert len(seen) >= 2
    found_old = False
    for ids, searched in seen:
        assert len(ids) == len(set(ids))  # never one session twice
        if searched is not None:
            assert searched[1] == FILES
        # once the oldest session is indexed, it is found by every later search
        assert "s0000" in ids or not found_old
        found_old = found_old or "s0000" in ids
    assert found_old
