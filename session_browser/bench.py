"""The benchmark: build speed, freshness, latency and known-item quality of every store.

``session-browser bench`` (or ``python -m session_browser.bench``) either builds a corpus of
real conversations into a temporary PraisonAI home (:func:`session_browser.corpus.build_corpus`)
or copies an existing store, generates known-item queries from it
(:func:`session_browser.corpus.make_queries`), and measures, side by side:

- ``ours``: :class:`session_browser.core.index.SqliteSessionStore` (the FTS5 index);
- ``scan``: :class:`session_browser.core.store.DefaultSessionStore` (a full scan per query);
- ``praisonai-json`` and ``praisonai-sqlite``: PraisonAI's own ``DefaultSessionStore`` and
  ``SqliteSessionStore``, when ``praisonaiagents`` is installed.

Pi stores (``--store pi:DIR``, or ``--pi`` to build the corpus as Pi JSONL files) are measured
with ``pi`` (:class:`session_browser.core.pi_index.PiIndexStore`) and ``pi-scan``
(:class:`session_browser.core.sources.pi.PiStore`); PraisonAI's stores and our JSON stores do not
read Pi files. ``--mixed`` writes half the corpus as PraisonAI JSON and half as Pi JSONL and
measures ``group``: both opened as one :class:`session_browser.core.multi.StoreGroup`
(:func:`session_browser.core.stores.open_stores`), which ranks the hits of both together.

Pi corpus: every session of the JSON corpus becomes ``<root>/--proj--/<id>.jsonl``
(:func:`session_browser.core.sources.pi_jsonl`, ``cwd=/proj``): the same user and assistant turns,
archived turns before a ``compaction`` entry, spilled turns included; a corrupt JSON file is
copied as it is (no session header: the reader skips it). The queries are those of the JSON
corpus (same seed, same method), and their relevant sets are recomputed on the Pi text read
back (:func:`session_browser.core.sources.read_pi_session`): Pi has no lineage chains, so only
the chain parts that hold the words stay relevant. An existing Pi store is read back the same
way and its queries generated from that read-back.

Every store works on its own copy of the session dir inside a private work dir, so nothing
touches the store being measured (PraisonAI's stores create ``.lock`` files beside sessions
and move corrupt files aside, and the update phase changes sessions). Each phase of each store
runs in a fresh interpreter (``python -m session_browser.bench --phase ...``), so its peak RSS
and timings are its own. PraisonAI's slow parts are capped: a phase that runs past
``peer_timeout`` seconds is stopped (its index build rate is then extrapolated from the rows it
wrote), and PraisonAI's stores answer only ``peer_queries`` of the queries.

Beside the stores, and independent of the corpus (each skippable): a session holding one
message of ``"ab ab ab ..."`` (``big_message_mb``, 50 MB) answers ``search``, ``recent`` and
``show`` in one fresh process (peak RSS against 4x the file size), ``show`` of an 8 MB
message is timed (under 2 s), and 1, 4 and 8 writer processes each ``add_message``
``write_messages`` times into 4 sessions while 2 processes search (writes/s, p95 write latency,
and every message counted back from the files: none lost, none duplicated). Our index is also
built and queried in one process, whose peak RSS must stay under 300 MB.

Errors and empty answers are counted apart and never timed; a target measured on answers the
store did not give fails, and the text report shows them.

Metrics (known-item search, ``limit=10``): a query's rank is the position of the first hit
whose session id is in the query's relevant set. Rank@1 is the share of queries whose top hit
is relevant, Recall@k the share with a relevant hit in the top k, MRR the mean of 1/rank (0
when no relevant hit is in the top 10). Latencies are warm (the store open, a few queries run
first); percentiles are nearest-rank.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

JSONDict = dict[str, Any]
Progress = Callable[[str], None]

SCHEMA = "session-browser-bench/1"

OURS = "ours"
SCAN = "scan"
PRAISON_JSON = "praisonai-json"
PRAISON_SQLITE = "praisonai-sqlite"
STORE_KINDS = (OURS, SCAN, PRAISON_JSON, PRAISON_SQLITE)
STORE_LABELS = {
    OURS: "ours (indexed)",
    SCAN: "ours (scan)",
    PRAISON_JSON: "PraisonAI JSON",
    PRAISON_SQLITE: "PraisonAI SQLite",
}
PEERS = (PRAISON_JSON, PRAISON_SQLITE)
PI = "pi"
PI_SCAN = "pi-scan"
GROUP = "group"
PI_KINDS = (PI, PI_SCAN)
MIXED_KINDS = (GROUP,)
ALL_KINDS = (*STORE_KINDS, *PI_KINDS, *MIXED_KINDS)
STORE_LABELS |= {
    PI: "ours (Pi index)",
    PI_SCAN: "ours (Pi scan)",
    GROUP: "ours (JSON + Pi)",
}
#: Which stores measure which corpus format.
FORMAT_KINDS = {"json": STORE_KINDS, "pi": PI_KINDS, "mixed": MIXED_KINDS}
#: Indexed stores (a cold build, a reopen, a reconcile after an outside change).
INDEXED_KINDS = (OURS, PRAISON_SQLITE, PI, GROUP)
#: Stores that cannot be written to (no write-through phase).
READ_ONLY_KINDS = (PI, PI_SCAN)
PI_PROJECT_CWD = "/proj"
PI_PROJECT_DIR = "--proj--"

SEARCH_LIMIT = 10
COMMON_WORDS = 20
UPDATE_REPEATS = 5
OUR_RECENT_REPEATS = 50
SCAN_RECENT_REPEATS = 3
WARMUP_QUERIES = 3
MISSING_WORD = "zqxjvkbenchprobe"
_WORD_RE = re.compile(r"[^\W\d_]+")

# name, what it checks, comparison, threshold, unit
TARGETS: tuple[tuple[str, str, str, float, str], ...] = (
    ("build_rate", "cold build rate", ">=", 50_000.0, "msgs/s"),
    ("reopen", "reopen up-to-date index", "<", 0.3, "s"),
    ("update_outside", "one changed session re-indexed", "<", 0.050, "s"),
    ("p95_known", "search p95 (known-item)", "<", 0.010, "s"),
    ("p95_common", "search p95 (common words)", "<", 0.010, "s"),
    ("recent", "recent(50) p95", "<", 0.020, "s"),
    ("size_ratio", "index size / JSON size", "<=", 1.5, "x"),
    ("build_rss", "peak RSS while building", "<", 300.0, "MB"),
    ("build_search_rss", "peak RSS, one process building the index and answering the queries",
     "<", 300.0, "MB"),
    ("rank1", "Rank@1", ">=", 0.95, ""),
    ("recall10", "Recall@10", ">=", 0.99, ""),
)
# targets on the whole run, not one store
RUN_TARGETS: tuple[tuple[str, str, str, float, str], ...] = (
    ("scan_vs_praisonai", "ours (scan) / PraisonAI JSON, search p50 (known-item)", "<=", 1.0,
     "x"),
    ("big_message_rss", "peak RSS of search+recent+show on a one-message file / file size",
     "<", 4.0, "x"),
    ("show_big", "show of one big message", "<", 2.0, "s"),
    ("writes_intact", "messages lost or duplicated by parallel writers", "<=", 0.0, "n"),
)


LEGEND = (
    "cold index build: no index file, open the store and index every session (PraisonAI: its "
    "first search builds its index); messages/s counts archived+active messages.",
    "reopen: a fresh process opens the up-to-date index and checks every file's identity "
    "(PraisonAI: a new store's first search).",
    "outside change -> fresh: another process rewrites one session file; ours: reconcile(); "
    "PraisonAI SQLite: a new store's first search (it has no reconcile); median of "
    f"{UPDATE_REPEATS} (1 for PraisonAI). write through store: add_message(), median.",
    "search: warm, limit=10; known-item queries and the 20 most frequent words alone and in "
    "pairs. Rank@1 / Recall@k: share of queries with a relevant session first / in the top k; "
    "MRR: mean 1/rank.",
)


PI_LEGEND = (
    "Pi: an outside change appends one user turn to the session's JSONL file, as Pi does; "
    "Pi reads resumed: re-reads that started at the byte offset where the index stopped.",
    "JSON + Pi: a PraisonAI JSON store and a Pi store opened as one group; outside changes "
    "alternate between them, writes go through the JSON store; hits are ranked together.",
)


class BenchError(Exception):
    """The benchmark cannot run (bad store path, missing corpus data, ...)."""


@dataclass
class BenchOptions:
    """What to measure. ``store``/``home`` pick an existing store; else a corpus is built."""

    store: Path | None = None
    home: Path | None = None
    sessions: int | None = None
    seed: int = 7
    queries: int = 200
    peers: bool = True
    peer_queries: int = 20
    peer_timeout: float = 300.0
    keep: bool = False
    workdir: Path | None = None
    sgd_path: Path | None = None
    sgd: bool = True  # False: build the corpus from pip-installable data only (chitchat + demo)
    stores: tuple[str, ...] = ALL_KINDS
    pi_store: Path | None = None  # an existing Pi session dir
    pi: bool = False  # build the corpus as Pi JSONL files
    mixed: bool = False  # build half the corpus as PraisonAI JSON, half as Pi JSONL
    big_message: bool = True  # the one-message file and the big show
    big_message_mb: float = 50.0
    show_message_mb: float = 8.0
    contention: bool = True  # writers and readers in parallel processes
    write_messages: int = 100  # add_message calls per writer process
    heavy_timeout: float = 120.0  # seconds for each of those runs (then FAIL)

    @property
    def format(self) -> str:
        """``json``, ``pi`` or ``mixed``: how the measured sessions are stored."""
        if self.pi or self.pi_store is not None:
            return "pi"
        return "mixed" if self.mixed else "json"


@dataclass
class Query:
    """A known-item query as the harness uses it."""

    query: str
    relevant: list[str]
    slice: str
    target_id: str = ""
    n: int = 0  # position in the query list

    def to_json(self) -> JSONDict:
        return {
            "n": self.n,
            "query": self.query,
            "relevant": self.relevant,
            "slice": self.slice,
            "target_id": self.target_id,
        }

    @classmethod
    def from_json(cls, data: JSONDict) -> Query:
        return cls(
            query=str(data["query"]),
            relevant=[str(x) for x in data["relevant"]],
            slice=str(data.get("slice", "")),
            target_id=str(data.get("target_id", "")),
            n=int(data.get("n", 0)),
        )


@dataclass
class CorpusStats:
    """What is in a session dir: counts, sizes and the most frequent words."""

    files: int = 0
    sessions: int = 0
    unreadable: int = 0
    messages: int = 0
    archived_messages: int = 0
    json_bytes: int = 0
    top_words: list[str] = field(default_factory=list)

    def to_json(self) -> JSONDict:
        return {
            "files": self.files,
            "sessions": self.sessions,
            "unreadable": self.unreadable,
            "messages": self.messages,
            "archived_messages": self.archived_messages,
            "json_bytes": self.json_bytes,
            "top_words": self.top_words,
        }


# --------------------------------------------------------------------------- small helpers


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (``q`` in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100.0 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def latency_stats(values: Sequence[float]) -> JSONDict:
    """n, p50, p95, p99, max and mean of latencies in seconds."""
    return {
        "n": len(values),
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "p99": percentile(values, 99),
        "max": max(values) if values else None,
        "mean": (sum(values) / len(values)) if values else None,
    }


def answered_latency(answers: Sequence[JSONDict]) -> JSONDict:
    """:func:`latency_stats` over the answers that came back with hits, plus how many did
    not: ``errors`` (the store raised) and ``no_hits`` (it answered nothing). Neither kind is
    timed: a latency target is judged only on answers the store really gave."""
    errors = sum(1 for a in answers if a.get("error"))
    no_hits = sum(1 for a in answers if not a.get("error") and a.get("hits", 1) == 0)
    timed = [a["seconds"] for a in answers if not a.get("error") and a.get("hits", 1) != 0]
    # every answer the store gave, empty or not: the fair side-by-side of two stores that
    # find different things
    answered = [a["seconds"] for a in answers if not a.get("error")]
    return latency_stats(timed) | {
        "errors": errors,
        "no_hits": no_hits,
        "asked": len(answers),
        "p50_answered": percentile(answered, 50),
    }


def quality_stats(ranks: Sequence[int | None]) -> JSONDict:
    """Rank@1, Recall@5, Recall@10 and MRR over ranks (1-based; None = not in the top 10)."""
    n = len(ranks)
    if not n:
        return {"n": 0, "rank1": None, "recall5": None, "recall10": None, "mrr": None}

    def share(k: int) -> float:
        return sum(1 for r in ranks if r is not None and r <= k) / n

    mrr = sum(1.0 / r for r in ranks if r is not None and r <= SEARCH_LIMIT) / n
    return {"n": n, "rank1": share(1), "recall5": share(5), "recall10": share(10), "mrr": mrr}


def source_stats(known: Sequence[JSONDict]) -> JSONDict:
    """Where the hits of the known-item queries come from: hits per source in the top 10,
    queries whose top 10 holds two sources or more, queries with relevant hits from two
    sources or more (copies of one conversation in both stores), and the source of the first
    relevant hit."""
    top: Counter[str] = Counter()
    first: Counter[str] = Counter()
    mixed = relevant_mixed = 0
    for k in known:
        sources = [s or "?" for s in k.get("sources") or []]
        top.update(sources)
        mixed += len(set(sources)) > 1
        relevant_mixed += len(k.get("relevant_sources") or ()) > 1
        if k.get("relevant_source") is not None:
            first[k["relevant_source"] or "?"] += 1
    return {
        "top10": dict(sorted(top.items())),
        "queries": len(known),
        "queries_with_several": mixed,
        "relevant_from_several": relevant_mixed,
        "first_relevant": dict(sorted(first.items())),
    }


def first_relevant_rank(hit_ids: Sequence[str], relevant: Iterable[str]) -> int | None:
    """1-based position of the first relevant id, or None."""
    wanted = set(relevant)
    for pos, sid in enumerate(hit_ids, start=1):
        if sid in wanted:
            return pos
    return None


def dir_json_bytes(path: Path) -> int:
    total = 0
    with os.scandir(path) as entries:
        for entry in entries:
            if entry.name.endswith(".json") and entry.is_file():
                total += entry.stat().st_size
    return total


def db_bytes(db_path: Path) -> int:
    """Size of a SQLite database with its WAL and shared-memory files."""
    total = 0
    for suffix in ("", "-wal", "-shm", "-journal"):
        p = Path(str(db_path) + suffix)
        if p.exists():
            total += p.stat().st_size
    return total


def remove_db(db_path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(str(db_path) + suffix).unlink(missing_ok=True)


def max_rss_mb() -> float:
    """This process's peak RSS in MB.

    Linux's ``VmHWM`` belongs to this program alone; ``ru_maxrss`` would also count the parent's
    RSS at the fork that started it (the kernel carries it across ``exec``).
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if sys.platform == "darwin":
        return rss / (1024 * 1024)
    return rss / 1024


def _message_text(message: JSONDict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            p if isinstance(p, str) else str(p.get("text", ""))
            for p in content
            if isinstance(p, (str, dict))
        )
    return ""


def _count_session(stats: CorpusStats, words: Counter[str], data: JSONDict) -> None:
    stats.sessions += 1
    for key in ("archived_messages", "messages"):
        items = data.get(key)
        if not isinstance(items, list):
            continue
        for item in items:
            if not isinstance(item, dict):
                continue
            stats.messages += 1
            if key == "archived_messages":
                stats.archived_messages += 1
            words.update(_WORD_RE.findall(_message_text(item).lower()))


def corpus_stats(
    session_dir: Path | None, *, pi_dir: Path | None = None, top: int = COMMON_WORDS
) -> CorpusStats:
    """Count sessions, messages and bytes of a session dir and/or a Pi session dir (its
    ``*.jsonl`` files, read as the index reads them) and find their most frequent words."""
    stats = CorpusStats()
    words: Counter[str] = Counter()
    names: list[str] = []
    if session_dir is not None:
        with os.scandir(session_dir) as entries:
            names = sorted(e.name for e in entries if e.name.endswith(".json") and e.is_file())
    for name in names:
        assert session_dir is not None
        path = session_dir / name
        try:
            raw = path.read_bytes()
        except OSError:
            stats.unreadable += 1
            continue
        stats.files += 1
        stats.json_bytes += len(raw)
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            try:
                data = json.loads(raw.decode("utf-8"))
            except (ValueError, RecursionError):
                stats.unreadable += 1
                continue
        if not isinstance(data, dict):
            stats.unreadable += 1
            continue
        _count_session(stats, words, data)
    if pi_dir is not None:
        from session_browser.core.pi_index import scan_pi_dir
        from session_browser.core.sources.pi import read_pi_session

        for rel, ident in sorted(scan_pi_dir(pi_dir).items()):
            stats.files += 1
            stats.json_bytes += ident[0]
            try:
                session = read_pi_session(pi_dir / rel)
            except (OSError, ValueError):
                stats.unreadable += 1
                continue
            if session.header is None:
                stats.unreadable += 1
                continue
            _count_session(stats, words, session.data)
    stats.top_words = [w for w, _ in words.most_common(top)]
    return stats


# --------------------------------------------------------------------------- Pi corpora


def pi_readback(pi_dir: Path, dest: Path) -> int:
    """Write every Pi session of ``pi_dir`` as read back (``read_pi_session(p).data``) into
    ``dest`` as ``<safe id>.json``, PraisonAI's layout, for the query generator. Files without
    a session header are left out; the first file of a session id wins. Pi's own automated
    rule (:func:`~session_browser.core.sources.pi.pi_is_automated`, user turns an hour) decides
    which sessions are automated, as in the Pi index: an automated session is tagged
    ``metadata.automated``, and the others lose their message timestamps, so the generator's
    rate rule (every message an hour) does not exclude coding sessions full of quick turns.
    Returns the count."""
    from session_browser.core.pi_index import scan_pi_dir
    from session_browser.core.sources.pi import pi_is_automated, read_pi_session
    from session_browser.corpus import safe_id

    dest.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    for rel in sorted(scan_pi_dir(pi_dir)):
        try:
            session = read_pi_session(pi_dir / rel)
        except (OSError, ValueError):
            continue
        sid = session.session_id
        if session.header is None or not sid or sid in seen:
            continue
        seen.add(sid)
        data = session.data
        if pi_is_automated(data):
            data = data | {"metadata": data["metadata"] | {"automated": True}}
        else:
            data = data | {
                key: [{k: v for k, v in m.items() if k != "timestamp"} for m in data[key]]
                for key in ("archived_messages", "messages")
            }
        (dest / f"{safe_id(sid)}.json").write_bytes(orjson.dumps(data))
    return len(seen)


def _spilled_turns(spill_dir: Path | None) -> dict[str, list[JSONDict]]:
    """The turns of PraisonAI spill files by session id, oldest file first."""
    out: dict[str, list[JSONDict]] = {}
    if spill_dir is None or not spill_dir.is_dir():
        return out
    for path in sorted(spill_dir.glob("*.json")):
        try:
            data = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue
        if isinstance(data, dict) and isinstance(data.get("messages"), list):
            turns = [m for m in data["messages"] if isinstance(m, dict)]
            out.setdefault(str(data.get("session_id")), []).extend(turns)
    return out


def write_pi_corpus(
    session_dir: Path,
    spill_dir: Path | None,
    pi_root: Path,
    *,
    names: Iterable[str] | None = None,
) -> int:
    """Write the PraisonAI session files ``names`` (default: every ``*.json``) of
    ``session_dir`` as Pi JSONL files under ``pi_root/--proj--/`` (spilled turns appended,
    corrupt files copied as they are). Returns the number of files written."""
    from session_browser.core.sources.pi import pi_jsonl

    spilled = _spilled_turns(spill_dir)
    out_dir = pi_root / PI_PROJECT_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    chosen = (
        sorted(names) if names is not None else sorted(p.name for p in session_dir.glob("*.json"))
    )
    for name in chosen:
        raw = (session_dir / name).read_bytes()
        target = out_dir / f"{name[: -len('.json')]}.jsonl"
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            data = None
        if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
            target.write_bytes(raw)  # corrupt: no session header, the reader skips it
            continue
        extra = spilled.get(str(data.get("session_id")))
        if extra:
            data = data | {"messages": [*data["messages"], *extra]}
        target.write_bytes(pi_jsonl(data, cwd=PI_PROJECT_CWD))
    return len(chosen)


def common_queries(top_words: Sequence[str]) -> list[str]:
    """The most frequent words alone, then each with the next one (a ring of pairs)."""
    singles = list(top_words)
    if len(singles) < 2:
        return singles
    pairs = [f"{singles[i]} {singles[(i + 1) % len(singles)]}" for i in range(len(singles))]
    return singles + pairs


def peer_subset(items: Sequence[Query], n: int) -> list[Query]:
    """``n`` queries taken round-robin over the slices (deterministic)."""
    by_slice: dict[str, list[Query]] = {}
    for q in items:
        by_slice.setdefault(q.slice, []).append(q)
    out: list[Query] = []
    queues = [list(v) for _, v in sorted(by_slice.items())]
    while len(out) < n and any(queues):
        for queue in queues:
            if queue and len(out) < n:
                out.append(queue.pop(0))
    return out


def peer_common_subset(queries: Sequence[str], n: int) -> list[str]:
    """Half singles, half pairs of the common-word queries."""
    half = len(queries) // 2
    singles, pairs = list(queries[:half]), list(queries[half:])
    take_single = (n + 1) // 2
    return singles[:take_single] + pairs[: n - take_single]


def machine_info() -> JSONDict:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.lower().startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    if not model:
        model = platform.processor() or platform.machine()
    memory_gb: float | None = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
                break
    except (OSError, ValueError, IndexError):
        pass
    fts5 = False
    try:
        con = sqlite3.connect(":memory:")
        con.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        con.close()
        fts5 = True
    except sqlite3.Error:
        pass
    praison: str | None
    try:
        from importlib.metadata import PackageNotFoundError, version

        try:
            praison = version("praisonaiagents")
        except PackageNotFoundError:
            praison = None
    except ImportError:  # pragma: no cover
        praison = None
    return {
        "cpu_count": os.cpu_count(),
        "cpu_model": model,
        "memory_gb": memory_gb,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "fts5": fts5,
        "praisonaiagents": praison,
    }


# --------------------------------------------------------------------------- stores (child side)


def _open_store(
    kind: str,
    session_dir: Path,
    db_path: Path,
    *,
    reconcile: str = "none",
    pi_dir: Path | None = None,
) -> Any:
    if kind == OURS:
        from session_browser.core.index import SqliteSessionStore

        return SqliteSessionStore(session_dir, db_path=db_path, reconcile=reconcile)
    if kind == SCAN:
        from session_browser.core.store import DefaultSessionStore

        return DefaultSessionStore(session_dir)
    if kind == PI:
        from session_browser.core.pi_index import PiIndexStore

        return PiIndexStore(session_dir, db_path=db_path, reconcile=reconcile)
    if kind == PI_SCAN:
        from session_browser.core.sources.pi import PiStore

        return PiStore(session_dir)
    if kind == GROUP:
        from session_browser.core.stores import PI_PREFIX, open_stores

        if pi_dir is None:
            raise ValueError("the group needs a Pi dir")
        return open_stores(
            [str(session_dir), f"{PI_PREFIX}{pi_dir}"], indexed=True, reconcile=reconcile
        )
    if kind == PRAISON_JSON:
        from praisonaiagents.session.store import DefaultSessionStore as PraisonDefault

        return PraisonDefault(session_dir=str(session_dir))
    if kind == PRAISON_SQLITE:
        from praisonaiagents.session.sqlite_store import SqliteSessionStore as PraisonSqlite

        return PraisonSqlite(session_dir=str(session_dir), db_path=str(db_path))
    raise ValueError(f"unknown store kind {kind!r}")


def _open(kind: str, args: JSONDict, *, reconcile: str = "none") -> Any:
    pi_dir = args.get("pi_dir")
    return _open_store(
        kind,
        Path(args["session_dir"]),
        Path(args["db_path"]),
        reconcile=reconcile,
        pi_dir=Path(pi_dir) if pi_dir else None,
    )


def _members(store: Any) -> list[Any]:
    """The indexed stores behind ``store`` (a group's members, or the store itself)."""
    inner = getattr(store, "stores", None)
    return list(inner) if isinstance(inner, list) else [store]


def _reconcile(store: Any) -> JSONDict:
    """Reconcile an indexed store (every member of a group); the reports, summed."""
    total: JSONDict = {}
    for member in _members(store):
        for key, value in _report_json(member.reconcile()).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
            else:
                total.setdefault(key, value)
    return total


def _group_db_paths(args: JSONDict) -> list[Path]:
    """Where the group's indexes live (the default paths in this process's cache dir)."""
    from session_browser.core.index import default_db_path
    from session_browser.core.pi_index import default_pi_db_path

    return [
        default_db_path(Path(args["session_dir"])),
        default_pi_db_path(Path(args["pi_dir"])),
    ]


def _import_store(kind: str) -> None:
    """Import a store's module before any timer starts."""
    if kind == OURS:
        import session_browser.core.index
    elif kind == SCAN:
        import session_browser.core.store
    elif kind in (PI, GROUP):
        import session_browser.core.pi_index
        import session_browser.core.stores
    elif kind == PI_SCAN:
        import session_browser.core.sources.pi  # noqa: F401
    else:
        import praisonaiagents.session.sqlite_store
        import praisonaiagents.session.store  # noqa: F401


def _close(store: Any) -> None:
    close = getattr(store, "close", None)
    if callable(close):
        close()
    conn = getattr(store, "_conn", None)  # PraisonAI's SqliteSessionStore has no close()
    if conn is not None and hasattr(conn, "close"):
        conn.close()


def _report_json(report: Any) -> JSONDict:
    if report is None:
        return {}
    as_dict = getattr(report, "as_dict", None)
    if callable(as_dict):
        report = as_dict()
    if isinstance(report, dict):
        if isinstance(report.get("skipped"), list):
            report = report | {"skipped": len(report["skipped"])}
        return {str(k): v for k, v in report.items() if _jsonable(v)}
    out: JSONDict = {}
    for name in ("added", "changed", "removed", "skipped", "unchanged", "done", "total"):
        value = getattr(report, name, None)
        if value is None:
            continue
        if isinstance(value, (list, tuple, set, frozenset)):
            out[name] = len(value)
        elif _jsonable(value):
            out[name] = value
    return out


def _jsonable(value: Any) -> bool:
    return isinstance(value, (int, float, str, bool)) or value is None


def _hit_ids(hits: Iterable[Any]) -> list[str]:
    return [sid for sid, _source in _hit_sources(hits)]


def _hit_sources(hits: Iterable[Any]) -> list[tuple[str, str]]:
    """(session id, source) of every hit (PraisonAI's dict hits have no source)."""
    out: list[tuple[str, str]] = []
    for hit in hits:
        if isinstance(hit, dict):
            out.append((str(hit.get("session_id")), str(hit.get("source") or "")))
        else:
            out.append(
                (str(getattr(hit, "session_id", None)), str(getattr(hit, "source", "") or ""))
            )
    return out


def _search(kind: str, store: Any, query: str, limit: int) -> list[str]:
    return _hit_ids(store.search(query, limit=limit))


def _recent(store: Any, limit: int) -> int:
    return len(store.recent(limit=limit))


def phase_build(args: JSONDict) -> JSONDict:
    """Cold build: no index file, open the store and index everything."""
    kind = args["kind"]
    db_path = Path(args["db_path"])
    _import_store(kind)
    db_paths = _group_db_paths(args) if kind == GROUP else [db_path]
    for path in db_paths:
        remove_db(path)
    out: JSONDict = {}
    t0 = time.perf_counter()
    if kind in (OURS, PI, GROUP):
        store = _open(kind, args, reconcile="none")
        out["reconcile"] = _reconcile(store)
    elif kind == PRAISON_SQLITE:
        store = _open(kind, args)
        store.search(MISSING_WORD, limit=1)  # the first search builds PraisonAI's index
    else:
        raise ValueError(f"{kind} has no index to build")
    out["seconds"] = time.perf_counter() - t0
    _close(store)
    out["index_bytes"] = sum(db_bytes(path) for path in db_paths)
    out["rss_mb"] = max_rss_mb()
    return out


def phase_reopen(args: JSONDict) -> JSONDict:
    """Open an up-to-date index in a fresh process and make sure it is fresh."""
    kind = args["kind"]
    _import_store(kind)
    out: JSONDict = {}
    t0 = time.perf_counter()
    if kind in (OURS, PI, GROUP):
        store = _open(kind, args, reconcile="none")
        out["reconcile"] = _reconcile(store)
    else:
        store = _open(kind, args)
        store.search(MISSING_WORD, limit=1)  # PraisonAI checks its index on first search
    out["seconds"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    ids = _search(kind, store, args.get("probe") or MISSING_WORD, SEARCH_LIMIT)
    out["first_search_seconds"] = time.perf_counter() - t1
    out["first_search_hits"] = len(ids)
    _close(store)
    out["rss_mb"] = max_rss_mb()
    return out


def phase_search(args: JSONDict) -> JSONDict:
    """Warm known-item and common-word latencies, ranks, hit sources, recent(50) latency."""
    kind = args["kind"]
    queries = [Query.from_json(q) for q in args["queries"]]
    common: list[str] = list(args["common"])
    _import_store(kind)
    if kind in (OURS, PI, GROUP):
        store = _open(kind, args, reconcile="none")
        _reconcile(store)
    else:
        store = _open(kind, args)
    for q in queries[: int(args.get("warmup", WARMUP_QUERIES))]:
        with contextlib.suppress(Exception):  # counted when the query is measured below
            _search(kind, store, q.query, SEARCH_LIMIT)
    known: list[JSONDict] = []
    for q in queries:
        error: str | None = None
        t0 = time.perf_counter()
        try:
            hits = store.search(q.query, limit=SEARCH_LIMIT)
        except Exception as exc:  # a store that fails a query scores it as a miss
            hits, error = [], f"{type(exc).__name__}: {exc}"
        dt = time.perf_counter() - t0
        found = _hit_sources(hits)
        relevant = set(q.relevant)
        rank = first_relevant_rank([sid for sid, _ in found], relevant)
        known.append(
            {
                "n": q.n,
                "slice": q.slice,
                "seconds": dt,
                "rank": rank,
                "error": error,
                "hits": len(found),
                "sources": [source for _, source in found],
                "relevant_source": found[rank - 1][1] if rank is not None else None,
                "relevant_sources": sorted({source for sid, source in found if sid in relevant}),
            }
        )
    common_out: list[JSONDict] = []
    for text in common:
        error = None
        t0 = time.perf_counter()
        try:
            ids = _search(kind, store, text, SEARCH_LIMIT)
        except Exception as exc:  # counted and shown, never timed
            ids, error = [], f"{type(exc).__name__}: {exc}"
        common_out.append(
            {"query": text, "seconds": time.perf_counter() - t0, "hits": len(ids), "error": error}
        )
    recent: list[float] = []
    count = 0
    for _ in range(int(args.get("recent_repeats", OUR_RECENT_REPEATS))):
        t0 = time.perf_counter()
        count = _recent(store, 50)
        recent.append(time.perf_counter() - t0)
    _close(store)
    return {
        "known": known,
        "common": common_out,
        "recent": recent,
        "recent_count": count,
        "rss_mb": max_rss_mb(),
    }


def _target_sessions(session_dir: Path, n: int) -> list[tuple[str, Path]]:
    """``n`` readable sessions with an active window, picked deterministically."""
    out: list[tuple[str, Path]] = []
    for path in sorted(session_dir.glob("*.json")):
        try:
            data = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue
        if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
            continue
        sid = str(data.get("session_id") or path.stem)
        if sid != path.stem:
            continue
        out.append((sid, path))
        if len(out) >= n:
            break
    return out


def _pi_target_sessions(pi_dir: Path, n: int) -> list[tuple[str, Path]]:
    """``n`` readable Pi sessions with turns, picked deterministically."""
    from session_browser.core.pi_index import scan_pi_dir
    from session_browser.core.sources.pi import read_pi_session

    out: list[tuple[str, Path]] = []
    seen: set[str] = set()
    for rel in sorted(scan_pi_dir(pi_dir)):
        path = pi_dir / rel
        try:
            session = read_pi_session(path)
        except (OSError, ValueError):
            continue
        sid = session.session_id
        if session.header is None or not session.data["messages"] or sid in seen:
            continue
        seen.add(sid)
        out.append((sid, path))
        if len(out) >= n:
            break
    return out


def _outside_edit(path: Path, text: str) -> None:
    """Append a user turn the way another process would: rewrite and replace the file."""
    data = orjson.loads(path.read_bytes())
    data["messages"].append(
        {"role": "user", "content": text, "timestamp": time.time(), "metadata": {}}
    )
    tmp = path.with_name(f".{path.name}.bench-tmp")
    tmp.write_bytes(json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8"))
    os.replace(tmp, path)


def _pi_outside_edit(path: Path, text: str) -> None:
    """Append a user turn the way Pi does: one more JSON line at the end of the file."""
    from session_browser.corpus import iso_utc

    line = {
        "type": "message",
        "timestamp": iso_utc(time.time()),
        "message": {"role": "user", "content": text},
    }
    with open(path, "ab") as fh:
        fh.write(orjson.dumps(line) + b"\n")


def _resumed(store: Any) -> bool | None:
    """True when the last reconcile of the Pi index behind ``store`` read from an offset."""
    for member in _members(store):
        reads = getattr(member, "last_reads", None)
        if isinstance(reads, dict) and (reads.get("resumed") or reads.get("full")):
            return bool(reads.get("resumed")) and not reads.get("full")
    return None


def phase_update(args: JSONDict) -> JSONDict:
    """One session changed from outside (time the re-index), then one write through the store.

    Pi stores are read-only: no write. The group alternates its outside changes between its
    JSON store and its Pi store and writes through its JSON store."""
    kind = args["kind"]
    session_dir = Path(args["session_dir"])
    pi_dir = Path(args["pi_dir"]) if args.get("pi_dir") else None
    repeats = int(args.get("repeats", UPDATE_REPEATS))
    _import_store(kind)
    reconciles = kind in (OURS, PI, GROUP)
    if reconciles:
        store = _open(kind, args, reconcile="none")
        _reconcile(store)
    else:
        store = _open(kind, args)
    json_targets: list[tuple[str, Path]] = []
    pi_targets: list[tuple[str, Path]] = []
    if kind in PI_KINDS:
        pi_targets = _pi_target_sessions(session_dir, repeats)
    elif kind == GROUP:
        assert pi_dir is not None
        json_targets = _target_sessions(session_dir, 2 * repeats)
        pi_targets = _pi_target_sessions(pi_dir, repeats)
    else:
        json_targets = _target_sessions(session_dir, 2 * repeats)
    outside_plan: list[tuple[str, Path, bool]] = []
    if kind in PI_KINDS:
        outside_plan = [(sid, path, True) for sid, path in pi_targets]
    elif kind == GROUP:
        for i in range(repeats):
            pool, is_pi = (pi_targets, True) if i % 2 else (json_targets, False)
            if i // 2 < len(pool):
                sid, path = pool[i // 2]
                outside_plan.append((sid, path, is_pi))
    else:
        outside_plan = [(sid, path, False) for sid, path in json_targets[:repeats]]
    write_targets = [] if kind in READ_ONLY_KINDS else json_targets[repeats:]
    outside: list[float] = []
    outside_found: list[bool] = []
    resumed: list[bool] = []
    writes: list[float] = []
    write_found: list[bool] = []
    for i, (sid, path, is_pi) in enumerate(outside_plan):
        marker = f"benchoutside{i}marker"
        if is_pi:
            _pi_outside_edit(path, f"note {marker} for the benchmark")
        else:
            _outside_edit(path, f"note {marker} for the benchmark")
        if reconciles:
            t0 = time.perf_counter()
            _reconcile(store)
            outside.append(time.perf_counter() - t0)
            if is_pi:
                was_resumed = _resumed(store)
                if was_resumed is not None:
                    resumed.append(was_resumed)
            ids = _search(kind, store, marker, SEARCH_LIMIT)
        elif kind == PRAISON_SQLITE:
            # PraisonAI's index has no reconcile: a new store checks it on its first search
            _close(store)
            t0 = time.perf_counter()
            store = _open(kind, args)
            ids = _search(kind, store, marker, SEARCH_LIMIT)
            outside.append(time.perf_counter() - t0)
        else:
            ids = _search(kind, store, marker, SEARCH_LIMIT)
        outside_found.append(sid in ids)
    writer = _members(store)[0]
    for i, (sid, _path) in enumerate(write_targets):
        marker = f"benchwrite{i}marker"
        t0 = time.perf_counter()
        writer.add_message(sid, "user", f"note {marker} for the benchmark")
        writes.append(time.perf_counter() - t0)
        write_found.append(sid in _search(kind, store, marker, SEARCH_LIMIT))
    _close(store)
    return {
        "outside": outside,
        "outside_found": outside_found,
        "outside_pi": [is_pi for _sid, _path, is_pi in outside_plan],
        "resumed": resumed,
        "write": writes,
        "write_found": write_found,
        "rss_mb": max_rss_mb(),
    }


def phase_build_search(args: JSONDict) -> JSONDict:
    """One process builds the index from nothing and answers every query: its peak RSS is
    what a first ``session-browser search`` on a big store needs."""
    kind = args["kind"]
    db_paths = _group_db_paths(args) if kind == GROUP else [Path(args["db_path"])]
    for path in db_paths:
        remove_db(path)
    t0 = time.perf_counter()
    store = _open(kind, args, reconcile="none")
    _reconcile(store)
    errors = 0
    for text in [*(q["query"] for q in args["queries"]), *args["common"]]:
        try:
            _search(kind, store, text, SEARCH_LIMIT)
        except Exception:
            errors += 1
    _close(store)
    return {"seconds": time.perf_counter() - t0, "errors": errors, "rss_mb": max_rss_mb()}


# -- the one-message file: memory and time bounded by the input

BIG_SESSION_ID = "bench-one-message"
BIG_WORD = "ab"


def write_one_message_session(path: Path, session_id: str, size: int) -> int:
    """A PraisonAI session file holding one user message of ``"ab ab ab ..."``, about
    ``size`` bytes, streamed to disk (never whole in memory). Returns the file size."""
    placeholder = "@@bench-content@@"
    stamp = "2025-06-01T00:00:00+00:00"
    doc: JSONDict = {
        "session_id": session_id,
        "messages": [
            {"role": "user", "content": placeholder, "timestamp": 1748736000.0, "metadata": {}}
        ],
        "created_at": stamp,
        "updated_at": stamp,
        "agent_name": None,
        "user_id": None,
        "metadata": {},
        "gateway_session_id": None,
        "agent_id": None,
        "runtime_state": {},
        "archived_messages": [],
    }
    head, tail = json.dumps(doc, indent=2).split(placeholder)
    chunk = b"ab " * (1 << 16)
    left = max(3, size - len(head) - len(tail))
    with open(path, "wb") as fh:
        fh.write(head.encode())
        while left > 0:
            part = chunk[: min(len(chunk), left)]
            fh.write(part.rstrip(b" ") if len(part) == left else part)
            left -= len(part)
        fh.write(tail.encode())
    os.chmod(path, 0o600)
    return path.stat().st_size


def phase_cli(args: JSONDict) -> JSONDict:
    """Run ``session-browser`` commands in this fresh process (output discarded): the time of
    each, and the process's peak RSS with the baseline after imports."""
    from session_browser.cli import main as cli

    base = max_rss_mb()
    out: JSONDict = {"baseline_rss_mb": base, "commands": []}
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        for argv in args["commands"]:
            t0 = time.perf_counter()
            code: Any = 0
            try:
                cli.main(args=list(argv), prog_name="session-browser", standalone_mode=False)
            except SystemExit as exc:
                code = exc.code
            except Exception as exc:
                code = f"{type(exc).__name__}: {exc}"
            out["commands"].append(
                {"argv": argv, "seconds": time.perf_counter() - t0, "exit": code}
            )
    out["rss_mb"] = max_rss_mb()
    return out


# -- writers and readers in parallel processes

WRITE_SESSIONS = 4
WRITE_READERS = 2
_WRITE_MARK = re.compile(r"\bbenchw(\d+)n(\d+)\b")


def _wait_for(path: Path, limit: float = 120.0) -> None:
    deadline = time.time() + limit
    while not path.exists():
        if time.time() > deadline:
            raise TimeoutError(f"{path.name} never appeared")
        time.sleep(0.001)


def phase_writer(args: JSONDict) -> JSONDict:
    """``add_message`` ``count`` times, round-robin over the sessions, once ``go`` exists."""
    from session_browser.core.index import SqliteSessionStore

    store = SqliteSessionStore(
        Path(args["session_dir"]), db_path=Path(args["db_path"]), reconcile="none"
    )
    Path(args["ready"]).touch()
    _wait_for(Path(args["go"]))
    writer, latencies, failed = int(args["writer"]), [], 0
    started = time.time()
    for i in range(int(args["count"])):
        t0 = time.perf_counter()
        ok = store.add_message(
            f"contention-{i % WRITE_SESSIONS}", "user", f"benchw{writer}n{i} contention probe"
        )
        latencies.append(time.perf_counter() - t0)
        failed += not ok
    ended = time.time()
    store.close()
    return {"started": started, "ended": ended, "latencies": latencies, "failed": failed}


def phase_reader(args: JSONDict) -> JSONDict:
    """Search the sessions being written until ``stop`` exists."""
    from session_browser.core.index import SqliteSessionStore

    store = SqliteSessionStore(
        Path(args["session_dir"]), db_path=Path(args["db_path"]), reconcile="none"
    )
    Path(args["ready"]).touch()
    _wait_for(Path(args["go"]))
    searches = errors = 0
    first: str | None = None
    stop = Path(args["stop"])
    while not stop.exists():
        try:
            store.search("contention probe", limit=SEARCH_LIMIT)
        except Exception as exc:
            errors += 1
            first = first or f"{type(exc).__name__}: {exc}"[:300]
        searches += 1
    store.close()
    return {"searches": searches, "errors": errors, "first_error": first}


def count_written(session_dir: Path) -> tuple[Counter[tuple[int, int]], int]:
    """Every ``benchw<W>n<I>`` message in the session files (archived turns included), and
    the files that could not be read."""
    seen: Counter[tuple[int, int]] = Counter()
    unreadable = 0
    for path in sorted(session_dir.glob("*.json")):
        try:
            data = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            unreadable += 1
            continue
        for msg in [*(data.get("archived_messages") or []), *(data.get("messages") or [])]:
            match = _WRITE_MARK.search(str(msg.get("content") or "")) if isinstance(
                msg, dict) else None
            if match:
                seen[(int(match.group(1)), int(match.group(2)))] += 1
    return seen, unreadable


PHASES: dict[str, Callable[[JSONDict], JSONDict]] = {
    "build": phase_build,
    "reopen": phase_reopen,
    "search": phase_search,
    "update": phase_update,
    "build_search": phase_build_search,
    "cli": phase_cli,
    "writer": phase_writer,
    "reader": phase_reader,
}


# --------------------------------------------------------------------------- the parent side


@dataclass
class PhaseResult:
    ok: bool
    data: JSONDict
    seconds: float
    timed_out: bool = False
    error: str | None = None


def _phase_command(phase: str, args: JSONDict, workdir: Path) -> tuple[list[str], Path, Path]:
    """The command line of a phase run, and where its result and log go."""
    tag = str(args.get("tag") or f"{args.get('kind', 'x')}-{phase}")
    args_path = workdir / f"{tag}.args.json"
    out_path = workdir / f"{tag}.out.json"
    log_path = workdir / f"{tag}.log"
    args_path.write_bytes(orjson.dumps(args))
    out_path.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "session_browser.bench", "--phase", phase]
    return [*cmd, "--args", str(args_path), "--out", str(out_path)], out_path, log_path


def run_phase(
    phase: str,
    args: JSONDict,
    *,
    workdir: Path,
    env: dict[str, str],
    timeout: float | None,
) -> PhaseResult:
    """Run one phase in a fresh interpreter; its result comes back through a JSON file."""
    cmd, out_path, log_path = _phase_command(phase, args, workdir)
    t0 = time.perf_counter()
    with open(log_path, "wb") as log:
        try:
            proc = subprocess.run(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return PhaseResult(False, {}, time.perf_counter() - t0, timed_out=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0 or not out_path.exists():
        tail = log_path.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
        return PhaseResult(False, {}, elapsed, error=f"exit {proc.returncode}: {tail[0]}")
    return PhaseResult(True, orjson.loads(out_path.read_bytes()), elapsed)


def _copy_store(src_sessions: Path, src_spill: Path | None, dest_home: Path) -> Path:
    """Copy a session dir (and its spill dir) into ``dest_home`` in PraisonAI's layout."""
    ignore = shutil.ignore_patterns("*.lock", "sessions_index.db*", ".*.tmp", "*.bench-tmp")
    dest_sessions = dest_home / "sessions"
    shutil.copytree(src_sessions, dest_sessions, ignore=ignore, symlinks=False)
    if src_spill is not None and src_spill.is_dir():
        shutil.copytree(src_spill, dest_home / "state" / "session_spill", ignore=ignore)
    return dest_sessions


def _set_aside_non_objects(sessions: Path, dest: Path) -> list[str]:
    """Move session files whose JSON root is not an object out of ``sessions``.

    PraisonAI 1.7.17's ``search`` raises ``AttributeError`` on such a file (a list root) instead
    of skipping it, so its stores are measured without them (and the report says so).
    """
    moved: list[str] = []
    for path in sorted(sessions.glob("*.json")):
        try:
            data = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue
        if not isinstance(data, dict):
            dest.mkdir(parents=True, exist_ok=True)
            os.replace(path, dest / path.name)
            moved.append(path.name)
    return moved


def _child_env(home: Path, workdir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["DO_NOT_TRACK"] = "1"
    env["PRAISONAI_HOME"] = str(home)
    env["SESSION_BROWSER_CACHE_DIR"] = str(workdir / "cache")
    env["SESSION_BROWSER_DATA_HOME"] = str(workdir / "data")
    env.pop("PRAISONAI_SESSION_RETENTION", None)
    env.pop("PRAISONAI_SESSION_ACTIVE_WINDOW", None)
    package_root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    return env


def _store_available(kind: str) -> str | None:
    """None when the store can be imported, else why not."""
    import importlib.util

    modules = {
        OURS: "session_browser.core.index",
        PI: "session_browser.core.pi_index",
        PI_SCAN: "session_browser.core.sources.pi",
        GROUP: "session_browser.core.pi_index",
    }
    if kind in modules:
        try:
            spec = importlib.util.find_spec(modules[kind])
        except ImportError as exc:  # pragma: no cover
            return str(exc)
        return None if spec is not None else f"{modules[kind]} is not available"
    if kind in PEERS:
        try:
            spec = importlib.util.find_spec("praisonaiagents")
        except ImportError as exc:  # pragma: no cover
            return str(exc)
        return None if spec is not None else "praisonaiagents is not installed"
    return None


def _extrapolate_praison(db_path: Path, seconds: float, stats: CorpusStats) -> JSONDict:
    """How far PraisonAI's index build got before it was stopped, and the implied rate."""
    try:
        con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=5)
        try:
            done = int(con.execute("SELECT count(*) FROM session_meta").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return {}
    if not done or not stats.sessions:
        return {"sessions_indexed": done}
    share = done / stats.sessions
    rate = stats.messages * share / seconds
    return {
        "sessions_indexed": done,
        "share": share,
        "messages_per_s": rate,
        "full_build_estimate_s": stats.messages / rate if rate else None,
    }


@dataclass
class Layout:
    """Where the measured sessions are and where the queries and their truth come from."""

    format: str  # json | pi | mixed
    sessions: Path | None  # the PraisonAI session dir measured (json, mixed)
    spill: Path | None  # its spill dir
    pi: Path | None  # the Pi session dir measured (pi, mixed)
    query_source: Path  # a PraisonAI-shaped store the queries are generated from
    info: JSONDict = field(default_factory=dict)
    truth: Path | None = None  # a PraisonAI-shaped dir whose text decides relevance
    truth_spill: Path | None = None


class Harness:
    """Runs the phases of every store and assembles the report."""

    def __init__(self, options: BenchOptions, progress: Progress | None = None) -> None:
        self.opt = options
        self.say: Progress = progress or (lambda _msg: None)
        self.notes: list[str] = []

    # -- corpus and queries

    def _prepare(self, work: Path) -> Layout:
        """The sessions to measure, built or given, and what they are."""
        opt = self.opt
        fmt = opt.format
        if opt.pi_store is not None:
            root = Path(opt.pi_store).expanduser()
            if not root.is_dir():
                raise BenchError(f"no Pi session dir at {root}")
            self.say(f"reading the Pi sessions of {root} back for the queries")
            readback = work / "pi-readback" / "sessions"
            if not pi_readback(root, readback):
                raise BenchError(f"no readable Pi session in {root}")
            return Layout("pi", None, None, root, readback, {"source": "store", "path": str(root)})
        if opt.store is not None or opt.home is not None:
            if opt.store is not None:
                sessions = Path(opt.store).expanduser()
                spill: Path | None = None
                if sessions.name == "sessions":
                    spill = sessions.parent / "state" / "session_spill"
            else:
                home = Path(opt.home or "").expanduser()
                sessions, spill = home / "sessions", home / "state" / "session_spill"
            if not sessions.is_dir():
                raise BenchError(f"no session dir at {sessions}")
            given: JSONDict = {"source": "store", "path": str(sessions)}
            return Layout("json", sessions, spill, None, sessions, given)
        from session_browser.corpus import build_corpus, corpus_sources

        home = work / "corpus"
        self.say(
            f"building the corpus ({opt.sessions or 'all'} sessions, seed {opt.seed}) in {home}"
        )
        t0 = time.perf_counter()
        info = build_corpus(
            home,
            sessions=opt.sessions,
            seed=opt.seed,
            sgd_path=opt.sgd_path,
            include_sgd=opt.sgd,
            progress=None,
        )
        self.say(f"corpus sources: {corpus_sources(info)}")
        sessions, spill = home / "sessions", home / "state" / "session_spill"
        built = {
            "source": "built",
            "path": str(sessions),
            "requested_sessions": opt.sessions,
            "build_seconds": time.perf_counter() - t0,
            "info": _info_json(info),
            "sources": corpus_sources(info),
        }
        if fmt == "json":
            return Layout("json", sessions, spill, None, sessions, built)
        if fmt == "pi":
            pi_root = work / "pi"
            self.say(f"writing the corpus as Pi JSONL files in {pi_root}")
            write_pi_corpus(sessions, spill, pi_root)
            truth = work / "pi-truth" / "sessions"
            pi_readback(pi_root, truth)
            built["path"] = str(pi_root)
            built["build_seconds"] = time.perf_counter() - t0
            return Layout("pi", None, None, pi_root, sessions, built, truth)
        # mixed: every other session file (sorted by name) goes to the Pi half
        names = sorted(p.name for p in sessions.glob("*.json"))
        json_names, pi_names = names[0::2], names[1::2]
        mixed_home, pi_root = work / "mixed" / "home", work / "mixed" / "pi"
        self.say(
            f"splitting the corpus: {len(json_names)} PraisonAI JSON files in {mixed_home}, "
            f"{len(pi_names)} Pi JSONL files in {pi_root}"
        )
        json_dir = mixed_home / "sessions"
        json_spill = mixed_home / "state" / "session_spill"
        truth_home = work / "mixed-truth"
        truth, truth_spill = truth_home / "sessions", truth_home / "state" / "session_spill"
        for folder in (json_dir, json_spill, truth, truth_spill):
            folder.mkdir(parents=True, exist_ok=True)
        for name in json_names:
            shutil.copyfile(sessions / name, json_dir / name)
            shutil.copyfile(sessions / name, truth / name)
        json_ids = {name[: -len(".json")] for name in json_names}
        if spill.is_dir():
            for path in sorted(spill.glob("*.json")):
                try:
                    owner = str(orjson.loads(path.read_bytes()).get("session_id"))
                except (OSError, orjson.JSONDecodeError, AttributeError):
                    continue
                if owner in json_ids:
                    shutil.copyfile(path, json_spill / path.name)
                    shutil.copyfile(path, truth_spill / path.name)
        write_pi_corpus(sessions, spill, pi_root, names=pi_names)
        pi_readback(pi_root, truth)
        built["path"] = f"{json_dir} + {pi_root}"
        built["split"] = {"json_files": len(json_names), "pi_files": len(pi_names)}
        built["build_seconds"] = time.perf_counter() - t0
        return Layout("mixed", json_dir, json_spill, pi_root, sessions, built, truth, truth_spill)

    def _queries(self, layout: Layout) -> list[Query]:
        from session_browser.corpus import make_queries

        items = make_queries(layout.query_source, n=self.opt.queries, seed=self.opt.seed)
        if layout.truth is not None:
            items = self._recheck(items, layout)
        out: list[Query] = []
        for item in items:
            relevant = sorted(str(x) for x in getattr(item, "relevant", ()) or ())
            target = str(getattr(item, "target_id", "") or "")
            if not relevant and target:
                relevant = [target]
            out.append(
                Query(
                    query=str(item.query),
                    relevant=relevant,
                    slice=str(getattr(item, "slice", "") or ""),
                    target_id=target,
                    n=len(out),
                )
            )
        return out

    def _recheck(self, items: list[Any], layout: Layout) -> list[Any]:
        """The relevant sets of ``items`` recomputed on the text the measured stores hold."""
        from session_browser.corpus import _Index

        assert layout.truth is not None
        index = _Index(layout.truth, layout.truth_spill)
        kept: list[Any] = []
        changed = dropped = 0
        for item in items:
            hits = index.match(item.terms, phrase=item.slice == "phrase")
            if hits is None:  # tokens and substrings disagree: keep the corpus's answer
                kept.append(item)
                continue
            relevant = index.relevant_ids(hits)
            if not relevant:
                dropped += 1
                continue
            if relevant != set(item.relevant):
                changed += 1
                item.relevant = relevant
            kept.append(item)
        where = "the Pi text read back" if layout.format == "pi" else "both stores' text"
        self.notes.append(
            f"the queries are those of the JSON corpus; their relevant sets were recomputed on "
            f"{where}: {changed} changed (lineage chains: Pi files have none), {dropped} dropped"
        )
        return kept

    # -- one store

    def _measure_store(
        self,
        kind: str,
        sessions: Path,
        db_path: Path,
        env: dict[str, str],
        work: Path,
        queries: list[Query],
        common: list[str],
        stats: CorpusStats,
        pi_dir: Path | None = None,
    ) -> JSONDict:
        opt = self.opt
        is_peer = kind in PEERS
        timeout = opt.peer_timeout if is_peer else None
        # the slow stores answer a round-robin subset
        capped = is_peer or kind in (SCAN, PI_SCAN)
        result: JSONDict = {"label": STORE_LABELS[kind], "status": "ok", "capped": capped}
        indexed = kind in INDEXED_KINDS

        def phase(name: str, args: JSONDict) -> PhaseResult:
            self.say(f"{STORE_LABELS[kind]}: {name}")
            base = {"kind": kind, "session_dir": str(sessions), "db_path": str(db_path)}
            if pi_dir is not None:
                base["pi_dir"] = str(pi_dir)
            res = run_phase(name, base | args, workdir=work, env=env, timeout=timeout)
            if res.timed_out:
                self.say(f"{STORE_LABELS[kind]}: {name} stopped after {timeout:.0f} s")
            elif not res.ok:
                self.say(f"{STORE_LABELS[kind]}: {name} failed: {res.error}")
            return res

        if indexed:
            build = phase("build", {})
            if build.timed_out:
                result["build"] = {
                    "timed_out": True,
                    "seconds": build.seconds,
                    "estimate": _extrapolate_praison(db_path, build.seconds, stats)
                    if kind == PRAISON_SQLITE
                    else {},
                }
                result["status"] = "build stopped"
                self.notes.append(
                    f"{STORE_LABELS[kind]}: index build stopped after {build.seconds:.0f} s "
                    f"(--peer-timeout); its rate is extrapolated and its other phases skipped"
                )
                return result
            if not build.ok:
                result["status"] = f"error: {build.error}"
                return result
            seconds = float(build.data["seconds"])
            result["build"] = {
                "seconds": seconds,
                "messages_per_s": stats.messages / seconds if seconds > 0 else None,
                "rss_mb": build.data.get("rss_mb"),
                "index_bytes": build.data.get("index_bytes"),
                "size_ratio": (build.data.get("index_bytes") or 0) / stats.json_bytes
                if stats.json_bytes
                else None,
                "reconcile": build.data.get("reconcile", {}),
            }
            reopen = phase("reopen", {"probe": common[0] if common else MISSING_WORD})
            result["reopen"] = (
                {
                    "seconds": reopen.data["seconds"],
                    "first_search_seconds": reopen.data.get("first_search_seconds"),
                    "reconcile": reopen.data.get("reconcile", {}),
                }
                if reopen.ok
                else {"timed_out": reopen.timed_out, "error": reopen.error}
            )
        chosen = peer_subset(queries, opt.peer_queries) if capped else queries
        chosen_common = peer_common_subset(common, opt.peer_queries) if capped else common
        scan_like = kind in (SCAN, PRAISON_JSON, PI_SCAN)
        search = phase(
            "search",
            {
                "queries": [q.to_json() for q in chosen],
                "common": chosen_common,
                "warmup": 1 if (is_peer or scan_like) else WARMUP_QUERIES,
                "recent_repeats": SCAN_RECENT_REPEATS
                if (is_peer or scan_like)
                else OUR_RECENT_REPEATS,
            },
        )
        if search.ok:
            result["search"] = self._search_summary(search.data)
            if capped or (opt.peers and opt.format == "json"):
                subset = {q.n for q in peer_subset(queries, opt.peer_queries)}
                result["search"]["quality_peer_subset"] = quality_stats(
                    [k["rank"] for k in search.data["known"] if k["n"] in subset]
                )
        else:
            result["search"] = {"timed_out": search.timed_out, "error": search.error}
        if kind in (OURS, PI, GROUP):
            both = phase(
                "build_search", {"queries": [q.to_json() for q in queries], "common": common}
            )
            result["build_search"] = (
                both.data if both.ok else {"timed_out": both.timed_out, "error": both.error}
            )
        update = phase("update", {"repeats": 1 if is_peer else UPDATE_REPEATS})
        if update.ok:
            d = update.data
            resumed = d.get("resumed") or []
            result["update"] = {
                "outside": latency_stats(d["outside"]) if indexed else None,
                "outside_found": _share(d["outside_found"]),
                "outside_pi": sum(1 for x in d.get("outside_pi") or [] if x),
                "outside_resumed": {"resumed": sum(1 for r in resumed if r), "of": len(resumed)}
                if resumed
                else None,
                "write": latency_stats(d["write"]) if kind not in READ_ONLY_KINDS else None,
                "write_found": _share(d["write_found"]),
            }
        else:
            result["update"] = {"timed_out": update.timed_out, "error": update.error}
        return result

    @staticmethod
    def _search_summary(data: JSONDict) -> JSONDict:
        known = data["known"]
        slices: dict[str, list[JSONDict]] = {}
        for k in known:
            slices.setdefault(k["slice"], []).append(k)
        return {
            "known": answered_latency(known),
            "common": answered_latency(data["common"]),
            "recent": latency_stats(data["recent"]),
            "recent_count": data.get("recent_count"),
            "quality": quality_stats([k["rank"] for k in known]),
            "errors": [k["error"] for k in [*known, *data["common"]] if k.get("error")][:5],
            "slices": {
                name: quality_stats([k["rank"] for k in items])
                for name, items in sorted(slices.items())
            },
            "slice_latency": {
                name: answered_latency(items) for name, items in sorted(slices.items())
            },
            "slowest_common": sorted(data["common"], key=lambda c: -c["seconds"])[:3],
            "sources": source_stats(known),
            "rss_mb": data.get("rss_mb"),
        }

    # -- the one-message file and parallel writers (independent of the corpus)

    def _cli_run(self, work: Path, tag: str, mb: float, commands: list[list[str]]) -> JSONDict:
        """Write a store holding one message of about ``mb`` MB, run CLI ``commands`` on it
        in one fresh process; the file is removed afterwards."""
        home = work / tag
        sessions = home / "sessions"
        sessions.mkdir(parents=True)
        path = sessions / f"{BIG_SESSION_ID}.json"
        size = write_one_message_session(path, BIG_SESSION_ID, int(mb * 1e6))
        argv = [[*c, "--store", str(sessions)] for c in commands]
        self.say(f"{tag}: {' / '.join(c[0] for c in commands)} on a {size / 1e6:.1f} MB message")
        res = run_phase(
            "cli",
            {"tag": tag, "commands": argv},
            workdir=work,
            env=_child_env(home, home),
            timeout=self.opt.heavy_timeout,
        )
        shutil.rmtree(home, ignore_errors=True)
        out: JSONDict = {"file_bytes": size, "error": None, "commands": []}
        if res.timed_out:
            out["error"] = f"stopped after {res.seconds:.0f} s"
        elif not res.ok:
            out["error"] = res.error
        else:
            out |= res.data
        return out

    def _measure_big(self, work: Path) -> tuple[JSONDict, JSONDict]:
        opt = self.opt
        big = self._cli_run(
            work,
            "one-message",
            opt.big_message_mb,
            [["search", BIG_WORD], ["recent"], ["show", BIG_SESSION_ID]],
        )
        show = self._cli_run(work, "show-big", opt.show_message_mb, [["show", BIG_SESSION_ID]])
        cmd = (show.get("commands") or [{}])[0]
        show |= {"seconds": cmd.get("seconds"), "exit": cmd.get("exit")}
        return big, show

    def _contention_run(self, work: Path, writers: int) -> JSONDict:
        opt = self.opt
        home = work / f"contention-{writers}"
        sessions = home / "sessions"
        sessions.mkdir(parents=True)
        env = _child_env(home, home)
        base = {
            "session_dir": str(sessions),
            "db_path": str(home / "index.db"),
            "go": str(home / "go"),
            "stop": str(home / "stop"),
        }
        procs: list[tuple[str, subprocess.Popen[bytes], Path]] = []
        specs = [("reader", {"n": r}) for r in range(WRITE_READERS)]
        specs += [("writer", {"writer": w, "count": opt.write_messages}) for w in range(writers)]
        for i, (phase, extra) in enumerate(specs):
            tag = f"contention-{writers}-{phase}-{i}"
            args = base | extra | {"tag": tag, "ready": str(home / f"ready-{i}")}
            cmd, out_path, log_path = _phase_command(phase, args, work)
            with open(log_path, "wb") as log:
                proc = subprocess.Popen(
                    cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env
                )
            procs.append((phase, proc, out_path))
        result: JSONDict = {"writers": writers, "error": None}
        try:
            for i in range(len(specs)):
                _wait_for(home / f"ready-{i}", opt.heavy_timeout)
            (home / "go").touch()
            deadline = time.time() + opt.heavy_timeout
            for phase, proc, _ in procs:
                if phase == "writer":
                    proc.wait(timeout=max(1.0, deadline - time.time()))
            (home / "stop").touch()
            for _, proc, _ in procs:
                proc.wait(timeout=60)
        except (TimeoutError, subprocess.TimeoutExpired) as exc:
            result["error"] = f"stopped: {exc}"
        finally:
            (home / "stop").touch()
            for _, proc, _ in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        outs: list[tuple[str, JSONDict]] = []
        finished: set[int] = set()  # writers that ran to the end (their writes were all acked)
        for (phase, proc, out_path), (_phase, extra) in zip(procs, specs, strict=True):
            if proc.returncode != 0 or not out_path.exists():
                result["error"] = result["error"] or f"a {phase} process exited {proc.returncode}"
                continue
            outs.append((phase, orjson.loads(out_path.read_bytes())))
            if phase == "writer":
                finished.add(int(extra["writer"]))
        wrote = [d for p, d in outs if p == "writer"]
        read = [d for p, d in outs if p == "reader"]
        latencies = [x for d in wrote for x in d["latencies"]]
        seen, unreadable = count_written(sessions)
        # Lost: a write a finished writer was told succeeded and the files do not hold. A
        # writer stopped at the deadline never said which of its writes went through.
        expected = {(w, i) for w in finished for i in range(opt.write_messages)}
        span = (max(d["ended"] for d in wrote) - min(d["started"] for d in wrote)) if wrote else 0
        result |= {
            "writes": len(latencies),
            "seconds": span,
            "writes_per_s": len(latencies) / span if span > 0 else None,
            "latency": latency_stats(latencies),
            "spilled": sum(d["failed"] for d in wrote),
            "lost": len(expected - set(seen)),
            "duplicated": sum(n - 1 for n in seen.values() if n > 1),
            "finished_writers": len(finished),
            "unreadable_files": unreadable,
            "reader_searches": sum(d["searches"] for d in read),
            "reader_errors": sum(d["errors"] for d in read),
        }
        if result["reader_errors"] and result["error"] is None:
            why = next((d["first_error"] for d in read if d.get("first_error")), None)
            result["error"] = f"{result['reader_errors']} reader search(es) failed" + (
                f" (first: {why})" if why else ""
            )
        shutil.rmtree(home, ignore_errors=True)
        return result

    def _measure_contention(self, work: Path) -> JSONDict:
        runs = []
        for writers in (1, 4, 8):
            self.say(
                f"contention: {writers} writer(s) x {self.opt.write_messages} add_message into "
                f"{WRITE_SESSIONS} sessions, {WRITE_READERS} readers searching"
            )
            runs.append(self._contention_run(work, writers))
        return {
            "sessions": WRITE_SESSIONS,
            "readers": WRITE_READERS,
            "per_writer": self.opt.write_messages,
            "runs": runs,
        }

    # -- everything

    def run(self) -> JSONDict:
        opt = self.opt
        started = time.time()
        work = Path(tempfile.mkdtemp(prefix="session-browser-bench-", dir=opt.workdir))
        try:
            report = self._run(work)
        finally:
            if not opt.keep:
                shutil.rmtree(work, ignore_errors=True)
        report["workdir"] = str(work) if opt.keep else None
        report["total_seconds"] = time.time() - started
        return report

    def _run(self, work: Path) -> JSONDict:
        opt = self.opt
        fits = FORMAT_KINDS[opt.format]
        kinds = [k for k in opt.stores if k in fits]
        if not opt.peers:
            kinds = [k for k in kinds if k not in PEERS]
        if not kinds:
            raise BenchError(
                f"none of the stores asked for (--only) reads a {opt.format} store; "
                f"those that do: {', '.join(fits)}"
            )
        layout = self._prepare(work)
        self.say("counting messages and words")
        stats = corpus_stats(layout.sessions, pi_dir=layout.pi)
        where = ", ".join(str(p) for p in (layout.sessions, layout.pi) if p is not None)
        if not stats.sessions:
            raise BenchError(f"no readable session in {where}")
        self.say(f"generating {opt.queries} known-item queries (seed {opt.seed})")
        queries = self._queries(layout)
        if not queries:
            raise BenchError(f"could not generate queries from {where}")
        common = common_queries(stats.top_words)
        slices = Counter(q.slice for q in queries)

        if layout.format != "json":
            self.notes.append(
                "PraisonAI's own stores and our JSON-only stores do not read Pi files: "
                "not measured on this corpus"
            )
        stores: JSONDict = {}
        copies: dict[str, tuple[Path, Path, Path | None]] = {}
        for kind in kinds:
            why = _store_available(kind)
            if why is not None:
                stores[kind] = {"label": STORE_LABELS[kind], "status": "unavailable"}
                self.notes.append(f"{STORE_LABELS[kind]}: not measured ({why})")
                continue
            group = "ours" if kind in (OURS, SCAN) else PI if kind in PI_KINDS else kind
            if group not in copies:
                self.say(f"copying the store for {group}")
                home = work / f"copy-{group}"
                if group == PI:
                    assert layout.pi is not None
                    shutil.copytree(layout.pi, home / "pi", symlinks=False)
                    copies[group] = (home, home / "pi", None)
                elif group == GROUP:
                    assert layout.sessions is not None and layout.pi is not None
                    json_copy = _copy_store(layout.sessions, layout.spill, home)
                    shutil.copytree(layout.pi, home / "pi", symlinks=False)
                    copies[group] = (home, json_copy, home / "pi")
                else:
                    assert layout.sessions is not None
                    copies[group] = (home, _copy_store(layout.sessions, layout.spill, home), None)
                if kind in PEERS:
                    moved = _set_aside_non_objects(copies[group][1], home / "set-aside")
                    if moved:
                        self.notes.append(
                            f"{STORE_LABELS[kind]}: {len(moved)} session file(s) whose JSON root "
                            "is not an object were removed from its copy (PraisonAI 1.7.17's "
                            "search raises AttributeError on them)"
                        )
            home, sessions, pi_dir = copies[group]
            env = _child_env(home, work)
            db_path = work / f"{kind}.db"
            stores[kind] = self._measure_store(
                kind, sessions, db_path, env, work, queries, common, stats, pi_dir
            )
        corpus = layout.info | {"format": layout.format}
        slow = [
            STORE_LABELS[k] for k in kinds if k in (SCAN, PI_SCAN) or (opt.peers and k in PEERS)
        ]
        if slow:
            n_common = len(peer_common_subset(common, opt.peer_queries))
            self.notes.append(
                f"{' and '.join(slow)} answered {min(opt.peer_queries, len(queries))} of the "
                f"{len(queries)} known-item queries (round-robin over the slices) and "
                f"{n_common} of the common-word queries (--peer-queries)"
            )
        if opt.peers and any(k in PEERS for k in kinds):
            self.notes.append(
                f"each phase of PraisonAI's stores is stopped after {opt.peer_timeout:.0f} s "
                "(--peer-timeout)"
            )
        report: JSONDict = {
            "schema": SCHEMA,
            "machine": machine_info(),
            "options": {
                "seed": opt.seed,
                "sessions": opt.sessions,
                "queries": opt.queries,
                "peers": opt.peers,
                "peer_queries": opt.peer_queries,
                "peer_timeout": opt.peer_timeout,
                "search_limit": SEARCH_LIMIT,
                "format": layout.format,
            },
            "corpus": corpus | {"stats": stats.to_json()},
            "queries": {
                "known_item": len(queries),
                "slices": dict(sorted(slices.items())),
                "common": common,
                "items": [q.to_json() for q in queries],
            },
            "stores": stores,
        }
        if opt.big_message:
            report["big_message"], report["show_big"] = self._measure_big(work)
        if opt.contention:
            report["contention"] = self._measure_contention(work)
        report["targets"] = check_targets(report)
        report["notes"] = self.notes
        return report


def _share(values: Sequence[bool]) -> float | None:
    return (sum(1 for v in values if v) / len(values)) if values else None


def _info_json(info: Any) -> JSONDict:
    if info is None:
        return {}
    if isinstance(info, dict):
        items = info.items()
    elif hasattr(info, "__dict__"):
        items = vars(info).items()
    else:
        return {"repr": repr(info)}
    out: JSONDict = {}
    for k, v in items:
        if _jsonable(v):
            out[str(k)] = v
        elif isinstance(v, Path):
            out[str(k)] = str(v)
        elif isinstance(v, dict) and all(_jsonable(x) for x in v.values()):
            out[str(k)] = {str(a): b for a, b in v.items()}
    return out


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def target_values(store: JSONDict) -> dict[str, float | None]:
    """The value of every target for one store's results."""
    return {
        "build_rate": _get(store, "build", "messages_per_s"),
        "reopen": _get(store, "reopen", "seconds"),
        "update_outside": _get(store, "update", "outside", "p50"),
        "p95_known": _get(store, "search", "known", "p95"),
        "p95_common": _get(store, "search", "common", "p95"),
        "recent": _get(store, "search", "recent", "p95"),
        "size_ratio": _get(store, "build", "size_ratio"),
        "build_rss": _get(store, "build", "rss_mb"),
        "build_search_rss": _get(store, "build_search", "rss_mb"),
        "rank1": _get(store, "search", "quality", "rank1"),
        "recall10": _get(store, "search", "quality", "recall10"),
    }


def _problem_counts(section: Any, *, no_hits: bool = True) -> tuple[int, int]:
    if not isinstance(section, dict):
        return 0, 0
    return int(section.get("errors") or 0), int(section.get("no_hits") or 0) if no_hits else 0


def target_problems(store: JSONDict) -> dict[str, tuple[int, int]]:
    """(errors, answers without hits) behind each target's measurement: a target measured on
    answers the store did not give cannot pass. Rank@1 and Recall@10 count an empty answer as
    a miss already, so only errors fail them."""
    known = _get(store, "search", "known")
    out = {
        "p95_known": _problem_counts(known),
        "p95_common": _problem_counts(_get(store, "search", "common")),
        "rank1": _problem_counts(known, no_hits=False),
        "recall10": _problem_counts(known, no_hits=False),
    }
    for name, lat in (_get(store, "search", "slice_latency") or {}).items():
        out[f"p95_known:{name}"] = _problem_counts(lat)
    out["build_search_rss"] = (int(_get(store, "build_search", "errors") or 0), 0)
    return out


def run_values(report: JSONDict) -> dict[str, tuple[float | None, int]]:
    """(value, failed runs or errors) of every :data:`RUN_TARGETS` entry."""
    stores = report.get("stores", {})
    scan = _get(stores, SCAN, "search", "known")
    peer = _get(stores, PRAISON_JSON, "search", "known")
    out: dict[str, tuple[float | None, int]] = {}
    if SCAN in stores and PRAISON_JSON in stores:  # both asked for and on a JSON store
        ratio = None
        errors = 0
        if isinstance(scan, dict) and isinstance(peer, dict):
            a, b = scan.get("p50_answered"), peer.get("p50_answered")
            ratio = a / b if a is not None and b else None
            errors = int(scan.get("errors") or 0)
        out["scan_vs_praisonai"] = (ratio, errors)
    big = report.get("big_message")
    if big:
        bad = big.get("error") is not None or any(c["exit"] != 0 for c in big["commands"])
        rss = big.get("rss_mb")
        value = rss * 2**20 / big["file_bytes"] if rss is not None else None
        out["big_message_rss"] = (value, int(bad))
    show = report.get("show_big")
    if show:
        bad = show.get("error") is not None or show.get("exit") != 0
        out["show_big"] = (show.get("seconds"), int(bad))
    writes = report.get("contention")
    if writes:
        runs = writes["runs"]
        failed_runs = sum(1 for r in runs if r.get("error") is not None)
        lost = sum(r.get("lost", 0) + r.get("duplicated", 0) for r in runs)
        out["writes_intact"] = (float(lost) if runs else None, failed_runs)
    return out


def slice_targets(store: JSONDict) -> list[tuple[str, str, str, float, str]]:
    """The known-item p95 target once per query slice (every slice must be fast)."""
    return [
        (f"p95_known:{name}", f"search p95 (known-item, {name})", "<", 0.010, "s")
        for name in sorted(_get(store, "search", "slice_latency") or {})
    ]


def _problem_text(errors: int, no_hits: int) -> str:
    parts = []
    if errors:
        parts.append(f"{errors} error{'s' if errors != 1 else ''}")
    if no_hits:
        parts.append(f"{no_hits} without hits")
    return ", ".join(parts)


def target_kind(report: JSONDict) -> str:
    """The store the targets judge: our JSON index, else the Pi index, else the group."""
    stores = report.get("stores", {})
    return next((k for k in (OURS, PI, GROUP) if k in stores), OURS)


def check_targets(report: JSONDict) -> list[JSONDict]:
    """PASS/FAIL of our indexed store (see :func:`target_kind`) against every target."""
    ours = report.get("stores", {}).get(target_kind(report)) or {}
    values = target_values(ours)
    for name in _get(ours, "search", "slice_latency") or {}:
        values[f"p95_known:{name}"] = _get(ours, "search", "slice_latency", name, "p95")
    problems = target_problems(ours)
    for name, (run_value, failed) in run_values(report).items():
        values[name] = run_value
        problems[name] = (failed, 0)
    big = report.get("big_message") or {}
    show = report.get("show_big") or {}
    run_targets = [
        (n, w, op, thr, u) for n, w, op, thr, u in RUN_TARGETS if n in run_values(report)
    ]
    run_targets = [
        (n, f"{w} ({big['file_bytes'] / 1e6:.1f} MB)" if n == "big_message_rss" and big
         else f"{w} ({show['file_bytes'] / 1e6:.1f} MB)" if n == "show_big" and show else w,
         op, thr, u)
        for n, w, op, thr, u in run_targets
    ]
    out = []
    for name, what, op, threshold, unit in (*TARGETS, *slice_targets(ours), *run_targets):
        value = values.get(name)
        errors, no_hits = problems.get(name, (0, 0))
        if errors or no_hits:
            passed: bool | None = False  # measured on answers the store did not give
        elif value is None:
            passed = None
        elif op == ">=":
            passed = value >= threshold
        elif op == "<=":
            passed = value <= threshold
        else:
            passed = value < threshold
        out.append(
            {
                "name": name,
                "what": what,
                "op": op,
                "threshold": threshold,
                "unit": unit,
                "value": value,
                "pass": passed,
                "errors": errors,
                "no_hits": no_hits,
            }
        )
    return out


# --------------------------------------------------------------------------- the text report


def _secs(value: Any) -> str:
    if value is None:
        return "-"
    if value < 1:
        return f"{value * 1000:.1f} ms"
    return f"{value:.2f} s"


def _num(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _mb(value: Any) -> str:
    return "-" if value is None else f"{value / 1e6:.1f} MB"


def _rate(value: Any) -> str:
    return "-" if value is None else f"{value:,.0f}/s"


def _fmt_target(value: Any, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "s":
        return _secs(value)
    if unit == "msgs/s":
        return f"{value:,.0f} msgs/s"
    if unit == "MB":
        return f"{value:.0f} MB"
    if unit == "x":
        return f"{value:.2f}x"
    if unit == "n":
        return f"{value:.0f}"
    return f"{value:.3f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(
            str(c).ljust(w) if i == 0 else str(c).rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()
        for r in [header, *rows]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def format_report(report: JSONDict) -> str:
    """The report as plain text (fixed-width tables, no markup)."""
    m = report["machine"]
    c = report["corpus"]
    st = c["stats"]
    q = report["queries"]
    fmt = c.get("format", "json")
    data_word = {"json": "JSON", "pi": "Pi JSONL", "mixed": "JSON + Pi JSONL"}.get(fmt, "JSON")
    size_word = {"pi": "JSONL", "mixed": "data"}.get(fmt, "JSON")
    lines = [
        "session-browser bench",
        f"machine: {m['cpu_count']} x {m['cpu_model']}, {m.get('memory_gb')} GB, "
        f"Python {m['python']}, SQLite {m['sqlite']} (FTS5 {'yes' if m['fts5'] else 'no'}), "
        f"praisonaiagents {m.get('praisonaiagents') or 'not installed'}",
        f"corpus: {c['source']} (seed {report['options']['seed']}"
        + (f"; {c['sources']}" if c.get("sources") else "")
        + f"): {st['sessions']:,} sessions "
        f"in {st['files']:,} files ({st['unreadable']} unreadable), {st['messages']:,} messages "
        f"({st['archived_messages']:,} archived), {_mb(st['json_bytes'])} of {data_word}",
        f"queries: {q['known_item']} known-item ("
        + ", ".join(f"{k} {v}" for k, v in q["slices"].items())
        + f"), {len(q['common'])} common-word ({' '.join(q['common'][:8])} ...)",
        "",
    ]
    stores: JSONDict = report["stores"]
    kinds = list(stores)
    header = ["", *[stores[k]["label"] for k in kinds]]

    def row(label: str, fn: Callable[[JSONDict], str]) -> list[str]:
        cells = [label]
        for k in kinds:
            s = stores[k]
            try:
                cells.append(fn(s))
            except (KeyError, TypeError):
                cells.append("-")
        return cells

    def build_cell(s: JSONDict) -> str:
        b = s.get("build")
        if b is None:
            return "n/a"
        if b.get("timed_out"):
            return f">{b['seconds']:.0f} s (stopped)"
        return _secs(b["seconds"])

    def rate_cell(s: JSONDict) -> str:
        b = s.get("build")
        if b is None:
            return "n/a"
        if b.get("timed_out"):
            est = (b.get("estimate") or {}).get("messages_per_s")
            return f"~{est:,.0f}/s (est.)" if est else "-"
        return _rate(b.get("messages_per_s"))

    def lat(section: str, key: str) -> Callable[[JSONDict], str]:
        def cell(s: JSONDict) -> str:
            v = _get(s, "search", section)
            if v is None:
                return "n/a"
            if "p50" not in v:
                return "stopped" if v.get("timed_out") else "error"
            return _secs(v[key]) + (
                ""
                if section != "known" or not s.get("capped")
                else f" (n={v['n']})"
                if key == "p50"
                else ""
            )

        return cell

    def problems(section: str) -> Callable[[JSONDict], str]:
        def cell(s: JSONDict) -> str:
            v = _get(s, "search", section)
            if v is None or "asked" not in v:
                return "n/a"
            return f"{v['errors']} / {v['no_hits']} of {v['asked']}"

        return cell

    def qual(key: str) -> Callable[[JSONDict], str]:
        def cell(s: JSONDict) -> str:
            v = _get(s, "search", "quality")
            if v is None:
                return "n/a"
            return _num(v[key])

        return cell

    def upd(key: str) -> Callable[[JSONDict], str]:
        def cell(s: JSONDict) -> str:
            u = s.get("update")
            if u is None:
                return "n/a"
            if "write" not in u:
                return "stopped" if u.get("timed_out") else "error"
            if key == "outside":
                if u["outside"] is None:
                    return "n/a (reads files)"
                found = u.get("outside_found")
                suffix = "" if found == 1.0 else " (not picked up)" if not found else " (partly)"
                return _secs(u["outside"]["p50"]) + suffix
            if key == "resumed":
                r = u.get("outside_resumed")
                return "n/a" if not r else f"{r['resumed']} of {r['of']}"
            if u["write"] is None:
                return "n/a (read-only)"
            found = u.get("write_found")
            return _secs(u["write"]["p50"]) + ("" if found == 1.0 else " (not found)")

        return cell

    rows = [
        row("status", lambda s: s["status"]),
        row("cold index build", build_cell),
        row("  messages/s", rate_cell),
        row(
            "  peak RSS (build)",
            lambda s: (
                f"{s['build']['rss_mb']:.0f} MB"
                if s.get("build") and not s["build"].get("timed_out")
                else "n/a"
            ),
        ),
        row(
            "  index size",
            lambda s: (
                _mb(s["build"]["index_bytes"]) + f" ({s['build']['size_ratio']:.2f}x {size_word})"
                if s.get("build") and not s["build"].get("timed_out")
                else "n/a"
            ),
        ),
        row(
            "reopen (up to date)",
            lambda s: (
                _secs(s["reopen"]["seconds"])
                if s.get("reopen") and "seconds" in s["reopen"]
                else "n/a"
            ),
        ),
        row("outside change -> fresh", upd("outside")),
        *(
            [row("  Pi reads resumed", upd("resumed"))]
            if any(_get(stores[k], "update", "outside_resumed") for k in kinds)
            else []
        ),
        row("write through store", upd("write")),
        row("search p50 (known-item)", lat("known", "p50")),
        row("search p95", lat("known", "p95")),
        row("search p99", lat("known", "p99")),
        row("  errors / without hits", problems("known")),
        row("search p50 (common words)", lat("common", "p50")),
        row("search p95", lat("common", "p95")),
        row("search p99", lat("common", "p99")),
        row("  errors / without hits", problems("common")),
        row("recent(50) p50", lat("recent", "p50")),
        row("recent(50) p95", lat("recent", "p95")),
        row("peak RSS (search)", lambda s: f"{s['search']['rss_mb']:.0f} MB"),
        row(
            "peak RSS (build + queries)",
            lambda s: (
                f"{s['build_search']['rss_mb']:.0f} MB" if "rss_mb" in s["build_search"] else
                "stopped" if s["build_search"].get("timed_out") else "error"
            ) if s.get("build_search") else "n/a",
        ),
        row("Rank@1", qual("rank1")),
        row("Recall@5", qual("recall5")),
        row("Recall@10", qual("recall10")),
        row("MRR", qual("mrr")),
        row("queries judged", lambda s: str(_get(s, "search", "quality", "n") or "-")),
    ]
    if any(_get(stores[k], "search", "quality_peer_subset") for k in kinds):
        rows += [
            row(
                "Rank@1 (shared subset)",
                lambda s: _num(
                    (_get(s, "search", "quality_peer_subset") or _get(s, "search", "quality"))[
                        "rank1"
                    ]
                ),
            ),
            row(
                "Recall@10 (shared subset)",
                lambda s: _num(
                    (_get(s, "search", "quality_peer_subset") or _get(s, "search", "quality"))[
                        "recall10"
                    ]
                ),
            ),
        ]
    lines += _table(header, rows)

    slice_names = sorted(q["slices"])
    if slice_names:
        lines += ["", "quality per slice (Rank@1 / Recall@10 / MRR, n)"]
        srows = []
        for name in slice_names:

            def scell(s: JSONDict, name: str = name) -> str:
                v = _get(s, "search", "slices", name)
                if not v:
                    return "-"
                return f"{v['rank1']:.2f} / {v['recall10']:.2f} / {v['mrr']:.2f}, {v['n']}"

            srows.append(row(name, scell))
        lines += _table(header, srows)
        lines += ["", "search latency per slice (p50 / p95; answered with hits of asked)"]
        lrows = []
        for name in slice_names:

            def lcell(s: JSONDict, name: str = name) -> str:
                v = _get(s, "search", "slice_latency", name)
                if not v:
                    return "-"
                answered = v["asked"] - v["errors"] - v["no_hits"]
                return f"{_secs(v['p50'])} / {_secs(v['p95'])}, {answered} of {v['asked']}"

            lrows.append(row(name, lcell))
        lines += _table(header, lrows)

    ours = stores.get(OURS) or {}
    peer = stores.get(PRAISON_SQLITE) or {}
    ours_rate = _get(ours, "build", "messages_per_s")
    peer_rate = _get(peer, "build", "messages_per_s") or _get(
        peer, "build", "estimate", "messages_per_s"
    )
    for k in kinds:
        src = _get(stores[k], "search", "sources")
        if k != GROUP or not src:
            continue
        lines += [
            "",
            f"{stores[k]['label']}: hits of the {src['queries']} known-item queries by source "
            "(top 10): " + ", ".join(f"{name} {n:,}" for name, n in src["top10"].items()),
            f"  queries with hits from both sources in their top 10: "
            f"{src['queries_with_several']} of {src['queries']}; with relevant hits from both: "
            f"{src.get('relevant_from_several', 0)}; first relevant hit from: "
            + ", ".join(f"{name} {n}" for name, n in src["first_relevant"].items()),
        ]
    lines += _heavy_lines(report)
    legend = list(LEGEND)
    if fmt != "json":
        legend.append(PI_LEGEND[0])
    if fmt == "mixed":
        legend.append(PI_LEGEND[1])
    lines += ["", *legend, ""]
    if ours_rate and peer_rate:
        lines.append(
            f"cold build: ours is {ours_rate / peer_rate:.0f}x PraisonAI SQLite's rate "
            "(target: at least 40x)"
        )
    judged = stores.get(target_kind(report)) or {}
    lines.append(f"targets ({judged.get('label', 'ours (indexed)')}):")
    for t in report["targets"]:
        mark = "n/a " if t["pass"] is None else "PASS" if t["pass"] else "FAIL"
        thr = _fmt_target(t["threshold"], t["unit"])
        problem = _problem_text(t.get("errors", 0), t.get("no_hits", 0))
        lines.append(
            f"  {mark}  {t['what']}: {_fmt_target(t['value'], t['unit'])} (target {t['op']} {thr}"
            + (f"; {problem}, not timed" if problem else "")
            + ")"
        )
    for k in kinds:
        for error in _get(stores[k], "search", "errors") or ():
            lines.append(f"error ({stores[k]['label']}): {error}")
    for note in report.get("notes", []):
        lines.append(f"note: {note}")
    lines.append(f"total time: {report.get('total_seconds', 0):.0f} s")
    return "\n".join(lines)


def _heavy_lines(report: JSONDict) -> list[str]:
    """The one-message file, the big show and the parallel writers, when measured."""
    lines: list[str] = []
    big = report.get("big_message")
    if big:
        lines += ["", f"one-message file: {big['file_bytes'] / 1e6:.1f} MB of \"ab ab ab ...\" "
                  "in one session, search + recent + show in one fresh process"]
        if big.get("error"):
            lines.append(f"  not measured: {big['error']}")
        else:
            lines.append(
                "  " + ", ".join(
                    f"{c['argv'][0]} {_secs(c['seconds'])}"
                    + ("" if c["exit"] == 0 else f" (exit {c['exit']})")
                    for c in big["commands"]
                )
                + f"; peak RSS {big['rss_mb']:.0f} MB (after imports {big['baseline_rss_mb']:.0f}"
                f" MB) = {big['rss_mb'] * 2**20 / big['file_bytes']:.1f}x the file"
            )
    show = report.get("show_big")
    if show:
        state = show.get("error") or (
            _secs(show["seconds"]) + ("" if show["exit"] == 0 else f" (exit {show['exit']})")
        )
        lines.append(f"show of one {show['file_bytes'] / 1e6:.1f} MB message: {state}")
    writes = report.get("contention")
    if writes:
        lines += [
            "",
            f"parallel writers: each process add_message x {writes['per_writer']} into "
            f"{writes['sessions']} sessions while {writes['readers']} processes search",
        ]
        rows = []
        for r in writes["runs"]:
            if "writes" not in r:
                rows.append([str(r["writers"]), r.get("error") or "-", *["-"] * 7])
                continue
            rows.append([
                str(r["writers"]),
                f"{r['writes']:,}",
                "-" if r["writes_per_s"] is None else f"{r['writes_per_s']:,.0f}/s",
                _secs(r["latency"]["p50"]),
                _secs(r["latency"]["p95"]),
                str(r["lost"]),
                str(r["duplicated"]),
                str(r["spilled"]),
                f"{r['reader_searches']:,}" + (f" ({r['reader_errors']} failed)"
                                               if r["reader_errors"] else ""),
            ])
        lines += _table(["writers", "writes", "writes/s", "p50", "p95", "lost", "duplicated",
                         "spilled", "reader searches"], rows)
        for r in writes["runs"]:
            if r.get("error"):
                lines.append(f"  {r['writers']} writer(s): {r['error']}")
    return lines


def run_benchmark(options: BenchOptions, progress: Progress | None = None) -> JSONDict:
    """Run the whole benchmark and return the report (see :func:`format_report`)."""
    return Harness(options, progress).run()


# --------------------------------------------------------------------------- entry point


def _phase_main(phase: str, args_path: Path, out_path: Path) -> int:
    os.environ.setdefault("DO_NOT_TRACK", "1")
    args = orjson.loads(args_path.read_bytes())
    result = PHASES[phase](args)
    tmp = out_path.with_suffix(".tmp")
    tmp.write_bytes(orjson.dumps(result))
    os.replace(tmp, out_path)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m session_browser.bench", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--phase", choices=sorted(PHASES), help=argparse.SUPPRESS)
    parser.add_argument("--args", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--store", help="DIR, or pi:DIR for a Pi session dir")
    parser.add_argument("--pi", action="store_true")
    parser.add_argument("--mixed", action="store_true")
    parser.add_argument("--home", type=Path)
    parser.add_argument("--sessions", type=int)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--peer-queries", type=int, default=20)
    parser.add_argument("--peer-timeout", type=float, default=300.0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--no-sgd", action="store_true")
    parser.add_argument("--no-big-message", action="store_true")
    parser.add_argument("--big-message-mb", type=float, default=50.0)
    parser.add_argument("--show-message-mb", type=float, default=8.0)
    parser.add_argument("--no-contention", action="store_true")
    parser.add_argument("--write-messages", type=int, default=100)
    ns = parser.parse_args(argv)
    if ns.phase:
        if ns.args is None or ns.out is None:
            parser.error("--phase needs --args and --out")
        return _phase_main(ns.phase, ns.args, ns.out)
    store: Path | None = None
    pi_store: Path | None = None
    if ns.store is not None:
        if ns.store.startswith("pi:"):
            from session_browser.core.sources.pi import default_pi_dir

            rest = ns.store[3:].strip()
            pi_store = Path(rest).expanduser() if rest else default_pi_dir()
        else:
            store = Path(ns.store).expanduser()
    options = BenchOptions(
        store=store,
        home=ns.home,
        pi_store=pi_store,
        pi=ns.pi,
        mixed=ns.mixed,
        sessions=ns.sessions,
        seed=ns.seed,
        queries=ns.queries,
        peers=not ns.no_peers,
        peer_queries=ns.peer_queries,
        peer_timeout=ns.peer_timeout,
        keep=ns.keep,
        sgd=not ns.no_sgd,
        big_message=not ns.no_big_message,
        big_message_mb=ns.big_message_mb,
        show_message_mb=ns.show_message_mb,
        contention=not ns.no_contention,
        write_messages=ns.write_messages,
    )
    try:
        report = run_benchmark(options, lambda msg: print(f"bench: {msg}", file=sys.stderr))
    except BenchError as exc:
        print(f"session-browser bench: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(report, indent=2) if ns.json else format_report(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
