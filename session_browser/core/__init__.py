"""The store core: plain Python, no UI imports.

Names mirror ``praisonaiagents.session`` so code ports over.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .model import (
    CompactionCheckpoint,
    ImportReport,
    SessionData,
    SessionHit,
    SessionMessage,
    SessionSummary,
)

if TYPE_CHECKING:
    from .index import SqliteSessionStore
    from .multi import StoreGroup
    from .store import DefaultSessionStore

__all__ = [
    "CompactionCheckpoint",
    "DefaultSessionStore",
    "ImportReport",
    "SessionData",
    "SessionHit",
    "SessionMessage",
    "SessionSummary",
    "SqliteSessionStore",
    "StoreGroup",
]


def __getattr__(name: str) -> Any:
    # The stores are imported on first use: plain JSON-store users do not pay for the index,
    # and a process that only parses (the worker of a first build) for none of them.
    if name == "SqliteSessionStore":
        from .index import SqliteSessionStore

        return SqliteSessionStore
    if name == "StoreGroup":
        from .multi import StoreGroup

        return StoreGroup
    if name == "DefaultSessionStore":
        from .store import DefaultSessionStore

        return DefaultSessionStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
