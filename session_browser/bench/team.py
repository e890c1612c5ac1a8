"""``bench --index URL``: the team index (PostgreSQL) beside the SQLite index on one corpus.

The seeded corpus and known-item queries are the benchmark's own. SQLite indexes the corpus
dir; the team index receives it from concurrent pushers (each a process pushing a quarter of
the files as its own machine) into a private schema of the given database, dropped at the
end. Then both answer the same queries (10 hits each): p50/p95 latency, Rank@1, Recall@10.

Beside them, one session holding a single message of ``"ab ab ab ..."`` (200 MB by default)
is pushed by ``session-browser push`` in a fresh process, into a private schema of its own:
its time, and its peak RSS as a multiple of the message (target: at most 4x).
"""

from __future__ import annotations

import multiprocessing
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from session_browser.core.index import SqliteSessionStore
from session_browser.core.model import JSONDict
from session_browser.core.paths import spill_dir_for
from session_browser.core.pgindex.conn import mask_url, psycopg_module
from session_browser.core.pgindex.push import Pusher
from session_browser.core.pgindex.store import PgIndexStore
from session_browser.core.sources.praisonai import PraisonAISource

from .config import SEARCH_LIMIT
from .corpus import build_corpus
from .heavy import write_one_message_session
from .metrics import first_relevant_rank, latency_stats, machine_info, quality_stats
from .queries import make_queries
from .runner import child_env, run_phase

PUSH_MESSAGE_TARGET = 4.0  # peak RSS of pushing one huge message / the message's size
PUSH_MESSAGE_TIMEOUT = 1800.0

Progress = Callable[[str], None]


class _Part:
    """Every ``n``-th file of a source, from ``k`` (one pusher's share)."""

    def __init__(self, source: PraisonAISource, k: int, n: int) -> None:
        self.source, self.k, self.n = source, k, n
        self.root = source.root

    def list_files(self) -> dict[str, tuple[int, int, int]]:
        names = sorted(self.source.list_files().items())
        return dict(names[self.k :: self.n])

    def parse(self, name: str, ident: tuple[int, int, int], prior: bytes | None) -> Any:
        return self.source.parse(name, ident, prior)

    def load(self, name: str, *, include_hidden: bool = False) -> JSONDict | None:
        return self.source.load(name, include_hidden=include_hidden)


_barrier: Any = None


def _init_pusher(barrier: Any) -> None:
    global _barrier
    _barrier = barrier


def _push_part(args: tuple[str, str, int, int]) -> tuple[int, float, float]:
    """One pusher's share: (messages, start, end) in wall-clock seconds, timed from the
    moment every pusher is connected (process start-up is not pushing)."""
    url, root, k, n = args
    with Pusher(url, machine=f"bench-{k + 1}") as pusher:
        if _barrier is not None:
            _barrier.wait(timeout=300)
        started = time.time()
        pusher.push_source(_Part(PraisonAISource(Path(root)), k, n), "praisonai")
        return pusher.report.messages, started, time.time()


def _in_schema(url: str, schema: str) -> str:
    conninfo = psycopg_module().conninfo
    return str(conninfo.make_conninfo(url, options=f"-c search_path={schema},public"))


def _answer(search: Callable[[str], list[str]], items: list[Any]) -> JSONDict:
    times: list[float] = []
    ranks: list[int | None] = []
    for item in items:
        started = time.perf_counter()
        ids = search(item.query)
        times.append((time.perf_counter() - started) * 1000)
        ranks.append(first_relevant_rank(ids, item.relevant))
    return {"latency_ms": latency_stats(times), "quality": quality_stats(ranks)}


def run_team_bench(
    url: str,
    *,
    sessions: int | None,
    seed: int,
    queries: int,
    pushers: int = 4,
    workdir: Path | None = None,
    keep: bool = False,
    progress: Progress | None = None,
    include_sgd: bool = True,
    push_message_mb: float = 0.0,
) -> JSONDict:
    """The report of ``bench --index URL`` (``push_message_mb`` 0: without the one-message
    push)."""
    say = progress or (lambda _line: None)
    work = Path(tempfile.mkdtemp(prefix="sb-team-bench-", dir=workdir))
    schema = f"sb_bench_{uuid.uuid4().hex[:10]}"
    psycopg = psycopg_module()
    try:
        say("building the corpus")
        info = build_corpus(work / "home", sessions=sessions, seed=seed, include_sgd=include_sgd)
        items = make_queries(info, n=queries, seed=seed)
        out: JSONDict = {
            "index": mask_url(url),
            "machine": machine_info(),
            "corpus": {"sessions": info.session_count, "messages": info.message_count},
            "queries": len(items),
            "pushers": pushers,
        }
        if push_message_mb > 0:
            out["push_message"] = measure_push_message(url, push_message_mb, work, say)
        say("building the SQLite index")
        started = time.perf_counter()
        local = SqliteSessionStore(
            info.sessions_dir, work / "index.sqlite3", spill_dir=spill_dir_for(info.sessions_dir)
        )
        sqlite_build = time.perf_counter() - started
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        target = _in_schema(url, schema)
        Pusher(target).close()  # the schema, made once before the pushers start
        say(f"pushing with {pushers} concurrent pushers")
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(pushers, initializer=_init_pusher, initargs=(ctx.Barrier(pushers),)) as pool:
            parts = pool.map(
                _push_part, [(target, str(info.sessions_dir), k, pushers) for k in range(pushers)]
            )
        wall = max(e for _m, _s, e in parts) - min(s for _m, s, _e in parts)
        pushed = sum(m for m, _s, _e in parts)
        say("analyzing")
        started = time.perf_counter()
        with Pusher(target) as pusher:
            pusher.analyze()
        analyze = time.perf_counter() - started
        team = PgIndexStore(target)
        try:
            say("searching")

            def on_sqlite(q: str) -> list[str]:
                return [h.session_id for h in local.search(q, limit=SEARCH_LIMIT)]

            def on_team(q: str) -> list[str]:
                return [h.session_id for h in team.search(q, limit=SEARCH_LIMIT)]

            for item in items[:20]:  # warm both caches alike
                on_sqlite(item.query)
                on_team(item.query)
            out["sqlite"] = {"build_s": round(sqlite_build, 3), **_answer(on_sqlite, items)}
            out["team"] = {
                "push_messages": pushed,
                "push_s": round(wall, 3),
                "push_rate": round(pushed / wall, 1) if wall > 0 else None,
                "analyze_s": round(analyze, 3),
                **_answer(on_team, items),
            }
        finally:
            team.close()
            local.close()
        return out
    finally:
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        finally:
            if not keep:
                shutil.rmtree(work, ignore_errors=True)


def measure_push_message(url: str, mb: float, work: Path, say: Progress) -> JSONDict:
    """``session-browser push`` of one session holding a single message of about ``mb`` MB,
    in a fresh process, into a private schema of the team index at ``url`` (dropped after):
    its time, its exit, and the process's peak RSS (``rss_mb``, ``baseline_rss_mb`` after
    imports) beside the message's size."""
    from .heavy import BIG_SESSION_ID

    home = work / "push-message"
    sessions = home / "sessions"
    sessions.mkdir(parents=True)
    size = write_one_message_session(
        sessions / f"{BIG_SESSION_ID}.json", BIG_SESSION_ID, int(mb * 1e6)
    )
    schema = f"sb_bench_{uuid.uuid4().hex[:10]}"
    psycopg = psycopg_module()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        say(f"pushing one {size / 1e6:.1f} MB message")
        res = run_phase(
            "cli",
            {
                "tag": "push-message",
                "commands": [["push", "--to", url, "--store", str(sessions)]],
            },
            workdir=work,
            # (push takes a URL: the schema comes through libpq's environment)
            env={**child_env(home, home), "PGOPTIONS": f"-c search_path={schema},public"},
            timeout=PUSH_MESSAGE_TIMEOUT,
        )
    finally:
        shutil.rmtree(home, ignore_errors=True)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    out: JSONDict = {"message_bytes": size, "error": None}
    if res.timed_out:
        out["error"] = f"stopped after {res.seconds:.0f} s"
    elif not res.ok:
        out["error"] = res.error
    else:
        cmd = res.data["commands"][0]
        out |= {
            "seconds": round(cmd["seconds"], 2),
            "exit": cmd["exit"],
            "rss_mb": res.data["rss_mb"],
            "baseline_rss_mb": res.data["baseline_rss_mb"],
            "rss_x": round(res.data["rss_mb"] * 2**20 / size, 2),
        }
        if cmd["exit"] not in (0, None):
            out["error"] = f"push exited with {cmd['exit']}"
    return out


def push_message_line(case: JSONDict) -> str:
    """The one-message push in one line: its peak RSS as a multiple of the message."""
    head = f"push of one {case['message_bytes'] / 1e6:.1f} MB message: "
    if case.get("error"):
        return head + f"not measured: {case['error']}"
    verdict = "ok" if case["rss_x"] <= PUSH_MESSAGE_TARGET else "FAILS"
    return head + (
        f"{case['seconds']:.1f} s, peak RSS {case['rss_mb']:.0f} MB (after imports "
        f"{case['baseline_rss_mb']:.0f} MB) = {case['rss_x']:.2f}x the message "
        f"(target <= {PUSH_MESSAGE_TARGET:g}x: {verdict})"
    )


def format_team(report: JSONDict) -> str:
    """The two engines side by side, with the targets."""
    s, t = report["sqlite"], report["team"]

    def ms(d: JSONDict, key: str) -> str:
        v = d["latency_ms"].get(key)
        return "-" if v is None else f"{v:.1f} ms"

    def q(d: JSONDict, key: str) -> str:
        v = d["quality"].get(key)
        return "-" if v is None else f"{v:.3f}"

    gap = abs((t["quality"]["rank1"] or 0) - (s["quality"]["rank1"] or 0))
    rows = [
        ("", "SQLite", "PostgreSQL", "target"),
        (
            "build / push",
            f"{s['build_s']:.1f} s",
            f"{t['push_rate']:,.0f} msgs/s ({report['pushers']} pushers)",
            ">= 20,000 msgs/s",
        ),
        ("search p50", ms(s, "p50"), ms(t, "p50"), ""),
        ("search p95", ms(s, "p95"), ms(t, "p95"), "< 50 ms"),
        ("Rank@1", q(s, "rank1"), q(t, "rank1"), f"within 0.01 (gap {gap:.3f})"),
        ("Recall@10", q(s, "recall10"), q(t, "recall10"), ""),
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [
        f"team index {report['index']}: {report['corpus']['sessions']:,} sessions, "
        f"{report['corpus']['messages']:,} messages, {report['queries']} queries",
    ]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    if "push_message" in report:
        lines.append(push_message_line(report["push_message"]))
    return "\n".join(lines)
