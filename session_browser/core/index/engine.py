"""The SQLite index as an :class:`~session_browser.core.search.engine.Engine`: the questions of
the relevance procedure answered from one store's database (FTS5, or ``LIKE`` without it),
inside one read transaction, plus the files a running build has not indexed yet."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..model import SessionHit
from ..query import ParsedQuery, Term, fts_expr
from ..search.candidates import CANDIDATE_LIMIT
from ..search.engine import Ask, Backlog, Row
from ..search.lexical import SessionPostings
from ..search.rank import CorpusStats, Scored
from ..search.results import Cancelled
from . import hidden, recall, semantic
from .schema import rollback
from .vectors import VectorsUnavailable

if TYPE_CHECKING:
    from .store import SqliteSessionStore

# How long a search waits at most for a running reconcile to list the files it will index.
SURVEY_WAIT = 30.0


class SqliteEngine:
    """One search's view of a :class:`SqliteSessionStore`'s index (see :meth:`reading`)."""

    def __init__(self, store: SqliteSessionStore, cancelled: Cancelled | None = None) -> None:
        self.store = store
        self.label = store.label
        self.source_kind = store.source_kind
        self.mode = "index" if store.has_fts else "like"
        self.typo_pass = store.has_fts
        self.session_recall = store.has_fts
        self.stopped = False  # set when the search was interrupted through SQLite
        self._cancelled = cancelled
        self._db: sqlite3.Connection | None = None
        self._backlog = Backlog()
        self._choice: semantic.Choice | None = None

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("the index is read inside reading()")
        return self._db

    def handler(self) -> int:
        """SQLite's progress handler: non-zero interrupts the running statement."""
        if self._cancelled is not None and self._cancelled():
            self.stopped = True
            return 1
        return 0

    def _await_survey(self) -> None:
        """While a reconcile surveys the dir, wait until it has said which files it will
        index (a stat of each file: well under a second for 30,000 on a local disk), so a
        first search reads the indexed part and the newest waiting files rather than
        nothing; at most :data:`SURVEY_WAIT` seconds, and no longer than the caller wants."""
        surveyed = self.store._surveyed
        deadline = time.monotonic() + SURVEY_WAIT
        while not surveyed.wait(0.05):
            if time.monotonic() > deadline or (self._cancelled is not None and self._cancelled()):
                return

    @contextmanager
    def reading(self) -> Iterator[None]:
        """The index read in one snapshot (a read transaction) taken with the list of the
        files still to index: a reconcile commits a batch and takes its files off that list
        in one step, so each file is either in the snapshot or on the list, never both,
        never neither. A cancelled search interrupts the running statement."""
        store = self.store
        self._await_survey()
        with store._lock:
            db = store._conn()
            if self._cancelled is not None:  # SQLite asks every 1,000 instructions
                db.set_progress_handler(self.handler, 1000)
            snapshot = not store.memory and not db.in_transaction  # (in memory: one connection)
            try:
                with store._state_lock:
                    pending, unscanned = store._pending_to_scan()
                    self._backlog = Backlog(
                        pending,
                        unscanned,
                        frozenset(store._stale_keys),
                        sum(1 for n in store._pending if n in store._pending_new),
                    )
                    if snapshot:
                        db.execute("BEGIN")
                        db.execute("SELECT 1 FROM meta LIMIT 1").fetchall()  # the snapshot starts
                store._stats_for(db)  # (inside the snapshot: the version of what it reads)
                self._db = db
                yield
            finally:
                self._db = None
                try:
                    if snapshot:
                        rollback(db)
                finally:
                    if self._cancelled is not None:
                        db.set_progress_handler(None, 0)

    def backlog(self) -> Backlog:
        return self._backlog

    def notes(self, pq: ParsedQuery) -> list[str]:
        if not pq.terms or pq.tools:
            return []
        note = self._semantic().note
        return [note] if note is not None else []

    def _semantic(self) -> semantic.Choice:
        if self._choice is None:
            self._choice = self.store.semantic.choose()
        return self._choice

    def expect_neighbours(self, pq: ParsedQuery, k: int) -> None:
        choice = self._semantic()
        if choice.vectors is not None and choice.embedder is not None and pq.words.strip():
            want = semantic.wanted(k, bool(self.store._filter_sql(pq)[0]))
            self.store.semantic.prefetch(choice.embedder, pq.words, choice.vectors, want)

    def neighbours(self, pq: ParsedQuery, k: int) -> list[tuple[float, Row]] | None:
        choice = self._semantic()
        if choice.vectors is None:
            return None
        store = self.store
        try:
            return semantic.neighbours(
                self.db, choice, store.semantic, pq, k, store._filter_sql(pq), store._CAND_COLS
            )
        except VectorsUnavailable as exc:  # (changed under the search)
            semantic.log.warning("hybrid mode: %s: lexical answers", exc)
            return None

    def corpus(self) -> tuple[int, float]:
        return self.store._corpus_stats(self.db)

    def document_frequencies(self, terms: Sequence[Term]) -> list[int]:
        if not self.store.has_fts:
            return [1] * len(terms)
        return [self.store._df(self.db, t) for t in terms]

    def candidate_rows(
        self, pq: ParsedQuery, dfs: Sequence[int], limit: int, warnings: list[str], rare: set[int]
    ) -> list[Row]:
        if not self.store.has_fts:
            like = [t for i, t in enumerate(pq.terms) if not rare or i in rare]
            return self.store._fetch(self.db, pq, None, like, CANDIDATE_LIMIT)
        return self.store._fts_candidates(self.db, pq, dfs, limit, warnings, rare)

    def one_message_holds(self, pq: ParsedQuery) -> bool:
        expr = fts_expr(pq.terms, op="AND")
        return (
            self.db.execute("SELECT 1 FROM fts WHERE fts MATCH ? LIMIT 1", (expr,)).fetchone()
            is not None
        )

    def session_postings(self, words: Sequence[str]) -> SessionPostings:
        return self.store._recall.postings(self.db, self.store._stats_key, words)

    def session_rows(self, pq: ParsedQuery, keys: Sequence[int]) -> list[Row]:
        return recall.session_rows(self.db, pq, keys, self.store._CAND_COLS)

    def hidden_rows(self, pq: ParsedQuery, limit: int) -> list[Row]:
        store = self.store
        return hidden.candidates(
            self.db, pq, store._filter_sql(pq), store._CAND_COLS, fts=store.has_fts, limit=limit
        )

    def holds(self, terms: Sequence[Term], asks: Sequence[Ask]) -> list[set[int]]:
        return self.store._sessions_hold(self.db, terms, asks)

    def excluded_sessions(self, pq: ParsedQuery) -> set[int]:
        return self.store._excluded_sids(self.db, pq)

    def count_matches(
        self, pq: ParsedQuery, dfs: Sequence[int], rare: set[int]
    ) -> tuple[int, bool] | None:
        if not self.store.has_fts or pq.tools:  # (in:tools: the scored sessions are counted)
            return None
        return self.store._count_matches(self.db, pq, dfs, rare)

    def recent(self, pq: ParsedQuery, limit: int) -> tuple[list[Scored], int]:
        return self.store._recent_index(self.db, pq, limit)

    def known(self, token: str) -> bool:
        return self.store._df(self.db, Term((token,), token)) > 0

    def correct(self, token: str) -> str | None:
        return self.store._correct(self.db, token)

    def score_files(
        self, pq: ParsedQuery, names: Sequence[str], corpus: CorpusStats | None
    ) -> list[Scored]:
        return self.store._score_files(self.db, pq, names, corpus)

    def listed_count(self) -> int:
        return self.store._listed_count(self.db)

    def rows_of(self, keys: Sequence[int]) -> Mapping[int, Any]:
        return self.store._read_ahead([k for k in keys if k >= 0])

    def full_hit(
        self, s: Scored, pq: ParsedQuery, window: int, rows: Any | None
    ) -> SessionHit | None:
        return self.store._full_hit(s, pq, window, rows)
