"""PraisonAI's session store as a source: one ``<id>.json`` file per session in a flat dir.

The only format ever written, and only through
:class:`~session_browser.core.store.DefaultSessionStore` (atomic, locked, backed up); the
source itself only reads. Its files are the ``*.json`` regular files of the dir (not dotfiles);
a file is read whole, capped at :data:`~session_browser.core.files.MAX_SESSION_BYTES`.
Automation follows the shared rules (tagged, the documented message rate, machine pacing).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from ..files import MAX_SESSION_BYTES, loads, read_file_bytes, read_json
from ..model import JSONDict, SessionHit
from ..paths import default_session_dir, project_session_dir, same_dir
from .base import RAW_KEPT, Identity, SessionDoc, SessionSource, Skip, SourceKind

PRAISONAI_SOURCE = "praisonai"


def scan_dir(session_dir: Path) -> dict[str, Identity]:
    """(size, mtime_ns, inode) of every ``*.json`` regular file of ``session_dir`` (the files
    :func:`~session_browser.core.files.iter_session_files` picks), by name; no ``Path``
    objects, and every ``stat`` is relative to an open descriptor of the dir (no path walk per
    file), so 30k files stay fast.
    """
    out: dict[str, Identity] = {}
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


def stat_names(session_dir: Path, names: Iterable[str]) -> dict[str, Identity | None]:
    """The :func:`scan_dir` identity of each of ``names`` (None: not a session file now)."""
    out: dict[str, Identity | None] = {}
    for name in names:
        ident: Identity | None = None
        if name.endswith(".json") and not name.startswith(".") and "/" not in name:
            try:
                st = os.stat(os.path.join(session_dir, name))
            except (OSError, ValueError):
                st = None
            if st is not None and stat.S_ISREG(st.st_mode):
                ident = (st.st_size, st.st_mtime_ns, st.st_ino)
        out[name] = ident
    return out


class PraisonAISource(SessionSource):
    """The ``*.json`` session files of one PraisonAI session dir."""

    kind = PRAISONAI_SOURCE
    read_only = False
    watchable = True
    index_prefix = ""
    state_table: str | None = None
    content_version: str | None = None
    # parse() depends on the file alone and keeps nothing: a copy of this source in another
    # process parses as this one would (a first build parses there, see index.parsing)
    parses_apart = True

    def __init__(self, root: Path) -> None:
        self.root = root

    def list_files(self) -> dict[str, Identity]:
        return scan_dir(self.root)

    def identities(self, names: Iterable[str]) -> dict[str, Identity | None]:
        return stat_names(self.root, names)

    def parse(self, name: str, ident: Identity, prior: bytes | None) -> SessionDoc | Skip:
        try:
            path = self.root / name
            raw: bytes | None = None
            if ident[0] <= RAW_KEPT:  # small: its bytes go on to the vault with the parse
                try:
                    raw = read_file_bytes(path, max_bytes=RAW_KEPT)
                except OSError as exc:
                    if exc.errno != errno.EFBIG:  # (it grew since it was listed: read below)
                        raise
            # Capped: one huge file is skipped (with its size in the reason), never read whole.
            data = loads(raw) if raw is not None else read_json(path, max_bytes=MAX_SESSION_BYTES)
        except OSError as exc:
            return Skip(f"unreadable: {exc.strerror or exc}")
        except (ValueError, RecursionError) as exc:
            return Skip(f"not valid JSON: {str(exc)[:200]}")
        if not isinstance(data, dict):
            return Skip(f"root is {type(data).__name__}, not an object")
        return SessionDoc(data, raw=raw)

    def load(self, name: str, *, include_hidden: bool = False) -> JSONDict | None:
        path = self.root / name
        try:
            data = read_json(path, max_bytes=MAX_SESSION_BYTES)
        except (OSError, ValueError, RecursionError):
            return None
        if not isinstance(data, dict):
            return None
        data.setdefault("session_id", path.stem)
        return data

    def file_order(self, names: set[str]) -> list[str]:
        try:
            return [n for n in os.listdir(self.root) if n in names]
        except OSError:
            return sorted(names)

    def automated(self, data: JSONDict) -> bool | None:
        return None

    def settle_hit(self, hit: SessionHit, data: JSONDict) -> None:
        return None


def default_dirs(cwd: Path | None = None) -> list[Path]:
    """The project store (if it exists) then the global store, without duplicates."""
    dirs: list[Path] = []
    project = project_session_dir(cwd)
    if project.is_dir():
        dirs.append(project)
    glob = default_session_dir()
    if not any(same_dir(glob, d) for d in dirs):
        dirs.append(glob)
    return dirs


KIND = SourceKind(
    name=PRAISONAI_SOURCE,
    prefix=None,
    read_only=False,
    default_dirs=default_dirs,
    only_if_present=False,
    source=PraisonAISource,
    describe="store",
)
