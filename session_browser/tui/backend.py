"""The app's view of the stores: every call here runs in a thread worker, never on the UI thread.

The app holds no session logic: this adapter only picks the richest API the stores offer
(the SQLite index's ``search_ex`` / ``browse`` / ``count`` when present, the plain
:class:`~session_browser.core.multi.StoreGroup` methods otherwise) and returns plain data.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from session_browser.core import recall
from session_browser.core.model import JSONDict, SessionHit, SessionSummary
from session_browser.core.multi import StoreGroup
from session_browser.core.stores import open_stores

SORTS = ("updated", "created", "size")
SEARCH_LIMIT = 50
SEARCH_WINDOW = 2


@dataclass
class SearchOutcome:
    """What one search returned, in the shape the search pane shows."""

    query: str
    hits: list[SessionHit] = field(default_factory=list)
    matched: int = 0
    elapsed_ms: float = 0.0
    mode: str = "scan"
    fuzzy: bool = False
    warnings: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass
class IndexState:
    """Whether the index is building (with progress), ready, or absent (scanning files)."""

    mode: str = "scan"  # "scan" | "building" | "ready"
    progress: float | None = None

    def describe(self) -> str:
        if self.mode == "building":
            pct = "" if self.progress is None else f" {self.progress * 100:.0f}%"
            return f"index building{pct}"
        if self.mode == "ready":
            return "index ready"
        return "scanning files (no index)"


def _get_float(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, tuple) and len(value) == 2:
        done, total = value
        if isinstance(done, (int, float)) and isinstance(total, (int, float)) and total > 0:
            return float(done) / float(total)
        return None
    for attr in ("fraction", "ratio"):
        inner = getattr(value, attr, None)
        if isinstance(inner, (int, float)):
            return float(inner)
    done = getattr(value, "done", None)
    total = getattr(value, "total", None)
    if isinstance(done, (int, float)) and isinstance(total, (int, float)) and total > 0:
        return float(done) / float(total)
    return None


class Backend:
    """Stores opened for the app, and the few calls it makes on them."""

    def __init__(self, dirs: Sequence[str | Path] | None, *, indexed: bool = True) -> None:
        self.dirs = [str(d) for d in dirs] if dirs else None
        self.group: StoreGroup = self._open(indexed)
        self._summaries: list[SessionSummary] | None = None

    def _open(self, indexed: bool) -> StoreGroup:
        if indexed:
            try:
                return open_stores(self.dirs, indexed=True)  # type: ignore[call-arg,unused-ignore]
            except TypeError:
                pass
        return open_stores(self.dirs)

    # ------------------------------------------------------------------ description

    @property
    def stores(self) -> list[Any]:
        return list(self.group.stores)

    def store_paths(self) -> list[str]:
        return [str(getattr(s, "label", s)) for s in self.stores]

    @property
    def indexed(self) -> bool:
        return any(hasattr(s, "search_ex") for s in self.stores)

    def index_state(self) -> IndexState:
        if not self.indexed:
            return IndexState("scan")
        building = False
        progress: list[float] = []
        for store in self.stores:
            if getattr(store, "indexing", False):
                building = True
                value = _get_float(getattr(store, "progress", None))
                if value is not None:
                    progress.append(value)
        if building:
            return IndexState("building", sum(progress) / len(progress) if progress else None)
        return IndexState("ready")

    def start_index(self) -> None:
        """Start (or resume) bringing every index up to date, in the background."""
        for store in self.stores:
            start = getattr(store, "start_reconcile", None)
            if callable(start):
                start()

    # ------------------------------------------------------------------ search

    def search(
        self,
        query: str,
        *,
        limit: int = SEARCH_LIMIT,
        window: int = SEARCH_WINDOW,
        is_cancelled: Callable[[], bool] = lambda: False,
    ) -> SearchOutcome:
        started = time.perf_counter()
        if not query.strip():
            return SearchOutcome(query)
        if self.indexed:
            out = self._search_indexed(query, limit, window, is_cancelled)
        else:
            candidates = self.group.search_candidates(query, window=window)
            hits = recall.rank(candidates, limit)
            out = SearchOutcome(query, hits=hits, matched=len(candidates), mode="scan")
        if not out.elapsed_ms:
            out.elapsed_ms = (time.perf_counter() - started) * 1000.0
        return out

    def _search_indexed(
        self, query: str, limit: int, window: int, is_cancelled: Callable[[], bool]
    ) -> SearchOutcome:
        group_search = getattr(self.group, "search_ex", None)
        results = []
        if callable(group_search):
            results.append(group_search(query, limit=limit, window=window))
        else:
            for store in self.stores:
                if is_cancelled():
                    break
                fn = getattr(store, "search_ex", None)
                if callable(fn):
                    results.append(fn(query, limit=limit, window=window))
                else:
                    plain = store.search(query, limit=limit, window=window)
                    results.append(SearchOutcome(query, hits=plain, matched=len(plain)))
        out = SearchOutcome(query, mode="index")
        seen: set[str] = set()
        hits: list[SessionHit] = []
        for res in results:
            for hit in getattr(res, "hits", []) or []:
                if hit.session_id not in seen:
                    seen.add(hit.session_id)
                    hits.append(hit)
            out.matched += int(getattr(res, "matched_sessions", getattr(res, "matched", 0)) or 0)
            out.elapsed_ms = max(out.elapsed_ms, float(getattr(res, "elapsed_ms", 0.0) or 0.0))
            out.fuzzy = out.fuzzy or bool(getattr(res, "fuzzy", False))
            out.mode = str(getattr(res, "mode", out.mode) or out.mode)
            out.warnings.extend(str(w) for w in getattr(res, "warnings", []) or [])
            err = getattr(res, "error", None)
            if err:
                out.error = str(err)
        if len(results) > 1:
            hits.sort(key=lambda h: (h.score, h.when or ""), reverse=True)
        out.hits = hits[:limit]
        return out

    # ------------------------------------------------------------------ browse

    def _all_summaries(self) -> list[SessionSummary]:
        if self._summaries is None:
            self._summaries = self.group.summaries()
        return self._summaries

    def _browse_fallback(self, sort: str, text: str) -> list[SessionSummary]:
        rows = self._all_summaries()
        needle = text.strip().lower()
        if needle:
            rows = [s for s in rows if needle in s.title.lower() or needle in s.session_id.lower()]
        if sort == "created":
            return sorted(rows, key=lambda s: s.created_at or "", reverse=True)
        if sort == "size":
            return sorted(rows, key=lambda s: s.size, reverse=True)
        return sorted(rows, key=lambda s: s.when or "", reverse=True)

    def _browsable(self) -> list[Any]:
        return [s for s in self.stores if hasattr(s, "browse") and hasattr(s, "count")]

    def count(self, text: str = "") -> int:
        """How many sessions the recent list holds under filter ``text``."""
        fn = getattr(self.group, "count", None)
        if callable(fn):
            return int(fn(text=text))
        if len(self.stores) == 1 and self._browsable():
            return int(self.stores[0].count(text=text))
        return len(self._browse_fallback("updated", text))

    def browse(
        self, offset: int, limit: int, sort: str = "updated", text: str = ""
    ) -> list[SessionSummary]:
        """One page of the recent list, most recent (or biggest) first."""
        fn = getattr(self.group, "browse", None)
        if callable(fn):
            return list(fn(offset=offset, limit=limit, sort=sort, text=text))
        if len(self.stores) == 1 and self._browsable():
            return list(self.stores[0].browse(offset=offset, limit=limit, sort=sort, text=text))
        return self._browse_fallback(sort, text)[offset : offset + limit]

    def refresh(self) -> None:
        self._summaries = None

    # ------------------------------------------------------------------ one session

    def projection(self, session_id: str, store_label: str = "") -> list[JSONDict]:
        """The whole archived+active projection of ``session_id`` (raises KeyError if gone)."""
        store = None
        if store_label:
            store = next((s for s in self.stores if getattr(s, "label", "") == store_label), None)
        if store is None:
            store = self.group.store_of(session_id)
        if store is None:
            raise KeyError(session_id)
        fn = getattr(store, "projection", None)
        if callable(fn):
            return list(fn(session_id))
        return list(store.window(session_id, 0, window=10**9))

    # ------------------------------------------------------------------ attention

    def quarantine_count(self) -> int:
        """Files waiting for attention (corrupt or spill files), 0 when that is unknown."""
        try:
            module = importlib.import_module("session_browser.core.quarantine")
        except ImportError:
            return 0
        list_items = getattr(module, "list_items", None)
        if callable(list_items):  # the core API: one call over every JSON store
            json_stores = [s for s in self.stores if hasattr(s, "spill_dir")]
            try:
                return len(list_items(json_stores))
            except Exception:  # a listing problem must never take the app down
                return 0
        items = getattr(module, "list_items", None)
        if callable(items):
            try:
                return len(items(self.stores))
            except Exception:  # a listing problem must never take the app down
                return 0
        fn = getattr(module, "list_entries", None)
        if not callable(fn):
            return 0
        total = 0
        for store in self.stores:
            try:
                total += len(fn(store))
            except Exception:  # a listing problem must never take the app down
                try:
                    total += len(fn(Path(getattr(store, "session_dir", ""))))
                except Exception:
                    continue
        return total
