"""``PiIndexStore``: the search index over a Pi session dir (read-only, incremental).

A :class:`~session_browser.core.index.SqliteSessionStore` (one row per message with text,
FTS5, relevance ranking, background reconcile, browse/count) whose source is a
:class:`~session_browser.core.sources.pi.source.PiSource` instead of PraisonAI's JSON files,
plus the Pi reads of the viewer (branches, hidden parts) and writes refused:

- **Strictly read-only.** The Pi files are opened ``rb`` and closed; nothing is written,
  locked or created under the Pi dir. The database lives in our cache dir
  (``paths.cache_dir()/index/pi-<dir key>.sqlite3``). Every write method raises
  :class:`~session_browser.core.sources.readonly.ReadOnlyStore`.
- **Files.** ``root/**/*.jsonl`` (symlinked dirs are not followed); the ``file`` column holds
  the path relative to the root (``--home-user-proj--/<ts>_<uuid>.jsonl``). Reconcile
  compares each file's identity (size, mtime_ns, inode) with the index, as for JSON stores.
- **Incremental reads.** Beside the rows, the table ``pi_state`` keeps each file's parse state
  (:meth:`PiParseState.dump`: entries read so far, ``end_offset``, and the first and last
  bytes read). When a file changed, the reader resumes from ``end_offset`` if the file only
  grew (same inode, same prefix bytes), and reads it from the start otherwise. The whole
  session is re-indexed either way: an appended compaction or a new branch changes which
  earlier turns are archived or on the active branch. :attr:`PiIndexStore.last_reads` counts
  the resumed and full reads of the last reconcile.
- **What is indexed.** The visible prose of the active branch (user and assistant text,
  visible custom messages, compaction and branch summaries); thinking, tool calls, tool
  results and bash output never reach the index.
- **Automation.** Pi's own rule (:func:`~session_browser.core.sources.pi.pi_is_automated`:
  tagged, or more than 60 *user* turns an hour) sets the automated flag and the relevance
  demotion, so interactive coding sessions full of quick tool calls are not demoted.
- **Source and project.** Hits and summaries carry ``source="pi"`` and
  ``project=<the session's cwd>``; ``source:pi`` and ``project:PATH`` filter in the query
  language (see :mod:`session_browser.core.query`), and :meth:`PiIndexStore.recent` /
  :meth:`PiIndexStore.browse` take a ``project`` keyword too.
- **Viewer.** :meth:`PiIndexStore.projection` (``include_hidden``, ``leaf_id``) and
  :meth:`PiIndexStore.branches` read the file through a :class:`PiStore`.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from . import paths, recall
from .files import FileIdentity
from .index import SqliteSessionStore
from .index.schema import Broken, default_db_path
from .model import JSONDict, SessionData, SessionSummary
from .query import normalize_project, project_matches
from .sources.pi import PI_SOURCE, PiBranch, PiStore, default_pi_dir
from .sources.pi.source import PiSource, scan_pi_dir

__all__ = ["PiIndexStore", "default_pi_db_path", "scan_pi_dir"]


def default_pi_db_path(root: Path) -> Path:
    """Where the index of the Pi dir ``root`` lives (our cache dir, never the Pi dir)."""
    return default_db_path(root, PiSource.index_prefix)


class _PiReader:
    """The session reads of a Pi dir, each finding its file through ``locate`` (the index's
    lookup, a scan when the index does not know the id)."""

    def __init__(self, pi: PiStore, locate: Callable[[str], Path | None]) -> None:
        self.pi = pi
        self._locate = locate
        self.source_kind = pi.source_kind

    @property
    def label(self) -> str:
        return self.pi.label

    def projection(self, session_id: str, *, include_hidden: bool = False) -> list[JSONDict]:
        self._locate(session_id)
        return self.pi.projection(session_id, include_hidden=include_hidden)

    def session_path(self, session_id: str) -> Path | None:
        return self._locate(session_id)

    def read_raw(self, session_id: str) -> JSONDict | None:
        path = self._locate(session_id)
        session = None if path is None else self.pi.load(path)
        return None if session is None else dict(session.data)

    def get_session(self, session_id: str) -> SessionData:
        self._locate(session_id)
        return self.pi.get_session(session_id)

    def session_exists(self, session_id: str) -> bool:
        if not isinstance(session_id, str) or not session_id:
            return False
        return self._locate(session_id) is not None

    def iter_sessions(self) -> Iterator[tuple[Path, os.stat_result, JSONDict]]:
        for path, st, session in self.pi.iter_sessions():
            yield path, st, session.data

    def summaries(self) -> list[SessionSummary]:
        return self.pi.summaries()

    def recent(self, *, limit: int = 10) -> list[SessionSummary]:
        return self.pi.recent(limit=limit)

    def search_candidates(
        self, query: str, *, window: int = 5, language: bool = False
    ) -> list[recall.Candidate]:
        return self.pi.search_candidates(query, window=window, language=language)

    def window(
        self, session_id: str, around_message_id: Any = None, *, window: int = 5
    ) -> list[JSONDict]:
        self._locate(session_id)
        return self.pi.window(session_id, around_message_id, window=window)

    def file_identity(self, session_id: str) -> FileIdentity | None:
        return FileIdentity.at(self._locate(session_id))


class PiIndexStore(SqliteSessionStore):
    """A searchable, read-only index over a Pi session dir (see the module docstring)."""

    source_kind = PI_SOURCE

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        db_path: str | os.PathLike[str] | None = None,
        reconcile: str = "sync",
        fts: bool = True,
        vault: bool = False,
    ) -> None:
        root_path = Path(root).expanduser() if root is not None else default_pi_dir()
        self.root = root_path
        self.pi = PiStore(root_path)
        super().__init__(
            root_path,
            db_path=str(db_path) if db_path is not None else str(default_pi_db_path(root_path)),
            reconcile=reconcile,
            fts=fts,
            source=PiSource(root_path, self.pi),
            reader=_PiReader(self.pi, self._pi_path),
            vault=vault,
        )

    def __enter__(self) -> PiIndexStore:
        return self

    def session_path(self, session_id: str) -> Path:
        found = self._pi_path(session_id)
        return found if found is not None else self.root / f"{paths.safe_id(session_id)}.jsonl"

    # ------------------------------------------------------------------ lookups

    def _pi_path(self, session_id: str) -> Path | None:
        """The file of ``session_id``: from the index when it knows it, else a scan."""
        try:
            rows = self._rows(
                "SELECT file FROM sessions WHERE session_id=? ORDER BY file", (session_id,)
            )
        except (Broken, sqlite3.Error):  # the index is unusable: the reader scans
            rows = []
        for (name,) in rows:
            path = self.root / str(name)
            if path.is_file():
                self.pi.remember_path(session_id, path)
                return path
        found: Path | None = self.pi.session_path(session_id)
        return found

    # ------------------------------------------------------------------ status

    def status(self) -> JSONDict:
        out = super().status()
        out["source"] = PI_SOURCE
        return out

    # ------------------------------------------------------------------ browse by project

    def recent(
        self, *, limit: int = 10, project: str | os.PathLike[str] | None = None
    ) -> list[SessionSummary]:
        """The most recently updated sessions, optionally of one project (cwd) only."""
        if project is None:
            return super().recent(limit=limit)
        return self.browse(limit=limit, project=project)

    def browse(
        self,
        *,
        offset: int = 0,
        limit: int = 100,
        sort: str = "updated",
        text: str = "",
        project: str | os.PathLike[str] | None = None,
    ) -> list[SessionSummary]:
        """A page of the session list; ``project`` keeps sessions whose cwd is in it."""
        if project is None:
            return super().browse(offset=offset, limit=limit, sort=sort, text=text)
        want = normalize_project(os.fspath(project))
        rows = [
            s
            for s in super().browse(offset=0, limit=1 << 30, sort=sort, text=text)
            if project_matches(s.project, want)
        ]
        return rows[max(0, offset) : max(0, offset) + max(0, limit)]

    # ------------------------------------------------------------------ the viewer

    def projection(
        self, session_id: str, *, include_hidden: bool = False, leaf_id: str | None = None
    ) -> list[JSONDict]:
        """The whole projection (``KeyError`` when missing); ``include_hidden`` adds thinking,
        tool calls and results in ``metadata.hidden``; ``leaf_id`` reads another branch."""
        self._pi_path(session_id)
        return self.pi.projection(session_id, include_hidden=include_hidden, leaf_id=leaf_id)

    def branches(self, session_id: str) -> list[PiBranch]:
        """The active branch first, then every other leaf (``KeyError`` when missing)."""
        self._pi_path(session_id)
        return self.pi.branches(session_id)

    def to_json(self) -> JSONDict:
        return {"source": PI_SOURCE, "root": str(self.root), "label": self.label}
