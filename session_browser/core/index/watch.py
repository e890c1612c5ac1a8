"""Directory scans by file identity, their fingerprint, and the inotify watch that names the files
changed since."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import struct
import sys
import threading
from collections.abc import Callable
from pathlib import Path


def scan_fingerprint(files: dict[str, tuple[int, int, int]]) -> str:
    """A digest of a scan (names, identities and their order): equal digests, equal scans."""
    text = repr(files).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(text, digest_size=20).hexdigest()


#: Why a directory is not watched but skipped (its listing fails the same way): it went, it
#: is no directory, it may not be read.
_UNWATCHABLE = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EACCES, errno.EPERM})


def _errno() -> int:
    """The errno of the last inotify call (made through ctypes with ``use_errno``)."""
    import ctypes

    return ctypes.get_errno()


def _max_dirs() -> int:
    """How many directories one tree watch may take: a quarter of the kernel's watches for
    this user (other programs watch too), at most 32,768 (about 35 MB of kernel memory)."""
    try:
        with open("/proc/sys/fs/inotify/max_user_watches", encoding="ascii") as fh:
            limit = int(fh.read())
    except (OSError, ValueError):
        limit = 8192  # (the kernel's default where it does not scale with memory)
    return max(1024, min(32768, limit // 4))


class DirWatch:
    """Which files under one directory changed since the last :meth:`drain` (Linux inotify).

    Lets a reconcile stat only the files that changed since the last one instead of every
    file (a store builds one on its second full pass in a process). It only ever reads the
    directories. With ``tree``, every directory under the root is watched too (not those
    named in ``skip``, nor what is below them; a symlinked directory is never followed), and
    a directory made later is watched as it appears, the files already in it named. Names
    are paths relative to the root, ``/``-separated.
    :meth:`drain` returns None when events may have been lost (queue overflow, a watched
    directory moved or deleted, too many names), and the caller then does a full pass.
    Unavailable (other systems, no inotify instances left, more than :attr:`MAX_DIRS`
    directories or the kernel's watch limit reached): :meth:`create` returns None.
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
    _IN_ISDIR = 0x40000000
    _MASK = (
        _IN_MODIFY
        | _IN_ATTRIB
        | _IN_CLOSE_WRITE
        | _IN_MOVED_FROM
        | _IN_MOVED_TO
        | _IN_CREATE
        | _IN_DELETE
        | _IN_DELETE_SELF
        | _IN_MOVE_SELF
        | _IN_ONLYDIR
    )
    _LOST = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_UNMOUNT | _IN_Q_OVERFLOW | _IN_IGNORED
    MAX_NAMES = 2000  # beyond this a full pass is as cheap and simpler
    MAX_DIRS = _max_dirs()  # directories of one tree watched at most (each a kernel watch)

    def __init__(
        self,
        fd: int,
        root: str,
        add_watch: Callable[[int, bytes, int], int],
        tree: bool,
        skip: tuple[str, ...],
    ) -> None:
        self._fd: int | None = fd
        self._root = root
        self._add_watch = add_watch
        self._tree = tree
        self._skip = frozenset(skip)
        self._dirs: dict[int, str] = {}  # watch descriptor -> its directory ("" the root)
        self._lock = threading.Lock()

    @classmethod
    def create(
        cls, path: Path, *, tree: bool = False, skip: tuple[str, ...] = ()
    ) -> DirWatch | None:
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
        watch = cls(fd, str(path), add_watch, tree, skip)
        if not (watch._watch_tree("", None) if tree else watch._add("")) or not watch._dirs:
            watch.close()
            return None
        return watch

    def _add(self, rel: str) -> bool | None:
        """Watch directory ``rel``: True; None when it is not to be watched (gone, no
        directory, not readable: no listing reads it either); False when the kernel refuses
        (its watch limit) or :attr:`MAX_DIRS` is reached."""
        if len(self._dirs) >= self.MAX_DIRS or self._fd is None:
            return False
        path = os.path.join(self._root, rel) if rel else self._root
        wd = int(self._add_watch(self._fd, os.fsencode(path), self._MASK))
        if wd < 0:
            return None if _errno() in _UNWATCHABLE else False
        self._dirs[wd] = rel
        return True

    def _watch_tree(self, rel: str, found: set[str] | None) -> bool:
        """Watch ``rel`` and every directory below it, each before it is listed (so a file
        made meanwhile is either listed or reported); the files listed go into ``found``.
        False when a directory could not be watched (the caller gives the watch up)."""
        stack = [rel]
        while stack:
            here = stack.pop()
            added = self._add(here)
            if added is None:
                continue  # (gone again already: its parent's event says so; or unreadable)
            if not added:
                return False
            try:
                with os.scandir(os.path.join(self._root, here) if here else self._root) as it:
                    entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
            except OSError:
                continue
            for name, is_dir in entries:
                child = f"{here}/{name}" if here else name
                if is_dir:
                    if name not in self._skip:
                        stack.append(child)
                elif found is not None:
                    found.add(child)
        return True

    def drain(self) -> set[str] | None:
        """Paths with events since the last call; None when a full pass is needed."""
        with self._lock:
            if self._fd is None:
                return None
            names: set[str] = set()
            lost = False
            while not lost:
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
                    wd, mask, _cookie, size = struct.unpack_from("iIII", buf, pos)
                    raw = buf[pos + 16 : pos + 16 + size].split(b"\0", 1)[0]
                    pos += 16 + size
                    if mask & self._LOST:
                        lost = True
                        break
                    where = self._dirs.get(wd)
                    if not raw or where is None:
                        continue
                    name = os.fsdecode(raw)
                    path = f"{where}/{name}" if where else name
                    if not (self._tree and mask & self._IN_ISDIR):
                        names.add(path)
                    elif name in self._skip:
                        continue
                    elif mask & (self._IN_CREATE | self._IN_MOVED_TO):
                        # A new directory: watched from now on, what it already holds named.
                        if not self._watch_tree(path, names):
                            lost = True
                            break
                    elif mask & (self._IN_DELETE | self._IN_MOVED_FROM):
                        lost = True  # the files below it went with it: which, a pass says
                        break
            if lost:
                self._close()
                return None
            return None if len(names) > self.MAX_NAMES else names

    def _close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
            self._dirs.clear()

    @property
    def alive(self) -> bool:
        return self._fd is not None

    @property
    def watched(self) -> int:
        """How many directories are watched."""
        return len(self._dirs)

    def close(self) -> None:
        with self._lock:
            self._close()
