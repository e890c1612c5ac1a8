"""Hits with their context: the scored sessions ordered, folded by lineage, and read from their
files (a small cache keyed by file identity)."""

from __future__ import annotations

import itertools
import logging
import os

from .. import recall
from ..model import (
    JSONDict,
    SessionHit,
    content_text,
    copy_json,
)
from ..query import (
    ParsedQuery,
)
from . import hidden
from .fuzzy import IndexFuzzy
from .rank import (
    Scored,
    explain,
    order,
)
from .results import Cancelled, SearchCancelled

log = logging.getLogger("session_browser.index")

HIT_CACHE_FILES = 64  # parsed session files kept for building hits
HIT_CACHE_BYTES = 8 << 20  # ... and at most this many bytes of their JSON


class IndexHits(IndexFuzzy):
    """Turns scored sessions into hits, reading only the sessions that will be shown."""

    def _to_candidates(
        self,
        scored: list[Scored],
        pq: ParsedQuery,
        limit: int,
        window: int,
        cancelled: Cancelled | None = None,
    ) -> list[recall.Candidate]:
        """Order (:func:`~.rank.order`), fold lineage, and build full hits only for what
        will be shown (each read from its file: :class:`SearchCancelled` between two reads
        when ``cancelled()`` turns true)."""
        out: list[recall.Candidate] = []
        shown: set[str] = set()
        kept = 0
        for s in order(scored, pq):
            lineage = s.info.lineage
            key = lineage if lineage is not None else "\x00" + s.info.file
            if key in shown or kept >= limit:
                if key in shown:
                    out.append(recall.Candidate(self._light_hit(s), lineage))
                continue
            if cancelled is not None and cancelled():
                raise SearchCancelled
            hit = self._full_hit(s, pq, window)
            if hit is None:
                continue
            shown.add(key)
            kept += 1
            out.append(recall.Candidate(hit, lineage))
        return out

    def _light_hit(self, s: Scored) -> SessionHit:
        return SessionHit(
            session_id=s.info.session_id,
            when=s.info.when,
            score=s.score,
            anchor_index=s.anchor,
            source=self.source_kind,
            store=self.label,
        )

    def _projected(self, name: str) -> tuple[JSONDict, list[JSONDict]] | None:
        """Session file ``name`` read and projected, from a small cache checked against the
        file's identity (a person refining a query sees the same sessions again)."""
        try:
            st = os.stat(self.source.root / name)
        except (OSError, ValueError):
            return self._kept_projected(name)  # gone: the vault's copy, when it keeps one
        ident = (st.st_size, st.st_mtime_ns, st.st_ino)
        with self._hit_lock:
            cached = self._hit_cache.get(name)
            if cached is not None and cached[0] == ident:
                self._hit_cache.move_to_end(name)
                return cached[1], cached[2]
        data = self._load_file(name)
        if data is None:
            return None
        messages = recall.project(data)
        with self._hit_lock:
            old = self._hit_cache.pop(name, None)
            if old is not None:
                self._hit_bytes -= old[0][0]
            if st.st_size <= HIT_CACHE_BYTES // 8:
                self._hit_cache[name] = (ident, data, messages)
                self._hit_bytes += st.st_size
            while self._hit_cache and (
                len(self._hit_cache) > HIT_CACHE_FILES or self._hit_bytes > HIT_CACHE_BYTES
            ):
                _name, (gone, _d, _m) = self._hit_cache.popitem(last=False)
                self._hit_bytes -= gone[0]
        return data, messages

    def _full_hit(self, s: Scored, pq: ParsedQuery, window: int) -> SessionHit | None:
        """The hit with its context from the file; a hit without context when the file's
        content cannot be turned into one (never an error for the whole search)."""
        try:
            return self._full_hit_of(s, pq, window)
        except Exception as exc:
            log.warning("%s: hit without context: %s: %s", s.info.file, type(exc).__name__, exc)
            return self._light_hit(s)

    def _full_hit_of(self, s: Scored, pq: ParsedQuery, window: int) -> SessionHit | None:
        loaded = self._projected(s.info.file)
        if loaded is None:
            return None
        data, messages = loaded
        if not messages:
            return None
        anchor = max(0, min(s.anchor, len(messages) - 1))
        text = content_text(messages[anchor].get("content"))
        text = hidden.snippet_source(pq, text, s.anchor_text)
        hit = recall.build_hit(
            data,
            messages,
            anchor=anchor,
            score=s.score,
            snippet=recall.make_snippet(text, pq.words, pq.all_tokens),
            window=window,
            automated=s.info.tagged or s.info.machine,
            source=self.source_kind,
            store=self.label,
            explain=explain(s, pq),
        )
        hit.project = recall.project_of(data)
        hit.kept = self._kept_note(s.info.file)
        # The message views share their content with the cache: give the hit its own
        # copy of any content that is not a plain (immutable) string.
        for view in itertools.chain(hit.messages, *hit.bookends.values()):
            if not isinstance(view.get("content"), str):
                view["content"] = copy_json(view.get("content"))
        return hit
