"""Stores over sources whose file names usually carry the session id (Claude Code's
``<sessionId>.jsonl``, Codex's ``rollout-<time>-<thread id>.jsonl``).

:class:`~.scan.SourceStore` finds a session by loading file after file until one carries its
id: every file of a big dir read to show one session. Here the files a source names after the
id are tried first (the id read from the file must match; the file's name is only a hint),
and the full scan is left for the rest (a file renamed, or an id that is not in its name).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol, cast

from ..model import JSONDict
from .base import Locate, Retention, SessionSource, SourceKind
from .scan import SourceStore


class NamedSource(SessionSource, Protocol):
    """A source that can say which of its files are likely to hold a session id."""

    def named_files(self, session_id: str, names: set[str]) -> list[str]:
        """Those of ``names`` whose name carries ``session_id``, in file order."""
        ...

    def load(self, name: str, *, include_hidden: bool = False) -> JSONDict | None:
        """The session of file ``name``, with its hidden parts when ``include_hidden``."""
        ...


class NamedScanStore(SourceStore):
    """A :class:`~.scan.SourceStore` that reads the files named after an id first."""

    source: NamedSource

    def __init__(self, source: NamedSource) -> None:
        super().__init__(source)
        self.source = source

    def _find(self, session_id: str) -> tuple[str, JSONDict] | None:
        if not isinstance(session_id, str) or not session_id:
            return None
        names = set(self.source.list_files())
        for name in self.source.named_files(session_id, names):
            data = self.source.load(name)
            if data is not None and data.get("session_id") == session_id:
                return name, data
        return super()._find(session_id)


def named_reader(source: SessionSource, _locate: Locate) -> NamedScanStore:
    """What an index over a named source reads sessions through."""
    return NamedScanStore(cast(NamedSource, source))


def agent_kind(
    name: str,
    make: Callable[[Path], NamedSource],
    default_dir: Callable[[], Path],
    describe: str,
    retention: Callable[[], Retention] | None = None,
) -> SourceKind:
    """The row of the table of source kinds for a coding agent's transcripts (Claude Code,
    Codex): read-only, ``NAME:DIR`` on the command line, its default dir used when it
    exists, stores that find a session by the id in its file name; ``retention``: what
    deletes its sessions (see :class:`~.base.SourceKind`)."""

    def open_scan(path: Path) -> SourceStore:
        return NamedScanStore(make(path))

    return SourceKind(
        name=name,
        prefix=f"{name}:",
        read_only=True,
        default_dirs=lambda _cwd: [default_dir()],
        only_if_present=True,
        source=make,
        open_scan=open_scan,
        reader=named_reader,
        describe=describe,
        retention=retention,
    )
