"""``PgIndexStore``: searching and reading the team index (PostgreSQL) with the recall API of a
store, so a :class:`~session_browser.core.multi.StoreGroup`, the CLI and the benchmark use it
as they use a local store.

Its searches are the one relevance procedure (:mod:`session_browser.core.search.procedure`)
over :class:`~.engine.PgEngine`, so both engines put the same sessions on top with the same
scores. Hits and ``show`` read the pushed session from the database: the files are on other
machines. A session id is one session per machine and user (the newest copy pushed, see
:mod:`.schema`); the same id from several machines (or users) is several sessions, each hit
and listed row naming its ``user@machine``. Reading an id held from several, the newest is
read unless one is chosen (:meth:`PgIndexStore.choose`, which refuses to guess).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from .. import recall
from ..model import JSONDict, SessionData, SessionSummary
from ..query import ParsedQuery, QueryError, Term, parse_query
from ..search import procedure
from ..search.candidates import RARE_DF
from ..search.pick import SUMMARY_COLUMNS, summary_row
from ..search.rank import COMMON_SHARE, CorpusStats
from ..search.results import Cancelled, Relevance
from ..search.searching import IndexSearch
from .conn import PgIndexError, error_line, mask_url, psycopg_module
from .engine import PgEngine, origin_label
from .schema import NEWEST_FIRST, ensure_schema
from .tsv import query_lexeme

_SORTS = {"updated": "updated_ts", "created": "created", "size": "chars"}  # browse order
STATS_SECONDS = 10.0  # collection statistics are read again after this long
# The listed sessions (:data:`~session_browser.core.search.pick.SUMMARY_COLUMNS`, no file size
# here), then where each comes from.
_SUMMARY_COLS = SUMMARY_COLUMNS.replace(" size,", " NULL,") + ", kind, machine, os_user"


# The copy of a session id read (pushed from several machines, the newest one).
_NEWEST_COPY = f"WHERE session_id = %s ORDER BY {NEWEST_FIRST} LIMIT 1"
# ... or the one chosen
_CHOSEN_COPY = "WHERE session_id = %s AND machine = %s AND os_user = %s"


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
        return procedure.relevance(PgEngine(self), pq, limit, window, corpus, cancelled)

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

    def owned_dirs(self) -> list[Path]:
        return []  # its sessions live in the database
