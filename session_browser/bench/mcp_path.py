"""``bench --mcp``: a ``search_sessions`` call through ``session-browser mcp`` beside the CLI's
in-process search, on the benchmark corpus, and where the difference goes.

The corpus and known-item queries are the benchmark's own. The stores are opened as the CLI
opens them (the index brought up to date first). Each query, ROUNDS times over, is then
searched in this process (``StoreGroup.search_ex``, what ``session-browser search`` calls)
and right after asked as a tool call to the server, a real subprocess spoken to with the
MCP SDK's stdio client (one after the other, so a busy machine slows both alike); then the
tool's answer is built once more in this process to time its building apart from its
search. Reported: latency p50/p95 of both paths (warm: a few queries run first), the p95
gap (target: within 5 ms; PASS/FAIL), where a call's time goes (the server's own timeline,
``$SESSION_BROWSER_MCP_TIMINGS``: before its tool, the tool, after it up to the answer's
write; and outside the server: the pipes, the wake-ups, the client), and the answer size
distribution (bytes; how many answers were cut to the budget).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
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
ROUNDS = 3  # each query asked this many times: percentiles over ROUNDS x queries calls
# the parts of a call over stdio, from the server's timeline
PARTS = ("server_before_tool", "tool", "server_after_tool", "outside_server")

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


class _TimedSearch:
    """A store group whose ``search_ex`` keeps how long it took (ms): what of building the
    tool's answer was its search."""

    def __init__(self, group: Any) -> None:
        self.group = group
        self.took = 0.0

    def search_ex(self, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return self.group.search_ex(*args, **kwargs)
        finally:
            self.took += (time.perf_counter() - started) * 1000


def _answer_building(group: Any, query: str) -> float:
    """Milliseconds of building the tool's answer to ``query`` in this process, its search
    left out."""
    from session_browser.mcp import answers

    timed = _TimedSearch(group)
    started = time.perf_counter()
    answers.search(
        timed,  # type: ignore[arg-type]
        query,
        limit=SEARCH_LIMIT,
        window=WINDOW,
        max_bytes=answers.DEFAULT_BYTES,
        live=answers.Live(),
        include_current=False,
    )
    return (time.perf_counter() - started) * 1000 - timed.took


def _split(calls: Sequence[JSONDict], totals: Sequence[float]) -> dict[str, list[float]]:
    """The parts (ms) of each call from the server's timeline (seconds) and the call's
    total as the client saw it (ms)."""
    parts: dict[str, list[float]] = {name: [] for name in PARTS}
    for call, total in zip(calls, totals, strict=True):
        read, started, ended, answered = (
            call["read"],
            call["started"],
            call["ended"],
            call["answered"],
        )
        for name, took in zip(
            PARTS,
            (
                (started - read) * 1000,
                (ended - started) * 1000,
                (answered - ended) * 1000,
                total - (answered - read) * 1000,
            ),
            strict=True,
        ):
            parts[name].append(took)
    return parts


async def _measure(
    group: Any, sessions: Path, env: dict[str, str], items: list[Any], timings: Path
) -> JSONDict:
    """Each query in this process, then as a tool call, ROUNDS times: their latencies (ms),
    the parts of the tool calls, the answer building apart, the answers' sizes, ranks
    (first round), cut answers and tool errors."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.types import TextContent

    from session_browser.mcp.stdio import TIMINGS_ENV

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "session_browser", "--store", str(sessions), "mcp"],
        env=env | {TIMINGS_ENV: str(timings)},
    )
    args = {"limit": SEARCH_LIMIT, "window": WINDOW}
    cli: list[float] = []
    times: list[float] = []
    building: list[float] = []
    sizes: list[float] = []
    ranks: list[int | None] = []
    cut = errors = 0
    warm = [(-1, item) for item in items[:WARM]]
    asked = [(r, item) for r in range(ROUNDS) for item in items]
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            for round_, item in [*warm, *asked]:
                started = time.perf_counter()
                group.search_ex(item.query, limit=SEARCH_LIMIT, window=WINDOW)
                middle = time.perf_counter()
                result = await session.call_tool("search_sessions", {"query": item.query, **args})
                ended = time.perf_counter()
                building.append(_answer_building(group, item.query))
                if round_ < 0:
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
                if round_ == 0:
                    found = [r["session_id"] for r in data["results"]]
                    ranks.append(first_relevant_rank(found, item.relevant))
    # the server wrote its timeline when it stopped (the client closed its stdin)
    calls = json.loads(timings.read_text(encoding="utf-8"))[len(warm) :]
    parts = _split(calls, times)
    return {
        "cli_ms": latency_stats(cli),
        "mcp_ms": latency_stats(times),
        "split_ms": {name: latency_stats(parts[name]) for name in PARTS},
        "answer_building_ms": latency_stats(building[len(warm) :]),
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
                measured = anyio.run(
                    _measure, group, info.sessions_dir, env, items, work / "timings.json"
                )
            finally:
                group.close()
        gap = (measured["mcp_ms"]["p95"] or 0.0) - (measured["cli_ms"]["p95"] or 0.0)
        p50_gap = (measured["mcp_ms"]["p50"] or 0.0) - (measured["cli_ms"]["p50"] or 0.0)
        return {
            "machine": machine_info(),
            "load": _load(),
            "corpus": {"sessions": info.session_count, "messages": info.message_count},
            "queries": len(items),
            "rounds": ROUNDS,
            "limit": SEARCH_LIMIT,
            "window": WINDOW,
            "p50_gap_ms": round(p50_gap, 3),
            "p95_gap_ms": round(gap, 3),
            "gap_target_ms": GAP_TARGET_MS,
            "verdict": "PASS" if gap <= GAP_TARGET_MS else "FAIL",
            **measured,
        }
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def _load() -> list[float] | None:
    """The 1, 5 and 15 minute load averages when the run ended (None where unknown): a
    latency gap on a busy machine is mostly waiting for a core."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def format_mcp(report: JSONDict) -> str:
    """The two paths side by side, the gap against its target, where a call's time goes,
    the answer sizes."""

    def ms(d: JSONDict, key: str) -> str:
        v = d.get(key)
        return "-" if v is None else f"{v:.2f} ms"

    def row(label: str, d: JSONDict) -> str:
        return f"  {label:<36} p50 {ms(d, 'p50'):>9}  p95 {ms(d, 'p95'):>9}"

    b, split = report["answer_bytes"], report["split_ms"]
    size = " ".join(f"{k} {b[k]:,.0f}" for k in ("p50", "p95", "max") if b.get(k) is not None)
    load = report.get("load")
    return "\n".join(
        [
            f"MCP search_sessions: {report['corpus']['sessions']:,} sessions, "
            f"{report['corpus']['messages']:,} messages, {report['queries']} queries x "
            f"{report['rounds']} = {report['mcp_ms']['n']} calls (limit {report['limit']}, "
            f"window {report['window']})"
            + (f"; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}" if load else ""),
            row("in-process search (the CLI's):", report["cli_ms"]),
            row("tool call over stdio:", report["mcp_ms"]),
            f"  gap: p50 {report['p50_gap_ms']:.2f} ms, p95 {report['p95_gap_ms']:.2f} ms "
            f"(target p95 <= {report['gap_target_ms']:g} ms: {report['verdict']})",
            "  where a call's time goes:",
            row("  the server, before its tool:", split["server_before_tool"])
            + "  (JSON-RPC in, SDK dispatch, arguments)",
            row("  the tool (search + answer):", split["tool"]),
            row("    of which answer building:", report["answer_building_ms"])
            + "  (timed in process)",
            row("  the server, after its tool:", split["server_after_tool"])
            + "  (the result, JSON-RPC out)",
            row("  outside the server:", split["outside_server"])
            + "  (pipes, wake-ups, the client SDK)",
            f"  answer bytes: {size}; cut to the budget: {report['answers_cut']}; "
            f"tool errors: {report['tool_errors']}",
        ]
    )
