"""Reads done for several sessions or messages at once give what the one-at-a-time reads give:
coverage look-ups, candidate messages read in the index's own order, hits read ahead."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pytest

from session_browser.core.index import SqliteSessionStore, hits, plan
from session_browser.core.query import fts_expr, parse_query
from session_browser.core.search import rank

from .test_index import put


def _sessions(d: Path) -> None:
    # Each session holds the query words in different messages, some none, one long.
    put(d, "s1", ["alpha comes first", "then beta", "nothing here"])
    put(d, "s2", ["beta only", "and gamma-ray later", "alphabet is not alpha"])
    put(d, "s3", ["none of them", "still nothing"])
    put(d, "s4", [f"line {i} of a long one" for i in range(30)] + ["gamma at the end", "beta"])
    put(d, "s5", ["beta gamma together", "alpha"])


def _infos(store: SqliteSessionStore) -> list[rank.SessionInfo]:
    db = store._conn()
    return [
        rank.SessionInfo(sid, sess, f, w, bool(t), bool(m), lin, lo, hi, chars)
        for sid, sess, f, w, t, m, lin, lo, hi, chars in db.execute(
            "SELECT sid, session_id, file, when_, tagged, machine, lineage, row_lo, row_hi, "
            "chars FROM sessions ORDER BY session_id"
        )
    ]


@pytest.mark.parametrize("query", ["alpha beta gamma", '"beta gamma" alpha', "alph* gamma"])
def test_coverage_for_many_sessions_is_coverage_session_by_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, query: str
) -> None:
    d = tmp_path / "sessions"
    _sessions(d)
    # s4 is past the short-session size: its terms are asked of FTS5, the others' text read
    monkeypatch.setattr(plan, "SMALL_SESSION_CHARS", 200)
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        db = store._conn()
        terms = parse_query(query).terms
        infos = _infos(store)
        assert any(i.chars is not None and i.chars > 200 for i in infos)
        asks = [(list(range(len(terms))), info) for info in infos]
        asks.append(([], infos[0]))  # nothing asked: nothing held
        asks.append(([1], infos[1]))
        one_by_one = [store._session_holds(db, terms, which, info) for which, info in asks]
        assert store._sessions_hold(db, terms, asks) == one_by_one
        assert one_by_one[0] and one_by_one[-2] == set()  # the test sees holds and misses


def test_candidates_read_in_index_order_are_the_newest_whatever_the_count(tmp_path: Path) -> None:
    d = tmp_path / "sessions"
    for n in range(6):  # sessions with more matching messages than their share
        put(d, f"s{n}", [f"kiwi note {n} {j}" for j in range(12)], start=1_700_000_000.0 + n)
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        db = store._conn()
        pq = parse_query("kiwi")
        expr = fts_expr(pq.terms)
        for limit in (3, 10, 40):
            newest = store._fetch(db, pq, expr, None, limit, per_session=4)
            assert len(newest) == min(limit, 24)
            # a count that says everything fits in one read (here true or stale-low)
            for most in (0, 2 * limit):
                assert store._fetch(db, pq, expr, None, limit, per_session=4, most=most) == newest


def test_hits_read_ahead_are_the_hits_read_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = tmp_path / "sessions"
    _sessions(d)
    long = "alpha " + "filler " * (hits.WHOLE_CHARS // 6)
    put(d, "s6", [long, "beta", "gamma"])  # past WHOLE_CHARS: not read whole
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        ahead = [asdict(h) for h in store.search("alpha beta gamma", limit=10)]
        calls: list[int] = []
        real = hits.IndexHits._read_ahead

        def counted(self: hits.IndexHits, sids: list[int]) -> object:
            got = real(self, sids)
            calls.append(len(got))
            return got

        monkeypatch.setattr(hits.IndexHits, "_read_ahead", counted)
        assert [asdict(h) for h in store.search("alpha beta gamma", limit=10)] == ahead
        assert calls == [len(ahead)]
        monkeypatch.setattr(hits.IndexHits, "_read_ahead", lambda self, sids: {})
        assert [asdict(h) for h in store.search("alpha beta gamma", limit=10)] == ahead
        assert {h["session_id"] for h in ahead} >= {"s1", "s2", "s5", "s6"}
