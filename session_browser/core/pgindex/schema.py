"""The team index's tables in PostgreSQL, created and migrated by the tool.

``sb_schema`` holds the schema version; a database made by a newer version is refused (one
line), an older one is migrated. ``sb_sessions`` has one row per session (machine, user,
session id: the newest copy pushed, see version 4 below) with its origin (machine, user,
source kind, store dir, file), the columns the filters and the ranking
read (named as in the SQLite index, so the filter table's clauses apply to both) and the
session itself (JSON, redacted when the push was), so the team index can show a session whose
file lives on another machine. ``sb_messages`` holds the searchable messages, each with a
``tsvector`` of the same folded tokens the SQLite index holds (GIN indexed). ``sb_terms`` is the
vocabulary for the typo pass (a trigram index, when ``pg_trgm`` is available).
``sb_hidden`` holds the hidden parts of sessions pushed with ``--include-hidden`` (tool calls
and results, reasoning: one row per part, at the index and role of the turn it belongs to, as
the SQLite index's ``hidden`` table), with their ``tsvector`` (GIN indexed), for ``in:tools``.

A message's ``sid`` names its session without a foreign key: the check it would make on every
inserted message was an eighth of the server's work in a push. The one writer, ``push``,
deletes a session's messages itself, in the transaction that replaces or removes the session.
Version 2 dropped that key (version 1 had it, with ``ON DELETE CASCADE``); nothing else changed,
so a version 1 index is migrated in place and nothing has to be pushed again. Version 3 added
``sb_hidden``: a version 2 index is migrated in place (the table is created empty; the prose
stays as it is), and only its sessions pushed with ``--include-hidden`` are marked to be sent
again by the next push, which fills their hidden parts.

Version 4 made a session id one session per machine and user: ``sb_sessions`` holds one row
per (machine, user, session id), the newest copy (the greater ``updated_ts``, then the file's
``mtime_ns``), whichever store dir and file it came from, as the local stores are one list of
sessions. A unique key enforces it, so pushers at once cannot both insert a copy. Migrating a
version 3 index folds the copies it holds (the newest kept, with its messages and hidden
parts; the others deleted) before the key is made; the file's key
(machine, user, kind, store dir, file) stays as an index. ``sb_older`` names the files that
hold an older copy of a session held (with their fingerprint), so a push does not read them
again until they change or the copy held does.
"""

from __future__ import annotations

import itertools
from typing import Any

from ..search import lexical
from .conn import PgIndexError

SCHEMA_VERSION = 7
_LOCK_KEY = 0x5B5C0001  # the advisory lock that serialises schema changes

# The order of the copies of one session, newest first: the one kept (the rest by
# insertion, the latest first, so the choice is the same every time).
NEWEST_FIRST = "updated_ts DESC NULLS LAST, mtime_ns DESC NULLS LAST, pushed_at DESC, sid DESC"

_DDL = (
    """CREATE TABLE IF NOT EXISTS sb_sessions(
        sid bigserial PRIMARY KEY,
        machine text NOT NULL, os_user text NOT NULL, kind text NOT NULL,
        root text NOT NULL, file text NOT NULL, fingerprint text NOT NULL,
        session_id text NOT NULL, title text, when_ text, created text,
        updated_ts double precision, message_count integer, archived_count integer,
        source text, agent text, tagged smallint, rate_auto smallint, machine_paced smallint,
        lineage text, project text, nmsg integer NOT NULL, chars bigint NOT NULL,
        redacted boolean NOT NULL DEFAULT false, data text NOT NULL,
        pushed_at timestamptz NOT NULL DEFAULT now(), mtime_ns bigint)""",
    "CREATE INDEX IF NOT EXISTS sb_sessions_id ON sb_sessions(session_id)",
    "CREATE INDEX IF NOT EXISTS sb_sessions_updated ON sb_sessions(updated_ts)",
    """CREATE TABLE IF NOT EXISTS sb_messages(
        id bigserial PRIMARY KEY,
        sid bigint NOT NULL,
        idx integer NOT NULL, role text, archived smallint, ts double precision,
        text text NOT NULL, tsv tsvector NOT NULL)""",
    # version 1 -> 2: no foreign key (see above)
    "ALTER TABLE sb_messages DROP CONSTRAINT IF EXISTS sb_messages_sid_fkey",
    "CREATE INDEX IF NOT EXISTS sb_messages_sid ON sb_messages(sid, idx)",
    # new entries wait in a pending list every search reads: kept small (1 MB), and
    # merged at the end of each push (gin_clean_pending_list)
    "CREATE INDEX IF NOT EXISTS sb_messages_tsv ON sb_messages USING gin(tsv) "
    "WITH (gin_pending_list_limit = 1024)",
    # ANALYZE then keeps the counts of the 10,000 most frequent words (the common words)
    "ALTER TABLE sb_messages ALTER COLUMN tsv SET STATISTICS 1000",
    "CREATE TABLE IF NOT EXISTS sb_terms(term text PRIMARY KEY)",
    # version 2 -> 3: the hidden parts, as the messages (the same ``push`` deletes them)
    """CREATE TABLE IF NOT EXISTS sb_hidden(
        id bigserial PRIMARY KEY,
        sid bigint NOT NULL,
        idx integer NOT NULL, role text, archived smallint, ts double precision,
        text text NOT NULL, tsv tsvector NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS sb_hidden_sid ON sb_hidden(sid, idx)",
    "CREATE INDEX IF NOT EXISTS sb_hidden_tsv ON sb_hidden USING gin(tsv) "
    "WITH (gin_pending_list_limit = 1024)",
    # version 3 -> 4: one row per (machine, user, session id), the newest copy (see above)
    "ALTER TABLE sb_sessions ADD COLUMN IF NOT EXISTS mtime_ns bigint",
    # (a fingerprint is ``v<N>:<size>:<mtime_ns>:<inode>:<flags>``, see ``push.fingerprint``)
    "UPDATE sb_sessions SET mtime_ns = split_part(fingerprint, ':', 3)::bigint "
    "WHERE mtime_ns IS NULL AND fingerprint ~ '^v[0-9]+:[0-9]+:[0-9]+:'",
    # version 4 -> 5: each session's content words (session recall, ``search.lexical``),
    # filled from the messages held (:func:`_fill_words`)
    """CREATE TABLE IF NOT EXISTS sb_words(
        sid bigint PRIMARY KEY, words text[] NOT NULL, length integer NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS sb_words_words ON sb_words USING gin(words)",
    f"""CREATE TEMP TABLE sb_folded ON COMMIT DROP AS SELECT sid FROM (
        SELECT sid, row_number() OVER (PARTITION BY machine, os_user, session_id
            ORDER BY {NEWEST_FIRST}) AS n FROM sb_sessions) AS copies WHERE n > 1""",
    "DELETE FROM sb_messages WHERE sid IN (SELECT sid FROM sb_folded)",
    "DELETE FROM sb_hidden WHERE sid IN (SELECT sid FROM sb_folded)",
    "DELETE FROM sb_words WHERE sid IN (SELECT sid FROM sb_folded)",
    "DELETE FROM sb_sessions WHERE sid IN (SELECT sid FROM sb_folded)",
    "DROP TABLE sb_folded",
    "ALTER TABLE sb_sessions "
    "DROP CONSTRAINT IF EXISTS sb_sessions_machine_os_user_kind_root_file_key",
    "CREATE INDEX IF NOT EXISTS sb_sessions_file "
    "ON sb_sessions(machine, os_user, kind, root, file)",
    "CREATE UNIQUE INDEX IF NOT EXISTS sb_sessions_one "
    "ON sb_sessions(machine, os_user, session_id)",
    # the files known to hold an older copy of a session held (by its fingerprint)
    """CREATE TABLE IF NOT EXISTS sb_older(
        machine text NOT NULL, os_user text NOT NULL, kind text NOT NULL,
        root text NOT NULL, file text NOT NULL, fingerprint text NOT NULL,
        session_id text NOT NULL, PRIMARY KEY (machine, os_user, kind, root, file))""",
    "CREATE INDEX IF NOT EXISTS sb_older_id ON sb_older(machine, os_user, session_id)",
)
# Run when migrating from an older version only: the sessions a version before 3 holds with
# their hidden parts (their fingerprint ends with the hidden flag, see ``push.fingerprint``)
# get a fingerprint no file has, so the next push sends them again, hidden parts and all.
_BEFORE_HIDDEN = (
    "UPDATE sb_sessions SET fingerprint = fingerprint || ':no-sb_hidden' "
    "WHERE fingerprint LIKE '%1'"
)


# Version 6 -> 7: the hidden parts given as JSON are searched with their strings' escapes
# undone (:func:`..hidden.as_written`): the sessions pushed with their hidden parts are
# sent again by the next push, as for version 2 -> 3 (their rows meanwhile as they were).
_HIDDEN_AS_WRITTEN = (
    "UPDATE sb_sessions SET fingerprint = fingerprint || ':hidden-as-written' "
    "WHERE fingerprint LIKE '%1'"
)


def ensure_schema(conn: Any) -> bool:
    """Create or migrate the schema (once, whoever else connects at the same time);
    True when ``pg_trgm`` is there for the typo pass. Raises :class:`PgIndexError` for a
    schema made by a newer version."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        conn.execute("CREATE TABLE IF NOT EXISTS sb_schema(version integer NOT NULL)")
        row = conn.execute("SELECT max(version) FROM sb_schema").fetchone()
        have = row[0] if row else None
        if have is not None and have > SCHEMA_VERSION:
            raise PgIndexError(
                f"the team index has schema version {have}, newer than this version's "
                f"{SCHEMA_VERSION}: upgrade session-browser"
            )
        if have != SCHEMA_VERSION:
            for statement in _DDL:
                conn.execute(statement)
            if have is not None and have < 3:
                conn.execute(_BEFORE_HIDDEN)
            if have is not None and have < 6:  # (5 -> 6: the words are reduced anew)
                conn.execute("DELETE FROM sb_words")
                _fill_words(conn)
            if have is not None and 3 <= have < 7:
                conn.execute(_HIDDEN_AS_WRITTEN)
            conn.execute("DELETE FROM sb_schema")
            conn.execute("INSERT INTO sb_schema(version) VALUES (%s)", (SCHEMA_VERSION,))
    return _trigrams(conn)


def _fill_words(conn: Any) -> None:
    """Index the content words of every session held that has none (a migration)."""
    rows = conn.execute(
        "SELECT m.sid, m.text FROM sb_messages m WHERE NOT EXISTS "
        "(SELECT 1 FROM sb_words w WHERE w.sid = m.sid) ORDER BY m.sid, m.id"
    ).fetchall()
    out = [
        (sid, *lexical.session_words(text for _sid, text in group))
        for sid, group in itertools.groupby(rows, key=lambda r: r[0])
    ]
    if out:
        conn.cursor().executemany(
            "INSERT INTO sb_words(sid, words, length) VALUES (%s, %s, %s)", out
        )


def _trigrams(conn: Any) -> bool:
    """Set up the trigram index of the vocabulary when ``pg_trgm`` can be had."""
    row = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'").fetchone()
    if row is None:
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        except Exception:  # not installed, or not allowed: no typo pass
            return False
    elif conn.execute("SELECT to_regprocedure('similarity(text,text)')").fetchone() == (None,):
        return False  # installed in a schema this connection does not search: no typo pass
    if conn.execute("SELECT to_regclass('sb_terms_trgm')").fetchone() == (None,):
        with conn.transaction():  # (looked up first: creating takes a lock pushers wait on)
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            conn.execute(
                "CREATE INDEX IF NOT EXISTS sb_terms_trgm ON sb_terms USING gin(term gin_trgm_ops)"
            )
    return True
