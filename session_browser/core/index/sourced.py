"""``SourceIndexStore``: the search index over the files of any read-only source.

What ``--store KIND:DIR`` opens for a source kind that brings no indexed store of its own (see
:meth:`~session_browser.core.sources.base.SourceKind.index`): a
:class:`~.store.SqliteSessionStore` whose source is the given one, whose session reads (the
viewer, export, the scan when the index is unusable) go through a
:class:`~session_browser.core.sources.scan.SourceStore` (its reader), and which has no writer:
every write is refused.
"""

from __future__ import annotations

import os

from ..model import JSONDict
from ..sources.base import SessionSource
from ..sources.scan import SourceStore
from .schema import default_db_path
from .store import SqliteSessionStore


class SourceIndexStore(SqliteSessionStore):
    """A searchable, read-only index over the files of ``source``."""

    reader: SourceStore

    def __init__(
        self,
        source: SessionSource,
        *,
        db_path: str | os.PathLike[str] | None = None,
        reconcile: str = "sync",
        fts: bool = True,
        vault: bool = False,
    ) -> None:
        root = source.root
        super().__init__(
            root,
            db_path=str(db_path or default_db_path(root, source.index_prefix)),
            reconcile=reconcile,
            fts=fts,
            source=source,
            reader=SourceStore(source),
            vault=vault,
        )

    def to_json(self) -> JSONDict:
        return self.reader.to_json()
