"""``SourceStore``: the recall API of a store, read from any source by scanning its files.

What ``--no-index`` opens for a source kind that brings no store of its own (see
:meth:`~.base.SourceKind.scan`), and what the index of such a source reads sessions through
(:class:`~session_browser.core.index.SqliteSessionStore` over a read-only source). Every file
is loaded through the source on each scan (no cache): fine for the small dirs a new format
starts with. Read-only: every write method raises :class:`~.readonly.ReadOnlyStore`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import recall
from ..files import FileIdentity
from ..model import JSONDict, SessionData, SessionHit, SessionSummary
from .base import SessionSource
from .readonly import ReadOnlyWrites


class SourceStore(ReadOnlyWrites):
    """A read-only, scanning store over one :class:`~.base.SessionSource`."""

    def __init__(self, source: SessionSource) -> None:
        self.source = source
        self.root = source.root
        self.source_kind = source.kind

    @property
    def label(self) -> str:
        return f"{self.source.kind}:{self.root}"

    def _sessions(self, include_hidden: bool = False) -> Iterator[tuple[str, str, int, JSONDict]]:
        """(session id, file name, size, session dict) of every readable file, in the
        source's file order; the first file of an id wins (``include_hidden``: with the
        hidden parts, for ``in:tools``)."""
        files = self.source.list_files()
        seen: set[str] = set()
        for name in self.source.file_order(set(files)):
            data = self.source.load(name, include_hidden=include_hidden)
            if data is None:
                continue
            data.setdefault("session_id", Path(name).stem)
            sid = str(data["session_id"])
            if sid in seen:
                continue
            seen.add(sid)
            yield sid, name, files[name][0], data

    def _find(self, session_id: str) -> tuple[str, JSONDict] | None:
        for sid, name, _size, data in self._sessions():
            if sid == session_id:
                return name, data
        return None

    def projection(self, session_id: str, *, include_hidden: bool = False) -> list[JSONDict]:
        """The whole archived+active projection of a session (``KeyError`` when missing);
        ``include_hidden`` adds tool calls and results, reasoning and bookkeeping as hidden
        parts of the same messages, for the viewer to show on request."""
        found = self._find(session_id)
        if found is None:
            raise KeyError(session_id)
        name, data = found
        if include_hidden:
            full = self.source.load(name, include_hidden=True)
            if full is not None:
                data = full
        return recall.full_view(recall.project(data))

    def owned_dirs(self) -> list[Path]:
        return [Path(self.root)]

    def session_path(self, session_id: str) -> Path | None:
        found = self._find(session_id)
        return None if found is None else self.root / found[0]

    def session_exists(self, session_id: str) -> bool:
        return (
            isinstance(session_id, str) and bool(session_id) and self._find(session_id) is not None
        )

    def read_raw(self, session_id: str) -> JSONDict | None:
        found = self._find(session_id)
        return None if found is None else found[1]

    def file_identity(self, session_id: str) -> FileIdentity | None:
        return FileIdentity.at(self.session_path(session_id))

    def iter_sessions(self) -> Iterator[tuple[Path, os.stat_result, JSONDict]]:
        for _sid, name, _size, data in self._sessions():
            path = self.root / name
            try:
                st = path.stat()
            except OSError:
                continue
            yield path, st, data

    def get_session(self, session_id: str) -> SessionData:
        found = self._find(session_id)
        session = SessionData.from_dict(found[1]) if found else SessionData(session_id=session_id)
        session.source_kind = self.source.kind
        return session

    def window(
        self, session_id: str, around_message_id: Any = None, *, window: int = 5
    ) -> list[JSONDict]:
        found = self._find(session_id)
        messages = recall.project(found[1]) if found else []
        if not messages:
            return []
        anchor = recall.parse_anchor(around_message_id, len(messages))
        return recall.window_slice(messages, anchor, window)

    def summaries(self) -> list[SessionSummary]:
        out: list[SessionSummary] = []
        for _sid, _name, size, data in self._sessions():
            summary = recall.summary_of(data, size=size, source=self.source.kind, store=self.label)
            automated = self.source.automated(data)
            if automated is not None:
                summary.automated = automated
            out.append(summary)
        return out

    def recent(self, *, limit: int = 10) -> list[SessionSummary]:
        return recall.sort_recent(self.summaries(), limit)

    def search_candidates(
        self, query: str, *, window: int = 5, language: bool = False, **_: Any
    ) -> list[recall.Candidate]:
        parsed = recall.ClassicQuery.parse(query, language=language)
        if not parsed.searchable:
            return []
        stats = recall.scan_stats(parsed)
        out: list[recall.Candidate] = []
        tools = parsed.filters is not None and parsed.filters.tools
        for _sid, name, _size, data in self._sessions(include_hidden=tools):
            cand = recall.classic_candidate(
                data,
                parsed,
                window=window,
                source=self.source.kind,
                store=self.label,
                file_name=name,
                stats=stats,
            )
            if cand is not None:
                self.source.settle_hit(cand.hit, data)
                out.append(cand)
        return recall.keep_matching(out, parsed, None if stats is None else stats.rare())

    def search(self, query: str, *, limit: int = 5, window: int = 5) -> list[SessionHit]:
        return recall.search(query, limit, lambda: self.search_candidates(query, window=window))

    def to_json(self) -> JSONDict:
        return {"source": self.source.kind, "root": str(self.root), "label": self.label}
