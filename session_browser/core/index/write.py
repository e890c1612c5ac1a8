"""The rows of parsed sessions written to and removed from the SQLite index."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ..files import disk_full
from ..search import lexical, rows
from ..search.rank import cuts
from ..search.rows import IN_CHUNK, SESSION_COLUMNS, MessageRow, Parsed, cleaned, skip_reason


def insert_rows(db: sqlite3.Connection, items: Sequence[Parsed], *, fts: bool) -> int:
    """Insert parsed files (none of them indexed now); returns the next free message id.

    Session and message ids are given here so every row goes in with one
    ``executemany`` per table, and FTS5 reads the new messages straight from the
    ``messages`` table (no per-row round trip through Python)."""
    first_id = (db.execute("SELECT max(id) FROM messages").fetchone()[0] or 0) + 1
    seq = db.execute("SELECT seq FROM sqlite_sequence WHERE name='sessions'").fetchone()
    top = db.execute("SELECT max(sid) FROM sessions").fetchone()[0] or 0
    sid = max(top, seq[0] if seq else 0) + 1
    next_id = first_id
    session_rows: list[tuple[Any, ...]] = []
    verbatim: list[tuple[int, int, int, str]] = []
    sids: list[int] = []
    for item in items:
        if item.verbatim and item.row.hit_rows:
            verbatim.extend((sid, idx, convo, raw) for idx, convo, raw in item.verbatim)
        row_lo = next_id
        next_id += len(item.messages)
        # a message longer than rows.PART_CHARS goes in as parts (its text may be folded, so
        # its length is looked at, not the session's characters)
        long = [t for _i, _r, _a, _ts, t in item.messages if len(t) > rows.PART_CHARS]
        next_id += sum(len(cuts(t, rows.PART_CHARS)) - 1 for t in long)
        session_rows.append(
            (
                sid,
                item.file,
                item.identity.size,
                item.identity.mtime_ns,
                item.identity.inode,
                *item.row.values(),
                len(item.messages),
                item.chars,
                row_lo,
                next_id - 1,
            )
        )
        sids.append(sid)
        sid += 1

    words: list[tuple[int, str, int]] = []  # (sid, its content words, its length)

    def message_rows() -> Iterator[tuple[Any, ...]]:
        """(id, sid, idx, role, archived, ts, text), in id order: a long message's parts
        (rows with the same idx) each sliced only as it is stored, so one huge message
        never needs several copies of itself at once. The content words of each session
        are taken from the rows as stored (:func:`delete_rows` reads them back the same)."""
        mid = first_id
        for item, msid in zip(items, sids, strict=True):
            texts: list[str] = []
            for idx, role, archived, ts, text in item.messages:
                if len(text) <= rows.PART_CHARS:
                    texts.append(text)
                    yield (mid, msid, idx, role, archived, ts, text)
                    mid += 1
                    continue
                for start, end in cuts(text, rows.PART_CHARS):
                    texts.append(text[start:end])
                    yield (mid, msid, idx, role, archived, ts, text[start:end])
                    mid += 1
            if fts and texts:  # (a session without messages has no words, on every engine)
                words.append((msid, *(item.words or content_words(texts))))

    db.executemany(
        f"INSERT INTO sessions(sid, file, size, mtime_ns, inode, {SESSION_COLUMNS}, nmsg, "
        "chars, row_lo, row_hi) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?, ?, ?, ?, ?, ?, ?, ?)",
        session_rows,
    )
    if verbatim:
        db.executemany("INSERT INTO verbatim(sid, idx, convo, raw) VALUES (?, ?, ?, ?)", verbatim)
    if next_id > first_id:
        db.executemany(
            "INSERT INTO messages(id, sid, idx, role, archived, ts, text) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            message_rows(),
        )
        if fts:
            db.execute(
                "INSERT INTO fts(rowid, text) SELECT id, text FROM messages "
                "WHERE id BETWEEN ? AND ?",
                (first_id, next_id - 1),
            )
            add_session_words(db, words)
    files = [item.file for item in items]
    for start in range(0, len(files), IN_CHUNK):
        chunk = files[start : start + IN_CHUNK]
        db.execute(f"DELETE FROM skipped WHERE file IN ({','.join('?' * len(chunk))})", chunk)
    return next_id


def stored_texts(messages: Sequence[MessageRow]) -> Iterator[str]:
    """The texts of ``messages`` as :func:`insert_rows` stores them (a long one in parts)."""
    for _idx, _role, _archived, _ts, text in messages:
        if len(text) <= rows.PART_CHARS:
            yield text
        else:
            for start, end in cuts(text, rows.PART_CHARS):
                yield text[start:end]


def content_words(texts: Iterable[str]) -> tuple[str, int]:
    """What the index keeps of a session's stored ``texts`` for session recall: its
    distinct content words and marks, space-separated, and how many it has in all."""
    distinct, length = lexical.session_words(texts)
    return " ".join(distinct), length


def add_session_words(db: sqlite3.Connection, words: Sequence[tuple[int, str, int]]) -> None:
    """Index sessions' content words (:mod:`~..search.lexical`): (sid, words, length)."""
    db.executemany("INSERT INTO recall_words(rowid, words) VALUES (?, ?)", [w[:2] for w in words])
    db.executemany(
        "INSERT INTO recall_lengths(sid, length) VALUES (?, ?)", [(w[0], w[2]) for w in words]
    )


def stored_words(db: sqlite3.Connection, lo: int, hi: int) -> str:
    """The content words of the messages ``lo``..``hi`` as :func:`insert_rows` indexed them."""
    read = db.execute("SELECT text FROM messages WHERE id BETWEEN ? AND ? ORDER BY id", (lo, hi))
    texts = (r[0] for r in read)
    return " ".join(lexical.session_words(texts)[0])


def insert_isolated(
    db: sqlite3.Connection, items: list[Parsed], insert: Callable[[list[Parsed]], object]
) -> list[tuple[str, str]]:
    """Insert ``items`` (in the caller's transaction) so that one that cannot be stored
    never keeps the others out: the batch at once; if that fails, with lone surrogates
    replaced; if that fails too, one by one, each failure recorded in ``skipped``.
    Returns the (file, reason) of the items left out.

    A full disk, or a failure after which SQLite has undone the whole transaction, is no
    item's fault: it is raised as it is, for the caller to roll back."""
    try:
        db.execute("SAVEPOINT batch")
        try:
            insert(items)
            return []
        except (sqlite3.Error, UnicodeError, OverflowError, ValueError) as exc:
            _not_the_items(db, exc)
            db.execute("ROLLBACK TO batch")
            items = [cleaned(i) for i in items]
            try:
                insert(items)
                return []
            except (sqlite3.Error, UnicodeError, OverflowError, ValueError) as exc:
                _not_the_items(db, exc)
                db.execute("ROLLBACK TO batch")
    finally:
        if db.in_transaction:
            db.execute("RELEASE batch")
    left_out: list[tuple[str, str]] = []
    for item in items:
        db.execute("SAVEPOINT one")
        try:
            insert([item])
        except (sqlite3.Error, UnicodeError, OverflowError, ValueError) as exc:
            _not_the_items(db, exc)
            db.execute("ROLLBACK TO one")
            why = skip_reason(exc)
            try:
                db.execute(
                    "INSERT OR REPLACE INTO skipped(file, size, mtime_ns, inode, reason) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (
                        item.file,
                        item.identity.size,
                        item.identity.mtime_ns,
                        item.identity.inode,
                        why,
                    ),
                )
            except (sqlite3.Error, UnicodeError) as failed:
                _not_the_items(db, failed)
                why = "file name cannot be stored: " + why  # reported, not kept
            left_out.append((item.file, why))
        finally:
            if db.in_transaction:
                db.execute("RELEASE one")
    return left_out


def _not_the_items(db: sqlite3.Connection, exc: BaseException) -> None:
    """Raise ``exc`` again when no item is to blame: the disk is full, or SQLite rolled the
    whole transaction back (no savepoint is left to return to)."""
    if disk_full(exc) or not db.in_transaction:
        raise exc


def delete_rows(db: sqlite3.Connection, name: str, *, fts: bool) -> bool:
    """Remove the rows of file ``name`` (its session, messages and FTS entries, or its
    ``skipped`` row): True when it had a session."""
    row = db.execute("SELECT sid, row_lo, row_hi FROM sessions WHERE file=?", (name,)).fetchone()
    if row is None:
        db.execute("DELETE FROM skipped WHERE file=?", (name,))
        return False
    sid, lo, hi = row
    if fts and hi >= lo:
        db.execute(
            "INSERT INTO fts(fts, rowid, text) SELECT 'delete', id, text FROM messages "
            "WHERE id BETWEEN ? AND ?",
            (lo, hi),
        )
    if fts and db.execute("SELECT 1 FROM recall_lengths WHERE sid=?", (sid,)).fetchone():
        db.execute(
            "INSERT INTO recall_words(recall_words, rowid, words) VALUES ('delete', ?, ?)",
            (sid, stored_words(db, lo, hi)),
        )
    db.execute("DELETE FROM recall_lengths WHERE sid=?", (sid,))
    db.execute("DELETE FROM messages WHERE id BETWEEN ? AND ?", (lo, hi))
    db.execute("DELETE FROM verbatim WHERE sid=?", (sid,))
    db.execute("DELETE FROM sessions WHERE sid=?", (sid,))
    return True
