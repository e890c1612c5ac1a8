"""The hidden parts of the indexed sessions (tool calls and results, reasoning, bookkeeping),
kept beside the prose for ``in:tools``.

Tables: ``hidden`` mirrors ``messages`` (session, projection index of the turn the part
belongs to, that turn's role, archived flag and time, the part's text as
:func:`~session_browser.core.hidden.hidden_texts` gives it), so the query's filters read it
as they read a message; ``hidden_fts`` is its external-content FTS5 table. A default search
never reads them; with ``in:tools`` their matches are candidates anchored at the turn they
belong to (the hit opens there). A session's hidden rows have consecutive ids, written and
removed with its messages.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from typing import Any

from ..query import ParsedQuery, fts_expr, like_pattern
from ..search.hidden import CANDIDATES, PER_SESSION
from ..search.rows import IN_CHUNK, Parsed
from .newest import newest_ids

TABLES = frozenset({"hidden"})
_READS_SESSIONS = re.compile(r"\bs\.")


def create(db: sqlite3.Connection, fts: bool) -> None:
    """The hidden tables (in the caller's transaction)."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS hidden(id INTEGER PRIMARY KEY, sid INTEGER NOT NULL, "
        "idx INTEGER NOT NULL, role TEXT, archived INTEGER, ts REAL, text TEXT NOT NULL)"
    )
    db.execute("CREATE INDEX IF NOT EXISTS hidden_sid ON hidden(sid)")
    if fts:
        db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS hidden_fts USING fts5(text, content='hidden', "
            "content_rowid='id', tokenize='unicode61 remove_diacritics 2', columnsize=0)"
        )


def insert(db: sqlite3.Connection, items: Sequence[Parsed], *, fts: bool) -> None:
    """Write the hidden rows of ``items`` (just inserted, in the caller's transaction)."""
    todo = [item for item in items if item.hidden]
    if not todo:
        return
    sids: dict[str, int] = {}
    files = [item.file for item in todo]
    for start in range(0, len(files), IN_CHUNK):
        chunk = files[start : start + IN_CHUNK]
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT file, sid FROM sessions WHERE file IN ({marks})"
        for file, sid in db.execute(sql, chunk):
            sids[file] = int(sid)
    first = (db.execute("SELECT max(id) FROM hidden").fetchone()[0] or 0) + 1
    rows: list[tuple[Any, ...]] = []
    next_id = first
    for item in todo:
        sid = sids.get(item.file)
        if sid is None:
            continue
        for idx, role, archived, ts, text in item.hidden or ():
            rows.append((next_id, sid, idx, role, archived, ts, text))
            next_id += 1
    if not rows:
        return
    db.executemany(
        "INSERT INTO hidden(id, sid, idx, role, archived, ts, text) VALUES (?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    if fts:
        db.execute(
            "INSERT INTO hidden_fts(rowid, text) SELECT id, text FROM hidden WHERE id >= ?",
            (first,),
        )


def delete(db: sqlite3.Connection, name: str, *, fts: bool) -> None:
    """Remove the hidden rows of file ``name`` (before its session row goes)."""
    row = db.execute("SELECT sid FROM sessions WHERE file=?", (name,)).fetchone()
    if row is None:
        return
    if fts:
        db.execute(
            "INSERT INTO hidden_fts(hidden_fts, rowid, text) SELECT 'delete', id, text "
            "FROM hidden WHERE sid = ?",
            (row[0],),
        )
    db.execute("DELETE FROM hidden WHERE sid = ?", (row[0],))


def automerge(db: sqlite3.Connection, level: int) -> None:
    """Set ``hidden_fts``'s automerge (off while a first build streams rows in)."""
    db.execute(f"INSERT INTO hidden_fts(hidden_fts, rank) VALUES('automerge', {int(level)})")


def optimize(db: sqlite3.Connection) -> None:
    """Merge ``hidden_fts`` into one segment (after a first build)."""
    db.execute("INSERT INTO hidden_fts(hidden_fts) VALUES('optimize')")


def candidates(
    db: sqlite3.Connection,
    pq: ParsedQuery,
    filter_sql: tuple[str, list[Any]],
    cols: str,
    *,
    fts: bool,
    limit: int = 5,
) -> list[tuple[Any, ...]]:
    """The newest hidden parts holding a term of ``pq`` and passing its filters (at most
    :data:`PER_SESSION` of one session), as candidate rows of the index's shape (``cols``,
    over ``m`` and ``s``): the part's text at the projection index of its turn. The last
    column (the row id) is negated, so it never equals a message's."""
    if not pq.terms:
        return []
    fsql, fparams = filter_sql
    join = " JOIN sessions s ON s.sid = m.sid" if _READS_SESSIONS.search(fsql) else ""
    if fts:
        source = f"hidden_fts JOIN hidden m ON m.id = hidden_fts.rowid{join}"
        where, params, below = "hidden_fts MATCH ?", [fts_expr(list(pq.terms))], "hidden_fts.rowid"
    else:
        source = f"hidden m{join}"
        where = "(" + " OR ".join("m.text LIKE ? ESCAPE '\\'" for _ in pq.terms) + ")"
        params, below = [like_pattern(t) for t in pq.terms], "m.id"

    def first_of(sid: int) -> int | None:
        lo = db.execute("SELECT min(id) FROM hidden WHERE sid = ?", (sid,)).fetchone()
        return None if lo is None or lo[0] is None else int(lo[0])

    chosen = newest_ids(
        db,
        f"SELECT m.id, m.sid FROM {source} WHERE {where}{fsql}",
        [*params, *fparams],
        below,
        max(CANDIDATES, PER_SESSION * limit),
        PER_SESSION,
        first_of,
    )
    rows: list[tuple[Any, ...]] = []
    for start in range(0, len(chosen), IN_CHUNK):
        chunk = chosen[start : start + IN_CHUNK]
        for row in db.execute(
            f"SELECT {cols} FROM hidden m JOIN sessions s ON s.sid = m.sid "
            f"WHERE m.id IN ({','.join('?' * len(chunk))})",
            chunk,
        ):
            rows.append((*row[:-1], -int(row[-1])))
    rows.sort(key=lambda r: -r[-1], reverse=True)
    return rows
