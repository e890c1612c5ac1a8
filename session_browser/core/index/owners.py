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
from collections.abc import Sequence


class RowOwners:
    """The sessions' row ranges of one index, read again when it changed since (another
    connection committed, or this one wrote)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[int, int, int] | None = None
        self._ranges: tuple[list[int], list[int], list[int]] = ([], [], [])

    def ranges(self, db: sqlite3.Connection) -> tuple[list[int], list[int], list[int]]:
        """(starts ascending, ends, sids) of the sessions holding rows, as ``db`` sees it."""
        version = int(db.execute("PRAGMA data_version").fetchone()[0])
        key = (id(db), version, db.total_changes)
        with self._lock:
            if key == self._key:
                return self._ranges
        los: list[int] = []
        his: list[int] = []
        sids: list[int] = []
        for lo, hi, sid in db.execute(
            "SELECT row_lo, row_hi, sid FROM sessions WHERE row_hi >= row_lo ORDER BY row_lo"
        ):
            los.append(lo)
            his.append(hi)
            sids.append(sid)
        with self._lock:
            self._key, self._ranges = key, (los, his, sids)
        return los, his, sids

    def sessions_of(self, db: sqlite3.Connection, rows: Sequence[int]) -> set[int] | None:
        """The sessions owning ``rows`` (ascending message ids), or None when a row lies
        outside every range (the caller then asks ``messages``)."""
        return owners_of(rows, *self.ranges(db))


def owners_of(
    rows: Sequence[int], los: Sequence[int], his: Sequence[int], sids: Sequence[int]
) -> set[int] | None:
    """The sessions owning ``rows`` (ascending) by the ranges ``los``/``his`` (ascending
    starts) of ``sids``; None when a row lies outside every range. One look-up a session,
    not a row: the rows up to the owner's end (or the next start) are skipped at once."""
    out: set[int] = set()
    j, n = 0, len(rows)
    while j < n:
        row = rows[j]
        k = bisect_right(los, row) - 1
        if k < 0 or row > his[k]:
            return None
        out.add(sids[k])
        # (up to its end, or to the next start: a later session may begin in a hole)
        last = his[k] if k + 1 == len(los) else min(his[k], los[k + 1] - 1)
        j = bisect_right(rows, last, j)
    return out
