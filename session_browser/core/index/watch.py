"""Directory scans by file identity, their fingerprint, and the inotify watch that names the files
changed since."""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
import sys
import threading
from pathlib import Path


def scan_fingerprint(files: dict[str, tuple[int, int, int]]) -> str:
    """A digest of a scan (names, identities and their order): equal digests, equal scans."""
    text = repr(files).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(text, digest_size=20).hexdigest()


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
