"""``bench --mcp``: a ``search_sessions`` call through ``session-browser mcp`` beside the CLI's
in-process search, on the benchmark corpus.

The corpus and known-item queries are the benchmark's own. The stores are opened as the CLI
opens them (the index brought up to date first); the same queries then run in this process
(``StoreGroup.search_ex``, what ``session-browser search`` calls) and as tool calls to the
server, a real subprocess spoken to with the MCP SDK's stdio client: latency p50/p95 of
each (warm: a few queries run first), the p95 gap (target: within 5 ms), and the answer size
distribution (bytes; how many answers were cut to the budget).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .config import SEARCH_LIMIT
from .corpus import build_corpus
from .metrics import first_relevant_rank, latency_stats, machine_info, quality_stats
from .queries import make_queries
from .runner import child_env
from .sessions import JSONDict

GAP_TARGET_MS = 5.0
WINDOW = 2  # the tool's default window, used on both paths
WARM = 20

Progress = Callable[[str], None]


@contextmanager
def _environ(env: dict[str, str]) -> Iterator[None]:
    """``os.environ`` as ``env`` meanwhile (the index goes to the bench's own cache dir)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _in_process(sessions: Path, queries: list[str]) -> list[float]:
    from session_browser.core.multi import index_of
    from session_browser.core.stores import open_stores

    group = open_stores([str(sessions)], indexed=True, reconcile="none", vault=True)
    try:
        for store in group.stores:
            index = index_of(store)
            if index is not None:
                index.reconcile()
        for q in queries[:WARM]:
            group.search_ex(q, limit=SEARCH_LIMIT, window=WINDOW)
        times = []
        for q in queries:
            started = time.perf_counter()
            group.search_ex(q, limit=SEARCH_LIMIT, window=WINDOW)
            times.append((time.perf_counter() - started) * 1000)
        return times
    finally:
        group.close()


async def _over_mcp(
    sessions: Path, env: dict[str, str], items: list[Any]
) -> tuple[list[float], list[int], list[int | None], int, int]:
    """(latencies ms, answer sizes, ranks, answers cut, tool errors) of the tool calls."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.types import TextContent

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "session_browser", "--store", str(sessions), "mcp"],
        env=env,
    )
    args = {"limit": SEARCH_LIMIT, "window": WINDOW}
    times: list[float] = []
    sizes: list[int] = []
    ranks: list[int | None] = []
    cut = errors = 0
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            for item in items[:WARM]:
                await session.call_tool("search_sessions", {"query": item.query, **args})
            for item in items:
                started = time.perf_counter()
                result = await session.call_tool("search_sessions", {"query": item.query, **args})
                times.append((time.perf_counter() - started) * 1000)
                part = result.content[0] if result.content else None
                text = part.text if isinstance(part, TextContent) else ""
                if result.is_error:
                    errors += 1
                    continue
                sizes.append(len(text.encode()))
                data = json.loads(text)
                cut += "truncated" in data
                ranks.append(
                    first_relevant_rank([r["session_id"] for r in data["results"]], item.relevant)
                )
    return times, sizes, ranks, cut, errors


def run_mcp_bench(
    *,
    sessions: int | None,
    seed: int,
    queries: int,
    workdir: Path | None = None,
    keep: bool = False,
    progress: Progress | None = None,
    include_sgd: bool = True,
) -> JSONDict:
    """The report of ``bench --mcp``."""
    import anyio

    say = progress or (lambda _line: None)
    work = Path(tempfile.mkdtemp(prefix="sb-mcp-bench-", dir=workdir))
    try:
        say("building the corpus")
        info = build_corpus(work / "home", sessions=sessions, seed=seed, include_sgd=include_sgd)
        items = make_queries(info, n=queries, seed=seed)
        env = child_env(info.home, work)
        say("searching in process")
        with _environ(env):
            cli = _in_process(info.sessions_dir, [i.query for i in items])
        say("searching over MCP")
        times, sizes, ranks, cut, errors = anyio.run(_over_mcp, info.sessions_dir, env, items)
        cli_stats, mcp_stats = latency_stats(cli), latency_stats(times)
        gap = (mcp_stats["p95"] or 0.0) - (cli_stats["p95"] or 0.0)
        return {
            "machine": machine_info(),
            "corpus": {"sessions": info.session_count, "messages": info.message_count},
            "queries": len(items),
            "limit": SEARCH_LIMIT,
            "window": WINDOW,
            "cli_ms": cli_stats,
            "mcp_ms": mcp_stats,
            "p95_gap_ms": round(gap, 3),
            "gap_target_ms": GAP_TARGET_MS,
            "answer_bytes": latency_stats([float(s) for s in sizes]),
            "answers_cut": cut,
            "tool_errors": errors,
            "quality": quality_stats(ranks),
        }
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def format_mcp(report: JSONDict) -> str:
    """The two paths side by side, the gap against its target, the answer sizes."""

    def ms(d: JSONDict, key: str) -> str:
        v = d.get(key)
        return "-" if v is None else f"{v:.2f} ms"

    c, m, b = report["cli_ms"], report["mcp_ms"], report["answer_bytes"]
    verdict = "ok" if report["p95_gap_ms"] <= report["gap_target_ms"] else "FAILS"
    size = " ".join(f"{k} {b[k]:,.0f}" for k in ("p50", "p95", "max") if b.get(k) is not None)
    return "\n".join(
        [
            f"MCP search_sessions: {report['corpus']['sessions']:,} sessions, "
            f"{report['corpus']['messages']:,} messages, {report['queries']} queries "
            f"(limit {report['limit']}, window {report['window']})",
            f"  in-process search (the CLI's): p50 {ms(c, 'p50')}  p95 {ms(c, 'p95')}",
            f"  tool call over stdio:          p50 {ms(m, 'p50')}  p95 {ms(m, 'p95')}",
            f"  p95 gap {report['p95_gap_ms']:.2f} ms "
            f"(target <= {report['gap_target_ms']:g} ms: {verdict})",
            f"  answer bytes: {size}; cut to the budget: {report['answers_cut']}; "
            f"tool errors: {report['tool_errors']}",
        ]
    )
