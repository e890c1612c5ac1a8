"""The search API both index engines offer, written once: ``search``, ``search_ex`` and
``relevance_candidates`` around an engine's own relevance search (``_relevance``). The SQLite
index adds the classic ranking; the team index (PostgreSQL) ranks by relevance whatever is
asked."""

from __future__ import annotations

import time

from .. import recall
from ..model import SessionHit
from ..query import NOTHING_SEARCHABLE, ParsedQuery, QueryError, parse_query, why_empty
from .hybrid import MeaningPart, requested_mode
from .pick import hits_or_raise
from .rank import CorpusStats
from .results import Cancelled, Relevance, SearchCancelled, SearchResult


class IndexSearch:
    """The search API over an engine's :meth:`_relevance`."""

    broken: str | None  # why the index cannot be used (its files are scanned), else None
    semantic: MeaningPart | None = None  # its search by meaning (an engine without one: None)
    has_fts: bool  # False: words are looked for with LIKE

    def _relevance(
        self,
        pq: ParsedQuery,
        limit: int,
        window: int,
        corpus: CorpusStats | None = None,
        cancelled: Cancelled | None = None,
    ) -> Relevance:
        """The engine's relevance candidates of ``pq`` (:class:`SearchCancelled` when
        ``cancelled()`` turns true meanwhile)."""
        raise NotImplementedError

    def _search_result(self, query: str, ranking: str) -> SearchResult:
        """The result a search fills (its ``error`` set: nothing is searched); a result
        whose ranking is ``classic`` is filled by :meth:`_search_classic`."""
        return SearchResult(query=query or "", ranking="relevance")

    def _search_classic(self, result: SearchResult, query: str, limit: int, window: int) -> None:
        """The classic ranking's hits into ``result`` (an engine with a classic ranking)."""
        raise NotImplementedError

    def search(
        self, query: str, *, limit: int = 5, window: int = 5, ranking: str = "relevance"
    ) -> list[SessionHit]:
        """Ranked hits; raises :class:`QueryError` for a bad filter value."""
        return hits_or_raise(self.search_ex(query, limit=limit, window=window, ranking=ranking))

    def relevance_candidates(
        self,
        pq: ParsedQuery,
        *,
        limit: int = 5,
        window: int = 5,
        corpus: CorpusStats | None = None,
        cancelled: Cancelled | None = None,
    ) -> Relevance:
        """Relevance candidates of a parsed query and how they were found
        (:class:`SearchCancelled` when ``cancelled()`` turns true meanwhile)."""
        return self._relevance(pq, limit, window, corpus, cancelled)

    def search_ex(
        self,
        query: str,
        *,
        limit: int = 5,
        window: int = 5,
        ranking: str = "relevance",
        cancelled: Cancelled | None = None,
    ) -> SearchResult:
        """Search and say how: hits, matched sessions, mode, fuzzy, progress, warnings.

        Never raises for user text: a bad filter value comes back in ``error``. When
        ``cancelled()`` turns true while it runs, the running statement is interrupted
        and the result says ``cancelled`` (no hits).
        """
        started = time.perf_counter()
        result = self._search_result(query, ranking)
        if result.error is None:
            if result.ranking == "classic":
                self._search_classic(result, query, limit, window)
            else:
                self._search_relevance(result, query, limit, window, cancelled)
        result.elapsed_ms = (time.perf_counter() - started) * 1000
        return result

    def _search_relevance(
        self,
        result: SearchResult,
        query: str,
        limit: int,
        window: int,
        cancelled: Cancelled | None,
    ) -> None:
        try:
            requested_mode()  # (a bad mode is an error, not a notice)
            pq = parse_query(query)
        except (QueryError, ValueError) as exc:
            result.error = str(exc)
            return
        result.warnings.extend(pq.warnings)
        if pq.nothing_searchable:
            result.warnings.append(NOTHING_SEARCHABLE)
            return
        if limit <= 0 or pq.empty:
            result.mode = "scan" if self.broken else ("index" if self.has_fts else "like")
            return
        try:
            rel = self._relevance(pq, limit, window, None, cancelled)
        except SearchCancelled:
            result.cancelled = True
            return
        result.hits = recall.rank(rel.candidates, limit)
        result.matched_sessions = rel.matched
        result.matched_exact = rel.exact
        result.fuzzy = rel.fuzzy
        result.warnings.extend(rel.warnings)
        result.mode = rel.mode
        if rel.searched is not None:
            result.partly_searched([rel.searched])
        if not rel.candidates:
            why = why_empty(query, lambda q: self._relevance(parse_query(q), 1, window).matched)
            if why is not None:
                result.warnings.append(why)
