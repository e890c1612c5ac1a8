"""``SqliteSessionStore``: the search API over the index (relevance and classic), with the scan as
fallback when the index cannot be used."""

from __future__ import annotations

import collections
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from .. import recall
from ..compat import StoreDir
from ..model import (
    JSONDict,
    SessionData,
    content_text,
    finite_float,
    stored_epoch,
)
from ..notes import SEARCH_FAILED, Note
from ..paths import default_session_dir
from ..query import (
    NOTHING_SEARCHABLE,
    ParsedQuery,
    QueryError,
    fts_expr,
    parse_query,
)
from ..query.match import rare_terms
from ..search import procedure
from ..search.rank import (
    CorpusStats,
    Msg,
    Scored,
    Scorer,
    SessionInfo,
    recency,
    recent_scored,
)
from ..search.results import Cancelled, ReconcileReport, Relevance, SearchCancelled, SearchResult
from ..search.rows import machine_paced
from ..search.searching import IndexSearch
from ..sources.base import Locate, SessionSource
from ..sources.praisonai import PraisonAISource
from ..sources.scan import SourceStore
from ..store import DefaultSessionStore
from .api import IndexStoreAPI, SessionReader
from .browse import IndexBrowse
from .engine import SqliteEngine
from .owners import RowOwners
from .recall import RecallReads
from .reconcile import (
    WATCH_MIN_FILES,
    Reconciler,
)
from .schema import (
    SCHEMA_VERSION,
    Broken,
    default_db_path,
)
from .semantic import Semantic
from .watch import DirWatch

log = logging.getLogger("session_browser.index")

RANKINGS = ("relevance", "classic")
RECONCILE_MODES = ("sync", "background", "none")
PENDING_SCAN_FILES = 100  # newest not-yet-indexed files a search reads while a build runs


# The non-ASCII characters whose ``str.lower()`` holds ASCII letters (Kelvin sign -> "k",
# capital I with dot above -> "i" + U+0307): SQLite's LIKE does not fold them, so the classic
# pre-filter admits the messages holding them separately.
_LOWERS_TO_ASCII: tuple[tuple[str, str], ...] = (("\u0130", "i"), ("\u212a", "k"))


T = TypeVar("T")


def _each_file(names: Iterable[str], read: Callable[[str], T | None]) -> list[T]:
    """What ``read`` makes of each file, in order, where it makes something; a file whose
    content fails to read or score is logged and left out (it never fails the search)."""
    out: list[T] = []
    for name in names:
        try:
            got = read(name)
        except Exception as exc:
            log.warning("%s: not scored: %s: %s", name, type(exc).__name__, exc)
            continue
        if got is not None:
            out.append(got)
    return out


def _demotion_flags(
    source: SessionSource, data: JSONDict, messages: Sequence[JSONDict]
) -> tuple[bool, bool]:
    """(tagged, machine) of a session read from its file rather than the index: the
    source's automation rule, or machine pacing when it has none."""
    tagged = recall.tagged_automated(data)
    automated = source.automated(data)
    if automated is None:
        return tagged, machine_paced(messages)
    return tagged, (not tagged) and automated


class SqliteSessionStore(IndexBrowse, IndexSearch, IndexStoreAPI):
    """The session-store API with its searches and lists read from an SQLite FTS5 index.

    A drop-in for PraisonAI's stores: over PraisonAI's JSON files (no ``reader``) it writes
    through a :class:`DefaultSessionStore` it holds (:attr:`writer`) and indexes each
    written session again after the write; over any other source (``reader`` given) it
    refuses writes (see :mod:`.api`).
    """

    semantic: Semantic  # its search by meaning (vectors beside the index)

    # PraisonAI's name for the version of what the index holds; ours is the schema version.
    INDEX_CONTENT_VERSION = SCHEMA_VERSION
    source_kind = DefaultSessionStore.source_kind  # the source's kind, once open

    def __init__(
        self,
        session_dir: str | os.PathLike[str] | None = None,
        db_path: str | os.PathLike[str] | None = None,
        *,
        reconcile: str = "sync",
        fts: bool = True,
        source: SessionSource | None = None,
        reader: SessionReader | None = None,
        read_through: Callable[[Locate], SessionReader] | None = None,
        vault: bool = False,
        **store_kwargs: Any,
    ) -> None:
        """``source``: what the files of ``session_dir`` are (default: PraisonAI's JSON files
        of ``session_dir``); every file-level read of the index goes to it. ``reader``: what
        reads the source's sessions, for a read-only source (default: the JSON store over
        ``session_dir``, built with ``store_kwargs``, which then makes every write).
        ``vault``: keep every file the index reads in the vault (in our data dir) and read
        deleted sessions back from it; off unless asked (the CLI and the app ask). A
        read-only ``source`` without a ``reader`` is read through a scanning store over it,
        or through what ``read_through`` makes of this index's :meth:`indexed_path`;
        ``session_dir`` defaults to the source's root."""
        if reconcile not in RECONCILE_MODES:
            raise ValueError(f"reconcile must be one of {RECONCILE_MODES}, not {reconcile!r}")
        self.reconciler = Reconciler(self, keep_vault=vault)
        if read_through is not None:  # a reader that finds files through the index
            reader = read_through(self.indexed_path)
        if reader is None and source is not None and source.read_only:
            reader = SourceStore(source)
        if reader is None:
            writer = DefaultSessionStore(
                session_dir, observer=self.reconciler.after_write, **store_kwargs
            )
            self.writer = writer
            self.reader = writer
            self.session_dir = writer.session_dir
        else:
            self.writer = None
            self.reader = reader
            where = session_dir or (source.root if source is not None else default_session_dir())
            self.session_dir = StoreDir(where)
        self.source = source if source is not None else PraisonAISource(self.session_dir.path)
        self.source_kind = self.source.kind
        self.last_reads = {"resumed": 0, "full": 0}
        if db_path is None:
            self.db_path: str = str(default_db_path(self.source.root, self.source.index_prefix))
        else:
            self.db_path = str(db_path)
        self.memory = self.db_path == ":memory:"
        self.want_fts = fts
        self.has_fts = False
        self.broken: str | None = None
        self.warnings: list[str] = []
        self._lock = threading.RLock()  # guards self._db
        self._write_lock = threading.Lock()  # one writer in this process
        self._state_lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._db_ino: int | None = None  # the inode of the database file self._db reads
        self._lock_fd: int | None = None  # our shared lock on <db>.lock while open
        self._pending: set[str] = set()  # file names not (yet) indexed as they are now
        self._pending_order: list[str] = []  # the names of this reconcile, oldest file first
        self._pending_new: dict[str, tuple[int, int, int]] = {}  # ... not in the index at all
        self.pending_scan_files = PENDING_SCAN_FILES
        self._stale_keys: set[int] = set()  # index rows to ignore (changed or deleted files)
        self._progress = (0, 0)
        self._indexing = False
        # Clear while the first reconcile of this store surveys the dir (lists the files,
        # reads what is indexed): until it has said which files it will index, a search waits
        # for it (else a first search would find neither the indexed part nor the waiting
        # files). Later reconciles are not waited for: until their list is out, what the
        # index holds is the answer as of the last pass.
        self._surveyed = threading.Event()
        self._surveyed.set()
        self._surveyed_once = False  # a reconcile has said which files it indexes
        self._thread: threading.Thread | None = None
        self._cancel = threading.Event()
        self._stats: tuple[int, float] | None = None
        self._df_cache: dict[str, int] = {}
        self._stats_key: tuple[int, int] | None = None
        self._owners = RowOwners()  # the sessions' row ranges, for exact counts
        self._recall = RecallReads()  # session recall's reads (lengths, frequent postings)
        # hybrid mode's vectors beside the index (read lazily)
        self.semantic = Semantic(None if self.memory else self.db_path)
        self._watch: DirWatch | None = None
        self._reconcile_lock = threading.RLock()
        self._hit_lock = threading.Lock()
        self._hit_cache: collections.OrderedDict[
            str, tuple[tuple[int, int, int], JSONDict, list[JSONDict]]
        ] = collections.OrderedDict()
        self._hit_bytes = 0
        self.watch_min_files = WATCH_MIN_FILES  # -1: never watch
        self.last_report: ReconcileReport | None = None
        self._open()
        try:
            self.start(reconcile)
        except BaseException:  # a store that fails to open leaves nothing open behind
            self.close()
            raise

    def start(self, reconcile: str) -> None:
        """Bring the index up to date per ``reconcile`` (what opening does)."""
        if self.broken is None:
            if reconcile == "sync":
                self.last_report = self.reconcile()
            elif reconcile == "background":
                self.start_reconcile()

    # ------------------------------------------------------------------ the reconcile
    # held, not inherited: :class:`~.reconcile.Reconciler` (``self.reconciler``)

    def reconcile(
        self,
        *,
        progress: Callable[[int, int], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> ReconcileReport:
        """Bring the index in line with the session dir (only new/changed files are parsed)."""
        return self.reconciler.run(progress=progress, cancel=cancel)

    def start_reconcile(self, *, cancel: threading.Event | None = None) -> threading.Thread:
        """:meth:`reconcile` in a daemon thread (searches keep answering meanwhile); setting
        ``cancel`` (as :meth:`close` does) stops it after the batch in hand."""
        return self.reconciler.start(cancel=cancel)

    def rebuild(
        self,
        *,
        progress: Callable[[int, int], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> ReconcileReport:
        """Throw the index away and build it again from the files."""
        return self.reconciler.rebuild(progress=progress, cancel=cancel)

    def close(self) -> None:
        super().close()
        self.reconciler.close()
        self.semantic.close()

    def get_by_gateway_session(self, gateway_session_id: str) -> SessionData | None:
        """The session linked to a gateway session, found through the index's gateway route
        (``sessions.gateway``) and read from its file, checked; a session the index does not
        route yet (a file written behind its back) is looked for by the scan."""
        if self.writer is not None and self.broken is None:
            try:
                names = self._rows(
                    "SELECT file FROM sessions WHERE gateway = ? ORDER BY sid",
                    (gateway_session_id,),
                )
            except (Broken, sqlite3.Error):
                names = []
            for (name,) in names:
                data = self.source.load(name)
                if data is not None and data.get("gateway_session_id") == gateway_session_id:
                    return SessionData.from_dict(data)
        return super().get_by_gateway_session(gateway_session_id)

    def indexed_path(self, session_id: str) -> Path | None:
        """The file of ``session_id`` as the index knows it (None: it does not, or the index
        cannot be used, or the file is gone)."""
        try:
            rows = self._rows(
                "SELECT file FROM sessions WHERE session_id=? ORDER BY file", (session_id,)
            )
        except (Broken, sqlite3.Error):
            return None
        for (name,) in rows:
            path = self.source.root / str(name)
            if path.is_file():
                return path
        return None

    def _ensure_backfilled(self) -> None:
        """praisonaiagents' seam: index every session file not indexed yet (a reconcile)."""
        self.reconcile()

    def __enter__(self) -> SqliteSessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ search

    def search_candidates(
        self,
        query: str,
        *,
        window: int = 5,
        ranking: str = "classic",
        limit: int | None = None,
        corpus: CorpusStats | None = None,
        language: bool = False,
    ) -> list[recall.Candidate]:
        """Scored candidates for :func:`recall.rank` (what a :class:`StoreGroup` merges).

        ``classic`` (the default, as for every store) returns every matching session; with
        ``relevance`` the best ``limit`` sessions (after folding) come with full hits and
        the continuations they fold with lighter ones; ``corpus`` (shared statistics, see
        :class:`CorpusStats`) makes the scores comparable with other stores'.
        """
        if ranking == "classic":
            return self._classic_candidates(query, window=window, language=language)
        try:
            pq = parse_query(query)
        except QueryError:
            return []
        return self._relevance(pq, limit or 5, window, corpus).candidates

    def corpus_stats(self, pq: ParsedQuery) -> CorpusStats:
        """This index's statistics for ``pq``'s terms (empty when the index is unusable)."""
        try:
            with self._lock:
                db = self._conn()
                self._stats_for(db)
                total, avg = self._corpus_stats(db)
                dfs = {t.fts(): self._df(db, t) for t in pq.terms} if self.has_fts else {}
        except (Broken, sqlite3.Error):
            return CorpusStats()
        return CorpusStats(total=total, avg_chars=avg, dfs=dfs)

    def _search_result(self, query: str, ranking: str) -> SearchResult:
        result = SearchResult(query=query or "", ranking=ranking, progress=self.progress)
        if ranking not in RANKINGS:
            result.error = f"ranking must be one of {', '.join(RANKINGS)}, not {ranking!r}"
            return result
        result.warnings.extend(self.warnings)
        return result

    # ------------------------------------------------------------------ classic

    def _search_classic(self, result: SearchResult, query: str, limit: int, window: int) -> None:
        if limit > 0 and (query or "").strip():
            cands = self._classic_candidates(query, window=window)
            result.matched_sessions = len(cands)
            result.hits = recall.rank(cands, limit)
        result.mode = "scan" if self.broken else ("like" if not self.has_fts else "index")

    def _classic_candidates(
        self, query: str, *, window: int, language: bool = False
    ) -> list[recall.Candidate]:
        """The core's classic heuristic, exactly: the index only narrows which files to read
        (every file for a query of filters only)."""
        parsed = recall.ClassicQuery.parse(query, language=language)
        if not parsed.searchable:
            return []
        pq = parsed.filters
        if (
            self.broken is not None
            or self.has_fts is False
            or (pq is None and not parsed.needle.isascii())
            or (pq is not None and not pq.terms)
        ):
            return self.reader.search_candidates(query, window=window, language=language)
        with self._state_lock:
            pending = set(self._pending)
        try:
            if pq is not None:  # the files with a message holding a word, as the index reads it
                clauses, params = "fts MATCH ?", [fts_expr(pq.terms)]
                source = "fts JOIN messages m ON m.id = fts.rowid"
            else:
                clauses = " OR ".join("m.text LIKE ? ESCAPE '\\'" for _ in parsed.terms)
                params = [
                    "%" + t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
                    for t in parsed.terms
                ]
                # LIKE folds ASCII case only; admit too the messages holding a non-ASCII
                # character that ``str.lower`` turns into one of the terms' ASCII letters.
                letters = set("".join(parsed.terms))
                for char, lowered in _LOWERS_TO_ASCII:
                    if letters & set(lowered):
                        clauses += " OR instr(m.text, ?) > 0"
                        params.append(char)
                source = "messages m"
            rows = self._rows(
                f"SELECT DISTINCT s.file FROM {source} JOIN sessions s ON s.sid = m.sid "
                f"WHERE {clauses}",
                params,
            )
        except (Broken, sqlite3.Error):
            return self.reader.search_candidates(query, window=window, language=language)
        names = {r[0] for r in rows} | pending
        # The directory's own order, as the core scans it, so equal scores tie the same way.

        def candidate(name: str) -> recall.Candidate | None:
            data = self.source.load(name)
            if data is None:
                return None
            cand = recall.classic_candidate(
                data,
                parsed,
                window=window,
                source=self.source_kind,
                store=self.label,
                file_name=name,
            )
            if cand is not None:
                self.source.settle_hit(cand.hit, data)
            return cand

        cands = _each_file(self.source.file_order(names), candidate)
        if pq is None:
            return cands
        # Common words told from rarer ones by the index's frequencies, as relevance does.
        stats = self.corpus_stats(pq)
        dfs = [stats.dfs.get(t.fts(), 0) for t in pq.terms]
        return recall.keep_matching(cands, parsed, rare_terms(pq.terms, dfs, stats.total))

    # ------------------------------------------------------------------ relevance

    def _relevance(
        self,
        pq: ParsedQuery,
        limit: int,
        window: int,
        corpus: CorpusStats | None = None,
        cancelled: Cancelled | None = None,
    ) -> Relevance:
        if self.broken is not None:  # the files scanned, with the same filters
            return self._scan_relevance(pq, window)
        engine = SqliteEngine(self, cancelled)
        try:
            return procedure.relevance(engine, pq, limit, window, corpus, cancelled)
        except sqlite3.OperationalError as exc:
            if engine.stopped:  # interrupted by us, not a failing index
                raise SearchCancelled from exc
            return self._failed(exc, pq, limit, window, corpus, cancelled)
        except sqlite3.DatabaseError as exc:
            return self._failed(exc, pq, limit, window, corpus, cancelled)
        except Broken:
            return self._relevance(pq, limit, window, corpus, cancelled)

    def _scan_relevance(self, pq: ParsedQuery, window: int) -> Relevance:
        """The relevance candidates of an index that cannot be used: its files scanned."""
        if pq.nothing_searchable:  # never the newest sessions as if they matched
            return Relevance(warnings=[NOTHING_SEARCHABLE], mode="scan")
        if not pq.words and not pq.has_filters:
            return Relevance(mode="scan")
        try:
            cands = self.reader.search_candidates(pq.text, window=window, language=True)
        except QueryError as exc:
            return Relevance(warnings=[str(exc)], mode="scan")
        return Relevance(cands, len(cands), mode="scan")

    def _failed(
        self,
        exc: sqlite3.DatabaseError,
        pq: ParsedQuery,
        limit: int,
        window: int,
        corpus: CorpusStats | None,
        cancelled: Cancelled | None,
    ) -> Relevance:
        """A search the database failed: again on the files when the index is unusable."""
        self._on_db_error(exc)
        if self.broken is not None or self._db is None:
            return self._relevance(pq, limit, window, corpus, cancelled)
        failed = Note(SEARCH_FAILED, f"the index failed during this search: {exc}")
        return Relevance(warnings=[failed])

    def _listed_count(self, db: sqlite3.Connection) -> int:
        """How many sessions the index lists (as :meth:`count` without a filter)."""
        source, cond = self._listed(db)
        where = f" WHERE {cond}" if cond else ""
        return int(db.execute(f"SELECT count(*) FROM {source}{where}").fetchone()[0])

    def _score_files(
        self,
        db: sqlite3.Connection,
        pq: ParsedQuery,
        names: Sequence[str],
        corpus: CorpusStats | None = None,
    ) -> list[Scored]:
        """Score files the index does not hold yet (read and scored on the fly)."""
        total, avg = self._corpus_stats(db)
        dfs = [max(1, self._df(db, t)) if self.has_fts else 1 for t in pq.terms]
        scorer = (
            Scorer(pq, dfs, max(total, 1), avg)
            if corpus is None or corpus.total <= 0
            else self._scorer(db, pq, dfs, corpus)
        )
        now = time.time()
        order = {name: n for n, name in enumerate(names)}
        return _each_file(names, lambda name: self._score_file(order[name], name, pq, scorer, now))

    def _score_file(
        self, n: int, name: str, pq: ParsedQuery, scorer: Scorer, now: float
    ) -> Scored | None:
        """One not-yet-indexed file read and scored (see :meth:`_score_files`)."""
        data = self.source.load(name)
        if data is None:
            return None
        if not self._session_filters_ok(pq, data, name):
            return None
        messages = recall.project(data)
        if recall.holds_any(pq.excluded, messages):  # any message, as in the index
            return None
        when = recall.when_of(data)
        when_ts = stored_epoch(when)
        msgs: list[Msg] = []
        for idx, m in enumerate(messages):
            text = content_text(m.get("content"))
            if not text:
                continue
            role = str(m.get("role", ""))
            archived = bool(m.get("archived"))
            tsf = finite_float(m.get("timestamp"))
            eff = tsf if tsf is not None else when_ts
            if not recall.keeps_message(pq, role, archived, eff):
                continue
            msgs.append(Msg(-1 - n, idx, role, archived, tsf if pq.terms else eff, text))
        tagged, machine = _demotion_flags(self.source, data, messages)
        info = SessionInfo(
            -1 - n,
            str(data.get("session_id")),
            name,
            when,
            tagged,
            machine,
            recall.lineage_key(data),
        )
        if not pq.terms:
            if not msgs or any(scorer.message(m.text)[0] < 0 for m in msgs):
                return None
            last = max(msgs, key=lambda m: (m.ts is not None, m.ts or 0.0, m.idx))
            return recent_scored(info, recency(last.ts, now), last.idx, last.text, len(msgs))
        return scorer.session(info, msgs)

    def _session_filters_ok(self, pq: ParsedQuery, data: JSONDict, name: str) -> bool:
        return recall.keeps_session(pq, data, file_name=name, source_kind=self.source_kind)


# As in praisonaiagents, where SqliteSessionStore subclasses DefaultSessionStore: a virtual
# subclass (the index holds a DefaultSessionStore as its writer instead of being one).
DefaultSessionStore.register(SqliteSessionStore)
