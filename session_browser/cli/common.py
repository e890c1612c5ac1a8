"""Shared pieces of the CLI: store options, JSON output, safe Rich rendering, error lines."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, NoReturn, TypeVar

import click
from rich.console import Console
from rich.text import Text

from session_browser.core.actions.export import (
    TARGET_EXISTS,
    TARGET_NOT_REGULAR,
    TARGET_SYMLINK,
    ExportTargetError,
    check_target,
)
from session_browser.core.files import atomic_write_bytes
from session_browser.core.model import utc_datetime
from session_browser.core.multi import StoreGroup, index_of
from session_browser.core.stores import StoreNotFound, open_stores
from session_browser.core.text import clip, printable, relative_age, safe_json

from .store_help import store_option as store_option  # one --store for every command

F = TypeVar("F", bound=Callable[..., Any])


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")(func)


def chosen_stores(ctx: click.Context, stores: tuple[str, ...]) -> tuple[str, ...]:
    """The ``--store`` values of this command, else those given before it, else ()."""
    if stores:
        return stores
    obj = ctx.find_root().obj
    return tuple(obj.get("stores", ())) if isinstance(obj, dict) else ()


def group_from(
    ctx: click.Context, stores: tuple[str, ...], *, indexed: bool = False, background: bool = False
) -> StoreGroup:
    """The stores named on this command, else on the group, else the defaults.

    With ``indexed`` each store is opened through its search index (in our cache dir) and
    brought up to date first, with progress on stderr when that is a terminal; with
    ``background`` too, brought up to date in a background thread instead (searches answer
    meanwhile from what is indexed plus the newest files not indexed yet, and say so).
    """
    team = _team_group(ctx, stores)
    if team is not None:
        return team
    try:
        group = open_stores(
            list(chosen_stores(ctx, stores)) or None,
            indexed=indexed,
            reconcile="none" if indexed else "sync",
            vault=True,
        )
    except StoreNotFound as exc:
        fail(str(exc))
    if indexed:
        show = sys.stderr.isatty() and not background
        for store in group.stores:
            index = index_of(store)
            if index is not None and background:
                index.start_reconcile()
            elif index is not None:
                index.reconcile(progress=progress_printer(f"indexing {store.label}", show))
    return group


def _team_group(ctx: click.Context, stores: tuple[str, ...]) -> StoreGroup | None:
    """The team index (``--index URL`` or ``SESSION_BROWSER_INDEX_URL``) as a group of one
    store, unless this command names local stores with ``--store``."""
    from session_browser.core.open import open_team, team_url
    from session_browser.core.pgindex.conn import PgIndexError

    if stores:
        return None
    obj = ctx.find_root().obj
    url = team_url(obj.get("index") if isinstance(obj, dict) else None)
    if url is None:
        return None
    try:
        group = open_team(url)
    except PgIndexError as exc:
        fail(str(exc))
    ctx.call_on_close(group.close)
    return group


def progress_printer(label: str, enabled: bool) -> Callable[[int, int], None] | None:
    """A progress callback printing ``label: done/total files (pct%)`` on stderr."""
    if not enabled:
        return None
    last = [-1]

    def show(done: int, total: int) -> None:
        pct = 100 if not total else (100 * done) // total
        if pct != last[0]:
            last[0] = pct
            click.echo(
                f"\r{printable(label, one_line=True)}: {done}/{total} files ({pct}%)",
                nl=False,
                err=True,
            )
            if done >= total:
                click.echo("", err=True)

    return show


def index_option(func: F) -> F:
    """``--no-index``: scan the JSON files instead of using the search index."""
    return click.option(
        "--no-index",
        "no_index",
        is_flag=True,
        help="Scan the session files instead of using the search index (slower on big stores).",
    )(func)


def json_text(payload: Any) -> str:
    """Indented JSON whose strings can never steer a terminal (still valid JSON)."""
    return safe_json(payload)


def echo_json(payload: Any) -> None:
    click.echo(json_text(payload))


# The status of a command whose reader went away (``| head``): not a failure, as click
# itself treats it.
BROKEN_PIPE_STATUS = 0


def silence_stdout() -> None:
    """After a broken pipe, send what is left of stdout nowhere (no error at exit)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


class _Console(Console):
    def on_broken_pipe(self) -> None:
        self.quiet = True
        silence_stdout()
        raise SystemExit(BROKEN_PIPE_STATUS)


# The width of a console whose output is not a terminal (a pipe, a file): wide enough that
# no line is ever wrapped or cut, so ids, paths and titles stay whole for grep, cut and awk.
UNWRAPPED_WIDTH = 1 << 20


def console() -> Console:
    """A Rich console for stdout: the terminal's width, or no wrapping when piped."""
    piped = not stdout_is_terminal()
    return _Console(
        highlight=False, soft_wrap=False, emoji=False, width=UNWRAPPED_WIDTH if piped else None
    )


def stdout_is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # replaced or closed stdout
        return False


def safe(text: Any, *, one_line: bool = True, style: str = "") -> Text:
    """Untrusted text as a Rich ``Text`` (never parsed as markup, controls made visible)."""
    return Text(printable(str(text), one_line=one_line), style=style)


def when_text(when: str | None, *, now: datetime | None = None, relative: bool = True) -> str:
    """``2026-11-30 14:02 (2 days ago)`` (UTC) from an ISO timestamp."""
    if not when:
        return "-"
    dt = utc_datetime(when)
    if dt is None:
        return printable(clip(str(when), 40), one_line=True)
    text = f"{dt:%Y-%m-%d %H:%M}"
    if not relative:
        return text
    age = ((now or datetime.now(UTC)) - dt).total_seconds()
    return f"{text} ({relative_age(age, words=True)})"


MAX_ERROR_CHARS = 2000


# The exit status of an error in the command running: 1, except where 1 has a meaning of
# its own (``search``: no session matches, as grep), which then uses 2 for its errors.
_error_status = [1]


def use_error_status(code: int) -> None:
    """Exit with ``code`` on an error from now on (set by a command as it starts)."""
    _error_status[0] = code


def fail(message: str, *, code: int | None = None) -> NoReturn:
    """One clear line on stderr and exit status ``code`` (default: the command's error
    status, 1 unless it set another with :func:`use_error_status`)."""
    click.echo(
        f"session-browser: {clip(printable(message, one_line=True), MAX_ERROR_CHARS)}", err=True
    )
    sys.exit(_error_status[0] if code is None else code)


def os_error_text(exc: OSError, action: str = "") -> str:
    """``cannot write PATH: No space left on device`` from an ``OSError``."""
    reason = exc.strerror or str(exc)
    where = f" {exc.filename}" if exc.filename else ""
    if action:
        return f"cannot {action}{where}: {reason}"
    return f"{exc.filename}: {reason}" if exc.filename else reason


def confirm(question: str, details: str) -> None:
    """Ask on stderr; anything but yes (also end of input or Ctrl-C) changes nothing."""
    click.echo(details, err=True)
    try:
        ok = click.confirm(question, default=False, err=True)
    except click.Abort:
        click.echo("", err=True)
        ok = False
    if not ok:
        fail("cancelled; nothing changed (use --yes to skip the question)")


def target_refusal(exc: ExportTargetError) -> str:
    """The one line that refuses an output file, with the option that changes it."""
    hint = {
        TARGET_EXISTS: " (use --force to replace it)",
        TARGET_SYMLINK: " (or '-' for stdout)",
        TARGET_NOT_REGULAR: "; use '-' for stdout",
    }.get(exc.code, "")
    return f"{exc}{hint}"


def write_output(output: str, payload: bytes, *, force: bool, stores: Sequence[Any] = ()) -> str:
    """Write ``payload`` to ``output`` atomically ('-': stdout); the path written.

    A directory, a missing parent dir, a path inside a session or spill dir of ``stores``
    or (without ``force``) an existing file is one clear error (the export rules of
    :func:`~session_browser.core.actions.export.check_target`), and a failed write leaves
    ``output`` as it was.
    """
    if output == "-":
        sys.stdout.buffer.write(payload)
        sys.stdout.buffer.flush()
        return "-"
    try:
        path = check_target(output, stores, replace=force)
        atomic_write_bytes(path, payload)
    except ExportTargetError as exc:
        fail(target_refusal(exc))
    except OSError as exc:
        exc.filename = output
        fail(os_error_text(exc, "write"))
    return str(path)


class _OneLineHandler(logging.Handler):
    """Core log records on stderr, one escaped line each."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = clip(printable(record.getMessage(), one_line=True), MAX_ERROR_CHARS)
        except Exception:  # a log line must never break a command
            return
        click.echo(f"session-browser: {record.levelname.lower()}: {text}", err=True)


def setup_logging() -> Callable[[], None]:
    """Route the core's log records to stderr while a command runs; returns the undo.

    Only errors by default (a command reports the problems it meets itself, once);
    ``SESSION_BROWSER_LOG=warning|info|debug`` shows more.
    """
    logger = logging.getLogger("session_browser")
    saved = (logger.level, logger.propagate)
    handler = _OneLineHandler()
    level = os.environ.get("SESSION_BROWSER_LOG", "").strip().upper()
    chosen = getattr(logging, level, None) if level else None
    logger.setLevel(chosen if isinstance(chosen, int) else logging.ERROR)
    logger.addHandler(handler)
    logger.propagate = False

    def restore() -> None:
        logger.removeHandler(handler)
        logger.setLevel(saved[0])
        logger.propagate = saved[1]

    return restore


def mode_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--mode hybrid|lexical``: the search mode (see :func:`use_mode`)."""
    return click.option(
        "--mode",
        type=click.Choice(["hybrid", "lexical"]),
        default=None,
        help="hybrid (words and meaning: the nearest sessions by a local embedding model, "
        "fused with the lexical ranking; needs the semantic extra and 'session-browser index "
        "vectors') or lexical (words only). Default: $SESSION_BROWSER_SEARCH_MODE, else "
        "hybrid where the vectors are ready.",
    )(fn)


def use_mode(mode: str | None) -> None:
    """Search in ``mode`` in this process (and what it starts): it sets
    ``SESSION_BROWSER_SEARCH_MODE``, which every store reads."""
    from session_browser.core.search.hybrid import set_search_mode

    if mode is not None:
        set_search_mode(mode)
