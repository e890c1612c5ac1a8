"""``SourceIndexStore``: the search index over the files of any read-only source.

What ``--store KIND:DIR`` opens for a source kind that brings no indexed store of its own (see
:meth:`~session_browser.core.sources.base.SourceKind.index`): a
:class:`~.store.SqliteSessionStore` whose source is the given one, whose session reads (the
viewer, export, the scan when the index is unusable) go through a
:class:`~session_browser.core.sources.scan.SourceStore`, and whose writes are refused.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import paths, recall
from ..files import FileIdentity
from ..model import JSONDict, SessionData, SessionSummary
from ..sources.base import SessionSource
from ..sources.readonly import ReadOnlyWrites
from ..sources.scan import SourceStore
from ..store import DefaultSessionStore
from .schema import default_db_path
from .store import SqliteSessionStore


class _SourceReads(DefaultSessionStore):
    """The session reads of the JSON store, answered by a :class:`SourceStore`. Sits between
    the index and :class:`DefaultSessionStore` in the method order, so the index's own
    fallbacks (``super().summaries()``, the classic scan) read the source's files too."""

    reader: SourceStore

    def read_raw(self, session_id: str) -> JSONDict | None:
        return self.reader.read_raw(session_id)

    def get_session(self, session_id: str) -> SessionData:
        return self.reader.get_session(session_id)

    def session_exists(self, session_id: str) -> bool:
        return self.reader.session_exists(session_id)

    def iter_sessions(self) -> Iterator[tuple[Path, os.stat_result, JSONDict]]:
        return self.reader.iter_sessions()

    def summaries(self) -> list[SessionSummary]:
        return self.reader.summaries()

    def search_candidates(
        self, query: str, *, window: int = 5, **kwargs: Any
    ) -> list[recall.Candidate]:
        return self.reader.search_candidates(
            query, window=window, language=bool(kwargs.get("language"))
        )

    def window(
        self, session_id: str, around_message_id: Any = None, *, window: int = 5
    ) -> list[JSONDict]:
        return self.reader.window(session_id, around_message_id, window=window)

    def file_identity(self, session_id: str) -> FileIdentity | None:
        return self.reader.file_identity(session_id)


class SourceIndexStore(ReadOnlyWrites, SqliteSessionStore, _SourceReads):  # type: ignore[misc]
    """A searchable, read-only index over the files of ``source``."""

    def __init__(
        self,
        source: SessionSource,
        *,
        db_path: str | os.PathLike[str] | None = None,
        reconcile: str = "sync",
        fts: bool = True,
    ) -> None:
        self.reader = SourceStore(source)
        root = source.root
        super().__init__(
            root,
            db_path=str(db_path or default_db_path(root, source.index_prefix)),
            reconcile=reconcile,
            fts=fts,
            source=source,
            # Never used (writes are refused); named so nothing defaults to PraisonAI's.
            spill_dir=paths.cache_dir() / f"{source.kind}-no-spill",
        )

    @property
    def label(self) -> str:
        return self.reader.label

    def session_path(self, session_id: str) -> Path:
        found = self.reader.session_path(session_id)
        return found if found is not None else self.source.root / paths.safe_id(session_id)

    def to_json(self) -> JSONDict:
        return self.reader.to_json()
