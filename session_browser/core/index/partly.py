"""Lines skipped inside indexed files: a transcript with an unreadable line, an unfinished last
line or records of types this version does not know is still indexed (the rest of it is
searchable), and what was left out is kept here for ``index status`` to say in one line.

Table ``partly``: one row per indexed file that had any (written and removed with the file's
session rows).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from ..search.rows import Parsed

TABLES = frozenset({"partly"})


def create(db: sqlite3.Connection) -> None:
    """The table (in the caller's transaction)."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS partly(file TEXT PRIMARY KEY, bad INTEGER NOT NULL, "
        "tail INTEGER NOT NULL, unknown INTEGER NOT NULL, kinds TEXT NOT NULL)"
    )


def insert(db: sqlite3.Connection, items: Sequence[Parsed]) -> None:
    """Keep what was skipped inside ``items`` (just inserted, in the caller's transaction)."""
    rows = [
        (i.file, i.partly.bad, 1 if i.partly.tail else 0, i.partly.unknown_count, i.partly.kinds)
        for i in items
        if i.partly is not None and i.partly
    ]
    if rows:
        db.executemany("INSERT OR REPLACE INTO partly VALUES (?, ?, ?, ?, ?)", rows)


def delete(db: sqlite3.Connection, name: str) -> None:
    db.execute("DELETE FROM partly WHERE file=?", (name,))


def summary(db: sqlite3.Connection) -> JSONDictLike:
    """What ``index status`` shows: files, unreadable lines, unfinished last lines and
    records of unknown types (with their types) over every indexed file."""
    files, bad, tail, unknown = db.execute(
        "SELECT count(*), coalesce(sum(bad), 0), coalesce(sum(tail), 0), "
        "coalesce(sum(unknown), 0) FROM partly"
    ).fetchone()
    kinds: set[str] = set()
    for (text,) in db.execute("SELECT kinds FROM partly WHERE kinds != '' LIMIT 1000"):
        kinds.update(k for k in str(text).split(",") if k)
    return {
        "files": int(files),
        "bad_lines": int(bad),
        "unfinished_last_lines": int(tail),
        "unknown_records": int(unknown),
        "unknown_types": sorted(kinds)[:20],
    }


JSONDictLike = dict[str, Any]


def describe(info: JSONDictLike) -> str | None:
    """The one line ``index status`` prints (None: nothing was skipped inside a file)."""
    if not info or not info.get("files"):
        return None
    parts: list[str] = []
    if info.get("bad_lines"):
        parts.append(f"{info['bad_lines']} unreadable line(s) (not JSON, invalid UTF-8, too long)")
    if info.get("unfinished_last_lines"):
        parts.append(f"{info['unfinished_last_lines']} unfinished last line(s)")
    if info.get("unknown_records"):
        kinds = ", ".join(info.get("unknown_types") or [])
        more = f" ({kinds})" if kinds else ""
        parts.append(f"{info['unknown_records']} record(s) of unknown types{more}")
    return f"in {info['files']} indexed file(s): " + ", ".join(parts)
