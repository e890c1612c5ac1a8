"""What a reconcile or a search reports."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .. import recall
from ..model import (
    JSONDict,
    SessionHit,
)
from ..notes import INDEXING, Note, code_of

WHEN_READY = "full results when the index is ready"


@dataclass
class ReconcileReport:
    """What one reconcile did."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    messages: int = 0
    elapsed: float = 0.0
    cancelled: bool = False
    # "full": every file stat'ed and compared; "changes": only the files a DirWatch named;
    # "unchanged": every file stat'ed, and the scan is the one the last full pass indexed.
    scope: str = "full"

    def as_dict(self) -> JSONDict:
        return {
            "scope": self.scope,
            "added": self.added,
            "updated": self.updated,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "skipped": [{"file": f, "reason": r} for f, r in self.skipped],
            "messages": self.messages,
            "elapsed": round(self.elapsed, 4),
            "cancelled": self.cancelled,
        }


class SearchCancelled(Exception):
    """The caller cancelled a search while it ran (its SQLite statement was interrupted)."""


#: A caller's "has this search been cancelled?": checked between the steps of a search, and
#: by SQLite every few thousand instructions of a running statement, which it then stops.
Cancelled = Callable[[], bool]


@dataclass
class SearchResult:
    """A search with everything the UI shows around the hits."""

    hits: list[SessionHit] = field(default_factory=list)
    matched_sessions: int = 0
    matched_exact: bool = True  # False: matched_sessions is a lower bound ("at least")
    elapsed_ms: float = 0.0
    mode: str = "index"  # "index" | "index+scan" | "like" | "scan"; "+hybrid": fused by meaning
    fuzzy: bool = False
    progress: tuple[int, int] = (0, 0)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    query: str = ""
    ranking: str = "relevance"
    cancelled: bool = False  # the caller cancelled it: no hits, nothing else to say
    # While an index builds: (sessions searched, sessions in all), see :meth:`partly_searched`;
    # None: every session was searched.
    searched: tuple[int, int] | None = None

    def partly_searched(self, parts: Iterable[tuple[int, int]]) -> None:
        """Sum the (searched, sessions) of the stores searched; when some were left out (the
        files a build has not indexed yet, beyond the newest ones it reads), keep the sums
        and say so in one warning."""
        done = total = 0
        for one_done, one_total in parts:
            done += one_done
            total += one_total
        if done >= total:
            return
        self.searched = (done, total)
        note = Note(INDEXING, f"searched {done:,} of {total:,} sessions; {WHEN_READY}")
        self.warnings = [w for w in self.warnings if code_of(w) != INDEXING] + [note]

    def as_dict(self) -> JSONDict:
        return {
            "query": self.query,
            "ranking": self.ranking,
            "mode": self.mode,
            "fuzzy": self.fuzzy,
            "matched_sessions": self.matched_sessions,
            "matched_exact": self.matched_exact,
            "elapsed_ms": round(self.elapsed_ms, 3),
            "progress": list(self.progress),
            "warnings": list(self.warnings),
            "searched": None if self.searched is None else list(self.searched),
            "error": self.error,
            "results": [h.to_json() for h in self.hits],
        }


@dataclass
class Relevance:
    """One store's relevance candidates and how they were found (what a group merges)."""

    candidates: list[recall.Candidate] = field(default_factory=list)
    matched: int = 0  # sessions matched
    exact: bool = True  # False: ``matched`` is a lower bound (too many postings to count)
    fuzzy: bool = False
    warnings: list[str] = field(default_factory=list)
    mode: str = "index"
    # While a reconcile runs: (sessions searched, sessions of the store); the files it has
    # not indexed yet beyond the newest ones are not searched. None: every session was.
    searched: tuple[int, int] | None = None
