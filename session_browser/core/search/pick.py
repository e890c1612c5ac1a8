"""The Python both index engines run around their SQL, over plain data: which sessions a
filter-only query shows (newest first, one per lineage), the hit of a shown session built from
its session dict, the placeholder hit of a session folded into a shown one, a listed session
from its row, and a query's unknown words replaced by close vocabulary words. Each engine
keeps its own SQL and hands the rows (or a lookup) to these."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .. import recall
from ..model import JSONDict, SessionHit, SessionSummary, content_text
from ..notes import FUZZY, Note
from ..query import ParsedQuery, QueryError, Term
from .hidden import snippet_source
from .rank import Scored, SessionInfo, explain, lineage_key, recency, recent_scored
from .results import SearchResult

#: What a listed session's row holds, in this order (the columns :func:`summary_row` reads).
SUMMARY_COLUMNS = (
    "session_id, title, when_, message_count, archived_count, created, size, tagged, "
    "rate_auto, lineage, project, agent"
)


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


def recent_first(
    infos: Iterable[SessionInfo],
    latest: Mapping[int, tuple[float | None, int]],
    limit: int,
    anchor: Callable[[SessionInfo], Sequence[Any] | None],
) -> tuple[list[SessionInfo], list[Scored]]:
    """A filter-only query: ``infos`` newest first (see :func:`newest_first`), and those
    shown scored by recency (:func:`~.rank.recency` of their latest matching message) and
    anchored at that message (``anchor(info)``: its (index, text), None when it is gone)."""
    order, shown = newest_first(infos, latest, limit)
    now = time.time()
    out: list[Scored] = []
    for info in shown:
        found = anchor(info)
        if found is None:
            continue
        t, n = latest[info.key]
        out.append(recent_scored(info, recency(t, now), int(found[0]), str(found[1]), n))
    return order, out


def session_hit(
    s: Scored,
    pq: ParsedQuery,
    data: JSONDict,
    messages: list[JSONDict],
    window: int,
    source: str,
    store: str,
) -> SessionHit | None:
    """The hit of scored session ``s`` with its context, from its session dict ``data``
    and that dict's projected ``messages`` (None when it has none)."""
    if not messages:
        return None
    anchor = max(0, min(s.anchor, len(messages) - 1))
    text = snippet_source(pq, content_text(messages[anchor].get("content")), s.anchor_text)
    hit = recall.build_hit(
        data,
        messages,
        anchor=anchor,
        score=s.score,
        snippet=recall.make_snippet(text, pq.words, pq.all_tokens),
        window=window,
        automated=s.info.tagged or s.info.machine,
        source=source,
        store=store,
        explain=explain(s, pq),
    )
    hit.project = recall.project_of(data)
    return hit


def peer_or(peer: str | None, title: str | None, source: str) -> str:
    """The library's ``title`` of an indexed session: praisonaiagents' title of a PraisonAI
    session (``peer``, stored beside ours), else ours (``title``)."""
    return (peer if source == "praisonai" and peer is not None else title) or ""


def summary_row(
    row: Sequence[Any], source: str, store: str, peer: str | None = None
) -> SessionSummary:
    """A listed session from its row (see :data:`SUMMARY_COLUMNS`); ``peer`` is its
    praisonaiagents title (see :func:`peer_or`), when the row's index stores one."""
    (sid_, title, when, mc, ac, created, size, tagged, rate, lineage, project, agent) = row
    return SessionSummary(
        session_id=sid_,
        title=peer_or(peer, title, source),
        display_title=title or "",
        when=when,
        message_count=mc or 0,
        archived_count=ac or 0,
        created_at=created,
        size=size or 0,
        source=source,
        store=store,
        automated=bool(tagged or rate),
        lineage=lineage,
        project=project,
        agent=agent,
    )


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
