"""Numbers from measurements: percentiles, latencies, ranking quality, peak RSS and the machine."""

from __future__ import annotations

import math
import os
import platform
import resource
import sqlite3
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from session_browser.bench.config import SEARCH_LIMIT
from session_browser.bench.sessions import JSONDict


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


def share(values: Sequence[bool]) -> float | None:
    """The share of true values; None for no values."""
    return (sum(1 for v in values if v) / len(values)) if values else None


def first_relevant_rank(hit_ids: Sequence[str], relevant: Iterable[str]) -> int | None:
    """1-based position of the first relevant id, or None."""
    wanted = set(relevant)
    for pos, sid in enumerate(hit_ids, start=1):
        if sid in wanted:
            return pos
    return None



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

