"""The ranking math, over plain data (no SQL): BM25 per message with a damped length norm, the
phrase and all-terms boosts, common words, coverage, recency, ordering and the explanation of a
score. Any engine that hands over candidate messages reuses it, so every engine ranks the same
way."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from .. import recall
from ..files import live_file
from ..model import JSONDict
from ..query import (
    ParsedQuery,
    Term,
    fold,
)
from ..query.match import COMMON_SHARE as COMMON_SHARE  # (the team index reads it here)
from ..query.match import is_common, rare_terms

BM25_K1 = 1.2
BM25_B = 0.4
PHRASE_BOOST = 1.5
ALL_TERMS_BOOST = 1.25
SCORE_TEXT_CHARS = 50_000  # characters of one message folded at a time by the scorer
SCORE_CUT_SEARCH = 2_000  # ... cut at the first whitespace this far past that (words stay whole)
COMMON_WEIGHT = 0.25  # their idf is multiplied by this when the query has rarer words
COVERAGE_CHECK = 25  # top sessions whose missing terms are looked up in their other messages


@dataclass
class CorpusStats:
    """Collection statistics shared by several indexes, so their scores are comparable.

    ``total``: messages with text; ``avg_chars``: their mean length; ``dfs``: messages
    holding each query term (keyed by :meth:`Term.fts`). A :class:`~.multi.StoreGroup`
    sums them over its stores and passes them to each store's relevance scoring, so a
    word scores the same in a small store as in a large one.
    """

    total: int = 0
    avg_chars: float = 1.0
    dfs: dict[str, int] = field(default_factory=dict)

    @classmethod
    def merge(cls, parts: Sequence[CorpusStats]) -> CorpusStats:
        total = sum(p.total for p in parts)
        chars = sum(p.total * p.avg_chars for p in parts)
        dfs: dict[str, int] = {}
        for p in parts:
            for key, df in p.dfs.items():
                dfs[key] = dfs.get(key, 0) + df
        return cls(total=total, avg_chars=(chars / total) if total else 1.0, dfs=dfs)


@dataclass
class Msg:
    """A candidate message, from the index or from a scanned file."""

    key: int  # session key: sid in the index, negative for scanned files
    idx: int
    role: str
    archived: bool
    ts: float | None
    text: str


@dataclass
class SessionInfo:
    key: int
    session_id: str
    file: str
    when: str | None
    tagged: bool
    machine: bool
    lineage: str | None
    row_lo: int = 0
    row_hi: int = -1
    chars: int | None = None  # characters of all its messages (None: not known)


def lineage_key(info: SessionInfo) -> str:
    """What folds sessions into one shown hit: the lineage, else the session's own file (the
    turns rewrites dropped from a file, each kept under a name of its own, fold into it)."""
    return info.lineage if info.lineage is not None else "\x00" + live_file(info.file)


@dataclass
class Scored:
    info: SessionInfo
    score: float
    anchor: int
    best: float
    matched: set[int]
    phrase: bool
    all_terms: bool
    bm25: float
    messages: int
    anchor_text: str
    common: tuple[str, ...] = ()  # the query's common words, when it has rarer ones too
    rest: float = 0.0  # the boosted scores of the other matching messages, summed
    coverage: float = 1.0  # the share of the query terms' weight the session holds
    recall: float | None = None  # its session recall score, when ranked by it (.lexical)
    # hybrid mode (.hybrid): its place in the lexical ranking and in the nearest sessions by
    # meaning (None: not in it), and its best window's cosine
    lexical_rank: int | None = None
    semantic_rank: int | None = None
    similarity: float | None = None
    lexical_score: float | None = None  # its lexical score, before fusion
    # fused with the lexical order standing (.hybrid): how many sessions it ranks
    lexical_hits: int | None = None


def cuts(text: str, size: int) -> list[tuple[int, int]]:
    """Where to cut ``text`` into pieces of about ``size`` characters, each cut at a
    whitespace when there is one soon after (so no word is split; only a phrase across a
    cut is not seen as one): (start, end) offsets."""
    n = len(text)
    out: list[tuple[int, int]] = []
    start = 0
    while start < n:
        end = start + size
        if end >= n:
            out.append((start, n))
            break
        cut = -1
        for k in range(end, min(n, end + SCORE_CUT_SEARCH)):
            if text[k].isspace():
                cut = k
                break
        end = cut if cut > 0 else end
        out.append((start, end))
        start = end
    return out


def pieces(text: str) -> Iterator[str]:
    """``text`` in pieces of about :data:`SCORE_TEXT_CHARS` (see :func:`cuts`)."""
    if len(text) <= SCORE_TEXT_CHARS:
        yield text
        return
    for start, end in cuts(text, SCORE_TEXT_CHARS):
        yield text[start:end]


def recency(ts: float | None, now: float) -> float:
    """The score of a filter-only hit: 1 / (1 + age in days) of its latest matching message
    (0 without any time), so newer ranks first, also across stores."""
    if ts is None:
        return 0.0
    return 1.0 / (1.0 + max(0.0, now - ts) / 86400.0)


def length_ratio(ratio: float) -> float:
    """A message's length relative to the average, damped above it (``1 + ln r``): one long
    message (a pasted log, a burst of chat lines joined) holding every query word must not
    lose to a short one holding a single word, as a linear length norm makes it."""
    return ratio if ratio <= 1.0 else 1.0 + math.log(ratio)


def others_bonus(best: float, rest: float) -> float:
    """What the other matching messages add to the best one's score (``rest``: their
    boosted scores summed): a tenth of them, at most half the best."""
    return min(0.5 * best, 0.1 * rest)


def coverage_factor(coverage: float) -> float:
    """How the share of the query's weight a session holds scales its score."""
    return 0.25 + 0.75 * coverage


class Scorer:
    """Per-message BM25 plus boosts, aggregated per session."""

    def __init__(self, pq: ParsedQuery, dfs: Sequence[int], total: int, avg_chars: float) -> None:
        self.pq = pq
        self.terms = pq.terms
        n = max(total, 1)
        # A prefix's count adds up its words' counts and can pass the number of messages:
        # clamped, its weight stays positive (a negative score reads as "excluded").
        self.idf = [math.log(1.0 + (n - min(df, n) + 0.5) / (min(df, n) + 0.5)) for df in dfs]
        self.idf_total = sum(self.idf) or 1.0
        # Common words (see :func:`is_common`): when the query mixes them with rarer words, a
        # session must hold one of the rarer ones; a query of common words only keeps all.
        self.common = [is_common(t, df, n) for t, df in zip(self.terms, dfs, strict=True)]
        self.rare: set[int] = rare_terms(self.terms, dfs, n)
        rare = self.rare
        if self.rare:  # ... and their words weigh less, in the score and the coverage
            self.idf = [w * (1.0 if i in rare else COMMON_WEIGHT) for i, w in enumerate(self.idf)]
            self.idf_total = sum(self.idf) or 1.0
        self.avg = max(avg_chars, 1.0)
        self.common_labels: tuple[str, ...] = (
            tuple(t.label for i, t in enumerate(self.terms) if self.common[i]) if self.rare else ()
        )
        words = pq.all_tokens
        self.phrase_term = (
            Term(tokens=words, raw=" ".join(words))
            if len(self.terms) > 1 and len(words) > 1
            else None
        )

    def message(self, text: str) -> tuple[float, set[int], bool]:
        """(score, matched term numbers, phrase) of one message; excluded -> -1.

        The whole message is read (a word deep in a long paste counts), folded a piece at
        a time (:func:`pieces`), so memory stays bounded whatever its length."""
        tfs = [0] * len(self.terms)
        phrase = False
        for piece in pieces(text):
            folded = fold(piece)
            for ex in self.pq.excluded:
                if ex.count_in(folded):
                    return -1.0, set(), False
            here = 0
            for i, term in enumerate(self.terms):
                tf = term.count_in(folded)
                if tf:
                    tfs[i] += tf
                    here += 1
            if self.phrase_term is not None and not phrase and here == len(self.terms):
                phrase = self.phrase_term.count_in(folded) > 0
        if not self.terms:
            return 1.0, set(), False
        norm = 1.0 - BM25_B + BM25_B * length_ratio(min(len(text), SCORE_TEXT_CHARS) / self.avg)
        score = 0.0
        matched: set[int] = set()
        for i, tf in enumerate(tfs):
            if tf:
                matched.add(i)
                score += self.idf[i] * (tf * (BM25_K1 + 1.0)) / (tf + BM25_K1 * norm)
        phrase = phrase and len(matched) == len(self.terms)
        return score, matched, phrase

    def session(self, info: SessionInfo, msgs: Iterable[Msg]) -> Scored | None:
        best = -1.0
        best_raw = 0.0
        anchor = -1
        anchor_text = ""
        rest = 0.0
        matched: set[int] = set()
        phrase_best = False
        all_best = False
        count = 0
        excluded = False
        for msg in msgs:
            raw, hit_terms, phrase = self.message(msg.text)
            if raw < 0:
                excluded = True
                break
            if self.terms and not hit_terms:
                continue
            count += 1
            matched |= hit_terms
            boosted = raw
            all_terms = len(self.terms) > 1 and len(hit_terms) == len(self.terms)
            if phrase:
                boosted *= PHRASE_BOOST
            if all_terms:
                boosted *= ALL_TERMS_BOOST
            if boosted > best or (boosted == best and msg.idx < anchor):
                if best > 0:
                    rest += best
                best, best_raw, anchor, anchor_text = boosted, raw, msg.idx, msg.text
                phrase_best, all_best = phrase, all_terms
            else:
                rest += boosted
        if excluded or anchor < 0:
            return None
        if self.rare and not matched & self.rare:
            return None  # only the query's common words: not a hit
        return self.finish(
            info, best, best_raw, rest, matched, anchor, anchor_text, phrase_best, all_best, count
        )

    def finish(
        self,
        info: SessionInfo,
        best: float,
        best_raw: float,
        rest: float,
        matched: set[int],
        anchor: int,
        anchor_text: str,
        phrase: bool,
        all_terms: bool,
        count: int,
    ) -> Scored:
        coverage = sum(self.idf[i] for i in matched) / self.idf_total if self.terms else 1.0
        score = (best + others_bonus(best, rest)) * coverage_factor(coverage)
        return Scored(
            info=info,
            score=score,
            anchor=anchor,
            best=best,
            matched=matched,
            phrase=phrase,
            all_terms=all_terms,
            bm25=best_raw,
            messages=count,
            anchor_text=anchor_text,
            common=self.common_labels,
            rest=rest,
            coverage=coverage,
        )


def recent_scored(info: SessionInfo, score: float, anchor: int, text: str, n: int) -> Scored:
    """A filter-only hit: scored by recency, anchored at its latest matching message."""
    return Scored(
        info=info,
        score=score,
        anchor=anchor,
        best=score,
        matched=set(),
        phrase=False,
        all_terms=False,
        bm25=0.0,
        messages=n,
        anchor_text=text,
    )


# A look-up of which query terms sessions hold: (terms, [(which, session), ...]) -> for each
# pair, the numbers of those its session holds (an engine answers them in few reads).
Holds = Callable[[Sequence[Term], Sequence[tuple[Sequence[int], SessionInfo]]], list[set[int]]]


def refine(
    scorer: Scorer,
    pq: ParsedQuery,
    scored: list[Scored],
    limit: int,
    holds: Holds,
) -> list[Scored]:
    """Look in the best sessions' other messages: excluded words drop the session, missing
    query terms raise its coverage. A session whose score could not reach the shown
    results even with every term covered is not looked at (nothing would change).
    ``holds(terms, asks)`` says, for each ``(which, info)`` asked, which of ``terms``
    (numbers in ``which``) some message of the session holds (the engine looks them up)."""

    def lookup(
        terms: Sequence[Term], asks: Sequence[tuple[Sequence[int], SessionInfo]]
    ) -> list[set[int]]:
        return holds(terms, asks) if asks else []

    scored.sort(key=lambda s: s.score, reverse=True)
    if pq.excluded:
        top = scored[:COVERAGE_CHECK]
        every_ex = range(len(pq.excluded))
        gone = lookup(pq.excluded, [(every_ex, s.info) for s in top])
        scored = [s for s, g in zip(top, gone, strict=True) if not g] + scored[COVERAGE_CHECK:]

    def factor(s: Scored) -> float:
        return recall.AUTOMATED_DEMOTION if s.info.tagged or s.info.machine else 1.0

    threshold = 0.0
    keys: set[str] = set()
    for s in sorted(scored, key=lambda s: s.score * factor(s), reverse=True):
        key = lineage_key(s.info)
        if key not in keys:
            keys.add(key)
            if len(keys) >= max(limit, 1):
                threshold = s.score * factor(s)
                break
    every = set(range(len(pq.terms)))
    asks: list[tuple[int, list[int]]] = []  # (place in ``scored``, its missing terms)
    for n, s in enumerate(scored[:COVERAGE_CHECK]):
        missing = [i for i in range(len(pq.terms)) if i not in s.matched]
        if not missing:
            continue
        best = scorer.finish(
            s.info,
            s.best,
            s.bm25,
            s.rest,
            every,
            s.anchor,
            s.anchor_text,
            s.phrase,
            s.all_terms,
            s.messages,
        )
        if best.score * factor(s) < threshold - 1e-6:
            continue  # even full coverage would leave it below the shown results
        asks.append((n, missing))
    held = dict(
        zip(
            (n for n, _ in asks),
            lookup(pq.terms, [(missing, scored[n].info) for n, missing in asks]),
            strict=True,
        )
    )
    out: list[Scored] = []
    for n, s in enumerate(scored):
        more = held.get(n)
        if more is None:
            out.append(s)
            continue
        found = set(s.matched) | more
        if found != s.matched:
            s2 = scorer.finish(
                s.info,
                s.best,
                s.bm25,
                s.rest,
                found,
                s.anchor,
                s.anchor_text,
                s.phrase,
                s.all_terms,
                s.messages,
            )
            s = s2
        out.append(s)
    return out


def order(scored: list[Scored], pq: ParsedQuery) -> list[Scored]:
    """``scored`` best first: automated sessions demoted and scores rounded to 4 digits
    (near-ties fall to the newest session); filter-only hits keep their recency, neither
    demoted nor rounded. Sorts ``scored`` in place and returns it."""
    for s in scored:
        if not pq.terms:
            continue  # filter-only: recency, neither demoted nor rounded
        demote = s.info.tagged or s.info.machine
        s.score = round(s.score * (recall.AUTOMATED_DEMOTION if demote else 1.0), 4)
    scored.sort(key=lambda s: (s.score, s.info.when or ""), reverse=True)
    return scored


#: How the factors ``explain`` shows make the score (each factor rounded to 4 digits).
EXPLAIN_FORMULA = (
    "score = (best_message + other_messages) × coverage_factor × demotion;"
    " best_message = bm25 × phrase boost × all_terms boost;"
    " other_messages = min(best_message / 2, a tenth of the other matching messages' scores);"
    " coverage_factor = 0.25 + 0.75 × coverage"
)


#: Hybrid mode's reciprocal rank fusion (:mod:`.hybrid`): its constant where the lexical order
#: stands (the usual 60; only the order counts there), and the scale of the fused score (so
#: that rounding scores to 4 digits keeps their order).
RRF_K = 60
FUSION_SCALE = 100.0
#: The fusion's constant for a question no message answers whole: 5, so that a first place
#: in either ranking weighs more than a middling place in both (with 60, a session both
#: rankings put 5th beat one either put 1st: on the questions' tune split, 60 gave Rank@1
#: 29.0%, below meaning alone, 32.3%, and words alone, 32.3%; 5 gave 38.7%, Recall@10 80.6%
#: unchanged; 10 gave 35.5%, 1 and 3 38.7%; weighting meaning 0.75-3x did no better).
QUESTION_K = 5
#: How hybrid mode's parts make the score: a question no message answers whole, and a
#: query some message holds every word of (the lexical order stands).
HYBRID_FORMULA = (
    f"score = {FUSION_SCALE:g} × (1 / ({QUESTION_K} + lexical_rank) + 1 / ({QUESTION_K} +"
    " semantic_rank)) × demotion; a ranking the session is not in adds 0 (reciprocal rank"
    f" fusion, K = {QUESTION_K}); the lexical ranking orders by lexical_score"
)
LEXICAL_ORDER_FORMULA = (
    f"the lexical order stands; score = {FUSION_SCALE:g} × 2 / ({RRF_K} + lexical_rank) ×"
    " demotion; when a message holds every word nothing is asked by meaning, else a session"
    f" found by meaning only follows the lexical_hits: {FUSION_SCALE:g} / ({RRF_K} +"
    " lexical_hits + semantic_rank)"
)


def explain(s: Scored, pq: ParsedQuery) -> JSONDict:
    """Why ``s`` scored as it did (the ``explain`` of its hit)."""
    out = _explain_lexical(s, pq)
    if s.lexical_rank is not None or s.semantic_rank is not None:
        out["hybrid"] = {
            "lexical_rank": s.lexical_rank,
            "lexical_score": None if s.lexical_score is None else round(s.lexical_score, 4),
            "semantic_rank": s.semantic_rank,
            "similarity": None if s.similarity is None else round(s.similarity, 4),
        }
        if s.lexical_hits is not None:
            out["hybrid"]["lexical_hits"] = s.lexical_hits
        out["formula"] = HYBRID_FORMULA if s.lexical_hits is None else LEXICAL_ORDER_FORMULA
    return out


def _explain_lexical(s: Scored, pq: ParsedQuery) -> JSONDict:
    demote = s.info.tagged or s.info.machine
    if not pq.terms:
        return {
            "ranking": "relevance",
            "order": "recency",
            "recency": round(s.score, 6),
            "matching_messages": s.messages,
            "automated": "tagged" if s.info.tagged else ("machine-paced" if demote else None),
        }
    return {
        "ranking": "relevance",
        "terms": [pq.terms[i].label for i in sorted(s.matched)],
        "missing": [t.label for i, t in enumerate(pq.terms) if i not in s.matched],
        "common": list(s.common),
        "phrase": s.phrase,
        "all_terms": s.all_terms,
        "bm25": round(s.bm25, 4),
        "boosts": {
            "phrase": PHRASE_BOOST if s.phrase else 1.0,
            "all_terms": ALL_TERMS_BOOST if s.all_terms else 1.0,
        },
        "best_message": round(s.best, 4),
        "matching_messages": s.messages,
        "other_messages": round(others_bonus(s.best, s.rest), 4),
        "coverage": round(s.coverage, 4),
        "coverage_factor": round(coverage_factor(s.coverage), 4),
        "session_recall": None if s.recall is None else round(s.recall, 4),
        "demotion": recall.AUTOMATED_DEMOTION if demote else 1.0,
        "formula": EXPLAIN_FORMULA,
        "automated": "tagged" if s.info.tagged else ("machine-paced" if demote else None),
    }
