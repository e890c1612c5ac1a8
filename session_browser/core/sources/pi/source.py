"""Pi sessions as a :class:`~session_browser.core.sources.base.SessionSource`.

Files: ``root/**/*.jsonl`` (symlinked dirs are not followed), named by their path relative to
the root (``--home-user-proj--/<ts>_<uuid>.jsonl``). A changed file is read from its saved
parse state when it only grew (:meth:`PiParseState.dump`). Read-only: files are opened ``rb``
and closed, nothing is written, locked or created under the root. Automation: Pi's own rule
(:func:`pi_is_automated`: tagged, or more than 60 *user* turns an hour).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import cast

from ...files import MAX_SESSION_BYTES, real_dir, regular_lstat, rel_below
from ...model import JSONDict, SessionHit
from ..base import Identity, Locate, SessionDoc, SessionSource, Skip, SourceKind
from .entries import PI_SOURCE, default_pi_dir
from .indexed import PiIndexReader
from .session import read_pi_session
from .state import PiParseState
from .store import PiStore, pi_is_automated, settle_automation

PI_CONTENT_VERSION = "1"  # what the Pi reader puts in the rows; another value rebuilds


def scan_pi_dir(root: Path, refused: dict[str, int] | None = None) -> dict[str, Identity]:
    """(size, mtime_ns, inode) of every ``*.jsonl`` regular file under ``root``, by path
    relative to ``root`` (``/``-separated); symlinks (to files or dirs) are not followed,
    FIFOs and devices never opened: they are counted in ``refused``."""
    out: dict[str, Identity] = {}
    if not root.is_dir():
        return out
    base = str(root)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if real_dir(os.path.join(dirpath, d), refused))
        rel_dir = rel_below(dirpath, base)
        for name in filenames:
            if not name.endswith(".jsonl") or name.startswith("."):
                continue
            st = regular_lstat(os.path.join(dirpath, name), refused)
            if st is None:  # a symlink is never followed, a FIFO or a device never opened
                continue
            rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
            out[rel] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


class PiSource(SessionSource):
    """The Pi session files under one root (see the module doc)."""

    kind = PI_SOURCE
    read_only = True
    # A tree of dirs, all watched: a reconcile after the first stats what changed.
    watchable = True
    watch_tree = True
    index_prefix = f"{PI_SOURCE}-"
    state_table: str | None = "pi_state"
    content_version: str | None = PI_CONTENT_VERSION

    def __init__(self, root: Path, reader: PiStore | None = None) -> None:
        self.root = root
        self.reader = reader if reader is not None else PiStore(root)
        #: What the last :meth:`list_files` did not take, by kind (as for Claude Code).
        self.refused: Mapping[str, int] = {}

    def list_files(self) -> dict[str, Identity]:
        refused: dict[str, int] = {}
        out = scan_pi_dir(self.root, refused)
        self.refused = refused
        return out

    def identities(self, names: Iterable[str]) -> dict[str, Identity | None]:
        out: dict[str, Identity | None] = {}
        for name in names:
            ident: Identity | None = None
            if name.endswith(".jsonl") and not os.path.basename(name).startswith("."):
                st = regular_lstat(self.root / name)
                if st is not None:
                    ident = (st.st_size, st.st_mtime_ns, st.st_ino)
            out[name] = ident
        return out

    def parse(self, name: str, ident: Identity, prior: bytes | None) -> SessionDoc | Skip:
        state: PiParseState | None = None
        if prior is not None:
            try:
                state = PiParseState.load(prior)
            except ValueError:
                state = None
        path = self.root / name
        try:
            # One huge file (a single giant line among them) is skipped, never read whole.
            size = os.stat(path).st_size
            if size > MAX_SESSION_BYTES:
                return Skip(f"file is {size} bytes, over the {MAX_SESSION_BYTES}-byte limit")
            session = read_pi_session(path, prior=state, include_hidden=True)
        except OSError as exc:
            return Skip(f"unreadable: {exc.strerror or exc}")
        except (ValueError, RecursionError) as exc:  # pragma: no cover - defensive
            return Skip(f"unusable Pi session: {exc}")
        if session.header is None:
            return Skip("not a Pi session (no session header)", resumed=session.resumed)
        return SessionDoc(
            session.data,
            automated=pi_is_automated(session.data),
            state=session.state.dump(),
            resumed=session.resumed,
        )

    def load(self, name: str, *, include_hidden: bool = False) -> JSONDict | None:
        session = self.reader.load(self.root / name, include_hidden=include_hidden)
        if session is None or session.header is None:
            return None
        return session.data

    def file_order(self, names: set[str]) -> list[str]:
        return sorted(names)

    def automated(self, data: JSONDict) -> bool | None:
        return pi_is_automated(data)

    def settle_hit(self, hit: SessionHit, data: JSONDict) -> None:
        settle_automation(hit, data)
        meta = data.get("metadata")
        cwd = meta.get("cwd") if isinstance(meta, dict) else None
        hit.project = cwd if isinstance(cwd, str) else None


def default_dirs(cwd: Path | None = None) -> list[Path]:
    """Pi's session dir (:func:`default_pi_dir`)."""
    return [default_pi_dir()]


def open_scan(path: Path) -> PiStore:
    """A scanning read-only store over the Pi dir ``path``."""
    return PiStore(path)


def index_reader(source: SessionSource, locate: Locate) -> PiIndexReader:
    """What an index over a Pi dir reads sessions through (the source's own Pi store)."""
    return PiIndexReader(cast(PiSource, source).reader, locate)


KIND = SourceKind(
    name=PI_SOURCE,
    prefix=f"{PI_SOURCE}:",
    read_only=True,
    default_dirs=default_dirs,
    only_if_present=True,
    source=PiSource,
    open_scan=open_scan,
    reader=index_reader,
    describe="Pi session dir",
)
