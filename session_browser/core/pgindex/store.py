"""``PgIndexStore``: searching and reading the team index (PostgreSQL) with the recall API of a
store, so a :class:`~session_browser.core.multi.StoreGroup`, the CLI and the benchmark use it
as they use a local store.

Candidates come from PostgreSQL full-text search over the messages' ``tsvector`` (the same
folded tokens as the SQLite index), bounded as the SQLite engine bounds them: the newest
messages holding every term, the rarest terms' messages, then any term, at most
:data:`~session_browser.core.index.candidates.PER_SESSION` messages of one session. The ranking is
the SQLite engine's own code (:mod:`session_browser.core.index.rank`: BM25 per message,
phrase and all-words boosts, common words, coverage, demotion, lineage folding), so both
engines put the same sessions on top. Filters come from the one filter table
(:func:`~session_browser.core.query.pg_where`). With ``in:tools`` the hidden parts pushed with
``--include-hidden`` (``sb_hidden``) give candidates too, as the SQLite index's
:func:`~session_browser.core.index.hidden.candidates` do (the same row layout, ids negated,
anchored at their turn). With no exact match, unknown words are
corrected from the index's vocabulary (``pg_trgm`` similarity, then edit distance).
Hits and ``show`` read the pushed session from the database: the files are on other machines.
A session id is one session per machine and user (the newest copy pushed, see
:mod:`.schema`); the same id from several machines (or users) is several sessions, each hit
and listed row naming its ``user@machine``. Reading an id held from several, the newest is
read unless one is chosen (:meth:`PgIndexStore.choose`, which refuses to guess).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

from .. import recall
from ..model import JSONDict, SessionData, SessionHit, SessionSummary
from ..notes import NOTHING_SEARCHABLE, Note
from ..query import ParsedQuery, QueryError, Term, fold, parse_query, pg_where
from ..search import hidden
from ..search.candidates import (
    PER_SESSION,
    RARE_DF,
    SMALL_SESSION_CHARS,
    bounded,
    score_rows,
    scorer_for,
)
from ..search.fuzzy import levenshtein
from ..search.pick import (
    SUMMARY_COLUMNS,
    corrected,
    light_hit,
    recent_first,
    session_hit,
    summary_row,
)
from ..search.rank import (
    COMMON_SHARE,
    COVERAGE_CHECK,
    CorpusStats,
    Scored,
    Scorer,
    SessionInfo,
    lineage_key,
    order,
    refine,
)
from ..search.results import Cancelled, Relevance, SearchCancelled
from ..search.searching import IndexSearch
from .conn import PgIndexError, error_line, mask_url, psycopg_module
from .schema import NEWEST_FIRST, ensure_schema
from .tsv import all_query, any_query, query_lexeme, term_query

_SORTS = {"updated": "updated_ts", "created": "created", "size": "chars"}  # browse order
STATS_SECONDS = 10.0  # collection statistics are read again after this long
SCAN_MIN = 500  # ... and at least this many
SCAN_FACTOR = 4  # newest matching messages read to pick the per-session-capped candidates
GIN_FIRST = 4  # matches read from the GIN index rather than walking the newest messages
# while matches² <= GIN_FIRST × rows read × messages (a walk reads about rows × messages /
# matches messages when the matches are spread evenly, several times more when not)
RECENT_MIN_DF = 2_000  # a word in this many messages is looked up among the newest first
RECENT_MARGIN = 3.0  # ... in a range expected to hold this many times the matches needed
# The candidate rows (:data:`~session_browser.core.index.candidates.ROW_COLUMNS`): a session
# is named by its key and file (files of several machines share names), and its messages are
# read by key (no row range).
_CAND_COLS = (
    "m.sid, m.idx, coalesce(m.role, ''), m.archived, m.ts, m.text, s.session_id, "
    "s.sid || '/' || s.file, s.when_, s.tagged, s.machine_paced, s.lineage, 0, -1, s.chars, m.id"
)
# The listed sessions (:data:`~session_browser.core.index.pick.SUMMARY_COLUMNS`, no file size
# here), then where each comes from.
_SUMMARY_COLS = SUMMARY_COLUMNS.replace(" size,", " NULL,") + ", kind, machine, os_user"


# The copy of a session id read (pushed from several machines, the newest one).
_NEWEST_COPY = f"WHERE session_id = %s ORDER BY {NEWEST_FIRST} LIMIT 1"
# ... or the one chosen
_CHOSEN_COPY = "WHERE session_id = %s AND machine = %s AND os_user = %s"

NO_HIDDEN = (
    "in:tools: the team index holds no hidden parts to search (tool calls and results, "
    "reasoning): only the prose was searched; push with --include-hidden to have them "
    "searched"
)


def origin_label(machine: str, user: str) -> str:
    return f"{user}@{machine}"


class CopyNotChosen(PgIndexError):
    """:meth:`PgIndexStore.choose` could not choose one copy of a session: ``held`` is every
    copy's ``user@machine`` (newest first; none when the id is not held at all), ``matching``
    those the machine asked for names (several: still ambiguous; none: not from there)."""

    def __init__(self, session_id: str, held: list[str], matching: list[str]) -> None:
        super().__init__(f"session {session_id!r}: {len(matching)} of {held} match")
        self.session_id = session_id
        self.held = held
        self.matching = matching


class PgIndexStore(IndexSearch):
    """The team index, read through a small connection pool."""

    source_kind = "team"

    def __init__(self, url: str, *, pool_size: int = 4) -> None:
        psycopg = psycopg_module()
        from psycopg_pool import ConnectionPool

        self.url = url
        self.masked = mask_url(url)
        self._errors = psycopg.Error
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
                self.has_trgm = ensure_schema(conn)
                info = conn.info
                self._label = f"team index {info.dbname}@{info.host or 'localhost'}"
        except psycopg.Error as exc:
            raise PgIndexError(f"cannot open the team index: {error_line(exc, url)}") from exc
        self.pool = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True},
            open=True,
            name="session-browser",
        )
        self._stats: tuple[float, int, float] | None = None
        self._df_cache: dict[str, int] = {}
        self._common: dict[str, int] = {}
        self._lock = threading.Lock()
        self.warnings: list[str] = []
        self.broken: str | None = None
        self.has_fts = True
        self.indexing = False
        self.progress = (0, 0)
        self._chosen: dict[str, tuple[str, str]] = {}  # session id -> (machine, user) read

    # ------------------------------------------------------------------ plumbing

    @property
    def label(self) -> str:
        return self._label

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> PgIndexStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        try:
            with self.pool.connection() as conn:
                return list(conn.execute(sql, params).fetchall())
        except self._errors as exc:
            raise PgIndexError(f"the team index failed: {error_line(exc, self.url)}") from exc

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        rows = self._all(sql, params)
        return rows[0] if rows else None

    # ------------------------------------------------------------------ statistics

    def _corpus(self) -> tuple[int, float]:
        now = time.monotonic()
        with self._lock:
            if self._stats is not None and now - self._stats[0] < STATS_SECONDS:
                return self._stats[1], self._stats[2]
        n, chars = self._one(
            "SELECT coalesce(sum(nmsg), 0), coalesce(sum(chars), 0) FROM sb_sessions"
        )
        total, avg = int(n), (float(chars) / int(n)) if n else 1.0
        common = self._common_words(total)
        with self._lock:
            self._stats = (now, total, avg)
            self._df_cache.clear()
            self._common = common
        return total, avg

    def _common_words(self, total: int) -> dict[str, int]:
        """The frequent words' message counts, from PostgreSQL's own statistics of the
        ``tsvector`` column (taken by ``ANALYZE``, which ``push`` runs): counting a common
        word's messages would read its whole posting list, as FTS5 would (the SQLite index
        keeps ``common_terms`` for the same reason)."""
        row = self._one(
            "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats "
            "WHERE tablename = 'sb_messages' AND attname = 'tsv' "
            "AND schemaname = current_schema()"
        )
        if row is None or row[0] is None or row[1] is None:
            return {}
        out: dict[str, int] = {}
        for word, freq in zip(row[0], row[1], strict=False):
            n = round(float(freq) * total)
            if n > RARE_DF:
                out[str(word)] = n
        return out

    def _df(self, term: Term) -> int:
        """Messages holding ``term`` (as the SQLite engine counts: the least frequent of a
        phrase's words; counted up to just past the common-word share)."""
        return self._dfs([term])[0]

    def _dfs(self, terms: Sequence[Term]) -> list[int]:
        """:meth:`_df` of each of ``terms``, the words not known yet counted in one
        statement (one round trip for the whole query)."""
        total, _avg = self._corpus()
        cap = max(int(COMMON_SHARE * total) + 2, RARE_DF * 10)
        common = self._common
        with self._lock:
            cached = [self._df_cache.get(t.fts()) for t in terms]
        wanted: dict[str, int | None] = {}
        for term, have in zip(terms, cached, strict=True):
            if have is not None:
                continue
            for i, tok in enumerate(map(query_lexeme, term.tokens)):
                prefix = term.prefix and i == len(term.tokens) - 1
                known = None if prefix else common.get(tok)
                wanted.setdefault(f"{tok}:*" if prefix else tok, known)
        counts = {q: n for q, n in wanted.items() if n is not None}
        ask = [q for q, n in wanted.items() if n is None]
        if ask:
            subs = ", ".join(
                "(SELECT count(*) FROM (SELECT 1 FROM sb_messages WHERE tsv @@ %s::tsquery "
                "LIMIT %s) c)"
                for _q in ask
            )
            row = self._one(f"SELECT {subs}", [v for q in ask for v in (q, cap)])
            counts.update({q: int(n) for q, n in zip(ask, row, strict=True)})
        out: list[int] = []
        for term, have in zip(terms, cached, strict=True):
            if have is None:
                toks = [
                    f"{tok}:*" if term.prefix and i == len(term.tokens) - 1 else tok
                    for i, tok in enumerate(map(query_lexeme, term.tokens))
                ]
                have = min((counts[q] for q in toks), default=0)
                with self._lock:
                    self._df_cache[term.fts()] = have
            out.append(have)
        return out

    def corpus_stats(self, pq: ParsedQuery) -> CorpusStats:
        total, avg = self._corpus()
        dfs = self._dfs(pq.terms)
        return CorpusStats(
            total=total,
            avg_chars=avg,
            dfs={t.fts(): df for t, df in zip(pq.terms, dfs, strict=True)},
        )

    # ------------------------------------------------------------------ search

    def search_candidates(
        self, query: str, *, window: int = 5, language: bool = False, limit: int = 20
    ) -> list[recall.Candidate]:
        """Relevance candidates (the team index always ranks by relevance)."""
        try:
            pq = parse_query(query)
        except QueryError:
            return []
        return self.relevance_candidates(pq, limit=limit, window=window).candidates

    def _relevance(
        self,
        pq: ParsedQuery,
        limit: int,
        window: int,
        corpus: CorpusStats | None = None,
        cancelled: Cancelled | None = None,
    ) -> Relevance:
        if pq.nothing_searchable:
            return Relevance(warnings=[NOTHING_SEARCHABLE])
        warnings: list[str] = [NO_HIDDEN] if pq.tools and not self._has_hidden() else []
        fuzzy = False
        if not pq.terms:
            scored = self._recent(pq, limit)
        else:
            scored = self._score(pq, corpus, limit, warnings)
            if not scored and self.has_trgm:
                fixed = self._fuzzy_query(pq)
                if fixed is not None:
                    fpq, note = fixed
                    more: list[str] = []
                    fscored = self._score(fpq, corpus, limit, more)
                    if fscored:
                        scored, pq, fuzzy = fscored, fpq, True
                        warnings.extend([note, *more])
        if cancelled is not None and cancelled():
            raise SearchCancelled
        cands = self._to_candidates(scored, pq, limit, window)
        return Relevance(cands, len(scored), False, fuzzy, warnings, "index")

    def _score(
        self, pq: ParsedQuery, corpus: CorpusStats | None, limit: int, warnings: list[str]
    ) -> list[Scored]:
        dfs = self._dfs(pq.terms)
        scorer: Scorer = scorer_for(pq, dfs, corpus, self._corpus)
        rows = self._candidates(pq, dfs, limit, warnings, scorer.rare)
        if pq.tools:  # in:tools: the hidden parts' matches too, at their turns
            rows = [*rows, *self._hidden_candidates(pq, limit)]
        scored = score_rows(rows, scorer)
        if (pq.excluded or len(pq.terms) > 1) and scored:
            texts = self._small_texts(scored)

            def holds(terms: Sequence[Term], which: Iterable[int], info: SessionInfo) -> set[int]:
                return self._holds(terms, which, info, texts.get(info.key))

            scored = refine(scorer, pq, scored, limit, holds)
        return scored

    def _small_texts(self, scored: list[Scored]) -> dict[int, list[str]]:
        """The texts of the short sessions among the best :data:`COVERAGE_CHECK` (those
        :func:`refine` may look in), read in one query."""
        best = sorted(scored, key=lambda s: s.score, reverse=True)[:COVERAGE_CHECK]
        sids = [
            s.info.key
            for s in best
            if s.info.chars is not None and s.info.chars <= SMALL_SESSION_CHARS
        ]
        out: dict[int, list[str]] = {sid: [] for sid in sids}
        if sids:
            for sid, text in self._all(
                "SELECT sid, text FROM sb_messages WHERE sid = ANY(%s) ORDER BY sid, id", (sids,)
            ):
                out[int(sid)].append(text)
        return out

    def _candidates(
        self,
        pq: ParsedQuery,
        dfs: Sequence[int],
        limit: int,
        warnings: list[str],
        rare: set[int],
    ) -> list[tuple[Any, ...]]:
        """:func:`~session_browser.core.index.candidates.bounded` over the GIN index. The
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
        return self._one("SELECT EXISTS (SELECT 1 FROM sb_hidden)")[0] is True

    def _hidden_candidates(self, pq: ParsedQuery, limit: int) -> list[tuple[Any, ...]]:
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
        total, _avg = self._corpus()
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
            rows = self._all(
                sql.replace("{bound}", " AND m.id > %s"),
                [query, low, *fparams, scan, per_session, limit],
            )
            if rows and int(rows[0][-1]) >= scan:
                return [r[:-1] for r in rows]
        rows = self._all(sql.replace("{bound}", ""), [query, *fparams, scan, per_session, limit])
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
        row = self._one("SELECT min(id), max(id) FROM sb_messages")
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
                texts = [
                    r[0]
                    for r in self._all("SELECT text FROM sb_messages WHERE sid = %s", (info.key,))
                ]
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
            row = self._one(
                "SELECT 1 FROM sb_messages WHERE sid = %s AND tsv @@ %s::tsquery LIMIT 1",
                (info.key, term_query(terms[i])),
            )
            if row is not None:
                out.add(i)
        return out

    def _recent(self, pq: ParsedQuery, limit: int) -> list[Scored]:
        """A filter-only query: every session with a message passing the filters, newest
        first, anchored at its latest matching message."""
        fsql, fparams = pg_where(pq.filter_values)
        rows = self._all(
            "SELECT m.sid, max(coalesce(m.ts, s.updated_ts)), count(*) FROM sb_messages m "
            f"JOIN sb_sessions s ON s.sid = m.sid WHERE true{fsql} GROUP BY m.sid",
            fparams,
        )
        if pq.excluded and rows:
            gone = {
                r[0]
                for r in self._all(
                    "SELECT DISTINCT sid FROM sb_messages WHERE tsv @@ %s::tsquery",
                    (any_query(pq.excluded),),
                )
            }
            rows = [r for r in rows if r[0] not in gone]
        if not rows:
            return []
        latest = {int(sid): (t, int(n)) for sid, t, n in rows}
        infos = [
            SessionInfo(sid, session_id, f"{sid}/{file}", when, bool(tagged), bool(paced), lineage)
            for sid, session_id, file, when, tagged, paced, lineage in self._all(
                "SELECT sid, session_id, file, when_, tagged, machine_paced, lineage "
                "FROM sb_sessions WHERE sid = ANY(%s)",
                (list(latest),),
            )
        ]

        def anchor(info: SessionInfo) -> Any:
            return self._one(
                "SELECT m.idx, m.text FROM sb_messages m JOIN sb_sessions s ON s.sid = m.sid "
                f"WHERE m.sid = %s{fsql} ORDER BY coalesce(m.ts, s.updated_ts) DESC, m.id DESC "
                "LIMIT 1",
                [info.key, *fparams],
            )

        return recent_first(infos, latest, limit, anchor)[1]

    # ------------------------------------------------------------------ typo pass

    def _fuzzy_query(self, pq: ParsedQuery) -> tuple[ParsedQuery, Note] | None:
        return corrected(pq, lambda tok: self._df(Term((tok,), tok)) > 0, self._correct)

    def _correct(self, tok: str) -> str | None:
        """The most frequent vocabulary word one edit away (two for long words), found
        among the words of similar trigrams."""
        if len(tok) < 3 or len(tok) > 40:
            return None
        limit = 1 if len(tok) < 6 else 2
        close = [
            r[0]
            for r in self._all(
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
            key = (d, -self._df(Term((word,), word)), word)
            if best is None or key < best:
                best = key
        return None if best is None else best[2]

    # ------------------------------------------------------------------ hits

    def _to_candidates(
        self, scored: list[Scored], pq: ParsedQuery, limit: int, window: int
    ) -> list[recall.Candidate]:
        plan: list[tuple[Scored, bool]] = []  # (scored, full hit)
        shown: set[str] = set()
        for s in order(scored, pq):
            key = lineage_key(s.info)
            if key in shown:
                plan.append((s, False))
            elif len(shown) < limit:
                shown.add(key)
                plan.append((s, True))
        wanted = [s.info.key for s, full in plan if full]
        rows = (
            {
                int(r[0]): r[1:]
                for r in self._all(
                    "SELECT sid, data, kind, machine, os_user FROM sb_sessions WHERE sid = ANY(%s)",
                    (wanted,),
                )
            }
            if wanted
            else {}
        )
        return [
            recall.Candidate(
                self._full_hit(s, pq, window, rows.get(s.info.key)) if full else self._light_hit(s),
                s.info.lineage,
            )
            for s, full in plan
        ]

    def _light_hit(self, s: Scored) -> SessionHit:
        return light_hit(s, self.source_kind, self.label)

    def _full_hit(
        self, s: Scored, pq: ParsedQuery, window: int, row: Sequence[Any] | None
    ) -> SessionHit:
        if row is None:  # replaced by a push meanwhile
            return self._light_hit(s)
        data = orjson.loads(row[0])
        messages = recall.project(data)
        store = origin_label(row[2], row[3])
        hit = session_hit(s, pq, data, messages, window, str(row[1]), store)
        return self._light_hit(s) if hit is None else hit

    # ------------------------------------------------------------------ reading

    def _summary(self, row: Sequence[Any]) -> SessionSummary:
        return summary_row(row[:12], str(row[12]), origin_label(row[13], row[14]))

    def recent(self, *, limit: int = 10) -> list[SessionSummary]:
        rows = self._all(
            f"SELECT {_SUMMARY_COLS} FROM sb_sessions "
            "ORDER BY updated_ts DESC NULLS LAST, sid DESC LIMIT %s",
            (limit,),
        )
        return [self._summary(r) for r in rows]

    def summaries(self) -> list[SessionSummary]:
        rows = self._all(
            f"SELECT {_SUMMARY_COLS} FROM sb_sessions ORDER BY updated_ts DESC NULLS LAST, sid DESC"
        )
        return [self._summary(r) for r in rows]

    def browse(
        self, *, offset: int = 0, limit: int = 100, sort: str = "updated", text: str = ""
    ) -> list[SessionSummary]:
        """One page of the team's session list (``text``: title or id contains it)."""
        column = _SORTS.get(sort)
        if column is None:
            raise ValueError(f"sort must be one of {tuple(_SORTS)}, not {sort!r}")
        if limit <= 0:
            return []
        where, params = self._text_where(text)
        rows = self._all(
            f"SELECT {_SUMMARY_COLS} FROM sb_sessions{where} "
            f"ORDER BY {column} DESC NULLS LAST, sid DESC OFFSET %s LIMIT %s",
            [*params, max(0, offset), limit],
        )
        return [self._summary(r) for r in rows]

    @staticmethod
    def _text_where(text: str) -> tuple[str, list[Any]]:
        if not text:
            return "", []
        like = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        return " WHERE (title ILIKE %s OR session_id ILIKE %s)", [like, like]

    def count(self, *, text: str = "") -> int:
        where, params = self._text_where(text)
        return int(self._one(f"SELECT count(*) FROM sb_sessions{where}", params)[0])

    def status(self) -> JSONDict:
        """What the team index holds: sessions, messages, machines (with their sessions),
        users, the schema version, and its URL without the password."""
        row = self._one(
            "SELECT count(*), coalesce(sum(nmsg), 0), count(DISTINCT machine), "
            "count(DISTINCT os_user), max(pushed_at)::text FROM sb_sessions"
        )
        version = self._one("SELECT max(version) FROM sb_schema")
        machines = self._all(
            "SELECT machine, count(*) FROM sb_sessions GROUP BY machine ORDER BY 2 DESC, 1"
        )
        return {
            "index": self.masked,
            "schema_version": int(version[0]) if version and version[0] is not None else None,
            "sessions": int(row[0]),
            "messages": int(row[1]),
            "machines": int(row[2]),
            "users": int(row[3]),
            "last_push": row[4],
            "per_machine": {str(m): int(n) for m, n in machines},
            "typo_pass": self.has_trgm,
        }

    def reconcile(self, **_kwargs: Any) -> None:
        """Nothing to bring up to date here: machines push into the team index."""

    def start_reconcile(self, *, cancel: threading.Event | None = None) -> threading.Thread:
        thread = threading.Thread(target=lambda: None, daemon=True)
        thread.start()
        return thread

    def copies(self, session_id: str) -> list[tuple[str, str]]:
        """(machine, user) of each copy of ``session_id`` held (one per machine and user),
        newest first."""
        rows = self._all(
            f"SELECT machine, os_user FROM sb_sessions WHERE session_id = %s "
            f"ORDER BY {NEWEST_FIRST}",
            (session_id,),
        )
        return [(str(m), str(u)) for m, u in rows]

    def choose(self, session_id: str, machine: str | None = None) -> tuple[str, str]:
        """Read the copy of ``session_id`` pushed from ``machine`` (its name, or
        ``user@name``) from now on, and return its (machine, user). Without ``machine``, the
        only copy held. Raises :class:`CopyNotChosen` when no copy, or more than one, fits."""
        held = self.copies(session_id)
        fits = [(m, u) for m, u in held if machine is None or machine in (m, origin_label(m, u))]
        if len(fits) != 1:
            raise CopyNotChosen(
                session_id,
                [origin_label(m, u) for m, u in held],
                [origin_label(m, u) for m, u in fits],
            )
        self._chosen[session_id] = fits[0]
        return fits[0]

    def _copy(self, columns: str, session_id: str) -> Any:
        """``columns`` of the copy of ``session_id`` read: the one chosen, else the newest."""
        chosen = self._chosen.get(session_id)
        if chosen is None:
            return self._one(f"SELECT {columns} FROM sb_sessions {_NEWEST_COPY}", (session_id,))
        return self._one(f"SELECT {columns} FROM sb_sessions {_CHOSEN_COPY}", (session_id, *chosen))

    def _data(self, session_id: str) -> JSONDict | None:
        row = self._copy("data", session_id)
        if row is None:
            return None
        data = orjson.loads(row[0])
        return data if isinstance(data, dict) else None

    def session_kind(self, session_id: str) -> str | None:
        """The kind of source (``claude``, ``codex``, ...) that wrote the pushed session
        ``session_id``, of the copy :meth:`read_raw` reads; None when none is held."""
        row = self._copy("kind", session_id)
        return None if row is None else str(row[0])

    def session_exists(self, session_id: str) -> bool:
        return (
            self._one("SELECT 1 FROM sb_sessions WHERE session_id = %s LIMIT 1", (session_id,))
            is not None
        )

    def get_session(self, session_id: str) -> SessionData:
        data = self._data(session_id)
        if data is None:
            return SessionData(session_id=session_id)
        return SessionData.from_dict(data)

    def read_raw(self, session_id: str) -> JSONDict | None:
        """The pushed session dict (as the source read it, redacted when pushed so)."""
        return self._data(session_id)

    def window(
        self, session_id: str, around_message_id: Any = None, *, window: int = 5
    ) -> list[JSONDict]:
        data = self._data(session_id)
        if data is None:
            return []
        messages = recall.project(data)
        anchor = recall.parse_anchor(around_message_id, len(messages))
        return recall.window_slice(messages, anchor, window)

    def projection(self, session_id: str, *, include_hidden: bool = False) -> list[JSONDict]:
        """The pushed session's messages, whole (``KeyError`` when the team index no longer
        holds it); the hidden parts pushed with it are not shown."""
        data = self._data(session_id)
        if data is None:
            raise KeyError(session_id)
        messages = recall.project(data)
        return recall.window_slice(messages, 0, len(messages))

    def session_path(self, session_id: str) -> Path | None:
        return None  # the file is on the machine that pushed it
