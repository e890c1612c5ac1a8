"""Forgetting on purpose in the SQLite index files (``forget``): which indexed files hold a
session or a text, and their removal so that no copy is left in the database file, its
``-wal`` or its freed pages (``secure_delete`` for the delete, FTS segments merged without
them, the WAL checkpointed and truncated, the file vacuumed)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from .. import paths
from ..query import fold
from ..search import lexical
from ..sources.base import LEARNED_SUFFIX
from . import hidden, partly
from .write import add_session_words, delete_rows, stored_words

BUSY_MS = 30_000
SCRUB_WAIT_MS = 2_000


def index_files() -> list[Path]:
    """Every index database in our cache dir (one per store, any source)."""
    base = paths.cache_dir() / "index"
    try:
        return sorted(p for p in base.iterdir() if p.suffix == ".sqlite3" and p.is_file())
    except OSError:
        return []


def connect(path: Path) -> sqlite3.Connection | None:
    """A connection to index ``path`` (None when it is not an index: no ``sessions``)."""
    try:
        db = sqlite3.connect(path, timeout=BUSY_MS / 1000, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        db.execute(f"PRAGMA busy_timeout={BUSY_MS}")
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.Error:
        db.close()
        return None
    if not {"sessions", "messages"} <= names:
        db.close()
        return None
    return db


def _tables(db: sqlite3.Connection) -> set[str]:
    return {str(r[0]) for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def holding_ids(db: sqlite3.Connection, session_ids: Sequence[str]) -> list[tuple[str, str]]:
    """(file, session id) of the indexed files of ``session_ids``."""
    out: list[tuple[str, str]] = []
    for sid in dict.fromkeys(session_ids):
        out += [
            (str(f), str(s))
            for f, s in db.execute(
                "SELECT file, session_id FROM sessions WHERE session_id = ?", (sid,)
            )
        ]
    return out


def holding_text(db: sqlite3.Connection, text: str) -> list[tuple[str, str]]:
    """(file, session id) of the indexed files holding ``text`` anywhere we keep it (the
    messages, the hidden parts, the exact turns, the titles), as written or folded."""
    needles = list(dict.fromkeys([text, fold(text)]))
    tables = _tables(db)
    found: dict[str, str] = {}
    for needle in needles:
        queries = [
            "SELECT s.file, s.session_id FROM sessions s WHERE instr(s.title, ?1) > 0 "
            "OR instr(s.peer_title, ?1) > 0 OR instr(s.session_id, ?1) > 0",
            "SELECT DISTINCT s.file, s.session_id FROM messages m JOIN sessions s "
            "ON m.sid = s.sid WHERE instr(m.text, ?1) > 0",
        ]
        if "hidden" in tables:
            queries.append(
                "SELECT DISTINCT s.file, s.session_id FROM hidden h JOIN sessions s "
                "ON h.sid = s.sid WHERE instr(h.text, ?1) > 0"
            )
        if "verbatim" in tables:
            queries.append(
                "SELECT DISTINCT s.file, s.session_id FROM verbatim v JOIN sessions s "
                "ON v.sid = s.sid WHERE instr(v.raw, ?1) > 0"
            )
        for sql in queries:
            for f, s in db.execute(sql, (needle,)):
                found[str(f)] = str(s)
    return sorted(found.items())


def delete_files(db: sqlite3.Connection, files: Sequence[str]) -> tuple[int, bool]:
    """Remove every row of the indexed ``files`` (session, messages, FTS entries, hidden
    parts, exact turns, parse states, what was skipped, the vault's notes) in one
    transaction with ``secure_delete`` on, merge the FTS segments so none still holds
    them, then checkpoint and truncate the WAL and vacuum. The files removed, and whether
    the scrub finished (:func:`scrub`)."""
    tables = _tables(db)
    meta = dict(db.execute("SELECT key, value FROM meta").fetchall()) if "meta" in tables else {}
    fts = meta.get("fts") == "1" and "fts" in tables
    states = sorted(t for t in tables if t.endswith("_state"))
    db.execute("PRAGMA secure_delete=ON")
    removed = 0
    db.execute("BEGIN IMMEDIATE")
    try:
        for name in dict.fromkeys(files):
            for table in states:
                db.execute(f"DELETE FROM {table} WHERE file = ?", (name,))
            if "hidden" in tables:
                hidden.delete(db, name, fts=fts and "hidden_fts" in tables)
            if "partly" in tables:
                partly.delete(db, name)
            if "vault_kept" in tables:
                db.execute("DELETE FROM vault_kept WHERE file = ?", (name,))
            if delete_rows(db, name, fts=fts):
                removed += 1
        if fts:
            _optimize(db, tables)
        db.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise
    return removed, scrub(db)


def scrub(db: sqlite3.Connection) -> bool:
    """Leave no copy of deleted rows in the WAL or in freed pages: checkpoint and truncate
    the WAL, vacuum (with ``secure_delete`` on), and truncate the WAL again. False when
    another process kept that from finishing (its open read holds the old pages: the
    caller says so, and a later forget or index update finishes it)."""
    db.execute("PRAGMA secure_delete=ON")
    db.execute(f"PRAGMA busy_timeout={SCRUB_WAIT_MS}")  # a reader is waited for briefly
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        db.execute("VACUUM")
        busy = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    except sqlite3.OperationalError:
        return False
    finally:
        db.execute(f"PRAGMA busy_timeout={BUSY_MS}")
    return busy is None or not busy[0]


def readmit(reason: str) -> None:
    """Let the files left out for ``reason`` (a denylist entry taken off) be read again by
    the next update of every index: their ``skipped`` rows go, and so does the scan's
    fingerprint (an unchanged dir is then scanned anyway)."""
    for path in index_files():
        db = connect(path)
        if db is None:
            continue
        try:
            if "skipped" in _tables(db):
                db.execute("DELETE FROM skipped WHERE reason = ?", (reason,))
            db.execute("DELETE FROM meta WHERE key = 'scan_fp'")
        except sqlite3.Error:
            continue
        finally:
            db.close()


def redact_text(
    db: sqlite3.Connection, texts: Sequence[str], placeholder: str, files: Sequence[str]
) -> tuple[int, bool]:
    """Replace ``texts`` (as written, and folded in a folded index) with ``placeholder`` in
    every row we keep of it (messages and their FTS entries, hidden parts, exact turns,
    titles), in one transaction with ``secure_delete`` on, then merge the FTS segments and
    scrub the file (:func:`scrub`). The parse states of ``files`` (the files holding it:
    a state keeps what was read, compressed) are dropped: a file that grows is then read
    whole again; so is all a source learned across files (``*_learned_state``). The rows
    changed, and whether the scrub finished (:func:`scrub`)."""
    tables = _tables(db)
    meta = dict(db.execute("SELECT key, value FROM meta").fetchall()) if "meta" in tables else {}
    fts = meta.get("fts") == "1" and "fts" in tables
    pairs = list(
        dict.fromkeys(
            [(t, placeholder) for t in texts] + [(fold(t), fold(placeholder)) for t in texts]
        )
    )
    db.execute("PRAGMA secure_delete=ON")
    changed = 0
    states = sorted(t for t in tables if t.endswith("_state"))
    db.execute("BEGIN IMMEDIATE")
    try:
        for table in states:
            db.executemany(f"DELETE FROM {table} WHERE file = ?", [(f,) for f in files])
            if table.endswith(LEARNED_SUFFIX):
                # What a source learned of files across them (titles from summary lines):
                # a cache that may hold the text of any file, so it goes whole.
                db.execute(f"DELETE FROM {table}")
        recalled = _words_out(db, [old for old, _ in pairs]) if fts else []
        for table, index in (("messages", "fts"), ("hidden", "hidden_fts")):
            if table not in tables:
                continue
            with_fts = fts and index in tables
            for old, new in pairs:
                ids = [
                    int(r[0])
                    for r in db.execute(f"SELECT id FROM {table} WHERE instr(text, ?) > 0", (old,))
                ]
                for start in range(0, len(ids), 500):
                    chunk = ids[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    if with_fts:
                        db.execute(
                            f"INSERT INTO {index}({index}, rowid, text) SELECT 'delete', id, "
                            f"text FROM {table} WHERE id IN ({marks})",
                            chunk,
                        )
                    db.execute(
                        f"UPDATE {table} SET text = replace(text, ?, ?) WHERE id IN ({marks})",
                        [old, new, *chunk],
                    )
                    if with_fts:
                        db.execute(
                            f"INSERT INTO {index}(rowid, text) SELECT id, text FROM {table} "
                            f"WHERE id IN ({marks})",
                            chunk,
                        )
                changed += len(ids)
        _words_in(db, recalled)
        for old, new in pairs:
            if "verbatim" in tables:
                changed += db.execute(
                    "UPDATE verbatim SET raw = replace(raw, ?1, ?2) WHERE instr(raw, ?1) > 0",
                    (old, new),
                ).rowcount
            for column in ("title", "peer_title"):
                changed += db.execute(
                    f"UPDATE sessions SET {column} = replace({column}, ?1, ?2) "
                    f"WHERE instr({column}, ?1) > 0",
                    (old, new),
                ).rowcount
        if fts:
            _optimize(db, tables)
        db.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise
    return changed, scrub(db)


def _optimize(db: sqlite3.Connection, tables: set[str]) -> None:
    """Merge the segments of every full-text index of the file, so that no segment still
    holds a deleted or replaced entry (the session words' contentless index too)."""
    for index in ("fts", "hidden_fts", "recall_words"):
        if index in tables:
            db.execute(f"INSERT INTO {index}({index}) VALUES('optimize')")


def _words_out(db: sqlite3.Connection, needles: Sequence[str]) -> list[tuple[int, int, int]]:
    """Take the session words (:mod:`~..search.lexical`) of the sessions whose messages hold
    one of ``needles`` out of their index, before the messages change: (sid, lo, hi)."""
    if not db.execute("SELECT 1 FROM sqlite_master WHERE name='recall_lengths'").fetchone():
        return []
    sids: set[int] = set()
    for needle in needles:
        sids.update(
            int(r[0])
            for r in db.execute(
                "SELECT DISTINCT sid FROM messages WHERE instr(text, ?) > 0", (needle,)
            )
        )
    out: list[tuple[int, int, int]] = []
    for sid in sorted(sids):
        row = db.execute(
            "SELECT s.row_lo, s.row_hi FROM sessions s JOIN recall_lengths r ON r.sid = s.sid "
            "WHERE s.sid = ?",
            (sid,),
        ).fetchone()
        if row is None:
            continue
        lo, hi = int(row[0]), int(row[1])
        db.execute(
            "INSERT INTO recall_words(recall_words, rowid, words) VALUES ('delete', ?, ?)",
            (sid, stored_words(db, lo, hi)),
        )
        db.execute("DELETE FROM recall_lengths WHERE sid = ?", (sid,))
        out.append((sid, lo, hi))
    return out


def _words_in(db: sqlite3.Connection, sessions: Sequence[tuple[int, int, int]]) -> None:
    """Index the session words of ``sessions`` again, from their messages as they are now."""
    rows: list[tuple[int, str, int]] = []
    for sid, lo, hi in sessions:
        read = db.execute(
            "SELECT text FROM messages WHERE id BETWEEN ? AND ? ORDER BY id", (lo, hi)
        )
        words, length = lexical.session_words(r[0] for r in read)
        rows.append((sid, " ".join(words), length))
    add_session_words(db, rows)
