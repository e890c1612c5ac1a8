"""A Pi session dir read through the search index: what an indexed store over Pi files reads
sessions with (the viewer, export, the scan it falls back to), and that store opened.

The store (:func:`session_browser.core.open.pi_index_store`) is the one indexed store of
every source with a :class:`~.source.PiSource` and a :class:`PiIndexReader`:

- **Strictly read-only.** The Pi files are opened ``rb`` and closed; nothing is written,
  locked or created under the Pi dir. The database lives in our cache dir
  (``paths.cache_dir()/index/pi-<dir key>.sqlite3``). Every write method raises
  :class:`~session_browser.core.sources.readonly.ReadOnlyStore`.
- **Files.** ``root/**/*.jsonl`` (symlinked dirs are not followed); the ``file`` column holds
  the path relative to the root (``--home-user-proj--/<ts>_<uuid>.jsonl``). Reconcile
  compares each file's identity (size, mtime_ns, inode) with the index, as for JSON stores.
- **Incremental reads.** Beside the rows, the table ``pi_state`` keeps each file's parse state
  (entries read so far, ``end_offset``, and the first and last bytes read). When a file
  changed, the reader resumes from ``end_offset`` if the file only grew (same inode, same
  prefix bytes), and reads it from the start otherwise. The whole session is re-indexed
  either way: an appended compaction or a new branch changes which earlier turns are
  archived or on the active branch. The store's ``last_reads`` counts the resumed and full
  reads of the last reconcile.
- **What is indexed.** The visible prose of the active branch (user and assistant text,
  visible custom messages, compaction and branch summaries); thinking, tool calls, tool
  results and bash output never reach the index.
- **Automation.** Pi's own rule (:func:`~session_browser.core.sources.pi.pi_is_automated`:
  tagged, or more than 60 *user* turns an hour) sets the automated flag and the relevance
  demotion, so interactive coding sessions full of quick tool calls are not demoted.
- **Viewer.** :meth:`PiIndexReader.projection` (``include_hidden``, ``leaf_id``) and
  :meth:`PiIndexReader.branches` read the file through a :class:`~.store.PiStore` (the
  store's ``reader``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ... import paths, recall
from ...files import FileIdentity
from ...model import JSONDict, SessionData, SessionSummary
from ..base import Locate
from .session import PiBranch
from .store import PiStore


class PiIndexReader:
    """The session reads of a Pi dir, each finding its file through the index first
    (``locate``), then a scan."""

    def __init__(self, pi: PiStore, locate: Locate = lambda _sid: None) -> None:
        self.pi = pi
        self.locate = locate
        self.source_kind = pi.source_kind

    @property
    def label(self) -> str:
        return self.pi.label

    def _path(self, session_id: str) -> Path | None:
        """The file of ``session_id``: from the index when it knows it, else a scan."""
        path = self.locate(session_id)
        if path is not None:
            self.pi.remember_path(session_id, path)
            return path
        found: Path | None = self.pi.session_path(session_id)
        return found

    def projection(
        self, session_id: str, *, include_hidden: bool = False, leaf_id: str | None = None
    ) -> list[JSONDict]:
        """The whole projection (``KeyError`` when missing); ``include_hidden`` adds thinking,
        tool calls and results in ``metadata.hidden``; ``leaf_id`` reads another branch."""
        self._path(session_id)
        return self.pi.projection(session_id, include_hidden=include_hidden, leaf_id=leaf_id)

    def branches(self, session_id: str) -> list[PiBranch]:
        """The active branch first, then every other leaf (``KeyError`` when missing)."""
        self._path(session_id)
        return self.pi.branches(session_id)

    def owned_dirs(self) -> list[Path]:
        return [self.pi.root]

    def session_path(self, session_id: str) -> Path:
        found = self._path(session_id)
        return found if found is not None else self.pi.root / f"{paths.safe_id(session_id)}.jsonl"

    def read_raw(self, session_id: str) -> JSONDict | None:
        path = self._path(session_id)
        session = None if path is None else self.pi.load(path)
        return None if session is None else dict(session.data)

    def get_session(self, session_id: str) -> SessionData:
        self._path(session_id)
        return self.pi.get_session(session_id)

    def session_exists(self, session_id: str) -> bool:
        if not isinstance(session_id, str) or not session_id:
            return False
        return self._path(session_id) is not None

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
        self._path(session_id)
        return self.pi.window(session_id, around_message_id, window=window)

    def file_identity(self, session_id: str) -> FileIdentity | None:
        return FileIdentity.at(self._path(session_id))
