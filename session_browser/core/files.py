"""File mechanics: tolerant reads, locked atomic writes, quarantine and spill naming.

- Reads never write: :func:`read_json_file` opens read-only and creates nothing.
- Writes go through :func:`atomic_write_bytes`: a temp file in the same dir, flush+fsync,
  ``os.replace``, fsync of the dir, mode 0600. A reader never sees a half-written file.
  The writer holds a ``flock`` on its temp file until the rename, so a temp file left by a
  writer that was killed (nobody holds it) is told from a live one's and removed by the
  next write of that session (:func:`remove_stale_temps`).
- :func:`session_lock` takes the same ``<file>.json.lock`` flock that ``praisonaiagents``
  takes, so our writers and PraisonAI's exclude each other across processes.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import signal
import sqlite3
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import filelock
import orjson

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Linux/macOS
    fcntl = None  # type: ignore[assignment]

from .model import JSONDict, dumps_json, json_utf8
from .paths import ensure_private_dir, safe_id

FILE_MODE = 0o600
# A session file bigger than this is never read (a scan skips it, a write refuses to
# replace it): far above any real session, low enough that one file cannot exhaust memory.
MAX_SESSION_BYTES = 512 << 20
LARGE_JSON_BYTES = 8 << 20  # from this size a JSON file is parsed with at most two copies held

# A quarantined file: "<stem>.json.corrupt-<epoch_ms>" with an optional "-<n>" on collision.
CORRUPT_RE = re.compile(r"^(?P<stem>.+)\.json\.corrupt-(?P<ms>\d+)(?:-(?P<n>\d+))?\Z", re.S)
# A spill file: "<safe_id>.<epoch_ms>.<pid>.<8 hex>.json" as written; like PraisonAI, any
# "<safe_id>.*json" is accepted when folding and listing (``ms`` is empty when absent).
SPILL_RE = re.compile(r"^(?P<stem>[^.]+)\.(?P<ms>\d*)(?P<rest>.*)json\Z", re.S)


class SessionFileError(Exception):
    """A session file exists but is not a usable session (bad JSON/UTF-8 or non-object root)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def loads(raw: bytes) -> Any:
    """Parse JSON bytes strictly (UTF-8 required), fast path with orjson.

    orjson refuses a few things the standard library accepts (``NaN``, integers over 64
    bits); those fall back to :mod:`json` so both parsers accept the same files.
    Raises ``ValueError`` (``JSONDecodeError``/``UnicodeDecodeError``) or ``RecursionError``.
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    return json.loads(raw.decode("utf-8"))


def _session_object(path: Path, parse: Callable[[], Any]) -> dict[str, Any]:
    """What ``parse()`` gives for session file ``path``, which must be a JSON object:
    :class:`SessionFileError` otherwise."""
    try:
        data = parse()
    except (ValueError, RecursionError) as exc:
        raise SessionFileError(path, f"not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise SessionFileError(path, f"root is {type(data).__name__}, not an object")
    return data


def parse_session_bytes(path: Path, raw: bytes) -> dict[str, Any]:
    """Parse a session file's bytes; raise :class:`SessionFileError` when unusable."""
    return _session_object(path, lambda: loads(raw))


def _read_up_to(fd: int, size: int) -> bytes:
    """At most ``size`` bytes from ``fd``, fewer only at its end. (Straight from the
    descriptor: a buffered file object costs more than the read itself for the small files
    sessions mostly are.)"""
    first = os.read(fd, size)
    if len(first) >= size or not first:
        return first
    parts = [first]
    left = size - len(first)
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _read_to_end(fd: int, hint: int) -> bytes:
    """Everything left in ``fd`` (``hint``: the size to read first)."""
    parts = [_read_up_to(fd, max(hint, 1))]
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)


class NotRegularFile(OSError):
    """A path that is no regular file, refused before anything is read from it (a FIFO would
    block, ``/dev/zero`` never ends, a symlink may lead out of the tree). ``kind``: what it
    is (see :func:`not_regular_kind`)."""

    def __init__(self, kind: str, path: str | os.PathLike[str]) -> None:
        code = {"directory": errno.EISDIR, "symlink": errno.ELOOP}.get(kind, errno.EINVAL)
        what = "is a directory" if kind == "directory" else f"not a regular file (a {kind})"
        super().__init__(code, what, os.fspath(path))
        self.kind = kind


class NotRegularDirectory(NotRegularFile, IsADirectoryError):
    """A directory where a file was expected: still an :class:`IsADirectoryError`, as a plain
    ``open`` would raise, for callers that tell that case apart."""


def not_regular_kind(mode: int) -> str | None:
    """What a file of ``mode`` is when it is no regular file (``symlink``, ``directory`` or
    ``special file``: a FIFO, a device, a socket); None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return "symlink"
    return "directory" if stat.S_ISDIR(mode) else "special file"


def regular_lstat(
    path: str | os.PathLike[str], refused: dict[str, int] | None = None
) -> os.stat_result | None:
    """``lstat`` of ``path`` when it is a regular file itself (not a link to one); None for
    anything else, or when it cannot be looked at. A symlink, a FIFO, a device or a socket
    is counted in ``refused`` by kind (see :func:`count_refused`)."""
    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        return None
    kind = not_regular_kind(st.st_mode)
    if kind is None:
        return st
    if kind != "directory" and refused is not None:
        refused[kind] = refused.get(kind, 0) + 1
    return None


def real_dir(path: str | os.PathLike[str], refused: dict[str, int] | None = None) -> bool:
    """True when ``path`` is a directory itself, not a symlink to one (a symlink is counted
    in ``refused``, never followed)."""
    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        return False
    if stat.S_ISLNK(st.st_mode) and refused is not None:
        refused["symlink"] = refused.get("symlink", 0) + 1
    return stat.S_ISDIR(st.st_mode)


def rel_below(path: str, base: str) -> str:
    """``os.path.relpath(path, base)``, taken by slicing when ``path`` is written below
    ``base`` (as every folder ``os.walk(base)`` gives and every file a listing found), not by
    resolving both paths (a listing walks thousands of folders, one a session for some
    agents; the vault checks every file a first build keeps)."""
    if path == base:
        return os.curdir
    head = base if base.endswith(os.sep) else base + os.sep
    if path.startswith(head):
        return path[len(head) :]
    return os.path.relpath(path, base)


def walk_real(
    top: str, refused: dict[str, int] | None = None
) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(top)`` (top-down; the caller may prune or reorder ``dirnames`` in place)
    with only real folders in ``dirnames``: a symlink to a folder is neither listed nor
    followed, and is counted in ``refused`` (as :func:`real_dir` counts it); anything else
    that is no folder, a symlink to a file or a dangling one included, is in ``filenames``,
    as ``os.walk`` lists it. Each entry's type comes from its folder's listing, so a tree
    of thousands of session folders costs no ``lstat`` a folder; a folder that cannot be
    listed is passed over, as ``os.walk`` does."""
    stack = [top]
    while stack:
        here = stack.pop()
        dirs: list[str] = []
        files: list[str] = []
        try:
            with os.scandir(here) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            dirs.append(entry.name)
                        elif entry.is_symlink() and entry.is_dir():
                            if refused is not None:
                                refused["symlink"] = refused.get("symlink", 0) + 1
                        else:
                            files.append(entry.name)
                    except OSError:
                        files.append(entry.name)  # (as os.walk lists what it cannot stat)
        except OSError:
            continue
        yield here, dirs, files
        stack.extend(os.path.join(here, d) for d in reversed(dirs))


def describe_refused(refused: dict[str, int]) -> str:
    """``2 symlinks, 1 special file``: what a listing refused, for ``index status``."""
    return ", ".join(
        f"{n} {kind}{'' if n == 1 else 's'}" for kind, n in sorted(refused.items()) if n
    )


def _open_regular_fd(
    path: str | os.PathLike[str], follow_links: bool
) -> tuple[int, os.stat_result]:
    """A read-only descriptor of the regular file ``path`` and its ``fstat``.

    Opened non-blocking (a FIFO must not wait for a writer; no effect on a regular file)
    and, unless ``follow_links``, with ``O_NOFOLLOW`` (a symlink is refused, never read).
    Raises :class:`NotRegularFile` for anything but a regular file, ``OSError`` otherwise;
    no descriptor outlives a failure."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_links:
            raise NotRegularFile("symlink", path) from None
        if exc.errno == errno.ENXIO:  # a socket (or a device with nothing behind it)
            raise NotRegularFile("special file", path) from None
        raise
    try:
        st = os.fstat(fd)
        kind = not_regular_kind(st.st_mode)
        if kind is not None:
            cls = NotRegularDirectory if kind == "directory" else NotRegularFile
            raise cls(kind, path)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def open_regular(
    path: str | os.PathLike[str], *, follow_links: bool = False, buffered: bool = True
) -> IO[bytes]:
    """``path`` opened for reading (``rb``) when it is a regular file: the one way every
    source opens a file it found by listing its tree. Raises :class:`NotRegularFile` for a
    FIFO, a device, a socket, a directory or (unless ``follow_links``) a symlink, without
    blocking and without reading a byte; ``OSError`` when it cannot be opened.

    ``buffered`` False: a raw file, for a caller that reads it in one piece
    (:func:`read_upto`) and wraps it in :class:`io.BufferedReader` to read it otherwise (a
    reader of many small files saves building a buffer for each)."""
    fd, _st = _open_regular_fd(path, follow_links)
    try:
        return os.fdopen(fd, "rb", buffering=-1 if buffered else 0)
    except BaseException:
        os.close(fd)
        raise


def read_upto(fh: IO[bytes], size: int) -> bytes:
    """``size`` bytes of the raw file ``fh`` (``open_regular(..., buffered=False)``) from
    where it is, fewer only at its end (:func:`_read_up_to`); all of it when ``size`` is
    negative, as a buffered read gives them."""
    return _read_up_to(fh.fileno(), size) if size >= 0 else fh.read()


def read_file_bytes(
    path: Path, *, max_bytes: int | None = None, follow_links: bool = True
) -> bytes:
    """The bytes of a regular file, read without writing anything.

    Raises ``OSError`` naming ``path``: also for a file that is not a regular file (a
    directory, a FIFO or a device, which could block or never end: :class:`NotRegularFile`;
    a symlink too unless ``follow_links``) and, with ``max_bytes``, for one bigger than that
    (``EFBIG``), so one huge file can never exhaust memory. No file descriptor outlives the
    call, whatever fails.
    """
    fd, st = _open_regular_fd(path, follow_links)
    try:
        if max_bytes is not None and st.st_size > max_bytes:
            raise OSError(
                errno.EFBIG,
                f"file is {st.st_size} bytes, over the {max_bytes}-byte limit",
                str(path),
            )
        if max_bytes is None:
            raw = _read_to_end(fd, st.st_size + 1)
        else:
            # Read what fstat said (plus one byte to notice growth), never a buffer of the
            # limit's size; a file that grew meanwhile is read on up to the limit.
            raw = _read_up_to(fd, st.st_size + 1)
            if len(raw) > st.st_size:
                raw += _read_up_to(fd, max_bytes + 1 - len(raw))
    finally:
        os.close(fd)
    if max_bytes is not None and len(raw) > max_bytes:
        raise OSError(errno.EFBIG, f"file grew over the {max_bytes}-byte limit", str(path))
    return raw


def read_json(path: Path, *, max_bytes: int | None = MAX_SESSION_BYTES) -> Any:
    """Read and parse a JSON file (as :func:`loads`), never holding more than two copies of
    it at once: a file from :data:`LARGE_JSON_BYTES` on is decoded, its bytes dropped, then
    parsed (the fast parser keeps the bytes, a working copy and the result: three).

    Raises ``OSError`` (see :func:`read_file_bytes`), ``ValueError`` or ``RecursionError``.
    """
    raw = read_file_bytes(path, max_bytes=max_bytes)
    if len(raw) < LARGE_JSON_BYTES:
        return loads(raw)
    text = raw.decode("utf-8")  # strict, as loads is (UnicodeDecodeError is a ValueError)
    del raw
    return json.loads(text)


def read_json_file(path: Path) -> dict[str, Any]:
    """Read and parse a session file without writing anything.

    Raises ``OSError`` when it cannot be read (or is over :data:`MAX_SESSION_BYTES`) and
    :class:`SessionFileError` when its content is not a session object.
    """
    return _session_object(path, lambda: read_json(path))


def dumps_session(data: Any) -> bytes:
    """Serialise exactly as PraisonAI does: ``json.dump(indent=2, ensure_ascii=False)``.

    Two values PraisonAI's own writer fails on are still written, in the same format:
    content nested deeper than the recursion limit, and lone surrogates (kept as their
    ``\\udXXX`` escapes so the file stays UTF-8); see :func:`~.model.json_utf8`.
    """
    return json_utf8(dumps_json(data, indent=2))


def fsync_dir(directory: Path) -> None:
    """Best-effort fsync of a directory so a rename in it is durable."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _claimed_temp(directory: Path, name: str) -> tuple[int, str, int | None]:
    """A new temp file ``.<name>.XXXXXXXX.tmp`` in ``directory``: its descriptor, its path,
    and a second descriptor that holds an exclusive ``flock`` on it until
    :func:`_release` (None where there are no locks). The lock says a live writer owns
    the file: the kernel drops it when the writer dies, even by ``kill -9``, and
    :func:`stale_temp_files` takes only temp files nobody holds."""
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")
    if fcntl is None:
        return fd, tmp, None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        hold: int | None = os.dup(fd)  # the lock lives while either descriptor is open
    except OSError:
        hold = None  # a file system without locks: such a temp ages out instead
    return fd, tmp, hold


def _release(hold: int | None) -> None:
    if hold is not None:
        with contextlib.suppress(OSError):
            os.close(hold)


def synced_temp(directory: Path, name: str, payload: bytes, mode: int) -> tuple[str, int | None]:
    """A new temp file in ``directory`` (named after ``name``) holding ``payload``, synced to
    disk, with ``mode``: to be renamed or linked into place, then the claim on it (the
    second value) given to :func:`_release`. Removed again when writing it fails."""
    fd, tmp, hold = _claimed_temp(directory, name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        _release(hold)
        raise
    return tmp, hold


def atomic_write_bytes(path: Path, payload: bytes, *, mode: int = FILE_MODE) -> None:
    """Write ``payload`` to ``path`` atomically (raises ``OSError`` on failure).

    On failure the temp file is removed and ``path`` is left exactly as it was.
    """
    directory = path.parent
    with _interrupts_deferred():
        try:
            tmp, hold = synced_temp(directory, path.name, payload, mode)
        except OSError as exc:
            raise _about(exc, path) from exc
        try:
            _put_in_place(tmp, path)
        finally:
            _release(hold)
    fsync_dir(directory)


@contextlib.contextmanager
def atomic_writer(
    path: Path, *, mode: int = FILE_MODE, before_replace: Callable[[], object] | None = None
) -> Iterator[IO[bytes]]:
    """A file to write ``path``'s new bytes into, bit by bit, put in place atomically.

    The bytes go to a temp file in the same dir; when the block ends normally it is
    flushed, fsynced, given ``mode`` and renamed over ``path`` (then the dir is fsynced),
    as :func:`atomic_write_bytes` does. When the block raises (Ctrl-C included) the temp
    file is removed and ``path`` is left exactly as it was. Ctrl-C is held back only while
    the temp file is created and while it is renamed, so a long write stays interruptible.
    ``before_replace`` runs last before the rename: what it raises removes the temp file.
    """
    directory = path.parent
    with _interrupts_deferred():
        try:
            fd, tmp, hold = _claimed_temp(directory, path.name)
        except OSError as exc:
            raise _about(exc, path) from exc
        try:
            fh = os.fdopen(fd, "wb")
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            _release(hold)
            raise
    try:
        try:
            with fh:
                yield fh  # what the block raises is passed on as it is
                try:
                    fh.flush()
                    os.fsync(fh.fileno())
                except OSError as exc:
                    raise _about(exc, path) from exc
            try:
                os.chmod(tmp, mode)
            except OSError as exc:
                raise _about(exc, path) from exc
            if before_replace is not None:
                before_replace()
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        with _interrupts_deferred():
            _put_in_place(tmp, path)
    finally:
        _release(hold)
    fsync_dir(directory)


def _put_in_place(tmp: str, path: Path) -> None:
    """Rename ``tmp`` over ``path``; on failure ``tmp`` is removed (an OSError names
    ``path``)."""
    try:
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise _about(exc, path) from exc
        raise


@contextlib.contextmanager
def _interrupts_deferred() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) back until the block is done, so it never lands between
    creating a temp file and removing or renaming it. Signals reach only the main thread,
    so elsewhere there is nothing to hold back."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        previous = signal.getsignal(signal.SIGINT)
    except ValueError:
        yield
        return
    if previous in (signal.SIG_IGN, None):
        yield
        return
    caught: list[tuple[int, Any]] = []
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append((signum, frame)))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            if callable(previous):
                previous(*caught[0])
            else:  # SIG_DFL: let the default action happen now
                os.kill(os.getpid(), signal.SIGINT)


def _about(exc: OSError, path: Path) -> OSError:
    """``exc`` naming ``path`` (not the temp file), same errno so the same subclass."""
    if exc.errno is None:
        return exc
    return OSError(exc.errno, exc.strerror or str(exc), str(path))


# How old a temp file of ours must be before a later write of its file removes it, where
# there are no locks to tell a live writer's temp file from a dead one's.
STALE_TEMP_SECONDS = 60.0
# tempfile's random part: 8 characters of [a-z0-9_].
_TEMP_PART = r"\.[a-z0-9_]{8}\.tmp"


def _unclaimed(path: Path) -> bool | None:
    """Whether no live writer holds the temp file ``path`` (see :func:`_claimed_temp`); None
    when that cannot be told (no locks here, or the file cannot be opened)."""
    if fcntl is None:
        return None
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # its writer is alive
        except OSError:
            return None
        return True
    finally:
        os.close(fd)  # drops the lock just taken


def stale_temp_files(path: Path, *, older_than: float = STALE_TEMP_SECONDS) -> list[Path]:
    """Temp files our atomic writers left beside ``path`` (``.<name>.XXXXXXXX.tmp``, exactly
    that pattern: never another program's file) when a writer was killed.

    A temp file is stale when no live writer holds its lock (:func:`_claimed_temp`): a
    writer killed by ``kill -9`` leaves one that the very next write removes. Where locks
    cannot tell, it is stale once older than ``older_than`` seconds.
    """
    pattern = re.compile(re.escape(f".{path.name}") + _TEMP_PART + r"\Z")
    prefix = f".{path.name}."
    cutoff = time.time() - older_than
    out: list[Path] = []
    try:
        names = os.listdir(path.parent)
    except OSError:
        return out
    for name in sorted(names):
        if not name.startswith(prefix) or not pattern.match(name):
            continue
        candidate = path.parent / name
        try:
            st = candidate.lstat()
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        free = _unclaimed(candidate)
        if free or (free is None and st.st_mtime < cutoff):
            out.append(candidate)
    return out


def remove_stale_temps(path: Path, *, older_than: float = STALE_TEMP_SECONDS) -> int:
    """Remove :func:`stale_temp_files` of ``path``; how many went. Never raises."""
    removed = 0
    for stale in stale_temp_files(path, older_than=older_than):
        with contextlib.suppress(OSError):
            stale.unlink()
            removed += 1
    return removed


def write_session_file(path: Path, data: dict[str, Any]) -> None:
    """Atomically write a session dict in PraisonAI's format (the caller holds its lock).

    Our own temp files of this session that a killed writer left behind (see
    :func:`stale_temp_files`) are removed first.
    """
    remove_stale_temps(path)
    atomic_write_bytes(path, dumps_session(data))


_SQLITE_FULL = 13  # SQLITE_FULL, the primary result code (extended codes keep it in 8 bits)


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk (or the user's quota) is full: ``ENOSPC``/``EDQUOT`` from
    the system, ``SQLITE_FULL`` (``database or disk is full``) from SQLite."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        if isinstance(code, int):
            return code & 0xFF == _SQLITE_FULL
        return "database or disk is full" in str(exc)
    return False


class LockTimeout(OSError):
    """The session lock could not be taken in time."""


@contextlib.contextmanager
def session_lock(path: Path, timeout: float) -> Iterator[None]:
    """Hold the cross-process lock of session file ``path`` (``<path>.lock``)."""
    lock = filelock.FileLock(str(path) + ".lock", timeout=timeout, mode=FILE_MODE)
    try:
        lock.acquire()
    except filelock.Timeout as exc:
        raise LockTimeout(f"could not lock {path} within {timeout}s") from exc
    try:
        yield
    finally:
        lock.release()


def quarantine(path: Path, *, now_ms: int | None = None) -> Path:
    """Rename a corrupt session file aside, byte-identical: ``<file>.corrupt-<epoch_ms>``.

    ``-1``, ``-2``... are appended on collision so no earlier quarantine is clobbered.
    The caller holds the session lock.
    """
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    base = Path(f"{path}.corrupt-{ms}")
    target = base
    n = 1
    while target.exists():
        target = Path(f"{base}-{n}")
        n += 1
    os.replace(path, target)
    fsync_dir(path.parent)
    return target


_ID_SCAN_BYTES = 4096
_ID_RE = re.compile(rb'"session_id"\s*:\s*"((?:[^"\\]|\\.){0,1000})"')


def session_id_from_bytes(raw: bytes) -> str | None:
    """The ``session_id`` written near the start of a (possibly broken) session file."""
    m = _ID_RE.search(raw[:_ID_SCAN_BYTES])
    if not m:
        return None
    try:
        value = json.loads(b'"' + m.group(1) + b'"')
    except ValueError:
        return None
    return value if isinstance(value, str) and value else None


def sha256_of(data: bytes) -> str:
    """The digest of a file's bytes, as the journal records and checks it."""
    return hashlib.sha256(data).hexdigest()


def stored_id(data: JSONDict, path: Path) -> str:
    """The session id a stored dict holds; the file stem when it stores none."""
    sid = data.get("session_id")
    if isinstance(sid, str) and sid:
        return sid
    return path.stem if sid in (None, "") else str(sid)


def spill_filename(session_id: str) -> str:
    """A fresh spill file name: ``<safe_id>.<epoch_ms>.<pid>.<8 hex>.json``."""
    return (
        f"{safe_id(session_id)}.{int(time.time() * 1000)}.{os.getpid()}.{os.urandom(4).hex()}.json"
    )


# The key of a spill payload naming the store dir that wrote it (ours; PraisonAI's have none).
SPILL_OWNER_KEY = "session_dir"


def _dir_text(path: Path) -> str:
    """A directory as one comparable absolute path (``~`` expanded, symlinks resolved)."""
    try:
        return str(Path(path).expanduser().resolve())
    except (OSError, RuntimeError):
        return os.path.abspath(os.path.expanduser(path))


def spill_belongs_to(payload: Any, session_dir: Path, spill_dir: Path) -> bool:
    """True when a spill payload found in ``spill_dir`` belongs to the store ``session_dir``.

    The one ownership rule for every fold and listing, so a turn never moves across
    stores that share a spill dir: a payload naming its store (:data:`SPILL_OWNER_KEY`,
    written by us) belongs to that store only; one without it (written by PraisonAI)
    belongs only to the store whose own spill dir it is in, PraisonAI's layout
    ``<home>/sessions`` <-> ``<home>/state/session_spill``.
    """
    if not isinstance(payload, dict):
        return False
    owner = payload.get(SPILL_OWNER_KEY)
    if owner is not None:
        return isinstance(owner, str) and _dir_text(Path(owner)) == _dir_text(session_dir)
    session_dir = Path(session_dir)
    return session_dir.name == "sessions" and _dir_text(spill_dir) == _dir_text(
        session_dir.parent / "state" / "session_spill"
    )


def write_spill(
    spill_dir: Path, session_id: str, messages: list[dict[str, Any]], *, session_dir: Path
) -> Path:
    """Spill turns a failed write of the store ``session_dir`` could not persist (the
    payload names that store, see :func:`spill_belongs_to`); raises ``OSError`` if even
    that fails."""
    ensure_private_dir(spill_dir)
    target = spill_dir / spill_filename(session_id)
    payload = {
        "session_id": session_id,
        "spilled_at": datetime.now(UTC).isoformat(),
        "messages": messages,
        SPILL_OWNER_KEY: _dir_text(session_dir),
    }
    atomic_write_bytes(target, json_utf8(dumps_json(payload)))
    return target


def spill_files_for(spill_dir: Path, session_id: str) -> list[Path]:
    """Spill files that may belong to ``session_id`` (by name; the payload decides)."""
    prefix = safe_id(session_id) + "."
    try:
        names = os.listdir(spill_dir)
    except OSError:
        return []
    return sorted(
        spill_dir / name for name in names if name.startswith(prefix) and SPILL_RE.match(name)
    )


@dataclass(frozen=True)
class FileIdentity:
    """What tells us a file changed: size, mtime_ns and inode."""

    size: int
    mtime_ns: int
    inode: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileIdentity:
        return cls(st.st_size, st.st_mtime_ns, st.st_ino)

    @classmethod
    def at(cls, path: Path | None) -> FileIdentity | None:
        """The identity of the file at ``path``; None without a path or a file there."""
        try:
            return None if path is None else cls.of(path.stat())
        except OSError:
            return None


def iter_session_files(session_dir: Path) -> Iterator[tuple[Path, os.stat_result]]:
    """Every ``*.json`` regular file in ``session_dir`` (not locks, temp files, quarantines)."""
    try:
        entries = os.scandir(session_dir)
    except OSError:
        return
    with entries:
        for entry in entries:
            name = entry.name
            if not name.endswith(".json") or name.startswith("."):
                continue
            try:
                if not entry.is_file(follow_symlinks=True):
                    continue
                st = entry.stat(follow_symlinks=True)
            except OSError:
                continue
            yield Path(entry.path), st


SHADOW_MARK = "#v"  # index name of the turns a rewrite dropped: "<file>#v<version id>"


def live_file(name: str) -> str:
    """The file an index name stands for: ``name`` itself, or for the turns a rewrite
    dropped (``<file>#v<version id>``) the file they were dropped from."""
    head, mark, tail = name.rpartition(SHADOW_MARK)
    return head if mark and tail.isdigit() else name
