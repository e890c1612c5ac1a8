"""Which session a message row belongs to, from the sessions' row ranges alone.

A session's messages are written together under consecutive ids (``row_lo..row_hi``) above
every id existing then, and rewritten whole, so among the sessions holding rows the owner of
row ``r`` is the one with the greatest ``row_lo <= r`` (a kept version's range may have
holes, and a later session may start inside them, above its remaining rows: the later start
wins, as it should). Counting the sessions of a term's postings this way reads no
``messages`` page: joining each posting to ``messages`` for its ``sid`` lands on cold pages
of the biggest table, the most of an exact count's time."""

from __future__ import annotations

import sqlite3
import threading
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from functools import partial

import orjson


def rowids(joined: str | None) -> list[int]:
    """The rowids of a ``group_concat(rowid)`` (None or '' for none), parsed as one JSON
    array: in C, several times faster than an ``int()`` each, and a common word's postings
    hold thousands of them."""
    return orjson.loads(f"[{joined}]") if joined else []


class RowOwners:
    """The sessions' row ranges of one index, read again when it changed since (another
    connection committed, or this one wrote)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (the connection itself, not its id: a closed one's id may come back for another)
        self._db: sqlite3.Connection | None = None
        self._key: tuple[int, int] | None = None
        self._ranges: tuple[list[int], list[int]] = ([], [])

    def ranges(self, db: sqlite3.Connection) -> tuple[list[int], list[int]]:
        """(starts ascending, sids) of the sessions holding rows, as ``db`` sees it."""
        version = int(db.execute("PRAGMA data_version").fetchone()[0])
        key = (version, db.total_changes)
        with self._lock:
            if db is self._db and key == self._key:
                return self._ranges
        los: list[int] = []
        sids: list[int] = []
        for lo, sid in db.execute(
            "SELECT row_lo, sid FROM sessions WHERE row_hi >= row_lo ORDER BY row_lo"
        ):
            los.append(lo)
            sids.append(sid)
        with self._lock:
            self._db, self._key, self._ranges = db, key, (los, sids)
        return los, sids

    def sessions_of(self, db: sqlite3.Connection, rows: Iterable[int]) -> set[int] | None:
        """The sessions owning ``rows`` (message ids), or None when a row lies below every
        range (the caller then asks ``messages``)."""
        return owners_of(rows, *self.ranges(db))


def owners_of(rows: Iterable[int], los: Sequence[int], sids: Sequence[int]) -> set[int] | None:
    """The sessions owning ``rows`` by the ascending range starts ``los`` of ``sids`` (the
    owner of a row is the latest start at or below it); None when a row lies below every
    start (the caller then asks ``messages``). One C-level look-up a row."""
    places = set(map(partial(bisect_right, los), rows))
    if 0 in places:
        return None
    return {sids[k - 1] for k in places}
