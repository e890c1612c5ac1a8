"""Typo correction over the SQLite index: unknown query words replaced by the most common close
vocabulary word (``fts_vocab``)."""

from __future__ import annotations

import sqlite3

from ..search.fuzzy import edits1, levenshtein
from .plan import IndexPlan


class IndexFuzzy(IndexPlan):
    """The query with its unknown words corrected from the index's vocabulary."""

    def _correct(self, db: sqlite3.Connection, tok: str) -> str | None:
        if len(tok) < 3 or len(tok) > 40:
            return None
        best: tuple[int, str] | None = None
        candidates = sorted(edits1(tok))
        for start in range(0, len(candidates), 500):
            chunk = candidates[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for term, doc in db.execute(
                f"SELECT term, doc FROM fts_vocab WHERE term IN ({marks})", chunk
            ):
                if best is None or doc > best[0]:
                    best = (doc, term)
        if best is not None:
            return best[1]
        if len(tok) < 6:
            return None
        # Two edits: words sharing the first two letters, by edit distance then frequency.
        ranked: tuple[int, int, str] | None = None
        for term, doc in db.execute(
            "SELECT term, doc FROM fts_vocab WHERE term >= ? AND term < ? LIMIT 20000",
            (tok[:2], tok[:2] + "\U0010ffff"),
        ):
            d = levenshtein(tok, term, 2)
            if d <= 2 and (ranked is None or (d, -doc) < (ranked[0], -ranked[1])):
                ranked = (d, doc, term)
        return None if ranked is None else ranked[2]
