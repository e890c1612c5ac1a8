"""Hybrid mode: the lexical ranking and the nearest sessions by meaning, fused.

The search mode is ``hybrid`` or ``lexical`` (:func:`requested_mode`: asked for, else the
``SESSION_BROWSER_SEARCH_MODE`` environment variable, else chosen by the engine: hybrid when
its vectors are ready, lexical otherwise). In hybrid mode an engine hands over, besides its
lexical candidates, the sessions nearest the query by meaning (:meth:`~.engine.Engine.
neighbours`: each one's best window, anchored at its first message passing the query's
filters; a session nearer than :data:`MIN_SIMILARITY` only is not one), and :func:`fuse`
merges the two rankings:

- A question no message answers whole (session recall's path, a question in other words):
  reciprocal rank fusion, ``score = 100 · (1 / (K + lexical rank) + 1 / (K + semantic
  rank))`` with ``K`` = :data:`~.rank.QUESTION_K` (5: a first place in either ranking counts
  for much); a ranking the session is not in adds nothing. Ranks, not scores, are fused:
  BM25 and cosine are on scales that do not compare.
- A query some message holds every word of (likely the session's own words: a known item):
  the lexical order stands, ``score = 100 · 2 / (K + lexical rank)`` with ``K`` =
  :data:`~.rank.RRF_K`. When a session it found has a message holding every word, that
  order is the answer: nothing is asked by meaning and the query is not embedded
  (:func:`neighbours_wanted`), so a known item costs what it costs lexically. Otherwise (a
  filter or an exclusion, words no message holds together) the sessions found by meaning
  alone follow the ``n`` lexical ones, ``score = 100 / (K + n + semantic rank)``.

A session's closeness to a query (what orders the sessions found by meaning, and what
:data:`MIN_SIMILARITY` bounds) is its best window's cosine with the whole query; for a question
of several parts (:func:`question_parts`: "a cafe in Oakland and then a funk rock track"), the
mean of that cosine and of the parts' (each part's best window's cosine, averaged over the
parts): a session whose windows answer each part beats one whose single window is loosely like
the whole. (On the 200 paraphrased questions of ``bench --questions`` at 30,000 sessions, with
all-MiniLM-L6-v2: meaning alone 18.5% -> 26% Rank@1, fused 28.5% -> 33.5%; the tune and
held-out halves gained alike.)

A hit found only by meaning is anchored at its best window (the whole query's); a hit found
by both keeps its lexical anchor (the matching turn).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any, Protocol

from .candidates import group_rows
from .rank import FUSION_SCALE, QUESTION_K, RRF_K, Scored

ENV = "SESSION_BROWSER_SEARCH_MODE"
MODES = ("hybrid", "lexical")
SCALE = FUSION_SCALE
#: A session nearer the query than this cosine only is not a hit by meaning (unrelated text
#: scores about 0 with all-MiniLM-L6-v2, a paraphrase 0.3 to 0.7).
MIN_SIMILARITY = 0.2
#: Sessions asked by meaning beyond the ones shown.
NEIGHBOURS_MORE = 40


#: Where a question splits into its parts: punctuation and the words that join what a person
#: remembers of one session ("a cafe in Oakland and then a funk rock track").
_PART_BREAK = re.compile(
    r"[,;:?!]|\s(?:and then|then|and|plus|but|with|after|before|also)\s", re.IGNORECASE
)


def question_parts(text: str) -> list[str]:
    """The parts of a question asked by meaning besides the whole (:func:`fuse`'s module doc):
    its pieces between punctuation and joining words, each of two words or more; none when
    fewer than two such pieces (a question of one part is asked whole only)."""
    parts = [p.strip() for p in _PART_BREAK.split(text)]
    parts = [p for p in parts if len(p.split()) >= 2]
    return parts if len(parts) >= 2 else []


def neighbours_wanted(exact: bool, whole: bool, limit: int) -> int:
    """How many sessions to ask by meaning for a page of ``limit`` hits (``exact``: the
    lexical order stands; ``whole``: a session it found has a message holding every word of
    the query). None (0) when both: the query is the session's own words and the lexical
    order is the answer, so the query is not even embedded and a known item costs what it
    costs lexically."""
    return 0 if exact and whole else limit + NEIGHBOURS_MORE


class MeaningPart(Protocol):
    """What a store's search by meaning tells its group: whether its vectors are ready, and
    whether the group asks it to answer lexically (a group answers in one mode)."""

    group_lexical: bool

    def ready(self) -> bool: ...


def requested_mode(mode: str | None = None) -> str | None:
    """``mode`` if given, else the environment's (:data:`ENV`), else None (the engine
    chooses). Raises :class:`ValueError` for a mode that is neither ``hybrid`` nor
    ``lexical``."""
    value = mode if mode is not None else os.environ.get(ENV, "")
    value = value.strip().lower()
    if not value:
        return None
    if value not in MODES:
        source = "--mode" if mode is not None else ENV
        raise ValueError(f"{source}: search mode must be hybrid or lexical, not {value!r}")
    return value


def set_search_mode(mode: str) -> None:
    """Search in ``mode`` (``hybrid`` or ``lexical``) in this process from now on, and in the
    processes it starts: the environment variable every store reads. Raises
    :class:`ValueError` for another mode."""
    requested_mode(mode)
    os.environ[ENV] = mode


def fuse(
    lexical: Sequence[Scored],
    near: Sequence[tuple[float, tuple[Any, ...]]],
    exact: bool,
) -> list[Scored]:
    """``lexical`` (scored sessions, in any order) and ``near`` ((cosine, candidate row),
    nearest first) as one list, scored as the module doc says (``exact``: some message holds
    every word of the query, or the query is not one session recall answers)."""
    ranked = sorted(lexical, key=lambda s: (s.score, s.info.when or ""), reverse=True)
    out: dict[int, Scored] = {}
    for rank, s in enumerate(ranked, 1):
        s.lexical_rank, s.lexical_score = rank, s.score
        s.score = SCALE * 2.0 / (RRF_K + rank) if exact else SCALE / (QUESTION_K + rank)
        s.lexical_hits = len(ranked) if exact else None
        out[s.info.key] = s
    after = len(ranked) if exact else 0
    near = [n for n in near if n[0] >= MIN_SIMILARITY]
    for rank, (similarity, row) in enumerate(near, 1):
        key = row[0]
        found = out.get(key)
        if found is None:
            info, msgs = group_rows([row])[key]
            msg = msgs[0]
            found = out[key] = Scored(
                info=info,
                score=0.0,
                anchor=msg.idx,
                best=0.0,
                matched=set(),
                phrase=False,
                all_terms=False,
                bm25=0.0,
                messages=0,
                anchor_text=msg.text,
                coverage=0.0,
            )
        elif exact:  # the lexical order stands
            found.semantic_rank, found.similarity = rank, similarity
            continue
        found.semantic_rank, found.similarity = rank, similarity
        if exact:  # (found by meaning only: after the lexical hits)
            found.score += SCALE / (RRF_K + after + rank)
        else:
            found.score += SCALE / (QUESTION_K + rank)
        found.lexical_hits = len(ranked) if exact else None
    return list(out.values())
