"""The typed seams between the parts of the core that import nothing of any store: what every
store offers to recall and to the viewer (:class:`RecallStore`). The search engines' seam is
:class:`~session_browser.core.search.engine.Engine`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from . import recall
from .model import JSONDict, SessionData, SessionSummary


class RecallStore(Protocol):
    """What a store offers to recall and to the viewer (every store implements it)."""

    source_kind: str  # what wrote its sessions (a key of the sources table, or "team")

    @property
    def label(self) -> str: ...

    def projection(self, session_id: str, *, include_hidden: bool = False) -> list[JSONDict]:
        """The whole archived+active projection of a session in the public message shape
        (``KeyError`` when missing); ``include_hidden``: with the parts the source keeps
        apart (tool calls and results, reasoning) in ``metadata.hidden``, where it has any."""
        ...

    def search_candidates(
        self, query: str, *, window: int = 5, language: bool = False
    ) -> list[recall.Candidate]: ...

    def window(
        self, session_id: str, around_message_id: Any = None, *, window: int = 5
    ) -> list[JSONDict]: ...

    def summaries(self) -> list[SessionSummary]: ...

    def session_exists(self, session_id: str) -> bool: ...

    def get_session(self, session_id: str) -> SessionData: ...

    def recent(self, *, limit: int = 10) -> list[SessionSummary]: ...

    def session_path(self, session_id: str) -> Path | None: ...

    def owned_dirs(self) -> list[Path]:
        """The dirs whose files belong to this store (its sessions, its spills): nothing but
        the store writes there (an export or an import never lands inside them)."""
        ...

    def close(self) -> None:
        """Release what the store holds (connections, threads); a store that holds nothing
        does nothing. The store is not used after."""
        ...
