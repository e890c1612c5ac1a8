"""``session-browser bench``: speed and quality of the index, the scan and PraisonAI's stores."""

from __future__ import annotations

import functools
import json
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import ParamSpec, TypeVar

import click

from session_browser.bench.config import AGENT_KINDS, ALL_KINDS, BenchError, BenchOptions
from session_browser.bench.harness import run_benchmark
from session_browser.bench.report import format_report
from session_browser.cli.bench_options import (
    amount_option,
    count_option,
    dir_option,
    no_sgd_option,
    switch_option,
)
from session_browser.cli.common import fail
from session_browser.core.sources import SOURCES
from session_browser.core.sources.pi import default_pi_dir
from session_browser.core.stores import PI_PREFIX
from session_browser.core.text import printable

P = ParamSpec("P")
R = TypeVar("R")


def sigterm_interrupts(command: Callable[P, R]) -> Callable[P, R]:
    """``command`` with SIGTERM ending it as Ctrl+C does: Python's own SIGTERM action ends the
    process at once, so the bench's cleanup never ran (its work dir stayed, and the processes
    it started, a phase or the embedding process, ran on to their end)."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        def interrupt(_signum: int, _frame: object) -> None:
            raise KeyboardInterrupt

        try:
            previous = signal.signal(signal.SIGTERM, interrupt)
        except ValueError:  # (not the main thread: left as it is)
            return command(*args, **kwargs)
        try:
            return command(*args, **kwargs)
        finally:
            signal.signal(signal.SIGTERM, previous)

    return run


@click.command("bench")
@click.option(
    "--store",
    "store_dir",
    metavar="DIR|pi:DIR|KIND:DIR",
    help="Measure an existing session dir, or a Pi or coding agent's session dir as "
    "pi:DIR or KIND:DIR, KIND one of --format's (copied first; never changed).",
)
@dir_option(
    "--home",
    help="Measure an existing PraisonAI home (DIR/sessions; copied first; never changed).",
)
@count_option(
    "--sessions",
    default=None,
    help="Corpus size (default: every source conversation once; more copies with new ids).",
)
@click.option(
    "--pi",
    "as_pi",
    is_flag=True,
    help="Build the corpus as Pi JSONL files (same conversations, same queries) and measure "
    "our Pi index and Pi scan.",
)
@click.option(
    "--format",
    "agent_format",
    type=click.Choice(list(AGENT_KINDS)),
    default=None,
    help="Build the corpus as this coding agent's session files (same conversations, same "
    "queries: Claude Code transcripts, Codex rollouts, Gemini CLI chat files, Copilot CLI "
    "events.jsonl, Kimi CLI wire logs, Cline task folders, Aider chat histories, OpenCode's "
    "and Goose's SQLite databases) and measure "
    "our index and scan of that format.",
)
@click.option(
    "--claude",
    "as_claude",
    is_flag=True,
    help="Build the corpus as Claude Code transcripts (same conversations, same queries) and "
    "measure our Claude Code index and scan (--format claude).",
)
@click.option(
    "--codex",
    "as_codex",
    is_flag=True,
    help="Build the corpus as Codex rollouts (same conversations, same queries) and measure "
    "our Codex index and scan (--format codex).",
)
@click.option(
    "--mixed",
    is_flag=True,
    help="Build half the corpus as PraisonAI JSON and half as Pi JSONL, and measure both "
    "opened as one group (hits ranked together).",
)
@click.option("--seed", type=int, default=7, show_default=True, help="Corpus and query seed.")
@count_option(
    "--queries",
    default=200,
    help="Known-item queries to generate.",
)
@switch_option(
    "--peers/--no-peers",
    help="Also measure PraisonAI's own stores (when praisonaiagents is installed).",
)
@count_option(
    "--peer-queries",
    default=20,
    help="Queries PraisonAI's stores answer (each is slow on a large store).",
)
@amount_option(
    "--peer-timeout",
    minimum=1,
    default=300.0,
    help="Seconds after which a phase of a PraisonAI store is stopped.",
)
@click.option(
    "--only",
    "only",
    multiple=True,
    type=click.Choice(ALL_KINDS),
    help="Measure only these stores (repeatable).",
)
@dir_option(
    "--workdir",
    exists=True,
    metavar=None,
    help="Where the temporary copies and indexes go (default: the system temp dir).",
)
@switch_option(
    "--big-message/--no-big-message",
    help="Measure one session holding a single huge message: peak RSS of search + recent + "
    "show on it, and the time of show on a smaller one.",
)
@amount_option(
    "--big-message-mb",
    minimum=0.01,
    default=50.0,
    help="Size of the one-message file (its peak-RSS target is 4x this).",
)
@amount_option(
    "--show-message-mb",
    minimum=0.01,
    default=8.0,
    help="Size of the message whose show is timed (target under 2 s).",
)
@switch_option(
    "--contention/--no-contention",
    help="Measure 1, 4 and 8 writer processes adding messages to 4 sessions while 2 "
    "processes search (writes/s, p95, lost and duplicated messages).",
)
@click.option(
    "--busy",
    is_flag=True,
    help="Ask our index's known-item and common-word queries a second time while one "
    "CPU-bound process per core runs beside them (at the same priority): p50/p95/p99 with "
    "every core busy (target: known-item p95 < 10 ms).",
)
@count_option(
    "--builds",
    default=1,
    help="Cold builds of our index, each with the vault and without it in turn; the median "
    "of each is reported and checked (a host whose speed varies from one run to the next).",
)
@count_option(
    "--write-messages",
    default=100,
    help="add_message calls per writer process.",
)
@no_sgd_option
@click.option(
    "--index",
    "index_url",
    metavar="URL",
    default=None,
    help="Measure the team index at URL (postgresql://...; a private schema, dropped after) "
    "beside the SQLite index on the same corpus: push rate, search p50/p95, Rank@1, "
    "Recall@10.",
)
@click.option(
    "--push-message-mb",
    type=click.FloatRange(min=0),
    default=200.0,
    show_default=True,
    help="With --index: also push one session holding a single message of this size, in a "
    "fresh process, and print its peak RSS as a multiple of the message (target <= 4x); "
    "0 skips it.",
)
@click.option(
    "--pushers",
    type=click.IntRange(min=1, max=16),
    default=4,
    show_default=True,
    help="Concurrent pushers for --index.",
)
@click.option(
    "--mcp",
    "mcp_path",
    is_flag=True,
    help="Measure search_sessions through 'session-browser mcp' (a subprocess, the SDK's "
    "stdio client) beside the CLI's in-process search on the corpus, each query 3 times: "
    "p50/p95, the p95 gap (target <= 5 ms: PASS/FAIL), where a call's time goes (the "
    "server's own timeline), answer sizes.",
)
@click.option(
    "--questions",
    "questions",
    is_flag=True,
    help="Measure recall by paraphrase instead: the shipped 200 questions asked in other "
    "words than their sessions, over the built corpus (--sessions, --seed), through our "
    "search, a plain session-level BM25 reference and the lexical-recall experiment "
    "(Rank@1, Recall@10, MRR, p50/p95 per split; the known-item queries too).",
)
@click.option(
    "--mode",
    type=click.Choice(["hybrid", "lexical"]),
    default=None,
    help="With --questions: hybrid asks our search in lexical and in hybrid mode side by side "
    "(the vectors embedded first by a process of its own: time, bytes and peak memory "
    "printed), next to the plain BM25 reference; lexical (the default) asks the lexical "
    "engines.",
)
@click.option(
    "--redact-kept",
    "redact_cost",
    is_flag=True,
    help="Measure what {\"redact_kept\": true} costs: 'index update' (index + vault) on the "
    "built corpus (--sessions, --seed) without and with the setting, each in a fresh "
    "process and fresh dirs; both times and their ratio.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the whole report as JSON.")
@click.option("--keep", is_flag=True, help="Keep the work dir (corpus, copies, indexes, logs).")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
@sigterm_interrupts
def bench(
    store_dir: str | None,
    home: Path | None,
    sessions: int | None,
    as_pi: bool,
    agent_format: str | None,
    as_claude: bool,
    as_codex: bool,
    mixed: bool,
    seed: int,
    queries: int,
    peers: bool,
    peer_queries: int,
    peer_timeout: float,
    only: tuple[str, ...],
    workdir: Path | None,
    big_message: bool,
    big_message_mb: float,
    show_message_mb: float,
    contention: bool,
    busy: bool,
    builds: int,
    write_messages: int,
    no_sgd: bool,
    index_url: str | None,
    push_message_mb: float,
    pushers: int,
    mcp_path: bool,
    questions: bool,
    mode: str | None,
    redact_cost: bool,
    as_json: bool,
    keep: bool,
    quiet: bool,
) -> None:
    """Measure build speed, freshness, latency and ranking quality, side by side.

    Without --store/--home it builds a seeded corpus of real conversations into a
    temporary PraisonAI home (--pi: Pi JSONL files; --format KIND: a coding agent's session
    files, --claude and --codex its aliases; --mixed: half and half), deleted
    afterwards unless --keep. Every store works on its own copy, and every phase runs in a
    fresh process. Targets are checked on our index (JSON, else Pi, else the group,
    else the coding agent's index).

    Corpus: the Schema-Guided Dialogue set plus the chitchat-dataset package when the SGD
    file is found (../shared/data, or $SESSION_BROWSER_DATA_DIR); otherwise, or with
    --no-sgd, chitchat-dataset plus the demo conversations (pip install
    'session-browser[bench]').
    """
    given = store_dir is not None or home is not None
    formats = {f for f, on in (("claude", as_claude), ("codex", as_codex)) if on}
    if agent_format is not None:
        formats.add(agent_format)
    if len(formats) > 1:
        fail("give one of --format, --claude, --codex")
    as_agent = formats.pop() if formats else None
    if questions:
        if (
            given
            or index_url is not None
            or as_pi
            or as_agent is not None
            or mixed
            or no_sgd
            or mcp_path
        ):
            fail(
                "--questions measures the built SGD + chitchat corpus; it does not apply to "
                "--store, --home, --index, --pi, --format, --mixed, --no-sgd or --mcp"
            )
        _questions(sessions, seed, workdir, keep, quiet, as_json, mode)
        return
    if mode is not None:
        fail("--mode applies to --questions")
    if redact_cost:
        if given or index_url is not None or as_pi or as_agent is not None or mixed or mcp_path:
            fail(
                "--redact-kept measures the built PraisonAI corpus; it does not apply to "
                "--store, --home, --index, --pi, --format, --mixed or --mcp"
            )
        _redact_kept(sessions, seed, workdir, keep, quiet, as_json, no_sgd)
        return
    if mcp_path:
        _mcp(sessions, seed, queries, workdir, keep, quiet, as_json, no_sgd)
        return
    if index_url is not None:
        _team(
            index_url,
            sessions,
            seed,
            queries,
            pushers,
            workdir,
            keep,
            quiet,
            as_json,
            no_sgd,
            push_message_mb,
        )
        return
    if store_dir is not None and home is not None:
        fail("give --store or --home, not both")
    if sum((as_pi, as_agent is not None, mixed)) > 1:
        fail("give one of --pi, --format, --mixed")
    if given and (as_pi or as_agent is not None or mixed):
        fail("--pi, --format and --mixed build a corpus; they do not apply to --store/--home")
    if given and sessions is not None:
        fail("--sessions builds a corpus; it does not apply to --store/--home")
    store_path: Path | None = None
    pi_store: Path | None = None
    agent = as_agent
    agent_store: Path | None = None
    if store_dir is not None:
        agent_kind = next(
            (
                SOURCES[name]
                for name in AGENT_KINDS
                if store_dir.startswith(SOURCES[name].prefix or "\0")
            ),
            None,
        )
        if agent_kind is not None:
            rest = store_dir[len(agent_kind.prefix or "") :].strip()
            agent = agent_kind.name
            agent_store = Path(rest).expanduser() if rest else agent_kind.default_dirs(None)[0]
        elif store_dir.startswith(PI_PREFIX):
            rest = store_dir[len(PI_PREFIX) :].strip()
            pi_store = Path(rest).expanduser() if rest else default_pi_dir()
        elif not store_dir.strip():
            fail("--store needs a directory")
        else:
            store_path = Path(store_dir).expanduser()
    options = BenchOptions(
        store=store_path,
        home=home,
        pi_store=pi_store,
        pi=as_pi,
        agent=agent,
        agent_store=agent_store,
        mixed=mixed,
        sessions=sessions,
        seed=seed,
        queries=queries,
        peers=peers,
        peer_queries=peer_queries,
        peer_timeout=peer_timeout,
        keep=keep,
        workdir=workdir,
        stores=only or ALL_KINDS,
        sgd=not no_sgd,
        big_message=big_message,
        big_message_mb=big_message_mb,
        show_message_mb=show_message_mb,
        contention=contention,
        busy=busy,
        builds=builds,
        write_messages=write_messages,
    )

    def progress(message: str) -> None:
        if not quiet:
            click.echo(f"bench: {printable(message, one_line=True)}", err=True)

    try:
        report = run_benchmark(options, progress)
    except (BenchError, FileNotFoundError, FileExistsError) as exc:
        fail(str(exc))
        return
    except KeyboardInterrupt:
        click.echo("bench: interrupted", err=True)
        sys.exit(130)
    if as_json:
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        click.echo(printable(format_report(report)))


def _mcp(
    sessions: int | None,
    seed: int,
    queries: int,
    workdir: Path | None,
    keep: bool,
    quiet: bool,
    as_json: bool,
    no_sgd: bool,
) -> None:
    """``bench --mcp``: the MCP tool call beside the in-process search (see
    :mod:`..bench.mcp_path`)."""
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        fail("--mcp needs the mcp package: pip install 'session-browser[mcp]'")
    from session_browser.bench.mcp_path import format_mcp, run_mcp_bench

    def say(line: str) -> None:
        if not quiet:
            click.echo(f"bench: {line}", err=True)

    report = run_mcp_bench(
        sessions=sessions or 2000,
        seed=seed,
        queries=queries,
        workdir=workdir,
        keep=keep,
        progress=say,
        include_sgd=not no_sgd,
    )
    click.echo(json.dumps(report, indent=2) if as_json else format_mcp(report))


def _team(
    url: str,
    sessions: int | None,
    seed: int,
    queries: int,
    pushers: int,
    workdir: Path | None,
    keep: bool,
    quiet: bool,
    as_json: bool,
    no_sgd: bool,
    push_message_mb: float,
) -> None:
    """``bench --index URL``: the team index beside SQLite (see :mod:`..bench.team`)."""
    from session_browser.bench.team import format_team, run_team_bench
    from session_browser.core.pgindex.conn import PgIndexError, error_line, is_index_url

    if not is_index_url(url):
        fail("--index must be a postgresql:// URL")

    def say(line: str) -> None:
        if not quiet:
            click.echo(f"bench: {line}", err=True)

    try:
        report = run_team_bench(
            url,
            sessions=sessions or 2000,
            seed=seed,
            queries=queries,
            pushers=pushers,
            workdir=workdir,
            keep=keep,
            progress=say,
            include_sgd=not no_sgd,
            push_message_mb=push_message_mb,
        )
    except PgIndexError as exc:
        fail(str(exc))
    except Exception as exc:
        if type(exc).__module__.startswith("psycopg"):
            fail(f"the team index failed: {error_line(exc, url)}")
        raise
    click.echo(json.dumps(report, indent=2) if as_json else format_team(report))


def _questions(
    sessions: int | None,
    seed: int,
    workdir: Path | None,
    keep: bool,
    quiet: bool,
    as_json: bool,
    mode: str | None = None,
) -> None:
    """``bench --questions``: recall by paraphrase (see :mod:`..bench.paraphrase`)."""
    from session_browser.bench.paraphrase import (
        HYBRID_ENGINES,
        QuestionsOptions,
        format_questions_report,
        run_questions_bench,
    )

    def say(line: str) -> None:
        if not quiet:
            click.echo(f"bench: {printable(line, one_line=True)}", err=True)

    options = QuestionsOptions(sessions=sessions, seed=seed, workdir=workdir, keep=keep)
    if mode == "hybrid":
        options.engines = HYBRID_ENGINES
    try:
        report = run_questions_bench(options, say)
    except (BenchError, FileNotFoundError, FileExistsError) as exc:
        fail(str(exc))
        return
    except KeyboardInterrupt:
        click.echo("bench: interrupted", err=True)
        sys.exit(130)
    if as_json:
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        click.echo(printable(format_questions_report(report)))


def _redact_kept(
    sessions: int | None,
    seed: int,
    workdir: Path | None,
    keep: bool,
    quiet: bool,
    as_json: bool,
    no_sgd: bool,
) -> None:
    """``bench --redact-kept``: an index build without and with the setting (see
    :mod:`..bench.redact_cost`)."""
    from session_browser.bench.redact_cost import format_redact_kept, run_redact_kept_bench

    def say(line: str) -> None:
        if not quiet:
            click.echo(f"bench: {line}", err=True)

    try:
        report = run_redact_kept_bench(
            sessions=sessions,
            seed=seed,
            workdir=workdir,
            keep=keep,
            progress=say,
            include_sgd=not no_sgd,
        )
    except (BenchError, RuntimeError, FileNotFoundError, FileExistsError) as exc:
        fail(str(exc))
        return
    click.echo(json.dumps(report, indent=2) if as_json else format_redact_kept(report))
