"""Several stores read as one (project store + global store, ``--store`` repeated, Pi).

Session ids are de-duplicated: the first store that holds an id wins, in the order given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from . import recall
from .model import JSONDict, SessionData, SessionHit, SessionSummary


class RecallStore(Protocol):
    """What a store offers to recall (every store implements it)."""

    @property
    def label(self) -> str: ...

    def search_candidates(self, query: str, *, window: int = 5) -> list[recall.Candidate]: ...

    def window(
        self, session_id: str, around_message_id: Any = None, *, window: int = 5
    ) -> list[JSONDict]: ...

    def summaries(self) -> list[SessionSummary]: ...

    def session_exists(self, session_id: str) -> bool: ...

    def get_session(self, session_id: str) -> SessionData: ...


class StoreGroup:
    """A read-only union of stores with the recall API of one store."""

    def __init__(self, stores: Sequence[RecallStore]) -> None:
        self.stores = list(stores)

    @property
    def label(self) -> str:
        return ", ".join(s.label for s in self.stores)

    def search_candidates(self, query: str, *, window: int = 5) -> list[recall.Candidate]:
        seen: set[str] = set()
        out: list[recall.Candidate] = []
        for store in self.stores:
            for cand in store.search_candidates(query, window=window):
                if cand.hit.session_id in seen:
                    continue
                seen.add(cand.hit.session_id)
                out.append(cand)
        return out

    def search(self, query: str, *, limit: int = 5, window: int = 5) -> list[SessionHit]:
        if limit <= 0 or not (query or "").strip():
            return []
        return recall.rank(self.search_candidates(query, window=window), limit)

    def store_of(self, session_id: str) -> RecallStore | None:
        for store in self.stores:
            if store.session_exists(session_id):
                return store
        return None

    def session_exists(self, session_id: str) -> bool:
        return self.store_of(session_id) is not None

    def window(
        self, session_id: str, around_message_id: Any = None, *, window: int = 5
    ) -> list[JSONDict]:
        store = self.store_of(session_id)
        return [] if store is None else store.window(session_id, around_message_id, window=window)

    def get_session(self, session_id: str) -> SessionData:
        store = self.store_of(session_id)
        return (
            SessionData(session_id=session_id) if store is None else store.get_session(session_id)
        )

    def summaries(self) -> list[SessionSummary]:
        seen: set[str] = set()
        out: list[SessionSummary] = []
        for store in self.stores:
            for summary in store.summaries():
                if summary.session_id in seen:
                    continue
                seen.add(summary.session_id)
                out.append(summary)
        return out

    def recent(self, *, limit: int = 10) -> list[SessionSummary]:
        return recall.sort_recent(self.summaries(), limit)
