"""The bounded candidate plan both index engines run, over plain data: which term lookups to
make and how many messages to take from each (the newest messages holding every term, the
rarest terms' messages, then any term), and the candidate rows grouped by session and scored.

Each engine keeps its own SQL: it hands :func:`bounded` its two reads (every term, some terms)
and gets back candidate rows in the one layout below, :data:`ROW_COLUMNS`."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from ..notes import COMMON_WORDS, Note
from ..query import ParsedQuery, Term
from ..query.match import RARE_DF as RARE_DF  # a term at most this frequent generates candidates
from .rank import CorpusStats, Msg, Scored, Scorer, SessionInfo

DRIVER_BUDGET = 300  # rarer terms are added as drivers while their summed df stays under this
CANDIDATE_LIMIT = 400  # newest candidate messages taken from the drivers
ALL_TERMS_LIMIT = 150  # newest messages holding every term (taken whatever their frequency)
FILL_LIMIT = 100  # newest messages with any other term, when too few sessions were found
COMMON_LIMIT = 200  # newest messages taken when every term is common
SMALL_SESSION_CHARS = 20_000  # a session this short is read whole to look for missing terms
PER_SESSION = 8  # candidate messages taken at most from one session (per candidate read)

COMMON_NOTE = Note(COMMON_WORDS, "very common words: the newest matching messages were ranked")

#: What a candidate row holds, in this order: the message (session key, projection index,
#: role, archived, time, text), its session (id, file, when, tagged, machine-paced, lineage,
#: first and last message row, characters) and the message's row id, last.
ROW_COLUMNS = (
    "sid, idx, role, archived, ts, text, session_id, file, when, tagged, machine, lineage, "
    "row_lo, row_hi, chars, id"
)

Row = tuple[Any, ...]
#: The messages holding every term: (the live terms as (df, term number), rarest first,
#: how many messages at most) -> candidate rows.
ReadEvery = Callable[[list[tuple[int, int]], int], Iterable[Row]]
#: The messages holding any of ``terms``: (terms, how many messages at most, about how many
#: messages hold them) -> candidate rows.
ReadSome = Callable[[list[Term], int, int], Iterable[Row]]


def bounded(
    pq: ParsedQuery,
    dfs: Sequence[int],
    limit: int,
    warnings: list[str],
    rare: Collection[int],
    every: ReadEvery,
    some: ReadSome,
) -> list[Row]:
    """Candidate messages, bounded whatever the words: the newest messages holding every
    term; the rarest terms' messages (a common word never costs its posting list); and,
    when that finds fewer sessions than asked for, the newest messages with any term
    (``rare``: the terms that may fill, all when empty). Each row once, in the order read."""
    live = sorted((df, i) for i, df in enumerate(dfs) if df > 0)
    if not live:
        return []
    rows: list[Row] = []
    seen: set[int] = set()

    def add(found: Iterable[Row]) -> None:
        for row in found:
            if row[-1] not in seen:
                seen.add(row[-1])
                rows.append(row)

    used: set[int] = set()
    # enough messages for every asked-for session, at PER_SESSION messages each
    drivers_limit = max(CANDIDATE_LIMIT, PER_SESSION * limit)
    if len(live) == len(pq.terms) and len(live) > 1:
        add(every(live, max(ALL_TERMS_LIMIT, limit)))
        # Sessions with a message holding every term outrank those without (boost and
        # coverage): the rarest terms' other messages can only fill the places below
        # them, and only as many are read as those places need.
        # (counted as shown: continuations of one conversation fold into one hit)
        shown = {r[11] if r[11] is not None else "\x00" + r[7] for r in rows}
        if shown:
            drivers_limit = max(FILL_LIMIT, PER_SESSION * (limit - len(shown)))
    if live[0][0] <= RARE_DF:
        drivers: list[Term] = []
        budget = 0
        for df, i in live:
            if drivers and budget + df > DRIVER_BUDGET:
                break
            drivers.append(pq.terms[i])
            used.add(i)
            budget += df
        add(some(drivers, drivers_limit, budget))
    elif not rows:
        common_limit = max(COMMON_LIMIT, PER_SESSION * limit)
        add(some([pq.terms[i] for _df, i in live], common_limit, sum(df for df, _i in live)))
        if len(rows) >= common_limit:
            warnings.append(COMMON_NOTE)
        return rows
    elif len(rows) >= ALL_TERMS_LIMIT:
        warnings.append(COMMON_NOTE)
    rest = [i for _df, i in live if i not in used and (not rare or i in rare)]
    if rest and len({r[0] for r in rows}) < max(limit, 1):
        fill = max(FILL_LIMIT, PER_SESSION * limit)
        add(some([pq.terms[i] for i in rest], fill, sum(dfs[i] for i in rest)))
    return rows


def session_info(row: Row) -> SessionInfo:
    """The session of a candidate row (see :data:`ROW_COLUMNS`)."""
    sid, session_id, file, when, tagged, machine, lineage, lo, hi, chars = (row[0], *row[6:15])
    return SessionInfo(
        sid, session_id, file, when, bool(tagged), bool(machine), lineage, lo, hi, chars
    )


def group_rows(rows: Iterable[Row]) -> dict[int, tuple[SessionInfo, list[Msg]]]:
    """Candidate rows grouped by session, in the order first read."""
    groups: dict[int, tuple[SessionInfo, list[Msg]]] = {}
    for row in rows:
        sid, idx, role, archived, ts, text = row[:6]
        g = groups.get(sid)
        if g is None:
            g = groups[sid] = (session_info(row), [])
        g[1].append(Msg(sid, idx, role, bool(archived), ts, text))
    return groups


def score_rows(rows: Iterable[Row], scorer: Scorer) -> list[Scored]:
    """The candidate rows grouped by session (in the order first read) and scored; the
    sessions the scorer drops are left out."""
    scored: list[Scored] = []
    for info, msgs in group_rows(rows).values():
        s = scorer.session(info, msgs)
        if s is not None:
            scored.append(s)
    return scored


def scorer_for(
    pq: ParsedQuery,
    dfs: Sequence[int],
    corpus: CorpusStats | None,
    own: Callable[[], tuple[int, float]],
) -> Scorer:
    """The scorer for ``pq``: the shared ``corpus`` statistics when given, else the index's
    ``own()`` (messages, mean characters)."""
    if corpus is None or corpus.total <= 0:
        total, avg = own()
        return Scorer(pq, dfs, total, avg)
    shared = [corpus.dfs.get(t.fts(), df) for t, df in zip(pq.terms, dfs, strict=True)]
    return Scorer(pq, shared, corpus.total, corpus.avg_chars)
