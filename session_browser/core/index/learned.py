"""What a source learned of its files across them (Claude Code: each transcript's summary
lines, which may title the sessions of other files), kept in the index beside the parse
states (:attr:`~..sources.base.SessionSource.learned_table`) so a new process reads only the
files changed since to learn it again. A row is ``[size, mtime_ns, inode, {key: text}]`` as
JSON; a row that is not is left out. The denylist applies: a text a forget names is never
kept (the file is read again instead)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping

from ..forget.deny import keeps, screens
from ..sources.base import Learned


def load(db: sqlite3.Connection, table: str) -> dict[str, Learned]:
    """Every row of ``table`` that is well formed, by file name."""
    out: dict[str, Learned] = {}
    for name, text in db.execute(f"SELECT file, state FROM {table}"):
        try:
            size, mtime_ns, inode, texts = json.loads(text)
        except (ValueError, TypeError, RecursionError):
            continue
        if (
            isinstance(name, str)
            and all(type(n) is int for n in (size, mtime_ns, inode))
            and isinstance(texts, dict)
            and all(isinstance(v, str) for v in texts.values())
        ):
            out[name] = ((size, mtime_ns, inode), texts)
    return out


def save(db: sqlite3.Connection, table: str, learned: Mapping[str, Learned]) -> None:
    """Keep ``learned`` in ``table`` (in the caller's transaction), but what the denylist
    or ``redact_kept`` would change."""
    if not learned:
        return
    screening = screens()
    db.executemany(
        f"INSERT OR REPLACE INTO {table}(file, state) VALUES (?, ?)",
        [
            (name, json.dumps([*ident, texts]))
            for name, (ident, texts) in learned.items()
            if not screening or all(keeps(k) and keeps(v) for k, v in texts.items())
        ],
    )
