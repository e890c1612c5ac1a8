"""Bringing the index in line with the files: survey (full pass, fingerprint, or the names a
DirWatch gave), parse, and write in batches; keeping it in step with writes made through the
store. :class:`Reconciler` does it; the store holds one (``store.reconciler``) and its
``reconcile`` / ``start_reconcile`` / ``rebuild`` hand over to it."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import recall
from ..files import FileIdentity, disk_full
from ..model import (
    JSONDict,
)
from ..notes import INDEX_FAILED, Note
from ..search.hidden import hidden_rows
from ..search.results import ReconcileReport
from ..search.rows import (
    IN_CHUNK,
    Parsed,
    extract,
    safely,
    skip_reason,
)
from ..vault.feed import Kept, VaultFeed, feed_for
from . import hidden, parsing, partly
from . import learned as learned_rows
from .parsing import parse_one
from .schema import (
    Broken,
    IndexDatabase,
    disk_full_text,
    rollback,
)
from .watch import DirWatch, scan_fingerprint
from .write import delete_rows, insert_isolated, insert_rows

log = logging.getLogger("session_browser.index")

BATCH_FILES = 500
PARSE_FILES = 100  # files of a batch parsed by a worker process (then written as one)
WORKER_MIN_FILES = 2000  # a first build of this many files is parsed by a worker process
WATCH_MIN_FILES = 1000  # from this many files, the reconciles after the second use a DirWatch
FULL_PASS_INTERVAL = 60.0  # seconds after which a reconcile stats every file again anyway
BULK_AUTOMERGE = 0  # FTS5 'automerge' while a first build streams rows in
COMMON_DF = 300  # words in this many messages or more have their count kept in common_terms


class EitherEvent(threading.Event):
    """Set when any of ``events`` is set (a caller's cancel beside the store's own)."""

    def __init__(self, *events: threading.Event) -> None:
        super().__init__()
        self._events = events

    def is_set(self) -> bool:
        return super().is_set() or any(e.is_set() for e in self._events)


Ident = tuple[int, int, int]  # a file's (size, mtime_ns, inode)


@dataclass
class Survey:
    """What a reconcile compares: the session files now (``files``), the identities the
    index holds for those looked at (``known``), the files it skipped and why, and how many
    indexed files were not looked at (``outside``: unchanged since the last pass, as an
    inotify watch says). ``unchanged``: the scan is exactly the one the last complete pass
    indexed (then ``known`` is ``files``)."""

    files: dict[str, Ident]
    known: dict[str, Ident]
    skipped: dict[str, Ident]
    reasons: dict[str, str]
    outside: int
    unchanged: bool = False


class Reconciler:
    """Brings one index in line with its files: the survey (a full pass, the scan's
    fingerprint, or the names a :class:`DirWatch` gave), the parse (here or in a worker
    process) and the writes in batches; a rebuild; keeping the index in step with a write
    made through its store (:meth:`after_write`); and keeping the files it reads in the vault.

    The index database it writes into (its connection, locks, and the list of files still to
    index that a search reads meanwhile) is its store's, :attr:`index`; what only a reconcile
    uses (its last pass, the vault feed, the parse worker) is held here.
    """

    worker_min_files = WORKER_MIN_FILES
    parse_workers: int | None = None  # worker processes of a first build (None: by the cores)

    def __init__(self, index: IndexDatabase, *, keep_vault: bool = False) -> None:
        """``keep_vault``: keep every file the index reads in the vault (asked for)."""
        self.index = index
        self.keeps_vault = keep_vault
        # Called by every reconcile after each batch it wrote and committed, with (done,
        # total) files, in the thread that builds (as the ``progress`` of :meth:`run`): for
        # a reconcile started in the background, what follows it batch by batch.
        self.on_batch: Callable[[int, int], None] | None = None
        self._vault_feed: VaultFeed | None = None
        self._vault_ready = False
        self._vault_fresh = False  # this reconcile builds a new index
        self._workers: list[parsing.Worker] = []  # the worker processes of the batches
        self._worker: parsing.Worker | None = None  # the one of them that keeps in the vault
        self._bulk = False  # this reconcile is a first build of many files
        self._priors: dict[str, bytes] = {}  # saved parse states of the files to parse
        self._relearned = False  # the source was given what its learned table keeps
        self._watch_again_at = 0.0  # monotonic time before which no watch is tried again
        self._full_passes = 0  # full passes this process began (the first builds no watch)
        self._full_at: float | None = None  # monotonic time of the last full pass
        self._pass_at: float | None = None
        self._scan_fp: tuple[str, int] | None = None  # (fingerprint, data_version) of a pass
        self._scope = "full"
        self._dirty = False  # the index changed during this reconcile
        self._db_token: str | None = None  # which database file the last full pass saw

    def vault_feed(self) -> VaultFeed | None:
        """What keeps the files this index reads in the vault (None: not asked for, or off
        for this source)."""
        if not self._vault_ready:
            self._vault_ready = True
            if not self.keeps_vault:
                return None
            self._vault_feed = feed_for(self.index.source_kind, self.index.source)
        return self._vault_feed

    def close(self) -> None:
        """Close the vault feed (after the index closed its database)."""
        feed = self._vault_feed
        if feed is not None:
            feed.close()

    def kept_projected(self, name: str) -> tuple[JSONDict, list[JSONDict]] | None:
        """Session ``name`` whose file is gone (or whose rewrite dropped turns), read from
        the vault's copy (None: not kept, or the copy is damaged)."""
        feed = self.vault_feed()
        if feed is None:
            return None
        with self.index._lock:
            data = feed.load(self.index._conn(), name)
        return None if data is None else (data, recall.project(data))

    def kept_note(self, name: str) -> str | None:
        """ "deleted from <path> on <date>" (or the turns a rewrite dropped) for rows kept
        from the vault; None for a file as it is on disk."""
        feed = self.vault_feed()
        if feed is None:
            return None
        with self.index._lock:
            return feed.note(self.index._conn(), name)

    def start(self, *, cancel: threading.Event | None = None) -> threading.Thread:
        """Run :meth:`run` in a daemon thread (searches keep answering meanwhile).

        Setting ``cancel`` (as closing the index does) stops it after the batch in hand; the
        files indexed so far stay indexed and the next reconcile picks up the rest.
        """
        with self.index._state_lock:
            if self.index._thread is not None and self.index._thread.is_alive():
                return self.index._thread
            self.index._cancel.clear()
            self.index._indexing = True
            if not self.index._surveyed_once:
                self.index._surveyed.clear()
            stop = self.index._cancel if cancel is None else EitherEvent(self.index._cancel, cancel)

            def work() -> None:
                try:
                    self.index.last_report = self.run(cancel=stop)
                except Exception as exc:  # pragma: no cover - reported, never raised
                    log.exception("background reconcile failed: %s", exc)
                    self.index.warnings.append(Note(INDEX_FAILED, f"indexing failed: {exc}"))
                    self.index._indexing = False
                finally:
                    self.index._surveyed.set()

            thread = threading.Thread(target=work, name="session-index", daemon=True)
            self.index._thread = thread
            try:
                thread.start()
            except BaseException:  # (no thread could be started: no search waits for it)
                self.index._indexing = False
                self.index._surveyed.set()
                raise
            return thread

    # ------------------------------------------------------------------ the source
    # Every file-level read goes to the index's ``source`` (a SessionSource): its files,
    # their parse (resumed from the state kept of each, when it keeps one).

    def _scan_files(self) -> dict[str, tuple[int, int, int]]:
        """(size, mtime_ns, inode) of every session file, by name relative to the root."""
        return self.index.source.list_files()

    def _before_parse(
        self, db: sqlite3.Connection, todo: Sequence[tuple[str, tuple[int, int, int]]]
    ) -> None:
        """Before the files of ``todo`` are parsed: load the parse state kept of each (when
        the source keeps any) and start counting resumed and full reads."""
        self._priors = {}
        self.index.last_reads = {"resumed": 0, "full": 0}
        learned = self.index.source.learned_table
        if learned is not None and not self._relearned:
            # Once: what the source learned of other files in earlier processes.
            self._relearned = True
            self.index.source.relearn(learned_rows.load(db, learned))
        table = self.index.source.state_table
        if table is None:
            return
        names = [name for name, _ident in todo]
        for start in range(0, len(names), IN_CHUNK):
            chunk = names[start : start + IN_CHUNK]
            marks = ",".join("?" * len(chunk))
            for name, blob in db.execute(
                f"SELECT file, state FROM {table} WHERE file IN ({marks})", chunk
            ):
                self._priors[name] = bytes(blob)

    def _parse_file(self, name: str, ident: tuple[int, int, int], *, folded: bool) -> Parsed | str:
        """One file as index rows, or the reason it cannot be indexed."""
        _name, item, resumed = parse_one(
            self.index.source, name, ident, self._priors.pop(name, None), folded=folded
        )
        self._count_read(resumed)
        return item

    def _count_read(self, resumed: bool | None) -> None:
        if resumed is not None:
            self.index.last_reads["resumed" if resumed else "full"] += 1

    def run(
        self,
        *,
        progress: Callable[[int, int], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> ReconcileReport:
        """Bring the index in line with the session dir (only new/changed files are parsed)."""
        report = ReconcileReport()
        started = time.perf_counter()
        if self.index.broken is not None:
            report.elapsed = time.perf_counter() - started
            return report
        with self.index._reconcile_lock:  # one reconcile at a time per store (they share the watch)
            self.index._indexing = True
            if not self.index._surveyed_once:
                self.index._surveyed.clear()
            self._dirty = False
            writer: sqlite3.Connection | None = None
            try:
                writer = self.index._writer()
                if writer is not self.index._db:
                    self.index._follow(writer)
                try:
                    self._reconcile(writer, report, progress, cancel)
                finally:
                    self._end_worker()
                if not report.cancelled:
                    self._full_at = self._pass_at
                    self._keep_fingerprint(writer)
                    self._vault_backfill(writer, cancel)
            except sqlite3.DatabaseError as exc:
                self.index._on_db_error(exc)
            except OSError as exc:  # a file the pass writes beside the index (the vault's)
                if not disk_full(exc):
                    raise
                self.index._set_broken(disk_full_text(self.index.db_path))
            finally:
                if writer is not None and writer is not self.index._db:
                    with contextlib.suppress(sqlite3.Error):
                        writer.close()
                with self.index._state_lock:
                    self.index._pending.clear()
                    self.index._pending_order = []
                    self.index._pending_new = {}
                    self.index._stale_keys.clear()
                self.index._indexing = False
                self.index._surveyed.set()
                if self._dirty:
                    self.index._stats = None
                    self.index._df_cache.clear()
                report.elapsed = time.perf_counter() - started
        if report.added or report.updated or report.removed:
            self.index.semantic.index_changed()  # (the vectors, if built, follow in the background)
        return report

    def _reconcile(
        self,
        db: sqlite3.Connection,
        report: ReconcileReport,
        progress: Callable[[int, int], None] | None,
        cancel: threading.Event | None,
    ) -> None:
        survey = self._survey(db)
        files, known, skipped, reasons = survey.files, survey.known, survey.skipped, survey.reasons
        outside = survey.outside
        report.scope = self._scope
        if survey.unchanged:  # unchanged since the last complete pass (fingerprint)
            self.index._surveyed_once = True
            report.skipped.extend((name, reasons[name]) for name in skipped)
            report.unchanged = len(files) - len(skipped)
            self.index._progress = (0, 0)
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
        feed = self.vault_feed()
        if feed is not None and (gone or not known):
            feed.reset()
            kept = feed.kept(db)
            gone = [name for name in gone if name not in kept]  # rows kept from the vault
        gone_skipped = [name for name in skipped if name not in files]
        stale_names = set(gone) | {n for n, _ in todo if n in known}
        stale_sids: set[int] = set()
        if stale_names:
            for name in stale_names:
                row = db.execute("SELECT sid FROM sessions WHERE file=?", (name,)).fetchone()
                if row is not None:
                    stale_sids.add(int(row[0]))
        # Oldest first, so rowids grow with recency and "newest first" is rowid order. The
        # waiting list, its order and which of it is new are set in one step: a search
        # meanwhile reads the newest waiting files from them.
        todo.sort(key=lambda item: (item[1][1], item[0]))
        with self.index._state_lock:
            self.index._pending = {n for n, _ in todo}
            self.index._pending_order = [n for n, _ in todo]
            self.index._pending_new = {n: i for n, i in todo if n not in known}
            self.index._stale_keys = stale_sids
        self.index._surveyed_once = True
        self.index._surveyed.set()
        total = len(todo)
        self.index._progress = (0, total)
        if progress is not None:
            progress(0, total)
        if gone or gone_skipped:
            with self.index._write_lock:
                db.execute("BEGIN IMMEDIATE")
                try:
                    self._changing(db)
                    for name in gone:
                        # Written (and indexed by its writer) after this pass's scan: the
                        # scan missed it, it is not gone.
                        if self.index.source.identity(name) is not None:
                            continue
                        if feed is not None and feed.keep_gone(db, name):
                            report.removed += 1  # its rows stay, read from the vault's copy
                            continue
                        if self._delete_file(db, name):
                            report.removed += 1
                    db.executemany("DELETE FROM skipped WHERE file=?", [(n,) for n in gone_skipped])
                    db.execute("COMMIT")
                except BaseException:
                    rollback(db)
                    raise
        self._vault_fresh = feed is not None and not known
        if not todo:
            return
        self._before_parse(db, todo)
        bulk = not known and total > BATCH_FILES
        self._bulk = bulk
        if bulk:
            # A first build: nothing to lose if it stops half way (the next reconcile
            # finishes it), so no syncs, and FTS5 segments are merged once at the end
            # rather than again and again while the rows stream in.
            db.execute("PRAGMA synchronous=OFF")
            if self.index.has_fts:
                db.execute(f"INSERT INTO fts(fts, rank) VALUES('automerge', {BULK_AUTOMERGE})")
                hidden.automerge(db, BULK_AUTOMERGE)
        try:
            done = 0
            for parsed in self._parsed_batches(todo, cancel):
                if cancel is not None and cancel.is_set():
                    report.cancelled = True
                    break
                self._apply(db, parsed, known, report)
                done += len(parsed)
                self.index._progress = (done, total)
                for follow in (progress, self.on_batch):
                    if follow is not None:
                        follow(done, total)
            if done < total:
                report.cancelled = True
        finally:
            if feed is not None:
                feed.caught_up()
            if bulk:
                if self.index.has_fts:
                    with self.index._write_lock:
                        db.execute("INSERT INTO fts(fts, rank) VALUES('automerge', 4)")
                        hidden.automerge(db, 4)
                db.execute("PRAGMA synchronous=NORMAL")
        if bulk and not report.cancelled and self.index.has_fts:
            # One segment: a term's rows in one place makes every later lookup several
            # times faster than over the many segments a bulk load leaves (the sessions'
            # recall words too: a batch written is a segment).
            with self.index._write_lock:
                db.execute("INSERT INTO fts(fts) VALUES('optimize')")
                db.execute("INSERT INTO recall_words(recall_words) VALUES('optimize')")
                hidden.optimize(db)
            self._note_common_terms(db)

    def _vault_backfill(self, db: sqlite3.Connection, cancel: threading.Event | None) -> None:
        """After a complete pass: see :meth:`VaultFeed.settle`."""
        feed = self.vault_feed()
        if feed is not None:
            fresh, self._vault_fresh = self._vault_fresh, False
            feed.settle(
                db,
                self.index._write_lock,
                lambda items: self._insert_isolated(db, items),
                lambda: self._changing(db),
                fresh=fresh,
                folded=not self.index.has_fts,
                cancel=cancel,
            )

    def _changing(self, db: sqlite3.Connection) -> None:
        """In a transaction about to change what is indexed: the stored scan fingerprint no
        longer describes the index, and cached statistics are stale."""
        db.execute("DELETE FROM meta WHERE key='scan_fp'")
        self._dirty = True

    def _keep_fingerprint(self, db: sqlite3.Connection) -> None:
        """After a complete full pass: remember its scan's fingerprint, unless another
        connection changed the index meanwhile (then the next open compares everything)."""
        if self._scan_fp is None:
            return
        fp, version = self._scan_fp
        self._scan_fp = None
        with self.index._write_lock:
            db.execute("BEGIN IMMEDIATE")
            try:
                if db.execute("PRAGMA data_version").fetchone()[0] == version:
                    db.execute(
                        "INSERT OR REPLACE INTO meta(key, value) VALUES ('scan_fp', ?)", (fp,)
                    )
                db.execute("COMMIT")
            except BaseException:
                rollback(db)
                raise

    def _survey(self, db: sqlite3.Connection) -> Survey:
        """What to compare (see :class:`Survey`).

        A full pass stats every file and reads every indexed identity. After one, when the
        dir is large, a :class:`DirWatch` names what changed since, and only those names
        are looked at (the others are as the last pass left them); a full pass runs again
        when the watch lost events or after :data:`FULL_PASS_INTERVAL`.
        """
        watch = self.index._watch
        source = self.index.source
        names: set[str] | None = None
        token = self.index._token(db)
        if (
            watch is not None
            and self._full_at is not None
            and time.monotonic() - self._full_at < FULL_PASS_INTERVAL
            and token == self._db_token  # not another database (rebuilt meanwhile)
        ):
            paths = watch.drain()
            names = None if paths is None else source.changed_names(paths)
        self._db_token = token
        # Until this reconcile completes, the next one must stat every file again: the
        # names drained here are gone from the watch.
        self._pass_at, self._full_at = self._full_at, None
        self._scan_fp = None
        skipped: dict[str, tuple[int, int, int]] = {}
        reasons: dict[str, str] = {}
        if names is not None:
            idents = source.identities(names)
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
            return Survey(files, known, skipped, reasons, int(indexed) - len(known))
        if watch is not None and watch.drain() is None:
            watch.close()  # (a watch that lost nothing goes on: its changes are in the scan)
            self.index._watch = watch = None
        started = time.monotonic()
        self._scope = "full"
        self._full_passes += 1
        if (
            watch is None
            and self._full_passes > 1
            and source.watchable
            and self.index.watch_min_files >= 0
            and started >= self._watch_again_at
        ):
            # Not on a process's first pass: a watch serves only the reconciles after the one
            # that builds it (a command that reconciles once never needs one), and building
            # it walks every folder of a tree (a Kimi or Cline store of 5,000 sessions: 5,000
            # to 15,000 of them), time the first answer should not wait for.
            # Watch first, then scan: a change made during the scan is seen next time.
            self.index._watch = DirWatch.create(
                source.root, tree=source.watch_tree, skip=source.watch_skip
            )
            if self.index._watch is None:
                # (too many folders, or no inotify: a try walks the whole tree, so not again
                # before the next periodic full pass)
                self._watch_again_at = started + FULL_PASS_INTERVAL
        files = self._scan_files()
        if self.index._watch is not None and len(files) < self.index.watch_min_files:
            self.index._watch.close()  # a small dir is scanned in no time: keep no watch
            self.index._watch = None
        self._pass_at = started
        if not self.index.memory:
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
                return Survey(files, files, skipped, reasons, 0, unchanged=True)
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
        return Survey(files, known, skipped, reasons, 0)

    def _parsed_batches(
        self, todo: list[tuple[str, tuple[int, int, int]]], cancel: threading.Event | None
    ) -> Iterator[list[tuple[str, Parsed | str]]]:
        """Batches of parsed files, in order. A first build of many files has them read and
        parsed by worker processes while this thread writes (see :mod:`.parsing`);
        otherwise they are parsed in this thread. (A parser thread beside the writer was
        measured slower and costlier: both need the GIL for every row.)"""
        folded = not self.index.has_fts
        workers = self._workers = self._parse_workers(len(todo), folded)
        self._worker = workers[0] if workers else None
        # the workers' tasks carry their parse states; here, _parse_file finds them
        pop = self._priors.pop if workers else lambda _n, _d: None
        tasks = [(n, ident, pop(n, None)) for n, ident in todo]

        def here(chunk: list[parsing.Task]) -> list[parsing.Done]:
            if not workers:  # parsed here (and the read counted)
                return [
                    (n, self._parse_file(n, ident, folded=folded), None) for n, ident, _ in chunk
                ]
            return parsing.parse_all(self.index.source, chunk, folded=folded)

        size = PARSE_FILES if workers else BATCH_FILES
        parsed = parsing.batches(tasks, size, here, workers)
        try:
            for batch in parsed:
                if cancel is not None and cancel.is_set():
                    return
                out: list[tuple[str, Parsed | str]] = []
                for name, item, resumed in batch:
                    self._count_read(resumed)
                    out.append((name, item))
                yield out
        finally:
            parsed.close()  # the workers end (the first once it kept what it was handed)

    def _end_worker(self) -> None:
        """Wait for the worker processes of a first build to end (the first once it kept the
        last files it was handed: meanwhile, the index was finished); what it could not keep
        is noted."""
        workers, self._workers, self._worker = self._workers, [], None
        for worker in workers:
            worker.close()
        feed = self.vault_feed()
        unkept = [why for worker in workers for why in worker.unkept]
        if unkept and feed is not None:
            feed.missed_some(unkept)

    def _parse_workers(self, files: int, folded: bool) -> list[parsing.Worker]:
        """The worker processes that parse a first build (none: this one parses). The first
        keeps the files in the vault (with the vault on); the others hand the bytes they
        read back, for it to keep."""
        if (
            not self._bulk
            or files < self.worker_min_files
            or not self.index.source.parses_apart  # its parse keeps state
            or not parsing.picklable(self.index.source)
        ):
            return []
        feed = self.vault_feed()
        vault_at = None if feed is None else (self.index.source_kind, feed.vault_dir)
        count = self.parse_workers if self.parse_workers is not None else parsing.worker_count()
        workers: list[parsing.Worker] = []
        try:
            for n in range(max(1, min(count, files // PARSE_FILES))):
                workers.append(
                    parsing.Worker(
                        self.index.source,
                        folded=folded,
                        vault_at=vault_at if n == 0 else None,
                        hand_back=n > 0 and vault_at is not None,
                    )
                )
        except (OSError, RuntimeError) as exc:
            log.warning("no parsing worker (%s): parsing here", exc)
        return workers

    def _apply(
        self,
        db: sqlite3.Connection,
        parsed: list[tuple[str, Parsed | str]],
        known: dict[str, tuple[int, int, int]],
        report: ReconcileReport,
    ) -> None:
        """Write one batch of parsed files in one transaction, with a few statements per
        batch rather than several per file; then keep the batch's files in the vault."""
        feed = self.vault_feed()
        fresh: list[Parsed] = []
        with self.index._write_lock:
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
                for name, item in parsed:
                    if isinstance(item, str):
                        ident = self.index.source.identity(name)
                        if ident is None or current.get(name) == ident:
                            continue  # gone, or indexed as it is now (a write meanwhile)
                        if feed is not None and name in current:
                            # its last readable version stays findable
                            feed.keep_dropped(db, name, [], fts=self.index.has_fts)
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
                        if cur != known.get(name) and cur == self.index.source.identity(name):
                            # A write (through this store or another process) indexed the
                            # file as it is now after this pass parsed it: this parse is
                            # older, and must not replace the newer rows.
                            continue
                        if feed is not None:
                            feed.keep_dropped(
                                db, name, [m[4] for m in item.messages], fts=self.index.has_fts
                            )
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
                    if feed is not None:
                        feed.forget(db, [i.file for i in fresh])
                # The batch's files leave the waiting list as they become searchable: a
                # search takes its snapshot with the list (see ``_relevance_locked``).
                with self.index._state_lock:
                    db.execute("COMMIT")
                    self.index._pending.difference_update(names)
            except BaseException:
                rollback(db)
                if feed is not None:
                    feed.reset()
                raise
        if feed is None:
            return
        kept: list[Kept] = [  # (a worker process kept the files it parsed)
            (i.file, i.session_id, len(i.messages), i.raw) for i in fresh if not i.kept
        ]
        if not kept or (self._worker is not None and self._worker.keep(kept)):
            return  # nothing left, or handed to the worker to keep with the files it parsed
        if self._bulk:  # kept while the next batch is written
            feed.keep_behind(kept)
        else:
            feed.keep(kept)

    def _insert_isolated(
        self, db: sqlite3.Connection, items: list[Parsed]
    ) -> list[tuple[str, str]]:
        """:func:`~.rows.insert_isolated` through :meth:`_insert_batch`."""
        return insert_isolated(db, items, lambda batch: self._insert_batch(db, batch))

    def _insert(self, db: sqlite3.Connection, item: Parsed, next_id: int = 0) -> int:
        """Insert one parsed file (``next_id`` is ignored: ids follow the table's max)."""
        return self._insert_batch(db, [item])

    def _insert_batch(self, db: sqlite3.Connection, items: Sequence[Parsed]) -> int:
        """Insert parsed files (none of them indexed now); returns the next free message id
        (see :func:`~.rows.insert_rows`)."""
        next_id = insert_rows(db, items, fts=self.index.has_fts)
        self._inserted(db, items)
        return next_id

    def _inserted(self, db: sqlite3.Connection, items: Sequence[Parsed]) -> None:
        """After ``items`` were inserted, in the same transaction: keep their parse states
        and write their hidden parts."""
        hidden.insert(db, items, fts=self.index.has_fts)
        partly.insert(db, items)
        source = self.index.source
        if source.state_table is not None:
            db.executemany(
                f"INSERT OR REPLACE INTO {source.state_table}(file, state) VALUES (?, ?)",
                [(item.file, item.state) for item in items if item.state is not None],
            )
        if source.learned_table is not None:
            learned_rows.save(db, source.learned_table, source.learned())

    def _delete_file(self, db: sqlite3.Connection, name: str) -> bool:
        for table in (self.index.source.state_table, self.index.source.learned_table):
            if table is not None:
                db.execute(f"DELETE FROM {table} WHERE file=?", (name,))
        hidden.delete(db, name, fts=self.index.has_fts)
        partly.delete(db, name)
        return delete_rows(db, name, fts=self.index.has_fts)

    def after_write(self, session_id: str, path: Path, data: JSONDict | None) -> None:
        """Keep the index in step with a write made through this store (a read-only source
        is never written)."""
        if self.index.source.read_only or self.index.broken is not None or self.index._db is None:
            return
        # A store that drops turns on write (``truncate`` retention) keeps every version it
        # writes, so the next write that drops turns finds the one before in the vault.
        truncates = self.index.writer is not None and self.index.writer.retention == "truncate"
        folded = not self.index.has_fts
        feed = self.vault_feed() if truncates else None
        kept: tuple[str, str, int] | None = None
        try:
            with self.index._lock, self.index._write_lock:
                self.index._follow_file()
                db = self.index._conn()
                db.execute("BEGIN IMMEDIATE")
                try:
                    self._changing(db)
                    if data is None:
                        self._delete_file(db, path.name)
                    else:
                        st = os.stat(path)
                        try:
                            item: Parsed | str = extract(
                                path.name, FileIdentity.of(st), dict(data), folded=folded
                            )
                        except Exception as exc:  # the content: skipped, as a reconcile would
                            item = skip_reason(exc)
                        if not isinstance(item, str):
                            item.hidden = safely([], hidden_rows, dict(data), folded)
                        if feed is not None and not isinstance(item, str):
                            feed.keep_dropped(
                                db, path.name, [m[4] for m in item.messages], fts=self.index.has_fts
                            )
                            feed.forget(db, [path.name])
                            kept = (path.name, item.session_id, len(item.messages))
                        self._delete_file(db, path.name)
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
                    rollback(db)
                    raise
            self.index._stats = None
            self.index._df_cache.clear()
        except (sqlite3.Error, OSError, Broken) as exc:
            log.warning("could not update the index for %s: %s", session_id, exc)
            kept = None
            if feed is not None:
                feed.reset()
        if feed is not None and kept is not None:
            feed.keep([kept])

    def rebuild(
        self,
        *,
        progress: Callable[[int, int], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> ReconcileReport:
        """Throw the index away and build it again from the files."""
        self.index._cancel.set()
        thread = self.index._thread
        if thread is not None and thread.is_alive() and thread is not threading.current_thread():
            thread.join()
        self.index._cancel.clear()
        with self.index._lock:
            if self.index._db is not None:
                with contextlib.suppress(sqlite3.Error):
                    self.index._db.close()
            self.index._db = None
            self.index.broken = None
            self.index.warnings = []
            self.index._open(reset=True)  # emptied in place: other processes may have it open
            if self._vault_feed is not None:
                self._vault_feed.reset()
            self.index._stats = None
            self.index._df_cache.clear()
            self._full_at = None
        return self.run(progress=progress, cancel=cancel)

    def _note_common_terms(self, db: sqlite3.Connection) -> None:
        """Keep the document counts of the frequent words (see :meth:`_df`)."""
        with self.index._write_lock:
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
                rollback(db)
                raise
