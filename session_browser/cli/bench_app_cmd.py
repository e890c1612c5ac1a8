"""``session-browser bench-app``: the app's targets (first paint, results after the last
keystroke, opening a 20,000-message session, RSS), measured headlessly."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from session_browser.bench.app import (
    BenchAppError,
    BenchAppIncomplete,
    BenchAppOptions,
    format_incomplete,
    format_report,
    run_bench_app,
)
from session_browser.cli.bench_options import (
    amount_option,
    count_option,
    dir_option,
    no_sgd_option,
)
from session_browser.cli.common import fail
from session_browser.core.text import printable


@click.command("bench-app")
@dir_option(
    "--store",
    "store_dir",
    help="Measure a copy of this session dir (never changed) instead of a generated corpus.",
)
@count_option(
    "--sessions",
    default=30000,
    help="Size of the generated corpus (without --store).",
)
@count_option(
    "--queries",
    default=20,
    help="Known-item queries typed into the app.",
)
@count_option(
    "--big-messages",
    minimum=10,
    default=20000,
    help="Messages in the big session that is opened.",
)
@amount_option(
    "--key-delay",
    minimum=0.0,
    default=0.08,
    help="Seconds between typed keys.",
)
@click.option(
    "--query",
    "extra_queries",
    multiple=True,
    metavar="TEXT",
    help="Also type this query after the known-item ones (repeatable); one that errors or "
    "finds nothing fails the search target.",
)
@click.option(
    "--wait-limit",
    type=click.FloatRange(min=0.1),
    default=None,
    help="The ceiling of every wait for the app, in seconds (default: each wait its own, at "
    "most 300); a wait that passes it ends the run with what the phases before measured.",
)
@no_sgd_option
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def bench_app(
    store_dir: Path | None,
    sessions: int,
    queries: int,
    big_messages: int,
    key_delay: float,
    extra_queries: tuple[str, ...],
    wait_limit: float | None,
    no_sgd: bool,
    as_json: bool,
) -> None:
    """Measure the app: first paint, results after the last keystroke, opening a
    20,000-message session, peak RSS, the RSS kept after closing that session and after
    exporting every session, and the first answer on the store without an index, each in a
    fresh process (PASS/FAIL per target)."""
    if (
        store_dir is not None
        and click.get_current_context().get_parameter_source("sessions")
        == click.core.ParameterSource.COMMANDLINE
    ):
        fail("--store and --sessions cannot be used together")
    opts = BenchAppOptions(
        store=store_dir,
        sessions=sessions,
        queries=queries,
        big_messages=big_messages,
        key_delay=key_delay,
        extra_queries=extra_queries,
        sgd=not no_sgd,
        wait_limit=wait_limit,
    )

    def say(message: str) -> None:
        if not as_json:
            print(f"bench-app: {message}", file=sys.stderr, flush=True)

    try:
        report = run_bench_app(opts, say=say)
    except BenchAppIncomplete as stopped:  # what finished is printed, then the exit is 1
        click.echo(
            json.dumps(stopped.to_json(), indent=2) if as_json else format_incomplete(stopped)
        )
        sys.exit(1)
    except (BenchAppError, OSError) as exc:
        fail(printable(str(exc), one_line=True))
    if as_json:
        click.echo(json.dumps(report, indent=2))
    else:
        click.echo(format_report(report))
