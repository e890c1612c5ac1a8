"""The team index (PostgreSQL) as an :class:`~session_browser.core.search.engine.Engine`: the
questions of the relevance procedure answered by PostgreSQL full-text search over the messages'
``tsvector`` (the same folded tokens as the SQLite index), bounded as the SQLite engine bounds
them: the newest messages holding every term, the rarest terms' messages, then any term, at
most :data:`~session_browser.core.search.candidates.PER_SESSION` messages of one session.
Filters come from the one filter table (:func:`~session_browser.core.query.pg_where`). With
``in:tools`` the hidden parts pushed with ``--include-hidden`` (``sb_hidden``) give candidates
too (the same row layout, ids negated, anchored at their turn). Unknown words are corrected
from the index's vocabulary (``pg_trgm`` similarity, then edit distance). Hits read the pushed
session from the database: the files are on other machines.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import orjson

from .. import recall
from ..model import SessionHit
from ..query import ParsedQuery, Term, fold, pg_where
from ..search import hidden
from ..search.candidates import PER_SESSION, RARE_DF, SMALL_SESSION_CHARS, bounded
from ..search.engine import Ask, Backlog
from ..search.fuzzy import levenshtein
from ..search.hybrid import requested_mode
from ..search.lexical import ANCHOR_MESSAGES, SessionPostings
from ..search.pick import recent_first, session_hit
from ..search.rank import CorpusStats, Scored, SessionInfo
from .tsv import all_query, any_query, term_query

if TYPE_CHECKING:
    from .store import PgIndexStore

#: Said when hybrid mode is asked of the team index (it has no vectors).
TEAM_LEXICAL = "hybrid mode: the team index searches lexically (it keeps no vectors)"

SCAN_MIN = 500  # newest matching messages read at least ...
SCAN_FACTOR = 4  # ... and this many times those needed, to pick the per-session-capped ones
GIN_FIRST = 4  # matches read from the GIN index rather than walking the newest messages
# while matches² <= GIN_FIRST × rows read × messages (a walk reads about rows × messages /
# matches messages when the matches are spread evenly, several times more when not)
RECENT_MIN_DF = 2_000  # a word in this many messages is looked up among the newest first
RECENT_MARGIN = 3.0  # ... in a range expected to hold this many times the matches needed
# The candidate rows (:data:`~session_browser.core.search.candidates.ROW_COLUMNS`): a session
# is named by its key and file (files of several machines share names), and its messages are
# read by key (no row range).
_CAND_COLS = (
    "m.sid, m.idx, coalesce(m.role, ''), m.archived, m.ts, m.text, s.session_id, "
    "s.sid || '/' || s.file, s.when_, s.tagged, s.machine_paced, s.lineage, 0, -1, s.chars, m.id"
)

NO_HIDDEN = (
    "in:tools: the team index holds no hidden parts to search (tool calls and results, "
    "reasoning): only the prose was searched; push with --include-hidden to have them "
    "searched"
)


def origin_label(machine: str, user: str) -> str:
    return f"{user}@{machine}"


class PgEngine:
    """The search questions over one :class:`PgIndexStore`'s pool."""

    mode = "index"

    def __init__(self, store: PgIndexStore) -> None:
        self.store = store
        self.label = store.label
        self.source_kind = store.source_kind
        self.typo_pass = store.has_trgm
        self.session_recall = True

    def reading(self) -> AbstractContextManager[None]:
        return contextlib.nullcontext()  # (machines push whole sessions, one at a time)

    def backlog(self) -> Backlog:
        return Backlog()  # (what is pushed is indexed)

    def notes(self, pq: ParsedQuery) -> list[str]:
        out = [NO_HIDDEN] if pq.tools and not self._has_hidden() else []
        try:
            hybrid_asked = requested_mode() == "hybrid"
        except ValueError as exc:
            out.append(f"{exc}: lexical answers")
            hybrid_asked = False
        if hybrid_asked and pq.terms:
            out.append(TEAM_LEXICAL)
        return out

    def expect_neighbours(self, pq: ParsedQuery, k: int) -> None:
        return None  # the team index searches lexically

    def neighbours(self, pq: ParsedQuery, k: int) -> list[tuple[float, tuple[Any, ...]]] | None:
        return None  # the team index searches lexically

    def corpus(self) -> tuple[int, float]:
        return self.store._corpus()

    def document_frequencies(self, terms: Sequence[Term]) -> list[int]:
        return self.store._dfs(terms)

    def count_matches(
        self, pq: ParsedQuery, dfs: Sequence[int], rare: set[int]
    ) -> tuple[int, bool] | None:
        return None  # (the scored sessions are counted)

    def excluded_sessions(self, pq: ParsedQuery) -> set[int]:
        if not pq.excluded:
            return set()
        return {
            int(r[0])
            for r in self.store._all(
                "SELECT DISTINCT sid FROM sb_messages WHERE tsv @@ %s::tsquery",
                (any_query(pq.excluded),),
            )
        }

    def known(self, token: str) -> bool:
        return self.store._df(Term((token,), token)) > 0

    def score_files(
        self, pq: ParsedQuery, names: Sequence[str], corpus: CorpusStats | None
    ) -> list[Scored]:
        return []

    def listed_count(self) -> int:
        return self.store.count()

    def holds(self, terms: Sequence[Term], asks: Sequence[Ask]) -> list[set[int]]:
        small = [
            info.key
            for which, info in asks
            if which and info.chars is not None and info.chars <= SMALL_SESSION_CHARS
        ]
        texts: dict[int, list[str]] = {sid: [] for sid in small}
        if small:
            for sid, text in self.store._all(
                "SELECT sid, text FROM sb_messages WHERE sid = ANY(%s) ORDER BY sid, id", (small,)
            ):
                texts[int(sid)].append(text)
        return [self._holds(terms, which, info, texts.get(info.key)) for which, info in asks]

    def rows_of(self, keys: Sequence[int]) -> Mapping[int, Any]:
        if not keys:
            return {}
        return {
            int(r[0]): r[1:]
            for r in self.store._all(
                "SELECT sid, data, kind, machine, os_user FROM sb_sessions WHERE sid = ANY(%s)",
                (list(keys),),
            )
        }

    def full_hit(
        self, s: Scored, pq: ParsedQuery, window: int, rows: Any | None
    ) -> SessionHit | None:
        row = rows if rows is not None else self.rows_of([s.info.key]).get(s.info.key)
        if row is None:  # replaced by a push meanwhile
            return None
        data = orjson.loads(row[0])
        if not isinstance(data, dict):
            return None
        messages = recall.project(data)
        store = origin_label(row[2], row[3])
        return session_hit(s, pq, data, messages, window, str(row[1]), store)

    def candidate_rows(
        self,
        pq: ParsedQuery,
        dfs: Sequence[int],
        limit: int,
        warnings: list[str],
        rare: set[int],
    ) -> list[tuple[Any, ...]]:
        """:func:`~session_browser.core.search.candidates.bounded` over the GIN index. The
        messages holding every term are looked up by the rarer terms and checked for the
        common ones (GIN reads every posting of each word it is given)."""
        ex = pq.excluded

        def every(live: list[tuple[int, int]], n: int) -> list[tuple[Any, ...]]:
            rarer = [pq.terms[i] for df, i in live if df <= RARE_DF] or [pq.terms[live[0][1]]]
            full = all_query(pq.terms, ex)
            if len(rarer) < len(pq.terms):
                return self._fetch(pq, all_query(rarer, ex), n, full, live[0][0])
            return self._fetch(pq, full, n, df=live[0][0])

        def some(terms: list[Term], n: int, df: int) -> list[tuple[Any, ...]]:
            return self._fetch(pq, any_query(terms, ex), n, df=df)

        return bounded(pq, dfs, limit, warnings, rare, every, some)

    def _has_hidden(self) -> bool:
        """Whether some pushed session's hidden parts are here (pushed with
        ``--include-hidden``)."""
        return self.store._one("SELECT EXISTS (SELECT 1 FROM sb_hidden)")[0] is True

    def one_message_holds(self, pq: ParsedQuery) -> bool:
        sql = "SELECT 1 FROM sb_messages WHERE tsv @@ %s::tsquery LIMIT 1"
        return self.store._one(sql, (all_query(pq.terms),)) is not None

    def session_postings(self, words: Sequence[str]) -> SessionPostings:
        lengths = {
            int(sid): int(n) for sid, n in self.store._all("SELECT sid, length FROM sb_words")
        }
        posts: dict[str, frozenset[int]] = {}
        for word in words:
            posts[word] = frozenset(
                int(r[0])
                for r in self.store._all(
                    "SELECT sid FROM sb_words WHERE words @> ARRAY[%s]::text[]", (word,)
                )
            )
        mean = (sum(lengths.values()) / len(lengths)) if lengths else 1.0
        return SessionPostings(len(lengths), mean, posts, lengths)

    def session_rows(self, pq: ParsedQuery, keys: Sequence[int]) -> list[tuple[Any, ...]]:
        if not keys:
            return []
        found = self.store._all(
            f"SELECT {_CAND_COLS} FROM (SELECT m.*, row_number() OVER "
            "(PARTITION BY m.sid ORDER BY m.id DESC) AS rn FROM sb_messages m "
            "WHERE m.sid = ANY(%s) AND m.tsv @@ %s::tsquery) m "
            "JOIN sb_sessions s ON s.sid = m.sid WHERE m.rn <= %s",
            (list(keys), any_query(pq.terms), ANCHOR_MESSAGES),
        )
        have = {int(r[0]) for r in found}
        rest = [k for k in keys if k not in have]
        if rest:  # no message holds a word as written: the session's first message
            found += self.store._all(
                f"SELECT {_CAND_COLS} FROM (SELECT DISTINCT ON (sid) * FROM sb_messages "
                "WHERE sid = ANY(%s) ORDER BY sid, id) m JOIN sb_sessions s ON s.sid = m.sid",
                (rest,),
            )
        return list(found)

    def hidden_rows(self, pq: ParsedQuery, limit: int) -> list[tuple[Any, ...]]:
        """The newest hidden parts holding a term of ``pq`` and passing its filters, at most
        :data:`~session_browser.core.search.hidden.PER_SESSION` of one session, as candidate
        rows whose last column (the row id) is negated: never a message's."""
        want = max(hidden.CANDIDATES, hidden.PER_SESSION * limit)
        rows = self._fetch(
            pq, any_query(pq.terms), want, table="sb_hidden", per_session=hidden.PER_SESSION
        )
        return [(*r[:-1], -int(r[-1])) for r in rows]

    def _fetch(
        self,
        pq: ParsedQuery,
        query: str,
        limit: int,
        check: str | None = None,
        df: int = 0,
        *,
        table: str = "sb_messages",
        per_session: int = PER_SESSION,
    ) -> list[tuple[Any, ...]]:
        """The newest messages matching ``query`` (looked up in the GIN index) and
        ``check`` (tested on those rows only) and the filters, at most ``per_session`` of
        one session (``df``: about how many messages match ``query``; ``table``: the
        messages, or the hidden parts, ``sb_hidden``, which have the same columns)."""
        if not query:
            return []
        fsql, fparams = pg_where(pq.filter_values)
        if check is not None:
            fsql = " AND ts_match_vq(m.tsv, %s::tsquery)" + fsql
            fparams = [check, *fparams]
        join = " JOIN sb_sessions s ON s.sid = m.sid" if "s." in fsql else ""
        scan = max(SCAN_FACTOR * limit, SCAN_MIN)
        # Walking the messages newest first and testing each one (the plan PostgreSQL picks
        # when it guesses the matches are spread evenly) reads tens of thousands of rows for
        # a word of a few thousand messages that are not; the GIN index then reads only
        # the matches. ``m.id + 0`` takes the walk away, unless the matches are so many that
        # reading them all costs more than walking to the newest of them.
        total, _avg = self.store._corpus()
        newest = "m.id + 0" if df * df <= GIN_FIRST * scan * max(total, 1) else "m.id"
        sql = (
            f"WITH hit AS MATERIALIZED (SELECT m.id, m.sid FROM {table} m{join} "
            f"WHERE m.tsv @@ %s::tsquery{{bound}}{fsql} ORDER BY {newest} DESC LIMIT %s), "
            "top AS MATERIALIZED (SELECT id FROM (SELECT id, row_number() OVER "
            "(PARTITION BY sid ORDER BY id DESC) AS rn FROM hit) c WHERE c.rn <= %s "
            "ORDER BY id DESC LIMIT %s) "
            f"SELECT {_CAND_COLS}, (SELECT count(*) FROM hit) FROM top t "
            f"JOIN {table} m ON m.id = t.id "
            "JOIN sb_sessions s ON s.sid = m.sid ORDER BY m.id DESC"
        )
        low = self._recent_bound(df, scan) if not fsql and table == "sb_messages" else None
        if low is not None:
            # A frequent word: its matches among the newest messages only (the GIN bitmap
            # ANDed with the id range, so the rows read are the newest matches, not all of
            # them). When that range holds ``scan`` matches they are the newest ``scan``
            # overall, so the answer is the same; else the whole match set is read.
            rows = self.store._all(
                sql.replace("{bound}", " AND m.id > %s"),
                [query, low, *fparams, scan, per_session, limit],
            )
            if rows and int(rows[0][-1]) >= scan:
                return [r[:-1] for r in rows]
        params = [query, *fparams, scan, per_session, limit]
        rows = self.store._all(sql.replace("{bound}", ""), params)
        return [r[:-1] for r in rows]

    def _recent_bound(self, df: int, scan: int) -> int | None:
        """An id below which the newest ``scan`` of ``df`` matching messages are not
        expected (``RECENT_MARGIN`` times as many expected above it when the matches are
        spread evenly); None when a word is too rare for a bound to pay."""
        if df < RECENT_MIN_DF or df <= RECENT_MARGIN * scan:
            return None
        span = self._id_span()
        if span is None:
            return None
        lo, hi = span
        share = RECENT_MARGIN * scan / df
        return int(hi - share * (hi - lo + 1))

    def _id_span(self) -> tuple[int, int] | None:
        row = self.store._one("SELECT min(id), max(id) FROM sb_messages")
        if row is None or row[0] is None:
            return None
        return int(row[0]), int(row[1])

    def _holds(
        self,
        terms: Sequence[Term],
        which: Iterable[int],
        info: SessionInfo,
        texts: list[str] | None = None,
    ) -> set[int]:
        """Which of ``terms`` (numbers in ``which``) some message of the session holds
        (``texts``: the session's message texts, when already read)."""
        wanted = list(which)
        if not wanted:
            return set()
        if info.chars is not None and info.chars <= SMALL_SESSION_CHARS:
            if texts is None:
                sql = "SELECT text FROM sb_messages WHERE sid = %s"
                texts = [r[0] for r in self.store._all(sql, (info.key,))]
            whole = fold("\n".join(texts))
            return {
                i
                for i in wanted
                if (
                    terms[i].count_in(whole, 1)
                    if len(terms[i].tokens) == 1
                    else any(terms[i].count_in(fold(t), 1) for t in texts)
                )
            }
        out: set[int] = set()
        for i in wanted:
            row = self.store._one(
                "SELECT 1 FROM sb_messages WHERE sid = %s AND tsv @@ %s::tsquery LIMIT 1",
                (info.key, term_query(terms[i])),
            )
            if row is not None:
                out.add(i)
        return out

    def recent(self, pq: ParsedQuery, limit: int) -> tuple[list[Scored], int]:
        """A filter-only query: every session with a message passing the filters, newest
        first, anchored at its latest matching message."""
        fsql, fparams = pg_where(pq.filter_values)
        rows = self.store._all(
            "SELECT m.sid, max(coalesce(m.ts, s.updated_ts)), count(*) FROM sb_messages m "
            f"JOIN sb_sessions s ON s.sid = m.sid WHERE true{fsql} GROUP BY m.sid",
            fparams,
        )
        if pq.excluded and rows:
            gone = {
                r[0]
                for r in self.store._all(
                    "SELECT DISTINCT sid FROM sb_messages WHERE tsv @@ %s::tsquery",
                    (any_query(pq.excluded),),
                )
            }
            rows = [r for r in rows if r[0] not in gone]
        if not rows:
            return [], 0
        latest = {int(sid): (t, int(n)) for sid, t, n in rows}
        infos = [
            SessionInfo(sid, session_id, f"{sid}/{file}", when, bool(tagged), bool(paced), lineage)
            for sid, session_id, file, when, tagged, paced, lineage in self.store._all(
                "SELECT sid, session_id, file, when_, tagged, machine_paced, lineage "
                "FROM sb_sessions WHERE sid = ANY(%s)",
                (list(latest),),
            )
        ]

        def anchor(info: SessionInfo) -> Any:
            return self.store._one(
                "SELECT m.idx, m.text FROM sb_messages m JOIN sb_sessions s ON s.sid = m.sid "
                f"WHERE m.sid = %s{fsql} ORDER BY coalesce(m.ts, s.updated_ts) DESC, m.id DESC "
                "LIMIT 1",
                [info.key, *fparams],
            )

        order, out = recent_first(infos, latest, limit, anchor)
        return out, len(order)

    def correct(self, tok: str) -> str | None:
        """The most frequent vocabulary word one edit away (two for long words), found
        among the words of similar trigrams."""
        if len(tok) < 3 or len(tok) > 40:
            return None
        limit = 1 if len(tok) < 6 else 2
        close = [
            r[0]
            for r in self.store._all(
                "SELECT term FROM sb_terms WHERE term %% %s "
                "ORDER BY similarity(term, %s) DESC LIMIT 50",
                (tok, tok),
            )
        ]
        best: tuple[int, int, str] | None = None
        for word in close:
            d = levenshtein(tok, word, limit)
            if d > limit:
                continue
            key = (d, -self.store._df(Term((word,), word)), word)
            if best is None or key < best:
                best = key
        return None if best is None else best[2]
