"""``push``: the sessions of local stores sent to the team index.

Every session file of every store (all sources) goes with its origin: machine, user, source
kind, store dir and file name. A file whose identity (size, mtime, inode) and redaction are
what the index already holds is not read again, so pushing again is cheap and idempotent;
files gone from the store are removed from the index. Sessions are written in batches, each
one transaction: a session's row and all its messages appear together or not at all
(searches never see half a session), and a push stopped anywhere (killed, the connection
dropped, the disk full) leaves every session either as it was or complete; the next push
resumes with what is missing. Each session is taken under an advisory lock of its own (all
locks of a batch in one order), so pushers working at once never interleave one session's
rows.

A session id is one session per machine and user, as it is locally across stores: when two
store dirs (or two files) hold the same id, the team index keeps the newest copy (the greater
``updated`` time, then the file's mtime), whichever dir it is in; an older copy is not sent
(counted as ``older``), and the same file sent again always replaces its own copy. The
schema's unique key on (machine, user, session id) holds it for pushers working at once.

What is sent: each session as the source reads it (the PraisonAI-shaped dict, titles,
times, roles, message text), without the hidden parts (thinking, tool calls and results that
a Pi, Claude Code or Codex file keeps in ``metadata.hidden``) unless asked. Asked
(``hidden``), they go in the session's JSON and, as rows of ``sb_hidden`` (the SQLite index's
:func:`~session_browser.core.search.hidden.hidden_rows`), searchable with ``in:tools``; a
session sent again without them loses those rows. With ``redact``, every string is passed
through the export's :class:`~session_browser.core.redact.Redactor` first (the index then
holds only the redacted copy, hidden parts included).
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import orjson

from ..files import FileIdentity
from ..forget.deny import screen
from ..model import JSONDict
from ..query import local_machine, local_user
from ..redact import Redactor
from ..search import lexical
from ..search.hidden import hidden_rows
from ..search.rows import MessageRow, Parsed, SessionRow, cleaned, extract
from ..sources.base import Identity, SessionDoc, Skip
from .conn import PgIndexError, error_line, psycopg_module
from .schema import ensure_schema
from .tsv import message_vector

BATCH_SESSIONS = 200  # sessions per transaction at most
BATCH_MESSAGES = 4000  # ... and messages
RETRIES = 5  # a batch that lost a deadlock or a serialisation race is tried again


@dataclass(frozen=True)
class Origin:
    """Where pushed sessions come from."""

    machine: str
    user: str
    kind: str
    root: str


@dataclass
class PushReport:
    """What a push did."""

    stores: int = 0
    files: int = 0
    sent: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: int = 0
    older: int = 0  # copies of a session the team index holds a newer copy of (not sent)
    messages: int = 0
    seconds: float = 0.0
    redactions: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> JSONDict:
        return {
            "stores": self.stores,
            "files": self.files,
            "sent": self.sent,
            "unchanged": self.unchanged,
            "removed": self.removed,
            "skipped": self.skipped,
            "older": self.older,
            "messages": self.messages,
            "seconds": round(self.seconds, 3),
            "redactions": dict(sorted(self.redactions.items())),
        }


def strip_hidden(data: JSONDict) -> JSONDict:
    """``data`` without its messages' hidden parts (``metadata.hidden``): a shallow copy
    where anything is removed."""
    out = dict(data)
    for key in ("messages", "archived_messages"):
        msgs = data.get(key)
        if not isinstance(msgs, list):
            continue
        kept: list[Any] = []
        for m in msgs:
            meta = m.get("metadata") if isinstance(m, dict) else None
            if isinstance(meta, dict) and "hidden" in meta:
                m = dict(m)
                m["metadata"] = {k: v for k, v in meta.items() if k != "hidden"}
            kept.append(m)
        out[key] = kept
    return out


class Pushed(Protocol):
    """What a push reads of a source (a
    :class:`~session_browser.core.sources.base.SessionSource` has it all)."""

    root: Path

    def list_files(self) -> dict[str, Identity]: ...

    def parse(self, name: str, ident: Identity, prior: bytes | None) -> SessionDoc | Skip: ...


def _no_nul(text: str) -> str:
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


# What a pushed session holds, in its fingerprint: a change of it makes every file go again.
# (Schema version 2 changed no row: the fingerprints of version 1 still hold. Version 3 added
# the hidden parts' rows: the migration marks the sessions sent with hidden parts.)
DATA_VERSION = 1


def fingerprint(ident: Sequence[int], redact: bool, hidden: bool) -> str:
    return f"v{DATA_VERSION}:{ident[0]}:{ident[1]}:{ident[2]}:{int(redact)}{int(hidden)}"


class Pusher:
    """Pushes stores into one team index over one connection."""

    def __init__(
        self,
        url: str,
        *,
        redact: bool = False,
        hidden: bool = False,
        machine: str | None = None,
        user: str | None = None,
    ) -> None:
        self.url = url
        self.redact = redact
        self.hidden = hidden
        self.machine = machine or local_machine()
        self.user = user or local_user()
        self.report = PushReport()
        self._redactor = Redactor()
        self._terms: set[str] = set()
        psycopg = psycopg_module()
        self._errors = psycopg.Error
        try:
            self.conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
            ensure_schema(self.conn)
            # the sessions' JSON compressed with lz4 where the server has it (several times
            # faster than the default pglz; any server of version 14 or later reads both)
            with contextlib.suppress(psycopg.Error):
                self.conn.execute("SET default_toast_compression = 'lz4'")
        except psycopg.Error as exc:
            raise PgIndexError(f"cannot use the team index: {error_line(exc, url)}") from exc

    def close(self) -> None:
        self.conn.close()

    def analyze(self) -> None:
        """Merge the words index's pending entries (which every search would otherwise read
        one by one) and refresh PostgreSQL's statistics of the messages (the planner's
        estimates, and the frequent words' counts the search reads)."""
        psycopg = psycopg_module()
        # the index's owner (or a superuser) only; autovacuum merges them otherwise
        with contextlib.suppress(psycopg.errors.InsufficientPrivilege):
            for index in ("sb_messages_tsv", "sb_hidden_tsv"):
                self.conn.execute("SELECT gin_clean_pending_list(%s::regclass)", (index,))
        try:
            self.conn.execute("ANALYZE sb_messages, sb_hidden")
        except self._errors as exc:
            raise PgIndexError(
                f"push to the team index failed: {error_line(exc, self.url)}"
            ) from exc

    def __enter__(self) -> Pusher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def push_source(
        self,
        source: Pushed,
        kind: str,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        """Push every session file of one source (a
        :class:`~session_browser.core.sources.base.SessionSource`)."""
        origin = Origin(self.machine, self.user, kind, str(source.root))
        try:
            self._push_source(source, origin, progress)
        except self._errors as exc:
            raise PgIndexError(
                f"push to the team index failed: {error_line(exc, self.url)}"
            ) from exc

    def _push_source(
        self, source: Pushed, origin: Origin, progress: Callable[[int, int], None] | None
    ) -> None:
        started = time.perf_counter()
        self.report.stores += 1
        files: dict[str, tuple[int, int, int]] = dict(source.list_files())
        where = (origin.machine, origin.user, origin.kind, origin.root)
        # the files held, and those known to be older copies of a session held (not read
        # again while they do not change)
        have, older = (
            dict(
                self.conn.execute(
                    f"SELECT file, fingerprint FROM {table} WHERE machine = %s "
                    "AND os_user = %s AND kind = %s AND root = %s",
                    where,
                ).fetchall()
            )
            for table in ("sb_sessions", "sb_older")
        )
        self.report.files += len(files)
        todo: list[tuple[str, str, tuple[int, int, int]]] = []
        for name in sorted(files):
            fp = fingerprint(files[name], self.redact, self.hidden)
            if have.get(name) == fp:
                self.report.unchanged += 1
            elif older.get(name) == fp:
                self.report.older += 1
            else:
                todo.append((name, fp, files[name]))
        gone = sorted(set(have) - set(files))
        if gone or set(older) - set(files):
            with self.conn.transaction():  # the sessions and their messages at once
                rows = self.conn.execute(
                    "DELETE FROM sb_sessions WHERE machine = %s AND os_user = %s AND kind = %s "
                    "AND root = %s AND file = ANY(%s) RETURNING sid, session_id",
                    (*where, gone),
                ).fetchall()
                for table in ("sb_messages", "sb_hidden", "sb_words"):
                    self.conn.execute(
                        f"DELETE FROM {table} WHERE sid = ANY(%s)", ([r[0] for r in rows],)
                    )
                # the older copies of the sessions gone are read again by the next push
                _forget_older(
                    self.conn, origin, [str(r[1]) for r in rows], sorted(set(older) - set(files))
                )
                self.report.removed += len(rows)
        batch: list[tuple[Parsed, str, bytes]] = []
        count = 0
        done = 0
        for name, fp, ident in todo:
            item = self._read(source, name, ident)
            done += 1
            if item is None:
                self.report.skipped += 1
                continue
            batch.append((item[0], fp, item[1]))
            count += len(item[0].messages) + len(item[0].hidden or ())
            if len(batch) >= BATCH_SESSIONS or count >= BATCH_MESSAGES:
                self._write(origin, batch)
                batch, count = [], 0
                if progress is not None:
                    progress(done, len(todo))
        if batch:
            self._write(origin, batch)
        if progress is not None:
            progress(len(todo), len(todo))
        self.report.seconds += time.perf_counter() - started
        for kind, n in self._redactor.counts.items():
            self.report.redactions[kind] = n

    def _read(
        self, source: Pushed, name: str, ident: tuple[int, int, int]
    ) -> tuple[Parsed, bytes] | None:
        """(index rows, the JSON sent, UTF-8) of one file, or None when it is no session."""
        try:
            doc = source.parse(name, ident, None)
        except Exception:  # one file's content never stops the others
            return None
        if isinstance(doc, Skip):
            return None
        screened = screen(str(doc.data.get("session_id") or Path(name).stem), doc.data)
        if screened is None:  # forgotten on purpose (see forget --list)
            return None
        doc.data = screened
        # a parse holds the hidden parts (``metadata.hidden``) as the viewer's read does
        data: JSONDict = doc.data if self.hidden else strip_hidden(doc.data)
        if self.redact:
            data = self._redactor.value(data)
        try:
            parsed = cleaned(extract(name, FileIdentity(*ident), data, folded=False))
            parsed.hidden = hidden_rows(data, folded=False) if self.hidden else None
            # (bytes, sent as they are: no text copy of a session of hundreds of MB; JSON
            # escapes every control character, NUL included)
            blob = orjson.dumps(data, default=str)
        except Exception:
            return None
        if doc.automated is not None:
            parsed.row.settle_automation(doc.automated)
        return parsed, blob

    def _write(self, origin: Origin, batch: list[tuple[Parsed, str, bytes]]) -> None:
        psycopg = psycopg_module()
        retryable = (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)
        for attempt in range(RETRIES):
            try:
                self._write_once(origin, batch)
                return
            except retryable:
                if attempt == RETRIES - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))

    def _write_once(self, origin: Origin, batch: list[tuple[Parsed, str, bytes]]) -> None:
        conn = self.conn
        # each session's lock (by machine, user and id: the copies of other dirs wait) and
        # its file's (whose row of another id it replaces)
        keys = sorted(
            {
                f"{origin.machine}\x1f{origin.user}\x1f{key}"
                for p, _fp, _blob in batch
                for key in (
                    f"id\x1f{_no_nul(p.session_id)}",
                    f"file\x1f{origin.kind}\x1f{origin.root}\x1f{p.file}",
                )
            }
        )
        vectors: list[list[tuple[Any, ...]]] = []
        hidden: list[list[tuple[Any, ...]]] = []
        seen: set[str] = set()
        for parsed, _fp, _blob in batch:
            vectors.append(_vector_rows(parsed.messages, seen))
            hidden.append(_vector_rows(parsed.hidden or (), None))
        new_terms = seen - self._terms
        params = [
            (
                origin.machine,
                origin.user,
                origin.kind,
                origin.root,
                parsed.file,
                fp,
                parsed.identity.mtime_ns,
                _no_nul(parsed.session_id),
                *(_no_nul(v) if isinstance(v, str) else v for v in _row_columns(parsed.row)),
                len(parsed.messages),
                parsed.chars,
                self.redact,
                blob if len(blob) <= LONG_TEXT else b"",  # (a long one: sent below)
            )
            for parsed, fp, blob in batch
        ]
        with conn.transaction():
            # every session's lock, in one order for every pusher: no deadlock between them
            conn.execute(
                "SELECT count(pg_advisory_xact_lock(h)) FROM (SELECT hashtextextended(k, 0) "
                "AS h FROM unnest(%s::text[]) AS u(k) ORDER BY 1) AS locks",
                (keys,),
            )
            with conn.cursor() as cur:
                # a file that now holds another session id: its row of the old id goes
                replaced = cur.execute(
                    "DELETE FROM sb_sessions s USING unnest(%s::text[], %s::text[]) "
                    "AS u(file, session_id) WHERE s.machine = %s AND s.os_user = %s "
                    "AND s.kind = %s AND s.root = %s AND s.file = u.file "
                    "AND s.session_id <> u.session_id RETURNING s.sid, s.session_id",
                    (
                        [p.file for p, _fp, _blob in batch],
                        [_no_nul(p.session_id) for p, _fp, _blob in batch],
                        origin.machine,
                        origin.user,
                        origin.kind,
                        origin.root,
                    ),
                ).fetchall()
                gone = [int(r[0]) for r in replaced]
                where = (origin.machine, origin.user, origin.kind, origin.root)
                cur.executemany(_UPSERT, params, returning=True)
                # each session's row, or None where the index holds a newer copy
                taken: list[int | None] = []
                while True:
                    row = cur.fetchone()
                    taken.append(None if row is None else int(row[0]))
                    if not cur.nextset():
                        break
                # (two files of the batch with one id: the row is the last one's)
                last = {sid: n for n, sid in enumerate(taken) if sid is not None}
                kept = [
                    (sid, item, part, hid)
                    for n, (sid, item, part, hid) in enumerate(
                        zip(taken, batch, vectors, hidden, strict=True)
                    )
                    if sid is not None and last[sid] == n
                ]
                sids = [sid for sid, _item, _part, _hid in kept]
                # the older copies: a session held anew has its older copies read again by
                # the next push (the copy held may have gone back in time: its own file's),
                # and the copies older than the one held are known as such
                _forget_older(
                    cur,
                    origin,
                    [str(r[1]) for r in replaced]
                    + [_no_nul(b[0].session_id) for _s, b, _p, _h in kept],
                    [b[0].file for _s, b, _p, _h in kept],
                )
                lost = [
                    (*where, p.file, fp, _no_nul(p.session_id))
                    for (p, fp, _blob), sid in zip(batch, taken, strict=True)
                    if sid is None
                ]
                if lost:
                    cur.executemany(_OLDER, lost)
                cur.execute("DELETE FROM sb_messages WHERE sid = ANY(%s)", (sids + gone,))
                # (a session sent without its hidden parts keeps none of those sent before)
                cur.execute("DELETE FROM sb_hidden WHERE sid = ANY(%s)", (sids + gone,))
                cur.execute("DELETE FROM sb_words WHERE sid = ANY(%s)", (sids + gone,))
                long = [(sid, b[2]) for sid, b, _part, _hid in kept if len(b[2]) > LONG_TEXT]
                if long:
                    _copy_long_data(cur, long)
                _copy_rows(cur, "sb_messages", sids, [part for _s, _b, part, _h in kept])
                _copy_rows(cur, "sb_hidden", sids, [hid for _s, _b, _p, hid in kept])
                _add_words(cur, [(sid, part) for sid, _b, part, _h in kept])
        if new_terms:  # the typo pass's vocabulary: its own short transaction, so pushers
            # adding the same new words wait on each other for this statement only
            conn.execute(
                "INSERT INTO sb_terms(term) SELECT t FROM unnest(%s::text[]) AS u(t) "
                "ORDER BY t ON CONFLICT DO NOTHING",
                (sorted(new_terms),),
            )
        self._terms |= new_terms
        self.report.sent += len(kept)
        self.report.older += len(batch) - len(kept)
        self.report.messages += sum(len(part) for _s, _b, part, _h in kept)


_COPY_COLUMNS = "(sid, idx, role, archived, ts, text, tsv)"

# A file known to hold an older copy of a session the team index holds from another file.
_OLDER = (
    "INSERT INTO sb_older(machine, os_user, kind, root, file, fingerprint, session_id) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (machine, os_user, kind, root, file) "
    "DO UPDATE SET fingerprint = EXCLUDED.fingerprint, session_id = EXCLUDED.session_id"
)


def _forget_older(db: Any, origin: Origin, session_ids: list[str], files: list[str]) -> None:
    """Forget the older copies known of ``session_ids`` (of this machine and user, in any
    store dir), and those of ``files`` of ``origin``'s dir: the next push reads them again."""
    if session_ids or files:
        db.execute(
            "DELETE FROM sb_older WHERE machine = %s AND os_user = %s AND (session_id = ANY(%s) "
            "OR (kind = %s AND root = %s AND file = ANY(%s)))",
            (origin.machine, origin.user, session_ids, origin.kind, origin.root, files),
        )


def _add_words(cur: Any, sessions: list[tuple[int, list[tuple[Any, ...]]]]) -> None:
    """Index the content words of sessions (``(sid, its message rows)``; session recall)."""
    rows = [
        (sid, *lexical.session_words(str(m[4]) for m in part)) for sid, part in sessions if part
    ]
    if rows:
        cur.executemany("INSERT INTO sb_words(sid, words, length) VALUES (%s, %s, %s)", rows)


def _copy_rows(cur: Any, table: str, sids: list[int], parts: list[list[tuple[Any, ...]]]) -> None:
    """COPY the rows of ``table`` (``parts``: each session's rows, without its sid), in
    order. A text longer than :data:`LONG_TEXT` goes in pieces (:func:`_write_long_row`)
    in a COPY of its own, so no long text is ever held whole a second time as COPY data."""
    rows = ((sid, msg) for sid, msgs in zip(sids, parts, strict=True) for msg in msgs)
    for long, run in itertools.groupby(rows, key=lambda r: len(r[1][4]) > LONG_TEXT):
        with cur.copy(f"COPY {table}{_COPY_COLUMNS} FROM STDIN") as copy:
            for sid, msg in run:
                if long:
                    _write_long_row(copy, sid, msg)
                else:
                    copy.write_row((sid, *msg))


LONG_TEXT = 1 << 20  # a message longer than this is sent in pieces of this many characters


def _copy_long_data(cur: Any, sessions: list[tuple[int, bytes]]) -> None:
    """Set the JSON of sessions whose JSON is long (``(sid, its JSON)``), sent by COPY in
    pieces into a temporary table: as a query's parameter it would be copied twice more
    (by the driver, then by libpq), each copy as long as the session."""
    cur.execute(
        "CREATE TEMP TABLE IF NOT EXISTS sb_push_data(sid bigint, data text) ON COMMIT DELETE ROWS"
    )
    with cur.copy("COPY sb_push_data(sid, data) FROM STDIN") as copy:
        for sid, blob in sessions:
            copy.write(f"{sid}\t")
            for start in range(0, len(blob), LONG_TEXT):
                # JSON holds no raw control character: only its backslashes need escaping
                copy.write(blob[start : start + LONG_TEXT].replace(b"\\", b"\\\\"))
            copy.write(b"\n")
    cur.execute("UPDATE sb_sessions s SET data = d.data FROM sb_push_data d WHERE s.sid = d.sid")


def _copy_field(value: Any) -> str:
    """One field as COPY's text format writes it (``\\N`` for NULL)."""
    if value is None:
        return "\\N"
    if isinstance(value, str):
        text = _no_nul(value).replace("\\", "\\\\").replace("\n", "\\n")
        return text.replace("\r", "\\r").replace("\t", "\\t")
    return repr(value) if isinstance(value, float) else str(int(value))


def _write_long_row(copy: Any, sid: int, msg: tuple[Any, ...]) -> None:
    """One row whose text is long, its text written in pieces (NUL replaced as
    :func:`_no_nul` does): the memory it takes is one piece, whatever its size."""
    idx, role, archived, ts, text, literal = msg
    copy.write("\t".join(map(_copy_field, (sid, idx, role, archived, ts))) + "\t")
    for start in range(0, len(text), LONG_TEXT):
        copy.write(_copy_field(text[start : start + LONG_TEXT]).encode())
    copy.write("\t" + _copy_field(literal) + "\n")


def _vector_rows(rows: Iterable[MessageRow], seen: set[str] | None) -> list[tuple[Any, ...]]:
    """The rows of ``sb_messages`` or ``sb_hidden`` (without the session) for index rows,
    each with its ``tsvector`` literal (whose work is bounded: :func:`message_vector`);
    their words are added to ``seen`` when given. A long text keeps its NUL characters
    here (no copy of it is made): :func:`_write_long_row` replaces them."""
    out: list[tuple[Any, ...]] = []
    for idx, role, archived, ts, text in rows:
        text = _no_nul(text) if len(text) <= LONG_TEXT else text
        literal, toks = message_vector(text)
        if seen is not None:
            seen.update(toks)
        out.append((idx, _no_nul(role), archived, ts, text, literal))
    return out


# The session row's fields the team index stores, by name (in the order of _UPSERT).
_ROW_FIELDS = (
    "title",
    "when",
    "created",
    "updated_ts",
    "message_count",
    "archived_count",
    "source",
    "agent",
    "tagged",
    "rate_auto",
    "machine",
    "lineage",
    "project",
)


def _row_columns(row: SessionRow) -> tuple[Any, ...]:
    return tuple(getattr(row, name) for name in _ROW_FIELDS)


# One row per (machine, user, session id): a copy replaces the row when it is newer (see
# ``schema.NEWEST_FIRST``) or when it is the row's own file; else no row is returned.
_UPSERT = (
    "INSERT INTO sb_sessions(machine, os_user, kind, root, file, fingerprint, mtime_ns, "
    "session_id, title, when_, created, updated_ts, message_count, "
    "archived_count, source, agent, tagged, rate_auto, machine_paced, lineage, "
    "project, nmsg, chars, redacted, data) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, "
    "%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
    "convert_from(%b, 'UTF8')) "
    "ON CONFLICT (machine, os_user, session_id) DO UPDATE SET "
    "kind = EXCLUDED.kind, root = EXCLUDED.root, file = EXCLUDED.file, "
    "fingerprint = EXCLUDED.fingerprint, mtime_ns = EXCLUDED.mtime_ns, "
    "title = EXCLUDED.title, when_ = EXCLUDED.when_, "
    "created = EXCLUDED.created, updated_ts = EXCLUDED.updated_ts, "
    "message_count = EXCLUDED.message_count, "
    "archived_count = EXCLUDED.archived_count, source = EXCLUDED.source, "
    "agent = EXCLUDED.agent, tagged = EXCLUDED.tagged, "
    "rate_auto = EXCLUDED.rate_auto, machine_paced = EXCLUDED.machine_paced, "
    "lineage = EXCLUDED.lineage, project = EXCLUDED.project, "
    "nmsg = EXCLUDED.nmsg, chars = EXCLUDED.chars, "
    "redacted = EXCLUDED.redacted, data = EXCLUDED.data, pushed_at = now() "
    "WHERE (sb_sessions.kind, sb_sessions.root, sb_sessions.file) "
    "= (EXCLUDED.kind, EXCLUDED.root, EXCLUDED.file) "
    "OR (coalesce(EXCLUDED.updated_ts, '-infinity'), coalesce(EXCLUDED.mtime_ns, -1)) "
    "> (coalesce(sb_sessions.updated_ts, '-infinity'), coalesce(sb_sessions.mtime_ns, -1)) "
    "RETURNING sid"
)


def push_stores(
    url: str,
    sources: Iterable[tuple[Any, str]],
    *,
    redact: bool = False,
    hidden: bool = False,
    machine: str | None = None,
    user: str | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> PushReport:
    """Push every ``(source, kind)`` into the team index at ``url``."""
    with Pusher(url, redact=redact, hidden=hidden, machine=machine, user=user) as pusher:
        for source, kind in sources:
            label = f"{kind}:{source.root}"

            def step(done: int, total: int, label: str = label) -> None:
                if progress is not None:
                    progress(label, done, total)

            pusher.push_source(source, kind, step)
        if pusher.report.sent or pusher.report.removed:
            pusher.analyze()
        return pusher.report
