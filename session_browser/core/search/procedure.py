"""The relevance procedure, once, over any :class:`~.engine.Engine`.

1. Nothing searchable (only stopwords or punctuation): no hits, never the newest sessions.
2. Score: a filter-only query lists the newest sessions passing its filters; else the
   engine's bounded candidate rows (and with ``in:tools`` its hidden parts) are scored
   (:mod:`.rank`), the best refined against the sessions' other messages (excluded words,
   coverage), and the hits counted over everything stored when the engine counts them.
   When no message holds every word of a query of plain words (a question in other words
   than the session's), sessions are ranked by session recall instead (:mod:`.lexical`:
   weighted coverage of its content words over whole sessions), each anchored at its best
   matching message, on an engine that declares it (:attr:`~.engine.Engine.session_recall`).
   Files the engine has not indexed yet are read and scored too.
3. Typo pass: when nothing matched, unknown words are corrected from the engine's
   vocabulary and the query scored again.
4. Order (demotion, rounding, newest first on ties) and fold lineage: a session whose
   lineage (else its own file) is shown already comes as a light hit of that fold key.
5. Build hits: full hits, with their context, only for the ``limit`` sessions shown. A
   session whose hit cannot be built any more (its file gone or emptied, or a push replaced
   it, since it was scored) is left out and the next one takes its place, on every engine:
   a hit that opens nothing is worse than one more session; a hit whose content fails to
   turn into context is kept, without it.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence

from .. import recall
from ..model import SessionHit
from ..query import NOTHING_SEARCHABLE, ParsedQuery
from . import hybrid, lexical
from .candidates import group_rows, score_rows, scorer_for
from .engine import Engine, Found, Scoring
from .pick import corrected, light_hit
from .rank import (
    COVERAGE_CHECK,
    CorpusStats,
    Scored,
    Scorer,
    lineage_key,
    order,
    refine,
)
from .results import Cancelled, Relevance, SearchCancelled

log = logging.getLogger("session_browser.search")

#: Session recall ranks this many sessions beyond those shown (continuations fold into them).
RECALL_MORE = 5


def relevance(
    engine: Engine,
    pq: ParsedQuery,
    limit: int,
    window: int,
    corpus: CorpusStats | None = None,
    cancelled: Cancelled | None = None,
) -> Relevance:
    """The relevance candidates of ``pq`` from ``engine`` (:class:`SearchCancelled` when
    ``cancelled()`` turns true meanwhile); ``corpus``: statistics shared by a group of
    stores, so their scores rank together."""
    if pq.nothing_searchable:
        return Relevance(warnings=[NOTHING_SEARCHABLE])
    with engine.reading():
        found = find(engine, pq, limit, corpus)
    if cancelled is not None and cancelled():
        raise SearchCancelled
    cands = hits(engine, found.scored, found.pq, limit, window, cancelled)
    return Relevance(
        cands, found.matched, found.exact, found.fuzzy, found.warnings, found.mode, found.searched
    )


def score(
    engine: Engine, pq: ParsedQuery, corpus: CorpusStats | None = None, limit: int = 5
) -> Scoring:
    """One scoring pass over what the engine has indexed (step 2); in hybrid mode, fused
    with the nearest sessions by meaning (:mod:`.hybrid`)."""
    if not pq.terms:
        recent, count = engine.recent(pq, limit)
        return Scoring(recent, [], (count, True))
    lexically, exact = lexical_scoring(engine, pq, corpus, limit)
    if pq.tools:
        return lexically
    # (all_terms is said of two words or more: of one, any session found holds it)
    whole = exact and any(s.all_terms or len(pq.terms) == 1 for s in lexically.scored)
    near = engine.neighbours(pq, hybrid.neighbours_wanted(exact, whole, limit))
    if near is None:  # lexical mode
        return lexically
    if pq.excluded and near:
        gone = engine.excluded_sessions(pq)
        near = [n for n in near if n[1][0] not in gone]
    fused = hybrid.fuse(lexically.scored, near, exact)
    counted = lexically.counted
    if counted is not None:  # the lexical hits, and those found by meaning only
        more = sum(1 for s in fused if s.lexical_rank is None)
        counted = (counted[0] + more, counted[1])
    return Scoring(fused, lexically.warnings, counted, hybrid=True)


def lexical_scoring(
    engine: Engine, pq: ParsedQuery, corpus: CorpusStats | None, limit: int
) -> tuple[Scoring, bool]:
    """The lexical scoring pass of a query with words, and whether some message holds every
    one of them (session recall was not needed)."""
    warnings: list[str] = []
    dfs = engine.document_frequencies(pq.terms)
    scorer = scorer_for(pq, dfs, corpus, engine.corpus)
    if (
        engine.session_recall
        and lexical.eligible(pq)
        and (min(dfs) <= 0 or not engine.one_message_holds(pq))
    ):
        # the same sessions match as on every other path (a message holds one of the
        # query's rarer words as written): recall orders them, and the count is the rule's.
        # In hybrid mode such a question is asked by meaning too: embedded meanwhile.
        engine.expect_neighbours(pq, hybrid.neighbours_wanted(False, False, limit))
        return Scoring(
            recalled(engine, pq, dfs, corpus, limit, scorer.rare),
            [],
            engine.count_matches(pq, dfs, scorer.rare),
        ), False
    rows = engine.candidate_rows(pq, dfs, limit, warnings, scorer.rare)
    if pq.tools:  # in:tools: the hidden parts' matches too, at their turns
        rows = [*rows, *engine.hidden_rows(pq, limit)]
    scored = score_rows(rows, scorer)
    # refine looks only at the best COVERAGE_CHECK sessions; counted before it drops any
    unrefined = len(scored) > COVERAGE_CHECK
    if (pq.excluded or len(pq.terms) > 1) and scored:
        scored = refine(scorer, pq, scored, limit, engine.holds)
    if pq.excluded and unrefined:
        # the others were not looked at: no session holding an excluded word is a hit
        gone = engine.excluded_sessions(pq)
        scored = [s for s in scored if s.info.key not in gone]
    return Scoring(scored, warnings, engine.count_matches(pq, dfs, scorer.rare)), True


def recalled(
    engine: Engine,
    pq: ParsedQuery,
    dfs: Sequence[int],
    corpus: CorpusStats | None,
    limit: int,
    rare: set[int],
) -> list[Scored]:
    """Session recall (:mod:`.lexical`): the best sessions by weighted coverage of ``pq``'s
    content words, scored by it, each anchored at its best message holding one of them as
    written (scored as a message is), else at its first message. Recall draws its
    candidates from the words few sessions hold; when those give fewer sessions than asked
    while the one matching rule (``rare``: see :func:`~..query.match.rare_terms`) matches
    more, the rule's own candidates are ranked with them, so the hits shown agree with the
    count."""
    words = lexical.query_words(pq)
    found = engine.session_postings(words)
    tiers = lexical.marks_to_read(words, found)
    if tiers:  # how often the sessions hold them
        marks = engine.session_postings(tiers).postings
        found = dataclasses.replace(found, postings={**found.postings, **marks})
    want = limit + RECALL_MORE
    top = lexical.rank_sessions(words, found, want)
    which = lexical.content_terms(pq)
    cpq = dataclasses.replace(pq, terms=[pq.terms[i] for i in which])
    scorer = scorer_for(cpq, [dfs[i] for i in which], corpus, engine.corpus)
    out = _recall_scored(engine, scorer, cpq, top, {})
    if len(out) < want:
        rows = engine.candidate_rows(pq, dfs, limit, [], rare)
        more = {r[0] for r in rows} - {key for key, _value in top}
        if more:
            again = lexical.rank_sessions(words, found, want, include=more)
            seen = {s.info.key: s for s in out}
            out = _recall_scored(engine, scorer, cpq, again, seen)
    return out


def _recall_scored(
    engine: Engine,
    scorer: Scorer,
    cpq: ParsedQuery,
    top: Sequence[tuple[int, float]],
    seen: dict[int, Scored],
) -> list[Scored]:
    """The sessions of ``top`` (key, recall score) that match, scored (``seen``: those
    already scored, by key, not read again)."""
    groups = group_rows(engine.session_rows(cpq, [k for k, _value in top if k not in seen]))
    out: list[Scored] = []
    for key, value in top:
        s = seen.get(key)
        if s is None:
            group = groups.get(key)
            if group is None:  # (gone since, or no message holds a rarer word as written
                continue  # (a stem, a common word only): not a match by the one rule)
            s = scorer.session(*group)
            if s is None:
                continue
        s.score = s.recall = value
        out.append(s)
    return out


def find(engine: Engine, pq: ParsedQuery, limit: int, corpus: CorpusStats | None) -> Found:
    """Steps 2 and 3, inside the engine's :meth:`~.engine.Engine.reading` view: the scored
    sessions, the files not indexed yet, the typo pass, and how much that searched."""
    backlog = engine.backlog()
    pending = list(backlog.pending)
    first = score(engine, pq, corpus, limit)
    scored, counted, fused = first.scored, first.counted, first.hybrid
    warnings = [*engine.notes(pq), *first.warnings]
    # Files not indexed yet are read before any typo correction: a word that only they
    # hold is no typo.
    scanned = engine.score_files(pq, pending, corpus) if pending else []
    fuzzy = False
    if not scored and not scanned and pq.terms and engine.typo_pass:
        fixed = corrected(pq, engine.known, engine.correct)
        if fixed is not None:
            fpq, note = fixed
            again = score(engine, fpq, corpus, limit)
            if again.scored:
                scored, counted, fused = again.scored, again.counted, again.hybrid
                fuzzy = True
                warnings.append(note)
                warnings.extend(again.warnings)
                pq = fpq
                if pending:
                    scanned = engine.score_files(pq, pending, corpus)
    if backlog.stale:
        scored = [s for s in scored if s.info.key not in backlog.stale]
    if counted is None:
        matched = len(scored)
    elif counted[1]:
        matched = max(counted[0], len(scored))
    else:  # a lower bound from the data alone (never from the candidates read for this
        # page, which grow with it), and never below the hits a page shows
        matched = max(counted[0], min(len(scored), limit))
    mode = engine.mode + ("+hybrid" if fused else "")
    searched: tuple[int, int] | None = None
    if pending or backlog.unscanned:
        mode += "+scan"
        known = {s.info.session_id for s in scored}
        scanned = [s for s in scanned if s.info.session_id not in known]
        matched += len(scanned)
        scored.extend(scanned)
        total = engine.listed_count() + max(0, backlog.waiting_new)
        searched = (max(0, total - backlog.unscanned), total)
    exact = counted is not None and counted[1] and not backlog.unscanned
    return Found(scored, pq, matched, exact, fuzzy, warnings, mode, searched)


def fold_key(engine: Engine, s: Scored) -> str:
    """The key a group of stores folds ``s`` by: its lineage (global), else its file as
    this store names it (a file, with the turns its rewrites dropped, is one store's own)."""
    return s.info.lineage if s.info.lineage is not None else engine.label + lineage_key(s.info)


def hits(
    engine: Engine,
    scored: list[Scored],
    pq: ParsedQuery,
    limit: int,
    window: int,
    cancelled: Cancelled | None = None,
) -> list[recall.Candidate]:
    """Steps 4 and 5: ``scored`` ordered, folded by lineage, and built into hits (full ones
    only for the ``limit`` shown; :class:`SearchCancelled` between two when ``cancelled()``
    turns true)."""
    ordered = order(scored, pq)
    rows = engine.rows_of(_likely_shown(ordered, limit))
    out: list[recall.Candidate] = []
    shown: set[str] = set()
    for s in ordered:
        key = lineage_key(s.info)
        if key in shown:
            light = light_hit(s, engine.source_kind, engine.label)
            out.append(recall.Candidate(light, fold_key(engine, s)))
            continue
        if len(shown) >= limit:
            continue
        if cancelled is not None and cancelled():
            raise SearchCancelled
        hit = _full_hit(engine, s, pq, window, rows.get(s.info.key))
        if hit is None:
            continue
        shown.add(key)
        out.append(recall.Candidate(hit, fold_key(engine, s)))
    return out


def _likely_shown(ordered: Sequence[Scored], limit: int) -> list[int]:
    """The keys of the sessions most likely shown: the first ``limit`` lineages'."""
    keys: set[str] = set()
    out: list[int] = []
    for s in ordered:
        if len(keys) >= limit:
            break
        key = lineage_key(s.info)
        if key not in keys:
            keys.add(key)
            out.append(s.info.key)
    return out


def _full_hit(
    engine: Engine, s: Scored, pq: ParsedQuery, window: int, rows: object | None
) -> SessionHit | None:
    """The engine's hit of ``s``; a hit without context when its content cannot be turned
    into one (never an error for the whole search)."""
    try:
        return engine.full_hit(s, pq, window, rows)
    except Exception as exc:
        log.warning("%s: hit without context: %s: %s", s.info.file, type(exc).__name__, exc)
        return light_hit(s, engine.source_kind, engine.label)
