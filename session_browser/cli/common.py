"""Shared pieces of the CLI: store options, JSON output, safe Rich rendering, error lines."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, NoReturn, TypeVar

import click
from rich.console import Console
from rich.text import Text

from session_browser.core.multi import StoreGroup
from session_browser.core.stores import StoreNotFound, open_stores
from session_browser.core.text import printable

F = TypeVar("F", bound=Callable[..., Any])


def store_option(func: F) -> F:
    """``--store DIR`` (repeatable)."""
    return click.option(
        "--store",
        "stores",
        multiple=True,
        metavar="DIR",
        help="Session dir to read (repeatable; 'pi:DIR' for a Pi session dir, read-only). "
        "Default: ./.praisonai/sessions (if present), the global store and Pi's sessions.",
    )(func)


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")(func)


class OneLineCommand(click.Command):
    """A command whose bad arguments are reported in one line (``session-browser: ...``)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            if ctx.resilient_parsing:
                raise
            fail(f"{ctx.info_name}: {exc.format_message()}", code=2)
            raise  # not reached


def group_from(ctx: click.Context, stores: tuple[str, ...]) -> StoreGroup:
    """The stores named on this command, else on the group, else the defaults."""
    chosen = stores or tuple((ctx.obj or {}).get("stores", ()) if ctx.obj else ())
    try:
        return open_stores(list(chosen) or None)
    except StoreNotFound as exc:
        fail(str(exc))
        raise  # not reached


# Characters JSON leaves raw with ensure_ascii=False that a terminal may act on:
# C1 controls (an 8-bit CSI is \x9b) and the bidi controls.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def json_text(payload: Any) -> str:
    """Indented JSON whose strings can never steer a terminal (still valid JSON)."""
    text = json.dumps(payload, indent=2, ensure_ascii=False)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def echo_json(payload: Any) -> None:
    click.echo(json_text(payload))


def console() -> Console:
    return Console(highlight=False, soft_wrap=False, emoji=False)


def safe(text: Any, *, one_line: bool = True, style: str = "") -> Text:
    """Untrusted text as a Rich ``Text`` (never parsed as markup, controls made visible)."""
    return Text(printable(str(text), one_line=one_line), style=style)


def when_text(when: str | None, *, now: datetime | None = None) -> str:
    """``2026-11-30 14:02 (2 days ago)`` from an ISO timestamp."""
    if not when:
        return "-"
    try:
        dt = datetime.fromisoformat(when)
    except ValueError:
        return printable(when, one_line=True)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return f"{dt.astimezone(UTC):%Y-%m-%d %H:%M} ({relative_age(dt, now=now)})"


def relative_age(dt: datetime, *, now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    seconds = (now - dt).total_seconds()
    if seconds < 0:
        return "in the future"
    for unit, size in (
        ("year", 365 * 86400),
        ("month", 30 * 86400),
        ("day", 86400),
        ("hour", 3600),
        ("minute", 60),
    ):
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {unit}{'s' if n != 1 else ''} ago"
    return "just now"


def fail(message: str, *, code: int = 1) -> NoReturn:
    """One clear line on stderr and exit status ``code`` (1 by default)."""
    click.echo(f"session-browser: {printable(message, one_line=True)}", err=True)
    sys.exit(code)
