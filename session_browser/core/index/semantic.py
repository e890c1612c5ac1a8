"""The SQLite index's part of hybrid mode: whether a search uses the vectors beside the index
(:mod:`.vectors`), the query's vector, and the nearest sessions as candidate rows."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..embed import Embedder, EmbedderUnavailable, embedder_named
from ..query import ParsedQuery
from ..search.hybrid import question_parts, requested_mode
from .vectors import Closeness, VectorIndex, VectorsUnavailable, follow, updating

if TYPE_CHECKING:
    import sqlite3

log = logging.getLogger(__name__)

#: Said while the vectors are brought up to date after an index update.
UPDATING = (
    "hybrid mode: the vectors are being updated in the background: sessions not embedded yet "
    "are found by their words only"
)
#: Query vectors kept per store (the same words asked again, a page grown).
QUERY_CACHE = 64


@dataclass
class Choice:
    """What a search uses: the vectors and their embedder (None: lexical), and why not."""

    vectors: VectorIndex | None = None
    embedder: Embedder | None = None
    note: str | None = None


class Semantic:
    """One store's vectors, opened lazily (``db_path``: the index; None: kept in memory,
    no vectors)."""

    def __init__(self, db_path: str | None) -> None:
        self.mode: str | None = None  # asked for by the store's owner, else the environment
        # set by a group of stores whose vectors are not all ready: unless hybrid mode is
        # asked for, its stores answer lexically alike (fused and lexical scores do not mix)
        self.group_lexical = False
        self._vectors = VectorIndex(db_path) if db_path is not None else None
        self._queries: dict[tuple[str, str], Any] = {}
        self._pending: dict[tuple[str, str], Future[Any]] = {}
        self._scored: dict[tuple[str, str], Closeness] = {}
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._qlock = threading.Lock()  # the query vectors (not held while loading vectors)

    def choose(self) -> Choice:
        """Hybrid when asked (or not asked and the vectors are ready), with the vectors."""
        try:
            mode = requested_mode(self.mode)
        except ValueError as exc:
            return Choice(note=f"{exc}: lexical answers")
        if mode == "lexical" or (mode is None and self.group_lexical):
            return Choice()
        vectors = self._vectors
        if vectors is None:
            return Choice(
                note="hybrid mode: an index in memory has no vectors: lexical answers"
                if mode == "hybrid"
                else None
            )
        try:
            with self._lock:
                vectors.load()
            embedder = embedder_named(vectors.model)
        except (VectorsUnavailable, EmbedderUnavailable) as exc:
            # asked for, or vectors there but unusable: say so; never asked, none built: silent
            said = mode == "hybrid" or vectors.path.exists()
            return Choice(
                note=f"hybrid mode unavailable ({exc}): lexical answers" if said else None
            )
        if updating(vectors.db_path):
            return Choice(vectors, embedder, note=UPDATING)
        return Choice(vectors, embedder)

    def index_changed(self) -> None:
        """The index gained, grew or lost sessions: its vectors, if ever built, follow in the
        background (:func:`.vectors.follow`)."""
        if self._vectors is not None:
            follow(self._vectors.db_path)

    def ready(self) -> bool:
        """Whether there are vectors to read (built at least once; not checked further)."""
        return self._vectors is not None and self._vectors.path.is_file()

    def prefetch(self, embedder: Embedder, text: str, vectors: VectorIndex, k: int) -> None:
        """Start embedding ``text`` and working out its closeness to every session of
        ``vectors`` (for ``k`` nearest) on a thread of its own, so that both are ready (or
        nearly) when the search asks (:meth:`query_vector`, :meth:`closeness`): NumPy works
        outside the GIL, beside the lexical part of the search, on another core. A prefetch
        not yet started when another one comes is dropped (typing supersedes a query)."""
        key = (embedder.name, text)
        with self._qlock:
            if key in self._queries or key in self._pending:
                return
            for other, old in list(self._pending.items()):
                if old.cancel():  # (false for one already running: it finishes, kept)
                    del self._pending[other]
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="query-vector")
            self._pending[key] = self._pool.submit(self._embed, embedder, text, vectors, k)

    def _embed(
        self, embedder: Embedder, text: str, vectors: VectorIndex | None = None, k: int = 0
    ) -> Any:
        key = (embedder.name, text)
        try:
            # the whole query, then its parts (one batch: the weights are read once for all)
            got = embedder.embed([text, *question_parts(text)])
            scored: Closeness | None = None
            if vectors is not None:
                try:
                    scored = vectors.closeness(got, k)
                except VectorsUnavailable:  # (said by the search itself when it asks)
                    scored = None
        except BaseException:
            with self._qlock:  # (a failed prefetch is not kept: the words are asked anew)
                self._pending.pop(key, None)
            raise
        with self._qlock:
            if len(self._queries) >= QUERY_CACHE:
                self._queries.clear()
            self._queries[key] = got
            self._scored.clear()  # (one kept: a closeness holds two arrays of the store's size)
            if scored is not None:
                self._scored[key] = scored
            self._pending.pop(key, None)
        return got

    def query_vector(self, embedder: Embedder, text: str) -> Any:
        """The vectors of ``text``: a row for the whole, then one per part
        (:func:`~..search.hybrid.question_parts`); kept from before, else the prefetch's
        (waited for), else embedded here (also when the prefetch failed)."""
        key = (embedder.name, text)
        with self._qlock:
            got = self._queries.get(key)
            pending = self._pending.get(key) if got is None else None
        if got is not None:
            return got
        if pending is not None:
            try:
                return pending.result()
            except Exception:  # (dropped, or failed on its thread: asked again here, where
                pass  # a failure is the search's own)
        return self._embed(embedder, text)

    def closeness(self, embedder: Embedder, text: str) -> Closeness | None:
        """The closeness of ``text`` a prefetch worked out, if any (after
        :meth:`query_vector`)."""
        with self._qlock:
            return self._scored.get((embedder.name, text))

    def close(self) -> None:
        """Stop the prefetch thread (a running embedding finishes first)."""
        with self._qlock:
            pool, self._pool = self._pool, None
            for old in self._pending.values():
                old.cancel()
            self._pending.clear()
        if pool is not None:
            pool.shutdown(wait=True)


def wanted(k: int, filtered: bool) -> int:
    """Sessions asked of the vectors first for ``k`` neighbours (``filtered``: the query has
    filters, some may not pass them)."""
    return k * 2 if filtered else k


def neighbours(
    db: sqlite3.Connection,
    choice: Choice,
    semantic: Semantic,
    pq: ParsedQuery,
    k: int,
    filters: tuple[str, list[Any]],
    columns: str,
) -> list[tuple[float, tuple[Any, ...]]]:
    """The ``k`` nearest sessions passing ``pq``'s filters (``filters``: its SQL over ``m``
    and ``s``), each as (cosine, the candidate row of its best window's first message passing
    them, else of its session's first message passing them)."""
    vectors, embedder = choice.vectors, choice.embedder
    assert vectors is not None and embedder is not None
    text = pq.words
    if not text.strip() or k <= 0:  # (nothing asked by meaning: the query is not embedded)
        return []
    query = semantic.query_vector(embedder, text)
    scored = semantic.closeness(embedder, text)
    fsql, fparams = filters
    sql = (
        f"SELECT {columns} FROM sessions s JOIN messages m ON m.id BETWEEN s.row_lo AND s.row_hi "
        f"WHERE s.file = ?{{within}}{fsql} ORDER BY m.id LIMIT 1"
    )
    in_window = sql.format(within=" AND m.idx BETWEEN ? AND ?")
    anywhere = sql.format(within="")
    out: list[tuple[float, tuple[Any, ...]]] = []
    want = wanted(k, bool(fsql))
    while True:
        wins = vectors.nearest(query, want, scored)
        out = []
        for w in wins:
            row = db.execute(in_window, (w.file, w.first, w.last, *fparams)).fetchone()
            if row is None and fsql:
                row = db.execute(anywhere, (w.file, *fparams)).fetchone()
            if row is not None:
                out.append((w.similarity, tuple(row)))
                if len(out) >= k:
                    return out
        if len(wins) < want or want >= 8 * k:
            return out
        want *= 2
