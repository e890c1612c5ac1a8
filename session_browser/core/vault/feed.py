"""What the index's reconcile hands the vault: the files it just read, the files found gone,
the rewrites that dropped turns.

The index keeps the rows of a session whose file is gone (instead of dropping them) and the
rows of a version whose rewrite dropped turns (under the name ``<file>#v<version>``, a name no
file has), and notes both in its ``vault_kept`` table: search still finds them, and a hit on
one is built from the vault's copy and says where it came from (:meth:`VaultFeed.note`).
"""

from __future__ import annotations

import functools
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ..files import SHADOW_MARK
from ..forget.deny import denied_session, needs_bytes, screen, screen_bytes, screens
from ..model import JSONDict
from ..settings import vault_on
from .errors import VaultError
from .format import Version
from .parts import keep_parts
from .safety import regular_under
from .store import Vault, default_vault_dir
from .whole import export_bytes

if TYPE_CHECKING:
    from ..sources.base import SessionSource

log = logging.getLogger("session_browser.vault")

F = TypeVar("F", bound=Callable[..., Any])


def _locked(method: F) -> F:
    @functools.wraps(method)
    def run(self: VaultFeed, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            return method(self, *args, **kwargs)

    return cast(F, run)


KEPT_DDL = (
    "CREATE TABLE IF NOT EXISTS vault_kept(file TEXT PRIMARY KEY, vid INTEGER NOT NULL,"
    " path TEXT NOT NULL, at REAL NOT NULL, dropped INTEGER)"
)
#: A file just indexed: (name, session id, messages[, its bytes as read, or None]).
Kept = tuple[str, str, int] | tuple[str, str, int, bytes | None]
FED = "vault_fed"  # index meta key: every file the index holds was handed to the vault once
PARTS_FED = "vault_parts_fed"  # and so were their part files (kept since, or once after)
BACKFILL_BATCH = 500


#: The part files of a session file (by its name under the root): what the source reads
#: with it (Claude Code's subagent runs), kept with it (:mod:`.parts`).
PartFiles = Callable[[str], list[Path]]


def feed_for(kind: str, source: SessionSource) -> VaultFeed | None:
    """The feed of a store of source ``kind`` over ``source``'s root (None: the vault is off
    for it), keeping the part files of its session files with them."""
    if not vault_on(kind):
        return None
    return VaultFeed(kind, source.root, parts=source.part_files, source=source)


def kept_note(path: str, at: float, dropped: int | None) -> str:
    day = datetime.fromtimestamp(at).astimezone().strftime("%Y-%m-%d")
    if dropped:
        return f"{dropped} turns dropped from {path} on {day}"
    return f"deleted from {path} on {day}"


def screened(session_id: str, path: Path, data: bytes | None) -> tuple[bytes | None, bool]:
    """The denylist applied to a file about to be kept (see :mod:`~..forget.deny`): its
    bytes (read here when a denied text may be in them; redacted when one is) and whether it
    is kept at all."""
    if denied_session(session_id):
        return None, False
    if not needs_bytes():
        return data, True
    if data is None:
        try:
            data = path.read_bytes()
        except OSError:
            return None, True  # kept (or not) as before: the keep reads it itself
    out = screen_bytes(session_id, data)
    return out, out is not None


def screened_parts(session_id: str, parts: list[Path]) -> list[Path]:
    """The part files that hold no denied text (one that does is not kept)."""
    if not needs_bytes():
        return parts
    out = []
    for part in parts:
        try:
            data = part.read_bytes()
        except OSError:
            continue
        if screen_bytes(session_id, data) == data:
            out.append(part)
    return out


class VaultFeed:
    """The vault as one indexed store over ``root`` of source ``kind`` feeds it."""

    def __init__(
        self,
        kind: str,
        root: Path,
        vault_root: Path | None = None,
        *,
        parts: PartFiles | None = None,
        source: SessionSource | None = None,
    ) -> None:
        self.kind = kind
        self.root = Path(root)
        self.parts = parts
        # the source read: a session that is no file of its own is kept as it reads it
        self.source = source
        self._vault_root = vault_root
        self._vault: Vault | None = None
        self._kept: dict[str, tuple[int, str, float, int | None]] | None = None
        self.problems: list[str] = []
        # Files handed over that may not be kept (a batch failed): a new index then hands
        # every file over again (see settle), rather than taking the build as kept.
        self.missed = False
        self.lock = threading.RLock()  # the reconcile's thread and the searches share it
        self._behind: threading.Thread | None = None  # see keep_behind
        self._behind_error: BaseException | None = None

    @property
    def vault_dir(self) -> Path:
        return self._vault_root or default_vault_dir()

    @property
    def vault(self) -> Vault:
        """The vault (opened on first use; every use under :attr:`lock`)."""
        if self._vault is None:
            self._vault = Vault(self.vault_dir)
        return self._vault

    def close(self) -> None:
        self.caught_up()
        self._close()

    @_locked
    def _close(self) -> None:
        if self._vault is not None:
            self._vault.close()
            self._vault = None

    def path_of(self, name: str) -> str:
        return os.fspath(self.root / name)

    # ------------------------------------------------------------------ keeping

    @_locked
    def keep(self, items: Iterable[Kept]) -> int:
        """Keep the files ``(name, session_id, messages[, bytes])`` just indexed, in one batch
        (one fsync); a file that cannot be read is left for the next pass. ``bytes``: what the
        index read and indexed of it (the file is then not read again). A source with part
        files keeps them with each file, one file at a time (:mod:`.parts`). The versions
        added; a batch that fails is reported (:attr:`problems`, :attr:`missed`)."""
        added = 0
        try:
            with self.vault.batch():
                # The denylist and the settings looked at once for the batch, once it holds
                # the vault (a forget that wrote its entry while this waited is seen): when
                # nothing is to be screened (the usual case), no file is asked again.
                screening = screens()
                real_dirs: set[str] = set()  # (each folder of the batch looked at once)
                read: list[tuple[str, str, bytes, int | None]] = []
                for item in items:
                    name, session_id, messages = item[:3]
                    data = item[3] if len(item) > 3 else None
                    if self.source is not None and self.source.kept_whole(name):
                        whole = self._whole(name, session_id, data, screening)
                        if whole is not None:
                            read.append((self.path_of(name), session_id, whole, messages))
                        continue
                    path = self.root / name
                    try:  # a link or special file the source gave is never kept
                        regular_under(path, self.root, real_dirs)
                    except OSError as exc:
                        log.warning("vault: %s not kept: %s", name, exc)
                        continue
                    if screening:
                        data, keep_it = screened(session_id, path, data)
                        if not keep_it:
                            continue
                    parts = None if self.parts is None else self._regular_parts(name, real_dirs)
                    if parts and screening:
                        parts = screened_parts(session_id, parts)
                    if data is not None and not parts:  # kept with the batch's others
                        read.append((self.path_of(name), session_id, data, messages))
                        continue
                    try:
                        if self._keep_one(name, session_id, messages, data, parts):
                            added += 1
                    except OSError as exc:
                        log.warning("vault: %s not kept: %s", name, exc)
                if read:
                    again = None
                    if self.parts is not None:  # (its latest version may have had parts)

                        def again(
                            path: str, session_id: str, data: bytes, messages: int | None
                        ) -> bool:
                            rel = os.path.relpath(path, self.root).replace(os.sep, "/")
                            return self._keep_one(rel, session_id, messages, data, [])

                    added += self.vault.keep_many(self.kind, read, again=again)
        except (OSError, sqlite3.Error, VaultError) as exc:
            self.missed_some([f"the vault could not keep files: {exc}"])
        return added

    def _whole(
        self, name: str, session_id: str, data: bytes | None, screening: bool = True
    ) -> bytes | None:
        """What the vault keeps of session ``name``, no file of its own (None: nothing, it
        is forgotten or cannot be read now): ``data``, its export as the index read it,
        else its export read now (see :mod:`.whole`), the denylist applied (``screening``:
        what :func:`screens` said for the batch; False, nothing to apply)."""
        if screening and denied_session(session_id):
            return None
        if data is None:
            assert self.source is not None
            try:
                session = self.source.load(name, include_hidden=True)
            except Exception as exc:  # its content: not kept now, as an unreadable file
                log.warning("vault: %s not kept: %s", name, exc)
                return None
            if session is not None and screening:
                session = screen(session_id, session)
            if session is None:
                return None
            data = export_bytes(self.kind, name, session)
        return screen_bytes(session_id, data) if screening and needs_bytes() else data

    def _keep_one(
        self,
        name: str,
        session_id: str,
        messages: int | None,
        data: bytes | None,
        parts: list[Path] | None,
    ) -> bool:
        """Keep file ``name`` (``data``: its bytes, None: read from the file) and, for a
        source with part files, ``parts`` with it (inside a batch); whether a version was
        added (``OSError`` when the file cannot be read)."""
        path = self.root / name
        if data is None:
            kept = self.vault.keep_file(
                self.kind, path, session_id, messages=messages, root=self.root
            )
        else:
            kept = self.vault.keep(self.kind, path, session_id, data, messages=messages)
        if parts is not None:
            kept = keep_parts(
                self.vault, self.kind, path, session_id, parts, added=kept, messages=messages
            )
        return kept is not None

    @_locked
    def _keep_parts(self, items: Sequence[tuple[str, str, int]]) -> None:
        """Keep the part files of the files ``(name, session_id, messages)`` kept already."""
        if self.parts is None:
            return
        try:
            with self.vault.batch():
                for name, session_id, messages in items:
                    keep_parts(
                        self.vault,
                        self.kind,
                        self.root / name,
                        session_id,
                        self._regular_parts(name),
                        added=None,
                        messages=messages,
                    )
        except (OSError, sqlite3.Error, VaultError) as exc:
            self.missed_some([f"the vault could not keep part files: {exc}"])

    def _regular_parts(self, name: str, real_dirs: set[str] | None = None) -> list[Path]:
        """The part files of ``name`` that are regular files inside the root (a link or
        special file among them is never kept); ``real_dirs``: see :func:`regular_under`."""
        out = []
        for part in self.parts(name) if self.parts is not None else []:
            try:
                regular_under(part, self.root, real_dirs)
            except OSError as exc:
                log.warning("vault: %s not kept: %s", part, exc)
                continue
            out.append(part)
        return out

    def missed_some(self, problems: Sequence[str]) -> None:
        """Files handed over were not kept, for ``problems``: they are handed over again."""
        for problem in problems:
            log.warning("vault: %s", problem)
        self.problems.extend(problems)
        self.missed = True

    def keep_behind(self, items: list[Kept]) -> None:
        """:meth:`keep` in a thread of its own, once the batch before is kept (so at most one
        batch waits): its compression, writes and fsyncs overlap the index's next batch.
        :meth:`caught_up` waits for it."""
        self.caught_up()
        thread = threading.Thread(
            target=self._keep_noting, args=(items,), name="vault-keep", daemon=True
        )
        self._behind = thread
        thread.start()

    def _keep_noting(self, items: list[Kept]) -> None:
        try:
            self.keep(items)
        except BaseException as exc:  # raised where the caller waits for it
            self._behind_error = exc

    def caught_up(self) -> None:
        """Wait for the batch :meth:`keep_behind` started (what it raised is raised here)."""
        thread, self._behind = self._behind, None
        if thread is not None:
            thread.join()
        error, self._behind_error = self._behind_error, None
        if error is not None:
            raise error

    # ------------------------------------------------------------------ the index's side

    @_locked
    def kept(self, db: sqlite3.Connection) -> dict[str, tuple[int, str, float, int | None]]:
        """The index's rows kept from the vault: file -> (version id, path, when, turns
        dropped or None for a deleted file)."""
        if self._kept is None:
            try:
                rows = db.execute("SELECT file, vid, path, at, dropped FROM vault_kept").fetchall()
            except sqlite3.OperationalError:  # no such table: nothing kept yet
                rows = []
            self._kept = {r[0]: (int(r[1]), str(r[2]), float(r[3]), r[4]) for r in rows}
        return self._kept

    @_locked
    def keep_gone(self, db: sqlite3.Connection, name: str) -> bool:
        """File ``name`` is gone: keep its rows (in the caller's transaction) when the vault
        holds a copy of it. False: no copy, its rows go."""
        path = self.path_of(name)
        try:
            version = self.vault.latest_of(self.kind, path)
            if version is None:
                return False
            self.vault.mark_gone(self.kind, path)
        except (OSError, sqlite3.Error, VaultError) as exc:
            log.warning("vault: %s: %s", name, exc)
            return False
        self._note(db, name, version, path, None)
        return True

    def keep_dropped(
        self, db: sqlite3.Connection, name: str, new_texts: Sequence[str], *, fts: bool
    ) -> bool:
        """File ``name`` is about to be indexed again: when its indexed version holds a turn
        the new one no longer has, its rows are kept under another name (in the caller's
        transaction) and True is returned. A file the index holds no rows of is answered
        without the lock (which a batch being kept behind holds through its fsyncs)."""
        row = db.execute("SELECT row_lo, row_hi FROM sessions WHERE file=?", (name,)).fetchone()
        if row is None:
            return False
        return self._keep_dropped(db, name, row, new_texts, fts=fts)

    @_locked
    def _keep_dropped(
        self,
        db: sqlite3.Connection,
        name: str,
        row: Sequence[Any],
        new_texts: Sequence[str],
        *,
        fts: bool,
    ) -> bool:
        have = set(new_texts)
        old = db.execute(
            "SELECT id, text FROM messages WHERE id BETWEEN ? AND ?", (row[0], row[1])
        ).fetchall()
        dropped = sum(1 for _mid, t in old if t not in have)
        if not dropped:
            return False
        path = self.path_of(name)
        try:
            version = self.vault.latest_of(self.kind, path)
        except (OSError, sqlite3.Error, VaultError) as exc:
            log.warning("vault: %s: %s", name, exc)
            return False
        if version is None:
            return False
        shadow = f"{name}{SHADOW_MARK}{version.vid}"
        if db.execute("SELECT 1 FROM sessions WHERE file=?", (shadow,)).fetchone():
            return False  # kept already (this version was read again)
        db.execute("UPDATE sessions SET file=? WHERE file=?", (shadow, name))
        # Only the dropped turns stay under the shadow name: what the new version still
        # holds is found there, as the session it is now.
        gone = [(mid,) for mid, text in old if text in have]
        if gone and fts:
            db.executemany(
                "INSERT INTO fts(fts, rowid, text) SELECT 'delete', id, text FROM messages "
                "WHERE id = ?",
                gone,
            )
        db.executemany("DELETE FROM messages WHERE id = ?", gone)
        db.execute("UPDATE sessions SET nmsg = ? WHERE file = ?", (dropped, shadow))
        self._note(db, shadow, version, path, dropped)
        return True

    def _note(
        self, db: sqlite3.Connection, file: str, version: Version, path: str, dropped: int | None
    ) -> None:
        db.execute(KEPT_DDL)
        at = time.time()
        db.execute(
            "INSERT OR REPLACE INTO vault_kept(file, vid, path, at, dropped) VALUES (?,?,?,?,?)",
            (file, version.vid, path, at, dropped),
        )
        if self._kept is not None:
            self._kept[file] = (version.vid, path, at, dropped)

    def settle(
        self,
        db: sqlite3.Connection,
        write_lock: threading.Lock,
        insert: Callable[[list[Any]], object],
        changing: Callable[[], None],
        *,
        fresh: bool,
        folded: bool,
        cancel: threading.Event | None,
    ) -> None:
        """After a complete pass of the index ``db``. A new or rebuilt index (``fresh``):
        index the deleted files the vault keeps too (every file of the build was kept as it
        was indexed). Once per index built before the vault was on for its source, and after
        a pass whose files were not all kept (:attr:`missed`): keep every file it holds, a
        batch at a time, so a file deleted before it changes is kept; once per index built
        before the vault kept part files: keep those of every file it holds (the part files
        only: its own bytes are kept already). Until that is done without a miss, the index
        is not marked as fed: its next open tries again."""
        missed, self.missed = self.missed, False
        marks = [FED] if self.parts is None else [FED, PARTS_FED]
        done = "INSERT OR REPLACE INTO meta(key, value) VALUES " + ", ".join(
            f"('{key}', '1')" for key in marks
        )
        if fresh:
            with write_lock:
                db.execute("BEGIN IMMEDIATE")
                try:
                    if self.revive(db, insert, folded=folded):
                        changing()
                    if not missed:
                        db.execute(done)
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    self.reset()
                    raise
            if not missed:
                return
        elif missed:
            with write_lock:
                db.execute(f"DELETE FROM meta WHERE key='{FED}'")
        fed = {
            k for (k,) in db.execute(f"SELECT key FROM meta WHERE key IN ('{FED}', '{PARTS_FED}')")
        }
        if FED in fed and (PARTS_FED in fed or self.parts is None):
            return
        keep = self._keep_parts if FED in fed else self.keep
        kept = self.kept(db)
        rows = [
            (f, sid, int(n))
            for f, sid, n in db.execute("SELECT file, session_id, nmsg FROM sessions")
            if f not in kept
        ]
        for start in range(0, len(rows), BACKFILL_BATCH):
            if cancel is not None and cancel.is_set():
                return
            keep(rows[start : start + BACKFILL_BATCH])
        if self.missed:  # kept by the next open's pass
            self.missed = False
            return
        with write_lock:
            db.execute(done)

    @_locked
    def revive(
        self, db: sqlite3.Connection, insert: Callable[[list[Any]], object], *, folded: bool
    ) -> int:
        """Index again (in the caller's transaction) the deleted files of this root the vault
        keeps and the index does not hold (a rebuilt or new index); how many."""
        from ..files import FileIdentity
        from ..search.rows import extract
        from .reading import load_version

        prefix = os.path.join(os.fspath(self.root), "")
        done = 0
        try:
            gone = self.vault.latest(gone_only=True)
        except (OSError, sqlite3.Error, VaultError) as exc:  # nothing to revive from it now
            self.missed_some([f"the vault cannot be read: {exc}"])
            return 0
        for version in gone:
            if version.source != self.kind or not version.path.startswith(prefix):
                continue
            name = version.path[len(prefix) :].replace(os.sep, "/")
            if (
                os.path.lexists(version.path)
                or db.execute("SELECT 1 FROM sessions WHERE file=?", (name,)).fetchone()
            ):
                continue
            try:
                data = load_version(self.vault, version)
                if data is None:
                    continue
                parsed = extract(name, FileIdentity(version.size, 0, 0), data, folded=folded)
            except Exception as exc:  # a damaged or unreadable copy: reported, not indexed
                self.problems.append(f"{version.path}: {exc}")
                continue
            insert([parsed])
            self._note(db, name, version, version.path, None)
            done += 1
        return done

    def forget(self, db: sqlite3.Connection, names: Sequence[str]) -> None:
        """``names`` are indexed from their files again: no longer kept from the vault."""
        loaded = self._kept
        if loaded is not None and not any(n in loaded for n in names):
            return  # (without the lock a batch being kept behind holds)
        self._forget(db, names)

    @_locked
    def _forget(self, db: sqlite3.Connection, names: Sequence[str]) -> None:
        kept = self.kept(db)
        back = [n for n in names if n in kept]
        if back:
            db.executemany("DELETE FROM vault_kept WHERE file=?", [(n,) for n in back])
            for n in back:
                kept.pop(n, None)

    @_locked
    def reset(self) -> None:
        """Forget the cached table (another connection or a rebuild changed it)."""
        self._kept = None

    # ------------------------------------------------------------------ reading

    def note(self, db: sqlite3.Connection, name: str) -> str | None:
        """What a hit on ``name`` read from the vault is marked with (None: read from its
        file). Takes the lock only to load the table: a search never waits for a batch."""
        kept = self._kept
        entry = (self.kept(db) if kept is None else kept).get(name)
        return None if entry is None else kept_note(entry[1], entry[2], entry[3])

    @_locked
    def load(self, db: sqlite3.Connection, name: str) -> JSONDict | None:
        """The session of kept file ``name`` read from the vault (None: not kept, or its copy
        is damaged, which is reported in :attr:`problems` and never served)."""
        from .reading import load_version

        entry = self.kept(db).get(name)
        if entry is None:
            return None
        try:
            return load_version(self.vault, self.vault.version(entry[0]))
        except VaultError as exc:
            log.warning("vault: %s: %s", name, exc)
            self.problems.append(str(exc))
            return None
