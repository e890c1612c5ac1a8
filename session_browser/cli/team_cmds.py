"""``session-browser push``: send the local stores' sessions to the team index (PostgreSQL)."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable

import click

from session_browser.core.pgindex.conn import (
    ENV_URL,
    PgIndexError,
    index_url,
    is_index_url,
    mask_url,
)
from session_browser.core.pgindex.push import PushReport
from session_browser.core.stores import StoreNotFound, store_specs
from session_browser.core.text import printable

from .common import chosen_stores, echo_json, fail, json_option, store_option


def team_url(ctx: click.Context, explicit: str | None = None) -> str | None:
    """The team index URL of this command: ``explicit``, else the global ``--index``, else
    ``SESSION_BROWSER_INDEX_URL``."""
    obj = ctx.find_root().obj
    given = explicit or (obj.get("index") if isinstance(obj, dict) else None)
    url = index_url(given)
    if url is not None and not is_index_url(url):
        fail(f"the team index must be a postgresql:// URL, not {mask_url(url)!r}")
    return url


@click.command()
@click.option(
    "--to",
    "url",
    metavar="URL",
    default=None,
    help=f"The team index (postgresql://...; default: --index, else ${ENV_URL}, else "
    "index_url in the config file).",
)
@click.option(
    "--redact",
    is_flag=True,
    help="Send every session redacted as an export redacts it (keys, tokens, emails).",
)
@click.option(
    "--include-hidden",
    "hidden",
    is_flag=True,
    help="Also send the hidden parts of Pi, Claude Code and Codex sessions (thinking, tool "
    "calls and results); not sent by default.",
)
@click.option(
    "--watch",
    is_flag=True,
    help="Keep pushing what changes (each pass reads only new or changed files) until "
    "interrupted; a failed pass is reported and tried again.",
)
@click.option(
    "--interval",
    type=click.FloatRange(min=0.05),
    default=5.0,
    show_default=True,
    help="Seconds between two passes of --watch.",
)
@click.option("--machine", default=None, help="The machine name to push as (default: hostname).")
@click.option("--user", default=None, help="The user name to push as (default: this user).")
@store_option
@json_option
@click.pass_context
def push(
    ctx: click.Context,
    url: str | None,
    redact: bool,
    hidden: bool,
    watch: bool,
    interval: float,
    machine: str | None,
    user: str | None,
    stores: tuple[str, ...],
    as_json: bool,
) -> None:
    """Send every session of the local stores (all sources) to the team index.

    Pushing again sends only what changed and removes what was deleted; each session is
    replaced whole, in one transaction, so a push that stops halfway leaves no partial
    session, and the next push resumes.
    """
    from session_browser.core.pgindex.push import push_stores

    target = team_url(ctx, url)
    if target is None:
        fail(
            f"push needs the team index: --to postgresql://... (or ${ENV_URL}, or index_url "
            "in the config file)"
        )
    try:
        specs = store_specs(list(chosen_stores(ctx, stores)) or None)
    except StoreNotFound as exc:
        fail(str(exc))
    show = sys.stderr.isatty() and not as_json

    def progress(label: str, done: int, total: int) -> None:
        if show:
            click.echo(
                f"\rpushing {printable(label, one_line=True)}: {done}/{total}", nl=False, err=True
            )
            if done >= total:
                click.echo("", err=True)

    def once() -> PushReport:
        return push_stores(
            target,
            [(spec.source.source(spec.path), spec.kind) for spec in specs],
            redact=redact,
            hidden=hidden,
            machine=machine,
            user=user,
            progress=progress,
        )

    if watch:
        _watch(once, interval, as_json, redact, target)
        return
    try:
        report = once()
    except PgIndexError as exc:
        fail(str(exc))
    _print_report(report, as_json, redact, target)


def _print_report(report: PushReport, as_json: bool, redact: bool, target: str) -> None:
    if as_json:
        echo_json({"to": mask_url(target), **report.to_json()})
        return
    rate = report.messages / report.seconds if report.seconds > 0 else 0.0
    line = (
        f"pushed to {mask_url(target)}: {report.sent} sessions sent ({report.messages} messages,"
        f" {rate:,.0f}/s), {report.unchanged} unchanged, {report.removed} removed,"
        f" {report.skipped} skipped"
    )
    if report.older:  # the same session id in several dirs: the newest copy is held
        line += f", {report.older} older copies of sessions held not sent"
    if redact:
        line += f"; redacted {sum(report.redactions.values())} secrets"
    click.echo(line)


def _watch(
    once: Callable[[], PushReport], interval: float, as_json: bool, redact: bool, target: str
) -> None:
    """Push, then push again what changed every ``interval`` seconds, until Ctrl-C (exit 0):
    a pass that sent or removed something prints its line; a failed one prints why and the
    next pass tries again (what it had committed stays). Ctrl-C during a pass lets it end
    (it is never cut inside a database call, where the driver's cancel can wait on the
    server); a second Ctrl-C stops at once."""
    stop = threading.Event()

    def on_interrupt(_signum: int, _frame: object) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    previous = signal.signal(signal.SIGINT, on_interrupt)
    first = True
    try:
        while not stop.is_set():
            try:
                report = once()
            except PgIndexError as exc:
                click.echo(f"session-browser: {exc}; trying again in {interval:g} s", err=True)
            else:
                if first or report.sent or report.removed:
                    _print_report(report, as_json, redact, target)
                first = False
            stop.wait(interval)
    except KeyboardInterrupt:
        return
    finally:
        signal.signal(signal.SIGINT, previous)
