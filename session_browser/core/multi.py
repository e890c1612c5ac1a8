"""Several stores read as one (project store + global store, ``--store`` repeated, Pi).

Session ids are de-duplicated: the first store that holds an id wins, in the order given.
Indexed stores (:class:`~session_browser.core.index.SqliteSessionStore` over any source, the
team index) are used through their richer API when present (``ranking``,
:meth:`StoreGroup.search_ex`, ``browse``/``count``, indexing progress); plain stores answer
with the classic heuristic and a scan.

Ranking across stores: under ``relevance`` every indexed store scores with the SAME collection
statistics (messages, mean length and each term's document frequency summed over the stores,
:class:`~session_browser.core.index.CorpusStats`), so a hit in a small Pi store and a hit in a
large PraisonAI store are on one scale and are ranked together. When some stores match a
query exactly and others only through the typo-tolerant pass, the fuzzy hits are dropped.
Under ``classic`` the scores are the core's heuristic in every store. The store-level filters
``source:`` and ``project:`` work under both rankings (under ``classic`` the group applies
them to the hits and leaves the other words to the heuristic).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import recall
from .model import JSONDict, SessionData, SessionHit, SessionSummary
from .notes import FUZZY, code_of
from .protocols import RecallStore as RecallStore
from .resume_line import COMMANDS, Resume, session_resume

if TYPE_CHECKING:
    from .index import Cancelled, CorpusStats, SearchResult, SqliteSessionStore
    from .pgindex.store import PgIndexStore
    from .query import ParsedQuery


def index_of(store: RecallStore) -> SqliteSessionStore | PgIndexStore | None:
    """``store`` as a store with a search index, else None: every local index is a
    :class:`SqliteSessionStore` (the PraisonAI one, Pi's and any read-only source's), the
    team index a :class:`~session_browser.core.pgindex.PgIndexStore` (the same API)."""
    from .index import SqliteSessionStore
    from .pgindex.store import PgIndexStore

    return store if isinstance(store, SqliteSessionStore | PgIndexStore) else None


def files_fingerprint(store: RecallStore) -> int:
    """One number for the (name, size, mtime_ns, inode) of every session file of a store
    without a local index: it changes when a file is added, changed or removed. One
    ``stat`` a file, no reading. 0 for a store whose files are not looked at (a local
    index, which says itself what changed; the team index; another agent's files scanned)."""
    from .index import SqliteSessionStore
    from .sources import PiStore
    from .store import DefaultSessionStore

    if isinstance(store, PiStore):
        return hash(
            frozenset(
                (str(p), st.st_size, st.st_mtime_ns, st.st_ino) for p, st in store.session_files()
            )
        )
    if (
        isinstance(store, SqliteSessionStore)  # a virtual DefaultSessionStore
        or not isinstance(store, DefaultSessionStore)
        or not str(store.session_dir)
    ):
        return 0
    found: set[tuple[str, int, int, int]] = set()
    try:
        with os.scandir(store.session_dir) as entries:
            for entry in entries:
                if entry.name.startswith(".") or not entry.name.endswith(".json"):
                    continue
                with contextlib.suppress(OSError):
                    st = entry.stat()
                    found.add((entry.name, st.st_size, st.st_mtime_ns, st.st_ino))
    except OSError:
        return 0
    return hash(frozenset(found))


def resume_of(
    store: RecallStore, session_id: str, metadata: JSONDict | None = None
) -> Resume | None:
    """The line that resumes ``session_id`` of ``store``, or why none is offered (see
    :mod:`~session_browser.core.resume_line`); None when its kind of source has no resume
    command. It is made from the kind of source that wrote the session (the team index keeps
    the kind of each pushed session), its id and the dir its ``metadata`` names (read from the
    store when not given); nothing else stored with the session."""
    from .pgindex.store import PgIndexStore

    kind = store.session_kind(session_id) if isinstance(store, PgIndexStore) else store.source_kind
    if kind not in COMMANDS:
        return None
    if metadata is None:
        metadata = store.get_session(session_id).metadata
    return session_resume(kind, session_id, metadata)


class StoreGroup:
    """A read-only union of stores with the recall API of one store."""

    def __init__(self, stores: Sequence[RecallStore]) -> None:
        self.stores = list(stores)

    @property
    def label(self) -> str:
        return ", ".join(s.label for s in self.stores)

    def search_candidates(self, query: str, *, window: int = 5) -> list[recall.Candidate]:
        """Classic candidates of every store (first store wins an id), the query read as the
        query language (its filters honoured; raises ``QueryError`` for a bad value)."""
        out, _extras = self._candidates(query, window=window, ranking="classic", limit=0)
        return out

    @property
    def indexed(self) -> bool:
        """True when every store has a search index."""
        return bool(self.stores) and all(index_of(s) is not None for s in self.stores)

    def default_ranking(self) -> str:
        """``relevance`` when every store is indexed, else ``classic``."""
        return "relevance" if self.indexed else "classic"

    def shared_corpus(self, pq: ParsedQuery) -> CorpusStats | None:
        """The collection statistics of every indexed store, summed (None for one store)."""
        from .index import CorpusStats

        parts = [i.corpus_stats(pq) for i in map(index_of, self.stores) if i is not None]
        if len(parts) < 2:
            return None
        return CorpusStats.merge(parts)

    def _candidates(
        self,
        query: str,
        *,
        window: int,
        ranking: str,
        limit: int,
        result: SearchResult | None = None,
        cancelled: Cancelled | None = None,
    ) -> tuple[list[recall.Candidate], list[Any]]:
        """Candidates of every store (first store wins an id) and the stores searched
        through their index; ``result`` collects matched counts, fuzzy and warnings."""
        from .index import SearchCancelled

        per_store: list[list[recall.Candidate]] = []
        extras: list[Any] = []
        fuzzy: list[bool] = []
        modes: list[str] = []  # how each store answered (relevance: "+scan" only if it scanned)
        searched: dict[int, tuple[int, int]] = {}  # per store a build runs in: what was searched
        if ranking == "relevance":
            from .query import QueryError, parse_query

            try:
                pq: ParsedQuery | None = parse_query(query)
            except QueryError:
                pq = None
            corpus = self.shared_corpus(pq) if pq is not None else None
            self._one_mode()
            for store in self.stores:
                if cancelled is not None and cancelled():
                    raise SearchCancelled
                index = index_of(store)
                if pq is not None and index is not None:
                    rel = index.relevance_candidates(
                        pq, limit=limit, window=window, corpus=corpus, cancelled=cancelled
                    )
                    cands, was_fuzzy = rel.candidates, rel.fuzzy
                    extras.append(store)
                    modes.append(rel.mode)
                    if rel.searched is not None:
                        searched[id(store)] = rel.searched
                    if result is not None:
                        result.matched_sessions += int(rel.matched)
                        result.matched_exact = result.matched_exact and rel.exact
                        for w in rel.warnings:
                            if w not in result.warnings:
                                result.warnings.append(w)
                else:
                    cands = store.search_candidates(query, window=window, language=True)
                    was_fuzzy = False
                    modes.append("scan")
                    if result is not None:
                        result.matched_sessions += len(cands)
                per_store.append(list(cands))
                fuzzy.append(bool(was_fuzzy) and bool(cands))
            if any(fuzzy) and not all(f or not c for f, c in zip(fuzzy, per_store, strict=True)):
                # Some store matched exactly: typo-corrected hits elsewhere do not compete.
                per_store = [[] if f else c for f, c in zip(fuzzy, per_store, strict=True)]
                if result is not None:
                    result.warnings = [w for w in result.warnings if code_of(w) != FUZZY]
            elif any(fuzzy) and result is not None:
                result.fuzzy = True
        else:
            for store in self.stores:
                per_store.append(store.search_candidates(query, window=window, language=True))
        # An id an earlier store holds is that store's, and one store's first candidate of
        # an id is the one kept, but for its versions (the turns rewrites dropped, which
        # share its fold key): they go on, to fold into its hit. (One id from two origins
        # of one store, the team index's machines, is two sessions: both go on.)
        seen: set[str] = set()
        out: list[recall.Candidate] = []
        for cands in per_store:
            first: dict[tuple[str, str], str | None] = {}
            for cand in cands:
                sid = cand.hit.session_id
                if sid in seen:
                    continue
                key = (sid, cand.hit.store)
                if key not in first:
                    first[key] = cand.lineage
                elif first[key] is None or cand.lineage != first[key]:
                    continue
                out.append(cand)
            seen |= {sid for sid, _store in first}
        if ranking != "relevance" and result is not None:
            result.matched_sessions = len(out)
        if result is not None and any(n < m for n, m in searched.values()):
            result.partly_searched(self._searched_parts(searched))
        if result is not None:
            result.mode = _combined(modes) if modes else self._mode()
        return out, extras

    def _one_mode(self) -> None:
        """Unless a mode is asked for, every store answers in the same one: hybrid where all
        have vectors ready, else lexical (a fused score and a lexical one do not compare)."""
        parts = [ix.semantic if (ix := index_of(s)) is not None else None for s in self.stores]
        ready = [p is not None and p.ready() for p in parts]
        mixed = any(ready) and not all(ready)
        for p in parts:
            if p is not None:
                p.group_lexical = mixed

    def _searched_parts(self, partly: dict[int, tuple[int, int]]) -> list[tuple[int, int]]:
        """(searched, sessions) of every indexed store: ``partly`` (by store id) for those a
        build runs in, every listed session for the others (a store without an index is
        scanned whole and not counted)."""
        parts: list[tuple[int, int]] = []
        for store in self.stores:
            index = index_of(store)
            if id(store) in partly:
                parts.append(partly[id(store)])
            elif index is not None:
                n = index.count()
                parts.append((n, n))
        return parts

    def search(
        self, query: str, *, limit: int = 5, window: int = 5, ranking: str | None = None
    ) -> list[SessionHit]:
        """Ranked hits across every store (``ranking``: relevance or classic; by default
        relevance when every store is indexed). Raises ``QueryError`` for a bad filter."""
        result = self.search_ex(query, limit=limit, window=window, ranking=ranking)
        if result.error is not None:
            from .query import QueryError

            raise QueryError(result.error)
        return result.hits

    def search_ex(
        self,
        query: str,
        *,
        limit: int = 5,
        window: int = 5,
        ranking: str | None = None,
        cancelled: Cancelled | None = None,
    ) -> SearchResult:
        """A :class:`~session_browser.core.index.SearchResult` over every store; with
        ``cancelled``, an interrupted search comes back ``cancelled`` (no hits)."""
        from .index import RANKINGS, SearchCancelled, SearchResult
        from .query import QueryError, parse_query
        from .search.hybrid import requested_mode

        started = time.perf_counter()
        ranking = ranking or self.default_ranking()
        result = SearchResult(query=query or "", ranking=ranking, progress=self.progress)
        if ranking not in RANKINGS:
            result.error = f"ranking must be one of {', '.join(RANKINGS)}, not {ranking!r}"
            return result
        if limit <= 0 or not (query or "").strip():
            result.mode = self._mode()
            return result
        try:  # a bad filter value or search mode is an error whatever the ranking
            requested_mode()
            parse_query(query)
        except (QueryError, ValueError) as exc:
            result.error = str(exc)
            return result
        try:
            cands, _extras = self._candidates(
                query,
                window=window,
                ranking=ranking,
                limit=limit,
                result=result,
                cancelled=cancelled,
            )
        except SearchCancelled:
            result.cancelled, result.hits, result.warnings = True, [], []
            result.elapsed_ms = (time.perf_counter() - started) * 1000
            return result
        result.hits = recall.rank(cands, limit)
        if not cands and ranking == "relevance":
            from .query import why_empty

            def matched(text: str) -> int:
                counted = SearchResult()
                self._candidates(text, window=window, ranking=ranking, limit=1, result=counted)
                return counted.matched_sessions

            why = why_empty(query, matched)
            if why is not None:
                result.warnings.append(why)
        for index in map(index_of, self.stores):
            for warning in [] if index is None else index.warnings:
                if warning not in result.warnings:
                    result.warnings.append(warning)
        result.elapsed_ms = (time.perf_counter() - started) * 1000
        return result

    def _mode(self) -> str:
        modes: list[str] = []
        for index in map(index_of, self.stores):
            if index is None or index.broken:
                modes.append("scan")
            else:
                mode = "index" if index.has_fts else "like"
                if index.indexing:
                    mode += "+scan"
                modes.append(mode)
        return _combined(modes)

    # ------------------------------------------------------------------ indexing

    @property
    def progress(self) -> tuple[int, int]:
        """(done, total) files over every store being indexed."""
        done = total = 0
        for index in map(index_of, self.stores):
            if index is not None:
                one_done, one_total = index.progress
                done += one_done
                total += one_total
        return done, total

    @property
    def indexing(self) -> bool:
        return any(i is not None and i.indexing for i in map(index_of, self.stores))

    def start_reconcile(self, *, cancel: threading.Event | None = None) -> list[Any]:
        """Start a background reconcile on every indexed store; returns the threads.
        Setting ``cancel`` stops them (what is indexed so far stays indexed)."""
        indexes = [i for i in map(index_of, self.stores) if i is not None]
        return [i.start_reconcile(cancel=cancel) for i in indexes]

    def local_indexes(self) -> list[SqliteSessionStore]:
        """The local indexes of the group: they reconcile with their files and say what
        changed (:meth:`~session_browser.core.index.SqliteSessionStore.changed_since`)."""
        from .index import SqliteSessionStore

        return [s for s in self.stores if isinstance(s, SqliteSessionStore)]

    def plain_stores(self) -> list[RecallStore]:
        """The stores without a local index: their files are compared at each look
        (:func:`files_fingerprint`)."""
        local = set(map(id, self.local_indexes()))
        return [s for s in self.stores if id(s) not in local]

    def close(self) -> None:
        for store in self.stores:
            store.close()

    def __enter__(self) -> StoreGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def store_of(self, session_id: str) -> RecallStore | None:
        for store in self.stores:
            if store.session_exists(session_id):
                return store
        return None

    def session_exists(self, session_id: str) -> bool:
        return self.store_of(session_id) is not None

    def session_file(self, session_id: str, store_label: str = "") -> Path | None:
        """The file that holds ``session_id`` (in the store labelled ``store_label`` when
        given, else the first that has it); None when no file does."""
        store = next((s for s in self.stores if s.label == store_label), None)
        if store is None or not store.session_exists(session_id):
            store = self.store_of(session_id)
        if store is None:
            return None
        path = store.session_path(session_id)
        return path if path is not None and path.is_file() else None

    def window(
        self, session_id: str, around_message_id: Any = None, *, window: int = 5
    ) -> list[JSONDict]:
        store = self.store_of(session_id)
        return [] if store is None else store.window(session_id, around_message_id, window=window)

    def get_session(self, session_id: str) -> SessionData:
        store = self.store_of(session_id)
        return (
            SessionData(session_id=session_id) if store is None else store.get_session(session_id)
        )

    def summaries(self) -> list[SessionSummary]:
        seen: set[str] = set()
        out: list[SessionSummary] = []
        for store in self.stores:
            for summary in store.summaries():
                if summary.session_id in seen:
                    continue
                seen.add(summary.session_id)
                out.append(summary)
        return out

    def recent(self, *, limit: int = 10, project: str | None = None) -> list[SessionSummary]:
        """The most recently updated sessions of every store; ``project`` keeps those whose
        working dir (a Pi session's cwd) is that dir or inside it."""
        if limit <= 0:
            return []
        if project is not None:
            from .query import normalize_project, project_matches

            want = normalize_project(project)
            return recall.sort_recent(
                (s for s in self.summaries() if project_matches(s.project, want)), limit
            )
        if len(self.stores) == 1:
            return list(self.stores[0].recent(limit=limit))
        if self.indexed:
            rows: list[SessionSummary] = []
            for store in self.stores:
                rows.extend(store.recent(limit=limit))
            return recall.sort_recent(_unique(rows), limit)
        return recall.sort_recent(self.summaries(), limit)

    def browse(
        self, *, offset: int = 0, limit: int = 100, sort: str = "updated", text: str = ""
    ) -> list[SessionSummary]:
        """A page of the merged session list (see ``SqliteSessionStore.browse``)."""
        only = index_of(self.stores[0]) if len(self.stores) == 1 else None
        if only is not None:
            return list(only.browse(offset=offset, limit=limit, sort=sort, text=text))
        if sort not in recall.SORTS:
            raise ValueError(f"sort must be one of {recall.SORTS}, not {sort!r}")
        if limit <= 0:
            return []
        offset = max(0, offset)
        rows: list[SessionSummary] = []
        for store in self.stores:
            index = index_of(store)
            if index is not None:
                rows.extend(index.browse(offset=0, limit=offset + limit, sort=sort, text=text))
            else:
                rows.extend(s for s in store.summaries() if recall.title_or_id_matches(s, text))
        return recall.sort_summaries(_unique(rows), sort)[offset : offset + limit]

    def count(self, *, text: str = "") -> int:
        """How many sessions :meth:`browse` pages through (ids held by two stores count once
        when the stores are plain; indexed stores are summed)."""
        indexes = [i for i in map(index_of, self.stores) if i is not None]
        if len(indexes) == len(self.stores):
            return sum(i.count(text=text) for i in indexes)
        return sum(1 for s in self.summaries() if recall.title_or_id_matches(s, text))


def _unique(rows: Sequence[SessionSummary]) -> list[SessionSummary]:
    seen: set[str] = set()
    out: list[SessionSummary] = []
    for row in rows:
        if row.session_id not in seen:
            seen.add(row.session_id)
            out.append(row)
    return out


def _combined(modes: Sequence[str]) -> str:
    """One mode for several stores' (``scan`` when there is none)."""
    if not modes:
        return "scan"
    return modes[0] if len(set(modes)) == 1 else "+".join(sorted(set(modes)))
