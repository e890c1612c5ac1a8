"""The Python both index engines run around their SQL, over plain data: which sessions a
filter-only query shows (newest first, one per lineage), the placeholder hit of a session
folded into a shown one, and a query's unknown words replaced by close vocabulary words.
Each engine keeps its own SQL and hands the rows (or a lookup) to these."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping

from ..model import SessionHit
from ..notes import FUZZY, Note
from ..query import ParsedQuery, QueryError, Term
from .rank import Scored, SessionInfo, lineage_key
from .results import SearchResult


def newest_first(
    infos: Iterable[SessionInfo], latest: Mapping[int, tuple[float | None, int]], limit: int
) -> tuple[list[SessionInfo], list[SessionInfo]]:
    """``infos`` newest first by their latest matching message (``latest[key]`` is its time
    and the count of matching messages), and those of them in the first ``limit`` lineages."""
    order = sorted(
        infos,
        key=lambda i: (latest[i.key][0] is not None, latest[i.key][0] or 0.0, i.when or ""),
        reverse=True,
    )
    shown: set[str] = set()
    for info in order:
        if len(shown) >= max(limit, 1):
            break
        shown.add(lineage_key(info))
    return order, [info for info in order if lineage_key(info) in shown]


def light_hit(s: Scored, source: str, store: str) -> SessionHit:
    """The bare hit of a session that is not shown itself (a lineage folds it away)."""
    return SessionHit(
        session_id=s.info.session_id,
        when=s.info.when,
        score=s.score,
        anchor_index=s.anchor,
        source=source,
        store=store,
    )


def hits_or_raise(result: SearchResult) -> list[SessionHit]:
    """The hits of ``result``; :class:`QueryError` when its query was bad."""
    if result.error is not None:
        raise QueryError(result.error)
    return result.hits


def corrected(
    pq: ParsedQuery, known: Callable[[str], bool], correct: Callable[[str], str | None]
) -> tuple[ParsedQuery, Note] | None:
    """``pq`` with each word the index does not know (``known``) replaced by its correction
    (``correct``), and the note saying so; None when nothing changed. The last token of a
    prefix term is kept as typed."""
    changed: list[str] = []
    terms: list[Term] = []
    for term in pq.terms:
        tokens: list[str] = []
        for i, tok in enumerate(term.tokens):
            if (term.prefix and i == len(term.tokens) - 1) or known(tok):
                tokens.append(tok)
                continue
            fix = correct(tok)
            tokens.append(tok if fix is None else fix)
            if fix is not None:
                changed.append(f"{tok} → {fix}")
        terms.append(Term(tuple(tokens), term.raw, term.quoted, term.prefix))
    if not changed:
        return None
    fixed = dataclasses.replace(pq, terms=terms, warnings=[])
    return fixed, Note(FUZZY, "no exact match; showing close spellings: " + ", ".join(changed))
