"""The SQLite index: same shapes as the JSON store, classic equality, freshness, read-only
browsing, relevance, query filters, fuzzy help, fallbacks and background reconcile."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_browser.core import paths
from session_browser.core.index import (
    QueryError,
    SqliteSessionStore,
    default_db_path,
    machine_paced,
)
from session_browser.core.multi import StoreGroup
from session_browser.core.store import DefaultSessionStore
from session_browser.core.stores import open_stores

HOUR = 3600.0
T0 = 1_760_000_000.0


def msg(role: str, content: Any, ts: float | None = None) -> dict[str, Any]:
    m: dict[str, Any] = {"role": role, "content": content, "metadata": {}}
    if ts is not None:
        m["timestamp"] = ts
    return m


def put(
    d: Path,
    sid: str,
    texts: list[str],
    *,
    archived: list[str] | None = None,
    updated: str = "2026-01-01T00:00:00+00:00",
    start: float = T0,
    gap: float = HOUR,
    meta: dict[str, Any] | None = None,
    **top: Any,
) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    roles = ["user", "assistant"]
    arch = archived or []
    data: dict[str, Any] = {
        "session_id": sid,
        "messages": [
            msg(roles[i % 2], t, start + (len(arch) + i) * gap) for i, t in enumerate(texts)
        ],
        "created_at": "2025-12-01T00:00:00+00:00",
        "updated_at": updated,
        "agent_name": None,
        "user_id": None,
        "metadata": meta or {},
        "archived_messages": [msg(roles[i % 2], t, start + i * gap) for i, t in enumerate(arch)],
    }
    data.update(top)
    path = d / f"{paths.safe_id(sid)}.json"
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def d(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


@pytest.fixture
def populated(d: Path) -> Path:
    put(d, "hotel", ["We booked the Grand Plaza hotel in Lisbon", "Great, the hotel is close"],
        updated="2026-01-03T00:00:00+00:00")
    put(d, "flight", ["Find a flight to Lisbon on Friday", "The flight leaves at noon"],
        updated="2026-01-02T00:00:00+00:00")
    put(d, "old", ["an old chat about pelicans"], archived=["the archived pelican quokka turn"],
        updated="2025-06-01T00:00:00+00:00")
    put(d, "cafe", ["Le café était délicieux", "Oui, très bon"],
        updated="2026-01-04T00:00:00+00:00")
    return d


def snapshot(d: Path) -> dict[str, tuple[str, int, int, int]]:
    out = {}
    for p in sorted(d.iterdir()):
        st = p.stat()
        out[p.name] = (hashlib.sha256(p.read_bytes()).hexdigest(), st.st_ino, st.st_mtime_ns,
                       st.st_mode)
    return out


@pytest.fixture
def sq(populated: Path, tmp_path: Path) -> Iterator[SqliteSessionStore]:
    with SqliteSessionStore(populated, db_path=tmp_path / "idx.sqlite3") as store:
        yield store


# ---------------------------------------------------------------- same shapes as the core


@pytest.fixture(params=["json", "sqlite"])
def any_store(request: pytest.FixtureRequest, populated: Path,
              tmp_path: Path) -> Iterator[DefaultSessionStore]:
    if request.param == "json":
        yield DefaultSessionStore(populated)
    else:
        with SqliteSessionStore(populated, db_path=tmp_path / "x.sqlite3") as store:
            yield store


def test_search_shape(any_store: DefaultSessionStore) -> None:
    hits = any_store.search("lisbon", limit=5, window=1)
    assert {h.session_id for h in hits} == {"hotel", "flight"}
    for hit in hits:
        shape = hit.as_dict()
        assert list(shape)[:7] == ["session_id", "title", "when", "snippet", "score",
                                   "anchor_index", "messages"]
        assert "lisbon" in hit.snippet.lower()
        anchor = [m for m in hit.messages if m["index"] == hit.anchor_index]
        assert anchor and "lisbon" in anchor[0]["content"].lower()
        assert set(hit.messages[0]) == {"index", "role", "content", "timestamp", "archived"}


def test_archived_hit_anchors_in_projection(any_store: DefaultSessionStore) -> None:
    hits = any_store.search("quokka")
    assert [h.session_id for h in hits] == ["old"]
    assert hits[0].anchor_index == 0 and hits[0].archived


def test_window_and_recent(any_store: DefaultSessionStore) -> None:
    win = any_store.window("old", 0, window=1)
    assert [m["index"] for m in win] == [0, 1]
    assert win[0]["archived"] is True
    recent = any_store.recent(limit=3)
    assert [s.session_id for s in recent] == ["cafe", "hotel", "flight"]
    assert recent[0].title.startswith("Le café")
    old = next(s for s in any_store.summaries() if s.session_id == "old")
    assert (old.message_count, old.archived_count) == (1, 1)


def test_empty_and_zero_limit(any_store: DefaultSessionStore) -> None:
    assert any_store.search("", limit=5) == []
    assert any_store.search("lisbon", limit=0) == []
    assert any_store.recent(limit=0) == []


# ---------------------------------------------------------------- classic equality


WORDS = ("hotel", "flight", "lisbon", "book", "the", "zebra", "café", "noon", "friday",
         "pelican", "plaza", "tea", "x", "grand hotel", "Hotel Lisbon", "e", "at noon")


def test_classic_equals_the_core_on_a_generated_store(d: Path, tmp_path: Path) -> None:
    import random

    rng = random.Random(3)
    vocab = ["hotel", "flight", "lisbon", "book", "the", "zebra", "café", "noon", "friday",
             "pelican", "plaza", "tea", "grand", "at", "room", "quiet"]
    for i in range(60):
        texts = [" ".join(rng.choice(vocab) for _ in range(rng.randint(2, 9)))
                 for _ in range(rng.randint(1, 6))]
        arch = [" ".join(rng.choice(vocab) for _ in range(4))] if i % 5 == 0 else None
        meta = {"lineage_id": f"L{i % 7}"} if i % 4 == 0 else {}
        if i % 9 == 0:
            meta["source"] = "cron"
        put(d, f"s{i:03d}", texts, archived=arch, meta=meta,
            updated=f"2026-01-{1 + i % 28:02d}T00:00:00+00:00",
            gap=HOUR if i % 6 else 10.0)
    core = DefaultSessionStore(d)
    with SqliteSessionStore(d, db_path=tmp_path / "c.sqlite3") as sq:
        for q in WORDS:
            for limit in (3, 10, 100):
                want = core.search(q, limit=limit, window=2)
                got = sq.search(q, limit=limit, window=2, ranking="classic")
                assert [(h.session_id, h.score, h.anchor_index, h.folded) for h in got] == [
                    (h.session_id, h.score, h.anchor_index, h.folded) for h in want
                ], q
                assert [h.messages for h in got] == [h.messages for h in want]


def _classic_keys(store: DefaultSessionStore, q: str, **kw: Any) -> list[tuple[str, float, int]]:
    return [(h.session_id, h.score, h.anchor_index) for h in store.search(q, limit=50, **kw)]


def test_classic_folds_case_like_the_core_beyond_ascii(d: Path, tmp_path: Path) -> None:
    # str.lower() turns the Kelvin sign into "k" and a dotted capital I into "i" + U+0307;
    # SQLite's LIKE folds ASCII only, so the index must still admit these sessions.
    put(d, "a", ["temperature 5 \u212aelvin reached"], updated="2026-01-01T00:00:00+00:00")
    put(d, "b", ["\u0130stanbul office"], updated="2026-01-02T00:00:00+00:00")
    put(d, "c", ["plain kelvin"], updated="2026-01-03T00:00:00+00:00")
    core = DefaultSessionStore(d)
    with SqliteSessionStore(d, db_path=tmp_path / "k.sqlite3") as sq:
        assert sq.has_fts
        for q in ("kelvin", "KELVIN", "5 kelvin", "istanbul", "stanbul", "i", "office"):
            assert _classic_keys(sq, q, ranking="classic") == _classic_keys(core, q), q
        assert [h.session_id for h in sq.search("kelvin", ranking="classic")] == ["c", "a"]
        assert [h.session_id for h in sq.search("i", ranking="classic")] == ["c", "b", "a"]


def test_the_non_ascii_lowercase_table_is_complete() -> None:
    import sys

    from session_browser.core.index import _LOWERS_TO_ASCII

    found = {
        (chr(i), "".join(c for c in chr(i).lower() if c.isascii()))
        for i in range(128, sys.maxunicode + 1)
        if any(c.isascii() for c in chr(i).lower())
    }
    assert found == set(_LOWERS_TO_ASCII)


_TRICKY = st.text(alphabet="kKiIsS\u212a\u0130\u017f\u0131 e\u0307x", max_size=8)
# Mostly ASCII queries: those are the ones the index pre-filters (others are scanned).
_QUERY = st.one_of(st.text(alphabet="kKiIsS ex", min_size=1, max_size=3), _TRICKY)


@settings(max_examples=40, deadline=None)
@given(texts=st.lists(st.lists(_TRICKY, min_size=1, max_size=3), min_size=1, max_size=4),
       query=_QUERY)
def test_classic_equals_the_core_over_tricky_case(texts: list[list[str]], query: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "s"
        for i, msgs in enumerate(texts):
            put(d, f"s{i}", msgs, updated=f"2026-01-{1 + i:02d}T00:00:00+00:00")
        core = DefaultSessionStore(d)
        with SqliteSessionStore(d, db_path=Path(tmp) / "h.sqlite3") as sq:
            assert _classic_keys(sq, query, ranking="classic") == _classic_keys(core, query)


def test_an_oversized_file_is_skipped_not_read(populated: Path, tmp_path: Path) -> None:
    from session_browser.core.files import MAX_SESSION_BYTES

    huge = populated / "huge.json"
    with open(huge, "wb") as fh:  # sparse: costs no disk, but is over the limit
        fh.truncate(MAX_SESSION_BYTES + 1)
    with SqliteSessionStore(populated, db_path=tmp_path / "big.sqlite3") as store:
        report = store.last_report
        assert report is not None
        assert [name for name, _ in report.skipped] == ["huge.json"]
        assert "limit" in report.skipped[0][1]
        assert {h.session_id for h in store.search("lisbon")} >= {"hotel", "flight"}
        assert store.search("lisbon", ranking="classic")
    assert huge.stat().st_size == MAX_SESSION_BYTES + 1


def test_a_failed_schema_check_closes_its_connection(
    d: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[sqlite3.Connection] = []

    def failing(_self: SqliteSessionStore, db: sqlite3.Connection) -> bool:
        opened.append(db)
        raise RuntimeError("schema check failed")

    monkeypatch.setattr(SqliteSessionStore, "_schema_ok", failing)
    put(d, "a", ["hello"])
    with pytest.raises(RuntimeError, match="schema check failed"):
        SqliteSessionStore(d, db_path=tmp_path / "f.sqlite3")
    assert len(opened) == 1
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        opened[0].execute("SELECT 1")


def test_open_stores_closes_the_opened_ones_when_a_later_one_fails(
    d: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from session_browser.core import open as opener

    put(d, "a", ["hello"])
    other = tmp_path / "other"
    put(other, "b", ["world"])
    real_open = opener.open_spec
    opened: list[Any] = []

    def open_then_fail(spec: opener.StoreSpec, **kw: Any) -> Any:
        if opened:
            raise OSError("the second store cannot be opened")
        opened.append(real_open(spec, **kw))
        return opened[-1]

    monkeypatch.setattr(opener, "open_spec", open_then_fail)
    with pytest.raises(OSError, match="second store"):
        opener.open_stores([d, other], indexed=True, reconcile="background")
    first = opened[0]
    assert isinstance(first, SqliteSessionStore)
    assert first._db is None  # closed, and its background reconcile stopped
    assert first._thread is None or not first._thread.is_alive()


# ---------------------------------------------------------------- where the index lives


def test_default_db_path_is_in_cache_dir(populated: Path) -> None:
    before = snapshot(populated)
    with SqliteSessionStore(populated) as store:
        db = Path(store.db_path)
        assert db == default_db_path(populated)
        assert db.is_relative_to(paths.cache_dir())
        assert db.exists()
        assert store.search("pelicans")
    assert snapshot(populated) == before


def test_memory_db(populated: Path) -> None:
    with SqliteSessionStore(populated, db_path=":memory:") as store:
        assert [h.session_id for h in store.search("quokka")] == ["old"]
        store.add_user_message("new", "a walrus appears")
        assert [h.session_id for h in store.search("walrus")] == ["new"]


def test_browsing_never_writes_in_session_dir(populated: Path, tmp_path: Path) -> None:
    (populated / "broken.json").write_bytes(b'{"session_id": "broken", "messages": [')
    before = snapshot(populated)
    with SqliteSessionStore(populated, db_path=tmp_path / "ro.sqlite3") as store:
        store.search("lisbon")
        store.search_ex("hotl")
        store.search("lisbon", ranking="classic")
        store.recent(limit=5)
        store.browse(text="x")
        store.count()
        store.window("hotel", 1)
        store.reconcile()
        store.status()
    with SqliteSessionStore(populated, db_path=tmp_path / "bg.sqlite3",
                            reconcile="background") as store:
        store.search_ex("lisbon")
        assert store._thread is not None
        store._thread.join()
    assert snapshot(populated) == before


# ---------------------------------------------------------------- freshness


def test_outside_changes_are_picked_up(populated: Path, tmp_path: Path) -> None:
    db = tmp_path / "f.sqlite3"
    with SqliteSessionStore(populated, db_path=db, vault=True) as store:
        assert store.search("walrus") == []
        put(populated, "added", ["a walrus on the beach"])
        put(populated, "flight", ["the flight was cancelled by a walrus"],
            updated="2026-01-05T00:00:00+00:00")
        os.unlink(populated / "hotel.json")
        bad = populated / "cafe.json"
        corrupt = b'{"session_id": "cafe", "messages": [{"role": "us'
        bad.write_bytes(corrupt)
        report = store.reconcile()
        assert (report.added, report.updated, report.removed) == (1, 1, 1)
        assert [name for name, _ in report.skipped] == ["cafe.json"]
        assert "not valid JSON" in report.skipped[0][1]
        assert {h.session_id for h in store.search("walrus")} == {"added", "flight"}
        # What the rewrite, the deletion and the corruption took stays findable from the
        # vault's copies, marked as such (tests/core/test_vault_feed.py).
        lisbon = store.search("lisbon")
        assert {h.session_id for h in lisbon} == {"flight", "hotel"}
        kept = {h.session_id: h.kept or "" for h in lisbon}
        assert "turns dropped from" in kept["flight"]
        assert kept["hotel"].startswith("deleted from")
        assert all(h.kept for h in store.search("café"))
        assert bad.read_bytes() == corrupt  # never modified
        again = store.reconcile()
        assert (again.added, again.updated, again.removed) == (0, 0, 0)
        assert [name for name, _ in again.skipped] == ["cafe.json"]
        assert store.status()["skipped"][0]["file"] == "cafe.json"
    with SqliteSessionStore(populated, db_path=db) as reopened:  # reconciles on open
        assert reopened.last_report is not None and reopened.last_report.unchanged == 3
        assert {h.session_id for h in reopened.search("walrus")} == {"added", "flight"}


def test_writes_through_the_store_update_the_index(populated: Path, tmp_path: Path) -> None:
    with SqliteSessionStore(populated, db_path=tmp_path / "w.sqlite3", reconcile="none") as st:
        st.reconcile()
        st.add_user_message("hotel", "also a narwhal sighting")
        hits = st.search("narwhal")
        assert [h.session_id for h in hits] == ["hotel"]
        assert hits[0].anchor_index == 2
        st.rename_session("hotel", "Narwhal trip")
        assert st.recent(limit=1)[0].title == "Narwhal trip"
        st.delete_session("hotel")
        assert st.search("narwhal") == []
        assert st.count() == 3
        # Nothing left for a reconcile to do: the writes kept the index in step.
        report = st.reconcile()
        assert (report.added, report.updated, report.removed) == (0, 0, 0)


# ---------------------------------------------------------------- relevance


def test_relevance_explains_and_ranks(sq: SqliteSessionStore) -> None:
    hits = sq.search("grand plaza hotel")
    assert hits[0].session_id == "hotel"
    ex = hits[0].explain
    assert ex["ranking"] == "relevance"
    assert set(ex["terms"]) == {"grand", "plaza", "hotel"}
    assert ex["phrase"] is True and ex["all_terms"] is True
    assert ex["bm25"] > 0 and ex["demotion"] == 1.0


def test_diacritics_and_case_fold(sq: SqliteSessionStore) -> None:
    assert [h.session_id for h in sq.search("CAFE etait")] == ["cafe"]


def test_phrase_exclusion_prefix(sq: SqliteSessionStore) -> None:
    assert [h.session_id for h in sq.search('"flight leaves"')] == ["flight"]
    assert sq.search('"leaves flight"') == []
    # -word drops the whole session, even when the word is in another message.
    assert [h.session_id for h in sq.search("lisbon -noon")] == ["hotel"]
    assert {h.session_id for h in sq.search("pelic*")} == {"old"}


def test_filters(sq: SqliteSessionStore) -> None:
    assert [h.session_id for h in sq.search("hotel role:assistant")] == ["hotel"]
    assert sq.search("lisbon role:assistant") == []
    assert [h.session_id for h in sq.search("pelican archived:yes")] == ["old"]
    assert [h.session_id for h in sq.search("pelicans archived:no")] == ["old"]
    assert sq.search("quokka archived:no") == []
    assert [h.session_id for h in sq.search("lisbon session:flight")] == ["flight"]
    day = "2025-10-09"  # T0 is 2025-10-09
    assert {h.session_id for h in sq.search(f"lisbon since:{day}")} == {"hotel", "flight"}
    assert sq.search("lisbon until:2025-01-01") == []
    with pytest.raises(QueryError, match="role"):
        sq.search("lisbon role:robot")
    result = sq.search_ex("lisbon role:robot")
    assert result.error and "role" in result.error and result.hits == []


def test_source_and_agent_filters(d: Path, tmp_path: Path) -> None:
    put(d, "a", ["deploy the lighthouse"], source="cli", agent_name="Builder")
    put(d, "b", ["deploy the lighthouse"], meta={"source": "web"})
    with SqliteSessionStore(d, db_path=tmp_path / "s.sqlite3") as st:
        assert [h.session_id for h in st.search("lighthouse source:cli")] == ["a"]
        assert [h.session_id for h in st.search("lighthouse source:web")] == ["b"]
        assert [h.session_id for h in st.search('lighthouse agent:"builder"')] == ["a"]
        assert st.search("lighthouse agent:nobody") == []


HOSTILE = [
    '"', '""', "'", "-", "*", "**", ":", "()", "(", ")", "NEAR", "NEAR(a b, 2)", "a AND",
    "OR", "NOT", "AND OR NOT", "a:b:c", "rolex:user", "^", "{a}", "[x]", "col:lisbon",
    "text:lisbon", "rank:1", "fts MATCH x", "'; DROP TABLE sessions; --", "%", "_", "\\",
    "lisbon*", "*lisbon", "\"lisbon", "lisbon\"", "-lisbon", "--lisbon", "-\"",
    "ünïcödé", "東京 ホテル", "🙂🏨", "\x00", "\x1b[31mred", "\u202e", "a" * 10_000,
    "lisbon " * 1500, "x" * 300,
]


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_queries_never_error(sq: SqliteSessionStore, query: str) -> None:
    for ranking in ("relevance", "classic"):
        result = sq.search_ex(query, ranking=ranking)
        assert result.error is None
        assert isinstance(result.hits, list)
    assert isinstance(sq.search(query), list)
    assert sq.count() == 4  # the tables are intact


def test_fuzzy_pass(sq: SqliteSessionStore) -> None:
    result = sq.search_ex("lisbom")
    assert result.fuzzy
    assert {h.session_id for h in result.hits} == {"hotel", "flight"}
    assert any("lisbom → lisbon" in w for w in result.warnings)
    exact = sq.search_ex("lisbon")
    assert not exact.fuzzy
    assert sq.search_ex("qqqqzzzz").hits == []


def test_automated_demotion_only_for_really_automated(d: Path, tmp_path: Path) -> None:
    text = ["the solar inverter report", "inverter numbers look fine"] * 5
    put(d, "chat", text, gap=30.0, updated="2026-01-01T00:00:00+00:00")  # quick human chat
    put(d, "bot", text, gap=2.0, updated="2026-01-01T00:00:00+00:00")  # machine-paced
    put(d, "cron", text, meta={"source": "cron"}, updated="2026-01-01T00:00:00+00:00")
    with SqliteSessionStore(d, db_path=tmp_path / "a.sqlite3") as st:
        hits = {h.session_id: h for h in st.search("inverter", limit=5)}
        assert hits["chat"].explain["demotion"] == 1.0 and not hits["chat"].automated
        assert hits["bot"].explain["demotion"] == 0.25 and hits["bot"].automated
        assert hits["cron"].explain["automated"] == "tagged"
        assert hits["chat"].score == pytest.approx(hits["bot"].score * 4, rel=2e-2)
        # The core's documented rule flags the quick chat (classic keeps it).
        classic = {h.session_id: h for h in st.search("inverter", ranking="classic")}
        assert classic["chat"].automated


def test_machine_paced_rule() -> None:
    fast = [msg("user", "x", T0 + i * 3) for i in range(10)]
    human = [msg("user" if i % 2 else "assistant", "x", T0 + i * (3 if i % 2 else 40))
             for i in range(10)]
    assert machine_paced(fast)
    assert not machine_paced(human)
    assert not machine_paced(fast[:5])
    assert not machine_paced([msg("user", "x", T0) for _ in range(10)])  # one bulk write


def test_lineage_folds_continuations(d: Path, tmp_path: Path) -> None:
    put(d, "p1", ["the kraken migration plan"], meta={"lineage_id": "K"},
        updated="2026-01-01T00:00:00+00:00")
    put(d, "p2", ["the kraken migration plan continues with kraken"],
        meta={"lineage_id": "K"}, updated="2026-01-02T00:00:00+00:00")
    put(d, "other", ["kraken"], updated="2026-01-03T00:00:00+00:00")
    with SqliteSessionStore(d, db_path=tmp_path / "l.sqlite3") as st:
        hits = st.search("kraken migration", limit=5)
        ids = [h.session_id for h in hits]
        assert len([i for i in ids if i in ("p1", "p2")]) == 1
        kept = next(h for h in hits if h.session_id in ("p1", "p2"))
        assert kept.folded and kept.explain["folded"] == kept.folded


def test_common_words_still_answer(d: Path, tmp_path: Path) -> None:
    for i in range(80):
        put(d, f"c{i}", [f"the the and of to {'zyzzyva' if i == 7 else 'thing'} number {i}"],
            updated=f"2026-01-{1 + i % 28:02d}T00:00:00+00:00")
    with SqliteSessionStore(d, db_path=tmp_path / "cw.sqlite3") as st:
        assert [h.session_id for h in st.search("the zyzzyva")][:1] == ["c7"]
        assert len(st.search("the and", limit=10)) == 10
        result = st.search_ex("the")
        assert result.matched_sessions == 80


def test_filter_only_query(sq: SqliteSessionStore) -> None:
    hits = sq.search("session:old", limit=5)
    assert [h.session_id for h in hits] == ["old"]
    assert sq.search("archived:yes", limit=5)[0].session_id == "old"


def test_filter_only_lists_every_session_by_recency(d: Path, tmp_path: Path) -> None:
    # One session with thousands of matching messages must not crowd out the others.
    put(d, "huge", [f"chatter line {i}" for i in range(3000)], start=T0, gap=1.0,
        updated="2026-01-01T00:00:00+00:00")
    for i in range(12):
        put(d, f"s{i}", ["hello", "reply", "later"], start=T0 + (i + 1) * 86400.0,
            updated=f"2026-01-{2 + i:02d}T00:00:00+00:00")
    put(d, "gone", ["forbidden word", "reply"], start=T0 + 20 * 86400.0)
    with SqliteSessionStore(d, db_path=tmp_path / "fo.sqlite3") as st:
        result = st.search_ex("role:user", limit=20)
        assert result.matched_sessions == 14
        ids = [h.session_id for h in result.hits]
        assert ids == ["gone", *[f"s{i}" for i in reversed(range(12))], "huge"]
        assert [h.score for h in result.hits] == sorted((h.score for h in result.hits),
                                                       reverse=True)
        # anchored at the latest matching message (user turns are the even ones)
        by_id = {h.session_id: h for h in result.hits}
        assert by_id["huge"].anchor_index == 2998
        assert by_id["s3"].anchor_index == 2
        assert by_id["huge"].explain["order"] == "recency"
        since = st.search_ex(f"since:{_day(T0 + 6.5 * 86400.0)}", limit=3)
        assert since.matched_sessions == 8  # s5..s11 and gone
        assert [h.session_id for h in since.hits] == ["gone", "s11", "s10"]
        until = st.search_ex(f"until:{_day(T0)}", limit=5)  # the day, inclusive
        assert [h.session_id for h in until.hits] == ["huge"]
        assert until.hits[0].anchor_index == 2999
        excluded = st.search_ex("role:user -forbidden", limit=20)
        assert excluded.matched_sessions == 13
        assert "gone" not in [h.session_id for h in excluded.hits]


def _day(ts: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d")


def test_common_words_alone_do_not_make_a_hit(d: Path, tmp_path: Path) -> None:
    put(d, "billing", ["we moved the billing data", "the migration plan is set"],
        updated="2026-01-02T00:00:00+00:00")
    put(d, "chatty", [f"what did we say about the thing {i}" for i in range(400)],
        updated="2026-01-05T00:00:00+00:00")
    for i in range(6):
        put(d, f"o{i}", [f"what about the weather {i}"], updated="2026-01-03T00:00:00+00:00")
    put(d, "other", ["a migration of birds"], updated="2026-01-04T00:00:00+00:00")
    with SqliteSessionStore(d, db_path=tmp_path / "sw.sqlite3") as st:
        result = st.search_ex("what did we decide about the billing migration", limit=10)
        ids = [h.session_id for h in result.hits]
        assert ids[0] == "billing"
        assert set(ids) == {"billing", "other"}
        assert result.matched_sessions == 2
        # no message holds every word: ranked by session recall, stop and question words aside
        explain = result.hits[0].explain
        assert explain["session_recall"] is not None and "the" not in explain["terms"]
        # a query of common words only still answers
        assert "chatty" in [h.session_id for h in st.search("what about the", limit=10)]


# ---------------------------------------------------------------- browse


def test_browse_and_count(d: Path, tmp_path: Path) -> None:
    for i in range(25):
        put(d, f"s{i:02d}", [f"talk {i}" + " pad" * i], meta={"title": f"Topic {i % 5}"},
            updated=f"2026-01-{1 + i:02d}T00:00:00+00:00")
    with SqliteSessionStore(d, db_path=tmp_path / "b.sqlite3") as st:
        assert st.count() == 25
        page = st.browse(offset=0, limit=10)
        assert [s.session_id for s in page] == [f"s{i:02d}" for i in range(24, 14, -1)]
        page2 = st.browse(offset=10, limit=10)
        assert page2[0].session_id == "s14"
        assert st.browse(sort="size", limit=1)[0].session_id == "s24"
        assert st.count(text="topic 3") == 5
        assert {s.session_id for s in st.browse(text="TOPIC 3")} == {
            "s03", "s08", "s13", "s18", "s23"}
        assert st.count(text="S1") == 10  # ids too
        assert st.count(text="%") == 0 and st.count(text="_") == 0
        with pytest.raises(ValueError):
            st.browse(sort="bogus")


# ---------------------------------------------------------------- fallbacks


def test_like_fallback(populated: Path, tmp_path: Path) -> None:
    with SqliteSessionStore(populated, db_path=tmp_path / "like.sqlite3", fts=False) as st:
        assert not st.has_fts
        result = st.search_ex("lisbon -noon")
        assert result.mode == "like"
        assert [h.session_id for h in result.hits] == ["hotel"]
        assert [h.session_id for h in st.search("cafe")] == ["cafe"]
        assert [h.session_id for h in st.search('"flight leaves"')] == ["flight"]
        for q in HOSTILE[:30]:
            assert st.search_ex(q).error is None
    # The same file opened with FTS wanted is rebuilt as an FTS index.
    with SqliteSessionStore(populated, db_path=tmp_path / "like.sqlite3") as st:
        assert st.has_fts and st.search_ex("lisbon").mode == "index"


def test_corrupt_db_file_is_rebuilt(populated: Path, tmp_path: Path) -> None:
    db = tmp_path / "bad.sqlite3"
    db.write_bytes(b"this is not a database at all" * 200)
    with SqliteSessionStore(populated, db_path=db) as st:
        assert st.broken is None
        assert [h.session_id for h in st.search("quokka")] == ["old"]
    with sqlite3.connect(db) as check:
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_old_schema_version_is_rebuilt(populated: Path, tmp_path: Path) -> None:
    db = tmp_path / "v.sqlite3"
    with sqlite3.connect(db) as old:
        old.execute("CREATE TABLE sessions(x)")
        old.execute("PRAGMA user_version=1")
    with SqliteSessionStore(populated, db_path=db) as st:
        assert [h.session_id for h in st.search("quokka")] == ["old"]


def test_titles_stored_by_an_older_version_are_recomputed(d: Path, tmp_path: Path) -> None:
    put(d, "chat", ["how do I rotate a PDF", "like this"], agent_name="chit-chat partner")
    db = tmp_path / "t.sqlite3"
    with SqliteSessionStore(d, db_path=db) as st:
        [summary] = st.recent(limit=5)
        assert (summary.display_title, summary.agent) == (
            "how do I rotate a PDF",
            "chit-chat partner",
        )
        assert summary.title == "chit-chat partner"  # praisonaiagents' rule: the agent name
    with sqlite3.connect(db) as old:  # what version 8 held: no praisonaiagents title
        old.execute("UPDATE sessions SET title='stale', peer_title=NULL")
        old.execute("PRAGMA user_version=8")
    with SqliteSessionStore(d, db_path=db) as st:
        [summary] = st.recent(limit=5)
        assert (summary.title, summary.display_title) == (
            "chit-chat partner",
            "how do I rotate a PDF",
        )
        [hit] = st.search("rotate")
        assert (hit.title, hit.display_title, hit.agent) == (
            "chit-chat partner",
            "how do I rotate a PDF",
            "chit-chat partner",
        )


def test_unusable_db_falls_back_to_scan(populated: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with SqliteSessionStore(populated, db_path=blocker / "sub" / "x.sqlite3") as st:
        assert st.broken
        result = st.search_ex("quokka")
        assert result.mode == "scan"
        assert result.warnings and "searching the files" in result.warnings[0]
        assert [h.session_id for h in result.hits] == ["old"]
        assert [s.session_id for s in st.recent(limit=1)] == ["cafe"]
        assert st.count() == 4


# ---------------------------------------------------------------- background reconcile


def test_background_reconcile_answers_meanwhile(d: Path, tmp_path: Path) -> None:
    for i in range(1200):
        put(d, f"b{i:04d}", [f"message number {i} about topic{i % 10}"],
            updated=f"2026-01-{1 + i % 28:02d}T00:00:00+00:00")
    put(d, "needle", ["the unmistakable aardvark"], updated="2026-02-01T00:00:00+00:00")
    seen: list[tuple[int, int]] = []
    gate = threading.Event()
    release = threading.Event()

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        if done and not gate.is_set():
            gate.set()
            release.wait(10)

    with SqliteSessionStore(d, db_path=tmp_path / "bg.sqlite3", reconcile="none") as st:
        thread = threading.Thread(target=lambda: st.reconcile(progress=progress))
        thread.start()
        assert gate.wait(10)
        assert st.indexing
        done, total = st.progress
        assert 0 < done < total == 1201
        result = st.search_ex("aardvark")
        assert result.mode == "index+scan"
        assert [h.session_id for h in result.hits] == ["needle"]
        assert result.progress == (done, total)
        release.set()
        thread.join()
        assert not st.indexing
        assert seen[-1] == (1201, 1201)
        after = st.search_ex("aardvark")
        assert after.mode == "index" and [h.session_id for h in after.hits] == ["needle"]


def test_start_reconcile_thread(populated: Path, tmp_path: Path) -> None:
    with SqliteSessionStore(populated, db_path=tmp_path / "t.sqlite3", reconcile="none") as st:
        thread = st.start_reconcile()
        thread.join(30)
        assert not thread.is_alive()
        assert st.progress == (4, 4)
        assert st.last_report is not None and st.last_report.added == 4


# ---------------------------------------------------------------- groups


def test_open_stores_indexed_group(populated: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    put(other, "elsewhere", ["a lisbon tram ride"], updated="2026-02-01T00:00:00+00:00")
    with open_stores([populated, other], indexed=True) as group:
        assert isinstance(group, StoreGroup)
        assert all(isinstance(s, SqliteSessionStore) for s in group.stores)
        result = group.search_ex("lisbon", limit=5)
        assert {h.session_id for h in result.hits} == {"hotel", "flight", "elsewhere"}
        assert result.ranking == "relevance" and result.mode == "index"
        classic = group.search("lisbon", ranking="classic")
        assert {h.session_id for h in classic} == {"hotel", "flight", "elsewhere"}
        assert [s.session_id for s in group.recent(limit=2)] == ["elsewhere", "cafe"]
        assert group.count() == 5
        assert [s.session_id for s in group.browse(limit=2)] == ["elsewhere", "cafe"]
        assert group.search_ex("x role:robot").error
        with pytest.raises(QueryError):
            group.search("x role:robot")
    plain = open_stores([populated])
    assert plain.default_ranking() == "classic"
    assert [h.session_id for h in plain.search("quokka")] == ["old"]


def test_matched_sessions_counted_with_and_without_session_filters(
    d: Path, tmp_path: Path
) -> None:
    # The exact count reads the sessions table only when a filter needs it; both ways
    # must count the same sessions as the hits show.
    for i in range(6):
        put(d, f"new{i}", [f"parcel tracking {i}", "ok"], start=T0 + 10 * 86400.0)
    for i in range(4):
        put(d, f"old{i}", [f"parcel tracking {i}", "ok"], start=T0)
    put(d, "none", ["nothing here", "ok"], start=T0)
    with SqliteSessionStore(d, db_path=tmp_path / "cnt.sqlite3") as st:
        assert st.search_ex("parcel", limit=2).matched_sessions == 10
        assert st.search_ex("parcel role:user", limit=2).matched_sessions == 10
        assert st.search_ex("parcel role:assistant", limit=2).matched_sessions == 0
        since = st.search_ex(f"parcel since:{_day(T0 + 5 * 86400.0)}", limit=2)
        assert since.matched_sessions == 6
        assert st.search_ex("parcel session:old2", limit=2).matched_sessions == 1


def test_fewer_driver_messages_when_every_term_fills_the_limit(d: Path, tmp_path: Path) -> None:
    # 30 sessions hold both words in one message; 20 others hold only the rarer word, in
    # 480 messages. Asked for 10, the sessions holding every term fill the list, so only a
    # few of the rarer word's other messages are read; asked for 50, all of them are.
    from session_browser.core.query import parse_query
    from session_browser.core.search import candidates as ix

    for i in range(30):
        put(d, f"both{i}", [f"alpha beta report {i}", "ok"], updated="2026-01-01T00:00:00+00:00")
    for i in range(20):
        put(d, f"alpha{i}", [f"alpha note {i} {j}" for j in range(24)],
            updated="2026-01-02T00:00:00+00:00")
    for i in range(30):
        put(d, f"beta{i}", [f"beta note {i} {j}" for j in range(24)])
    with SqliteSessionStore(d, db_path=tmp_path / "drv.sqlite3") as store:
        pq = parse_query("alpha beta")
        with store._lock:
            db = store._conn()
            dfs = [store._df(db, t) for t in pq.terms]
            assert dfs[0] < dfs[1] <= ix.RARE_DF
            few = store._fts_candidates(db, pq, dfs, 10, [])
            many = store._fts_candidates(db, pq, dfs, 50, [])
        assert len(few) <= 30 + ix.FILL_LIMIT
        # every session of the rarer word is read, each for at most its share of messages
        assert {r[6] for r in many} >= {f"alpha{i}" for i in range(20)}
        assert len(many) == 30 + 20 * ix.PER_SESSION
        hits = store.search("alpha beta", limit=10)
        assert len(hits) == 10
        assert all(h.session_id.startswith("both") for h in hits)


def test_driver_messages_kept_when_every_term_sessions_fold_into_one(
    d: Path, tmp_path: Path
) -> None:
    # The sessions holding every term are continuations of one conversation: they show as
    # one hit, so they do not fill the limit and the rarer word's messages are all read.
    from session_browser.core.query import parse_query

    for i in range(30):
        put(d, f"both{i}", [f"alpha beta report {i}", "ok"], meta={"lineage_id": "L"})
    for i in range(20):
        put(d, f"alpha{i}", [f"alpha note {i} {j}" for j in range(24)],
            updated="2026-01-02T00:00:00+00:00")
    for i in range(30):
        put(d, f"beta{i}", [f"beta note {i} {j}" for j in range(24)])
    with SqliteSessionStore(d, db_path=tmp_path / "fold.sqlite3") as store:
        pq = parse_query("alpha beta")
        with store._lock:
            db = store._conn()
            dfs = [store._df(db, t) for t in pq.terms]
            rows = store._fts_candidates(db, pq, dfs, 10, [])
        # the one folded hit leaves 9 places: the rarer word's sessions fill every one
        assert len({r[6] for r in rows if r[6].startswith("alpha")}) >= 9
        ids = [h.session_id for h in store.search("alpha beta", limit=10)]
        assert len(ids) == 10 and ids[0].startswith("both")
