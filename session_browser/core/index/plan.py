"""Candidate reads: document frequencies, the filters as SQL, bounded candidate messages, exact
counts, filter-only listings and the look-ups that refine coverage."""

from __future__ import annotations

import contextlib
import re
import sqlite3
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import Any

from ..query import (
    ParsedQuery,
    Term,
    fold,
    fts_expr,
    like_pattern,
    sql_where,
    tokenize,
)
from ..search.candidates import (
    PER_SESSION,
    RARE_DF,
    SMALL_SESSION_CHARS,
    bounded,
    scorer_for,
)
from ..search.pick import recent_first
from ..search.rank import (
    CorpusStats,
    Scored,
    Scorer,
    SessionInfo,
)
from ..search.rows import COMPOUND_CHUNK, IN_CHUNK
from .newest import NoOwner, newest_ids
from .owners import RowOwners, rowids
from .recall import RecallReads
from .schema import IndexDatabase

COUNT_BUDGET = 3_000  # postings read at most to count the matched sessions exactly
_READS_SESSIONS = re.compile(r"\bs\.")  # a filter clause reading a sessions column


class IndexPlan(IndexDatabase):
    """Reads the candidates of a query from the index (the relevance procedure,
    :mod:`session_browser.core.search.procedure`, scores them)."""

    _owners: RowOwners
    _recall: RecallReads

    def _stats_for(self, db: sqlite3.Connection) -> None:
        """Drop the cached statistics (:meth:`_corpus_stats`, :meth:`_df`) when the index
        changed since they were read: another connection committed (a build's batch, another
        process) or this one wrote. In a read transaction, the version is the snapshot's (SQLite
        looks for other connections' commits when a read transaction starts), so what is
        cached is what that version holds. A build adds a batch every few seconds:
        a word counted absent early in a first build would otherwise stay absent (and its
        hits unsearched) until the build ends."""
        key = (int(db.execute("PRAGMA data_version").fetchone()[0]), db.total_changes)
        if key != self._stats_key:
            self._stats = None
            self._df_cache.clear()
            self._stats_key = key

    def _corpus_stats(self, db: sqlite3.Connection) -> tuple[int, float]:
        if self._stats is None:
            n, chars = db.execute(
                "SELECT coalesce(sum(nmsg), 0), coalesce(sum(chars), 0) FROM sessions"
            ).fetchone()
            self._stats = (int(n), (chars / n) if n else 1.0)
        return self._stats

    def _df(self, db: sqlite3.Connection, term: Term) -> int:
        """Messages holding ``term`` (an upper bound for phrases; capped for prefixes).

        FTS5 counts a word's documents by reading its whole posting list (milliseconds for
        the commonest words), so the frequent words' counts are kept in ``common_terms``
        (taken at the end of a first build; close enough as the index grows) and FTS5 is
        asked only about the others."""
        key = term.fts()
        cached = self._df_cache.get(key)
        if cached is not None:
            return cached
        dfs: list[int] = []
        for i, tok in enumerate(term.tokens):
            if term.prefix and i == len(term.tokens) - 1:
                upper = tok + "\U0010ffff"
                common = db.execute(
                    "SELECT coalesce(sum(doc), 0) FROM common_terms WHERE term >= ? AND term < ?",
                    (tok, upper),
                ).fetchone()[0]
                if common > RARE_DF:
                    dfs.append(int(common))
                    continue
                rows = db.execute(
                    "SELECT doc FROM fts_vocab WHERE term >= ? AND term < ? LIMIT 200",
                    (tok, upper),
                ).fetchall()
                total = sum(r[0] for r in rows)
                dfs.append(total if len(rows) < 200 else max(total, RARE_DF * 10))
            else:
                row = db.execute("SELECT doc FROM common_terms WHERE term = ?", (tok,)).fetchone()
                if row is None:
                    row = db.execute("SELECT doc FROM fts_vocab WHERE term = ?", (tok,)).fetchone()
                dfs.append(int(row[0]) if row else 0)
        value = min(dfs) if dfs else 0
        if len(self._df_cache) > 4096:
            self._df_cache.clear()
        self._df_cache[key] = value
        return value

    def _filter_sql(self, pq: ParsedQuery) -> tuple[str, list[Any]]:
        """The query's filters as clauses over ``m`` (messages) and ``s`` (sessions), from
        the one filter table (``source:`` naming this store's kind keeps every session)."""
        return sql_where(pq.filter_values, self.source_kind)

    _CAND_COLS = (
        "m.sid, m.idx, m.role, m.archived, m.ts, m.text, s.session_id, s.file, s.when_, "
        "s.tagged, s.machine, s.lineage, s.row_lo, s.row_hi, s.chars, m.id"
    )

    def _fts_candidates(
        self,
        db: sqlite3.Connection,
        pq: ParsedQuery,
        dfs: Sequence[int],
        limit: int,
        warnings: list[str],
        rare: set[int] | frozenset[int] = frozenset(),
    ) -> list[tuple[Any, ...]]:
        """:func:`~session_browser.core.search.candidates.bounded` over FTS5 (``rare``: the
        terms that may fill)."""
        ex = pq.excluded

        def every(live: list[tuple[int, int]], n: int) -> list[tuple[Any, ...]]:
            expr = fts_expr(pq.terms, op="AND", excluded=ex)
            return self._fetch(db, pq, expr, None, n, most=live[0][0])

        def some(terms: list[Term], n: int, df: int) -> list[tuple[Any, ...]]:
            return self._fetch(db, pq, fts_expr(terms, excluded=ex), None, n, most=df)

        return bounded(pq, dfs, limit, warnings, rare, every, some)

    def _fetch(
        self,
        db: sqlite3.Connection,
        pq: ParsedQuery,
        expr: str | None,
        like_terms: list[Term] | None,
        limit: int,
        per_session: int = PER_SESSION,
        most: int | None = None,
    ) -> list[tuple[Any, ...]]:
        """The newest messages matching ``expr`` (or one of ``like_terms``) and the filters,
        at most ``per_session`` of one session: a long session never fills the candidates
        and hides every other one.

        A session's messages have consecutive ids, so once a session has given its share,
        the next read starts below its first message: only ids are read until the rows are
        chosen, and their text is read once. ``most``: about how many messages ``expr``
        matches (its document frequencies); when they fit in one read, they are all read in
        the index's own order and the newest taken here (FTS5 walks a posting list
        backwards at about half the speed), with the same choice whatever the count."""
        fsql, fparams = self._filter_sql(pq)
        # Sessions are joined only when a filter reads them: one lookup less per posting.
        join = " JOIN sessions s ON s.sid = m.sid" if _READS_SESSIONS.search(fsql) else ""
        if expr is not None:
            source = f"fts JOIN messages m ON m.id = fts.rowid{join}"
            where, params, below = "fts MATCH ?", [expr], "fts.rowid"
        else:
            source = f"messages m{join}"
            where, params, below = "1", [], "m.id"
            if like_terms:
                where = "(" + " OR ".join("m.text LIKE ? ESCAPE '\\'" for _ in like_terms) + ")"
                params = [like_pattern(t) for t in like_terms]

        def first_of(sid: int) -> int | None:
            lo = db.execute("SELECT row_lo FROM sessions WHERE sid = ?", (sid,)).fetchone()
            return None if lo is None else int(lo[0])

        at_once = expr is not None and most is not None and most <= 2 * limit
        chosen: list[int] | None = None
        if expr is not None and not fsql:
            # The matches' sessions from the row ranges (:mod:`.owners`): the postings are
            # read alone, not each looked up in ``messages`` (cold pages of the biggest table).
            los, sids = self._owners.ranges(db)

            def owner(mid: int) -> int | None:
                k = bisect_right(los, mid)
                return sids[k - 1] if k else None

            with contextlib.suppress(NoOwner):  # (a row below every range: as below)
                chosen = newest_ids(
                    db,
                    "SELECT fts.rowid FROM fts WHERE fts MATCH ?",
                    params,
                    below,
                    limit,
                    per_session,
                    first_of,
                    at_once=at_once,
                    owner=owner,
                )
        if chosen is None:
            chosen = newest_ids(
                db,
                f"SELECT m.id, m.sid FROM {source} WHERE {where}{fsql}",
                [*params, *fparams],
                below,
                limit,
                per_session,
                first_of,
                at_once=at_once,
            )
        rows: list[tuple[Any, ...]] = []
        for start in range(0, len(chosen), IN_CHUNK):
            chunk = chosen[start : start + IN_CHUNK]
            rows.extend(
                db.execute(
                    f"SELECT {self._CAND_COLS} FROM messages m JOIN sessions s ON s.sid = m.sid "
                    f"WHERE m.id IN ({','.join('?' * len(chunk))})",
                    chunk,
                )
            )
        rows.sort(key=lambda r: r[-1], reverse=True)
        return rows

    def _scorer(
        self,
        db: sqlite3.Connection,
        pq: ParsedQuery,
        dfs: Sequence[int],
        corpus: CorpusStats | None,
    ) -> Scorer:
        """The scorer for ``pq``: this index's statistics, or the shared ``corpus``."""
        return scorer_for(pq, dfs, corpus, lambda: self._corpus_stats(db))

    def _count_matches(
        self, db: sqlite3.Connection, pq: ParsedQuery, dfs: Sequence[int], rare: set[int]
    ) -> tuple[int, bool]:
        """(sessions of the index that are hits for ``pq`` whatever the candidate bound,
        exact): a message passing the filters holds one of the query's rarer terms (any term
        when all are common), and no message holds an excluded term. When that would read
        more than :data:`COUNT_BUDGET` postings, the sessions of the first
        :data:`COUNT_BUDGET` matching messages (in row order) are counted: a lower bound that
        depends only on the data, never on how many hits were asked for or on time."""
        which = [i for i in range(len(pq.terms)) if (not rare or i in rare) and dfs[i] > 0]
        if not which:
            return 0, True
        cost = sum(dfs[i] for i in which) + sum(self._df(db, t) for t in pq.excluded)
        exact = cost <= COUNT_BUDGET
        expr = fts_expr([pq.terms[i] for i in which])
        fsql, fparams = self._filter_sql(pq)
        sids = None if fsql else self._posting_sessions(db, expr, None if exact else COUNT_BUDGET)
        if sids is None:
            # Sessions are joined only when a filter reads them: one lookup less per posting.
            join = " JOIN sessions s ON s.sid = m.sid" if _READS_SESSIONS.search(fsql) else ""
            bound = "" if exact else f" ORDER BY fts.rowid LIMIT {COUNT_BUDGET}"
            # (no DISTINCT: SQLite's temporary b-tree for it costs more than the set here)
            sids = {
                r[0]
                for r in db.execute(
                    "SELECT m.sid FROM fts JOIN messages m ON m.id = fts.rowid"
                    f"{join} WHERE fts MATCH ?{fsql}{bound}",
                    [expr, *fparams],
                )
            }
        if sids and pq.excluded:
            sids -= self._excluded_sids(db, pq)
        return len(sids), exact

    def _posting_sessions(
        self, db: sqlite3.Connection, expr: str, first: int | None = None
    ) -> set[int] | None:
        """The sessions with a message matching the FTS5 expression ``expr`` (``first``:
        among the first that many matching messages, in row order), from the postings'
        rowids and the sessions' row ranges (:mod:`.owners`: no ``messages`` page read);
        None when a rowid is below every range (then ask ``messages``)."""
        # (one string of the rowids: handing over a row a posting costs more than parsing)
        args: tuple[str, ...] | tuple[str, int]
        if first is None:
            sql, args = "SELECT group_concat(rowid) FROM fts WHERE fts MATCH ?", (expr,)
        else:
            sql = (
                "SELECT group_concat(rowid) FROM "
                "(SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rowid LIMIT ?)"
            )
            args = (expr, first)
        found = db.execute(sql, args).fetchone()[0]
        if not found:
            return set()
        return self._owners.sessions_of(db, rowids(found))

    def _excluded_sids(self, db: sqlite3.Connection, pq: ParsedQuery) -> set[int]:
        """Sessions of the index with a message holding one of ``pq``'s excluded terms."""
        if not pq.excluded:
            return set()
        if self.has_fts:
            expr = fts_expr(list(pq.excluded))
            found = self._posting_sessions(db, expr)
            if found is not None:
                return found
            return {
                r[0]
                for r in db.execute(
                    "SELECT DISTINCT m.sid FROM fts JOIN messages m ON m.id = fts.rowid "
                    "WHERE fts MATCH ?",
                    (expr,),
                )
            }
        out: set[int] = set()
        for term in pq.excluded:
            for sid, text in db.execute(
                "SELECT sid, text FROM messages WHERE text LIKE ? ESCAPE '\\'",
                (like_pattern(term),),
            ):
                if sid not in out and term.occurrences(tokenize(text)):
                    out.add(sid)
        return out

    def _recent_index(
        self, db: sqlite3.Connection, pq: ParsedQuery, limit: int
    ) -> tuple[list[Scored], int]:
        """A filter-only query: every session with a message passing the filters (and none
        holding an excluded term), counted in SQL, ranked by its latest matching message
        (:func:`recency`) and anchored there. Only the shown sessions and the continuations
        that fold into them are looked at further."""
        fsql, fparams = self._filter_sql(pq)
        rows = db.execute(
            "SELECT m.sid, max(coalesce(m.ts, s.updated_ts)), count(*) FROM messages m "
            f"JOIN sessions s ON s.sid = m.sid WHERE 1{fsql} GROUP BY m.sid",
            fparams,
        ).fetchall()
        if pq.excluded and rows:
            gone = self._excluded_sids(db, pq)
            rows = [r for r in rows if r[0] not in gone]
        if not rows:
            return [], 0
        latest = {int(sid): (t, int(n)) for sid, t, n in rows}
        infos: dict[int, SessionInfo] = {}
        sids = list(latest)
        for start in range(0, len(sids), IN_CHUNK):
            chunk = sids[start : start + IN_CHUNK]
            marks = ",".join("?" * len(chunk))
            for sid, session_id, file, when, tagged, machine, lineage, lo, hi in db.execute(
                "SELECT sid, session_id, file, when_, tagged, machine, lineage, row_lo, row_hi "
                f"FROM sessions WHERE sid IN ({marks})",
                chunk,
            ):
                infos[sid] = SessionInfo(
                    sid, session_id, file, when, bool(tagged), bool(machine), lineage, lo, hi
                )

        def anchor(info: SessionInfo) -> Any:
            return db.execute(
                "SELECT m.idx, m.text FROM messages m JOIN sessions s ON s.sid = m.sid "
                f"WHERE m.id BETWEEN ? AND ?{fsql} "
                "ORDER BY coalesce(m.ts, s.updated_ts) DESC, m.id DESC LIMIT 1",
                [info.row_lo, info.row_hi, *fparams],
            ).fetchone()

        order, out = recent_first(infos.values(), latest, limit, anchor)
        return out, len(order)

    def _sessions_hold(
        self,
        db: sqlite3.Connection,
        terms: Sequence[Term],
        asks: Sequence[tuple[Sequence[int], SessionInfo]],
    ) -> list[set[int]]:
        """:meth:`_session_holds` for several sessions. When every term is one word, the
        short sessions' texts come from one query, each session's messages joined in SQLite
        (a word never spans two messages, so joining them is all :meth:`_session_holds`
        does with them; one row a session instead of one a message, ~40% less time)."""
        if any(len(terms[i].tokens) > 1 for which, _info in asks for i in which):
            return [self._session_holds(db, terms, which, info) for which, info in asks]
        out: list[set[int]] = []
        small: list[int] = []  # places in ``asks`` of the short sessions
        for k, (which, info) in enumerate(asks):
            out.append(set())
            if which and info.chars is not None and info.chars <= SMALL_SESSION_CHARS:
                small.append(k)
            else:
                out[k] = self._session_holds(db, terms, which, info)
        one = "SELECT ?, group_concat(text, char(10)) FROM messages WHERE id BETWEEN ? AND ?"
        for start in range(0, len(small), COMPOUND_CHUNK):
            part = small[start : start + COMPOUND_CHUNK]
            params = [x for k in part for x in (k, asks[k][1].row_lo, asks[k][1].row_hi)]
            for k, whole in db.execute(" UNION ALL ".join([one] * len(part)), params):
                folded = fold(whole or "")
                out[k] = {i for i in asks[k][0] if terms[i].count_in(folded, 1)}
        return out

    def _session_holds(
        self,
        db: sqlite3.Connection,
        terms: Sequence[Term],
        which: Iterable[int],
        info: SessionInfo,
    ) -> set[int]:
        """Which of ``terms`` (numbers in ``which``) some message of the session holds.

        A short session's text is read once and every term looked for in it (one query
        instead of one per term); a long one is asked of the index term by term."""
        wanted = list(which)
        if not wanted:
            return set()
        lo, hi = info.row_lo, info.row_hi
        if info.chars is None or info.chars > SMALL_SESSION_CHARS:
            return {i for i in wanted if self._session_has(db, terms[i], lo, hi)}
        texts = [
            r[0] for r in db.execute("SELECT text FROM messages WHERE id BETWEEN ? AND ?", (lo, hi))
        ]
        whole = fold("\n".join(texts))  # a word never spans two messages; a phrase
        return {  # might, so phrases are looked for message by message
            i
            for i in wanted
            if (
                terms[i].count_in(whole, 1)
                if len(terms[i].tokens) == 1
                else any(terms[i].count_in(fold(t), 1) for t in texts)
            )
        }

    def _session_has(self, db: sqlite3.Connection, term: Term, lo: int, hi: int) -> bool:
        """Whether any message of the session (rowids ``lo``..``hi``) holds ``term``."""
        if self.has_fts:
            row = db.execute(
                "SELECT 1 FROM fts WHERE fts MATCH ? AND rowid BETWEEN ? AND ? LIMIT 1",
                (term.fts(), lo, hi),
            ).fetchone()
            return row is not None
        for (text,) in db.execute(
            "SELECT text FROM messages WHERE id BETWEEN ? AND ? AND text LIKE ? ESCAPE '\\'",
            (lo, hi, like_pattern(term)),
        ):
            if term.occurrences(tokenize(text)):
                return True
        return False
