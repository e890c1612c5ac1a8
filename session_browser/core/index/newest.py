"""The newest matching rows of a table whose sessions' rows have consecutive ids (``messages``
and ``hidden``), at most a share of them from one session: a long session never fills the
candidates and hides every other one."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from typing import Any


def take(
    pairs: Iterable[tuple[int, int]], want: int, per_session: int, taken: dict[int, int]
) -> list[int]:
    """The ids of ``pairs`` ((id, session), newest first) taken in order while a session has
    given fewer than ``per_session`` (``taken`` counts them, across calls), ``want`` at most."""
    chosen: list[int] = []
    for mid, sid in pairs:
        n = taken.get(sid, 0)
        if n < per_session:
            taken[sid] = n + 1
            chosen.append(mid)
            if len(chosen) >= want:
                break
    return chosen


class NoOwner(Exception):
    """A row lies below every session's range: ``owner`` cannot say whose it is."""


def owned(rows: list[tuple[Any, ...]], owner: Callable[[int], int | None]) -> list[tuple[int, int]]:
    """(id, session) of ``rows`` of ids, each session as ``owner`` gives it
    (:class:`NoOwner` when it gives none)."""
    out: list[tuple[int, int]] = []
    for (mid,) in rows:
        sid = owner(mid)
        if sid is None:
            raise NoOwner(mid)
        out.append((mid, sid))
    return out


def newest_ids(
    db: sqlite3.Connection,
    select: str,
    args: list[Any],
    below: str,
    want: int,
    per_session: int,
    first_of: Callable[[int], int | None],
    *,
    at_once: bool = False,
    owner: Callable[[int], int | None] | None = None,
) -> list[int]:
    """The ids of the newest rows of ``select`` (``SELECT m.id, m.sid FROM … WHERE …``, with
    ``args``), at most ``per_session`` of one session and ``want`` in all.

    Read newest first (``below``: the id column to order and bound by) in batches; once a
    session has given its share, the next read starts below its first row (``first_of``;
    None when it is gone: a writer may have replaced it meanwhile). ``at_once``: the matches
    fit in one read, taken in the table's own order and sorted here (an FTS5 posting list is
    read forwards at about twice the speed), with the same choice. With ``owner`` (a row's
    session from the sessions' row ranges), ``select`` reads ids only (``SELECT rowid FROM
    fts …``: no lookup of each match in the table) and :class:`NoOwner` is raised when it
    cannot say whose a row is."""
    taken: dict[int, int] = {}
    if at_once:
        found = db.execute(select, args).fetchall()
        if owner is not None:
            found = owned(found, owner)
        found.sort(reverse=True)
        return take(found, want, per_session, taken)
    chosen: list[int] = []
    bound: int | None = None
    batch = 2 * want
    while len(chosen) < want:
        sql, params = select, list(args)
        if bound is not None:
            sql += f" AND {below} < ?"
            params.append(bound)
        got = db.execute(f"{sql} ORDER BY {below} DESC LIMIT ?", [*params, batch]).fetchall()
        if owner is not None:
            got = owned(got, owner)
        chosen += take(got, want - len(chosen), per_session, taken)
        if len(chosen) >= want or len(got) < batch:
            break
        mid, sid = got[-1]
        bound = mid
        if taken.get(sid, 0) >= per_session:  # its other rows lie below mid, to its first
            lo = first_of(sid)
            bound = mid if lo is None else min(mid, lo)
    return chosen
