"""Hybrid mode: the lexical ranking and the nearest sessions by meaning fused by reciprocal
rank fusion, in the one relevance procedure; vectors beside the index built incrementally;
missing or damaged vectors answer lexically with a notice. Real stores on real SQLite files,
a deterministic embedder (words hashed, after a fixed table of synonyms: what "meaning" is
for these tests); the real model in one test that skips only where it is not installed."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from session_browser.core import paths
from session_browser.core.embed import HashEmbedder, register
from session_browser.core.index import SqliteSessionStore
from session_browser.core.index.engine import SqliteEngine
from session_browser.core.index.vectors import (
    WINDOW_MESSAGES,
    VectorIndex,
    build_vectors,
    vectors_path,
)
from session_browser.core.query import parse_query
from session_browser.core.search import hybrid
from session_browser.core.search.procedure import relevance

from .test_session_recall import T0, put

DAY = 86400.0

#: What the test embedder takes for one meaning: each word is hashed as its group's first.
SYNONYMS = [
    ("compressions", "pumps", "pushes", "pressing"),
    ("chest", "sternum", "breastbone"),
    ("collapsed", "fainted", "passed"),
    ("minute", "rhythm", "tempo"),
    ("rescue", "first-aid", "emergency"),
]
_SAME = {w: group[0] for group in SYNONYMS for w in group}
_WORD = re.compile(r"[\w-]+")


class SynonymEmbedder:
    """The hashing embedder over words mapped to their group's first (:data:`SYNONYMS`);
    counts the texts it embeds."""

    def __init__(self) -> None:
        self._inner = HashEmbedder(256)
        self.calls: list[list[str]] = []

    @property
    def name(self) -> str:
        return "synonyms-test-256"

    @property
    def dim(self) -> int:
        return 256

    @property
    def max_tokens(self) -> int:
        return 512

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls.append(list(texts))
        mapped = [
            " ".join(_SAME.get(w, w) for w in _WORD.findall(t.lower()) if len(w) > 3) for t in texts
        ]
        return self._inner.embed(mapped)


FILLER = [
    ["How do I center a div in CSS?", "Use flexbox with justify-content and align-items."],
    ["Write a haiku about autumn leaves.", "Crimson leaves drifting, the cold wind hums."],
    ["What is the capital of Australia?", "Canberra is the capital city."],
    ["Fix this Python traceback please.", "The list index is out of range on line four."],
    ["Recommend a sci-fi novel.", "Try Hyperion by Dan Simmons, a pilgrimage story."],
    ["Explain TCP handshakes.", "SYN, SYN-ACK, ACK: three packets open a connection."],
    ["Plan a weekend in Lisbon.", "Alfama in the morning, Belem pastries, a tram ride."],
    ["Sort a list of dicts by key.", "sorted(items, key=lambda d: d['name'])"],
]
#: The target: first-aid advice. The question below shares none of its words but the
#: synonyms' (no message holds a word of it as written, so lexical recall cannot find it).
_SMALL_TALK = [
    "Hello there, quick question for the course I am taking.",
    "Sure, go ahead.",
    "We covered warm-up stretches today, nothing else yet.",
    "Stretching before running helps a little.",
    "Also my shoes hurt, any advice on sizes?",
    "Try half a size up for long runs.",
    "Thanks, that is all about running.",
    "Good luck with the course.",
]
TARGET = [
    # window 1: small talk
    *(_SMALL_TALK[i % len(_SMALL_TALK)] for i in range(WINDOW_MESSAGES)),
    # window 2: the meaning the question asks for
    "Someone fainted at the gym, I did pushes on the breastbone.",
    "Good: press hard and fast, about two a second, that tempo matters most.",
]
QUESTION = "compressions chest collapsed minute"


@pytest.fixture
def embedder() -> SynonymEmbedder:
    e = SynonymEmbedder()
    register(e)
    return e


@pytest.fixture
def mode(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    monkeypatch.delenv(hybrid.ENV, raising=False)
    yield monkeypatch


@pytest.fixture
def store(tmp_path: Path, embedder: SynonymEmbedder) -> Iterator[SqliteSessionStore]:
    d = tmp_path / "sessions"
    for i, texts in enumerate(FILLER):
        put(d, f"filler-{i}", [*texts, "Anything else?", "No, thanks."], T0 + i * DAY)
    # a session holding the question's words as written, about something else
    put(d, "lexical", ["compressions of images: chest x-ray files", "minute details"], T0)
    put(d, "target", TARGET, T0 + 3 * DAY)
    s = SqliteSessionStore(d, db_path=tmp_path / "index.db", reconcile="sync", vault=False)
    try:
        yield s
    finally:
        s.close()


def ids(store: SqliteSessionStore, query: str, limit: int = 5) -> list[str]:
    return [h.session_id for h in store.search(query, limit=limit)]


def test_a_question_in_other_words_is_found_by_meaning_only_in_hybrid_mode(
    store: SqliteSessionStore, embedder: SynonymEmbedder, mode: pytest.MonkeyPatch
) -> None:
    build_vectors(store.db_path, embedder)
    mode.setenv(hybrid.ENV, "lexical")
    assert "target" not in ids(store, QUESTION)
    assert store.search_ex(QUESTION, limit=5).mode == "index"
    mode.setenv(hybrid.ENV, "hybrid")
    result = store.search_ex(QUESTION, limit=5)
    assert result.warnings == [] and result.mode == "index+hybrid"
    got = [h.session_id for h in result.hits]
    assert "target" in got and "lexical" in got
    hit = result.hits[got.index("target")]
    # anchored at its best window by meaning: the window's first message
    assert hit.anchor_index == WINDOW_MESSAGES


def test_fused_scores_are_reciprocal_rank_fusion_of_both_rankings(
    store: SqliteSessionStore, embedder: SynonymEmbedder, mode: pytest.MonkeyPatch
) -> None:
    build_vectors(store.db_path, embedder)
    pq = parse_query(QUESTION)
    mode.setenv(hybrid.ENV, "lexical")
    lexical = [c.hit.session_id for c in relevance(SqliteEngine(store), pq, 20, 2, None).candidates]
    mode.setenv(hybrid.ENV, "hybrid")
    engine = SqliteEngine(store)
    with engine.reading():
        near = engine.neighbours(pq, 20)
    assert near is not None
    by_meaning = [row[6] for sim, row in near if sim >= hybrid.MIN_SIMILARITY]
    assert by_meaning[0] == "target" and "target" not in lexical
    fused = relevance(SqliteEngine(store), pq, 20, 2, None).candidates
    assert {c.hit.session_id for c in fused} == set(lexical) | set(by_meaning)
    for c in fused:  # no message holds every word: the lexical rank weighs 1
        sid = c.hit.session_id
        want = 0.0
        if sid in lexical:
            want += hybrid.SCALE / (hybrid.QUESTION_K + lexical.index(sid) + 1)
        if sid in by_meaning:
            want += hybrid.SCALE / (hybrid.QUESTION_K + by_meaning.index(sid) + 1)
        assert c.hit.score == pytest.approx(round(want, 4)), sid
    assert fused[0].hit.session_id in ("target", "lexical")


def test_filters_apply_to_the_part_found_by_meaning(
    store: SqliteSessionStore, embedder: SynonymEmbedder, mode: pytest.MonkeyPatch
) -> None:
    build_vectors(store.db_path, embedder)
    mode.setenv(hybrid.ENV, "hybrid")
    assert "target" in ids(store, QUESTION)
    assert "target" not in ids(store, QUESTION + " -gym")  # an excluded word it holds
    assert "target" not in ids(store, QUESTION + " session:filler-1")
    assert "target" in ids(store, QUESTION + " session:target")
    # a message filter: its anchor is a message passing it
    hits = store.search(QUESTION + " role:assistant", limit=5)
    target = [h for h in hits if h.session_id == "target"]
    assert target and target[0].anchor_index == WINDOW_MESSAGES + 1


def test_a_grown_session_embeds_only_its_new_window(
    store: SqliteSessionStore, embedder: SynonymEmbedder, tmp_path: Path
) -> None:
    first = build_vectors(store.db_path, embedder)
    assert first.sessions == len(FILLER) + 2
    embedder.calls.clear()
    again = build_vectors(store.db_path, embedder)
    assert (again.sessions, again.windows, embedder.calls) == (0, 0, [])
    # the target's windows: 0 (full) and 1 (2 messages)
    put(tmp_path / "sessions", "target", [*TARGET, "One more turn about the gym."], T0 + 3 * DAY)
    store.reconcile()
    grown = build_vectors(store.db_path, embedder)
    assert (grown.sessions, grown.windows) == (1, 1)
    assert len(embedder.calls) == 1 and len(embedder.calls[0]) == 1
    assert "One more turn about the gym." in embedder.calls[0][0]
    # a session gone: its vectors go too
    (tmp_path / "sessions" / f"{paths.safe_id('filler-0')}.json").unlink()
    store.reconcile()
    embedder.calls.clear()
    gone = build_vectors(store.db_path, embedder)
    assert (gone.removed, gone.windows, embedder.calls) == (1, 0, [])


def test_a_stopped_build_resumes_where_it_stopped(
    store: SqliteSessionStore, embedder: SynonymEmbedder
) -> None:
    stopped = build_vectors(store.db_path, embedder, stop=lambda: True)
    assert stopped.stopped and stopped.windows == 0
    done = build_vectors(store.db_path, embedder)
    assert done.sessions == len(FILLER) + 2 and not done.stopped


def test_missing_vectors_answer_lexically_with_a_notice_when_hybrid_is_asked(
    store: SqliteSessionStore, mode: pytest.MonkeyPatch
) -> None:
    lexically = ids(store, QUESTION)
    assert not vectors_path(store.db_path).exists()
    result = store.search_ex(QUESTION, limit=5)  # not asked: lexical, nothing said
    assert [h.session_id for h in result.hits] == lexically and result.warnings == []
    mode.setenv(hybrid.ENV, "hybrid")
    result = store.search_ex(QUESTION, limit=5)
    assert [h.session_id for h in result.hits] == lexically
    assert len(result.warnings) == 1
    assert "no vectors yet" in str(result.warnings[0])
    assert "lexical answers" in str(result.warnings[0])
    # the command it names is one that builds them
    named = re.search(r"'session-browser ([^']+)' builds them", str(result.warnings[0]))
    assert named is not None
    from click.testing import CliRunner

    from session_browser.cli import main

    assert CliRunner().invoke(main, [*named[1].split(), "--help"]).exit_code == 0


@pytest.mark.parametrize("damage", ["garbage", "truncated", "wrong-length"])
def test_damaged_vectors_answer_lexically_with_a_notice(
    store: SqliteSessionStore, embedder: SynonymEmbedder, mode: pytest.MonkeyPatch, damage: str
) -> None:
    lexically = ids(store, QUESTION)
    build_vectors(store.db_path, embedder)
    path = vectors_path(store.db_path)
    if damage == "garbage":
        path.write_bytes(b"not a database at all " * 100)
    elif damage == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 3])
    else:
        import sqlite3

        with sqlite3.connect(path) as db:
            db.execute("UPDATE windows SET vec = x'0102'")
        db.close()
    result = store.search_ex(QUESTION, limit=5)  # auto: vectors there but unusable: said
    assert [h.session_id for h in result.hits] == lexically
    assert len(result.warnings) == 1 and "lexical answers" in str(result.warnings[0])
    if damage != "wrong-length":  # a build replaces what it cannot read
        build_vectors(store.db_path, embedder)
        result = store.search_ex(QUESTION, limit=5)
        assert result.warnings == [] and "target" in [h.session_id for h in result.hits]


def test_a_bad_mode_is_one_clear_error(store: SqliteSessionStore, mode: pytest.MonkeyPatch) -> None:
    mode.setenv(hybrid.ENV, "semantic")
    result = store.search_ex(QUESTION, limit=5)
    assert result.hits == []
    assert result.error is not None
    assert "search mode must be hybrid or lexical" in result.error


def test_the_real_model_finds_a_paraphrase(tmp_path: Path, mode: pytest.MonkeyPatch) -> None:
    try:
        from session_browser.core.embed import load_minilm

        model = load_minilm()
    except Exception as exc:  # EmbedderUnavailable: the extra is not installed here
        pytest.skip(f"the semantic extra is not installed: {exc}")
    d = tmp_path / "sessions"
    for i, texts in enumerate(FILLER):
        put(d, f"filler-{i}", texts, T0 + i * DAY)
    put(
        d,
        "billing",
        [
            "We should move invoices from Stripe to Paddle in March.",
            "Agreed: the switch happens after the quarter closes.",
        ],
    )
    store = SqliteSessionStore(d, db_path=tmp_path / "index.db", reconcile="sync", vault=False)
    try:
        report = build_vectors(store.db_path, model)
        assert report.sessions == len(FILLER) + 1
        mode.setenv(hybrid.ENV, "lexical")
        question = "what did we decide about the payment provider migration"
        assert ids(store, question)[:1] != ["billing"]
        mode.setenv(hybrid.ENV, "hybrid")
        assert ids(store, question)[:1] == ["billing"]
    finally:
        store.close()


def test_vectors_are_int8_and_small(store: SqliteSessionStore, embedder: SynonymEmbedder) -> None:
    import sqlite3

    build_vectors(store.db_path, embedder)
    with sqlite3.connect(vectors_path(store.db_path)) as db:
        sizes = {len(b) for (b,) in db.execute("SELECT vec FROM windows")}
    db.close()
    assert sizes == {embedder.dim}
    assert os.path.getsize(vectors_path(store.db_path)) > 0


def test_the_cli_builds_vectors_and_explains_both_parts(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from session_browser.cli import main

    try:
        from session_browser.core.embed import load_minilm

        load_minilm()
    except Exception as exc:  # EmbedderUnavailable: the extra is not installed here
        pytest.skip(f"the semantic extra is not installed: {exc}")
    d = tmp_path / "sessions"
    for i, texts in enumerate(FILLER):
        put(d, f"filler-{i}", texts, T0 + i * DAY)
    put(d, "billing", ["We should move invoices from Stripe to Paddle in March.", "Agreed."])
    runner = CliRunner()
    env = {hybrid.ENV: ""}
    started = runner.invoke(
        main, ["index", "vectors", "--store", str(d), "--background", "--json"], env=env
    )
    assert started.exit_code == 0, started.output
    child = json.loads(started.output)
    _pid, status = os.waitpid(child["pid"], 0)  # (the test started it: its parent waits)
    log = Path(child["log"]).read_text()
    assert os.waitstatus_to_exitcode(status) == 0, log
    assert f"{len(FILLER) + 1} sessions" in log
    status = runner.invoke(main, ["index", "status", "--store", str(d), "--json"], env=env)
    held = json.loads(status.output)["stores"][0]["vectors"]
    assert (held["sessions"], held["model"]) == (len(FILLER) + 1, "all-MiniLM-L6-v2")
    again = runner.invoke(main, ["index", "vectors", "--store", str(d), "--json"], env=env)
    assert again.exit_code == 0, again.output
    report = json.loads(again.output)["stores"][0]
    assert report["sessions_embedded"] == 0 and report["bytes"] > 0  # nothing new
    question = ["payment", "provider", "migration", "decision", "--store", str(d)]
    out = runner.invoke(main, ["search", *question, "--mode", "hybrid", "--json"], env=env)
    assert out.exit_code == 0, out.output
    first = json.loads(out.output)["results"][0]
    assert first["session_id"] == "billing"
    parts = first["explain"]["hybrid"]
    assert parts["semantic_rank"] == 1 and parts["similarity"] > hybrid.MIN_SIMILARITY
    lexical = runner.invoke(main, ["search", *question, "--mode", "lexical", "--json"], env=env)
    assert lexical.exit_code == 1 and json.loads(lexical.output)["results"] == []
    bad = runner.invoke(main, ["search", *question, "--mode", "semantic"], env=env)
    assert bad.exit_code == 2 and "semantic" in bad.output


def test_a_query_a_message_holds_whole_keeps_its_lexical_order(
    store: SqliteSessionStore, embedder: SynonymEmbedder, mode: pytest.MonkeyPatch
) -> None:
    build_vectors(store.db_path, embedder)
    mode.setenv(hybrid.ENV, "lexical")
    query = "compressions images chest"  # the "lexical" session's first message, whole
    lexical = ids(store, query, limit=10)
    assert lexical[0] == "lexical" and "target" not in lexical
    mode.setenv(hybrid.ENV, "hybrid")
    embedder.calls.clear()
    found = store.search_ex(query, limit=10)
    # the lexical order stands and is the answer: nothing asked by meaning, nothing embedded
    assert "+hybrid" in found.mode and [h.session_id for h in found.hits] == lexical
    assert embedder.calls == []
    parts = found.hits[0].explain["hybrid"]
    assert parts["lexical_rank"] == 1 and parts["semantic_rank"] is None
    assert parts["lexical_hits"] == len(lexical)
    assert found.hits[0].score == pytest.approx(round(hybrid.SCALE * 2 / (hybrid.RRF_K + 1), 4))
    # a question no message holds whole: asked by meaning, the query embedded once
    assert "target" in ids(store, QUESTION, limit=10)
    assert embedder.calls == [[QUESTION]]
    # one word some session holds: the same
    embedder.calls.clear()
    assert ids(store, "flexbox", limit=10) == ["filler-0"] and embedder.calls == []


def test_one_build_at_a_time(store: SqliteSessionStore, embedder: SynonymEmbedder) -> None:
    import fcntl

    from session_browser.core.index.vectors import VectorsBusy

    lock = os.open(str(vectors_path(store.db_path)) + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as another build holds it
        with pytest.raises(VectorsBusy):
            build_vectors(store.db_path, embedder)
    finally:
        os.close(lock)
    assert build_vectors(store.db_path, embedder).sessions == len(FILLER) + 2
    assert vectors_path(store.db_path).stat().st_mode & 0o077 == 0  # private, as the index


def test_a_group_answers_in_one_mode(
    store: SqliteSessionStore, embedder: SynonymEmbedder, tmp_path: Path, mode: pytest.MonkeyPatch
) -> None:
    from session_browser.core.multi import StoreGroup

    other_dir = tmp_path / "other"
    put(other_dir, "elsewhere", ["compressions of audio files", "chest of drawers"])
    other = SqliteSessionStore(
        other_dir, db_path=tmp_path / "other.db", reconcile="sync", vault=False
    )
    try:
        build_vectors(store.db_path, embedder)  # one store has vectors, the other none
        group = StoreGroup([store, other])
        hits = group.search(QUESTION, limit=10)
        assert hits and all("hybrid" not in h.explain for h in hits)  # lexical alike
        assert "target" not in [h.session_id for h in hits]
        build_vectors(other.db_path, embedder)  # both ready: hybrid alike
        hits = group.search(QUESTION, limit=10)
        assert all("hybrid" in h.explain for h in hits)
        assert "target" in [h.session_id for h in hits]
        (tmp_path / "other.db.vectors").unlink()
        mode.setenv(hybrid.ENV, "hybrid")  # asked for: each store as it can, and says so
        result = group.search_ex(QUESTION, limit=10)
        assert "target" in [h.session_id for h in result.hits]
        assert any("no vectors yet" in str(w) for w in result.warnings)
    finally:
        other.close()


def test_worker_processes_store_the_same_vectors(
    store: SqliteSessionStore, embedder: SynonymEmbedder, tmp_path: Path
) -> None:
    import sqlite3

    def stored(db: Path) -> list[tuple[Any, ...]]:
        with sqlite3.connect(vectors_path(db)) as conn:
            got = conn.execute("SELECT * FROM windows ORDER BY file, pos").fetchall()
        conn.close()
        return got

    alone = build_vectors(store.db_path, embedder)
    copy = tmp_path / "copy.db"
    with sqlite3.connect(store.db_path) as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
    src.close()
    dst.close()
    shared = build_vectors(copy, embedder, workers=2)
    assert (shared.sessions, shared.windows) == (alone.sessions, alone.windows)
    assert stored(copy) == stored(Path(store.db_path))


@pytest.mark.parametrize("workers", [1, 2])
def test_a_window_text_seen_before_is_not_embedded_again(
    store: SqliteSessionStore,
    embedder: SynonymEmbedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    workers: int,
) -> None:
    import sqlite3
    from contextlib import closing

    from session_browser.core.index import vectors

    # one session a batch: with workers, a text repeated by the next batch is still in flight
    monkeypatch.setattr(vectors, "BATCH_WINDOWS", 1)
    build_vectors(store.db_path, embedder, workers=workers)
    d = tmp_path / "sessions"
    # a fork of the target: its first window the same, then turns of its own
    put(d, "fork", [*TARGET, "A question of the fork's own."], T0 + 4 * DAY)
    twin = ["Where is a pharmacy open late tonight?", "Two blocks north, until midnight."]
    put(d, "twin-a", twin, T0 + 5 * DAY)
    put(d, "twin-b", twin, T0 + 6 * DAY)
    store.reconcile()
    report = build_vectors(store.db_path, embedder, workers=workers)
    # written: the fork's two windows and one each twin; embedded: the fork's second, a twin
    assert (report.sessions, report.windows, report.embedded) == (3, 4, 2)
    with closing(sqlite3.connect(vectors_path(store.db_path))) as conn:
        vec = dict(((f, p), v) for f, p, v in conn.execute("SELECT file, pos, vec FROM windows"))
    name = {sid: f"{paths.safe_id(sid)}.json" for sid in ("target", "fork", "twin-a", "twin-b")}
    assert vec[name["fork"], 0] == vec[name["target"], 0]
    assert vec[name["fork"], 1] != vec[name["target"], 1]
    assert vec[name["twin-a"], 0] == vec[name["twin-b"], 0]


def test_a_question_is_embedded_beside_its_lexical_part(
    store: SqliteSessionStore,
    embedder: SynonymEmbedder,
    mode: pytest.MonkeyPatch,
) -> None:
    """A question no message holds whole is embedded on a thread of its own as soon as it is
    known to be one, so its vector is computed while session recall ranks (another core),
    not after it; once, and kept for the same words asked again."""
    import threading

    from session_browser.core.search import lexical

    build_vectors(store.db_path, embedder)
    mode.setenv(hybrid.ENV, "hybrid")
    embedder.calls.clear()
    embedding = threading.Event()
    threads: list[str] = []
    inner_embed = embedder.embed

    def embed(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        threads.append(threading.current_thread().name)
        embedding.set()
        return inner_embed(texts)

    mode.setattr(embedder, "embed", embed)
    rank = lexical.rank_sessions
    seen_before_ranking: list[bool] = []

    def ranking(*args: Any, **kwargs: Any) -> Any:
        # the embedding has started (or is done) before recall ranks: it was not left
        # for after the lexical part (a generous bound: only the old order waits it out)
        seen_before_ranking.append(embedding.wait(10.0))
        return rank(*args, **kwargs)

    mode.setattr(lexical, "rank_sessions", ranking)
    # the query's closeness to every session is worked out on that thread too
    closeness = VectorIndex.closeness
    closeness_threads: list[str] = []

    def watched(self: VectorIndex, query: Any, k: int) -> Any:
        closeness_threads.append(threading.current_thread().name)
        return closeness(self, query, k)

    mode.setattr(VectorIndex, "closeness", watched)
    searching = threading.current_thread().name
    assert "target" in ids(store, QUESTION, limit=10)
    assert seen_before_ranking and all(seen_before_ranking)
    assert embedder.calls == [[QUESTION]] and threads[0] != searching
    assert closeness_threads == threads[:1]
    # the same question again: its vector is kept, nothing embedded
    assert "target" in ids(store, QUESTION, limit=10)
    assert embedder.calls == [[QUESTION]]


def test_question_parts() -> None:
    assert hybrid.question_parts("a cafe in Oakland and then a funk rock track, two tickets") == [
        "a cafe in Oakland",
        "a funk rock track",
        "two tickets",
    ]
    # a piece of one word is no part; one part is the whole question only
    assert hybrid.question_parts("hotel, please") == []
    assert hybrid.question_parts("compressions chest collapsed minute") == []


def test_a_question_of_several_parts_prefers_the_session_answering_each(
    tmp_path: Path, embedder: SynonymEmbedder, mode: pytest.MonkeyPatch
) -> None:
    """A session whose windows answer each part of a question is nearer than one whose
    single window holds more of the question's words but answers each part less."""
    d = tmp_path / "sessions"
    pad = ["ok"] * (WINDOW_MESSAGES - 1)  # (words of three letters are not embedded)
    put(d, "each-part", ["chest compressions tempo", *pad, "autumn haiku leaves", *pad], T0)
    put(d, "one-window", ["chest compressions autumn haiku", *pad], T0 + DAY)
    for i, texts in enumerate(FILLER):
        put(d, f"filler-{i}", texts, T0 + (i + 2) * DAY)
    store = SqliteSessionStore(d, db_path=tmp_path / "index.db", reconcile="sync", vault=False)
    try:
        build_vectors(store.db_path, embedder)
        mode.setenv(hybrid.ENV, "hybrid")
        question = "chest compressions tempo and then autumn haiku leaves"
        parts = ["chest compressions tempo", "autumn haiku leaves"]
        assert hybrid.question_parts(question) == parts
        engine = SqliteEngine(store)
        with engine.reading():
            in_parts = engine.neighbours(parse_query(question), 5)
            whole = engine.neighbours(parse_query(" ".join(parts)), 5)
        assert in_parts is not None and whole is not None
        assert [row[6] for _sim, row in in_parts][:2] == ["each-part", "one-window"]
        # asked as one part, the single window like the whole is the nearer
        assert [row[6] for _sim, row in whole][:2] == ["one-window", "each-part"]
        # closeness is a mean of cosines: on the cosine's scale
        assert all(0.0 < sim <= 1.0 for sim, _row in in_parts[:2])
    finally:
        store.close()


def test_a_closeness_of_older_vectors_is_worked_out_again(
    store: SqliteSessionStore, embedder: SynonymEmbedder, tmp_path: Path
) -> None:
    """A closeness worked out ahead of a search (the prefetch) on vectors that changed since
    is not used: the search asks the vectors as they are now."""
    build_vectors(store.db_path, embedder)
    index = VectorIndex(store.db_path)
    query = embedder.embed([QUESTION])
    before = index.closeness(query, 5)
    assert "target" in [w.file.split(".")[0] for w in index.nearest(query, 5, before)]
    put(tmp_path / "sessions", "newcomer", ["pushes on the breastbone after he fainted"], T0)
    store.reconcile()
    build_vectors(store.db_path, embedder)
    now = [w.file.split(".")[0] for w in index.nearest(query, 20, before)]
    assert "newcomer" in now  # (not in the closeness worked out before)
    assert len(before.close) == len(FILLER) + 2 and index.sessions == len(FILLER) + 3


def test_the_product_with_every_window_is_the_same_split_or_not() -> None:
    """The query's product with a large matrix is split between two threads (where there are
    two cores): the same numbers as one product, for every row."""
    from session_browser.core.index import vectors

    rng = np.random.default_rng(7)
    for rows in (10, vectors.SPLIT_ROWS + 1, 3 * vectors.SPLIT_ROWS):
        matrix = rng.standard_normal((rows, 16)).astype(np.float32)
        vector = rng.standard_normal(16).astype(np.float32)
        got = vectors._product(matrix, vector)
        assert got.shape == (rows,) and got.dtype == np.float32
        assert np.allclose(got, matrix @ vector, rtol=1e-5, atol=1e-5)


def test_a_superseded_prefetch_is_dropped_and_asked_again_later(
    store: SqliteSessionStore, embedder: SynonymEmbedder
) -> None:
    """Typing supersedes a query: a prefetch not yet started when another comes is dropped,
    and the same words prefetched again later are embedded on the prefetch thread."""
    import threading

    build_vectors(store.db_path, embedder)
    semantic = store.semantic
    vectors = VectorIndex(store.db_path)
    release = threading.Event()
    threads: dict[str, str] = {}
    inner = embedder.embed

    def embed(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        threads[texts[0]] = threading.current_thread().name
        if texts[0] == "first words":
            assert release.wait(30)  # holds the prefetch thread
        return inner(texts)

    embedder.embed = embed  # type: ignore[method-assign]
    semantic.prefetch(embedder, "first words", vectors, 5)
    semantic.prefetch(embedder, "second words", vectors, 5)  # waits behind the first
    semantic.prefetch(embedder, "third words", vectors, 5)  # drops the second
    release.set()
    semantic.query_vector(embedder, "third words")
    assert "second words" not in threads  # never embedded
    semantic.prefetch(embedder, "second words", vectors, 5)  # asked again: not skipped
    semantic.query_vector(embedder, "second words")
    assert threads["second words"] == threads["third words"] != threading.current_thread().name
    assert semantic.closeness(embedder, "second words") is not None


def test_a_failed_prefetch_is_not_kept(
    store: SqliteSessionStore, embedder: SynonymEmbedder
) -> None:
    """An embedding that fails on the prefetch thread does not fail the search: the words
    are embedded again on the search's own thread (where a failure would be the search's)."""
    import threading

    build_vectors(store.db_path, embedder)
    semantic = store.semantic
    vectors = VectorIndex(store.db_path)
    inner = embedder.embed
    failures = [MemoryError("once")]
    threads: list[str] = []

    def embed(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        threads.append(threading.current_thread().name)
        if failures:
            raise failures.pop()
        return inner(texts)

    embedder.embed = embed  # type: ignore[method-assign]
    semantic.prefetch(embedder, "some words", vectors, 5)
    got = semantic.query_vector(embedder, "some words")
    assert got.shape == (1, embedder.dim)
    searching = threading.current_thread().name
    assert len(threads) == 2 and threads[0] != searching and threads[1] == searching
    # kept now: asked again, nothing embedded
    assert semantic.query_vector(embedder, "some words") is got and len(threads) == 2
