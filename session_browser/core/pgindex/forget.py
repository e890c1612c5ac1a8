"""Forgetting on purpose in the team index: the rows of a session (or of the sessions holding
a text), its messages and hidden parts, the files known to hold older copies of it, the
words only it held in the typo pass's vocabulary; then ``VACUUM FULL`` of our tables when
the role owns them (else the server keeps the dead rows until its own vacuum).

What the server may still hold whatever we do: its WAL (until recycled), any base backup or
replica, and (without the vacuum) dead tuples in the table files."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..query import tokenize
from ..search import lexical
from .conn import PgIndexError, error_line, psycopg_module
from .schema import ensure_schema
from .tsv import message_vector

TABLES = ("sb_sessions", "sb_messages", "sb_hidden", "sb_older", "sb_terms", "sb_words")


@dataclass
class TeamCopy:
    """One session's copy in the team index."""

    sid: int
    session_id: str
    machine: str
    user: str


@dataclass
class TeamForgot:
    sessions: int = 0
    messages: int = 0
    hidden: int = 0
    terms: int = 0
    vacuumed: list[str] = field(default_factory=list)
    not_vacuumed: list[str] = field(default_factory=list)


class TeamIndex:
    """One connection to the team index at ``url`` for a forget."""

    def __init__(self, url: str) -> None:
        self.url = url
        psycopg = psycopg_module()
        self._errors = psycopg.Error
        try:
            self.conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
            ensure_schema(self.conn)
        except psycopg.Error as exc:
            raise PgIndexError(f"cannot use the team index: {error_line(exc, url)}") from exc

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> TeamIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        try:
            return list(self.conn.execute(sql, params).fetchall())
        except self._errors as exc:
            raise PgIndexError(f"the team index failed: {error_line(exc, self.url)}") from exc

    def sessions_data(self) -> Iterator[tuple[str, str]]:
        """(session id, its JSON as pushed) of every session held, one at a time."""
        try:
            with self.conn.transaction(), self.conn.cursor(name="sb_forget_scan") as cur:
                cur.execute("SELECT session_id, data FROM sb_sessions ORDER BY sid")
                for sid, data in cur:
                    yield str(sid), str(data)
        except self._errors as exc:
            raise PgIndexError(f"the team index failed: {error_line(exc, self.url)}") from exc

    def holding_ids(self, session_ids: Sequence[str]) -> list[TeamCopy]:
        rows = self._run(
            "SELECT sid, session_id, machine, os_user FROM sb_sessions "
            "WHERE session_id = ANY(%s) ORDER BY sid",
            (list(session_ids),),
        )
        return [TeamCopy(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]

    def holding_text(self, text: str) -> list[TeamCopy]:
        rows = self._run(
            "SELECT sid, session_id, machine, os_user FROM sb_sessions WHERE sid IN ("
            "SELECT sid FROM sb_sessions WHERE strpos(data, %(t)s) > 0 "
            "OR strpos(coalesce(title, ''), %(t)s) > 0 "
            "UNION SELECT sid FROM sb_messages WHERE strpos(text, %(t)s) > 0 "
            "UNION SELECT sid FROM sb_hidden WHERE strpos(text, %(t)s) > 0) ORDER BY sid",
            {"t": text},
        )
        return [TeamCopy(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]

    def forget(self, copies: Sequence[TeamCopy]) -> TeamForgot:
        """Delete ``copies`` (one transaction), then vacuum (see the module doc)."""
        out = TeamForgot()
        if not copies:
            return out
        sids = [c.sid for c in copies]
        try:
            with self.conn.transaction():
                words: set[str] = set()
                for table in ("sb_messages", "sb_hidden"):
                    for (text,) in self.conn.execute(
                        f"SELECT text FROM {table} WHERE sid = ANY(%s)", (sids,)
                    ):
                        words.update(tokenize(str(text)))
                for (title,) in self.conn.execute(
                    "SELECT coalesce(title, '') FROM sb_sessions WHERE sid = ANY(%s)", (sids,)
                ):
                    words.update(tokenize(str(title)))
                out.messages = self.conn.execute(
                    "DELETE FROM sb_messages WHERE sid = ANY(%s)", (sids,)
                ).rowcount
                out.hidden = self.conn.execute(
                    "DELETE FROM sb_hidden WHERE sid = ANY(%s)", (sids,)
                ).rowcount
                self.conn.execute("DELETE FROM sb_words WHERE sid = ANY(%s)", (sids,))
                out.sessions = self.conn.execute(
                    "DELETE FROM sb_sessions WHERE sid = ANY(%s)", (sids,)
                ).rowcount
                for c in copies:
                    self.conn.execute(
                        "DELETE FROM sb_older WHERE machine = %s AND os_user = %s "
                        "AND session_id = %s",
                        (c.machine, c.user, c.session_id),
                    )
                out.terms = self._drop_words(words)
        except self._errors as exc:
            raise PgIndexError(f"the team index failed: {error_line(exc, self.url)}") from exc
        self._vacuum(out)
        return out

    def redact(
        self, copies: Sequence[TeamCopy], texts: Sequence[str], placeholder: str
    ) -> TeamForgot:
        """Replace ``texts`` with ``placeholder`` in ``copies`` (the session's JSON, its
        title, its messages and hidden parts with their vectors), one transaction; then the
        words only they held leave the vocabulary and our tables are vacuumed."""
        out = TeamForgot()
        if not copies:
            return out
        sids = [c.sid for c in copies]
        try:
            with self.conn.transaction():
                for text in texts:
                    out.sessions += self.conn.execute(
                        "UPDATE sb_sessions SET data = replace(data, %(t)s, %(p)s), "
                        "title = replace(title, %(t)s, %(p)s) WHERE sid = ANY(%(s)s) "
                        "AND (strpos(data, %(t)s) > 0 OR strpos(coalesce(title, ''), %(t)s) > 0)",
                        {"t": text, "p": placeholder, "s": sids},
                    ).rowcount
                    for table in ("sb_messages", "sb_hidden"):
                        rows = self.conn.execute(
                            f"SELECT id, text FROM {table} WHERE sid = ANY(%s) "
                            "AND strpos(text, %s) > 0",
                            (sids, text),
                        ).fetchall()
                        for row_id, old in rows:
                            new = str(old).replace(text, placeholder)
                            literal, _toks = message_vector(new)
                            self.conn.execute(
                                f"UPDATE {table} SET text = %s, tsv = %s::tsvector WHERE id = %s",
                                (new, literal, row_id),
                            )
                        if table == "sb_messages":
                            out.messages += len(rows)
                        else:
                            out.hidden += len(rows)
                self._rewords(sids)
                words = {w for t in texts for w in tokenize(t)}
                out.terms = self._drop_words(words)
        except self._errors as exc:
            raise PgIndexError(f"the team index failed: {error_line(exc, self.url)}") from exc
        self._vacuum(out)
        return out

    def _rewords(self, sids: Sequence[int]) -> None:
        """Index the content words (session recall) of ``sids`` again, from their messages
        as they are now: the words of a replaced text leave ``sb_words``."""
        self.conn.execute("DELETE FROM sb_words WHERE sid = ANY(%s)", (list(sids),))
        for sid in sids:
            texts = [
                str(t)
                for (t,) in self.conn.execute(
                    "SELECT text FROM sb_messages WHERE sid = %s ORDER BY id", (sid,)
                )
            ]
            if texts:
                words, length = lexical.session_words(texts)
                self.conn.execute(
                    "INSERT INTO sb_words(sid, words, length) VALUES (%s, %s, %s)",
                    (sid, words, length),
                )

    def _drop_words(self, words: set[str]) -> int:
        """Take out of the typo pass's vocabulary the ``words`` no message holds any more."""
        if not words:
            return 0
        return int(
            self.conn.execute(
                "DELETE FROM sb_terms t WHERE t.term = ANY(%s) "
                "AND NOT EXISTS (SELECT 1 FROM sb_messages m "
                "WHERE m.tsv @@ quote_literal(t.term)::tsquery) "
                "AND NOT EXISTS (SELECT 1 FROM sb_hidden h "
                "WHERE h.tsv @@ quote_literal(t.term)::tsquery)",
                (sorted(words),),
            ).rowcount
        )

    def _vacuum(self, out: TeamForgot) -> None:
        owned = {
            str(r[0])
            for r in self._run(
                "SELECT c.relname FROM pg_class c WHERE c.relname = ANY(%s) "
                "AND c.relkind = 'r' AND pg_has_role(c.relowner, 'USAGE')",
                (list(TABLES),),
            )
        }
        for table in TABLES:
            if table not in owned:
                out.not_vacuumed.append(table)
                continue
            try:
                self.conn.execute(f"VACUUM FULL {table}")
                out.vacuumed.append(table)
            except self._errors:
                out.not_vacuumed.append(table)
