"""``bench --mcp``: a ``search_sessions`` call through ``session-browser mcp`` beside the CLI's
in-process search, on the benchmark corpus.

The corpus and known-item queries are the benchmark's own. The stores are opened as the CLI
opens them (the index brought up to date first); each query then runs in this process
(``StoreGroup.search_ex``, what ``session-browser search`` calls) and right after as a tool
call to the server, a real subprocess spoken to with the MCP SDK's stdio client (one after
the other, so a busy machine slows both alike): latency p50/p95 of
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


def _open(sessions: Path) -> Any:
    """The stores of ``sessions`` opened as the CLI opens them (the index brought up to
    date)."""
    from session_browser.core.multi import index_of
    from session_browser.core.stores import open_stores

    group = open_stores([str(sessions)], indexed=True, reconcile="none", vault=True)
    for index in map(index_of, group.stores):
        if index is not None:
            index.reconcile()
    return group


async def _measure(group: Any, sessions: Path, env: dict[str, str], items: list[Any]) -> JSONDict:
    """Each query in this process, then as a tool call (one after the other, so both see
    the same load): their latencies (ms), the answers' sizes, ranks, cut answers and tool
    errors."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.types import TextContent

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "session_browser", "--store", str(sessions), "mcp"],
        env=env,
    )
    args = {"limit": SEARCH_LIMIT, "window": WINDOW}
    cli: list[float] = []
    times: list[float] = []
    sizes: list[float] = []
    ranks: list[int | None] = []
    cut = errors = 0
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            warm = items[:WARM]
            for n, item in enumerate([*warm, *items]):
                started = time.perf_counter()
                group.search_ex(item.query, limit=SEARCH_LIMIT, window=WINDOW)
                middle = time.perf_counter()
                result = await session.call_tool("search_sessions", {"query": item.query, **args})
                ended = time.perf_counter()
                if n < len(warm):
                    continue
                cli.append((middle - started) * 1000)
                times.append((ended - middle) * 1000)
                part = result.content[0] if result.content else None
                text = part.text if isinstance(part, TextContent) else ""
                if result.is_error:
                    errors += 1
                    continue
                sizes.append(float(len(text.encode())))
                data = json.loads(text)
                cut += "truncated" in data
                ranks.append(
                    first_relevant_rank([r["session_id"] for r in data["results"]], item.relevant)
                )
    return {
        "cli_ms": latency_stats(cli),
        "mcp_ms": latency_stats(times),
        "answer_bytes": latency_stats(sizes),
        "answers_cut": cut,
        "tool_errors": errors,
        "quality": quality_stats(ranks),
    }


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
        say("searching in process and over MCP")
        with _environ(env):
            group = _open(info.sessions_dir)
            try:
                measured = anyio.run(_measure, group, info.sessions_dir, env, items)
            finally:
                group.close()
        gap = (measured["mcp_ms"]["p95"] or 0.0) - (measured["cli_ms"]["p95"] or 0.0)
        return {
            "machine": machine_info(),
            "corpus": {"sessions": info.session_count, "messages": info.message_count},
            "queries": len(items),
            "limit": SEARCH_LIMIT,
            "window": WINDOW,
            "p95_gap_ms": round(gap, 3),
            "gap_target_ms": GAP_TARGET_MS,
            **measured,
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
