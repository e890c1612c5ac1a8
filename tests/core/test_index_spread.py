"""Results that are complete and honest: a long session never hides the others, counts say
when they are a bound, and an empty result says what emptied it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.index import SqliteSessionStore, plan
from session_browser.core.multi import StoreGroup
from session_browser.core.query import loosened
from session_browser.core.search import rank

from .test_index import put


@pytest.fixture
def d(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


def _long_and_short(d: Path, word: str, long_messages: int = 600) -> None:
    # The long session is the newest and mentions the word in every message: by message
    # recency alone it takes every candidate.
    for i in range(6):
        put(
            d,
            f"short{i}",
            [f"a note about {word} number {i}", "fine"],
            updated=f"2026-01-0{i + 1}T00:00:00+00:00",
            start=1_700_000_000.0 + i,
        )
    put(
        d,
        "long",
        [f"{word} again, step {j}" for j in range(long_messages)],
        updated="2026-02-01T00:00:00+00:00",
        start=1_800_000_000.0,
        gap=1.0,
    )


@pytest.mark.parametrize("limit", [5, 10, 50])
def test_a_long_session_never_hides_the_others(d: Path, tmp_path: Path, limit: int) -> None:
    _long_and_short(d, "python")
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        res = store.search_ex("python", limit=limit)
        ids = {h.session_id for h in res.hits}
        assert len(ids) == min(limit, 7)
        assert res.matched_sessions == 7 and res.matched_exact
        if limit >= 7:
            assert ids == {"long"} | {f"short{i}" for i in range(6)}


def test_a_long_session_never_hides_the_others_for_a_common_word(d: Path, tmp_path: Path) -> None:
    # More postings than RARE_DF: the path that takes the newest messages of common words.
    _long_and_short(d, "python", long_messages=plan.RARE_DF + 200)
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        with store._lock:
            db = store._conn()
            from session_browser.core.query import parse_query

            assert store._df(db, parse_query("python").terms[0]) > plan.RARE_DF
        ids = {h.session_id for h in store.search("python", limit=10)}
        assert ids == {"long"} | {f"short{i}" for i in range(6)}


def test_a_long_session_with_filters_and_every_term(d: Path, tmp_path: Path) -> None:
    for i in range(4):
        put(d, f"s{i}", ["billing migration plan", "ok"], start=1_700_000_000.0 + i)
    put(d, "long", ["billing migration again"] * 500, start=1_800_000_000.0, gap=1.0)
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        hits = store.search("billing migration role:user", limit=10)
        assert {h.session_id for h in hits} == {"long", "s0", "s1", "s2", "s3"}


def test_a_prefix_matching_more_postings_than_messages_still_finds(d: Path, tmp_path: Path) -> None:
    # "th*" adds up the counts of the, this, that...: more than there are messages. That
    # once made its weight negative, which read as "excluded": matched 3, shown 0.
    for i in range(3):
        put(d, f"s{i}", ["the thing is that this thought there"] * 3)
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        res = store.search_ex("th*", limit=5)
        assert res.matched_sessions == 3
        assert len(res.hits) == 3 and all(h.score > 0 for h in res.hits)


def test_loosened_queries() -> None:
    assert loosened("dual-write -stripe") == [("-stripe", "dual-write")]
    assert loosened('lorem role:assistant -"a b"') == [
        ('-"a b"', "lorem role:assistant"),
        ("role:assistant", 'lorem -"a b"'),
    ]
    assert loosened("plain words") == []
    assert loosened("role:user") == []  # nothing would be left to search


def test_an_empty_result_says_what_emptied_it(d: Path, tmp_path: Path) -> None:
    put(d, "a", ["dual-write to stripe and chargefox", "ok"])
    put(d, "b", ["lorem ipsum", "dolor"])
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        res = store.search_ex("dual-write -stripe")
        assert res.hits == []
        assert "nothing matches with -stripe; without it, 1 session matches" in res.warnings
        res = store.search_ex("role:assistant lorem")
        assert res.hits == []
        assert "nothing matches with role:assistant; without it, 1 session matches" in (
            res.warnings
        )
        # Nothing to say when nothing would match anyway, or when there were hits.
        assert not any("without it" in w for w in store.search_ex("xyzzy -lorem").warnings)
        assert not any("without it" in w for w in store.search_ex("lorem -stripe").warnings)
        group = StoreGroup([store])
        assert any(
            "-stripe" in w and "without it" in w
            for w in group.search_ex("dual-write -stripe").warnings
        )


def test_cli_says_what_emptied_the_result(d: Path) -> None:
    put(d, "a", ["dual-write to stripe and chargefox", "ok"])
    res = CliRunner().invoke(main, ["search", "dual-write -stripe", "--store", str(d)])
    assert res.exit_code == 1, res.output  # no session matches
    assert "nothing matches with -stripe; without it, 1 session matches" in res.output


def test_a_count_that_is_a_bound_says_so(
    d: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(12):
        put(d, f"s{i}", ["parcel tracking", "ok"])
    monkeypatch.setattr(plan, "COUNT_BUDGET", 5)
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        res = store.search_ex("parcel", limit=3)
        assert not res.matched_exact and res.matched_sessions >= 3
        assert res.as_dict()["matched_exact"] is False
        monkeypatch.setattr(plan, "COUNT_BUDGET", 3_000)
        store._df_cache.clear()
        res = store.search_ex("parcel", limit=3)
        assert res.matched_exact and res.matched_sessions == 12
    out = CliRunner().invoke(main, ["search", "parcel", "--store", str(d), "--json"])
    assert json.loads(out.output)["matched_exact"] is True


@pytest.mark.parametrize("query", ["python", "python tutorial", "the"])
def test_asking_for_more_than_the_candidate_bound_returns_that_many(
    d: Path, tmp_path: Path, query: str
) -> None:
    # 120 sessions match, each in many messages: asked for 110 (a page past the first
    # hundred), 110 come back, for a rare word, a pair and a very common word.
    for i in range(120):
        put(
            d,
            f"s{i}",
            [f"the python tutorial, part {j}" for j in range(12)],
            start=1_700_000_000.0 + i * 100,
            gap=1.0,
        )
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        res = store.search_ex(query, limit=110)
        assert len({h.session_id for h in res.hits}) == 110


def test_a_short_session_read_whole_answers_as_the_index_does(d: Path, tmp_path: Path) -> None:
    # Missing terms of a short session are looked for in its text, of a long one in the
    # index: both must say the same for words, prefixes, phrases (also across messages),
    # accents and casing.
    from session_browser.core.query import parse_query

    texts = ["Café au lait, S'il vous plaît", "the quick brown", "fox jumps", "x" * 30]
    put(d, "s", texts)
    queries = [
        "cafe",
        "CAFÉ",
        "caf*",
        "plait",
        '"quick brown"',
        '"brown fox"',
        "jump*",
        '"au lait s"',
        "xx*",
        "nope",
        '"the quick brown fox"',
        "il",
    ]
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store, store._lock:
        db = store._conn()
        sid, lo, hi, chars = db.execute(
            "SELECT sid, row_lo, row_hi, chars FROM sessions"
        ).fetchone()
        info = rank.SessionInfo(sid, "s", "s.json", None, False, False, None, lo, hi, chars)
        assert chars is not None and chars <= plan.SMALL_SESSION_CHARS
        terms = [parse_query(q).terms[0] for q in queries]
        by_text = store._session_holds(db, terms, range(len(terms)), info)
        by_index = {i for i, t in enumerate(terms) if store._session_has(db, t, lo, hi)}
    assert by_text == by_index
    assert by_text == {0, 1, 2, 3, 4, 6, 7, 8, 11}


def test_a_session_replaced_during_a_candidate_read_is_skipped_not_an_error(
    d: Path, tmp_path: Path
) -> None:
    # Each read of a search sees the index as it is then: a writer may replace a session
    # between the read that met it and the look-up of its first message.
    from session_browser.core.query import fts_expr, parse_query

    _long_and_short(d, "python", long_messages=3 * plan.PER_SESSION * 40)

    class Replaced:
        def __init__(self, db: object) -> None:
            self.db = db

        def __getattr__(self, name: str) -> object:  # the rest as the connection has it
            return getattr(self.db, name)

        def execute(self, sql: str, params: object = ()) -> object:
            if sql.startswith("SELECT row_lo FROM sessions"):
                sql, params = "SELECT row_lo FROM sessions WHERE sid = -1", ()
            return self.db.execute(sql, params)  # type: ignore[attr-defined]

    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store, store._lock:
        pq = parse_query("python")
        rows = store._fetch(Replaced(store._conn()), pq, fts_expr(pq.terms), None, 10)  # type: ignore[arg-type]
        assert {r[6] for r in rows} == {"long", "short5", "short4"}
