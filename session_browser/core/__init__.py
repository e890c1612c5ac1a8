"""The store core: plain Python, no UI imports.

Names mirror ``praisonaiagents.session`` so code ports over.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import on_first_use
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


# The stores are imported on first use: plain JSON-store users do not pay for the index, and
# a process that only parses (the worker of a first build) for none of them.
__getattr__ = on_first_use(
    __name__,
    {"SqliteSessionStore": ".index", "StoreGroup": ".multi", "DefaultSessionStore": ".store"},
)
