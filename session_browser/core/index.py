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
    ``common_terms``: the message counts of the frequent words (FTS5 counts a word by
    reading its whole posting list; these are taken once, at the end of a first build).
    ``meta``: settings, and ``scan_fp``, the fingerprint of the directory scan the index
    reflects (removed by every change, kept only after a complete pass).
    Without FTS5 (or with ``fts=False``) the same tables are kept without ``fts`` and the
    search runs ``LIKE`` over a folded copy of the text.

Freshness
    :meth:`SqliteSessionStore.reconcile` compares every ``*.json`` file's identity with the
    index, parses only new or changed files and drops deleted ones. Files are written in
    batches, each inside one ``BEGIN IMMEDIATE`` transaction that re-checks what is there, so
    two processes reconciling at once never index a file twice. Writes made through this
    store update the index in the same call. Two shortcuts keep this cheap on a large dir:
    when the scan is exactly the one the last complete pass indexed (same fingerprint, and no
    change to the index since), nothing is compared (reopening an up-to-date index costs
    one ``stat`` per file); and after a first pass, a :class:`DirWatch` (inotify) names the
    files that changed, so a later reconcile stats only those (a full pass again when the
    watch lost events, or every :data:`FULL_PASS_INTERVAL` seconds for what inotify cannot
    see, such as changes made on another machine to a network dir).
    A first build parses in the calling thread, writes a few statements per batch of
    files (FTS5 reads the new rows straight from ``messages``), turns FTS5's automerge off
    while rows stream in and merges everything into one segment at the end.

Relevance ranking (``ranking="relevance"``)
    Candidates are bounded whatever the words: the newest messages holding every term, the
    messages of the rarest terms (document frequency from ``common_terms``/``fts_vocab``),
    so a very common word never costs its whole posting list, and when that finds fewer
    sessions than asked for, the newest messages with any term. Each candidate message gets
    a BM25 score (k1=1.2, b=0.4, length in characters relative to the mean, damped as
    ``1 + ln r`` above it so a long message holding every word is not outranked by a short
    one holding one), x1.5 when the query's words occur as a phrase, x1.25 when one
    message holds every term. Term counts come from substring search plus a check of the
    neighbouring characters (exactly the index's tokens, without tokenising the text).
    A session scores its best message plus a little of its others, times how much of the
    query (idf-weighted) the session covers (the other messages of the best sessions are
    looked up for missing words, unless even full coverage could not lift a session among
    the results). Scores are rounded to 4 digits so near-ties fall to the newest session.
    Sessions that really are automated (tagged, or machine-paced: many messages at
    near-constant sub-10 s gaps) are multiplied by 0.25; continuations sharing a lineage
    key fold into their best hit.
    Common words: a term whose tokens are all English stopwords (:data:`STOPWORDS`), or
    held by more than 10% of the messages (:data:`COMMON_SHARE`, from an index of 50
    messages up), is common. When a query mixes common and rarer terms, a session must hold
    one of the rarer ones to be a hit, and the common ones weigh x0.25 (idf, in the score
    and the coverage); a query of common words only keeps them all. ``explain`` lists them
    under ``common``.
    A query of filters only (no words) lists every session with a message passing the
    filters (and none holding an excluded word), newest first: the score is
    ``1 / (1 + age in days)`` of its latest matching message, where the hit is anchored;
    no automated demotion.
    ``matched_sessions`` counts the sessions that are hits over the whole index, not only
    the bounded candidates: filter-only, every session passing the filters; with words,
    the sessions with a message passing the filters that holds a rarer term (any term when
    all are common) and no excluded term, counted with FTS5 while that reads at most
    :data:`COUNT_BUDGET` postings (beyond, the scored candidates, a lower bound); plus the
    not-yet-indexed files scanned.
    Passing shared :class:`CorpusStats` (as a group of stores does) scores with collection
    statistics summed over several indexes, so their scores can be ranked together.

Other formats
    The file-level reads are hooks (``_scan_files``, ``_before_parse``, ``_parse_file``,
    ``_load_file``, ``_classic_order``, ``_classic_candidate``, ``_demotion_flags``), so a
    store over another agent's files reuses all of the above:
    :class:`~session_browser.core.pi_index.PiIndexStore` indexes Pi JSONL sessions.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import itertools
import logging
import math
import os
import random
import re
import sqlite3
import stat
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Linux/macOS
    fcntl = None  # type: ignore[assignment]

from . import paths, recall
from .files import (
    MAX_SESSION_BYTES,
    FileIdentity,
    iter_session_files,
    read_json,
)
from .model import (
    JSONDict,
    SessionHit,
    SessionSummary,
    content_text,
    copy_json,
    finite_float,
    stored_epoch,
)
from .query import (
    NOTHING_SEARCHABLE,
    ParsedQuery,
    QueryError,
    Term,
    fold,
    fts_expr,
    like_pattern,
    parse_query,
    tokenize,
    why_empty,
)
from .store import DefaultSessionStore

log = logging.getLogger("session_browser.index")

# PRAGMA user_version; any other value rebuilds the index. 6: titles are the first user
# message before the agent name, and the agent is stored as recall.agent_of says.
SCHEMA_VERSION = 6
RANKINGS = ("relevance", "classic")
RECONCILE_MODES = ("sync", "background", "none")
SORTS = ("updated", "created", "size")

BM25_K1 = 1.2
BM25_B = 0.4
PHRASE_BOOST = 1.5
ALL_TERMS_BOOST = 1.25
RARE_DF = 1000  # a term at most this frequent generates candidates
COMMON_DF = 300  # words in this many messages or more have their count kept in common_terms
DRIVER_BUDGET = 300  # rarer terms are added as drivers while their summed df stays under this
CANDIDATE_LIMIT = 400  # newest candidate messages taken from the drivers
ALL_TERMS_LIMIT = 150  # newest messages holding every term (taken whatever their frequency)
FILL_LIMIT = 100  # newest messages with any other term, when too few sessions were found
COMMON_LIMIT = 200  # newest messages taken when every term is common
SMALL_SESSION_CHARS = 20_000  # a session this short is read whole to look for missing terms
PER_SESSION = 8  # candidate messages taken at most from one session (per candidate read)
COVERAGE_CHECK = 25  # top sessions whose missing terms are looked up in their other messages
SCORE_TEXT_CHARS = 50_000  # characters of one message folded at a time by the scorer
SCORE_CUT_SEARCH = 2_000  # ... cut at the first whitespace this far past that (words stay whole)
PART_CHARS = 1 << 20  # a longer message is stored as parts of about this many characters
COMMON_SHARE = 0.1  # a word in more than this share of the messages is common
COMMON_MIN_MESSAGES = 50  # ... counted only in an index of at least this many messages
COMMON_WEIGHT = 0.25  # their idf is multiplied by this when the query has rarer words
COUNT_BUDGET = 3_000  # postings read at most to count the matched sessions exactly
# Words that never make a session a hit on their own when the query has rarer ones.
_STOPWORD_TEXT = """
    a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers him his how i if in into is it its
    just me more most my no nor not now of off on once only or other our ours out over own
    same she should so some such than that the their theirs them then there these they this
    those through to too under until up very was we were what when where which while who
    whom why will with would you your yours"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_READS_SESSIONS = re.compile(r"\bs\.")  # a filter clause reading a sessions column
MACHINE_MIN_MESSAGES = 8
MACHINE_MAX_GAP = 10.0
BATCH_FILES = 500
HIT_CACHE_FILES = 64  # parsed session files kept for building hits
HIT_CACHE_BYTES = 8 << 20  # ... and at most this many bytes of their JSON
WATCH_MIN_FILES = 1000  # from this many files, a reconcile after the first one uses a DirWatch
FULL_PASS_INTERVAL = 60.0  # seconds after which a reconcile stats every file again anyway
IN_CHUNK = 500  # names per ``IN (...)`` list
BULK_AUTOMERGE = 0  # FTS5 'automerge' while a first build streams rows in
PENDING_SCAN_FILES = 100  # newest not-yet-indexed files a search reads while a build runs
OPEN_BUSY_SECONDS = 30.0  # how long opening retries while other processes set the index up

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
    # "full": every file stat'ed and compared; "changes": only the files a DirWatch named;
    # "unchanged": every file stat'ed, and the scan is the one the last full pass indexed.
    scope: str = "full"

    def as_dict(self) -> JSONDict:
        return {
            "scope": self.scope,
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
    matched_exact: bool = True  # False: matched_sessions is a lower bound ("at least")
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
            "matched_exact": self.matched_exact,
            "elapsed_ms": round(self.elapsed_ms, 3),
            "progress": list(self.progress),
            "warnings": list(self.warnings),
            "error": self.error,
            "results": [h.to_json() for h in self.hits],
        }


@dataclass
class Relevance:
    """One store's relevance candidates and how they were found (what a group merges)."""

    candidates: list[recall.Candidate] = field(default_factory=list)
    matched: int = 0  # sessions matched
    exact: bool = True  # False: ``matched`` is a lower bound (too many postings to count)
    fuzzy: bool = False
    warnings: list[str] = field(default_factory=list)
    mode: str = "index"


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


def _timestamps(messages: Sequence[JSONDict]) -> list[float]:
    out: list[float] = []
    for m in messages:
        ts = finite_float(m.get("timestamp"))
        if ts is not None:
            out.append(ts)
    return out


_SURROGATES = re.compile("[\ud800-\udfff]")


def _clean(value: Any) -> Any:
    """``value`` with lone surrogates (which SQLite cannot store) replaced by U+FFFD, for
    the indexed copy only (the file is never changed); other values as they are."""
    if isinstance(value, str):
        return _SURROGATES.sub("\ufffd", value)
    return value


def _safely(default: Any, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, or ``default`` when one session's content makes it raise."""
    try:
        return fn(*args)
    except Exception:  # a value that cannot be used is treated as absent
        return default


def _reason(exc: BaseException) -> str:
    """A one-line reason for skipping a file, from the exception its content raised."""
    text = _clean(str(exc)).replace("\n", " ")
    return f"unusable session: {type(exc).__name__}: {text}"[:300]


def machine_paced(messages: Sequence[JSONDict]) -> bool:
    """True for sessions written by a machine: many messages, all arriving within seconds.

    Needs at least 8 timestamps spanning a second or more, and 90% of the gaps between
    consecutive messages under 10 s. A person's chat, however quick the replies, has the
    person's own turns in it (tens of seconds apart), so it is not caught; the documented
    rate rule (more than 60 messages an hour) is, which is why relevance does not use it.
    """
    return _paced(_timestamps(messages))


def _paced(stamps: list[float]) -> bool:
    """:func:`machine_paced` over the finite timestamps of a session's messages."""
    if len(stamps) < MACHINE_MIN_MESSAGES:
        return False
    stamps = sorted(stamps)
    if stamps[-1] - stamps[0] < 1.0:
        return False
    gaps = sorted(b - a for a, b in itertools.pairwise(stamps))
    p90 = gaps[int(0.9 * (len(gaps) - 1))]
    return p90 < MACHINE_MAX_GAP


def scan_dir(session_dir: Path) -> dict[str, tuple[int, int, int]]:
    """(size, mtime_ns, inode) of every ``*.json`` regular file of ``session_dir`` (the files
    :func:`iter_session_files` picks), by name; no ``Path`` objects, and every ``stat`` is
    relative to an open descriptor of the dir (no path walk per file), so 30k files stay fast.
    """
    out: dict[str, tuple[int, int, int]] = {}
    try:
        fd = os.open(session_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return out
    try:
        with os.scandir(fd if os.scandir in os.supports_fd else session_dir) as entries:
            for entry in entries:
                name = entry.name
                if name[-5:] != ".json" or name[0] == ".":
                    continue
                try:
                    st = entry.stat()
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    out[name] = (st.st_size, st.st_mtime_ns, st.st_ino)
    except OSError:
        return out
    finally:
        os.close(fd)
    return out


def scan_fingerprint(files: dict[str, tuple[int, int, int]]) -> str:
    """A digest of a scan (names, identities and their order): equal digests, equal scans."""
    text = repr(files).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(text, digest_size=20).hexdigest()


def stat_names(session_dir: Path, names: Iterable[str]) -> dict[str, tuple[int, int, int] | None]:
    """The :func:`scan_dir` identity of each of ``names`` (None: not a session file now)."""
    out: dict[str, tuple[int, int, int] | None] = {}
    for name in names:
        ident: tuple[int, int, int] | None = None
        if name.endswith(".json") and not name.startswith(".") and "/" not in name:
            try:
                st = os.stat(os.path.join(session_dir, name))
            except (OSError, ValueError):
                st = None
            if st is not None and stat.S_ISREG(st.st_mode):
                ident = (st.st_size, st.st_mtime_ns, st.st_ino)
        out[name] = ident
    return out


class DirWatch:
    """Which entries of one directory changed since the last :meth:`drain` (Linux inotify).

    Lets a reconcile after the first one stat only the files that changed instead of every
    file. It only ever reads the directory. :meth:`drain` returns None when events may
    have been lost (queue overflow, the dir itself moved or deleted, too many names), and
    the caller then does a full pass. Unavailable (other systems, no inotify instances
    left): :meth:`create` returns None.
    """

    _IN_MODIFY = 0x2
    _IN_ATTRIB = 0x4
    _IN_CLOSE_WRITE = 0x8
    _IN_MOVED_FROM = 0x40
    _IN_MOVED_TO = 0x80
    _IN_CREATE = 0x100
    _IN_DELETE = 0x200
    _IN_DELETE_SELF = 0x400
    _IN_MOVE_SELF = 0x800
    _IN_UNMOUNT = 0x2000
    _IN_Q_OVERFLOW = 0x4000
    _IN_IGNORED = 0x8000
    _IN_ONLYDIR = 0x1000000
    _LOST = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_UNMOUNT | _IN_Q_OVERFLOW | _IN_IGNORED
    MAX_NAMES = 2000  # beyond this a full pass is as cheap and simpler

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd
        self._lock = threading.Lock()

    @classmethod
    def create(cls, path: Path) -> DirWatch | None:
        if not sys.platform.startswith("linux"):
            return None
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            init1 = libc.inotify_init1
            add_watch = libc.inotify_add_watch
        except (OSError, AttributeError):
            return None
        fd = int(init1(os.O_NONBLOCK | os.O_CLOEXEC))
        if fd < 0:
            return None
        mask = (
            cls._IN_MODIFY
            | cls._IN_ATTRIB
            | cls._IN_CLOSE_WRITE
            | cls._IN_MOVED_FROM
            | cls._IN_MOVED_TO
            | cls._IN_CREATE
            | cls._IN_DELETE
            | cls._IN_DELETE_SELF
            | cls._IN_MOVE_SELF
            | cls._IN_ONLYDIR
        )
        if int(add_watch(fd, os.fsencode(path), mask)) < 0:
            os.close(fd)
            return None
        return cls(fd)

    def drain(self) -> set[str] | None:
        """Names with events since the last call; None when a full pass is needed."""
        with self._lock:
            if self._fd is None:
                return None
            names: set[str] = set()
            lost = False
            while True:
                try:
                    buf = os.read(self._fd, 65536)
                except BlockingIOError:
                    break
                except OSError:
                    lost = True
                    break
                if not buf:
                    break
                pos = 0
                while pos + 16 <= len(buf):
                    _wd, mask, _cookie, size = struct.unpack_from("iIII", buf, pos)
                    raw = buf[pos + 16 : pos + 16 + size].split(b"\0", 1)[0]
                    pos += 16 + size
                    if mask & self._LOST:
                        lost = True
                    if raw:
                        names.add(os.fsdecode(raw))
            if lost:
                self._close()
                return None
            return None if len(names) > self.MAX_NAMES else names

    def _close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    @property
    def alive(self) -> bool:
        return self._fd is not None

    def close(self) -> None:
        with self._lock:
            self._close()


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


_TABLES = frozenset({"meta", "sessions", "messages", "skipped", "common_terms"})
_SESSION_COLS = (
    "session_id, title, when_, created, updated_ts, message_count, archived_count, "
    "source, agent, tagged, rate_auto, machine, lineage, project"
)


def _extract(file: str, identity: FileIdentity, data: JSONDict, *, folded: bool) -> _Parsed:
    """The index rows of one parsed session dict (one pass over its messages)."""
    if not data.get("session_id"):
        data["session_id"] = Path(file).stem
    session_id = str(data["session_id"])
    active = data.get("messages")
    archived = data.get("archived_messages")
    old = [m for m in archived if isinstance(m, dict)] if isinstance(archived, list) else []
    new = [m for m in active if isinstance(m, dict)] if isinstance(active, list) else []
    messages = old + new  # the projection's entries (without the ``archived`` copies)
    n_old = len(old)
    rows: list[tuple[int, str, int, float | None, str]] = []
    stamps: list[float] = []
    chars = 0
    for idx, msg in enumerate(messages):
        tsf = finite_float(msg.get("timestamp"))
        if tsf is not None:
            stamps.append(tsf)
        content = msg.get("content")
        text = content if isinstance(content, str) else _safely("", content_text, content)
        if not text:
            continue
        role = msg.get("role", "")
        rows.append(
            (
                idx,
                role if isinstance(role, str) else str(role),
                1 if idx < n_old or msg.get("archived") else 0,
                tsf,
                fold(text) if folded else text,
            )
        )
        chars += len(text)
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    # Each derived value on its own: one that the content makes unusable is left out,
    # not the whole session.
    tagged = _safely(False, recall.tagged_automated, data)
    rate = _safely(None, recall.message_rate, messages)
    rate_auto = rate is not None and rate > recall.AUTOMATED_RATE_THRESHOLD
    when = _safely(None, recall.when_of, data)
    when = when if isinstance(when, str) else None
    created = data.get("created_at")
    project = _safely(None, recall.project_of, data)
    row = (
        session_id,
        _safely(session_id, recall.session_title, data, messages),
        when,
        created if isinstance(created, str) else None,
        stored_epoch(when),
        len(new),
        n_old,
        _safely(None, recall.source_of, data),
        _safely(None, recall.agent_of, data),
        1 if tagged else 0,
        1 if rate_auto else 0,
        1 if _paced(stamps) else 0,
        _safely(None, recall.lineage_key, data),
        project,
    )
    return _Parsed(file, identity, session_id, row, rows, chars)


def _cleaned(item: _Parsed) -> _Parsed:
    """``item`` with lone surrogates replaced in every indexed text (see :func:`_clean`)."""
    item.session_id = _clean(item.session_id)
    item.row = tuple(_clean(v) for v in item.row)
    item.messages = [
        (idx, _clean(role), archived, ts, _clean(text))
        for idx, role, archived, ts, text in item.messages
    ]
    return item


# The non-ASCII characters whose ``str.lower()`` holds ASCII letters (Kelvin sign -> "k",
# capital I with dot above -> "i" + U+0307): SQLite's LIKE does not fold them, so the classic
# pre-filter admits the messages holding them separately.
_LOWERS_TO_ASCII: tuple[tuple[str, str], ...] = (("\u0130", "i"), ("\u212a", "k"))


def _private_file(path: Path) -> None:
    """Make sure ``path`` exists as a 0600 file (SQLite then creates its ``-wal`` and
    ``-shm`` with the same mode). An existing file is never opened here: closing any
    descriptor of a database file drops the POSIX locks SQLite holds on it in this process."""
    paths.ensure_private_dir(path.parent)
    try:
        fd = os.open(
            path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600
        )
    except FileExistsError:
        with contextlib.suppress(OSError):
            st = os.stat(path)
            if stat.S_IMODE(st.st_mode) & 0o077 and st.st_uid == os.getuid():
                os.chmod(path, 0o600)  # made by an older version under a wider umask
        return
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
    finally:
        os.close(fd)


def _lock_file(path: Path) -> int:
    """An open descriptor of the 0600 lock file ``path`` (created when missing)."""
    paths.ensure_private_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    with contextlib.suppress(OSError):
        os.fchmod(fd, 0o600)
    return fd


def _close_quietly(db: sqlite3.Connection | None) -> None:
    """Close ``db`` (if any), ignoring a failure to do so."""
    if db is not None:
        with contextlib.suppress(sqlite3.Error):
            db.close()


def _read_parse(path: Path, ident: tuple[int, int, int], *, folded: bool) -> _Parsed | str:
    """Parse one file into rows, or the reason it cannot be indexed."""
    try:
        # Capped: one huge file is skipped (with its size in the reason), never read whole.
        data = read_json(path, max_bytes=MAX_SESSION_BYTES)
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    except (ValueError, RecursionError) as exc:
        return f"not valid JSON: {str(exc)[:200]}"
    if not isinstance(data, dict):
        return f"root is {type(data).__name__}, not an object"
    try:
        return _extract(path.name, FileIdentity(*ident), data, folded=folded)
    except Exception as exc:  # one file's content never stops the others
        return _reason(exc)


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
    chars: int | None = None  # characters of all its messages (None: not known)


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
    common: tuple[str, ...] = ()  # the query's common words, when it has rarer ones too


def _cuts(text: str, size: int) -> list[tuple[int, int]]:
    """Where to cut ``text`` into pieces of about ``size`` characters, each cut at a
    whitespace when there is one soon after (so no word is split; only a phrase across a
    cut is not seen as one): (start, end) offsets."""
    n = len(text)
    out: list[tuple[int, int]] = []
    start = 0
    while start < n:
        end = start + size
        if end >= n:
            out.append((start, n))
            break
        cut = -1
        for k in range(end, min(n, end + SCORE_CUT_SEARCH)):
            if text[k].isspace():
                cut = k
                break
        end = cut if cut > 0 else end
        out.append((start, end))
        start = end
    return out


def _pieces(text: str) -> Iterator[str]:
    """``text`` in pieces of about :data:`SCORE_TEXT_CHARS` (see :func:`_cuts`)."""
    if len(text) <= SCORE_TEXT_CHARS:
        yield text
        return
    for start, end in _cuts(text, SCORE_TEXT_CHARS):
        yield text[start:end]


def _is_common(term: Term, df: int, total: int) -> bool:
    """A term too common to make a session a hit on its own: every token an English
    stopword (:data:`STOPWORDS`), or held by more than :data:`COMMON_SHARE` of the messages
    (by document frequency, when the index counts it)."""
    if term.tokens and not term.prefix and all(t in STOPWORDS for t in term.tokens):
        return True
    return total >= COMMON_MIN_MESSAGES and df > COMMON_SHARE * total


def _recency(ts: float | None, now: float) -> float:
    """The score of a filter-only hit: 1 / (1 + age in days) of its latest matching message
    (0 without any time), so newer ranks first, also across stores."""
    if ts is None:
        return 0.0
    return 1.0 / (1.0 + max(0.0, now - ts) / 86400.0)


def _length_ratio(ratio: float) -> float:
    """A message's length relative to the average, damped above it (``1 + ln r``): one long
    message (a pasted log, a burst of chat lines joined) holding every query word must not
    lose to a short one holding a single word, as a linear length norm makes it."""
    return ratio if ratio <= 1.0 else 1.0 + math.log(ratio)


class _Scorer:
    """Per-message BM25 plus boosts, aggregated per session."""

    def __init__(self, pq: ParsedQuery, dfs: Sequence[int], total: int, avg_chars: float) -> None:
        self.pq = pq
        self.terms = pq.terms
        n = max(total, 1)
        # A prefix's count adds up its words' counts and can pass the number of messages:
        # clamped, its weight stays positive (a negative score reads as "excluded").
        self.idf = [math.log(1.0 + (n - min(df, n) + 0.5) / (min(df, n) + 0.5)) for df in dfs]
        self.idf_total = sum(self.idf) or 1.0
        # Common words (see :func:`_is_common`): when the query mixes them with rarer words, a
        # session must hold one of the rarer ones; a query of common words only keeps all.
        self.common = [_is_common(t, df, n) for t, df in zip(self.terms, dfs, strict=True)]
        rare = {i for i, c in enumerate(self.common) if not c}
        self.rare: set[int] = rare if len(rare) < len(self.terms) else set()
        if self.rare:  # ... and their words weigh less, in the score and the coverage
            self.idf = [w * (1.0 if i in rare else COMMON_WEIGHT) for i, w in enumerate(self.idf)]
            self.idf_total = sum(self.idf) or 1.0
        self.avg = max(avg_chars, 1.0)
        self.common_labels: tuple[str, ...] = (
            tuple(t.label for i, t in enumerate(self.terms) if self.common[i]) if self.rare else ()
        )
        words = pq.all_tokens
        self.phrase_term = (
            Term(tokens=words, raw=" ".join(words))
            if len(self.terms) > 1 and len(words) > 1
            else None
        )

    def message(self, text: str) -> tuple[float, set[int], bool]:
        """(score, matched term numbers, phrase) of one message; excluded -> -1.

        The whole message is read (a word deep in a long paste counts), folded a piece at
        a time (:func:`_pieces`), so memory stays bounded whatever its length."""
        tfs = [0] * len(self.terms)
        phrase = False
        for piece in _pieces(text):
            folded = fold(piece)
            for ex in self.pq.excluded:
                if ex.count_in(folded):
                    return -1.0, set(), False
            here = 0
            for i, term in enumerate(self.terms):
                tf = term.count_in(folded)
                if tf:
                    tfs[i] += tf
                    here += 1
            if self.phrase_term is not None and not phrase and here == len(self.terms):
                phrase = self.phrase_term.count_in(folded) > 0
        if not self.terms:
            return 1.0, set(), False
        norm = 1.0 - BM25_B + BM25_B * _length_ratio(min(len(text), SCORE_TEXT_CHARS) / self.avg)
        score = 0.0
        matched: set[int] = set()
        for i, tf in enumerate(tfs):
            if tf:
                matched.add(i)
                score += self.idf[i] * (tf * (BM25_K1 + 1.0)) / (tf + BM25_K1 * norm)
        phrase = phrase and len(matched) == len(self.terms)
        return score, matched, phrase

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
            raw, hit_terms, phrase = self.message(msg.text)
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
        if self.rare and not matched & self.rare:
            return None  # only the query's common words: not a hit
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
            common=self.common_labels,
        )


def _recent_scored(info: _SessionInfo, score: float, anchor: int, text: str, n: int) -> _Scored:
    """A filter-only hit: scored by recency, anchored at its latest matching message."""
    return _Scored(
        info=info,
        score=score,
        anchor=anchor,
        best=score,
        matched=set(),
        phrase=False,
        all_terms=False,
        bm25=0.0,
        messages=n,
        anchor_text=text,
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


class _EitherEvent(threading.Event):
    """Set when any of ``events`` is set (a caller's cancel beside the store's own)."""

    def __init__(self, *events: threading.Event) -> None:
        super().__init__()
        self._events = events

    def is_set(self) -> bool:
        return super().is_set() or any(e.is_set() for e in self._events)


class SqliteSessionStore(DefaultSessionStore):
    """A :class:`DefaultSessionStore` whose reads go through an SQLite FTS5 index."""

    # PraisonAI's name for the version of what the index holds; ours is the schema version.
    INDEX_CONTENT_VERSION = SCHEMA_VERSION

    def __init__(
        self,
        session_dir: str | os.PathLike[str] | None = None,
        db_path: str | os.PathLike[str] | None = None,
        *,
        reconcile: str = "sync",
        fts: bool = True,
        **store_kwargs: Any,
    ) -> None:
        super().__init__(session_dir, **store_kwargs)
        if reconcile not in RECONCILE_MODES:
            raise ValueError(f"reconcile must be one of {RECONCILE_MODES}, not {reconcile!r}")
        if db_path is None:
            self.db_path: str = str(default_db_path(self.session_dir.path))
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
        self._thread: threading.Thread | None = None
        self._cancel = threading.Event()
        self._stats: tuple[int, float] | None = None
        self._df_cache: dict[str, int] = {}
        self._watch: DirWatch | None = None
        self._full_at: float | None = None  # monotonic time of the last full pass
        self._pass_at: float | None = None
        self._scan_fp: tuple[str, int] | None = None  # (fingerprint, data_version) of a pass
        self._scope = "full"
        self._dirty = False  # the index changed during this reconcile
        self._db_token: str | None = None  # which database file the last full pass saw
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
            self._start(reconcile)
        except BaseException:  # a store that fails to open leaves nothing open behind
            self.close()
            raise

    def _start(self, reconcile: str) -> None:
        if self.broken is None:
            if reconcile == "sync":
                self.last_report = self.reconcile()
            elif reconcile == "background":
                self.start_reconcile()

    # ------------------------------------------------------------------ connection

    _watchable = True  # a flat dir a DirWatch can follow (Pi's tree is not)

    def _connect(self) -> sqlite3.Connection:
        if not self.memory:
            _private_file(Path(self.db_path))
            for suffix in ("-wal", "-shm"):  # left by an older version with a wider mode
                with contextlib.suppress(OSError):
                    os.chmod(self.db_path + suffix, 0o600)
        db = sqlite3.connect(
            self.db_path, timeout=30.0, check_same_thread=False, isolation_level=None
        )
        try:
            db.execute("PRAGMA busy_timeout=30000")
            if not self.memory:
                db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA temp_store=MEMORY")
            db.execute("PRAGMA cache_size=-32000")
            db.execute("PRAGMA mmap_size=0")
        except BaseException:
            _close_quietly(db)
            raise
        return db

    def _open(self, *, reset: bool = False) -> None:
        try:
            self._hold_open_lock()
            self._db = self._open_checked(reset=reset)
            self._db_ino = self._file_ino()
        except (sqlite3.Error, OSError, _Broken) as exc:
            self._set_broken(f"the search index cannot be used ({exc}); searching the files")

    def _set_broken(self, message: str) -> None:
        self.broken = message
        if message not in self.warnings:
            self.warnings.append(message)
        log.warning("%s: %s", self.db_path, message)

    def _file_ino(self) -> int | None:
        """The inode of the database file now (None: in memory, or no file there)."""
        if self.memory:
            return None
        try:
            return os.stat(self.db_path).st_ino
        except OSError:
            return None

    def _hold_open_lock(self) -> None:
        """Hold a shared lock on ``<db>.lock`` while this store has the database open, so a
        process that finds the file corrupt deletes it only when nobody else holds it open."""
        if self.memory or self._lock_fd is not None or fcntl is None:
            return
        fd = _lock_file(Path(self.db_path + ".lock"))
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
        except BaseException:
            os.close(fd)
            raise
        self._lock_fd = fd

    def _release_open_lock(self) -> None:
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def _open_checked(self, *, reset: bool = False) -> sqlite3.Connection:
        """A connection to the database with our schema in it.

        The schema is checked and, when missing or another version, (re)created in place,
        all inside one ``BEGIN IMMEDIATE`` transaction: processes opening a fresh index at
        once take turns, the first creates it and the others find it made. A wrong schema
        is dropped and recreated inside the same file, never by deleting the file, since
        other processes may have it open. Only a file SQLite cannot read as a database is
        deleted, and only when no other store holds it open (:meth:`_discard_db`).
        """
        deadline = time.monotonic() + OPEN_BUSY_SECONDS
        attempt = 0
        while attempt < 2:
            db = None
            try:
                db = self._connect()
                self._ensure_schema(db, reset=reset)
                return db
            except sqlite3.OperationalError as exc:
                _close_quietly(db)
                # Switching a fresh file to WAL, or a lock upgrade that could deadlock,
                # fails at once without waiting: another process is setting it up, retry.
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.005 + 0.02 * random.random())
                continue
            except sqlite3.DatabaseError as exc:
                _close_quietly(db)
                attempt += 1
                if attempt > 1:
                    raise
                log.warning("index %s is unusable (%s); rebuilding it", self.db_path, exc)
            except BaseException:  # whatever else fails, the connection is not kept open
                _close_quietly(db)
                raise
            if not self._discard_db():
                raise _Broken("the index file is damaged and in use by another process")
        raise _Broken("could not create the index")

    def _ensure_schema(self, db: sqlite3.Connection, *, reset: bool = False) -> None:
        """Check (and if needed create) the schema in one write transaction."""
        db.execute("BEGIN IMMEDIATE")
        try:
            if reset or not self._schema_ok(db):
                log.info("index %s has another version or layout; rebuilding", self.db_path)
                self._drop_all(db)
                if not self._schema_ok(db):
                    raise _Broken("could not create the index")
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise

    @staticmethod
    def _drop_all(db: sqlite3.Connection) -> None:
        """Empty the database (inside the caller's transaction): virtual tables first (they
        drop their own shadow tables), then every other table of ours."""
        rows = db.execute("SELECT name, sql FROM sqlite_master WHERE type='table'").fetchall()
        for name, sql in rows:
            if str(sql or "").upper().startswith("CREATE VIRTUAL TABLE"):
                db.execute(f'DROP TABLE IF EXISTS "{name}"')
        for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
        ).fetchall():
            db.execute(f'DROP TABLE IF EXISTS "{name}"')
        if db.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='sqlite_sequence'"
        ).fetchone():
            db.execute("DELETE FROM sqlite_sequence")
        db.execute("PRAGMA user_version=0")

    def _discard_db(self) -> bool:
        """Delete a database file SQLite cannot use, with its ``-wal``/``-shm``, but only
        when no other store (in any process) has it open: True when it was deleted.

        Deleting a file others hold open would leave them writing into a deleted file (and
        sharing a ``-wal`` with the new one); they would silently miss every later write.
        """
        if self.memory:
            return True
        fd = self._lock_fd
        if fd is not None and fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                with contextlib.suppress(OSError):
                    fcntl.flock(fd, fcntl.LOCK_SH)  # a failed upgrade may drop the lock
                log.warning("index %s is damaged but open elsewhere; not deleting", self.db_path)
                return False
        try:
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.db_path + suffix)
        finally:
            if fd is not None and fcntl is not None:
                with contextlib.suppress(OSError):
                    fcntl.flock(fd, fcntl.LOCK_SH)
        return True

    def _schema_ok(self, db: sqlite3.Connection) -> bool:
        """True when ``db`` holds our current schema (creating it in an empty db). Runs
        inside the transaction of :meth:`_ensure_schema`."""
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if version == 0 and not (tables - {"sqlite_sequence"}):
            self._create(db)
            return True
        if version != SCHEMA_VERSION or not tables >= _TABLES:
            return False
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        built_fts = meta.get("fts") == "1"
        if built_fts != (self.want_fts and self._fts_available(db)):
            return False
        if built_fts and not {"fts", "fts_vocab"} <= tables:
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
            CREATE TABLE IF NOT EXISTS common_terms(
                term TEXT PRIMARY KEY, doc INTEGER NOT NULL) WITHOUT ROWID;
            """
        for statement in ddl.split(";"):
            if statement.strip():
                db.execute(statement)
        if use_fts:
            db.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(text, content='messages', "
                "content_rowid='id', tokenize='unicode61 remove_diacritics 2', columnsize=0)"
            )
            db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS fts_vocab USING fts5vocab(fts, 'row')")
        db.executemany(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
            [
                ("fts", "1" if use_fts else "0"),
                ("session_dir", str(self.session_dir)),
                ("created", str(time.time())),
            ],
        )
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
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
            self._release_open_lock()
        if self._watch is not None:
            self._watch.close()
            self._watch = None

    def __enter__(self) -> SqliteSessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        with contextlib.suppress(Exception):
            if self._db is not None:
                self._db.close()
        with contextlib.suppress(Exception):
            if self._watch is not None:
                self._watch.close()
        with contextlib.suppress(Exception):
            self._release_open_lock()

    # ------------------------------------------------------------------ reconcile

    @property
    def progress(self) -> tuple[int, int]:
        """(done, total) files of the reconcile in progress (or the last one)."""
        return self._progress

    @property
    def indexing(self) -> bool:
        return self._indexing

    def start_reconcile(self, *, cancel: threading.Event | None = None) -> threading.Thread:
        """Run :meth:`reconcile` in a daemon thread (searches keep answering meanwhile).

        Setting ``cancel`` (as :meth:`close` does) stops it after the batch in hand; the
        files indexed so far stay indexed and the next reconcile picks up the rest.
        """
        with self._state_lock:
            if self._thread is not None and self._thread.is_alive():
                return self._thread
            self._cancel.clear()
            self._indexing = True
            stop = self._cancel if cancel is None else _EitherEvent(self._cancel, cancel)

            def run() -> None:
                try:
                    self.last_report = self.reconcile(cancel=stop)
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
        return scan_dir(self.session_dir.path)

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
            data = read_json(path, max_bytes=MAX_SESSION_BYTES)
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
        self, data: JSONDict, parsed: recall.ClassicQuery, window: int, name: str
    ) -> recall.Candidate | None:
        return recall.classic_candidate(
            data, parsed, window=window, source=self.source_kind, store=self.label, file_name=name
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
        with self._reconcile_lock:  # one reconcile at a time per store (they share the watch)
            self._indexing = True
            self._dirty = False
            writer: sqlite3.Connection | None = None
            try:
                writer = self._writer()
                if writer is not self._db:
                    self._follow(writer)
                self._reconcile(writer, report, progress, cancel)
                if not report.cancelled:
                    self._full_at = self._pass_at
                    self._keep_fingerprint(writer)
            except sqlite3.DatabaseError as exc:
                self._on_db_error(exc)
            finally:
                if writer is not None and writer is not self._db:
                    with contextlib.suppress(sqlite3.Error):
                        writer.close()
                with self._state_lock:
                    self._pending.clear()
                    self._pending_order = []
                    self._pending_new = {}
                    self._stale_keys.clear()
                self._indexing = False
                if self._dirty:
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
                if self._discard_db():
                    self._open()
                else:
                    self._set_broken(
                        f"the search index is damaged ({exc}) and in use elsewhere; "
                        "searching the files"
                    )
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
        files, known, skipped, reasons, outside = self._survey(db)
        report.scope = self._scope
        if known is files:  # unchanged since the last complete pass (fingerprint)
            report.skipped.extend((name, reasons[name]) for name in skipped)
            report.unchanged = len(files) - len(skipped)
            self._progress = (0, 0)
            if progress is not None:
                progress(0, 0)
            return
        get = known.get
        changed = [(n, i) for n, i in files.items() if get(n) != i]
        report.unchanged = outside + len(files) - len(changed)
        todo: list[tuple[str, tuple[int, int, int]]] = []
        present = len(files)  # files with a row in ``known``
        for name, ident in changed:
            if name not in known:
                present -= 1
            if skipped.get(name) == ident:
                continue
            todo.append((name, ident))
        report.skipped.extend(
            (name, reasons[name]) for name, ident in skipped.items() if files.get(name) == ident
        )
        gone = [name for name in known if name not in files] if present < len(known) else []
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
                    self._changing(db)
                    for name in gone:
                        # Written (and indexed by its writer) after this pass's scan: the
                        # scan missed it, it is not gone.
                        if self._stat_tuple(name) is not None:
                            continue
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
        with self._state_lock:
            self._pending_order = [n for n, _ in todo]
            self._pending_new = {n: i for n, i in todo if n not in known}
        self._before_parse(db, todo)
        bulk = not known and total > BATCH_FILES
        if bulk:
            # A first build: nothing to lose if it stops half way (the next reconcile
            # finishes it), so no syncs, and FTS5 segments are merged once at the end
            # rather than again and again while the rows stream in.
            db.execute("PRAGMA synchronous=OFF")
            if self.has_fts:
                db.execute(f"INSERT INTO fts(fts, rank) VALUES('automerge', {BULK_AUTOMERGE})")
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
                if self.has_fts:
                    with self._write_lock:
                        db.execute("INSERT INTO fts(fts, rank) VALUES('automerge', 4)")
                db.execute("PRAGMA synchronous=NORMAL")
        if bulk and not report.cancelled and self.has_fts:
            # One segment: a term's rows in one place makes every later lookup several
            # times faster than over the many segments a bulk load leaves.
            with self._write_lock:
                db.execute("INSERT INTO fts(fts) VALUES('optimize')")
            self._note_common_terms(db)

    def _changing(self, db: sqlite3.Connection) -> None:
        """In a transaction about to change what is indexed: the stored scan fingerprint no
        longer describes the index, and cached statistics are stale."""
        db.execute("DELETE FROM meta WHERE key='scan_fp'")
        self._dirty = True

    def _follow(self, writer: sqlite3.Connection) -> None:
        """When the database file was replaced (rebuilt by another store), read from the new
        one too: the reading connection still has the old, deleted file open."""
        with self._lock:
            if self._db is None or self.broken is not None:
                return
            try:
                same = self._token(self._db) == self._token(writer)
            except sqlite3.Error:
                same = False
            if same:
                return
            self._reopen()

    def _reopen(self) -> None:
        """Close our connection and open the database path again, dropping its caches."""
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        self._db = None
        self._open()
        self._stats = None
        self._df_cache.clear()

    def _follow_file(self) -> None:
        """Reopen when the database path now names another file than the one we have open
        (deleted or replaced from outside), so no write goes into a file nobody reads."""
        if self.memory or self._db is None:
            return
        if self._file_ino() == self._db_ino:
            return
        log.info("index %s was replaced; reopening it", self.db_path)
        self._reopen()

    @staticmethod
    def _token(db: sqlite3.Connection) -> str | None:
        """What tells this database file from one rebuilt in its place (its creation)."""
        row = db.execute("SELECT value FROM meta WHERE key='created'").fetchone()
        return None if row is None else str(row[0])

    def _keep_fingerprint(self, db: sqlite3.Connection) -> None:
        """After a complete full pass: remember its scan's fingerprint, unless another
        connection changed the index meanwhile (then the next open compares everything)."""
        if self._scan_fp is None:
            return
        fp, version = self._scan_fp
        self._scan_fp = None
        with self._write_lock:
            db.execute("BEGIN IMMEDIATE")
            try:
                if db.execute("PRAGMA data_version").fetchone()[0] == version:
                    db.execute(
                        "INSERT OR REPLACE INTO meta(key, value) VALUES ('scan_fp', ?)", (fp,)
                    )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def _survey(
        self, db: sqlite3.Connection
    ) -> tuple[
        dict[str, tuple[int, int, int]],
        dict[str, tuple[int, int, int]],
        dict[str, tuple[int, int, int]],
        dict[str, str],
        int,
    ]:
        """What to compare: (files, indexed, skipped, skip reasons, indexed files not looked
        at).

        A full pass stats every file and reads every indexed identity. After one, when the
        dir is large, a :class:`DirWatch` names what changed since, and only those names
        are looked at (the others are as the last pass left them); a full pass runs again
        when the watch lost events or after :data:`FULL_PASS_INTERVAL`.
        """
        watch = self._watch
        names: set[str] | None = None
        token = self._token(db)
        if (
            watch is not None
            and self._full_at is not None
            and time.monotonic() - self._full_at < FULL_PASS_INTERVAL
            and token == self._db_token  # not another database (rebuilt meanwhile)
        ):
            names = watch.drain()
        self._db_token = token
        # Until this reconcile completes, the next one must stat every file again: the
        # names drained here are gone from the watch.
        self._pass_at, self._full_at = self._full_at, None
        self._scan_fp = None
        skipped: dict[str, tuple[int, int, int]] = {}
        reasons: dict[str, str] = {}
        if names is not None:
            idents = stat_names(self.session_dir.path, names)
            files = {n: i for n, i in idents.items() if i is not None}
            known: dict[str, tuple[int, int, int]] = {}
            listed = sorted(names)
            for start in range(0, len(listed), IN_CHUNK):
                chunk = listed[start : start + IN_CHUNK]
                marks = ",".join("?" * len(chunk))
                for f, size, mt, ino in db.execute(
                    f"SELECT file, size, mtime_ns, inode FROM sessions WHERE file IN ({marks})",
                    chunk,
                ):
                    known[f] = (size, mt, ino)
            for f, size, mt, ino, reason in db.execute(
                "SELECT file, size, mtime_ns, inode, reason FROM skipped"
            ):
                skipped[f] = (size, mt, ino)
                reasons[f] = reason
                if f not in names:
                    files[f] = (size, mt, ino)  # not touched since: still skipped as it is
            indexed = db.execute("SELECT count(*) FROM sessions").fetchone()[0]
            self._scope = "changes"
            return files, known, skipped, reasons, int(indexed) - len(known)
        if watch is not None:
            watch.close()
            self._watch = None
        started = time.monotonic()
        self._scope = "full"
        if self._watchable and self.watch_min_files >= 0:
            # Watch first, then scan: a change made during the scan is seen next time.
            self._watch = DirWatch.create(self.session_dir.path)
        files = self._scan_files()
        if self._watch is not None and len(files) < self.watch_min_files:
            self._watch.close()  # a small dir is scanned in no time: keep no watch
            self._watch = None
        self._pass_at = started
        if not self.memory:
            # The index is exactly as a complete pass over this very scan left it (and
            # nothing changed it since): no need to read and compare every identity.
            fp = scan_fingerprint(files)
            version = int(db.execute("PRAGMA data_version").fetchone()[0])
            row = db.execute("SELECT value FROM meta WHERE key='scan_fp'").fetchone()
            self._scan_fp = (fp, version)
            if row is not None and row[0] == fp:
                for f, reason in db.execute("SELECT file, reason FROM skipped"):
                    skipped[f] = files.get(f, (-1, -1, -1))
                    reasons[f] = reason
                self._scope = "unchanged"
                return files, files, skipped, reasons, 0
        known = {
            r[0]: r[1:]
            for r in db.execute(
                "SELECT file, size, mtime_ns, inode FROM sessions INDEXED BY sessions_ident"
            )
        }
        for f, size, mt, ino, reason in db.execute(
            "SELECT file, size, mtime_ns, inode, reason FROM skipped"
        ):
            skipped[f] = (size, mt, ino)
            reasons[f] = reason
        return files, known, skipped, reasons, 0

    def _parsed_batches(
        self, todo: list[tuple[str, tuple[int, int, int]]], cancel: threading.Event | None
    ) -> Iterator[list[tuple[str, _Parsed | str]]]:
        """Batches of parsed files, read and parsed in this thread. (A parser thread beside
        the writer was measured slower and costlier: both need the GIL for every row, and
        handing it over per row stalls them both.)"""
        folded = not self.has_fts
        for start in range(0, len(todo), BATCH_FILES):
            if cancel is not None and cancel.is_set():
                return
            chunk = todo[start : start + BATCH_FILES]
            yield [(n, self._parse_isolated(n, ident, folded)) for n, ident in chunk]

    def _parse_isolated(
        self, name: str, ident: tuple[int, int, int], folded: bool
    ) -> _Parsed | str:
        """:meth:`_parse_file`, with anything one file's content raises turned into the
        reason it is skipped."""
        try:
            return self._parse_file(name, ident, folded=folded)
        except Exception as exc:
            log.warning("%s: skipped: %s", name, exc)
            return _reason(exc)

    def _apply(
        self,
        db: sqlite3.Connection,
        parsed: list[tuple[str, _Parsed | str]],
        known: dict[str, tuple[int, int, int]],
        report: ReconcileReport,
    ) -> None:
        """Write one batch of parsed files in one transaction, with a few statements per
        batch rather than several per file."""
        with self._write_lock:
            db.execute("BEGIN IMMEDIATE")
            try:
                self._changing(db)
                names = [name for name, _item in parsed]
                current: dict[str, tuple[int, int, int]] = {}
                for start in range(0, len(names), IN_CHUNK):
                    chunk = names[start : start + IN_CHUNK]
                    marks = ",".join("?" * len(chunk))
                    for f, size, mt, ino in db.execute(
                        f"SELECT file, size, mtime_ns, inode FROM sessions WHERE file IN ({marks})",
                        chunk,
                    ):
                        current[f] = (size, mt, ino)
                fresh: list[_Parsed] = []
                for name, item in parsed:
                    if isinstance(item, str):
                        ident = self._stat_tuple(name)
                        if ident is None or current.get(name) == ident:
                            continue  # gone, or indexed as it is now (a write meanwhile)
                        self._delete_file(db, name)
                        db.execute(
                            "INSERT OR REPLACE INTO skipped(file, size, mtime_ns, inode, reason) "
                            "VALUES (?, ?, ?, ?, ?)",
                            (name, *ident, item),
                        )
                        report.skipped.append((name, item))
                        continue
                    cur = current.get(name)
                    if cur is not None:
                        ident2 = (item.identity.size, item.identity.mtime_ns, item.identity.inode)
                        if cur == ident2:
                            continue  # another process indexed this very version meanwhile
                        if cur != known.get(name) and cur == self._stat_tuple(name):
                            # A write (through this store or another process) indexed the
                            # file as it is now after this pass parsed it: this parse is
                            # older, and must not replace the newer rows.
                            continue
                        self._delete_file(db, name)
                    fresh.append(item)
                    report.messages += len(item.messages)
                    if cur is not None or name in known:
                        report.updated += 1
                    else:
                        report.added += 1
                if fresh:
                    for name, why in self._insert_isolated(db, fresh):
                        report.skipped.append((name, why))
                        if why.startswith("unusable"):
                            report.messages -= sum(len(i.messages) for i in fresh if i.file == name)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def _insert_isolated(
        self, db: sqlite3.Connection, items: list[_Parsed]
    ) -> list[tuple[str, str]]:
        """Insert ``items`` (in the caller's transaction) so that one that cannot be stored
        never keeps the others out: the batch at once; if that fails, with lone surrogates
        replaced; if that fails too, one by one, each failure recorded in ``skipped``.
        Returns the (file, reason) of the items left out."""
        try:
            db.execute("SAVEPOINT batch")
            try:
                self._insert_batch(db, items)
                return []
            except (sqlite3.Error, UnicodeError, OverflowError, ValueError):
                db.execute("ROLLBACK TO batch")
                items = [_cleaned(i) for i in items]
                try:
                    self._insert_batch(db, items)
                    return []
                except (sqlite3.Error, UnicodeError, OverflowError, ValueError):
                    db.execute("ROLLBACK TO batch")
        finally:
            db.execute("RELEASE batch")
        left_out: list[tuple[str, str]] = []
        for item in items:
            db.execute("SAVEPOINT one")
            try:
                self._insert_batch(db, [item])
            except (sqlite3.Error, UnicodeError, OverflowError, ValueError) as exc:
                db.execute("ROLLBACK TO one")
                why = _reason(exc)
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
                except (sqlite3.Error, UnicodeError):
                    why = "file name cannot be stored: " + why  # reported, not kept
                left_out.append((item.file, why))
            finally:
                db.execute("RELEASE one")
        return left_out

    def _stat_tuple(self, name: str) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.session_dir / name)
        except OSError:
            return None
        return (st.st_size, st.st_mtime_ns, st.st_ino)

    def _insert(self, db: sqlite3.Connection, item: _Parsed, next_id: int = 0) -> int:
        """Insert one parsed file (``next_id`` is ignored: ids follow the table's max)."""
        return self._insert_batch(db, [item])

    def _insert_batch(self, db: sqlite3.Connection, items: Sequence[_Parsed]) -> int:
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
        # (id, sid, idx, role, archived, ts, text, start, end): a message longer than
        # PART_CHARS goes in as parts (rows with the same idx), each sliced only as it is
        # stored, so one huge message never needs several copies of itself at once.
        parts: list[tuple[Any, ...]] = []
        for item in items:
            row_lo = next_id
            for idx, role, archived, ts, text in item.messages:
                bounds = [(0, len(text))] if len(text) <= PART_CHARS else _cuts(text, PART_CHARS)
                for start, end in bounds:
                    parts.append((next_id, sid, idx, role, archived, ts, text, start, end))
                    next_id += 1
            session_rows.append(
                (
                    sid,
                    item.file,
                    item.identity.size,
                    item.identity.mtime_ns,
                    item.identity.inode,
                    *item.row,
                    len(item.messages),
                    item.chars,
                    row_lo,
                    next_id - 1,
                )
            )
            sid += 1
        message_rows = (
            (
                mid,
                msid,
                idx,
                role,
                archived,
                ts,
                text if end - start == len(text) else text[start:end],
            )
            for mid, msid, idx, role, archived, ts, text, start, end in parts
        )
        db.executemany(
            f"INSERT INTO sessions(sid, file, size, mtime_ns, inode, {_SESSION_COLS}, nmsg, "
            "chars, row_lo, row_hi) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "?, ?, ?, ?, ?, ?)",
            session_rows,
        )
        if parts:
            db.executemany(
                "INSERT INTO messages(id, sid, idx, role, archived, ts, text) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                message_rows,
            )
            if self.has_fts:
                db.execute(
                    "INSERT INTO fts(rowid, text) SELECT id, text FROM messages "
                    "WHERE id BETWEEN ? AND ?",
                    (first_id, next_id - 1),
                )
        files = [item.file for item in items]
        for start in range(0, len(files), IN_CHUNK):
            chunk = files[start : start + IN_CHUNK]
            db.execute(f"DELETE FROM skipped WHERE file IN ({','.join('?' * len(chunk))})", chunk)
        self._inserted(db, items)
        return next_id

    def _inserted(self, db: sqlite3.Connection, items: Sequence[_Parsed]) -> None:
        """Called after ``items`` were inserted, in the same transaction (nothing here)."""

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
                self._follow_file()
                db = self._conn()
                db.execute("BEGIN IMMEDIATE")
                try:
                    self._changing(db)
                    if data is None:
                        self._delete_file(db, path.name)
                    else:
                        st = os.stat(path)
                        self._delete_file(db, path.name)
                        try:
                            item: _Parsed | str = _extract(
                                path.name, FileIdentity.of(st), dict(data), folded=not self.has_fts
                            )
                        except Exception as exc:  # the content: skipped, as a reconcile would
                            item = _reason(exc)
                        if isinstance(item, str):
                            db.execute(
                                "INSERT OR REPLACE INTO skipped(file, size, mtime_ns, inode, "
                                "reason) VALUES (?, ?, ?, ?, ?)",
                                (path.name, st.st_size, st.st_mtime_ns, st.st_ino, item),
                            )
                        else:
                            self._insert_isolated(db, [item])
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
            self._open(reset=True)  # emptied in place: other processes may have it open
            self._stats = None
            self._df_cache.clear()
            self._full_at = None
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
        files = list(iter_session_files(self.session_dir.path))
        out["files"] = len(files)
        out["json_bytes"] = sum(st.st_size for _p, st in files)
        return out

    def skipped_names(self) -> list[str]:
        """The names of the files the index could not read, without a directory scan
        (empty when the index is broken: it knows none)."""
        if self.broken is not None:
            return []
        with self._lock:
            rows = self._conn().execute("SELECT file FROM skipped").fetchall()
        return [str(f) for (f,) in rows]

    # ------------------------------------------------------------------ live

    def generation(self) -> int:
        """A number that grows with every session (re)indexed: pass it to
        :meth:`changed_since` later to learn what was added or changed meanwhile."""
        try:
            row = self._rows("SELECT seq FROM sqlite_sequence WHERE name='sessions'")
            top = self._rows("SELECT max(sid) FROM sessions")
        except (_Broken, sqlite3.Error):
            return 0
        return max(int(row[0][0]) if row else 0, int(top[0][0] or 0))

    def changed_since(self, generation: int) -> dict[str, int]:
        """Sessions added or changed (indexed again) after ``generation``: session id ->
        the generation that indexed it."""
        try:
            rows = self._rows(
                "SELECT session_id, sid FROM sessions WHERE sid > ? ORDER BY sid", (generation,)
            )
        except (_Broken, sqlite3.Error):
            return {}
        return {str(sid_): int(gen) for sid_, gen in rows}

    def _pending_to_scan(self) -> tuple[list[str], int]:
        """(names, how many more): the newest :attr:`pending_scan_files` files a running
        reconcile has not indexed yet (a build indexes the oldest first), and how many other
        pending files a search leaves out. Call with ``_state_lock`` held."""
        limit = max(0, self.pending_scan_files)
        if len(self._pending) <= limit:
            return sorted(self._pending), 0
        names: list[str] = []
        for name in reversed(self._pending_order):
            if len(names) >= limit:
                break
            if name in self._pending:
                names.append(name)
        return sorted(names), len(self._pending) - len(names)

    def _pending_rows(self, text: str) -> list[tuple[str, tuple[int, int, int]]]:
        """The files a running reconcile found that the index does not hold at all (yet),
        whose name holds ``text`` (any case)."""
        needle = (text or "").strip().lower()
        with self._state_lock:
            rows = [(n, i) for n, i in self._pending_new.items() if n in self._pending]
        if needle:
            rows = [(n, i) for n, i in rows if needle in n.lower()]
        return rows

    def _pending_summary(self, name: str, ident: tuple[int, int, int]) -> SessionSummary:
        """A not-yet-indexed file for the session list: read from the file, or from its
        metadata alone when it cannot be read."""
        data = self._load_file(name)
        if data is not None:
            with contextlib.suppress(Exception):  # one odd file never fails the list
                return recall.summary_of(
                    data, size=ident[0], source=self.source_kind, store=self.label
                )
        stamp = datetime.fromtimestamp(ident[1] / 1e9).astimezone().isoformat()
        return SessionSummary(
            session_id=Path(name).stem,
            title="",
            when=stamp,
            size=ident[0],
            source=self.source_kind,
            store=self.label,
        )

    def _browse_pending(
        self, offset: int, limit: int, sort: str, text: str
    ) -> list[SessionSummary] | None:
        """While a reconcile adds files: the indexed sessions and the files not indexed
        yet, in one list (the files ordered by their mtime and size, and only those on the
        page read). None when no file is waiting."""
        pending = self._pending_rows(text)
        if not pending:
            return None
        wanted = max(0, offset) + limit
        indexed = self._browse_index(0, wanted, sort, text)
        keyed: list[tuple[float, int, SessionSummary | None, str]] = []
        for summary in indexed:
            when = summary.created_at if sort == "created" else summary.when
            key = float(summary.size) if sort == "size" else (stored_epoch(when) or 0.0)
            keyed.append((key, 0, summary, ""))
        idents = dict(pending)
        for name, ident in pending:
            key = float(ident[0]) if sort == "size" else ident[1] / 1e9
            keyed.append((key, 1, None, name))
        keyed.sort(key=lambda row: (row[0], row[1]), reverse=True)
        out: list[SessionSummary] = []
        for _key, _kind, row, name in keyed[max(0, offset) : wanted]:
            out.append(row if row is not None else self._pending_summary(name, idents[name]))
        return out

    # ------------------------------------------------------------------ browse

    def _summary(self, row: Sequence[Any]) -> SessionSummary:
        (sid_, title, when, mc, ac, created, size, tagged, rate, lineage, project, agent) = row
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
            agent=agent,
        )

    _SUMMARY_SQL = (
        "SELECT session_id, title, when_, message_count, archived_count, created, size, "
        "tagged, rate_auto, lineage, project, agent FROM sessions"
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
        first); ``text`` keeps sessions whose title or id contains it (any case). While a
        build runs, the files it has not indexed yet are listed too (see
        :meth:`_browse_pending`)."""
        if sort not in SORTS:
            raise ValueError(f"sort must be one of {SORTS}, not {sort!r}")
        if limit <= 0:
            return []
        live = self._browse_pending(offset, limit, sort, text)
        return live if live is not None else self._browse_index(offset, limit, sort, text)

    def _browse_index(self, offset: int, limit: int, sort: str, text: str) -> list[SessionSummary]:
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
        """How many sessions :meth:`browse` can page through with this ``text`` (the files a
        running build has not indexed yet included)."""
        where, params = self._text_filter(text)
        try:
            indexed = int(self._rows(f"SELECT count(*) FROM sessions{where}", params)[0][0])
            return indexed + len(self._pending_rows(text))
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

    def relevance_candidates(
        self, pq: ParsedQuery, *, limit: int = 5, window: int = 5, corpus: CorpusStats | None = None
    ) -> Relevance:
        """Relevance candidates of a parsed query and how they were found."""
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
        if pq.nothing_searchable:
            result.warnings.append(NOTHING_SEARCHABLE)
        elif limit > 0 and not pq.empty:
            rel = self._relevance(pq, limit, window)
            result.hits = recall.rank(rel.candidates, limit)
            result.matched_sessions = rel.matched
            result.matched_exact = rel.exact
            result.fuzzy = rel.fuzzy
            result.warnings.extend(rel.warnings)
            result.mode = rel.mode
            if not rel.candidates:
                why = why_empty(query, lambda q: self._relevance(parse_query(q), 1, window).matched)
                if why is not None:
                    result.warnings.append(why)
        else:
            result.mode = "scan" if self.broken else ("index" if self.has_fts else "like")
        result.elapsed_ms = (time.perf_counter() - started) * 1000
        return result

    # ------------------------------------------------------------------ classic

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
            return super().search_candidates(query, window=window, language=language)
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
        except (_Broken, sqlite3.Error):
            return super().search_candidates(query, window=window, language=language)
        names = {r[0] for r in rows} | pending
        # The directory's own order, as the core scans it, so equal scores tie the same way.
        out: list[recall.Candidate] = []
        for name in self._classic_order(names):
            data = self._load_file(name)
            if data is None:
                continue
            try:
                cand = self._classic_candidate(data, parsed, window, name)
            except Exception as exc:  # one file's content never fails the search
                log.warning("%s: not scored: %s: %s", name, type(exc).__name__, exc)
                continue
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
        """Messages holding ``term`` (an upper bound for phrases; capped for prefixes).

        FTS5 counts a word's documents by reading its whole posting list (milliseconds for
        the commonest words), so the frequent words' counts are kept in ``common_terms``
        (taken at the end of a first build; close enough as the index grows) and FTS5 is
        asked only about the others."""
        key = term.fts()
        cached = self._df_cache.get(key)
        if cached is not None:
            return cached
        dfs: list[int] = []
        for i, tok in enumerate(term.tokens):
            if term.prefix and i == len(term.tokens) - 1:
                upper = tok + "\U0010ffff"
                common = db.execute(
                    "SELECT coalesce(sum(doc), 0) FROM common_terms WHERE term >= ? AND term < ?",
                    (tok, upper),
                ).fetchone()[0]
                if common > RARE_DF:
                    dfs.append(int(common))
                    continue
                rows = db.execute(
                    "SELECT doc FROM fts_vocab WHERE term >= ? AND term < ? LIMIT 200",
                    (tok, upper),
                ).fetchall()
                total = sum(r[0] for r in rows)
                dfs.append(total if len(rows) < 200 else max(total, RARE_DF * 10))
            else:
                row = db.execute("SELECT doc FROM common_terms WHERE term = ?", (tok,)).fetchone()
                if row is None:
                    row = db.execute("SELECT doc FROM fts_vocab WHERE term = ?", (tok,)).fetchone()
                dfs.append(int(row[0]) if row else 0)
        value = min(dfs) if dfs else 0
        if len(self._df_cache) > 4096:
            self._df_cache.clear()
        self._df_cache[key] = value
        return value

    def _note_common_terms(self, db: sqlite3.Connection) -> None:
        """Keep the document counts of the frequent words (see :meth:`_df`)."""
        with self._write_lock:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute("DELETE FROM common_terms")
                db.execute(
                    "INSERT INTO common_terms(term, doc) SELECT term, doc FROM fts_vocab "
                    "WHERE doc >= ?",
                    (COMMON_DF,),
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

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
        "s.tagged, s.machine, s.lineage, s.row_lo, s.row_hi, s.chars, m.id"
    )

    def _fts_candidates(
        self,
        db: sqlite3.Connection,
        pq: ParsedQuery,
        dfs: Sequence[int],
        limit: int,
        warnings: list[str],
        rare: set[int] | frozenset[int] = frozenset(),
    ) -> list[tuple[Any, ...]]:
        """Candidate messages, bounded whatever the words: the newest messages holding every
        term; the rarest terms' messages (a common word never costs its posting list); and,
        when that finds fewer sessions than asked for, the newest messages with any term."""
        live = sorted((df, i) for i, df in enumerate(dfs) if df > 0)
        if not live:
            return []
        ex = pq.excluded
        rows: list[tuple[Any, ...]] = []
        seen: set[int] = set()

        def add(expr: str, n: int) -> None:
            for row in self._fetch(db, pq, expr, None, n):
                if row[-1] not in seen:
                    seen.add(row[-1])
                    rows.append(row)

        used: set[int] = set()
        # enough messages for every asked-for session, at PER_SESSION messages each
        drivers_limit = max(CANDIDATE_LIMIT, PER_SESSION * limit)
        if len(live) == len(pq.terms) and len(live) > 1:
            add(fts_expr(pq.terms, op="AND", excluded=ex), max(ALL_TERMS_LIMIT, limit))
            # Sessions with a message holding every term outrank those without (boost and
            # coverage): the rarest terms' other messages can only fill the places below
            # them, and only as many are read as those places need.
            # (counted as shown: continuations of one conversation fold into one hit)
            shown = {r[11] if r[11] is not None else "\x00" + r[7] for r in rows}
            if shown:
                drivers_limit = max(FILL_LIMIT, PER_SESSION * (limit - len(shown)))
        if live[0][0] <= RARE_DF:
            drivers: list[Term] = []
            budget = 0
            for df, i in live:
                if drivers and budget + df > DRIVER_BUDGET:
                    break
                drivers.append(pq.terms[i])
                used.add(i)
                budget += df
            add(fts_expr(drivers, excluded=ex), drivers_limit)
        elif not rows:
            common_limit = max(COMMON_LIMIT, PER_SESSION * limit)
            add(fts_expr([pq.terms[i] for _df, i in live], excluded=ex), common_limit)
            used.update(i for _df, i in live)
            if len(rows) >= common_limit:
                warnings.append("very common words: the newest matching messages were ranked")
            return rows
        elif len(rows) >= ALL_TERMS_LIMIT:
            warnings.append("very common words: the newest matching messages were ranked")
        rest = [pq.terms[i] for _df, i in live if i not in used and (not rare or i in rare)]
        if rest and len({r[0] for r in rows}) < max(limit, 1):
            add(fts_expr(rest, excluded=ex), max(FILL_LIMIT, PER_SESSION * limit))
        return rows

    def _fetch(
        self,
        db: sqlite3.Connection,
        pq: ParsedQuery,
        expr: str | None,
        like_terms: list[Term] | None,
        limit: int,
        per_session: int = PER_SESSION,
    ) -> list[tuple[Any, ...]]:
        """The newest messages matching ``expr`` (or one of ``like_terms``) and the filters,
        at most ``per_session`` of one session: a long session never fills the candidates
        and hides every other one.

        A session's messages have consecutive ids, so once a session has given its share,
        the next read starts below its first message: only ids are read until the rows are
        chosen, and their text is read once."""
        fsql, fparams = self._filter_sql(pq)
        # Sessions are joined only when a filter reads them: one lookup less per posting.
        join = " JOIN sessions s ON s.sid = m.sid" if _READS_SESSIONS.search(fsql) else ""
        if expr is not None:
            source = f"fts JOIN messages m ON m.id = fts.rowid{join}"
            where, params, below = "fts MATCH ?", [expr], "fts.rowid"
        else:
            source = f"messages m{join}"
            where, params, below = "1", [], "m.id"
            if like_terms:
                where = "(" + " OR ".join("m.text LIKE ? ESCAPE '\\'" for _ in like_terms) + ")"
                params = [like_pattern(t) for t in like_terms]
        chosen: list[int] = []
        taken: dict[int, int] = {}
        bound: int | None = None
        batch_size = 2 * limit
        while len(chosen) < limit:
            sql = f"SELECT m.id, m.sid FROM {source} WHERE {where}{fsql}"
            args: list[Any] = [*params, *fparams]
            if bound is not None:
                sql += f" AND {below} < ?"
                args.append(bound)
            batch = db.execute(
                f"{sql} ORDER BY {below} DESC LIMIT ?", [*args, batch_size]
            ).fetchall()
            for mid, sid in batch:
                n = taken.get(sid, 0)
                if n < per_session:
                    taken[sid] = n + 1
                    chosen.append(mid)
                    if len(chosen) >= limit:
                        break
            else:
                if len(batch) == batch_size:
                    mid, sid = batch[-1]
                    bound = mid
                    if taken.get(sid, 0) >= per_session:
                        # a session that gave its share: its other messages lie below mid
                        # down to its first one
                        # (each read sees the index as it is then: a writer may have
                        # replaced that session meanwhile, and its row be gone)
                        lo = db.execute(
                            "SELECT row_lo FROM sessions WHERE sid = ?", (sid,)
                        ).fetchone()
                        bound = mid if lo is None else min(mid, int(lo[0]))
                    continue
            break
        rows: list[tuple[Any, ...]] = []
        for start in range(0, len(chosen), IN_CHUNK):
            chunk = chosen[start : start + IN_CHUNK]
            rows.extend(
                db.execute(
                    f"SELECT {self._CAND_COLS} FROM messages m JOIN sessions s ON s.sid = m.sid "
                    f"WHERE m.id IN ({','.join('?' * len(chunk))})",
                    chunk,
                )
            )
        rows.sort(key=lambda r: r[-1], reverse=True)
        return rows

    def _relevance(
        self, pq: ParsedQuery, limit: int, window: int, corpus: CorpusStats | None = None
    ) -> Relevance:
        if pq.nothing_searchable:  # never the newest sessions as if they matched
            mode = "scan" if self.broken else "index"
            return Relevance(warnings=[NOTHING_SEARCHABLE], mode=mode)
        if self.broken is not None:  # the files scanned, with the same filters
            if not pq.words and not pq.has_filters:
                return Relevance(mode="scan")
            try:
                cands = super().search_candidates(pq.text, window=window, language=True)
            except QueryError as exc:
                return Relevance(warnings=[str(exc)], mode="scan")
            return Relevance(cands, len(cands), mode="scan")
        try:
            with self._lock:
                db = self._conn()
                scored, warnings, counted = self._score_index(db, pq, corpus, limit)
                with self._state_lock:
                    pending, unscanned = self._pending_to_scan()
                    stale = set(self._stale_keys)
                # Files not indexed yet are read before any typo correction: a word that
                # only they hold is no typo.
                scanned = self._score_files(db, pq, pending, corpus) if pending else []
                fuzzy = False
                if not scored and not scanned and pq.terms and self.has_fts:
                    fixed = self._fuzzy_query(db, pq)
                    if fixed is not None:
                        fpq, note = fixed
                        fscored, more, fcounted = self._score_index(db, fpq, corpus, limit)
                        if fscored:
                            scored, counted = fscored, fcounted
                            fuzzy = True
                            warnings.append(note)
                            warnings.extend(more)
                            pq = fpq
                            if pending:
                                scanned = self._score_files(db, pq, pending, corpus)
                if stale:
                    scored = [s for s in scored if s.info.key not in stale]
                matched = len(scored) if counted is None else max(counted, len(scored))
                mode = "index" if self.has_fts else "like"
                if pending:
                    mode += "+scan"
                    matched += len(scanned)
                    scored.extend(scanned)
                    done, total = self.progress
                    rest = f"the newest {len(pending)} of the rest" if unscanned else "the rest"
                    warnings.append(f"indexing: {done} of {total} files done; {rest} were scanned")
        except sqlite3.DatabaseError as exc:
            self._on_db_error(exc)
            if self.broken is not None or self._db is None:
                return self._relevance(pq, limit, window, corpus)
            return Relevance(warnings=[f"the index failed during this search: {exc}"])
        except _Broken:
            return self._relevance(pq, limit, window, corpus)
        cands = self._to_candidates(scored, pq, limit, window)
        exact = counted is not None and not unscanned
        return Relevance(cands, matched, exact, fuzzy, warnings, mode)

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
        self,
        db: sqlite3.Connection,
        pq: ParsedQuery,
        corpus: CorpusStats | None = None,
        limit: int = 5,
    ) -> tuple[list[_Scored], list[str], int | None]:
        """(scored sessions, warnings, matched sessions counted over the whole index or None
        when not counted). A filter-only query lists every session with a message passing
        the filters, newest first (:meth:`_recent_index`)."""
        warnings: list[str] = []
        if not pq.terms:
            recent, count = self._recent_index(db, pq, limit)
            return recent, warnings, count
        dfs = [self._df(db, t) for t in pq.terms] if self.has_fts else [1] * len(pq.terms)
        scorer = self._scorer(db, pq, dfs, corpus)
        rows: list[tuple[Any, ...]]
        if not self.has_fts:
            like = [t for i, t in enumerate(pq.terms) if not scorer.rare or i in scorer.rare]
            rows = self._fetch(db, pq, None, like, CANDIDATE_LIMIT)
        else:
            rows = self._fts_candidates(db, pq, dfs, limit, warnings, scorer.rare)
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
            chars,
            _rowid,
        ) in rows:
            g = groups.get(sid)
            if g is None:
                info = _SessionInfo(
                    sid,
                    session_id,
                    file,
                    when,
                    bool(tagged),
                    bool(machine),
                    lineage,
                    lo,
                    hi,
                    chars,
                )
                g = groups[sid] = (info, [])
            g[1].append(_Msg(sid, idx, role, bool(archived), ts, text))
        scored: list[_Scored] = []
        for info, msgs in groups.values():
            s = scorer.session(info, msgs)
            if s is not None:
                scored.append(s)
        if (pq.excluded or len(pq.terms) > 1) and scored:
            scored = self._refine(db, scorer, pq, scored, limit)
        counted = self._count_matches(db, pq, dfs, scorer.rare) if self.has_fts else None
        return scored, warnings, counted

    def _count_matches(
        self, db: sqlite3.Connection, pq: ParsedQuery, dfs: Sequence[int], rare: set[int]
    ) -> int | None:
        """Sessions of the index that are hits for ``pq`` whatever the candidate bound: a
        message passing the filters holds one of the query's rarer terms (any term when all
        are common), and no message holds an excluded term. None when that would read more
        than :data:`COUNT_BUDGET` postings (the caller then counts the scored sessions)."""
        which = [i for i in range(len(pq.terms)) if (not rare or i in rare) and dfs[i] > 0]
        if not which:
            return 0
        cost = sum(dfs[i] for i in which) + sum(self._df(db, t) for t in pq.excluded)
        if cost > COUNT_BUDGET:
            return None
        fsql, fparams = self._filter_sql(pq)
        # Sessions are joined only when a filter reads them: one lookup less per posting.
        join = " JOIN sessions s ON s.sid = m.sid" if _READS_SESSIONS.search(fsql) else ""
        sids = {
            r[0]
            for r in db.execute(
                "SELECT DISTINCT m.sid FROM fts JOIN messages m ON m.id = fts.rowid"
                f"{join} WHERE fts MATCH ?{fsql}",
                [fts_expr([pq.terms[i] for i in which]), *fparams],
            )
        }
        if sids and pq.excluded:
            sids -= self._excluded_sids(db, pq)
        return len(sids)

    def _excluded_sids(self, db: sqlite3.Connection, pq: ParsedQuery) -> set[int]:
        """Sessions of the index with a message holding one of ``pq``'s excluded terms."""
        if not pq.excluded:
            return set()
        if self.has_fts:
            return {
                r[0]
                for r in db.execute(
                    "SELECT DISTINCT m.sid FROM fts JOIN messages m ON m.id = fts.rowid "
                    "WHERE fts MATCH ?",
                    (fts_expr(list(pq.excluded)),),
                )
            }
        out: set[int] = set()
        for term in pq.excluded:
            for sid, text in db.execute(
                "SELECT sid, text FROM messages WHERE text LIKE ? ESCAPE '\\'",
                (like_pattern(term),),
            ):
                if sid not in out and term.occurrences(tokenize(text)):
                    out.add(sid)
        return out

    def _recent_index(
        self, db: sqlite3.Connection, pq: ParsedQuery, limit: int
    ) -> tuple[list[_Scored], int]:
        """A filter-only query: every session with a message passing the filters (and none
        holding an excluded term), counted in SQL, ranked by its latest matching message
        (:func:`_recency`) and anchored there. Only the shown sessions and the continuations
        that fold into them are looked at further."""
        fsql, fparams = self._filter_sql(pq)
        rows = db.execute(
            "SELECT m.sid, max(coalesce(m.ts, s.updated_ts)), count(*) FROM messages m "
            f"JOIN sessions s ON s.sid = m.sid WHERE 1{fsql} GROUP BY m.sid",
            fparams,
        ).fetchall()
        if pq.excluded and rows:
            gone = self._excluded_sids(db, pq)
            rows = [r for r in rows if r[0] not in gone]
        if not rows:
            return [], 0
        latest = {int(sid): (t, int(n)) for sid, t, n in rows}
        infos: dict[int, _SessionInfo] = {}
        sids = list(latest)
        for start in range(0, len(sids), IN_CHUNK):
            chunk = sids[start : start + IN_CHUNK]
            marks = ",".join("?" * len(chunk))
            for sid, session_id, file, when, tagged, machine, lineage, lo, hi in db.execute(
                "SELECT sid, session_id, file, when_, tagged, machine, lineage, row_lo, row_hi "
                f"FROM sessions WHERE sid IN ({marks})",
                chunk,
            ):
                infos[sid] = _SessionInfo(
                    sid, session_id, file, when, bool(tagged), bool(machine), lineage, lo, hi
                )
        order = sorted(
            infos.values(),
            key=lambda i: (latest[i.key][0] is not None, latest[i.key][0] or 0.0, i.when or ""),
            reverse=True,
        )
        shown: set[str] = set()
        for info in order:
            if len(shown) >= max(limit, 1):
                break
            shown.add(info.lineage if info.lineage is not None else "\x00" + info.file)
        now = time.time()
        out: list[_Scored] = []
        for info in order:
            key = info.lineage if info.lineage is not None else "\x00" + info.file
            if key not in shown:
                continue
            anchor = db.execute(
                "SELECT m.idx, m.text FROM messages m JOIN sessions s ON s.sid = m.sid "
                f"WHERE m.id BETWEEN ? AND ?{fsql} "
                "ORDER BY coalesce(m.ts, s.updated_ts) DESC, m.id DESC LIMIT 1",
                [info.row_lo, info.row_hi, *fparams],
            ).fetchone()
            if anchor is None:
                continue
            t, n = latest[info.key]
            out.append(_recent_scored(info, _recency(t, now), int(anchor[0]), str(anchor[1]), n))
        return out, len(order)

    def _refine(
        self,
        db: sqlite3.Connection,
        scorer: _Scorer,
        pq: ParsedQuery,
        scored: list[_Scored],
        limit: int = 5,
    ) -> list[_Scored]:
        """Look in the best sessions' other messages: excluded words drop the session, missing
        query terms raise its coverage. A session whose score could not reach the shown
        results even with every term covered is not looked at (nothing would change)."""
        scored.sort(key=lambda s: s.score, reverse=True)
        if pq.excluded:
            scored = [
                s
                for n, s in enumerate(scored)
                if n >= COVERAGE_CHECK
                or not self._session_holds(db, pq.excluded, range(len(pq.excluded)), s.info)
            ]

        def factor(s: _Scored) -> float:
            return recall.AUTOMATED_DEMOTION if s.info.tagged or s.info.machine else 1.0

        threshold = 0.0
        keys: set[str] = set()
        for s in sorted(scored, key=lambda s: s.score * factor(s), reverse=True):
            key = s.info.lineage if s.info.lineage is not None else "\x00" + s.info.file
            if key not in keys:
                keys.add(key)
                if len(keys) >= max(limit, 1):
                    threshold = s.score * factor(s)
                    break
        every = set(range(len(pq.terms)))
        out: list[_Scored] = []
        for n, s in enumerate(scored):
            missing = [i for i in range(len(pq.terms)) if i not in s.matched]
            if n >= COVERAGE_CHECK or not missing:
                out.append(s)
                continue
            best = scorer.finish(
                s.info,
                s.best,
                s.bm25,
                0.0,
                every,
                s.anchor,
                s.anchor_text,
                s.phrase,
                s.all_terms,
                s.messages,
            )
            if best.score * factor(s) < threshold - 1e-6:
                out.append(s)  # even full coverage would leave it below the shown results
                continue
            found = set(s.matched) | self._session_holds(db, pq.terms, missing, s.info)
            if found != s.matched:
                s2 = scorer.finish(
                    s.info,
                    s.best,
                    s.bm25,
                    0.0,
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

    def _session_holds(
        self,
        db: sqlite3.Connection,
        terms: Sequence[Term],
        which: Iterable[int],
        info: _SessionInfo,
    ) -> set[int]:
        """Which of ``terms`` (numbers in ``which``) some message of the session holds.

        A short session's text is read once and every term looked for in it (one query
        instead of one per term); a long one is asked of the index term by term."""
        wanted = list(which)
        if not wanted:
            return set()
        lo, hi = info.row_lo, info.row_hi
        if info.chars is None or info.chars > SMALL_SESSION_CHARS:
            return {i for i in wanted if self._session_has(db, terms[i], lo, hi)}
        texts = [
            r[0] for r in db.execute("SELECT text FROM messages WHERE id BETWEEN ? AND ?", (lo, hi))
        ]
        whole = fold("\n".join(texts))  # a word never spans two messages; a phrase
        return {  # might, so phrases are looked for message by message
            i
            for i in wanted
            if (
                terms[i].count_in(whole, 1)
                if len(terms[i].tokens) == 1
                else any(terms[i].count_in(fold(t), 1) for t in texts)
            )
        }

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
        now = time.time()
        for n, name in enumerate(names):
            try:
                scored = self._score_file(n, name, pq, scorer, now)
            except Exception as exc:  # one file's content never fails the search
                log.warning("%s: not scored: %s: %s", name, type(exc).__name__, exc)
                continue
            if scored is not None:
                out.append(scored)
        return out

    def _score_file(
        self, n: int, name: str, pq: ParsedQuery, scorer: _Scorer, now: float
    ) -> _Scored | None:
        """One not-yet-indexed file read and scored (see :meth:`_score_files`)."""
        data = self._load_file(name)
        if data is None:
            return None
        if not self._session_filters_ok(pq, data, name):
            return None
        messages = recall.project(data)
        when = recall.when_of(data)
        when_ts = stored_epoch(when)
        msgs: list[_Msg] = []
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
            msgs.append(_Msg(-1 - n, idx, role, archived, tsf if pq.terms else eff, text))
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
        if not pq.terms:
            if not msgs or any(scorer.message(m.text)[0] < 0 for m in msgs):
                return None
            last = max(msgs, key=lambda m: (m.ts is not None, m.ts or 0.0, m.idx))
            return _recent_scored(info, _recency(last.ts, now), last.idx, last.text, len(msgs))
        return scorer.session(info, msgs)

    def _session_filters_ok(self, pq: ParsedQuery, data: JSONDict, name: str) -> bool:
        return recall.keeps_session(pq, data, file_name=name, source_kind=self.source_kind)

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
            if not pq.terms:
                continue  # filter-only: recency, neither demoted nor rounded
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
        if not pq.terms:
            return {
                "ranking": "relevance",
                "order": "recency",
                "recency": round(s.score, 6),
                "matching_messages": s.messages,
                "automated": "tagged" if s.info.tagged else ("machine-paced" if demote else None),
            }
        return {
            "ranking": "relevance",
            "terms": [pq.terms[i].label for i in sorted(s.matched)],
            "missing": [t.label for i, t in enumerate(pq.terms) if i not in s.matched],
            "common": list(s.common),
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

    def _projected(self, name: str) -> tuple[JSONDict, list[JSONDict]] | None:
        """Session file ``name`` read and projected, from a small cache checked against the
        file's identity (a person refining a query sees the same sessions again)."""
        try:
            st = os.stat(self.session_dir / name)
        except (OSError, ValueError):
            return None
        ident = (st.st_size, st.st_mtime_ns, st.st_ino)
        with self._hit_lock:
            cached = self._hit_cache.get(name)
            if cached is not None and cached[0] == ident:
                self._hit_cache.move_to_end(name)
                return cached[1], cached[2]
        data = self._load_file(name)
        if data is None:
            return None
        messages = recall.project(data)
        with self._hit_lock:
            old = self._hit_cache.pop(name, None)
            if old is not None:
                self._hit_bytes -= old[0][0]
            if st.st_size <= HIT_CACHE_BYTES // 8:
                self._hit_cache[name] = (ident, data, messages)
                self._hit_bytes += st.st_size
            while self._hit_cache and (
                len(self._hit_cache) > HIT_CACHE_FILES or self._hit_bytes > HIT_CACHE_BYTES
            ):
                _name, (gone, _d, _m) = self._hit_cache.popitem(last=False)
                self._hit_bytes -= gone[0]
        return data, messages

    def _full_hit(self, s: _Scored, pq: ParsedQuery, window: int) -> SessionHit | None:
        """The hit with its context from the file; a hit without context when the file's
        content cannot be turned into one (never an error for the whole search)."""
        try:
            return self._full_hit_of(s, pq, window)
        except Exception as exc:
            log.warning("%s: hit without context: %s: %s", s.info.file, type(exc).__name__, exc)
            return self._light_hit(s)

    def _full_hit_of(self, s: _Scored, pq: ParsedQuery, window: int) -> SessionHit | None:
        loaded = self._projected(s.info.file)
        if loaded is None:
            return None
        data, messages = loaded
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
        hit.project = recall.project_of(data)
        # The message views share their content with the cache: give the hit its own
        # copy of any content that is not a plain (immutable) string.
        for view in itertools.chain(hit.messages, *hit.bookends.values()):
            if not isinstance(view.get("content"), str):
                view["content"] = copy_json(view.get("content"))
        return hit

    # ------------------------------------------------------------------ misc

    def iter_index_sessions(self) -> Iterator[tuple[str, str]]:
        """(session id, file name) of every indexed session."""
        yield from self._rows("SELECT session_id, file FROM sessions ORDER BY sid")
