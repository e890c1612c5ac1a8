"""The store core: plain Python, no UI imports.

Names mirror ``praisonaiagents.session`` so code ports over.
"""

from __future__ import annotations

from typing import Any

from .model import (
    CompactionCheckpoint,
    ImportReport,
    SessionData,
    SessionHit,
    SessionMessage,
    SessionSummary,
)
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
    # The index is imported on first use so plain JSON-store users do not pay for it.
    if name == "SqliteSessionStore":
        from .index import SqliteSessionStore

        return SqliteSessionStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
