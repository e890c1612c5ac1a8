"""The app's view of the stores: every call here runs in a thread worker, never on the UI thread.

The app holds no session logic: this adapter calls the
:class:`~session_browser.core.multi.StoreGroup` of the stores (which searches and lists each
store through its index when it has one) and the indexes' own API (building, live changes),
and returns plain data.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from session_browser.core import recall
from session_browser.core.actions.rescue import writable_stores
from session_browser.core.index import SqliteSessionStore
from session_browser.core.model import JSONDict, SessionSummary
from session_browser.core.multi import (
    RecallStore,
    StoreGroup,
    files_fingerprint,
    index_of,
    resume_of,
)
from session_browser.core.notes import INDEX_FAILED, code_of
from session_browser.core.open import open_stores, open_team
from session_browser.core.pgindex.conn import is_index_url
from session_browser.core.pgindex.store import PgIndexStore
from session_browser.core.quarantine import list_items
from session_browser.core.query import QueryError
from session_browser.core.resume_line import Resume
from session_browser.core.search.results import SearchResult
from session_browser.core.vault import VaultDamaged, VaultError, Version
from session_browser.core.vault.reading import kept_versions, load_session

SORTS = recall.SORTS  # the orders of the Recent list
SEARCH_LIMIT = 50
SEARCH_WINDOW = 2


@dataclass
class IndexState:
    """Whether the index is building (with done/total files), ready, stopped part-way, or
    absent (scanning files)."""

    mode: str = "scan"  # "scan" | "building" | "ready" | "cancelled"
    done: int = 0
    total: int = 0
    # Why the last build stopped short (an index that failed part-way holds what it had).
    error: str | None = None

    @property
    def progress(self) -> float | None:
        """Fraction of the files done (None while the files are still being listed)."""
        return self.done / self.total if self.total > 0 else None

    def describe(self) -> str:
        if self.mode == "building":
            if self.total <= 0:
                return "index: checking for new or changed files"
            pct = int(self.done * 100 / self.total)
            return f"index building {pct}% — {self.done:,} of {self.total:,} files"
        if self.mode == "cancelled":
            return (
                f"index stopped at {self.done:,} of {self.total:,} files"
                " (the rest are not searched; Ctrl+P › Resume index build)"
            )
        if self.error:
            return f"index build failed: {self.error} (searching what was indexed)"
        if self.mode == "ready":
            return "index ready"
        return "scanning files (no index)"

    def describe_short(self) -> str:
        """:meth:`describe` for a narrow status line."""
        if self.mode == "building":
            if self.total <= 0:
                return "index: checking"
            return f"index {int(self.done * 100 / self.total)}%"
        if self.mode == "cancelled":
            return f"index stopped at {self.done:,}/{self.total:,}"
        if self.error:
            return "index build failed"
        return "index ready" if self.mode == "ready" else "no index"


@dataclass
class LiveChanges:
    """What one look at the stores found: whether anything was added, changed or removed
    since the last look, and the sessions that are new or changed since the user last
    looked at them (opening a session counts as looking)."""

    changed: bool = False
    fresh: frozenset[str] = frozenset()


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim`` (None elsewhere: musl, macOS, Windows)."""
    try:
        import ctypes
        import ctypes.util

        name = ctypes.util.find_library("c")
        if not name:
            return None
        fn = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError, ImportError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return cast("Callable[[int], int]", fn)


_TRIM = _malloc_trim()


def release_free_memory() -> None:
    """Give the memory Python has freed back to the system (glibc keeps freed heap pages
    otherwise: after an index build or a closed 20,000-message session the process kept
    tens of MB it no longer used). Results never change; a few ms at most."""
    if _TRIM is not None:
        _TRIM(0)


def collect_and_release() -> None:
    """After a screen with much data closed (a big session, an export): collect the cycles
    it left (a widget tree refers to itself, so it waits for the cycle collector), then
    give what that freed back to the system (:func:`release_free_memory`)."""
    gc.collect()
    release_free_memory()


class Backend:
    """Stores opened for the app, and the few calls it makes on them."""

    def __init__(
        self, dirs: Sequence[str | Path] | None, *, indexed: bool = True, vault: bool = True
    ) -> None:
        # None: the default stores; an empty list: no store at all (every one named is gone).
        # ``vault``: the indexes keep what they read in the vault (not for the demo's store).
        self.dirs = [str(d) for d in dirs] if dirs is not None else None
        self.vault = vault
        self.group: StoreGroup = self._open(indexed)
        self._cancel = threading.Event()
        # Per store: how many of its warnings were there when our last build started (a
        # failure since then is this build's).
        self._warnings_seen: dict[int, int] = {}
        # Per store: its index generation when the app first found it up to date (what is
        # indexed after that is new); per session id: the generation it was last seen at.
        self._baseline: dict[int, int] = {}
        self._seen: dict[str, int] = {}
        self._fresh: frozenset[str] = frozenset()
        self._live_lock = threading.Lock()
        # Per store without an index: a hash of its files' identities at the last look (not
        # the identities: 30,000 files would keep megabytes for one comparison).
        self._identities: dict[int, int] = {}
        self._search_lock = threading.Lock()
        self.closed = False

    def close(self) -> None:
        """Stop a running index build, then close every store: its background thread, its
        database connections and its file watcher. Calling it again does nothing."""
        if self.closed:
            return
        self.closed = True
        self._cancel.set()
        self.group.close()

    def _open(self, indexed: bool) -> StoreGroup:
        if self.dirs == []:
            return StoreGroup([])
        if self.dirs is not None and len(self.dirs) == 1 and is_index_url(self.dirs[0]):
            # the team index (PostgreSQL): read-only, searched and read like an index
            return open_team(self.dirs[0])
        if indexed:
            # No build here: the app starts it in the background (start_index), so the
            # first paint never waits for it.
            return open_stores(self.dirs, indexed=True, reconcile="none", vault=self.vault)
        return open_stores(self.dirs)

    # ------------------------------------------------------------------ description

    @property
    def stores(self) -> list[RecallStore]:
        return list(self.group.stores)

    def _indexes(self) -> list[SqliteSessionStore | PgIndexStore]:
        return [i for i in map(index_of, self.stores) if i is not None]

    def store_paths(self) -> list[str]:
        return [s.label for s in self.stores]

    @property
    def indexed(self) -> bool:
        return bool(self._indexes())

    def index_state(self) -> IndexState:
        """Reads in-memory counters only (no I/O): safe to call on the UI thread."""
        if not self.indexed:
            return IndexState("scan")
        building = False
        done = total = 0
        for index in self._indexes():
            building = building or index.indexing
            one_done, one_total = index.progress
            done += one_done
            total += one_total
        if building:
            return IndexState("building", done, total)
        error = self._build_error()
        if self._cancel.is_set() and done < total and not error:
            return IndexState("cancelled", done, total)
        return IndexState("ready", done, total, error)

    def _build_error(self) -> str | None:
        """The failure of the last build we started, from the stores' warnings (no I/O)."""
        for index in self._indexes():
            warnings = index.warnings
            seen = self._warnings_seen.get(id(index), 0)
            for warning in warnings[seen if seen <= len(warnings) else 0 :]:
                if code_of(warning) == INDEX_FAILED:
                    return warning.partition(":")[2].strip() or str(warning)
        return None

    def skipped_files(self) -> int | None:
        """How many files the indexes skipped (could not read or index); None when no store
        says. Reads each index's status (a directory listing): call it from a worker."""
        total: int | None = None
        for index in self._indexes():
            try:
                skipped = index.status().get("skipped")
            except Exception:  # a status that fails says nothing about skipped files
                continue
            if isinstance(skipped, list):  # the team index skips nothing: it says nothing
                total = (total or 0) + len(skipped)
        return total

    def start_index(self) -> None:
        """Start (or resume) bringing every index up to date, in the background."""
        self._cancel = threading.Event()
        for index in self._indexes():
            self._warnings_seen[id(index)] = len(index.warnings)
            index.start_reconcile(cancel=self._cancel)

    def cancel_index(self) -> bool:
        """Stop the index build after the batch in hand; True when one was running.

        What is indexed so far stays; :meth:`start_index` picks up the rest."""
        running = any(i.indexing for i in self._indexes())
        self._cancel.set()
        return running

    # ------------------------------------------------------------------ live

    def _live_stores(self) -> list[SqliteSessionStore]:
        """The local indexes: they reconcile with their files and say what changed."""
        return self.group.local_indexes()

    def _plain_changed(self) -> bool:
        """Whether the files of a store without an index were added, changed or removed
        since the last look (the first look only records them)."""
        changed = False
        for store in self.group.plain_stores():
            now = files_fingerprint(store)
            before = self._identities.get(id(store))
            self._identities[id(store)] = now
            if before is not None and before != now:
                changed = True
        return changed

    def session_identity(self, session_id: str, store_label: str = "") -> tuple[int, ...] | None:
        """(size, mtime_ns, inode) of the file holding ``session_id`` (None when none does):
        what the viewer compares to see its session changed."""
        try:
            path = self.group.session_file(session_id, store_label)
            if path is None:
                return None
            st = path.stat()
        except (OSError, ValueError):
            return None
        return (st.st_size, st.st_mtime_ns, st.st_ino)

    def check_changes(self) -> LiveChanges:
        """Bring the indexes in line with their files (the index's own reconcile: its
        inotify watch names what changed, with a full pass now and then) and say what
        changed; for stores without an index, compare the identities of their files.
        Nothing for an index while a build runs (it picks the changes up itself). Call it
        from a worker: it stats files and reads the index."""
        if self.closed:
            return LiveChanges(fresh=self._fresh)
        with self._live_lock:
            plain = self._plain_changed()
        if not self._live_stores():
            return LiveChanges(plain, self._fresh)
        with self._live_lock:
            changed = plain
            fresh: set[str] = set()
            for store in self._live_stores():
                if store.indexing:
                    return LiveChanges(plain, self._fresh)
                key = id(store)
                if key not in self._baseline:  # the first look: what is there is not new
                    self._baseline[key] = int(store.generation())
                    continue
                report = store.reconcile()
                changed = changed or bool(report.added or report.updated or report.removed)
                for session_id, gen in store.changed_since(self._baseline[key]).items():
                    if gen > self._seen.get(session_id, 0):
                        fresh.add(session_id)
            changed = changed or frozenset(fresh) != self._fresh
            self._fresh = frozenset(fresh)
            return LiveChanges(changed, self._fresh)

    @property
    def fresh(self) -> frozenset[str]:
        """The sessions new or changed since the user last looked (from the last check)."""
        return self._fresh

    def mark_seen(self, session_id: str) -> None:
        """The user looked at ``session_id``: it is not new any more (until it changes)."""
        latest = max((int(s.generation()) for s in self._live_stores()), default=0)
        with self._live_lock:
            self._seen[session_id] = latest
            self._fresh = self._fresh - {session_id}

    # ------------------------------------------------------------------ search

    def search(
        self,
        query: str,
        *,
        limit: int = SEARCH_LIMIT,
        window: int = SEARCH_WINDOW,
        is_cancelled: Callable[[], bool] = lambda: False,
    ) -> SearchResult:
        started = time.perf_counter()
        if not query.strip():
            return SearchResult(query=query, mode="scan")
        # One search at a time: each keystroke starts one, and a search cannot be stopped
        # half way, so without this a fast typist's searches would all run at once (while a
        # build runs, each reads files). One superseded while it waited is not run at all.
        with self._search_lock:
            if is_cancelled():
                return SearchResult(query=query, mode="scan", error="superseded", cancelled=True)
            return self._search(query, limit, window, is_cancelled, started)

    def _search(
        self,
        query: str,
        limit: int,
        window: int,
        is_cancelled: Callable[[], bool],
        started: float,
    ) -> SearchResult:
        if self.indexed:
            out = self._search_indexed(query, limit, window, is_cancelled)
        else:
            try:
                candidates = self.group.search_candidates(query, window=window)
            except QueryError as exc:
                return SearchResult(query=query, mode="scan", error=str(exc))
            hits = recall.rank(candidates, limit)
            out = SearchResult(
                query=query, hits=hits, matched_sessions=len(candidates), mode="scan"
            )
        if not out.elapsed_ms:
            out.elapsed_ms = (time.perf_counter() - started) * 1000.0
        return out

    def _search_indexed(
        self, query: str, limit: int, window: int, is_cancelled: Callable[[], bool]
    ) -> SearchResult:
        # A search superseded by the next keystroke stops inside its SQLite statement.
        res = self.group.search_ex(query, limit=limit, window=window, cancelled=is_cancelled)
        res.query = query
        if res.cancelled:
            res.hits, res.error = [], "superseded"
            return res
        res.hits = res.hits[:limit]
        return res

    # ------------------------------------------------------------------ browse

    def count(self, text: str = "") -> int:
        """How many sessions the recent list holds under filter ``text``."""
        return self.group.count(text=text)

    def browse(
        self, offset: int, limit: int, sort: str = "updated", text: str = ""
    ) -> list[SessionSummary]:
        """One page of the recent list, most recent (or biggest) first."""
        return self.group.browse(offset=offset, limit=limit, sort=sort, text=text)

    def refresh(self) -> None:
        """The stores changed under the app (a rescue, an import): nothing is kept here
        between two reads, each list is read again from the stores."""

    # ------------------------------------------------------------------ one session

    def _store_holding(self, session_id: str, store_label: str) -> RecallStore:
        """The store of ``session_id`` (the one labelled ``store_label`` first); KeyError."""
        store = None
        if store_label:
            store = next((s for s in self.stores if s.label == store_label), None)
        if store is None:
            store = self.group.store_of(session_id)
        if store is None:
            raise KeyError(session_id)
        return store

    def resume_of(self, session_id: str, store_label: str = "") -> Resume | None:
        """The shell line that resumes ``session_id`` in the coding agent that wrote it (into
        its dir first), or why none is offered, for the sources that have one (Claude Code,
        Codex); None for the others. Raises KeyError when the session is gone."""
        return resume_of(self._store_holding(session_id, store_label), session_id)

    def projection(self, session_id: str, store_label: str = "") -> list[JSONDict]:
        """The whole archived+active projection of ``session_id``; of the vault's latest copy
        when no store has it any more (raises KeyError when the vault keeps none either)."""
        try:
            return self._store_projection(session_id, store_label)
        except KeyError:
            return self.kept_projection(session_id)[0]

    def kept_versions(self, session_id: str) -> list[Version]:
        """The versions the vault keeps of ``session_id``, oldest first. Reads the vault's
        catalog: call it from a worker."""
        return kept_versions(session_id)

    def kept_projection(
        self, session_id: str, number: int | None = None
    ) -> tuple[list[JSONDict], Version, int]:
        """(the projection, the version, its number) of version ``number`` (1 = the oldest;
        None: the latest) the vault keeps of ``session_id``. KeyError when it keeps none;
        :class:`VaultDamaged` when the copy is damaged (never shown)."""
        try:
            data, version, n = load_session(session_id, number, hidden=True)
        except VaultDamaged:
            raise
        except (VaultError, OSError) as exc:
            raise KeyError(session_id) from exc
        if data is None:
            raise KeyError(session_id)
        return recall.full_view(recall.project(data)), version, n

    def _store_projection(self, session_id: str, store_label: str) -> list[JSONDict]:
        store = self._store_holding(session_id, store_label)
        # Tool calls and results, thinking: the viewer shows them on request.
        return store.projection(session_id, include_hidden=True)

    # ------------------------------------------------------------------ attention

    def quarantine_count(self) -> int:
        """Files waiting for attention (corrupt or spill files) in the JSON stores' dirs
        (the ones the rescue screen lists), 0 when that is unknown."""
        try:
            return len(list_items(writable_stores(self.stores)))
        except Exception:  # a listing problem must never take the app down
            return 0
