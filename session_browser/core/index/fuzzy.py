"""Typo correction: unknown query words replaced by the most common close vocabulary word."""

from __future__ import annotations

import sqlite3

from ..query import (
    ParsedQuery,
    Term,
)
from .pick import corrected
from .plan import (
    IndexPlan,
)


def levenshtein(a: str, b: str, limit: int) -> int:
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        low = i
        for j, cb in enumerate(b, 1):
            val = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            cur.append(val)
            low = min(low, val)
        if low > limit:
            return limit + 1
        prev = cur
    return prev[-1]


def edits1(word: str) -> set[str]:
    letters = set(word) | set("abcdefghijklmnopqrstuvwxyz")
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    out = {a + b[1:] for a, b in splits if b}
    out |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    out |= {a + c + b[1:] for a, b in splits if b for c in letters}
    out |= {a + c + b for a, b in splits for c in letters}
    out.discard(word)
    return out


# --------------------------------------------------------------------------- the store


class IndexFuzzy(IndexPlan):
    """The query with its unknown words corrected from the index's vocabulary."""

    def _fuzzy_query(
        self, db: sqlite3.Connection, pq: ParsedQuery
    ) -> tuple[ParsedQuery, str] | None:
        """The query with unknown words replaced by the most common close vocabulary word."""
        return corrected(
            pq, lambda tok: self._df(db, Term((tok,), tok)) > 0, lambda tok: self._correct(db, tok)
        )

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
