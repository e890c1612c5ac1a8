"""The query language's filters, as one table.

Each :class:`Filter` row says how its value is read from the query (``parse``), how it
narrows an index query (``sql``, over the index's message table ``m`` and session table
``s``) and how it keeps or drops a session or a message read from a file (``keeps``, the
Python predicate every scan path uses). A new filter is one row here: the parser, the
index, every scan and the highlighter (filter values are never highlighted) all follow.
"""

from __future__ import annotations

import getpass
import os
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from ..paths import session_file_name
from .terms import QueryError

ROLES = ("user", "assistant", "system", "tool", "developer", "function")
_YES = frozenset({"yes", "y", "true", "1", "only"})
_NO = frozenset({"no", "n", "false", "0", "none"})


@dataclass(frozen=True)
class SessionFacts:
    """What the session filters look at in one session."""

    session_id: str
    file_name: str | None
    store_kind: str  # the kind of the store that holds it (``praisonai``, ``pi``, ...)
    source: str  # its own source tag, lowercased ('' when none)
    project: str | None
    agent: str | None
    machine: str = ""  # where it was written ('' for a local store: this machine)
    user: str = ""  # ... and by whom ('' for a local store: this user)


@dataclass(frozen=True)
class MessageFacts:
    """What the message filters look at in one message."""

    role: str
    archived: bool
    when: float | None  # its time, else its session's


Facts = SessionFacts | MessageFacts
Sql = tuple[str, list[Any]]


@dataclass(frozen=True)
class Filter:
    """One ``key:value`` filter of the query language."""

    key: str
    example: str
    # ``option``: says what is searched rather than narrowing it (never a clause, never
    # drops a session or a message, and alone it is no query).
    scope: Literal["session", "message", "option"]
    parse: Callable[[str, float], Any]  # the value as typed, now -> the value (QueryError)
    sql: Callable[[Any, str], Sql | None]  # value, store kind -> clause and params, or None
    keeps: Callable[[Any, Any], bool]  # value, facts of the scope -> kept
    # The clause for the PostgreSQL team index (same placeholders), when it differs.
    pg: Callable[[Any, str], Sql | None] | None = None
    attr: str = ""  # the ParsedQuery attribute holding the value (default: the key)

    @property
    def name(self) -> str:
        """The ParsedQuery attribute holding this filter's value."""
        return self.attr or self.key


_AGE_RE = re.compile(r"(\d{1,6})\s*(m|min|h|d|w)", re.IGNORECASE)
_AGE_UNITS = {"m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DAY_WORDS = {"today": 0, "yesterday": 1}


def _relative(value: str, key: str, now: float) -> float | None:
    """The timestamp a relative ``since:``/``until:`` value names (None: not relative).

    ``today`` / ``yesterday`` are whole UTC days (``since:`` their start, ``until:`` their
    end, as a bare date); an age (``7d``) is that long before ``now``."""
    raw = value.strip().lower()
    if raw in _DAY_WORDS:
        midnight = datetime.fromtimestamp(now, UTC).replace(
            hour=0, minute=0, second=0, microsecond=0
        )
        start = midnight - timedelta(days=_DAY_WORDS[raw])
        return (start if key == "since" else start + timedelta(days=1)).timestamp()
    age = _AGE_RE.fullmatch(raw)
    if age:
        return now - int(age.group(1)) * _AGE_UNITS[age.group(2).lower()]
    return None


def _day(value: str, key: str) -> datetime:
    raw = value.strip()
    try:
        if len(raw) == 10:
            day = datetime.strptime(raw, "%Y-%m-%d")
            return day.replace(tzinfo=UTC)
        parsed = datetime.fromisoformat(raw)
    except (ValueError, OverflowError, OSError):
        raise _bad_date(key, value) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _bad_date(key: str, value: str) -> QueryError:
    return QueryError(
        f"{key}: expects a date like 2026-01-31 (or an ISO date-time), today, yesterday"
        f" or an age like 7d, 12h, 2w, not {value!r}"
    )


def _timestamp(day: datetime, key: str, value: str) -> float:
    try:
        return day.timestamp()
    except (ValueError, OverflowError, OSError):
        raise _bad_date(key, value) from None


def _end_of_day(day: datetime) -> datetime:
    """The instant after ``day``'s last moment. The last representable day
    (9999-12-31) has no next day, so it is clamped to ``datetime.max`` (UTC), which
    still covers every timestamp a transcript can carry."""
    try:
        return day + timedelta(days=1)
    except OverflowError:
        return datetime.max.replace(tzinfo=UTC)


def normalize_project(value: str) -> str:
    """A ``project:`` value as an absolute, normalised path (``~`` expanded)."""
    return os.path.normpath(os.path.abspath(os.path.expanduser(value.strip())))


def project_matches(project: str | None, want: str) -> bool:
    """True when a session's ``project`` dir is ``want`` or inside it (text only: the dir
    may live on another machine, so nothing on disk is consulted)."""
    if not project:
        return False
    have = os.path.normpath(os.path.expanduser(project))
    if have == want:
        return True
    prefix = want if want.endswith(os.sep) else want + os.sep
    return have.startswith(prefix)


def _role(value: str, _now: float) -> str:
    role = value.lower()
    if role not in ROLES:
        raise QueryError(f"role: expects one of {', '.join(ROLES)}, not {value!r}")
    return role


def _archived(value: str, _now: float) -> bool:
    low = value.lower()
    if low in _YES:
        return True
    if low in _NO:
        return False
    raise QueryError(f"archived: expects yes or no, not {value!r}")


def _since(value: str, now: float) -> float:
    rel = _relative(value, "since", now)
    return rel if rel is not None else _timestamp(_day(value, "since"), "since", value)


def _until(value: str, now: float) -> float:
    rel = _relative(value, "until", now)
    if rel is not None:
        return rel
    day = _day(value, "until")
    # A bare date means the whole day.
    end = _end_of_day(day) if len(value) == 10 else day
    return _timestamp(end, "until", value)


#: What ``in:`` opts into: the parts of a transcript a reader does not see by default
#: (tool calls and their results, reasoning, bookkeeping records).
IN_VALUES = frozenset({"tools", "tool", "hidden"})


def _in(value: str, _now: float) -> str:
    if value.lower() not in IN_VALUES:
        raise QueryError(
            f"in: expects tools (tool calls and results, reasoning searched too), not {value!r}"
        )
    return "tools"


def _is_session(value: str, facts: SessionFacts) -> bool:
    return facts.session_id == value or facts.file_name == session_file_name(value)


def local_machine() -> str:
    """This machine's name, as ``machine:`` and the team index know it."""
    return socket.gethostname() or "unknown"


def local_user() -> str:
    """This user's name, as ``user:`` and the team index know it."""
    try:
        return getpass.getuser()
    except Exception:  # no user name (a container without one)
        return "unknown"


def _local_sql(value: str, local: str) -> Sql | None:
    """A local index holds only this machine's (this user's) sessions: all or none."""
    return None if value == local.lower() else ("0 = 1", [])


def _project_sql(value: str, _kind: str) -> Sql:
    prefix = value if value.endswith(os.sep) else value + os.sep
    return "(s.project = ? OR substr(s.project, 1, ?) = ?)", [value, len(prefix), prefix]


FILTERS: tuple[Filter, ...] = (
    Filter(
        "role",
        "role:user",
        "message",
        _role,
        lambda v, _k: ("m.role = ?", [v]),
        lambda v, m: m.role == v,
    ),
    Filter(
        "since",
        "since:2026-01-31",
        "message",
        _since,
        lambda v, _k: ("coalesce(m.ts, s.updated_ts) >= ?", [v]),
        lambda v, m: m.when is not None and m.when >= v,
    ),
    Filter(
        "until",
        "until:2026-01-31",
        "message",
        _until,
        lambda v, _k: ("coalesce(m.ts, s.updated_ts) < ?", [v]),
        lambda v, m: m.when is not None and m.when < v,
    ),
    Filter(
        "session",
        "session:ID",
        "session",
        lambda v, _n: v,
        lambda v, _k: ("(s.session_id = ? OR s.file = ?)", [v, session_file_name(v)]),
        _is_session,
    ),
    Filter(
        "source",
        "source:cli",
        "session",
        lambda v, _n: v.lower(),
        # source: names a store's kind (every session of it) or a session's source tag.
        lambda v, k: None if v == k else ("s.source = ?", [v]),
        lambda v, s: v == s.store_kind or v == s.source,
        lambda v, _k: ("(s.kind = ? OR s.source = ?)", [v, v]),
    ),
    Filter(
        "agent",
        "agent:NAME",
        "session",
        lambda v, _n: v,
        lambda v, _k: ("s.agent = ? COLLATE NOCASE", [v]),
        lambda v, s: s.agent is not None and s.agent.lower() == v.lower(),
        lambda v, _k: ("lower(s.agent) = lower(?)", [v]),
    ),
    Filter(
        "archived",
        "archived:yes",
        "message",
        _archived,
        lambda v, _k: ("m.archived = ?", [1 if v else 0]),
        lambda v, m: m.archived == v,
    ),
    Filter(
        "project",
        "project:~/code/app",
        "session",
        lambda v, _n: normalize_project(v),
        _project_sql,
        lambda v, s: project_matches(s.project, v),
    ),
    Filter(
        "machine",
        "machine:NAME",
        "session",
        lambda v, _n: v.lower(),
        lambda v, _k: _local_sql(v, local_machine()),
        lambda v, s: (s.machine or local_machine()).lower() == v,
        lambda v, _k: ("lower(s.machine) = ?", [v]),
    ),
    Filter(
        "user",
        "user:NAME",
        "session",
        lambda v, _n: v.lower(),
        lambda v, _k: _local_sql(v, local_user()),
        lambda v, s: (s.user or local_user()).lower() == v,
        lambda v, _k: ("lower(s.os_user) = ?", [v]),
    ),
    Filter(
        "in",
        "in:tools",
        "option",
        _in,
        lambda _v, _k: None,  # the index reads its hidden rows too (see index.hidden)
        lambda _v, _f: True,
        attr="in_",
    ),
)
BY_KEY: dict[str, Filter] = {f.key: f for f in FILTERS}
FILTER_KEYS = tuple(BY_KEY)


def parse_value(key: str, value: str, now: float) -> Any:
    """The value of filter ``key`` as typed (QueryError when it cannot be used)."""
    value = value.strip()
    row = BY_KEY[key]
    if not value:
        raise QueryError(f"{key}: needs a value (e.g. {row.example})")
    return row.parse(value, now)


def active(values: dict[str, Any], scope: str | None = None) -> list[tuple[Filter, Any]]:
    """The filters set in ``values`` (key -> value or None), of one scope or all."""
    return [
        (f, values[f.key])
        for f in FILTERS
        if values.get(f.key) is not None and (scope is None or f.scope == scope)
    ]


def sql_where(values: dict[str, Any], store_kind: str) -> Sql:
    """`` AND ...`` clauses (and their parameters) for every filter set in ``values``."""
    where: list[str] = []
    params: list[Any] = []
    for f, value in active(values):
        clause = f.sql(value, store_kind)
        if clause is not None:
            where.append(clause[0])
            params.extend(clause[1])
    return "".join(f" AND {w}" for w in where), params


def pg_where(values: dict[str, Any]) -> Sql:
    """`` AND ...`` clauses for the PostgreSQL team index (``%s`` placeholders): each row's
    ``pg`` clause, else its SQLite one (the same SQL there)."""
    where: list[str] = []
    params: list[Any] = []
    for f, value in active(values):
        clause = (f.pg or f.sql)(value, "")
        if clause is not None:
            where.append(clause[0].replace("?", "%s"))
            params.extend(clause[1])
    return "".join(f" AND {w}" for w in where), params


def keeps(values: dict[str, Any], facts: Facts, scope: str) -> bool:
    """Whether ``facts`` (of a session or a message) pass every filter of that scope."""
    return all(f.keeps(value, facts) for f, value in active(values, scope))


__all__: Sequence[str] = (
    "BY_KEY",
    "FILTERS",
    "FILTER_KEYS",
    "ROLES",
    "Filter",
    "MessageFacts",
    "SessionFacts",
    "active",
    "keeps",
    "local_machine",
    "local_user",
    "normalize_project",
    "parse_value",
    "pg_where",
    "project_matches",
    "sql_where",
)
