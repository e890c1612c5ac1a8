"""Hybrid mode: the lexical ranking and the nearest sessions by meaning, fused.

The search mode is ``hybrid`` or ``lexical`` (:func:`requested_mode`: asked for, else the
``SESSION_BROWSER_SEARCH_MODE`` environment variable, else chosen by the engine: hybrid when
its vectors are ready, lexical otherwise). In hybrid mode an engine hands over, besides its
lexical candidates, the sessions nearest the query by meaning (:meth:`~.engine.Engine.
neighbours`: each one's best window, anchored at its first message passing the query's
filters), and :func:`fuse` merges the two rankings by reciprocal rank fusion:

    score = 100 · ( w / (K + lexical rank) + 1 / (K + semantic rank) )

with ``K`` = :data:`RRF_K` (a session absent from a ranking adds nothing for it; a session
nearer than :data:`MIN_SIMILARITY` only is not in the semantic ranking) and ``w``
= :data:`LEXICAL_WEIGHT` when some message holds every word of the query (the query is likely
the session's own words: its lexical rank weighs more), else 1. Ranks, not scores, are fused:
BM25 and cosine are on scales that do not compare. A hit found only by meaning is anchored at
its best window; a hit found by both keeps its lexical anchor (the matching turn).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from .candidates import group_rows
from .rank import FUSION_SCALE, RRF_K, Scored

ENV = "SESSION_BROWSER_SEARCH_MODE"
MODES = ("hybrid", "lexical")
#: The weight of the lexical rank when some message holds every word of the query.
LEXICAL_WEIGHT = 3.0
SCALE = FUSION_SCALE
#: A session nearer the query than this cosine only is not a hit by meaning (unrelated text
#: scores about 0 with all-MiniLM-L6-v2, a paraphrase 0.3 to 0.7).
MIN_SIMILARITY = 0.2
#: Sessions asked by meaning beyond the ones shown.
NEIGHBOURS_MORE = 40


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


def fuse(
    lexical: Sequence[Scored],
    near: Sequence[tuple[float, tuple[Any, ...]]],
    exact: bool,
) -> list[Scored]:
    """``lexical`` (scored sessions, in any order) and ``near`` ((cosine, candidate row),
    nearest first) as one list scored by reciprocal rank fusion (module doc)."""
    weight = LEXICAL_WEIGHT if exact else 1.0
    ranked = sorted(lexical, key=lambda s: (s.score, s.info.when or ""), reverse=True)
    out: dict[int, Scored] = {}
    for rank, s in enumerate(ranked, 1):
        s.lexical_rank, s.lexical_score, s.lexical_weight = rank, s.score, weight
        s.score = SCALE * weight / (RRF_K + rank)
        out[s.info.key] = s
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
        found.lexical_weight = weight
        found.semantic_rank = rank
        found.similarity = similarity
        found.score += SCALE / (RRF_K + rank)
    return list(out.values())
