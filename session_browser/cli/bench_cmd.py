"""``session-browser bench``: speed and quality of the index, the scan and PraisonAI's stores."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from session_browser.bench.config import AGENT_KINDS, ALL_KINDS, BenchError, BenchOptions
from session_browser.bench.harness import run_benchmark
from session_browser.bench.report import format_report
from session_browser.cli.common import fail
from session_browser.core.sources import SOURCES
from session_browser.core.sources.pi import default_pi_dir
from session_browser.core.stores import PI_PREFIX
from session_browser.core.text import printable


@click.command("bench")
@click.option(
    "--store",
    "store_dir",
    metavar="DIR|pi:DIR|claude:DIR|codex:DIR",
    help="Measure an existing session dir, or a Pi, Claude Code or Codex session dir as "
    "pi:DIR, claude:DIR, codex:DIR (copied first; never changed).",
)
@click.option(
    "--home",
    type=click.Path(path_type=Path, file_okay=False),
    metavar="DIR",
    help="Measure an existing PraisonAI home (DIR/sessions; copied first; never changed).",
)
@click.option(
    "--sessions",
    type=click.IntRange(min=1),
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
    "--claude",
    "as_claude",
    is_flag=True,
    help="Build the corpus as Claude Code transcripts (same conversations, same queries) and "
    "measure our Claude Code index and scan.",
)
@click.option(
    "--codex",
    "as_codex",
    is_flag=True,
    help="Build the corpus as Codex rollouts (same conversations, same queries) and measure "
    "our Codex index and scan.",
)
@click.option(
    "--mixed",
    is_flag=True,
    help="Build half the corpus as PraisonAI JSON and half as Pi JSONL, and measure both "
    "opened as one group (hits ranked together).",
)
@click.option("--seed", type=int, default=7, show_default=True, help="Corpus and query seed.")
@click.option(
    "--queries",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    help="Known-item queries to generate.",
)
@click.option(
    "--peers/--no-peers",
    default=True,
    show_default=True,
    help="Also measure PraisonAI's own stores (when praisonaiagents is installed).",
)
@click.option(
    "--peer-queries",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="Queries PraisonAI's stores answer (each is slow on a large store).",
)
@click.option(
    "--peer-timeout",
    type=click.FloatRange(min=1),
    default=300.0,
    show_default=True,
    help="Seconds after which a phase of a PraisonAI store is stopped.",
)
@click.option(
    "--only",
    "only",
    multiple=True,
    type=click.Choice(ALL_KINDS),
    help="Measure only these stores (repeatable).",
)
@click.option(
    "--workdir",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=None,
    help="Where the temporary copies and indexes go (default: the system temp dir).",
)
@click.option(
    "--big-message/--no-big-message",
    default=True,
    show_default=True,
    help="Measure one session holding a single huge message: peak RSS of search + recent + "
    "show on it, and the time of show on a smaller one.",
)
@click.option(
    "--big-message-mb",
    type=click.FloatRange(min=0.01),
    default=50.0,
    show_default=True,
    help="Size of the one-message file (its peak-RSS target is 4x this).",
)
@click.option(
    "--show-message-mb",
    type=click.FloatRange(min=0.01),
    default=8.0,
    show_default=True,
    help="Size of the message whose show is timed (target under 2 s).",
)
@click.option(
    "--contention/--no-contention",
    default=True,
    show_default=True,
    help="Measure 1, 4 and 8 writer processes adding messages to 4 sessions while 2 "
    "processes search (writes/s, p95, lost and duplicated messages).",
)
@click.option(
    "--write-messages",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="add_message calls per writer process.",
)
@click.option(
    "--no-sgd",
    is_flag=True,
    help="Build the corpus from the pip-installable data only (chitchat + demo), even when "
    "the SGD data (../shared/data or $SESSION_BROWSER_DATA_DIR) is present.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the whole report as JSON.")
@click.option("--keep", is_flag=True, help="Keep the work dir (corpus, copies, indexes, logs).")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
def bench(
    store_dir: str | None,
    home: Path | None,
    sessions: int | None,
    as_pi: bool,
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
    write_messages: int,
    no_sgd: bool,
    as_json: bool,
    keep: bool,
    quiet: bool,
) -> None:
    """Measure build speed, freshness, latency and ranking quality, side by side.

    Without --store/--home it builds a seeded corpus of real conversations into a
    temporary PraisonAI home (--pi: Pi JSONL files; --claude, --codex: Claude Code
    transcripts, Codex rollouts; --mixed: half and half), deleted
    afterwards unless --keep. Every store works on its own copy, and every phase runs in a
    fresh process. Targets are checked on our index (JSON, else Pi, else the group,
    else the Claude Code or Codex index).

    Corpus: the Schema-Guided Dialogue set plus the chitchat-dataset package when the SGD
    file is found (../shared/data, or $SESSION_BROWSER_DATA_DIR); otherwise, or with
    --no-sgd, chitchat-dataset plus the demo conversations (pip install
    'session-browser[bench]').
    """
    given = store_dir is not None or home is not None
    if store_dir is not None and home is not None:
        fail("give --store or --home, not both")
    if sum((as_pi, as_claude, as_codex, mixed)) > 1:
        fail("give one of --pi, --claude, --codex, --mixed")
    if given and (as_pi or as_claude or as_codex or mixed):
        fail(
            "--pi, --claude, --codex and --mixed build a corpus; they do not apply to "
            "--store/--home"
        )
    if given and sessions is not None:
        fail("--sessions builds a corpus; it does not apply to --store/--home")
    store_path: Path | None = None
    pi_store: Path | None = None
    agent: str | None = "claude" if as_claude else "codex" if as_codex else None
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
