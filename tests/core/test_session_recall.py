"""Session recall: a question in other words than the session's (no message holds all its
words) is answered by weighted coverage of its content words over whole sessions; a long hub
session does not win by length; known-item queries rank as before; stop words say what they
said. Real stores on real SQLite files."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from session_browser.core import paths
from session_browser.core.index import SqliteSessionStore
from session_browser.core.index.engine import SqliteEngine
from session_browser.core.query import parse_query
from session_browser.core.search import lexical
from session_browser.core.search.procedure import relevance

T0 = 1_760_000_000.0
#: what makes an assistant's turn long: words the question never uses
PROSE = (
    " That keeps the accounting simpler, since the team reconciles payouts by hand today,"
    " and the migration can run in parallel with the old provider for a few weeks while"
    " customers update their saved cards, so nobody loses access during the transition."
)
OTHER = (
    "Happy to help with anything else: a walkthrough, more examples, or a summary of what we"
    " covered so far, with links to the documentation pages and a few exercises to try."
)
FILLER = [
    ["How do I center a div in CSS?", "Use flexbox with justify-content and align-items."],
    ["Write a haiku about autumn leaves.", "Crimson leaves drifting, the cold wind hums."],
    ["What is the capital of Australia?", "Canberra is the capital city."],
    ["Fix this Python traceback please.", "The list index is out of range on line four."],
    ["Recommend a sci-fi novel.", "Try Hyperion by Dan Simmons, a pilgrimage story."],
    ["Explain TCP handshakes.", "SYN, SYN-ACK, ACK: three packets open a connection."],
]


def put(d: Path, sid: str, texts: list[str], start: float = T0) -> Path:
    roles = ["user", "assistant"]
    data: dict[str, Any] = {
        "session_id": sid,
        "messages": [
            {"role": roles[i % 2], "content": t, "metadata": {}, "timestamp": start + i * 60}
            for i, t in enumerate(texts)
        ],
        "created_at": "2025-12-01T00:00:00+00:00",
        "updated_at": "2026-01-01T00:00:00+00:00",
        "agent_name": None,
        "user_id": None,
        "metadata": {},
        "archived_messages": [],
    }
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{paths.safe_id(sid)}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    d = tmp_path / "sessions"
    for i, texts in enumerate(FILLER):  # sessions of a usual length
        put(d, f"filler-{i}", [*texts, OTHER, OTHER], T0 + i * 3600)
    # the target: the billing migration, its words spread over its turns
    put(
        d,
        "target",
        [
            "We should move our invoices off Stripe this quarter." + PROSE,
            "Paddle can be the merchant of record and handle VAT for us." + PROSE,
            "Agreed, let's plan the switch for March." + PROSE,
            "I will draft the checklist.",
        ],
        T0 + 10 * 3600,
    )
    # a session holding three of the question's words in one message
    put(
        d,
        "bookkeeping",
        ["The bookkeeping team exports Stripe invoices every week.", "Noted.", OTHER, OTHER],
        T0 + 20 * 3600,
    )
    return d


def open_store(d: Path, tmp_path: Path) -> SqliteSessionStore:
    store = SqliteSessionStore(d, db_path=tmp_path / "index.sqlite3", reconcile="none")
    store.reconcile()
    return store


def ids(store: SqliteSessionStore, query: str, limit: int = 10) -> list[str]:
    return [h.session_id for h in store.search(query, limit=limit)]


# the billing question in other words: "bookkeeping" stands for what the target calls
# "merchant of record"; no message holds all its words
PARAPHRASE = "moving our invoices from Stripe to Paddle in March for bookkeeping"


def test_paraphrase_finds_the_session_covering_most_of_the_question(
    store_dir: Path, tmp_path: Path
) -> None:
    store = open_store(store_dir, tmp_path)
    try:
        got = ids(store, PARAPHRASE)
        assert got[0] == "target", got
        assert "bookkeeping" in got[:3]
        hit = store.search(PARAPHRASE, limit=1)[0]
        # anchored at its best matching turn, and the score says how it was ranked
        assert hit.explain["session_recall"] is not None
        assert "Stripe" in hit.snippet or "Paddle" in hit.snippet or "March" in hit.snippet
    finally:
        store.close()


def test_hub_session_does_not_win_by_length(store_dir: Path, tmp_path: Path) -> None:
    # a long session holding every word of the question, each in a different message among
    # hundreds of messages about everything
    words = ["invoices", "stripe", "paddle", "march", "bookkeeping"]
    hub = []
    for i in range(300):
        filler = " ".join(f"topic{i}w{j} screenplay scene dialogue" for j in range(12))
        hub.append(f"{words[i % 5] if i % 60 == 0 else 'line'} {filler}")
    put(store_dir, "hub", hub, T0 + 30 * 3600)
    store = open_store(store_dir, tmp_path)
    try:
        got = ids(store, PARAPHRASE)
        assert got[0] == "target", got
        assert got.index("hub") > got.index("bookkeeping"), got
    finally:
        store.close()


def ranked(store: SqliteSessionStore, query: str, recall: bool) -> list[tuple[str, float, int]]:
    engine = SqliteEngine(store)
    engine.session_recall = recall
    got = relevance(engine, parse_query(query), limit=10, window=2)
    return [(c.hit.session_id, c.hit.score, c.hit.anchor_index) for c in got.candidates]


@pytest.mark.parametrize(
    "query",
    [
        "invoices Stripe",  # both in one message
        "bookkeeping team exports",
        "merchant of record VAT",
        '"draft the checklist"',
        "Canberra capital",
    ],
)
def test_known_item_queries_rank_as_without_session_recall(
    store_dir: Path, tmp_path: Path, query: str
) -> None:
    store = open_store(store_dir, tmp_path)
    try:
        with_recall = ranked(store, query, True)
        assert with_recall, query
        assert with_recall == ranked(store, query, False)
    finally:
        store.close()


@pytest.mark.parametrize("query", ["what did we decide about the", "the of and", "did we?"])
def test_stop_words_only_say_what_they_said(store_dir: Path, tmp_path: Path, query: str) -> None:
    store = open_store(store_dir, tmp_path)
    try:
        assert not lexical.eligible(parse_query(query))
        assert lexical.query_words(parse_query(query)) == []
        # no content word: never session recall; ranked exactly as without it
        assert ranked(store, query, True) == ranked(store, query, False)
        result = store.search_ex(query, limit=10)
        assert all(h.explain.get("session_recall") is None for h in result.hits)
    finally:
        store.close()


def test_session_words_follow_a_grown_and_a_deleted_file(store_dir: Path, tmp_path: Path) -> None:
    store = open_store(store_dir, tmp_path)
    try:
        assert ids(store, "tangerine dashboards") == []
        put(
            store_dir,
            "filler-0",
            [*FILLER[0], OTHER, OTHER, "Show the tangerine theme.", "Dashboards next."],
            T0,
        )
        (store_dir / f"{paths.safe_id('bookkeeping')}.json").unlink()
        store.reconcile()
        got = ids(store, "tangerine themes and dashboards")
        assert got[:1] == ["filler-0"], got
        assert "bookkeeping" not in ids(store, PARAPHRASE)
    finally:
        store.close()
    db = sqlite3.connect(tmp_path / "index.sqlite3")
    try:
        db.execute("INSERT INTO recall_words(recall_words) VALUES ('integrity-check')")
        n_sessions = db.execute("SELECT count(*) FROM sessions").fetchone()[0]
        n_lengths = db.execute("SELECT count(*) FROM recall_lengths").fetchone()[0]
        assert n_sessions == n_lengths == len(FILLER) + 1
        holders = db.execute(
            "SELECT rowid FROM recall_words WHERE recall_words MATCH 'bookkeep'"
        ).fetchall()
        assert holders == []  # the deleted session's words went with it
    finally:
        db.close()


def test_stemmer_and_question_words() -> None:
    assert lexical.stem("booked") == lexical.stem("booking") == "book"
    assert lexical.stem("cities") == "city"
    assert lexical.words_of("What did we decide about the favourite theatres?") == (
        lexical.words_of("favorite theaters")
    )
    assert len(lexical.words_of("What did we decide about the favourite theatres?")) == 2


def test_how_often_a_session_holds_a_word_is_kept_up_to_four() -> None:
    words, length = lexical.session_words(["Booked the hotel, booking again", "books, booked"])
    assert length == 5
    assert words == ["book", "hotel", "book_2", "book_3", "book_4"]
    assert lexical.marks_of(["hotel"]) == ["hotel_2", "hotel_3", "hotel_4"]
    # two sessions of one length holding the same words: the one saying a word more wins
    found = lexical.SessionPostings(
        sessions=4,
        mean_length=10.0,
        postings={"hotel": frozenset({1, 2}), "paris": frozenset({1, 2}), "paris_2": {2}},
        lengths={1: 10, 2: 10, 3: 10, 4: 10},
    )
    assert [key for key, _ in lexical.rank_sessions(["hotel", "paris"], found, 2)] == [2, 1]


def test_hits_shown_agree_with_the_count_when_a_word_is_common_to_sessions(
    tmp_path: Path,
) -> None:
    """A word one session in five holds (common to sessions, so recall does not draw its
    candidates from it) but in few messages (not common to the one matching rule, so every
    session holding it is a match): the page shows as many hits as the count says matched,
    not only the sessions holding the rare word."""
    d = tmp_path / "sessions"
    for i in range(300):
        lantern = "I lit the brass lantern on the porch." if i % 5 == 0 else "It rained."
        put(d, f"s{i:03d}", ["Hello there.", lantern, *(["Fine, thanks."] * 8)], T0 + i * 60)
    put(d, "rare", ["Hello there.", "The zyxquartz sample arrived.", "Good."], T0 + 400 * 60)
    with open_store(d, tmp_path) as store:
        out = store.search_ex("lantern zyxquartz", limit=10)
        assert out.matched_exact
        assert out.matched_sessions == 61
        shown = [h.session_id for h in out.hits]
        assert len(shown) == 10
        assert "rare" in shown
        holds = {f"s{i:03d}" for i in range(0, 300, 5)} | {"rare"}
        assert set(shown) <= holds


def test_stemmer_restores_the_e_and_keeps_short_er_words() -> None:
    stem = lexical.stem
    assert stem("shared") == stem("sharing") == stem("share") == "share"
    assert stem("taking") == stem("take") and stem("named") == stem("name")
    assert stem("shopping") == "shop" and stem("booked") == "book"
    # "-er" only after two syllables: these are words of their own, not verbs
    assert [stem(w) for w in ("weather", "number", "speaker", "order")] == [
        "weather",
        "number",
        "speaker",
        "order",
    ]
    assert stem("speakers") == "speaker" and stem("ordered") == stem("order")
    assert stem("computers") == stem("computer") == "comput"
    assert stem("speed") == "speed"


def test_written_numbers_are_the_digits_a_session_holds() -> None:
    assert lexical.words_of("four nights for three of us") == lexical.words_of("4 nights, 3 of us")
    assert lexical.words_of("I need 4 seats") == ["need", "4", "seat"]
    assert lexical.words_of("one of them") == []  # "one" is a stop word, not "1"


def test_near_duplicate_told_apart_by_a_number_and_a_word_ending(tmp_path: Path) -> None:
    # two bookings alike but for the nights and the taxi; the question writes the number out
    # and says "share" where the session said "shared"; the other says "hotel" twice
    d = tmp_path / "sessions"
    for i, texts in enumerate(FILLER):
        put(d, f"filler-{i}", [*texts, OTHER], T0 + i * 3600)
    put(d, "shared-taxi", ["A hotel in Toronto for 4 nights.", "The taxi is shared.", OTHER], T0)
    put(
        d,
        "private-taxi",
        ["A hotel in Toronto for 2 nights.", "The taxi to the hotel is private.", OTHER],
        T0 + 50 * 3600,
    )
    store = open_store(d, tmp_path)
    try:
        question = "Toronto hotel for four nights with a taxi to share"
        assert ids(store, question)[:2] == ["shared-taxi", "private-taxi"]
        hit = store.search(question, limit=1)[0]
        assert hit.explain["session_recall"] is not None
    finally:
        store.close()


def _plain_ranking(
    words: list[str], found: lexical.SessionPostings, limit: int
) -> list[tuple[int, float]]:
    """rank_sessions written plainly: every session holding a word, the BM25 of presence
    times coverage for the first cut, then again with how often each holds each word."""
    n, avg = found.sessions, found.mean_length
    weights = {w: lexical.idf(len(found.postings.get(w, ())), n) for w in words}
    total = sum(weights.values())
    common = lexical.common_limit(n)
    rare = [w for w in words if 0 < len(found.postings.get(w, ())) <= common]
    keys = {k for w in (rare or words) for k in found.postings.get(w, ())}
    cover = {k: sum(weights[w] for w in words if k in found.postings.get(w, ())) for k in keys}
    lift, slope, flat = lexical.K1 + 1, lexical.K1 * lexical.B / avg, lexical.K1 * (1 - lexical.B)

    def norm(k: int) -> float:
        return flat + slope * found.lengths.get(k, 0)

    first = sorted(
        keys,
        key=lambda k: (-cover[k] * lift / (1 + norm(k)) * (cover[k] / total) ** 0.5, k),
    )[: max(lexical.RERANK, limit)]
    again = []
    for k in first:
        bm25 = 0.0
        for w in words:
            if k in found.postings.get(w, ()):
                tf = 1 + sum(k in found.postings.get(lexical.mark(w, t), ()) for t in (2, 3, 4))
                bm25 += weights[w] * tf * lift / (tf + norm(k))
        again.append((bm25 * (cover[k] / total) ** 0.5, k))
    return [(k, s) for s, k in sorted(again, key=lambda sk: (-sk[0], sk[1]))[:limit]]


@pytest.mark.parametrize("seed", range(6))
def test_session_ranking_is_the_plain_formula_ties_included(seed: int) -> None:
    import random

    rng = random.Random(seed)
    n = 400
    words = ["alpha", "beta", "gamma", "delta", "common"]
    postings: dict[str, frozenset[int]] = {}
    for w, share in zip(words, (0.02, 0.05, 0.1, 0.03, 0.5), strict=True):
        held = frozenset(k for k in range(n) if rng.random() < share)
        postings[w] = held
        for t in (2, 3, 4):  # how often: a shrinking part of the holders
            postings[lexical.mark(w, t)] = frozenset(k for k in held if rng.random() < 0.5 / t)
    # few distinct lengths: many sessions tie exactly, and ties go to the lower key
    lengths = {k: rng.choice((5, 10, 20)) for k in range(n)}
    found = lexical.SessionPostings(n, 10.0, postings, lengths)
    for limit in (3, 15, 60):
        assert lexical.rank_sessions(words, found, limit) == _plain_ranking(words, found, limit)


def test_how_often_a_common_word_is_said_tells_near_duplicates_apart(tmp_path: Path) -> None:
    # "hotel" is common (more sessions hold it than session recall lets bring candidates);
    # of two bookings alike in length and words, the one about the hotel says it three times
    # (the other, indexed first, would win a tie)
    d = tmp_path / "sessions"
    for i in range(60):
        put(d, f"hotels-{i}", [f"Which hotel is cheapest in town number {i}?", OTHER], T0 + i)
    put(
        d,
        "lake-inn",
        ["The hotel in Toronto.", "The room has a pool.", "The inn is near the lake."],
        T0 + 100,
    )
    put(
        d,
        "hotel-stay",
        ["The hotel in Toronto.", "The hotel has a pool.", "The hotel is near the lake."],
        T0 + 200,
    )
    store = open_store(d, tmp_path)
    try:
        question = "Toronto hotel where my dog could stay"
        assert ids(store, question)[:2] == ["hotel-stay", "lake-inn"]
    finally:
        store.close()


def test_postings_kept_between_searches_are_the_most_recently_used(
    store_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from session_browser.core.index import recall as index_recall

    open_store(store_dir, tmp_path).close()
    monkeypatch.setattr(index_recall, "CACHE_DF", 0)
    monkeypatch.setattr(index_recall, "CACHED_WORDS", 2)
    reads = index_recall.RecallReads()
    db = sqlite3.connect(tmp_path / "index.sqlite3")
    try:
        fresh = index_recall.RecallReads().postings(db, 1, ["stripe", "paddle", "march"])
        for word in ("stripe", "paddle", "stripe", "march"):
            got = reads.postings(db, 1, [word])
            assert got.postings[word] == fresh.postings[word] != frozenset()
        assert list(reads._posts) == ["stripe", "march"]  # "paddle" was the least recent
    finally:
        db.close()


def test_marks_read_are_every_tier_of_a_rarer_word_and_the_first_of_a_common_one() -> None:
    found = lexical.SessionPostings(
        sessions=100,
        mean_length=10.0,
        postings={"toronto": frozenset({1, 2}), "hotel": frozenset(range(60))},
        lengths={},
    )
    assert lexical.marks_to_read(["toronto", "hotel", "dog"], found) == [
        "toronto_2",
        "toronto_3",
        "toronto_4",
        "hotel_2",
    ]
