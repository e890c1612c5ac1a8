"""Session recall's reads from the index (:mod:`..search.lexical`): which sessions hold each of
a question's content words (``recall_words``, one row a session), the sessions' lengths
(``recall_lengths``), and the candidate messages of the sessions it picked."""

from __future__ import annotations

import sqlite3
from collections.abc import Hashable, Sequence
from typing import Any

from ..query import ParsedQuery, fts_expr
from ..search.lexical import ANCHOR_MESSAGES, SessionPostings
from ..search.rows import IN_CHUNK
from .owners import rowids

#: A word held by more sessions than this has its postings kept between searches (reading
#: them is what costs), up to :data:`CACHED_WORDS` words, the least recently used let go.
CACHE_DF = 500
CACHED_WORDS = 256


class RecallReads:
    """The reads, with what is worth keeping between searches of one index version (the
    sessions' lengths, the postings of frequent words)."""

    def __init__(self) -> None:
        self._version: Hashable = None
        self._lengths: dict[int, int] | None = None
        self._mean = 1.0
        self._posts: dict[str, frozenset[int]] = {}

    def postings(
        self, db: sqlite3.Connection, version: Hashable, words: Sequence[str]
    ) -> SessionPostings:
        """The sessions holding each of ``words`` (index ``version``: what the caches hold)."""
        if version != self._version or self._lengths is None:
            self._version = version
            self._posts = {}
            self._lengths = dict(db.execute("SELECT sid, length FROM recall_lengths").fetchall())
            n = len(self._lengths)
            self._mean = (sum(self._lengths.values()) / n) if n else 1.0
        posts: dict[str, frozenset[int]] = {}
        cache = self._posts
        for word in words:
            got = cache.get(word)
            if got is not None:  # the most recently used go last
                cache[word] = cache.pop(word, got)
            else:
                # (one string of the rowids: handing over a row each costs more than parsing)
                held = db.execute(
                    "SELECT group_concat(rowid) FROM recall_words WHERE recall_words MATCH ?",
                    ('"' + word.replace('"', '""') + '"',),
                ).fetchone()[0]
                got = frozenset(rowids(held))
                if len(got) > CACHE_DF:
                    while len(cache) >= CACHED_WORDS:  # the least recently used go
                        cache.pop(next(iter(cache)), None)
                    cache[word] = got
            posts[word] = got
        return SessionPostings(len(self._lengths), self._mean, posts, self._lengths)


def session_rows(
    db: sqlite3.Connection, pq: ParsedQuery, keys: Sequence[int], columns: str
) -> list[tuple[Any, ...]]:
    """Candidate rows (``columns``) of the sessions ``keys``: each one's newest messages
    holding a term of ``pq`` (at most :data:`ANCHOR_MESSAGES`), else its first message."""
    spans: dict[int, tuple[int, int]] = {}
    for start in range(0, len(keys), IN_CHUNK):
        chunk = list(keys[start : start + IN_CHUNK])
        spans.update(
            (sid, (lo, hi))
            for sid, lo, hi in db.execute(
                "SELECT sid, row_lo, row_hi FROM sessions "
                f"WHERE sid IN ({','.join('?' * len(chunk))})",
                chunk,
            )
        )
    expr = fts_expr(pq.terms)
    ids: list[int] = []
    for sid in keys:
        span = spans.get(sid)
        if span is None or span[1] < span[0]:
            continue
        # (FTS5 walks a posting list forwards faster: all of them, the newest kept)
        found = [
            r[0]
            for r in db.execute(
                "SELECT rowid FROM fts WHERE fts MATCH ? AND rowid BETWEEN ? AND ?",
                (expr, span[0], span[1]),
            )
        ][-ANCHOR_MESSAGES:]
        ids.extend(found or [span[0]])
    rows: list[tuple[Any, ...]] = []
    for start in range(0, len(ids), IN_CHUNK):
        chunk = ids[start : start + IN_CHUNK]
        rows.extend(
            db.execute(
                f"SELECT {columns} FROM messages m JOIN sessions s ON s.sid = m.sid "
                f"WHERE m.id IN ({','.join('?' * len(chunk))})",
                chunk,
            )
        )
    return rows
