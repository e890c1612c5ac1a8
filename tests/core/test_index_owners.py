"""Exact counts and candidates by the sessions' row ranges (no ``messages`` read) agree with
the join."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from unittest.mock import patch

from session_browser.core.index import SqliteSessionStore, plan
from session_browser.core.index.owners import owners_of, rowids
from session_browser.core.index.write import delete_rows
from session_browser.core.query import parse_query

WORDS = ("pelican", "filler", "heron", "egret", "turn")


def by_join(db: sqlite3.Connection, word: str) -> set[int]:
    return {
        r[0]
        for r in db.execute(
            "SELECT m.sid FROM fts JOIN messages m ON m.id = fts.rowid WHERE fts MATCH ?",
            (f'"{word}"',),
        )
    }


def first_by_join(db: sqlite3.Connection, word: str, first: int) -> set[int]:
    """The sessions of the first ``first`` matching messages, as a count over budget took
    them by the join."""
    return {
        r[0]
        for r in db.execute(
            "SELECT m.sid FROM fts JOIN messages m ON m.id = fts.rowid WHERE fts MATCH ? "
            "ORDER BY fts.rowid LIMIT ?",
            (f'"{word}"', first),
        )
    }


def check(store: SqliteSessionStore) -> None:
    db = store._conn()
    for word in WORDS:
        ranged = store._posting_sessions(db, f'"{word}"')
        assert ranged == by_join(db, word), word
        # a count over budget: the sessions of the first postings, the same way
        for first in (1, 2, 3, 5, 8):
            capped = store._posting_sessions(db, f'"{word}"', first)
            assert capped == first_by_join(db, word, first), (word, first)
        # the newest candidates, a share a session: the same rows as by the join
        pq = parse_query(word)
        for limit, per_session, most in ((1, 1, None), (3, 1, None), (4, 2, 1), (10, 8, 3)):
            with patch.object(plan, "newest_ids", wraps=plan.newest_ids) as spy:
                ranged_rows = store._fetch(db, pq, f'"{word}"', None, limit, per_session, most)
            # read by the ranges alone (one read, with an owner: no fall-back to the join)
            assert spy.call_count == 1 and spy.call_args.kwargs["owner"] is not None
            with patch.object(store._owners, "ranges", return_value=([], [])):  # no owner
                joined_rows = store._fetch(db, pq, f'"{word}"', None, limit, per_session, most)
            assert ranged_rows == joined_rows, (word, limit, per_session, most)


def test_ranges_count_what_the_join_counts_through_rewrites_kept_turns_and_deletes(
    tmp_path: Path,
) -> None:
    # a capped file drops its oldest turns at each write: the dropped ones stay in the
    # index under a kept version's name (a range with holes, later ranges above it)
    store = SqliteSessionStore(
        tmp_path / "sessions", retention="truncate", max_messages=4, vault=True
    )
    try:
        store.add_user_message("other", "the pelican went elsewhere, a heron stayed")
        for r in range(3):
            store.add_user_message("s1", f"pelican round {r}")
            for i in range(4):
                store.add_user_message("s1", f"filler turn {r} {i}")
            check(store)
        store.add_user_message("s2", "an egret and a heron")
        check(store)
        db = store._conn()
        kept = db.execute("SELECT count(*) FROM sessions WHERE file LIKE '%#v%'").fetchone()[0]
        assert kept >= 2
        assert store.search_ex("filler", limit=10).matched_sessions >= 1
        assert store.delete_session("other")
        check(store)  # the cached ranges are read again after this connection wrote
        assert store._posting_sessions(store._conn(), '"pelican"') == by_join(db, "pelican")
        assert store.search_ex("heron", limit=10).matched_sessions == 1
        store.add_user_message("s3", "a heron again")  # reuses the deleted rows' ids
        check(store)
        assert store.search_ex("heron", limit=10).matched_sessions == 2
        assert store.search_ex("heron -egret", limit=10).matched_sessions == 1
        # another connection's write: the ranges read before are stale, and are read again
        assert store._posting_sessions(store._conn(), '"heron"') == by_join(db, "heron")
        other = sqlite3.connect(store.db_path, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            assert delete_rows(other, "s3.json", fts=True)
            other.execute("COMMIT")
        finally:
            other.close()
        check(store)
        assert len(store._posting_sessions(store._conn(), '"heron"') or ()) == 1
        second = SqliteSessionStore(tmp_path / "sessions", reconcile="none")
        try:
            second.add_user_message("s4", "a heron at last")  # rows past every known range
        finally:
            second.close()
        check(store)
        assert len(store._posting_sessions(store._conn(), '"heron"') or ()) == 2
    finally:
        store.close()


def test_the_owner_of_a_row_is_the_latest_start_below_it() -> None:
    los, sids = [1, 5, 9], [10, 11, 12]
    assert owners_of([1, 2, 3, 9, 19, 20], los, sids) == {10, 12}
    assert owners_of([6], los, sids) == {11}
    assert owners_of([], los, sids) == set()
    assert owners_of([0, 6], los, sids) is None  # below every range: not ours to say
    # a kept version's range with holes (starts 2, ends 5), a later session starting in it
    assert owners_of([2, 3, 4, 5], [1, 2, 3], [1, 5, 6]) == {5, 6}


def test_rowids_read_what_sqlite_joined() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t(x)")
    db.executemany("INSERT INTO t VALUES (?)", [(n,) for n in range(3)])
    joined = db.execute("SELECT group_concat(rowid) FROM t").fetchone()[0]
    assert rowids(joined) == [1, 2, 3]
    assert rowids(db.execute("SELECT group_concat(rowid) FROM t WHERE 0").fetchone()[0]) == []
    assert rowids("") == [] and rowids("9007199254740993") == [9007199254740993]
