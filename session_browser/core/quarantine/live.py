"""Which live session files are damaged, without re-reading the healthy ones every time.

A live file is damaged when the store's reading path cannot read it as a session (a
truncated file, NUL padding, bad UTF-8 anywhere, a list root...). Damage can sit in the
middle of a big file, so every file is parsed whole once; the identity of each file that
parsed well (size, mtime and ctime in ns, inode) is remembered in our cache dir, one small
JSON file per session dir, and a file with the same identity is not read again. A write
changes the ctime (which no tool can set back), so a file changed since is read again.
The memory is a cache: when it cannot be read or written, every file is read.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from ..files import SessionFileError, atomic_write_bytes, read_json_file
from ..paths import cache_dir, dir_key, ensure_private_dir

CACHE_VERSION = 1
MAX_CACHE_BYTES = 64 << 20  # far above a 100,000-file store's memory

Identity = tuple[int, int, int, int]


def identity(st: os.stat_result) -> Identity:
    """What says a file is unchanged since it was last read."""
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def _cache_path(session_dir: Path) -> Path:
    return cache_dir() / "healthy" / f"{dir_key(session_dir)}.json"


class HealthyFiles:
    """The files of one session dir known to read as sessions (see the module docstring).

    :meth:`is_damaged` decides one file; :meth:`save` keeps what was learnt (the files
    listed this time only, so deleted files drop out).
    """

    def __init__(self, session_dir: Path) -> None:
        self.path = _cache_path(session_dir)
        self.known: dict[str, Identity] = self._load()
        self.seen: dict[str, Identity] = {}

    def _load(self) -> dict[str, Identity]:
        try:
            if self.path.stat().st_size > MAX_CACHE_BYTES:
                return {}
            data = json.loads(self.path.read_bytes())
        except (OSError, ValueError, RecursionError):
            return {}
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
            return {}
        files = data.get("files")
        if not isinstance(files, dict):
            return {}
        out: dict[str, Identity] = {}
        for name, value in files.items():
            if (
                isinstance(value, list)
                and len(value) == 4
                and all(isinstance(v, int) for v in value)
            ):
                out[name] = (value[0], value[1], value[2], value[3])
        return out

    def is_damaged(self, path: Path, st: os.stat_result, *, recheck: bool = False) -> bool:
        """Whether the live file ``path`` fails the store's reading path. An unreadable
        file (or one over the size cap) is not damaged: there is nothing to salvage.
        ``recheck``: read it even when it is known healthy."""
        ident = identity(st)
        if not recheck and self.known.get(path.name) == ident:
            self.seen[path.name] = ident
            return False
        try:
            read_json_file(path)
        except SessionFileError:
            return True
        except OSError:
            return False
        self.seen[path.name] = ident
        return False

    def save(self) -> None:
        """Remember the healthy files seen (nothing when nothing changed; never raises)."""
        if self.seen == self.known:
            return
        payload = {"version": CACHE_VERSION, "files": {k: list(v) for k, v in self.seen.items()}}
        with contextlib.suppress(OSError):
            ensure_private_dir(self.path.parent)
            atomic_write_bytes(self.path, json.dumps(payload, separators=(",", ":")).encode())


def forget(session_dirs: Iterable[Path]) -> None:
    """Drop what is remembered about ``session_dirs`` (their files are all read again)."""
    for directory in session_dirs:
        with contextlib.suppress(OSError):
            _cache_path(directory).unlink()
