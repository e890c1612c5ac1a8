"""Untrusted text made into Rich ``Text`` (never markup), dates, highlights, badges."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from rich.style import Style
from rich.text import Text

from session_browser.core.model import SessionHit, SessionSummary, utc_datetime
from session_browser.core.query import folded_spans
from session_browser.core.text import clip, relative_age
from session_browser.core.text import human_size as human_size  # one size format
from session_browser.core.text import printable as _core_printable

ROLE_LABELS = {"user": "you", "assistant": "assistant", "system": "system", "tool": "tool"}


# Lone UTF-16 surrogates (what a JSON ``"\\ud83d"`` with no pair decodes to) cannot be encoded
# for a terminal, and the Unicode line/paragraph separators break a row where the layout
# does not expect it: shown as the escapes they were written as.
_UNSHOWABLE = re.compile("[\u2028\u2029\ud800-\udfff]")
# An unusable value shown literally is cut to this many characters.
RAW_VALUE_CHARS = 40


def printable(text: str, *, one_line: bool = False) -> str:
    """``text`` fit for the terminal: control and bidi characters as visible escapes (the
    core's rule), and lone surrogates and U+2028/U+2029 as ``\\uXXXX`` in every text."""
    shown = _core_printable(text, one_line=one_line)
    if not shown.isascii():
        shown = _UNSHOWABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", shown)
    return shown


def raw_value(value: object, limit: int = RAW_VALUE_CHARS) -> str:
    """A value that cannot be used (a date out of range, a 400-digit number) as typed,
    escaped and cut to ``limit`` characters with a note of its full length."""
    try:
        text = value if isinstance(value, str) else repr(value)
    except Exception:  # an int too long to print, an object that will not say
        return f"<unprintable {type(value).__name__}>"
    if len(text) > limit:
        text = f"{text[: limit - 1]}… ({len(text):,} chars)"
    return printable(text, one_line=True)


def error_text(error: BaseException, limit: int = 300) -> str:
    """One line about an exception: its type and message, escaped and cut."""
    try:
        message = str(error)
    except Exception:  # an exception whose message will not print
        message = ""
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return printable(" ".join(clip(text, limit).split()), one_line=True)


def safe(value: object, *, style: str | Style = "", one_line: bool = True) -> Text:
    """Untrusted text as ``Text``: never parsed as markup, controls shown as escapes."""
    return Text(printable(str(value), one_line=one_line), style=style, end="", no_wrap=one_line)


def one_line(value: object) -> str:
    """Whitespace folded and controls escaped: fit for a single row."""
    return printable(" ".join(str(value).split()), one_line=True)


def parse_when(when: str | float | None) -> datetime | None:
    """An aware UTC datetime, or None when the stored value cannot be used as a date."""
    return utc_datetime(when)


def when_text(when: str | float | None, now: datetime) -> str:
    """``2026-01-30 14:02 (3d ago)``; the raw value (escaped, cut) when it is not a usable
    date (unparseable, or out of range once moved to UTC)."""
    if when is None or when == "":
        return "-"
    dt = parse_when(when)
    if dt is not None:
        try:
            age = relative_age((now - dt).total_seconds())
            return f"{dt.astimezone(UTC):%Y-%m-%d %H:%M} ({age})"
        except (OverflowError, ValueError):  # 0001-01-01T00:00+14:00 is before year 1 in UTC
            pass
    return raw_value(when)


def age_text(when: str | float | None, now: datetime) -> str:
    """``3d ago`` (compact rows); the raw value when it is not a usable date."""
    dt = parse_when(when) if when not in (None, "") else None
    if dt is not None:
        try:
            return relative_age((now - dt).total_seconds())
        except (OverflowError, ValueError):
            pass
    return when_text(when, now)


def short_time(ts: object) -> str:
    """A message's timestamp as a date and time; a number that is no date, as typed."""
    if isinstance(ts, (int, float)) and not isinstance(ts, bool):
        try:
            dt = parse_when(float(ts))
        except (OverflowError, ValueError):  # an integer of hundreds of digits
            dt = None
        if dt is not None:
            return f"{dt:%Y-%m-%d %H:%M:%S}"
        return raw_value(ts)
    if isinstance(ts, str) and ts:
        dt = parse_when(ts)
        if dt is not None:
            try:
                return f"{dt.astimezone(UTC):%Y-%m-%d %H:%M:%S}"
            except (OverflowError, ValueError):
                pass
        return raw_value(ts)
    return ""


def highlight(text: Text, terms: Iterable[str], style: str | Style) -> Text:
    """``text`` with every occurrence of each term styled, folded as search folds (case and
    accents: ``cafe`` marks "Café")."""
    plain = text.plain
    for term in terms:
        for start, end in folded_spans(plain, term):
            text.stylize(style, start, end)
    return text


def hit_badges(hit: SessionHit) -> list[str]:
    return [one_line(b) for b in hit.badges()]


def summary_badges(summary: SessionSummary) -> list[str]:
    badges: list[str] = []
    if summary.archived_count:
        badges.append("compacted")
    if summary.automated:
        badges.append("automated")
    if summary.lineage:
        badges.append("continued")
    if summary.source and summary.source != "praisonai":
        badges.append(one_line(summary.source))
    return badges


AGENT_CHARS = 40  # of the agent name shown beside a title


def with_agent(text: Text, agent: str | None, style: str | Style) -> Text:
    """``text`` (a title) followed by ``· agent`` when the session names its agent."""
    if agent:
        text.append(f" · {clip(one_line(agent), AGENT_CHARS)}", style=style)
    return text


def role_label(role: str) -> str:
    return ROLE_LABELS.get(role, one_line(role) or "?")


def join_badges(text: Text, badges: Sequence[str], style: str | Style) -> None:
    for badge in badges:
        text.append(" ")
        text.append(f" {badge} ", style=style)
