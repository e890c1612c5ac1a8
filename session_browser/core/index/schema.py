"""The index database: its file (0600, in our cache dir), connections, the schema and its checks,
and what happens when the file is damaged or replaced."""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import random
import sqlite3
import stat
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Linux/macOS
    fcntl = None  # type: ignore[assignment]

from .. import paths
from ..compat import StoreDir
from ..files import disk_full
from ..model import (
    JSONDict,
)
from ..notes import INDEX_BROKEN, INDEX_BUSY, Note
from ..search.results import ReconcileReport
from ..sources.base import SessionSource
from . import hidden, partly
from .watch import DirWatch

if TYPE_CHECKING:
    from ..store import DefaultSessionStore
    from .reconcile import Reconciler
    from .semantic import Semantic

log = logging.getLogger("session_browser.index")

# PRAGMA user_version; any other value rebuilds the index. 6: titles are the first user
# message before the agent name, and the agent is stored as recall.agent_of says. 7: the
# hidden parts of transcripts in their own tables (``hidden``, ``hidden_fts``: in:tools),
# and what was skipped inside indexed files (``partly``). 8: hits are built from the rows
# (``sessions.hit_rows``, the ``verbatim`` table). 9: praisonaiagents' own title beside
# ours (``sessions.peer_title``: the library's ``title``; ours is ``display_title``), and
# its gateway route (``sessions.gateway``: the gateway session a session is linked to).
# 10: each session's content words (``recall_words``, ``recall_lengths``: session recall of
# a question in other words, :mod:`..search.lexical`). 11: with how often each word is held
# (``word_2``..``word_4`` tokens). 12: those words reduced anew (an ``-e`` restored, ``-er``
# kept on short words, written-out numbers as digits, single digits kept). 13: the hidden
# parts given as JSON (a tool call's arguments) searched with their strings' escapes undone
# (:func:`..hidden.as_written`: a word after an escaped newline was glued to its ``n``).
SCHEMA_VERSION = 13
OPEN_BUSY_SECONDS = 30.0  # how long opening retries while other processes set the index up
#: How long closing an index waits for its background reconcile to stop (one stuck in I/O
#: is then left behind: a daemon thread never keeps the process from exiting).
CLOSE_WAIT = 5.0
_TABLES = (
    frozenset(
        {"meta", "sessions", "messages", "skipped", "common_terms", "verbatim", "recall_lengths"}
    )
    | hidden.TABLES
    | partly.TABLES
)


def default_db_path(session_dir: Path, prefix: str = "") -> Path:
    """Where the index of ``session_dir`` lives (our cache dir, one db per resolved dir;
    ``prefix``: the source's :attr:`~..sources.base.SessionSource.index_prefix`)."""
    return paths.cache_dir() / "index" / f"{prefix}{paths.dir_key(session_dir)}.sqlite3"


def private_file(path: Path) -> None:
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


def close_quietly(db: sqlite3.Connection | None) -> None:
    """Close ``db`` (if any), ignoring a failure to do so."""
    if db is not None:
        with contextlib.suppress(sqlite3.Error):
            db.close()


def rollback(db: sqlite3.Connection) -> None:
    """Undo ``db``'s open transaction, if SQLite has not undone it already (it does so itself
    on a full disk or an I/O error). A failing rollback never hides the error that led to it:
    that one is what the caller re-raises."""
    if db.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")


def disk_full_text(db_path: str) -> str:
    """The one line that says an index write failed for want of space."""
    return (
        f"the disk is full: the search index ({db_path}) could not be written; nothing was "
        "half-written: free some space and run 'session-browser index update'"
    )


class Broken(Exception):
    """The index cannot be used (sqlite missing or the database unusable)."""


class IndexDatabase:
    """The index database of one session dir: its file, connection and schema.

    The layers above add, one concern each: :class:`~.plan.IndexPlan` (candidate reads and
    counts), :class:`~.fuzzy.IndexFuzzy` (typo correction), :class:`~.hits.IndexHits`
    (hits with context), :class:`~.browse.IndexBrowse` (lists, status, live changes) and
    :class:`~.store.SqliteSessionStore` (searching). The state they share is declared here
    and set by :meth:`SqliteSessionStore.__init__`. What brings the database in line with
    the files is held, not inherited: :attr:`reconciler`, a :class:`~.reconcile.Reconciler`.
    """

    source: SessionSource
    source_kind: str
    session_dir: StoreDir
    last_reads: dict[str, int]  # files the last reconcile read: resumed from a state, or whole
    db_path: str
    memory: bool
    want_fts: bool
    has_fts: bool
    broken: str | None
    warnings: list[str]
    _lock: threading.RLock
    _write_lock: threading.Lock
    _state_lock: threading.Lock
    _db: sqlite3.Connection | None
    _db_ino: int | None
    _lock_fd: int | None
    _pending: set[str]
    _pending_order: list[str]
    _pending_new: dict[str, tuple[int, int, int]]
    _surveyed: threading.Event
    _surveyed_once: bool
    pending_scan_files: int
    _stale_keys: set[int]
    _progress: tuple[int, int]
    _indexing: bool
    _thread: threading.Thread | None
    _cancel: threading.Event
    _stats: tuple[int, float] | None
    _df_cache: dict[str, int]
    _stats_key: tuple[int, int] | None  # (data_version, total_changes) the caches were read at
    _watch: DirWatch | None
    _reconcile_lock: threading.RLock
    _hit_lock: threading.Lock
    _hit_cache: collections.OrderedDict[str, tuple[tuple[int, int, int], JSONDict, list[JSONDict]]]
    _hit_bytes: int
    watch_min_files: int
    last_report: ReconcileReport | None
    reconciler: Reconciler  # what brings this database in line with the files
    writer: DefaultSessionStore | None  # the store API's writer; None for a read-only source
    semantic: Semantic  # its search by meaning (vectors beside the index)

    if TYPE_CHECKING:  # given by the store API (``.api.IndexStoreAPI``)

        @property
        def label(self) -> str: ...

    @property
    def progress(self) -> tuple[int, int]:
        """(done, total) files of the reconcile in progress (or the last one)."""
        return self._progress

    @property
    def indexing(self) -> bool:
        return self._indexing

    def _connect(self) -> sqlite3.Connection:
        if not self.memory:
            private_file(Path(self.db_path))
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
            close_quietly(db)
            raise
        return db

    def _open(self, *, reset: bool = False) -> None:
        try:
            self._hold_open_lock()
            self._db = self._open_checked(reset=reset)
            self._db_ino = self._file_ino()
        except (sqlite3.Error, OSError, Broken) as exc:
            self._set_broken(f"the search index cannot be used ({exc}); searching the files")

    def _set_broken(self, message: str) -> None:
        self.broken = message
        if message not in self.warnings:
            self.warnings.append(Note(INDEX_BROKEN, message))
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
        fd = paths.lock_file(Path(self.db_path + ".lock"))
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
                close_quietly(db)
                # Switching a fresh file to WAL, or a lock upgrade that could deadlock,
                # fails at once without waiting: another process is setting it up, retry.
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.005 + 0.02 * random.random())
                continue
            except sqlite3.DatabaseError as exc:
                close_quietly(db)
                attempt += 1
                if attempt > 1:
                    raise
                log.warning("index %s is unusable (%s); rebuilding it", self.db_path, exc)
            except BaseException:  # whatever else fails, the connection is not kept open
                close_quietly(db)
                raise
            if not self._discard_db():
                raise Broken("the index file is damaged and in use by another process")
        raise Broken("could not create the index")

    def _ensure_schema(self, db: sqlite3.Connection, *, reset: bool = False) -> None:
        """Check (and if needed create) the schema in one write transaction."""
        db.execute("BEGIN IMMEDIATE")
        try:
            if reset or not self._schema_ok(db):
                log.info("index %s has another version or layout; rebuilding", self.db_path)
                self._drop_all(db)
                if not self._schema_ok(db):
                    raise Broken("could not create the index")
            db.execute("COMMIT")
        except BaseException:
            rollback(db)
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
        """True when ``db`` holds our current schema (creating it in an empty db), with what
        the source adds: its parse-state table and the version of what it parses. Runs
        inside the transaction of :meth:`_ensure_schema`."""
        if not self._tables_ok(db):
            return False
        if self.source.state_table is not None:
            db.execute(
                f"CREATE TABLE IF NOT EXISTS {self.source.state_table}("
                "file TEXT PRIMARY KEY, state BLOB NOT NULL)"
            )
        if self.source.learned_table is not None:
            db.execute(
                f"CREATE TABLE IF NOT EXISTS {self.source.learned_table}("
                "file TEXT PRIMARY KEY, state TEXT NOT NULL)"
            )
        if self.source.content_version is None:
            return True
        key = f"{self.source.kind}_content"
        row = db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        if row is None:
            if db.execute("SELECT count(*) FROM sessions").fetchone()[0]:
                return False
            db.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                (key, self.source.content_version),
            )
            return True
        return bool(row[0] == self.source.content_version)

    def _tables_ok(self, db: sqlite3.Connection) -> bool:
        """:meth:`_schema_ok` for the tables every index has."""
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
        if built_fts and not {"fts", "fts_vocab", "hidden_fts", "recall_words"} <= tables:
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
                lineage TEXT, project TEXT, hit_rows INTEGER, peer_title TEXT, gateway TEXT,
                nmsg INTEGER NOT NULL, chars INTEGER NOT NULL,
                row_lo INTEGER NOT NULL, row_hi INTEGER NOT NULL);
            CREATE INDEX IF NOT EXISTS sessions_id ON sessions(session_id);
            CREATE INDEX IF NOT EXISTS sessions_gateway ON sessions(gateway)
                WHERE gateway IS NOT NULL;
            CREATE INDEX IF NOT EXISTS sessions_ident ON sessions(file, size, mtime_ns, inode);
            CREATE INDEX IF NOT EXISTS sessions_when ON sessions(when_);
            CREATE INDEX IF NOT EXISTS sessions_created ON sessions(created);
            CREATE INDEX IF NOT EXISTS sessions_size ON sessions(size);
            CREATE TABLE IF NOT EXISTS messages(
                id INTEGER PRIMARY KEY, sid INTEGER NOT NULL, idx INTEGER NOT NULL,
                role TEXT, archived INTEGER, ts REAL, text TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS verbatim(
                sid INTEGER NOT NULL, idx INTEGER NOT NULL, convo INTEGER NOT NULL,
                raw TEXT NOT NULL, PRIMARY KEY(sid, idx)) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS skipped(
                file TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, inode INTEGER,
                reason TEXT);
            CREATE TABLE IF NOT EXISTS common_terms(
                term TEXT PRIMARY KEY, doc INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS recall_lengths(
                sid INTEGER PRIMARY KEY, length INTEGER NOT NULL);
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
            # a session's distinct content words, stemmed; rowid: its sid (no text kept, no
            # positions: which sessions hold a word is all session recall reads)
            db.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS recall_words USING fts5(words, content='', "
                "detail=none, columnsize=0, "
                "tokenize=\"unicode61 remove_diacritics 0 tokenchars '_'\")"
            )
        hidden.create(db, use_fts)
        partly.create(db)
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
            raise Broken(self.broken or "closed")
        return self._db

    def close(self) -> None:
        """Stop any background reconcile and close the database.

        The reconcile stops at its next batch; one stuck in I/O (a file that never answers)
        is waited for at most :data:`CLOSE_WAIT` seconds, then left to the process's exit (a
        daemon thread, still holding the database, which is then not closed here)."""
        self._cancel.set()
        thread = self._thread
        if thread is not None and thread.is_alive() and thread is not threading.current_thread():
            thread.join(CLOSE_WAIT)
            if thread.is_alive():
                log.warning("index %s: the background reconcile did not stop", self.db_path)
                self._close_watch()
                return
        with self._lock:
            if self._db is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._db.close()
                self._db = None
            self._release_open_lock()
        self._close_watch()

    def _close_watch(self) -> None:
        if self._watch is not None:
            self._watch.close()
            self._watch = None

    def __del__(self) -> None:  # pragma: no cover - best effort
        with contextlib.suppress(Exception):
            if self._db is not None:
                self._db.close()
        with contextlib.suppress(Exception):
            if self._watch is not None:
                self._watch.close()
        with contextlib.suppress(Exception):
            self._release_open_lock()

    def _writer(self) -> sqlite3.Connection:
        """A connection for a reconcile (its own for a file db, so readers never wait)."""
        if self.memory:
            return self._conn()
        return self._connect()

    def _on_db_error(self, exc: sqlite3.DatabaseError) -> None:
        """A database error: a corrupt file is rebuilt; anything else falls back to the scan."""
        if disk_full(exc):
            self._set_broken(disk_full_text(self.db_path))
            return
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
            busy = f"the index is busy ({exc}); results may be stale"
            self.warnings.append(Note(INDEX_BUSY, busy))
            return
        self._set_broken(f"the search index failed ({exc}); searching the files")

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

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return self._conn().execute(sql, params).fetchall()
