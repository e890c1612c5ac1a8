"""The undo journal: every file an action changes is backed up first, then recorded."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..files import (
    atomic_write_bytes,
    dumps_session,
    fsync_dir,
    session_lock,
    sha256_of,
)
from ..model import JSONDict, utc_now_iso
from ..paths import data_dir, ensure_private_dir
from ..store import DefaultSessionStore
from .items import QuarantineError, QuarantineItem, _read_bytes

# --------------------------------------------------------------------------- journal


PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
_CHUNK = 1 << 20


def journal_dir() -> Path:
    return data_dir() / "journal"


def trash_dir() -> Path:
    return data_dir() / "trash"


_sha = sha256_of  # the digest the journal records for a file's bytes


def _open_regular(path: Path) -> int:
    """A read fd on ``path`` itself (never through a symlink, never blocking on a FIFO)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return fd


def _sha_file(path: Path) -> tuple[str, int]:
    """sha256 and size of a regular file, read in chunks (memory stays bounded)."""
    digest = hashlib.sha256()
    size = 0
    fd = _open_regular(path)
    try:
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return digest.hexdigest(), size


def _copy_sparse(src: Path, dst: Path, *, mode: int = PRIVATE_FILE_MODE) -> None:
    """Copy a regular file to a new ``dst`` in chunks; runs of zeros become holes.

    Memory stays at one chunk whatever the size, and a sparse file stays sparse.
    ``dst`` must not exist; it is fsynced.
    """
    fd_in = _open_regular(src)
    try:
        fd_out = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
        try:
            os.fchmod(fd_out, mode)
            size = 0
            while chunk := os.read(fd_in, _CHUNK):
                size += len(chunk)
                if chunk.count(0) == len(chunk):
                    os.lseek(fd_out, len(chunk), os.SEEK_CUR)
                    continue
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd_out, view) :]
            os.ftruncate(fd_out, size)
            os.fsync(fd_out)
        finally:
            os.close(fd_out)
    finally:
        os.close(fd_in)


def _state(path: Path) -> JSONDict:
    """What ``path`` itself is (a symlink is described, never followed)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return {"exists": False}
    base: JSONDict = {"exists": True, "mode": st.st_mode & 0o7777, "mtime_ns": st.st_mtime_ns}
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(path)
        raw = os.fsencode(target)
        return {**base, "link": target, "sha256": _sha(raw), "size": len(raw)}
    digest, size = _sha_file(path)
    return {**base, "sha256": digest, "size": size}


def _put_back(path: Path, copy: Path | None, before: JSONDict) -> None:
    """Make ``path`` what ``before`` describes again, atomically (a link as a link)."""
    tmp = path.parent / f".{path.name[:200]}.{os.getpid()}.{os.urandom(4).hex()}.undo.tmp"
    try:
        if "link" in before:
            os.symlink(str(before["link"]), tmp)
        else:
            assert copy is not None
            _copy_sparse(copy, tmp, mode=int(before.get("mode", PRIVATE_FILE_MODE)))
            mtime = before.get("mtime_ns")
            if isinstance(mtime, int):
                os.utime(tmp, ns=(mtime, mtime))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


@dataclass
class _FileChange:
    path: Path
    role: str  # session | quarantine | spill | trash
    change: str  # create | modify | remove | move-in


@dataclass
class ActionResult:
    """What an action did (or, in a dry run, would do)."""

    action: str
    dry_run: bool
    item: str
    session_id: str | None
    files: list[JSONDict]
    added: int = 0
    action_id: str | None = None
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> JSONDict:
        return {
            "action": self.action,
            "action_id": self.action_id,
            "dry_run": self.dry_run,
            "item": self.item,
            "session_id": self.session_id,
            "added_messages": self.added,
            "files": self.files,
            "notes": list(self.notes),
        }


class _Journal:
    """One journal entry: an intent (backups and expected results) first, then the result.

    The entry is saved ``pending`` with every file's backup and what the action will make
    of it *before* anything changes; ``done`` after. A process killed in between leaves a
    pending entry that :func:`recover_pending` finishes (when every file is either as before
    or as intended) so :func:`undo` can put it back, or drops (when nothing changed).
    """

    def __init__(self, action: str, item: QuarantineItem, session_id: str | None) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        self.id = f"{stamp}-{action}-{os.urandom(3).hex()}"
        self.dir = journal_dir() / self.id
        self.entry: JSONDict = {
            "id": self.id,
            "action": action,
            "at": utc_now_iso(),
            "item": str(item.path),
            "session_id": session_id,
            "status": "pending",
            "pid": os.getpid(),
            "files": [],
        }

    def backup(
        self, changes: Sequence[_FileChange], intended: dict[Path, JSONDict] | None = None
    ) -> None:
        """Copy every touched file into the entry and save it as an intent."""
        ensure_private_dir(journal_dir())
        self.dir.mkdir(mode=PRIVATE_DIR_MODE)
        os.chmod(self.dir, PRIVATE_DIR_MODE)
        for n, ch in enumerate(changes):
            before = _state(ch.path)
            if before["exists"] and "link" not in before:
                copy = f"before-{n}"
                _copy_sparse(ch.path, self.dir / copy)
                if _sha_file(self.dir / copy)[0] != before["sha256"]:
                    raise QuarantineError(f"{ch.path} changed while it was backed up")
                before["copy"] = copy
            record: JSONDict = {
                "path": str(ch.path),
                "role": ch.role,
                "change": ch.change,
                "before": before,
            }
            if intended is not None and ch.path in intended:
                record["intended"] = intended[ch.path]
            elif ch.change == "remove":
                record["intended"] = {"exists": False}
            self.entry["files"].append(record)
        fsync_dir(self.dir)
        self._save()

    def finish(self) -> None:
        for f in self.entry["files"]:
            f["after"] = _state(Path(f["path"]))
        self.entry["status"] = "done"
        self._save()

    def _save(self) -> None:
        atomic_write_bytes(
            self.dir / "entry.json", json.dumps(self.entry, indent=2).encode("utf-8")
        )


def _matches(state: JSONDict, wanted: JSONDict | None) -> bool:
    if wanted is None:
        return False
    if not wanted.get("exists"):
        return not state.get("exists")
    return bool(state.get("exists")) and state.get("sha256") == wanted.get("sha256")


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover_pending(lock_timeout: float = 5.0) -> list[JSONDict]:
    """Finish or drop journal entries left ``pending`` by a process that died mid-action.

    For each such entry (its process gone), under the session locks: when every file is as
    before, nothing happened and the entry is removed; when every file is as before or as
    intended, the entry is finished (``done``, ``recovered``) so :func:`undo` can put it
    back from its backups. Otherwise it stays pending (listed, never guessed at).
    Returns what was done, one dict per entry.
    """
    report: list[JSONDict] = []
    try:
        names = sorted(os.listdir(journal_dir()))
    except OSError:
        return report
    for name in names:
        entry_dir = journal_dir() / name
        try:
            entry = json.loads(_read_bytes(entry_dir / "entry.json"))
        except (OSError, ValueError):
            continue
        if not isinstance(entry, dict) or entry.get("status") != "pending":
            continue
        if _alive(entry.get("pid")):
            continue
        files = entry.get("files") or []
        with contextlib.ExitStack() as locks:
            for f in files:
                if f.get("role") == "session":
                    locks.enter_context(session_lock(Path(f["path"]), lock_timeout))
            states = [_state(Path(f["path"])) for f in files]
            if all(_matches(st, f.get("before")) for st, f in zip(states, files, strict=True)):
                shutil.rmtree(entry_dir, ignore_errors=True)
                report.append({"id": name, "recovered": "dropped (nothing had changed)"})
                continue
            if all(
                _matches(st, f.get("before")) or _matches(st, f.get("intended"))
                for st, f in zip(states, files, strict=True)
            ):
                for st, f in zip(states, files, strict=True):
                    f["after"] = st
                entry["status"] = "done"
                entry["recovered"] = True
                atomic_write_bytes(
                    entry_dir / "entry.json", json.dumps(entry, indent=2).encode("utf-8")
                )
                report.append({"id": name, "recovered": "finished (undo puts it back)"})
    return report


def journal_entries() -> list[JSONDict]:
    """Every journal entry, newest first."""
    out: list[JSONDict] = []
    try:
        names = sorted(os.listdir(journal_dir()), reverse=True)
    except OSError:
        return out
    for name in names:
        try:
            entry = json.loads(_read_bytes(journal_dir() / name / "entry.json"))
        except (OSError, ValueError):
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out


# --------------------------------------------------------------------------- journaled writes


class _SourceJournal(_Journal):
    """A journal entry for an action whose source is a file, not a quarantine item (import)."""

    def __init__(self, action: str, source: str, session_id: str | None) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        self.id = f"{stamp}-{action}-{os.urandom(3).hex()}"
        self.dir = journal_dir() / self.id
        self.entry = {
            "id": self.id,
            "action": action,
            "at": utc_now_iso(),
            "item": source,
            "session_id": session_id,
            "status": "pending",
            "pid": os.getpid(),
            "files": [],
        }


@dataclass
class SessionWrite:
    """One whole session file to put in place: ``build()`` gives the dict to write, whose
    serialised bytes have ``sha256`` (decided when it was planned)."""

    session_id: str
    sha256: str
    build: Callable[[], JSONDict]


@dataclass
class JournaledWrites:
    """What :func:`write_sessions_journaled` did; ``action_id`` is None when nothing changed."""

    action_id: str | None = None
    created: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)


def write_sessions_journaled(
    store: DefaultSessionStore,
    action: str,
    source: str,
    writes: Sequence[SessionWrite],
    *,
    overwrite: bool,
    exists_reason: str,
    failed_reason: str,
) -> JournaledWrites:
    """Write whole session files as one journal entry, so :func:`undo` puts them all back.

    Every file that exists is copied into the entry, saved ``pending`` with what each file
    will hold, before any file is written (a crash leaves an entry :func:`recover_pending`
    finishes or drops). Then each file is written under its session lock with an atomic
    write, only when it is still what was backed up: a file that appeared (without
    ``overwrite``), changed meanwhile, is corrupt or holds another session is skipped with
    the reason (``exists_reason``, or ``failed_reason: why``), and so is a failed write.
    The entry then lists only the files written: undo puts a replaced file back
    byte-identical and removes a created one, refusing when any changed since.
    """
    result = JournaledWrites()
    if not writes:
        return result
    ensure_private_dir(store.session_dir.path)
    paths = [store.session_path(w.session_id) for w in writes]
    changes = [
        _FileChange(p, "session", "modify" if os.path.lexists(p) else "create") for p in paths
    ]
    intended = {p: {"exists": True, "sha256": w.sha256} for p, w in zip(paths, writes, strict=True)}
    journal = _SourceJournal(action, source, writes[0].session_id if len(writes) == 1 else None)
    try:
        journal.backup(changes, intended)
    except BaseException:
        shutil.rmtree(journal.dir, ignore_errors=True)
        raise
    records = list(journal.entry["files"])
    kept: list[JSONDict] = []

    def drop(record: JSONDict) -> None:
        copy = (record.get("before") or {}).get("copy")
        if copy:
            with contextlib.suppress(OSError):
                (journal.dir / str(copy)).unlink()
        journal.entry["files"] = [f for f in journal.entry["files"] if f is not record]
        journal._save()

    try:
        for w, path, record in zip(writes, paths, records, strict=True):
            reason = ""
            try:
                with session_lock(path, store.lock_timeout):
                    now = _state(path)
                    if now.get("exists") and not overwrite:
                        reason = exists_reason
                    elif not _matches(now, record["before"]):
                        reason = f"{failed_reason}: {path.name} changed while importing"
                    else:
                        if now.get("exists"):
                            store._check_replaceable(w.session_id, path)
                        data = w.build()
                        payload = dumps_session(data)
                        if _sha(payload) != w.sha256:
                            raise ValueError("the session changed since it was checked")
                        atomic_write_bytes(path, payload)
                        kept.append(record)
                        done = result.replaced if now.get("exists") else result.created
                        done.append(w.session_id)
                        store._notify(w.session_id, path, data)
            except (OSError, ValueError, TypeError, RecursionError) as exc:
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                reason = f"{failed_reason}: {why}"
            if reason:
                result.skipped.append({"session_id": w.session_id, "reason": reason})
                drop(record)
    finally:
        journal.entry["files"] = kept
        if kept:
            journal.finish()
            result.action_id = journal.id
        else:
            shutil.rmtree(journal.dir, ignore_errors=True)
            with contextlib.suppress(OSError):
                journal_dir().rmdir()  # only when empty
    return result
