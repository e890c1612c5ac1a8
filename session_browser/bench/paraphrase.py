"""Questions in other words: recall of a session from its gist, the way a person asks months
later ("which restaurant did I book in Oakland...?" when the session named it).

The question set (``questions.jsonl`` beside this module, JSON lines) was written by reading
sessions of the benchmark corpus (:mod:`session_browser.bench.corpus`) one by one and asking for
each what a person would ask later, in other words than the session's. Each line is
``{"target": ..., "question": ..., "split": "tune" | "held-out"}``:

* ``target`` is a source conversation id (``sgd-<split>-<dialogue>`` or ``chitchat-<uuid>``),
  the corpus's session id with ``-copyN`` / ``-partN`` stripped
  (:func:`~session_browser.bench.sessions.conversation_key`). It names the same conversation at
  every corpus size; every session of that conversation (its copies, the parts of its lineage
  chain) is a right answer. A corpus built from every source conversation (``--sessions``
  unset, or any size from the number of source conversations up) holds every target; a smaller
  corpus is a seeded sample and holds a share of them (the bench says how many).
* Some targets are near-duplicates of other targets (two dialogues booking the same hotel, the
  same concert, the same doctor; several chats on the same prompt): only one detail of the
  question tells them apart.
* ``split``: half the questions tune a method, the other half are held out to report it.

No question holds a *rare* word of its target verbatim: a word of the target conversation whose
document frequency (source conversations holding it) is at most
``max(RARE_MIN_DF, ceil(RARE_DF_SHARE * conversations))``
(:func:`leaked_words`, checked by the tests over the real corpus sources).

The measurement (:func:`run_questions_bench`, ``session-browser bench --questions``) builds the
corpus, indexes it with our store, asks every question through the product's search as it is and
through a plain session-level BM25 reference (:class:`SessionBM25`: a throwaway SQLite FTS5 table
with one row per session, queried with an OR of the question's content words) and through the
lexical-recall experiment (:mod:`session_browser.bench.lexical_recall`), and prints Rank@1,
Recall@10, MRR and query p50/p95 per split for each, and how many wrong first places went to
"hub" sessions (one session taking the first place of three questions or more that it does not
answer).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from session_browser.bench.config import SEARCH_LIMIT, BenchError
from session_browser.bench.data import Conversation
from session_browser.bench.metrics import latency_stats, quality_stats
from session_browser.bench.sessions import (
    JSONDict,
    conversation_key,
    load_session,
    session_messages,
    tokenize,
)
from session_browser.bench.stop_words import STOP_WORDS

QUESTIONS_FILE = "questions.jsonl"
SPLITS = ("tune", "held-out")

#: A word of a target is rare when at most this share of the conversations hold it ...
RARE_DF_SHARE = 0.002
#: ... or at most this many (for small corpora).
RARE_MIN_DF = 5

WARMUP_QUERIES = 3


@dataclass(frozen=True)
class Question:
    """One question of the set: its target conversation, its text and its split."""

    target: str
    question: str
    split: str


def questions_path() -> Path:
    """Where the shipped question set is."""
    return Path(str(resources.files("session_browser.bench").joinpath(QUESTIONS_FILE)))


def load_questions(path: Path | None = None) -> list[Question]:
    """The question set (``path``, else the shipped one), checked: every line a JSON object with
    a non-empty ``target`` and ``question`` and a ``split`` of :data:`SPLITS`, each target once.
    A bad line raises ``ValueError`` naming the file and line."""
    source = questions_path() if path is None else Path(path)
    out: list[Question] = []
    seen: set[str] = set()
    for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{source.name} line {number}"
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{where}: not JSON ({exc})") from None
        if not isinstance(item, dict):
            raise ValueError(f"{where}: not a JSON object")
        target, question, split = item.get("target"), item.get("question"), item.get("split")
        if not isinstance(target, str) or not target.strip():
            raise ValueError(f"{where}: no target")
        if not isinstance(question, str) or not question.strip():
            raise ValueError(f"{where}: no question")
        if split not in SPLITS:
            raise ValueError(f"{where}: split must be one of {', '.join(SPLITS)}")
        if target in seen:
            raise ValueError(f"{where}: target {target} asked twice")
        seen.add(target)
        out.append(Question(target, question, str(split)))
    if not out:
        raise ValueError(f"{source.name}: no questions")
    return out


def content_words(text: str) -> list[str]:
    """The question's words that carry content: lowercase corpus tokens, stop words and
    one-letter tokens aside, each once, in order."""
    seen: dict[str, None] = {}
    for token in tokenize(text):
        if len(token) > 1 and token not in STOP_WORDS:
            seen.setdefault(token, None)
    return list(seen)


# --------------------------------------------------------------------------------------------
# rare words


def rare_limit(conversations: int) -> int:
    """The highest document frequency at which a word still counts as rare."""
    return max(RARE_MIN_DF, math.ceil(RARE_DF_SHARE * conversations))


@dataclass
class Vocabulary:
    """Document frequency over source conversations, and the words of some of them."""

    conversations: int = 0
    df: dict[str, int] = field(default_factory=dict)
    words: dict[str, set[str]] = field(default_factory=dict)  # of the wanted conversations

    @property
    def limit(self) -> int:
        return rare_limit(self.conversations)


def conversation_vocabulary(
    conversations: Iterable[Conversation], wanted: Iterable[str]
) -> Vocabulary:
    """Count each word once per conversation over ``conversations`` (streamed), keeping the
    word sets of the ``wanted`` conversation ids."""
    keep = set(wanted)
    vocab = Vocabulary()
    for conv in conversations:
        words = {w for turn in conv.turns for w in tokenize(turn.text)}
        vocab.conversations += 1
        for word in words:
            vocab.df[word] = vocab.df.get(word, 0) + 1
        if conv.base_id in keep:
            vocab.words[conv.base_id] = words
    return vocab


def leaked_words(
    question: str, target_words: set[str], df: Mapping[str, int], limit: int
) -> list[str]:
    """The words of ``question`` that are rare words of its target (held by the target and by
    at most ``limit`` conversations), sorted: the question gives the session's own rare words
    away. Empty for a fair question."""
    return sorted({w for w in tokenize(question) if w in target_words and df.get(w, 0) <= limit})


# --------------------------------------------------------------------------------------------
# the plain BM25 reference


def session_text(data: JSONDict) -> str:
    """Every message's text of a session (archived turns included), one per line."""
    parts = [m.get("content") for m in session_messages(data)]
    return "\n".join(p for p in parts if isinstance(p, str))


class SessionBM25:
    """Plain session-level BM25: one FTS5 row per readable session, a question asked as an OR
    of its content words (:func:`content_words`), ranked by FTS5's ``bm25()``. Nothing else: no
    recency, no phrase or proximity, no field weights."""

    def __init__(self, db_path: Path) -> None:
        self.conn = sqlite3.connect(str(db_path))
        self.conn.execute("PRAGMA journal_mode=OFF")
        self.conn.execute("PRAGMA synchronous=OFF")
        self.conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS doc USING fts5("
            "body, tokenize='unicode61 remove_diacritics 2')"
        )
        self.ids: list[str] = []

    def add_all(self, sessions: Iterable[tuple[str, str]]) -> None:
        """Add ``(session id, text)`` rows in one transaction."""
        with self.conn:
            for sid, text in sessions:
                self.ids.append(sid)
                self.conn.execute(
                    "INSERT INTO doc(rowid, body) VALUES (?, ?)", (len(self.ids), text)
                )

    def search(self, question: str, limit: int = SEARCH_LIMIT) -> list[str]:
        words = content_words(question)
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = self.conn.execute(
            "SELECT rowid FROM doc WHERE doc MATCH ? ORDER BY bm25(doc) LIMIT ?", (match, limit)
        ).fetchall()
        return [self.ids[r[0] - 1] for r in rows]

    def close(self) -> None:
        self.conn.close()


# --------------------------------------------------------------------------------------------
# resolving targets in a built store


def readable_sessions(sessions_dir: Path) -> Iterable[tuple[str, JSONDict]]:
    """``(session id, parsed session)`` of every readable session file, sorted by file name."""
    for path in sorted(Path(sessions_dir).glob("*.json")):
        data = load_session(path)
        if data is not None:
            yield str(data.get("session_id") or path.stem), data


def resolve_targets(
    questions: Sequence[Question], session_ids: Iterable[str]
) -> dict[str, set[str]]:
    """The session ids answering each target (its readable sessions: the conversation, its
    copies, the parts of its chain); targets absent from the store are left out."""
    wanted = {q.target for q in questions}
    out: dict[str, set[str]] = {}
    for sid in session_ids:
        key = conversation_key(sid)
        if key in wanted:
            out.setdefault(key, set()).add(sid)
    return out


def rank_of(hits: Sequence[str], relevant: set[str]) -> int | None:
    """1-based position of the first relevant hit, or None."""
    for i, sid in enumerate(hits, 1):
        if sid in relevant:
            return i
    return None


Searcher = Callable[[str, int], list[str]]


def ask_all(
    search: Searcher, questions: Sequence[Question], relevant: Mapping[str, set[str]]
) -> list[JSONDict]:
    """Ask every resolved question (after a few unrecorded warm-up questions): its rank, its
    wall time, and the error if the search raised (an error ranks nowhere and is not timed)."""
    asked = [q for q in questions if q.target in relevant]
    for q in asked[:WARMUP_QUERIES]:
        with contextlib.suppress(Exception):  # a failing engine is counted below
            search(q.question, SEARCH_LIMIT)
    answers: list[JSONDict] = []
    for q in asked:
        t0 = time.perf_counter()
        try:
            hits = search(q.question, SEARCH_LIMIT)
        except Exception as exc:  # counted, shown in the report
            answers.append(
                {
                    "target": q.target,
                    "split": q.split,
                    "rank": None,
                    "error": f"{type(exc).__name__}: {exc}",
                }
            )
            continue
        seconds = time.perf_counter() - t0
        answers.append(
            {
                "target": q.target,
                "split": q.split,
                "seconds": seconds,
                "rank": rank_of(hits, relevant[q.target]),
                "hits": len(hits),
                "top": hits[0] if hits else None,
            }
        )
    return answers


#: A session taking the wrong first place of at least this many questions is a hub.
HUB_WINS = 3


def hub_wins(answers: Sequence[JSONDict]) -> dict[str, int]:
    """Sessions that took the first place of :data:`HUB_WINS` or more questions they do not
    answer, with how many."""
    wins: dict[str, int] = {}
    for a in answers:
        top = a.get("top")
        if top is not None and a.get("rank") != 1:
            wins[top] = wins.get(top, 0) + 1
    return {
        sid: n for sid, n in sorted(wins.items(), key=lambda kv: (-kv[1], kv[0])) if n >= HUB_WINS
    }


def answer_stats(answers: Sequence[JSONDict]) -> JSONDict:
    """Rank@1, Recall@5/10, MRR, latency and errors of some answers."""
    timed = [float(a["seconds"]) for a in answers if "seconds" in a]
    return quality_stats([a["rank"] for a in answers]) | {
        "latency": latency_stats(timed),
        "errors": sum(1 for a in answers if "error" in a),
    }


def summarize(answers: Sequence[JSONDict]) -> JSONDict:
    """:func:`answer_stats` per split and over all questions."""
    return {
        split: answer_stats([a for a in answers if split == "all" or a["split"] == split])
        for split in (*SPLITS, "all")
    }


# --------------------------------------------------------------------------------------------
# the measurement


@dataclass
class QuestionsOptions:
    """What ``bench --questions`` measures."""

    sessions: int | None = None
    seed: int = 7
    workdir: Path | None = None
    keep: bool = False
    sgd_path: Path | None = None
    questions: Path | None = None
    engines: tuple[str, ...] = ("ours", "bm25", "recall", "gated")
    known_items: int = 200  # known-item queries asked of every engine too (0: none)


#: ``bench --questions --mode hybrid``: our search in both modes, side by side.
HYBRID_ENGINES = ("ours", "hybrid", "meaning", "bm25")


ENGINE_LABELS = {
    "ours": "ours, lexical mode",
    "hybrid": "ours, hybrid mode",
    "meaning": "meaning alone (hybrid's other part)",
    "bm25": "plain session BM25 (reference)",
    "recall": "lexical recall (experiment)",
    "gated": "ours, else lexical recall (exp.)",
}


def run_questions_bench(
    options: QuestionsOptions, progress: Callable[[str], None] = lambda _m: None
) -> JSONDict:
    """Build the corpus, index it, ask every question of the set through each engine; the
    report (JSON-able). Raises :class:`BenchError` when nothing can be measured."""
    from session_browser.bench.corpus import build_corpus, corpus_sources

    try:
        questions = load_questions(options.questions)
    except (OSError, ValueError) as exc:
        raise BenchError(f"question set: {exc}") from None
    unknown = [e for e in options.engines if e not in ENGINE_LABELS]
    if unknown:
        raise BenchError(f"unknown engine {unknown[0]!r}")
    base = Path(tempfile.mkdtemp(prefix="sb-questions-", dir=options.workdir))
    try:
        home = base / "home"
        progress(f"building the corpus ({options.sessions or 'every conversation once'})")
        t0 = time.perf_counter()
        info = build_corpus(
            home, sessions=options.sessions, seed=options.seed, sgd_path=options.sgd_path
        )
        built = time.perf_counter() - t0
        sessions = list(readable_sessions(info.sessions_dir))
        relevant = resolve_targets(questions, (sid for sid, _ in sessions))
        if not relevant:
            raise BenchError(
                "no question's target is in this corpus (the set targets the SGD + chitchat corpus)"
            )
        report: JSONDict = {
            "corpus": {
                "sessions": info.session_count,
                "messages": info.message_count,
                "sources": corpus_sources(info),
                "seed": options.seed,
                "build_seconds": built,
            },
            "questions": {
                "total": len(questions),
                "resolved": len(relevant),
                "by_split": {
                    s: sum(1 for q in questions if q.split == s and q.target in relevant)
                    for s in SPLITS
                },
                "missing": sorted(q.target for q in questions if q.target not in relevant),
            },
            "engines": {},
        }
        known_qs: list[Question] = []
        known_relevant: dict[str, set[str]] = {}
        if options.known_items > 0:
            from session_browser.bench.queries import make_queries

            progress(f"generating {options.known_items} known-item queries")
            for i, item in enumerate(make_queries(info, n=options.known_items, seed=options.seed)):
                key = f"known-{i}"
                known_qs.append(Question(key, item.query, item.slice))
                known_relevant[key] = set(item.relevant)
            report["known_items"] = len(known_qs)
        for engine in options.engines:
            progress(f"{ENGINE_LABELS[engine]}: preparing")
            t0 = time.perf_counter()
            if engine == "hybrid":
                search, close, cost = _open_hybrid(info.sessions_dir, base, progress)
                report["embedding"] = _embedding_cost(cost, info.message_count, info.sessions_dir)
            else:
                search, close = _open_engine(engine, info.sessions_dir, sessions, base)
            prepared = time.perf_counter() - t0
            try:
                progress(f"{ENGINE_LABELS[engine]}: asking {len(relevant)} questions")
                answers = ask_all(search, questions, relevant)
                known = ask_all(search, known_qs, known_relevant) if known_qs else []
            finally:
                close()
            report["engines"][engine] = {
                "label": ENGINE_LABELS[engine],
                "prepare_seconds": prepared,
                "splits": summarize(answers),
                "hubs": hub_wins(answers),
                "answers": answers,
            }
            if known:
                report["engines"][engine]["known"] = answer_stats(known)
        found = report["engines"]
        if "ours" in found and "meaning" in found:
            report["ceiling"] = ceiling(found["ours"]["answers"], found["meaning"]["answers"])
        return report
    finally:
        if options.keep:
            progress(f"kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)


def _in_mode(mode: str, search: Searcher) -> Searcher:
    """``search`` run in search ``mode`` (whatever the environment says)."""
    from session_browser.core.search.hybrid import ENV

    def run(query: str, limit: int) -> list[str]:
        before = os.environ.get(ENV)
        os.environ[ENV] = mode
        try:
            return search(query, limit)
        finally:
            if before is None:
                del os.environ[ENV]
            else:
                os.environ[ENV] = before

    return run


def _open_hybrid(
    sessions_dir: Path, base: Path, progress: Callable[[str], None]
) -> tuple[Searcher, Callable[[], None], JSONDict]:
    """Our store in hybrid mode: indexed, then its vectors embedded by a process of its own
    (:mod:`session_browser.bench.embedding`: its time and peak memory measured)."""
    from session_browser.bench.stores import hit_ids
    from session_browser.core.index import SqliteSessionStore
    from session_browser.core.paths import package_env

    store = SqliteSessionStore(
        sessions_dir, db_path=base / "hybrid.db", reconcile="none", vault=False
    )
    try:
        store.reconcile()
        progress("ours, hybrid mode: embedding (a process of its own)")
        t0 = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-m", "session_browser.bench.embedding", store.db_path],
            stdout=subprocess.PIPE,
            env=package_env(),
            start_new_session=True,  # (it and its pool's workers: one group to end)
        )
        try:
            out, _err = child.communicate()
        except BaseException:  # interrupted: the embedding and its workers end with the bench
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            raise
        wall = time.perf_counter() - t0
        if child.returncode != 0:
            raise BenchError(f"embedding failed (exit status {child.returncode})")
        cost: JSONDict = json.loads(out) | {"wall_seconds": wall, "load": os.getloadavg()}
    except BaseException:
        store.close()
        raise

    def search(query: str, limit: int) -> list[str]:
        return hit_ids(store.search(query, limit=limit))

    return _in_mode("hybrid", search), store.close, cost


def _embedding_cost(cost: JSONDict, messages: int, sessions_dir: Path) -> JSONDict:
    """The embedding's cost, and per 100k messages."""
    json_bytes = sum(p.stat().st_size for p in Path(sessions_dir).glob("*.json"))
    per = 100_000 / max(messages, 1)
    return cost | {
        "messages": messages,
        "seconds_per_100k_messages": cost["seconds"] * per,
        "bytes_per_100k_messages": cost["bytes"] * per,
        "json_bytes": json_bytes,
        "bytes_to_json": cost["bytes"] / max(json_bytes, 1),
    }


def _open_meaning(base: Path) -> tuple[Searcher, Callable[[], None]]:
    """The ranking hybrid mode fuses with the lexical one, alone: the sessions nearest the
    question by meaning, over the vectors the hybrid engine embedded (it runs first)."""
    import sqlite3
    from contextlib import closing

    from session_browser.core.embed import embedder_named
    from session_browser.core.index.vectors import VectorIndex, VectorsUnavailable
    from session_browser.core.search.hybrid import question_parts

    db = base / "hybrid.db"
    vectors = VectorIndex(db)
    try:
        vectors.load()
        embedder = embedder_named(vectors.model)
    except (VectorsUnavailable, RuntimeError) as exc:
        raise BenchError(f"meaning alone needs the hybrid engine's vectors: {exc}") from None
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        session_of = dict(conn.execute("SELECT file, session_id FROM sessions").fetchall())

    def nearest(query: str, limit: int) -> list[str]:
        found = vectors.nearest(embedder.embed([query, *question_parts(query)]), limit)
        return [session_of[w.file] for w in found if w.file in session_of]

    return nearest, lambda: None


def ceiling(lexical: Sequence[JSONDict], meaning: Sequence[JSONDict]) -> JSONDict:
    """How often the target is first, and in the top 10, of either ranking (lexical mode's,
    meaning's alone): what a fusion of the two can reach without finding a target neither
    ranks well."""
    by_target = {a["target"]: a.get("rank") for a in meaning}
    n = len(lexical)
    first = top = 0
    for a in lexical:
        ranks = [r for r in (a.get("rank"), by_target.get(a["target"])) if r is not None]
        first += any(r == 1 for r in ranks)
        top += any(r <= 10 for r in ranks)
    return {"n": n, "either_first": first / max(n, 1), "either_top10": top / max(n, 1)}


def _open_engine(
    engine: str, sessions_dir: Path, sessions: Sequence[tuple[str, JSONDict]], base: Path
) -> tuple[Searcher, Callable[[], None]]:
    if engine == "meaning":
        return _open_meaning(base)
    if engine in ("ours", "gated"):
        from session_browser.bench.stores import hit_ids
        from session_browser.core.index import SqliteSessionStore

        store = SqliteSessionStore(
            sessions_dir, db_path=base / f"{engine}.db", reconcile="none", vault=False
        )
        store.reconcile()

        def lexically(query: str, limit: int) -> list[str]:
            return hit_ids(store.search(query, limit=limit))

        ours = _in_mode("lexical", lexically)

        if engine == "ours":
            return ours, store.close
        from session_browser.bench.lexical_recall import LexicalRecall

        recall = LexicalRecall.build(
            ((sid, session_messages(data)) for sid, data in sessions), messages=True
        )

        def gated(query: str, limit: int) -> list[str]:
            # a message holding every word: today's search; else coverage over sessions
            if recall.one_message_holds_all(query):
                return ours(query, limit)
            return recall.search(query, limit)

        return gated, store.close
    if engine == "bm25":
        bm25 = SessionBM25(base / "bm25.db")
        bm25.add_all((sid, session_text(data)) for sid, data in sessions)
        return bm25.search, bm25.close
    if engine == "recall":
        from session_browser.bench.lexical_recall import LexicalRecall

        recall = LexicalRecall.build((sid, session_messages(data)) for sid, data in sessions)
        return recall.search, lambda: None
    raise BenchError(f"unknown engine {engine!r}")


# --------------------------------------------------------------------------------------------
# the text report


def _pct(value: object) -> str:
    return "-" if not isinstance(value, (int, float)) else f"{100 * value:5.1f}%"


def _ms(value: object) -> str:
    return "-" if not isinstance(value, (int, float)) else f"{1000 * value:6.1f} ms"


def format_questions_report(report: JSONDict) -> str:
    """The report as text: one row per engine and split."""
    corpus, qs = report["corpus"], report["questions"]
    lines = [
        "Questions in other words (recall of a session from its gist)",
        f"corpus: {corpus['sessions']} sessions, {corpus['messages']} messages "
        f"({corpus['sources']}, seed {corpus['seed']})",
        f"questions: {qs['resolved']} of {qs['total']} targets in this corpus "
        f"({', '.join(f'{k} {v}' for k, v in qs['by_split'].items())})",
        "",
        f"{'engine':34} {'split':9} {'n':>4} {'Rank@1':>7} {'Rec@10':>7} {'MRR':>6} "
        f"{'p50':>9} {'p95':>9} {'errors':>6}",
    ]
    for engine in report["engines"].values():
        rows = [(split, engine["splits"][split]) for split in (*SPLITS, "all")]
        if "known" in engine:
            rows.append(("known", engine["known"]))
        for split, row in rows:
            lat = row["latency"]
            mrr = row["mrr"]
            lines.append(
                f"{engine['label']:34} {split:9} {row['n']:>4} {_pct(row['rank1']):>7} "
                f"{_pct(row['recall10']):>7} "
                f"{('-' if mrr is None else f'{mrr:.3f}'):>6} "
                f"{_ms(lat['p50']):>9} {_ms(lat['p95']):>9} {row['errors']:>6}"
            )
    lines.append("")
    if "known_items" in report:
        lines += [
            f"known: {report['known_items']} known-item queries (the session's own words, "
            "as bench generates them) asked of every engine",
            "",
        ]
    for engine in report["engines"].values():
        hubs = engine["hubs"]
        lines.append(
            f"{engine['label']}: {sum(hubs.values())} wrong first places went to "
            f"{len(hubs)} hub session(s)"
            + (f" (most: {next(iter(hubs))}, {next(iter(hubs.values()))})" if hubs else "")
        )
    if qs["missing"]:
        lines += ["", f"targets not in this corpus: {len(qs['missing'])}"]
    top = report.get("ceiling")
    if top:
        lines += [
            "",
            f"either ranking (lexical mode's, meaning's alone) has the target first for "
            f"{_pct(top['either_first']).strip()} of the questions, in its top 10 for "
            f"{_pct(top['either_top10']).strip()}: the most a fusion of the two reaches without "
            "finding a target neither ranks well",
        ]
    cost = report.get("embedding")
    if cost:
        load = ", ".join(f"{x:.2f}" for x in cost["load"])
        lines += [
            "",
            f"embedding ({cost['model']}, {cost.get('workers', 1)} worker process(es), BLAS on 1 "
            "thread each): "
            f"{cost['sessions']} sessions, {cost['windows']} windows"
            + (
                f" ({cost['windows'] - cost['windows_embedded']} repeating a text embedded "
                "before: the corpus repeats conversations)"
                if "windows_embedded" in cost
                else ""
            )
            + f" in {cost['seconds']:.1f} s "
            f"(+ {cost['load_seconds']:.1f} s loading the model); "
            f"{cost['seconds_per_100k_messages']:.0f} s per 100k messages; load average "
            f"after: {load}",
            f"vectors: {cost['bytes'] / 1e6:.1f} MB ({cost['bytes_per_100k_messages'] / 1e6:.1f} "
            f"MB per 100k messages, {cost['bytes_to_json']:.3f}x the JSON's "
            f"{cost['json_bytes'] / 1e6:.1f} MB); peak memory of the largest embedding process "
            f"{cost['peak_rss_bytes'] / 1e6:.0f} MB",
        ]
    return "\n".join(lines)
