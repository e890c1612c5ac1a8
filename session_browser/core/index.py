"""``SqliteSessionStore``: the JSON store with an SQLite FTS5 index for its reads.

The JSON files stay the only truth; the index is derived data in our cache dir
(``paths.cache_dir()/index/<dir_key>.sqlite3``), never in the session dir, and deleting it loses
nothing. Opening, reconciling and searching write nothing in the session dir.

Layout
    ``sessions``: one row per session file: file identity (size, mtime_ns, inode), title,
    when, created, counts, source tag, agent, the automated flags (tagged / documented rate
    rule / machine-paced) and lineage key, plus the contiguous rowid range of its messages.
    ``messages``: one row per message of the archived+active projection that has text
    (session, projection index, role, archived flag, timestamp, text).
    ``fts``: an external-content FTS5 table over ``messages.text``
    (``unicode61 remove_diacritics 2``), ``fts_vocab`` its term statistics.
    ``skipped``: files that could not be indexed and why (kept until the file changes).
    Without FTS5 (or with ``fts=False``) the same tables are kept without ``fts`` and the
    search runs ``LIKE`` over a folded copy of the text.

Freshness
    :meth:`SqliteSessionStore.reconcile` compares every ``*.json`` file's identity with the
    index, parses only new or changed files and drops deleted ones. Every session is replaced
    inside one ``BEGIN IMMEDIATE`` transaction, so two processes reconciling at once never
    index a file twice. Writes made through this store update the index in the same call.

Relevance ranking (``ranking="relevance"``)
    Candidates come from the rarest query terms (document frequency from ``fts_vocab``), so
    a very common word never costs its whole posting list; when every term is common the
    newest messages holding all of them are taken. Each candidate message gets a BM25 score
    (k1=1.2, b=0.4, length in characters), x1.5 when the query's words occur as a phrase,
    x1.25 when one message holds every term. A session scores its best message plus a little
    of its others, times how much of the query (idf-weighted) the session covers. Scores are
    rounded to 4 digits so near-ties fall to the newest session. Sessions that really are
    automated (tagged, or machine-paced: many messages at near-constant sub-10 s gaps) are
    multiplied by 0.25; continuations sharing a lineage key fold into their best hit.
    Passing shared :class:`CorpusStats` (as a group of stores does) scores with collection
    statistics summed over several indexes, so their scores can be ranked together.

Other formats
    The file-level reads are hooks (``_scan_files``, ``_before_parse``, ``_parse_file``,
    ``_load_file``, ``_classic_order``, ``_classic_candidate``, ``_demotion_flags``), so a
    store over another agent's files reuses all of the above:
    :class:`~session_browser.core.pi_index.PiIndexStore` indexes Pi JSONL sessions.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import math
import os
import queue
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from . import paths, recall
from .files import FileIdentity, iter_session_files, loads
from .model import JSONDict, SessionHit, SessionSummary, content_text
from .query import (
    ParsedQuery,
    QueryError,
    Term,
    fold,
    fts_expr,
    like_pattern,
    parse_query,
    project_matches,
    tokenize,
)
from .store import DefaultSessionStore

log = logging.getLogger("session_browser.index")

SCHEMA_VERSION = 4  # PRAGMA user_version; any other value rebuilds the index
RANKINGS = ("relevance", "classic")
RECONCILE_MODES = ("sync", "background", "none")
SORTS = ("updated", "created", "size")

BM25_K1 = 1.2
BM25_B = 0.4
PHRASE_BOOST = 1.5
ALL_TERMS_BOOST = 1.25
RARE_DF = 1000  # terms at most this frequent generate candidates
CANDIDATE_LIMIT = 1000  # candidate messages taken from the index
COMMON_LIMIT = 300  # newest messages taken when every term is common
COVERAGE_CHECK = 25  # top sessions whose missing terms are looked up in their other messages
SCORE_TEXT_CHARS = 50_000  # characters of one message the scorer reads
MACHINE_MIN_MESSAGES = 8
MACHINE_MAX_GAP = 10.0
BATCH_FILES = 500

__all__ = [
    "RANKINGS",
    "CorpusStats",
    "QueryError",
    "ReconcileReport",
    "SearchResult",
    "SqliteSessionStore",
    "default_db_path",
    "machine_paced",
]


# --------------------------------------------------------------------------- results


@dataclass
class ReconcileReport:
    """What one reconcile did."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    messages: int = 0
    elapsed: float = 0.0
    cancelled: bool = False

    def as_dict(self) -> JSONDict:
        return {
            "added": self.added,
            "updated": self.updated,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "skipped": [{"file": f, "reason": r} for f, r in self.skipped],
            "messages": self.messages,
            "elapsed": round(self.elapsed, 4),
            "cancelled": self.cancelled,
        }


@dataclass
class SearchResult:
    """A search with everything the UI shows around the hits."""

    hits: list[SessionHit] = field(default_factory=list)
    matched_sessions: int = 0
    elapsed_ms: float = 0.0
    mode: str = "index"  # "index" | "index+scan" | "like" | "scan"
    fuzzy: bool = False
    progress: tuple[int, int] = (0, 0)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    query: str = ""
    ranking: str = "relevance"

    def as_dict(self) -> JSONDict:
        return {
            "query": self.query,
            "ranking": self.ranking,
            "mode": self.mode,
            "fuzzy": self.fuzzy,
            "matched_sessions": self.matched_sessions,
            "elapsed_ms": round(self.elapsed_ms, 3),
            "progress": list(self.progress),
            "warnings": list(self.warnings),
            "error": self.error,
            "results": [h.to_json() for h in self.hits],
        }


@dataclass
class CorpusStats:
    """Collection statistics shared by several indexes, so their scores are comparable.

    ``total``: messages with text; ``avg_chars``: their mean length; ``dfs``: messages
    holding each query term (keyed by :meth:`Term.fts`). A :class:`~.multi.StoreGroup`
    sums them over its stores and passes them to each store's relevance scoring, so a
    word scores the same in a small store as in a large one.
    """

    total: int = 0
    avg_chars: float = 1.0
    dfs: dict[str, int] = field(default_factory=dict)

    @classmethod
    def merge(cls, parts: Sequence[CorpusStats]) -> CorpusStats:
        total = sum(p.total for p in parts)
        chars = sum(p.total * p.avg_chars for p in parts)
        dfs: dict[str, int] = {}
        for p in parts:
            for key, df in p.dfs.items():
                dfs[key] = dfs.get(key, 0) + df
        return cls(total=total, avg_chars=(chars / total) if total else 1.0, dfs=dfs)


# --------------------------------------------------------------------------- helpers


def default_db_path(session_dir: Path) -> Path:
    """Where the index of ``session_dir`` lives (our cache dir, one db per resolved dir)."""
    return paths.cache_dir() / "index" / f"{paths.dir_key(session_dir)}.sqlite3"


def _epoch(value: Any) -> float | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    if dt.tzinfo is None:
        return dt.timestamp()
    return dt.timestamp()


def _timestamps(messages: Sequence[JSONDict]) -> list[float]:
    out: list[float] = []
    for m in messages:
        ts = m.get("timestamp")
        if isinstance(ts, (int, float)) and not isinstance(ts, bool) and math.isfinite(ts):
            out.append(float(ts))
    return out


def machine_paced(messages: Sequence[JSONDict]) -> bool:
    """True for sessions written by a machine: many messages, all arriving within seconds.

    Needs at least 8 timestamps spanning a second or more, and 90% of the gaps between
    consecutive messages under 10 s. A person's chat, however quick the replies, has the
    person's own turns in it (tens of seconds apart), so it is not caught; the documented
    rate rule (more than 60 messages an hour) is, which is why relevance does not use it.
    """
    stamps = sorted(_timestamps(messages))
    if len(stamps) < MACHINE_MIN_MESSAGES or stamps[-1] - stamps[0] < 1.0:
        return False
    gaps = sorted(b - a for a, b in itertools.pairwise(stamps))
    p90 = gaps[int(0.9 * (len(gaps) - 1))]
    return p90 < MACHINE_MAX_GAP


def scan_dir(session_dir: Path) -> dict[str, tuple[int, int, int]]:
    """(size, mtime_ns, inode) of every ``*.json`` regular file of ``session_dir`` (the files
    :func:`iter_session_files` picks), by name; no ``Path`` objects, so 30k files stay fast.
    """
    out: dict[str, tuple[int, int, int]] = {}
    try:
        entries = os.scandir(session_dir)
    except OSError:
        return out
    with entries:
        for entry in entries:
            name = entry.name
            if not name.endswith(".json") or name.startswith("."):
                continue
            try:
                st = entry.stat(follow_symlinks=True)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                out[name] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def _opt_str(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else str(value)


@dataclass
class _Parsed:
    """One session file turned into index rows."""

    file: str
    identity: FileIdentity
    session_id: str
    row: tuple[Any, ...]  # the sessions columns after sid/file/identity/row range
    messages: list[tuple[int, str, int, float | None, str]]  # idx, role, archived, ts, text
    chars: int
    extra: Any = None  # what a subclass keeps beside the rows (a source's resumable state)


_SESSION_COLS = (
    "session_id, title, when_, created, updated_ts, message_count, archived_count, "
    "source, agent, tagged, rate_auto, machine, lineage, project"
)


def _extract(file: str, identity: FileIdentity, data: JSONDict, *, folded: bool) -> _Parsed:
    """The index rows of one parsed session dict."""
    data.setdefault("session_id", Path(file).stem)
    if not data.get("session_id"):
        data["session_id"] = Path(file).stem
    session_id = str(data["session_id"])
    messages = recall.project(data)
    rows: list[tuple[int, str, int, float | None, str]] = []
    chars = 0
    for idx, msg in enumerate(messages):
        content = msg.get("content")
        text = content if isinstance(content, str) else content_text(content)
        if not text:
            continue
        role = msg.get("role", "")
        ts = msg.get("timestamp")
        rows.append(
            (
                idx,
                role if isinstance(role, str) else str(role),
                1 if msg.get("archived") else 0,
                float(ts)
                if isinstance(ts, (int, float)) and not isinstance(ts, bool) and math.isfinite(ts)
                else None,
                fold(text) if folded else text,
            )
        )
        chars += len(text)
    active = data.get("messages")
    archived = data.get("archived_messages")
    active_n = sum(1 for m in active if isinstance(m, dict)) if isinstance(active, list) else 0
    archived_n = (
        sum(1 for m in archived if isinstance(m, dict)) if isinstance(archived, list) else 0
    )
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    tagged = recall.tagged_automated(data)
    rate = recall.message_rate(messages)
    rate_auto = rate is not None and rate > recall.AUTOMATED_RATE_THRESHOLD
    when = recall.when_of(data)
    created = data.get("created_at")
    project = _project_of(data)
    row = (
        session_id,
        recall.session_title(data, messages),
        when,
        created if isinstance(created, str) else None,
        _epoch(when),
        active_n,
        archived_n,
        recall.source_of(data),
        _opt_str(data.get("agent_name") or data.get("agent_id") or meta.get("agent_id")),
        1 if tagged else 0,
        1 if rate_auto else 0,
        1 if machine_paced(messages) else 0,
        recall.lineage_key(data),
        _opt_str(project),
    )
    return _Parsed(file, identity, session_id, row, rows, chars)


def _project_of(data: JSONDict) -> str | None:
    """The project dir a session belongs to (``metadata.cwd``/``project`` or ``cwd``)."""
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    return _opt_str(meta.get("cwd") or meta.get("project") or data.get("cwd"))


def _read_parse(path: Path, ident: tuple[int, int, int], *, folded: bool) -> _Parsed | str:
    """Parse one file into rows, or the reason it cannot be indexed."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    try:
        data = loads(raw)
    except (ValueError, RecursionError) as exc:
        return f"not valid JSON: {str(exc)[:200]}"
    if not isinstance(data, dict):
        return f"root is {type(data).__name__}, not an object"
    try:
        return _extract(path.name, FileIdentity(*ident), data, folded=folded)
    except (ValueError, TypeError, RecursionError) as exc:  # pragma: no cover - defensive
        return f"unusable session: {exc}"


# --------------------------------------------------------------------------- scoring


@dataclass
class _Msg:
    """A candidate message, from the index or from a scanned file."""

    key: int  # session key: sid in the index, negative for scanned files
    idx: int
    role: str
    archived: bool
    ts: float | None
    text: str


@dataclass
class _SessionInfo:
    key: int
    session_id: str
    file: str
    when: str | None
    tagged: bool
    machine: bool
    lineage: str | None
    row_lo: int = 0
    row_hi: int = -1


@dataclass
class _Scored:
    info: _SessionInfo
    score: float
    anchor: int
    best: float
    matched: set[int]
    phrase: bool
    all_terms: bool
    bm25: float
    messages: int
    anchor_text: str


class _Scorer:
    """Per-message BM25 plus boosts, aggregated per session."""

    def __init__(self, pq: ParsedQuery, dfs: Sequence[int], total: int, avg_chars: float) -> None:
        self.pq = pq
        self.terms = pq.terms
        n = max(total, 1)
        self.idf = [math.log(1.0 + (n - df + 0.5) / (df + 0.5)) for df in dfs]
        self.idf_total = sum(self.idf) or 1.0
        self.avg = max(avg_chars, 1.0)
        words = pq.all_tokens
        self.phrase_term = (
            Term(tokens=words, raw=" ".join(words))
            if len(self.terms) > 1 and len(words) > 1
            else None
        )

    def message(self, text: str) -> tuple[float, set[int], bool, list[str]]:
        """(score, matched term numbers, phrase, tokens) of one message; excluded -> -1."""
        toks = tokenize(text[:SCORE_TEXT_CHARS])
        for ex in self.pq.excluded:
            if ex.occurrences(toks):
                return -1.0, set(), False, toks
        if not self.terms:
            return 1.0, set(), False, toks
        norm = 1.0 - BM25_B + BM25_B * (min(len(text), SCORE_TEXT_CHARS) / self.avg)
        score = 0.0
        matched: set[int] = set()
        for i, term in enumerate(self.terms):
            tf = term.occurrences(toks)
            if tf:
                matched.add(i)
                score += self.idf[i] * (tf * (BM25_K1 + 1.0)) / (tf + BM25_K1 * norm)
        phrase = False
        if self.phrase_term is not None and len(matched) == len(self.terms):
            phrase = self.phrase_term.occurrences(toks) > 0
        return score, matched, phrase, toks

    def session(self, info: _SessionInfo, msgs: Iterable[_Msg]) -> _Scored | None:
        best = -1.0
        best_raw = 0.0
        anchor = -1
        anchor_text = ""
        rest = 0.0
        matched: set[int] = set()
        phrase_best = False
        all_best = False
        count = 0
        excluded = False
        for msg in msgs:
            raw, hit_terms, phrase, _toks = self.message(msg.text)
            if raw < 0:
                excluded = True
                break
            if self.terms and not hit_terms:
                continue
            count += 1
            matched |= hit_terms
            boosted = raw
            all_terms = len(self.terms) > 1 and len(hit_terms) == len(self.terms)
            if phrase:
                boosted *= PHRASE_BOOST
            if all_terms:
                boosted *= ALL_TERMS_BOOST
            if boosted > best or (boosted == best and msg.idx < anchor):
                if best > 0:
                    rest += best
                best, best_raw, anchor, anchor_text = boosted, raw, msg.idx, msg.text
                phrase_best, all_best = phrase, all_terms
            else:
                rest += boosted
        if excluded or anchor < 0:
            return None
        return self.finish(
            info, best, best_raw, rest, matched, anchor, anchor_text, phrase_best, all_best, count
        )

    def finish(
        self,
        info: _SessionInfo,
        best: float,
        best_raw: float,
        rest: float,
        matched: set[int],
        anchor: int,
        anchor_text: str,
        phrase: bool,
        all_terms: bool,
        count: int,
    ) -> _Scored:
        coverage = sum(self.idf[i] for i in matched) / self.idf_total if self.terms else 1.0
        score = (best + min(0.5 * best, 0.1 * rest)) * (0.25 + 0.75 * coverage)
        return _Scored(
            info=info,
            score=score,
            anchor=anchor,
            best=best,
            matched=matched,
            phrase=phrase,
            all_terms=all_terms,
            bm25=best_raw,
            messages=count,
            anchor_text=anchor_text,
        )


def _levenshtein(a: str, b: str, limit: int) -> int:
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        low = i
        for j, cb in enumerate(b, 1):
            val = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            cur.append(val)
            low = min(low, val)
        if low > limit:
            return limit + 1
        prev = cur
    return prev[-1]


def _edits1(word: str) -> set[str]:
    letters = set(word) | set("abcdefghijklmnopqrstuvwxyz")
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    out = {a + b[1:] for a, b in splits if b}
    out |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    out |= {a + c + b[1:] for a, b in splits if b for c in letters}
    out |= {a + c + b for a, b in splits for c in letters}
    out.discard(word)
    return out


# --------------------------------------------------------------------------- the store


class _Broken(Exception):
    """The index cannot be used (sqlite missing or the database unusable)."""


class SqliteSessionStore(DefaultSessionStore):
    """A :class:`DefaultSessionStore` whose reads go through an SQLite FTS5 index."""

    def __init__(
        self,
        session_dir: str | os.PathLike[str] | None = None,
        *,
        db_path: str | os.PathLike[str] | None = None,
        reconcile: str = "sync",
        fts: bool = True,
        **store_kwargs: Any,
    ) -> None:
        super().__init__(session_dir, **store_kwargs)
        if reconcile not in RECONCILE_MODES:
            raise ValueError(f"reconcile must be one of {RECONCILE_MODES}, not {reconcile!r}")
        if db_path is None:
            self.db_path: str = str(default_db_path(self.session_dir))
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
        self._pending: set[str] = set()  # file names not (yet) indexed as they are now
        self._stale_keys: set[int] = set()  # index rows to ignore (changed or deleted files)
        self._progress = (0, 0)
        self._indexing = False
        self._thread: threading.Thread | None = None
        self._cancel = threading.Event()
        self._stats: tuple[int, float] | None = None
        self._df_cache: dict[str, int] = {}
        self.last_report: ReconcileReport | None = None
        self._open()
        if self.broken is None:
            if reconcile == "sync":
                self.last_report = self.reconcile()
            elif reconcile == "background":
                self.start_reconcile()

    # ------------------------------------------------------------------ connection

    def _connect(self) -> sqlite3.Connection:
        if not self.memory:
            Path(self.db_path).parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(
            self.db_path, timeout=30.0, check_same_thread=False, isolation_level=None
        )
        db.execute("PRAGMA busy_timeout=30000")
        if not self.memory:
            db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA temp_store=MEMORY")
        db.execute("PRAGMA cache_size=-32000")
        db.execute("PRAGMA mmap_size=268435456")
        return db

    def _open(self) -> None:
        try:
            self._db = self._open_checked()
        except (sqlite3.Error, OSError, _Broken) as exc:
            self._set_broken(f"the search index cannot be used ({exc}); searching the files")

    def _set_broken(self, message: str) -> None:
        self.broken = message
        if message not in self.warnings:
            self.warnings.append(message)
        log.warning("%s: %s", self.db_path, message)

    def _open_checked(self) -> sqlite3.Connection:
        for attempt in range(2):
            db = None
            try:
                db = self._connect()
                if self._schema_ok(db):
                    return db
                log.info("index %s has another version or layout; rebuilding", self.db_path)
            except sqlite3.DatabaseError as exc:
                if attempt:
                    raise
                log.warning("index %s is unusable (%s); rebuilding it", self.db_path, exc)
            if db is not None:
                with contextlib.suppress(sqlite3.Error):
                    db.close()
            self._discard_db()
        raise _Broken("could not create the index")

    def _discard_db(self) -> None:
        if self.memory:
            return
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.db_path + suffix)

    def _schema_ok(self, db: sqlite3.Connection) -> bool:
        """True when ``db`` holds our current schema (creating it in an empty db)."""
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if version == 0 and not tables:
            self._create(db)
            return True
        if version != SCHEMA_VERSION or "meta" not in tables:
            return False
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        built_fts = meta.get("fts") == "1"
        if built_fts != (self.want_fts and self._fts_available(db)):
            return False
        self.has_fts = built_fts
        db.execute("SELECT count(*) FROM sessions WHERE sid < 0").fetchone()
        if built_fts:
            db.execute("SELECT rowid FROM fts WHERE fts MATCH '\"x\"' LIMIT 1").fetchall()
        return True

    @staticmethod
    def _fts_available(db: sqlite3.Connection) -> bool:
        try:
            db.execute("CREATE VIRTUAL TABLE temp.fts_probe USING fts5(x)")
            db.execute("DROP TABLE temp.fts_probe")
            return True
        except sqlite3.OperationalError:
            return False

    def _create(self, db: sqlite3.Connection) -> None:
        use_fts = self.want_fts and self._fts_available(db)
        db.execute("BEGIN IMMEDIATE")
        ddl = """
            CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
            CREATE TABLE IF NOT EXISTS sessions(
                sid INTEGER PRIMARY KEY AUTOINCREMENT,
                file TEXT NOT NULL UNIQUE,
                size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, inode INTEGER NOT NULL,
                session_id TEXT NOT NULL, title TEXT, when_ TEXT, created TEXT,
                updated_ts REAL, message_count INTEGER, archived_count INTEGER,
                source TEXT, agent TEXT, tagged INTEGER, rate_auto INTEGER, machine INTEGER,
                lineage TEXT, project TEXT,
                nmsg INTEGER NOT NULL, chars INTEGER NOT NULL,
                row_lo INTEGER NOT NULL, row_hi INTEGER NOT NULL);
            CREATE INDEX IF NOT EXISTS sessions_id ON sessions(session_id);
            CREATE INDEX IF NOT EXISTS sessions_ident ON sessions(file, size, mtime_ns, inode);
            CREATE INDEX IF NOT EXISTS sessions_when ON sessions(when_);
            CREATE INDEX IF NOT EXISTS sessions_created ON sessions(created);
            CREATE INDEX IF NOT EXISTS sessions_size ON sessions(size);
            CREATE TABLE IF NOT EXISTS messages(
                id INTEGER PRIMARY KEY, sid INTEGER NOT NULL, idx INTEGER NOT NULL,
                role TEXT, archived INTEGER, ts REAL, text TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS skipped(
                file TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, inode INTEGER,
                reason TEXT);
            """
        for statement in ddl.split(";"):
            if statement.strip():
                db.execute(statement)
        if use_fts:
            db.execute(
                "CREATE VIRTUAL TABLE fts USING fts5(text, content='messages', "
                "content_rowid='id', tokenize='unicode61 remove_diacritics 2')"
            )
            db.execute("CREATE VIRTUAL TABLE fts_vocab USING fts5vocab(fts, 'row')")
        db.executemany(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
            [
                ("fts", "1" if use_fts else "0"),
                ("session_dir", str(self.session_dir)),
                ("created", str(time.time())),
            ],
        )
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        db.execute("COMMIT")
        self.has_fts = use_fts

    def _conn(self) -> sqlite3.Connection:
        if self._db is None or self.broken is not None:
            raise _Broken(self.broken or "closed")
        return self._db

    def close(self) -> None:
        """Stop any background reconcile and close the database."""
        self._cancel.set()
        thread = self._thread
        if thread is not None and thread.is_alive() and thread is not threading.current_thread():
            thread.join()
        with self._lock:
            if self._db is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._db.close()
                self._db = None

    def __enter__(self) -> SqliteSessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        with contextlib.suppress(Exception):
            if self._db is not None:
                self._db.close()

    # ------------------------------------------------------------------ reconcile

    @property
    def progress(self) -> tuple[int, int]:
        """(done, total) files of the reconcile in progress (or the last one)."""
        return self._progress

    @property
    def indexing(self) -> bool:
        return self._indexing

    def start_reconcile(self) -> threading.Thread:
        """Run :meth:`reconcile` in a daemon thread (searches keep answering meanwhile)."""
        with self._state_lock:
            if self._thread is not None and self._thread.is_alive():
                return self._thread
            self._cancel.clear()
            self._indexing = True

            def run() -> None:
                try:
                    self.last_report = self.reconcile(cancel=self._cancel)
                except Exception as exc:  # pragma: no cover - reported, never raised
                    log.exception("background reconcile failed: %s", exc)
                    self.warnings.append(f"indexing failed: {exc}")
                    self._indexing = False

            thread = threading.Thread(target=run, name="session-index", daemon=True)
            self._thread = thread
            thread.start()
            return thread

    # ------------------------------------------------------------------ file hooks
    # What a store over another file format overrides (see ``core/pi_index.py``); the
    # defaults read the PraisonAI JSON files of ``session_dir``.

    def _scan_files(self) -> dict[str, tuple[int, int, int]]:
        """(size, mtime_ns, inode) of every session file, by name relative to the dir."""
        return scan_dir(self.session_dir)

    def _before_parse(
        self, db: sqlite3.Connection, todo: Sequence[tuple[str, tuple[int, int, int]]]
    ) -> None:
        """Called once before the files of ``todo`` are parsed (nothing by default)."""

    def _parse_file(self, name: str, ident: tuple[int, int, int], *, folded: bool) -> _Parsed | str:
        """One file as index rows, or the reason it cannot be indexed."""
        return _read_parse(self.session_dir / name, ident, folded=folded)

    def _load_file(self, name: str) -> JSONDict | None:
        """The session dict of file ``name`` (None when it cannot be read)."""
        path = self.session_dir / name
        try:
            with open(path, "rb") as fh:
                data = loads(fh.read())
        except (OSError, ValueError, RecursionError):
            return None
        if not isinstance(data, dict):
            return None
        data.setdefault("session_id", path.stem)
        return data

    def _classic_order(self, names: set[str]) -> list[str]:
        """``names`` in the order the plain store scans them (so equal scores tie the same)."""
        try:
            return [n for n in os.listdir(self.session_dir) if n in names]
        except OSError:
            return sorted(names)

    def _classic_candidate(
        self, data: JSONDict, parsed: recall.ClassicQuery, window: int
    ) -> recall.Candidate | None:
        return recall.classic_candidate(
            data, parsed, window=window, source=self.source_kind, store=self.label
        )

    def _demotion_flags(self, data: JSONDict, messages: Sequence[JSONDict]) -> tuple[bool, bool]:
        """(tagged, machine-paced) of a session read from its file rather than the index."""
        return recall.tagged_automated(data), machine_paced(messages)

    def _writer(self) -> sqlite3.Connection:
        """A connection for a reconcile (its own for a file db, so readers never wait)."""
        if self.memory:
            return self._conn()
        return self._connect()

    def reconcile(
        self,
        *,
        progress: Callable[[int, int], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> ReconcileReport:
        """Bring the index in line with the session dir (only new/changed files are parsed)."""
        report = ReconcileReport()
        started = time.perf_counter()
        if self.broken is not None:
            report.elapsed = time.perf_counter() - started
            return report
        self._indexing = True
        writer: sqlite3.Connection | None = None
        try:
            writer = self._writer()
            self._reconcile(writer, report, progress, cancel)
        except sqlite3.DatabaseError as exc:
            self._on_db_error(exc)
        finally:
            if writer is not None and writer is not self._db:
                with contextlib.suppress(sqlite3.Error):
                    writer.close()
            with self._state_lock:
                self._pending.clear()
                self._stale_keys.clear()
            self._indexing = False
            self._stats = None
            self._df_cache.clear()
            report.elapsed = time.perf_counter() - started
        return report

    def _on_db_error(self, exc: sqlite3.DatabaseError) -> None:
        """A database error: a corrupt file is rebuilt; anything else falls back to the scan."""
        text = str(exc).lower()
        if "malformed" in text or "not a database" in text or "corrupt" in text:
            log.warning("index %s is corrupt (%s); rebuilding", self.db_path, exc)
            with self._lock:
                if self._db is not None:
                    with contextlib.suppress(sqlite3.Error):
                        self._db.close()
                self._db = None
                self._discard_db()
                self._open()
            return
        if isinstance(exc, sqlite3.OperationalError) and "locked" in text:
            self.warnings.append(f"the index is busy ({exc}); results may be stale")
            return
        self._set_broken(f"the search index failed ({exc}); searching the files")

    def _reconcile(
        self,
        db: sqlite3.Connection,
        report: ReconcileReport,
        progress: Callable[[int, int], None] | None,
        cancel: threading.Event | None,
    ) -> None:
        files = self._scan_files()
        known: dict[str, tuple[int, int, int]] = {
            r[0]: r[1:]
            for r in db.execute(
                "SELECT file, size, mtime_ns, inode FROM sessions INDEXED BY sessions_ident"
            )
        }
        skipped: dict[str, tuple[int, int, int]] = {}
        reasons: dict[str, str] = {}
        for f, size, mt, ino, reason in db.execute(
            "SELECT file, size, mtime_ns, inode, reason FROM skipped"
        ):
            skipped[f] = (size, mt, ino)
            reasons[f] = reason
        changed = files.items() - known.items()
        report.unchanged = len(files) - len(changed)
        todo: list[tuple[str, tuple[int, int, int]]] = []
        for name, ident in changed:
            if skipped.get(name) == ident:
                report.skipped.append((name, reasons[name]))
                continue
            todo.append((name, ident))
        gone = [name for name in known if name not in files]
        gone_skipped = [name for name in skipped if name not in files]
        stale_names = set(gone) | {n for n, _ in todo if n in known}
        stale_sids: set[int] = set()
        if stale_names:
            for name in stale_names:
                row = db.execute("SELECT sid FROM sessions WHERE file=?", (name,)).fetchone()
                if row is not None:
                    stale_sids.add(int(row[0]))
        with self._state_lock:
            self._pending = {n for n, _ in todo}
            self._stale_keys = stale_sids
        total = len(todo)
        self._progress = (0, total)
        if progress is not None:
            progress(0, total)
        if gone or gone_skipped:
            with self._write_lock:
                db.execute("BEGIN IMMEDIATE")
                try:
                    for name in gone:
                        if self._delete_file(db, name):
                            report.removed += 1
                    db.executemany("DELETE FROM skipped WHERE file=?", [(n,) for n in gone_skipped])
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
        if not todo:
            return
        # Oldest first, so rowids grow with recency and "newest first" is rowid order.
        todo.sort(key=lambda item: (item[1][1], item[0]))
        self._before_parse(db, todo)
        bulk = not known and total > BATCH_FILES
        if bulk:
            db.execute("PRAGMA synchronous=OFF")
        try:
            done = 0
            for parsed in self._parsed_batches(todo, cancel):
                if cancel is not None and cancel.is_set():
                    report.cancelled = True
                    break
                self._apply(db, parsed, known, report)
                done += len(parsed)
                with self._state_lock:
                    for name, _ in parsed:
                        self._pending.discard(name)
                self._progress = (done, total)
                if progress is not None:
                    progress(done, total)
            if done < total:
                report.cancelled = True
        finally:
            if bulk:
                db.execute("PRAGMA synchronous=NORMAL")
        if bulk and not report.cancelled and self.has_fts:
            with self._write_lock:
                db.execute("INSERT INTO fts(fts, rank) VALUES('merge', 500)")

    def _parsed_batches(
        self, todo: list[tuple[str, tuple[int, int, int]]], cancel: threading.Event | None
    ) -> Iterator[list[tuple[str, _Parsed | str]]]:
        """Batches of parsed files, read and parsed in a helper thread while the caller
        writes the previous batch (SQLite releases the GIL while it works)."""
        folded = not self.has_fts
        batches: queue.Queue[list[tuple[str, _Parsed | str]] | None] = queue.Queue(maxsize=2)
        stop = threading.Event()

        def produce() -> None:
            try:
                for start in range(0, len(todo), BATCH_FILES):
                    if stop.is_set() or (cancel is not None and cancel.is_set()):
                        break
                    chunk = todo[start : start + BATCH_FILES]
                    batch = [(n, self._parse_file(n, ident, folded=folded)) for n, ident in chunk]
                    while not stop.is_set():
                        try:
                            batches.put(batch, timeout=0.1)
                            break
                        except queue.Full:
                            continue
            finally:
                with contextlib.suppress(queue.Full):
                    batches.put(None, timeout=1.0)

        if len(todo) <= BATCH_FILES:
            yield [(n, self._parse_file(n, i, folded=folded)) for n, i in todo]
            return
        worker = threading.Thread(target=produce, name="session-index-parse", daemon=True)
        worker.start()
        try:
            while True:
                batch = batches.get()
                if batch is None:
                    return
                yield batch
        finally:
            stop.set()
            with contextlib.suppress(queue.Empty):
                while True:
                    batches.get_nowait()
            worker.join()

    def _apply(
        self,
        db: sqlite3.Connection,
        parsed: list[tuple[str, _Parsed | str]],
        known: dict[str, tuple[int, int, int]],
        report: ReconcileReport,
    ) -> None:
        with self._write_lock:
            db.execute("BEGIN IMMEDIATE")
            try:
                next_id = (db.execute("SELECT max(id) FROM messages").fetchone()[0] or 0) + 1
                for name, item in parsed:
                    if isinstance(item, str):
                        ident = self._stat_tuple(name)
                        if ident is None:
                            continue
                        self._delete_file(db, name)
                        db.execute(
                            "INSERT OR REPLACE INTO skipped(file, size, mtime_ns, inode, reason) "
                            "VALUES (?, ?, ?, ?, ?)",
                            (name, *ident, item),
                        )
                        report.skipped.append((name, item))
                        continue
                    cur = db.execute(
                        "SELECT size, mtime_ns, inode FROM sessions WHERE file=?", (name,)
                    ).fetchone()
                    ident2 = (item.identity.size, item.identity.mtime_ns, item.identity.inode)
                    if cur is not None and tuple(cur) == ident2:
                        continue  # another process indexed this very version meanwhile
                    existed = self._delete_file(db, name)
                    next_id = self._insert(db, item, next_id)
                    report.messages += len(item.messages)
                    if existed or name in known:
                        report.updated += 1
                    else:
                        report.added += 1
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def _stat_tuple(self, name: str) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.session_dir / name)
        except OSError:
            return None
        return (st.st_size, st.st_mtime_ns, st.st_ino)

    def _insert(self, db: sqlite3.Connection, item: _Parsed, next_id: int) -> int:
        n = len(item.messages)
        lo, hi = next_id, next_id + n - 1
        cur = db.execute(
            f"INSERT INTO sessions(file, size, mtime_ns, inode, {_SESSION_COLS}, nmsg, chars, "
            "row_lo, row_hi) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "?, ?)",
            (
                item.file,
                item.identity.size,
                item.identity.mtime_ns,
                item.identity.inode,
                *item.row,
                n,
                item.chars,
                lo,
                hi,
            ),
        )
        sid = cur.lastrowid
        rows = [
            (next_id + k, sid, idx, role, archived, ts, text)
            for k, (idx, role, archived, ts, text) in enumerate(item.messages)
        ]
        if rows:
            db.executemany(
                "INSERT INTO messages(id, sid, idx, role, archived, ts, text) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            if self.has_fts:
                db.executemany(
                    "INSERT INTO fts(rowid, text) VALUES (?, ?)", [(r[0], r[6]) for r in rows]
                )
        db.execute("DELETE FROM skipped WHERE file=?", (item.file,))
        return next_id + n

    def _delete_file(self, db: sqlite3.Connection, name: str) -> bool:
        row = db.execute(
            "SELECT sid, row_lo, row_hi FROM sessions WHERE file=?", (name,)
        ).fetchone()
        if row is None:
            db.execute("DELETE FROM skipped WHERE file=?", (name,))
            return False
        sid, lo, hi = row
        if self.has_fts and hi >= lo:
            db.execute(
                "INSERT INTO fts(fts, rowid, text) SELECT 'delete', id, text FROM messages "
                "WHERE id BETWEEN ? AND ?",
                (lo, hi),
            )
        db.execute("DELETE FROM messages WHERE id BETWEEN ? AND ?", (lo, hi))
        db.execute("DELETE FROM sessions WHERE sid=?", (sid,))
        return True

    def _after_write(self, session_id: str, path: Path, data: JSONDict | None) -> None:
        """Keep the index in step with a write made through this store."""
        if self.broken is not None or self._db is None:
            return
        try:
            with self._lock, self._write_lock:
                db = self._conn()
                db.execute("BEGIN IMMEDIATE")
                try:
                    if data is None:
                        self._delete_file(db, path.name)
                    else:
                        st = os.stat(path)
                        item = _extract(
                            path.name, FileIdentity.of(st), dict(data), folded=not self.has_fts
                        )
                        self._delete_file(db, path.name)
                        next_id = (
                            db.execute("SELECT max(id) FROM messages").fetchone()[0] or 0
                        ) + 1
                        self._insert(db, item, next_id)
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
            self._stats = None
            self._df_cache.clear()
        except (sqlite3.Error, OSError, _Broken) as exc:
            log.warning("could not update the index for %s: %s", session_id, exc)

    def rebuild(
        self,
        *,
        progress: Callable[[int, int], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> ReconcileReport:
        """Throw the index away and build it again from the files."""
        self._cancel.set()
        thread = self._thread
        if thread is not None and thread.is_alive() and thread is not threading.current_thread():
            thread.join()
        self._cancel.clear()
        with self._lock:
            if self._db is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._db.close()
            self._db = None
            self.broken = None
            self.warnings = []
            self._discard_db()
            self._open()
        return self.reconcile(progress=progress, cancel=cancel)

    # ------------------------------------------------------------------ status

    def status(self) -> JSONDict:
        """Where the index is and what it holds (for ``session-browser index status``)."""
        out: JSONDict = {
            "session_dir": str(self.session_dir),
            "db_path": self.db_path,
            "mode": "scan" if self.broken else ("fts5" if self.has_fts else "like"),
            "broken": self.broken,
            "indexing": self.indexing,
            "progress": list(self.progress),
        }
        if self.broken is None:
            with self._lock:
                db = self._conn()
                sessions, messages = db.execute(
                    "SELECT count(*), coalesce(sum(nmsg), 0) FROM sessions"
                ).fetchone()
                skipped = db.execute("SELECT file, reason FROM skipped ORDER BY file").fetchall()
            out.update(
                {
                    "sessions": sessions,
                    "messages": messages,
                    "skipped": [{"file": f, "reason": r} for f, r in skipped],
                }
            )
        size = 0
        if not self.memory:
            for suffix in ("", "-wal"):
                with contextlib.suppress(OSError):
                    size += os.stat(self.db_path + suffix).st_size
        out["db_bytes"] = size
        files = list(iter_session_files(self.session_dir))
        out["files"] = len(files)
        out["json_bytes"] = sum(st.st_size for _p, st in files)
        return out

    # ------------------------------------------------------------------ browse

    def _summary(self, row: Sequence[Any]) -> SessionSummary:
        (sid_, title, when, mc, ac, created, size, tagged, rate, lineage, project) = row
        return SessionSummary(
            session_id=sid_,
            title=title or "",
            when=when,
            message_count=mc or 0,
            archived_count=ac or 0,
            created_at=created,
            size=size or 0,
            source=self.source_kind,
            store=self.label,
            automated=bool(tagged or rate),
            lineage=lineage,
            project=project,
        )

    _SUMMARY_SQL = (
        "SELECT session_id, title, when_, message_count, archived_count, created, size, "
        "tagged, rate_auto, lineage, project FROM sessions"
    )

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return self._conn().execute(sql, params).fetchall()

    def summaries(self) -> list[SessionSummary]:
        """Every indexed session (unreadable files are not sessions)."""
        try:
            return [self._summary(r) for r in self._rows(self._SUMMARY_SQL)]
        except (_Broken, sqlite3.Error):
            return super().summaries()

    def recent(self, *, limit: int = 10) -> list[SessionSummary]:
        """The most recently updated sessions, from the index."""
        if limit <= 0:
            return []
        try:
            rows = self._rows(self._SUMMARY_SQL + " ORDER BY when_ DESC, sid LIMIT ?", (limit,))
        except (_Broken, sqlite3.Error):
            return super().recent(limit=limit)
        return [self._summary(r) for r in rows]

    @staticmethod
    def _text_filter(text: str) -> tuple[str, list[Any]]:
        text = (text or "").strip()
        if not text:
            return "", []
        pat = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        return (
            " WHERE (title LIKE ? ESCAPE '\\' OR session_id LIKE ? ESCAPE '\\')",
            [pat, pat],
        )

    def browse(
        self, *, offset: int = 0, limit: int = 100, sort: str = "updated", text: str = ""
    ) -> list[SessionSummary]:
        """One page of the session list (``sort``: updated, created or size; newest/largest
        first); ``text`` keeps sessions whose title or id contains it (any case)."""
        if sort not in SORTS:
            raise ValueError(f"sort must be one of {SORTS}, not {sort!r}")
        if limit <= 0:
            return []
        order = {
            "updated": "when_ DESC",
            "created": "created DESC",
            "size": "size DESC",
        }[sort]
        where, params = self._text_filter(text)
        try:
            rows = self._rows(
                f"{self._SUMMARY_SQL}{where} ORDER BY {order}, sid LIMIT ? OFFSET ?",
                [*params, limit, max(0, offset)],
            )
        except (_Broken, sqlite3.Error):
            items = super().summaries()
            needle = (text or "").strip().lower()
            if needle:
                items = [
                    s for s in items if needle in s.title.lower() or needle in s.session_id.lower()
                ]
            key: Callable[[SessionSummary], Any] = {
                "updated": lambda s: s.when or "",
                "created": lambda s: s.created_at or "",
                "size": lambda s: s.size,
            }[sort]
            items.sort(key=key, reverse=True)
            return items[max(0, offset) : max(0, offset) + limit]
        return [self._summary(r) for r in rows]

    def count(self, *, text: str = "") -> int:
        """How many sessions :meth:`browse` can page through with this ``text``."""
        where, params = self._text_filter(text)
        try:
            return int(self._rows(f"SELECT count(*) FROM sessions{where}", params)[0][0])
        except (_Broken, sqlite3.Error):
            needle = (text or "").strip().lower()
            return sum(
                1
                for s in super().summaries()
                if not needle or needle in s.title.lower() or needle in s.session_id.lower()
            )

    # ------------------------------------------------------------------ search

    def search(
        self, query: str, *, limit: int = 5, window: int = 5, ranking: str = "relevance"
    ) -> list[SessionHit]:
        """Ranked hits; raises :class:`QueryError` for a bad filter value."""
        result = self.search_ex(query, limit=limit, window=window, ranking=ranking)
        if result.error is not None:
            raise QueryError(result.error)
        return result.hits

    def search_candidates(
        self,
        query: str,
        *,
        window: int = 5,
        ranking: str = "classic",
        limit: int | None = None,
        corpus: CorpusStats | None = None,
    ) -> list[recall.Candidate]:
        """Scored candidates for :func:`recall.rank` (what a :class:`StoreGroup` merges).

        ``classic`` (the default, as for every store) returns every matching session; with
        ``relevance`` the best ``limit`` sessions (after folding) come with full hits and
        the continuations they fold with lighter ones; ``corpus`` (shared statistics, see
        :class:`CorpusStats`) makes the scores comparable with other stores'.
        """
        if ranking == "classic":
            return self._classic_candidates(query, window=window)
        try:
            pq = parse_query(query)
        except QueryError:
            return []
        cands, _n, _fz, _w, _mode = self._relevance(pq, limit or 5, window, corpus)
        return cands

    def relevance_candidates(
        self, pq: ParsedQuery, *, limit: int = 5, window: int = 5, corpus: CorpusStats | None = None
    ) -> tuple[list[recall.Candidate], int, bool, list[str], str]:
        """Relevance candidates of a parsed query and how they were found:
        (candidates, matched sessions, fuzzy, warnings, mode). What a group merges."""
        return self._relevance(pq, limit, window, corpus)

    def corpus_stats(self, pq: ParsedQuery) -> CorpusStats:
        """This index's statistics for ``pq``'s terms (empty when the index is unusable)."""
        try:
            with self._lock:
                db = self._conn()
                total, avg = self._corpus_stats(db)
                dfs = {t.fts(): self._df(db, t) for t in pq.terms} if self.has_fts else {}
        except (_Broken, sqlite3.Error):
            return CorpusStats()
        return CorpusStats(total=total, avg_chars=avg, dfs=dfs)

    def search_ex(
        self, query: str, *, limit: int = 5, window: int = 5, ranking: str = "relevance"
    ) -> SearchResult:
        """Search and say how: hits, matched sessions, mode, fuzzy, progress, warnings.

        Never raises for user text: a bad filter value comes back in ``error``.
        """
        started = time.perf_counter()
        result = SearchResult(query=query or "", ranking=ranking, progress=self.progress)
        if ranking not in RANKINGS:
            result.error = f"ranking must be one of {', '.join(RANKINGS)}, not {ranking!r}"
            return result
        result.warnings.extend(self.warnings)
        if ranking == "classic":
            if limit > 0 and (query or "").strip():
                cands = self._classic_candidates(query, window=window)
                result.matched_sessions = len(cands)
                result.hits = recall.rank(cands, limit)
            result.mode = "scan" if self.broken else ("like" if not self.has_fts else "index")
            result.elapsed_ms = (time.perf_counter() - started) * 1000
            return result
        try:
            pq = parse_query(query)
        except QueryError as exc:
            result.error = str(exc)
            result.elapsed_ms = (time.perf_counter() - started) * 1000
            return result
        result.warnings.extend(pq.warnings)
        if limit > 0 and not pq.empty:
            cands, matched, fuzzy, warnings, mode = self._relevance(pq, limit, window)
            result.hits = recall.rank(cands, limit)
            result.matched_sessions = matched
            result.fuzzy = fuzzy
            result.warnings.extend(warnings)
            result.mode = mode
        else:
            result.mode = "scan" if self.broken else ("index" if self.has_fts else "like")
        result.elapsed_ms = (time.perf_counter() - started) * 1000
        return result

    # ------------------------------------------------------------------ classic

    def _classic_candidates(self, query: str, *, window: int) -> list[recall.Candidate]:
        """The core's classic heuristic, exactly: the index only narrows which files to read."""
        parsed = recall.ClassicQuery.parse(query)
        if not parsed.needle:
            return []
        if self.broken is not None or self.has_fts is False or not parsed.needle.isascii():
            return super().search_candidates(query, window=window)
        with self._state_lock:
            pending = set(self._pending)
        try:
            clauses = " OR ".join("m.text LIKE ? ESCAPE '\\'" for _ in parsed.terms)
            params = [
                "%" + t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
                for t in parsed.terms
            ]
            rows = self._rows(
                "SELECT DISTINCT s.file FROM messages m JOIN sessions s ON s.sid = m.sid "
                f"WHERE {clauses}",
                params,
            )
        except (_Broken, sqlite3.Error):
            return super().search_candidates(query, window=window)
        names = {r[0] for r in rows} | pending
        # The directory's own order, as the core scans it, so equal scores tie the same way.
        out: list[recall.Candidate] = []
        for name in self._classic_order(names):
            data = self._load_file(name)
            if data is None:
                continue
            cand = self._classic_candidate(data, parsed, window)
            if cand is not None:
                out.append(cand)
        return out

    # ------------------------------------------------------------------ relevance

    def _corpus_stats(self, db: sqlite3.Connection) -> tuple[int, float]:
        if self._stats is None:
            n, chars = db.execute(
                "SELECT coalesce(sum(nmsg), 0), coalesce(sum(chars), 0) FROM sessions"
            ).fetchone()
            self._stats = (int(n), (chars / n) if n else 1.0)
        return self._stats

    def _df(self, db: sqlite3.Connection, term: Term) -> int:
        """Messages holding ``term`` (an upper bound for phrases; capped for prefixes)."""
        key = term.fts()
        cached = self._df_cache.get(key)
        if cached is not None:
            return cached
        dfs: list[int] = []
        for i, tok in enumerate(term.tokens):
            if term.prefix and i == len(term.tokens) - 1:
                rows = db.execute(
                    "SELECT doc FROM fts_vocab WHERE term >= ? AND term < ? LIMIT 200",
                    (tok, tok + "\U0010ffff"),
                ).fetchall()
                total = sum(r[0] for r in rows)
                dfs.append(total if len(rows) < 200 else max(total, RARE_DF * 10))
            else:
                row = db.execute("SELECT doc FROM fts_vocab WHERE term = ?", (tok,)).fetchone()
                dfs.append(int(row[0]) if row else 0)
        value = min(dfs) if dfs else 0
        if len(self._df_cache) > 4096:
            self._df_cache.clear()
        self._df_cache[key] = value
        return value

    def _filter_sql(self, pq: ParsedQuery) -> tuple[str, list[Any]]:
        where: list[str] = []
        params: list[Any] = []
        if pq.role is not None:
            where.append("m.role = ?")
            params.append(pq.role)
        if pq.archived is not None:
            where.append("m.archived = ?")
            params.append(1 if pq.archived else 0)
        if pq.since is not None:
            where.append("coalesce(m.ts, s.updated_ts) >= ?")
            params.append(pq.since)
        if pq.until is not None:
            where.append("coalesce(m.ts, s.updated_ts) < ?")
            params.append(pq.until)
        if pq.session is not None:
            where.append("(s.session_id = ? OR s.file = ?)")
            params.extend([pq.session, paths.safe_id(pq.session) + ".json"])
        if pq.source is not None and pq.source != self.source_kind:
            # source: names the store's kind (every session) or a session's source tag.
            where.append("s.source = ?")
            params.append(pq.source)
        if pq.agent is not None:
            where.append("s.agent = ? COLLATE NOCASE")
            params.append(pq.agent)
        if pq.project is not None:
            prefix = pq.project if pq.project.endswith(os.sep) else pq.project + os.sep
            where.append("(s.project = ? OR substr(s.project, 1, ?) = ?)")
            params.extend([pq.project, len(prefix), prefix])
        return ("".join(f" AND {w}" for w in where), params)

    _CAND_COLS = (
        "m.sid, m.idx, m.role, m.archived, m.ts, m.text, s.session_id, s.file, s.when_, "
        "s.tagged, s.machine, s.lineage, s.row_lo, s.row_hi"
    )

    def _fetch(
        self,
        db: sqlite3.Connection,
        pq: ParsedQuery,
        expr: str | None,
        like_terms: list[Term] | None,
        limit: int,
    ) -> list[tuple[Any, ...]]:
        fsql, fparams = self._filter_sql(pq)
        if expr is not None:
            sql = (
                f"SELECT {self._CAND_COLS} FROM fts JOIN messages m ON m.id = fts.rowid "
                f"JOIN sessions s ON s.sid = m.sid WHERE fts MATCH ?{fsql} "
                "ORDER BY fts.rowid DESC LIMIT ?"
            )
            return db.execute(sql, [expr, *fparams, limit]).fetchall()
        like = ""
        lparams: list[Any] = []
        if like_terms:
            like = " AND (" + " OR ".join("m.text LIKE ? ESCAPE '\\'" for _ in like_terms) + ")"
            lparams = [like_pattern(t) for t in like_terms]
        sql = (
            f"SELECT {self._CAND_COLS} FROM messages m JOIN sessions s ON s.sid = m.sid "
            f"WHERE 1{like}{fsql} ORDER BY m.id DESC LIMIT ?"
        )
        return db.execute(sql, [*lparams, *fparams, limit]).fetchall()

    def _relevance(
        self, pq: ParsedQuery, limit: int, window: int, corpus: CorpusStats | None = None
    ) -> tuple[list[recall.Candidate], int, bool, list[str], str]:
        """(candidates, matched sessions, fuzzy, warnings, mode)."""
        if self.broken is not None:
            words = pq.words
            if not words:
                return [], 0, False, [], "scan"
            cands = super().search_candidates(words, window=window)
            return cands, len(cands), False, [], "scan"
        try:
            with self._lock:
                db = self._conn()
                scored, warnings = self._score_index(db, pq, corpus)
                fuzzy = False
                if not scored and pq.terms and self.has_fts:
                    fixed = self._fuzzy_query(db, pq)
                    if fixed is not None:
                        fpq, note = fixed
                        scored, more = self._score_index(db, fpq, corpus)
                        if scored:
                            fuzzy = True
                            warnings.append(note)
                            warnings.extend(more)
                            pq = fpq
                with self._state_lock:
                    pending = sorted(self._pending)
                    stale = set(self._stale_keys)
                if stale:
                    scored = [s for s in scored if s.info.key not in stale]
                mode = "index" if self.has_fts else "like"
                if pending:
                    mode += "+scan"
                    scored.extend(self._score_files(db, pq, pending, corpus))
                    done, total = self.progress
                    warnings.append(
                        f"indexing: {done} of {total} files done; the rest were scanned"
                    )
        except sqlite3.DatabaseError as exc:
            self._on_db_error(exc)
            if self.broken is not None or self._db is None:
                return self._relevance(pq, limit, window, corpus)
            return [], 0, False, [f"the index failed during this search: {exc}"], "index"
        except _Broken:
            return self._relevance(pq, limit, window, corpus)
        cands = self._to_candidates(scored, pq, limit, window)
        return cands, len(scored), fuzzy, warnings, mode

    def _scorer(
        self,
        db: sqlite3.Connection,
        pq: ParsedQuery,
        dfs: Sequence[int],
        corpus: CorpusStats | None,
    ) -> _Scorer:
        """The scorer for ``pq``: this index's statistics, or the shared ``corpus``."""
        total, avg = self._corpus_stats(db)
        if corpus is None or corpus.total <= 0:
            return _Scorer(pq, dfs, total, avg)
        shared = [corpus.dfs.get(t.fts(), df) for t, df in zip(pq.terms, dfs, strict=True)]
        return _Scorer(pq, shared, corpus.total, corpus.avg_chars)

    def _score_index(
        self, db: sqlite3.Connection, pq: ParsedQuery, corpus: CorpusStats | None = None
    ) -> tuple[list[_Scored], list[str]]:
        warnings: list[str] = []
        dfs = [self._df(db, t) for t in pq.terms] if self.has_fts else [1] * len(pq.terms)
        scorer = self._scorer(db, pq, dfs, corpus)
        rows: list[tuple[Any, ...]]
        if not pq.terms:
            rows = self._fetch(db, pq, None, None, CANDIDATE_LIMIT)
        elif not self.has_fts:
            rows = self._fetch(db, pq, None, pq.terms, CANDIDATE_LIMIT)
        else:
            live = [(df, i) for i, df in enumerate(dfs) if df > 0]
            if not live:
                return [], warnings
            live.sort()
            drivers: list[Term] = []
            budget = 0
            for df, i in live:
                if drivers and budget + df > RARE_DF:
                    break
                if df > RARE_DF and not drivers:
                    break
                drivers.append(pq.terms[i])
                budget += df
            if drivers:
                rows = self._fetch(
                    db, pq, fts_expr(drivers, excluded=pq.excluded), None, CANDIDATE_LIMIT
                )
            else:
                common = [pq.terms[i] for _df, i in live]
                rows = self._fetch(
                    db,
                    pq,
                    fts_expr(common, op="AND", excluded=pq.excluded),
                    None,
                    COMMON_LIMIT,
                )
                if not rows:
                    rows = self._fetch(
                        db, pq, fts_expr(common, excluded=pq.excluded), None, COMMON_LIMIT
                    )
            if not drivers and len(rows) >= COMMON_LIMIT:
                warnings.append("very common words: the newest matching messages were ranked")
        groups: dict[int, tuple[_SessionInfo, list[_Msg]]] = {}
        for (
            sid,
            idx,
            role,
            archived,
            ts,
            text,
            session_id,
            file,
            when,
            tagged,
            machine,
            lineage,
            lo,
            hi,
        ) in rows:
            g = groups.get(sid)
            if g is None:
                info = _SessionInfo(
                    sid, session_id, file, when, bool(tagged), bool(machine), lineage, lo, hi
                )
                g = groups[sid] = (info, [])
            g[1].append(_Msg(sid, idx, role, bool(archived), ts, text))
        scored: list[_Scored] = []
        for info, msgs in groups.values():
            s = scorer.session(info, msgs)
            if s is not None:
                scored.append(s)
        if (pq.excluded or len(pq.terms) > 1) and scored:
            scored = self._refine(db, scorer, pq, scored)
        return scored, warnings

    def _refine(
        self, db: sqlite3.Connection, scorer: _Scorer, pq: ParsedQuery, scored: list[_Scored]
    ) -> list[_Scored]:
        """Look in the best sessions' other messages: excluded words drop the session, missing
        query terms raise its coverage."""
        scored.sort(key=lambda s: s.score, reverse=True)
        out: list[_Scored] = []
        for n, s in enumerate(scored):
            if n >= COVERAGE_CHECK:
                out.append(s)
                continue
            lo, hi = s.info.row_lo, s.info.row_hi
            if any(self._session_has(db, t, lo, hi) for t in pq.excluded):
                continue
            missing = [i for i in range(len(pq.terms)) if i not in s.matched]
            if missing:
                found = set(s.matched)
                for i in missing:
                    if self._session_has(db, pq.terms[i], lo, hi):
                        found.add(i)
                if found != s.matched:
                    rest = 0.0
                    s2 = scorer.finish(
                        s.info,
                        s.best,
                        s.bm25,
                        rest,
                        found,
                        s.anchor,
                        s.anchor_text,
                        s.phrase,
                        s.all_terms,
                        s.messages,
                    )
                    s2.score = max(s2.score, s.score)
                    s = s2
            out.append(s)
        return out

    def _session_has(self, db: sqlite3.Connection, term: Term, lo: int, hi: int) -> bool:
        """Whether any message of the session (rowids ``lo``..``hi``) holds ``term``."""
        if self.has_fts:
            row = db.execute(
                "SELECT 1 FROM fts WHERE fts MATCH ? AND rowid BETWEEN ? AND ? LIMIT 1",
                (term.fts(), lo, hi),
            ).fetchone()
            return row is not None
        for (text,) in db.execute(
            "SELECT text FROM messages WHERE id BETWEEN ? AND ? AND text LIKE ? ESCAPE '\\'",
            (lo, hi, like_pattern(term)),
        ):
            if term.occurrences(tokenize(text)):
                return True
        return False

    def _score_files(
        self,
        db: sqlite3.Connection,
        pq: ParsedQuery,
        names: Sequence[str],
        corpus: CorpusStats | None = None,
    ) -> list[_Scored]:
        """Score files the index does not hold yet (read and scored on the fly)."""
        total, avg = self._corpus_stats(db)
        dfs = [max(1, self._df(db, t)) if self.has_fts else 1 for t in pq.terms]
        scorer = (
            _Scorer(pq, dfs, max(total, 1), avg)
            if corpus is None or corpus.total <= 0
            else self._scorer(db, pq, dfs, corpus)
        )
        out: list[_Scored] = []
        for n, name in enumerate(names):
            data = self._load_file(name)
            if data is None:
                continue
            if not self._session_filters_ok(pq, data, name):
                continue
            messages = recall.project(data)
            when = recall.when_of(data)
            when_ts = _epoch(when)
            msgs: list[_Msg] = []
            for idx, m in enumerate(messages):
                text = content_text(m.get("content"))
                if not text:
                    continue
                role = str(m.get("role", ""))
                archived = bool(m.get("archived"))
                ts = m.get("timestamp")
                tsf = (
                    float(ts) if isinstance(ts, (int, float)) and not isinstance(ts, bool) else None
                )
                if pq.role is not None and role != pq.role:
                    continue
                if pq.archived is not None and archived != pq.archived:
                    continue
                eff = tsf if tsf is not None else when_ts
                if pq.since is not None and (eff is None or eff < pq.since):
                    continue
                if pq.until is not None and (eff is None or eff >= pq.until):
                    continue
                msgs.append(_Msg(-1 - n, idx, role, archived, tsf, text))
            tagged, machine = self._demotion_flags(data, messages)
            info = _SessionInfo(
                -1 - n,
                str(data.get("session_id")),
                name,
                when,
                tagged,
                machine,
                recall.lineage_key(data),
            )
            s = scorer.session(info, msgs)
            if s is not None:
                out.append(s)
        return out

    def _session_filters_ok(self, pq: ParsedQuery, data: JSONDict, name: str) -> bool:
        if pq.session is not None and not (
            str(data.get("session_id")) == pq.session or name == paths.safe_id(pq.session) + ".json"
        ):
            return False
        if (
            pq.source is not None
            and pq.source != self.source_kind
            and recall.source_of(data) != pq.source
        ):
            return False
        if pq.project is not None and not project_matches(_project_of(data), pq.project):
            return False
        if pq.agent is not None:
            meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
            assert isinstance(meta, dict)
            agent = _opt_str(data.get("agent_name") or data.get("agent_id") or meta.get("agent_id"))
            if agent is None or agent.lower() != pq.agent.lower():
                return False
        return True

    def _fuzzy_query(
        self, db: sqlite3.Connection, pq: ParsedQuery
    ) -> tuple[ParsedQuery, str] | None:
        """The query with unknown words replaced by the most common close vocabulary word."""
        changed: list[str] = []
        terms: list[Term] = []
        for term in pq.terms:
            tokens: list[str] = []
            for i, tok in enumerate(term.tokens):
                if (term.prefix and i == len(term.tokens) - 1) or self._df(
                    db, Term((tok,), tok)
                ) > 0:
                    tokens.append(tok)
                    continue
                fix = self._correct(db, tok)
                if fix is None:
                    tokens.append(tok)
                else:
                    tokens.append(fix)
                    changed.append(f"{tok} → {fix}")
            terms.append(Term(tuple(tokens), term.raw, term.quoted, term.prefix))
        if not changed:
            return None
        fixed = ParsedQuery(
            text=pq.text,
            terms=terms,
            excluded=pq.excluded,
            role=pq.role,
            since=pq.since,
            until=pq.until,
            session=pq.session,
            source=pq.source,
            agent=pq.agent,
            archived=pq.archived,
            project=pq.project,
        )
        return fixed, "no exact match; showing close spellings: " + ", ".join(changed)

    def _correct(self, db: sqlite3.Connection, tok: str) -> str | None:
        if len(tok) < 3 or len(tok) > 40:
            return None
        best: tuple[int, str] | None = None
        candidates = sorted(_edits1(tok))
        for start in range(0, len(candidates), 500):
            chunk = candidates[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for term, doc in db.execute(
                f"SELECT term, doc FROM fts_vocab WHERE term IN ({marks})", chunk
            ):
                if best is None or doc > best[0]:
                    best = (doc, term)
        if best is not None:
            return best[1]
        if len(tok) < 6:
            return None
        # Two edits: words sharing the first two letters, by edit distance then frequency.
        ranked: tuple[int, int, str] | None = None
        for term, doc in db.execute(
            "SELECT term, doc FROM fts_vocab WHERE term >= ? AND term < ? LIMIT 20000",
            (tok[:2], tok[:2] + "\U0010ffff"),
        ):
            d = _levenshtein(tok, term, 2)
            if d <= 2 and (ranked is None or (d, -doc) < (ranked[0], -ranked[1])):
                ranked = (d, doc, term)
        return None if ranked is None else ranked[2]

    def _to_candidates(
        self, scored: list[_Scored], pq: ParsedQuery, limit: int, window: int
    ) -> list[recall.Candidate]:
        """Order, fold lineage, and build full hits only for what will be shown."""
        for s in scored:
            demote = s.info.tagged or s.info.machine
            s.score = round(s.score * (recall.AUTOMATED_DEMOTION if demote else 1.0), 4)
        scored.sort(key=lambda s: (s.score, s.info.when or ""), reverse=True)
        out: list[recall.Candidate] = []
        shown: set[str] = set()
        kept = 0
        for s in scored:
            lineage = s.info.lineage
            key = lineage if lineage is not None else "\x00" + s.info.file
            if key in shown or kept >= limit:
                if key in shown:
                    out.append(recall.Candidate(self._light_hit(s), lineage))
                continue
            hit = self._full_hit(s, pq, window)
            if hit is None:
                continue
            shown.add(key)
            kept += 1
            out.append(recall.Candidate(hit, lineage))
        return out

    def _explain(self, s: _Scored, pq: ParsedQuery) -> JSONDict:
        demote = s.info.tagged or s.info.machine
        return {
            "ranking": "relevance",
            "terms": [pq.terms[i].label for i in sorted(s.matched)],
            "missing": [t.label for i, t in enumerate(pq.terms) if i not in s.matched],
            "phrase": s.phrase,
            "all_terms": s.all_terms,
            "bm25": round(s.bm25, 4),
            "best_message": round(s.best, 4),
            "matching_messages": s.messages,
            "boosts": {
                "phrase": PHRASE_BOOST if s.phrase else 1.0,
                "all_terms": ALL_TERMS_BOOST if s.all_terms else 1.0,
            },
            "demotion": recall.AUTOMATED_DEMOTION if demote else 1.0,
            "automated": "tagged" if s.info.tagged else ("machine-paced" if demote else None),
        }

    def _light_hit(self, s: _Scored) -> SessionHit:
        return SessionHit(
            session_id=s.info.session_id,
            when=s.info.when,
            score=s.score,
            anchor_index=s.anchor,
            source=self.source_kind,
            store=self.label,
        )

    def _full_hit(self, s: _Scored, pq: ParsedQuery, window: int) -> SessionHit | None:
        data = self._load_file(s.info.file)
        if data is None:
            return None
        messages = recall.project(data)
        if not messages:
            return None
        anchor = max(0, min(s.anchor, len(messages) - 1))
        text = content_text(messages[anchor].get("content"))
        hit = recall.build_hit(
            data,
            messages,
            anchor=anchor,
            score=s.score,
            snippet=recall.make_snippet(text, pq.words, pq.all_tokens),
            window=window,
            automated=s.info.tagged or s.info.machine,
            source=self.source_kind,
            store=self.label,
            explain=self._explain(s, pq),
        )
        hit.project = _project_of(data)
        return hit

    # ------------------------------------------------------------------ misc

    def iter_index_sessions(self) -> Iterator[tuple[str, str]]:
        """(session id, file name) of every indexed session."""
        yield from self._rows("SELECT session_id, file FROM sessions ORDER BY sid")
