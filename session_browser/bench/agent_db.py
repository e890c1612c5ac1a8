"""The benchmark corpus written as rows of a coding agent's SQLite database, and one turn added
to a session there as the agent adds it.

OpenCode: ``opencode.db`` (the layout our reader prefers: a session in a database is not read
again from the older ``storage/`` JSON tree), tables ``project``, ``session``, ``message``,
``part`` as ``packages/opencode/src/session/session.sql.ts`` declares them; ``message.data`` and
``part.data`` are the ``MessageV2`` objects without their ids (``session/message-v2.ts``): a
user message with one ``text`` part, each answer an assistant message of ``step-start``,
``text`` and ``step-finish`` parts; after the archived turns a user message holding a
``compaction`` part and the assistant message flagged ``summary``. Ids are OpenCode's
ascending kind (``ses_``/``msg_``/``prt_`` prefixes on the session's corpus id kept: the
queries' targets are those ids); an untitled session has OpenCode's default title.

Goose: ``sessions.db`` with the schema of ``crates/goose/src/session/session_manager.rs``
(version 9): a ``sessions`` row (``name`` the title) and one ``messages`` row a turn,
``content_json`` a list with one ``text`` content, ``metadata_json`` its visibility: the
archived turns kept for the user only, then the summary for the agent only, as Goose keeps
a compacted conversation.

A corpus file that is not a session (not JSON, or no ``messages`` list) becomes a session
whose one message's JSON is that file's text: the reader counts it bad and skips it, as it
skips a corrupt file of the other formats.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Callable, Iterable
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from session_browser.bench.sessions import JSONDict

OPENCODE_DB = "opencode.db"
OPENCODE_VERSION = "1.2.27"
OPENCODE_PROJECT = "global"  # OpenCode's project outside a git repository
GOOSE_DB = "sessions.db"

OPENCODE_SCHEMA = """
CREATE TABLE project (id text PRIMARY KEY, worktree text NOT NULL, vcs text, name text,
  time_created integer NOT NULL, time_updated integer NOT NULL);
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL REFERENCES project(id),
  parent_id text, slug text NOT NULL, directory text NOT NULL, title text NOT NULL,
  version text NOT NULL, share_url text, summary_additions integer, summary_deletions integer,
  summary_files integer, summary_diffs text, revert text, permission text,
  time_created integer NOT NULL, time_updated integer NOT NULL, time_compacting integer,
  time_archived integer);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL REFERENCES session(id),
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL REFERENCES message(id),
  session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL,
  data text NOT NULL);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);
CREATE INDEX part_session_idx ON part (session_id);
CREATE INDEX session_parent_idx ON session (parent_id);
"""

GOOSE_SCHEMA = """
CREATE TABLE schema_version (
    version INTEGER PRIMARY KEY,
    applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);
INSERT INTO schema_version (version) VALUES (9);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    user_set_name BOOLEAN DEFAULT FALSE,
    session_type TEXT NOT NULL DEFAULT 'user',
    working_dir TEXT NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    extension_data TEXT DEFAULT '{}',
    total_tokens INTEGER,
    input_tokens INTEGER,
    output_tokens INTEGER,
    accumulated_total_tokens INTEGER,
    accumulated_input_tokens INTEGER,
    accumulated_output_tokens INTEGER,
    schedule_id TEXT,
    recipe_json TEXT,
    user_recipe_values_json TEXT,
    provider_name TEXT,
    model_config_json TEXT,
    tenant_id TEXT,
    user_id TEXT
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id TEXT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content_json TEXT NOT NULL,
    created_timestamp INTEGER NOT NULL,
    timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    tokens INTEGER,
    metadata_json TEXT
);
CREATE INDEX idx_messages_session ON messages(session_id);
CREATE INDEX idx_messages_timestamp ON messages(timestamp);
CREATE INDEX idx_messages_message_id ON messages(message_id);
CREATE INDEX idx_sessions_updated ON sessions(updated_at DESC);
CREATE INDEX idx_sessions_type ON sessions(session_type);
CREATE INDEX idx_sessions_tenant ON sessions(tenant_id);
CREATE INDEX idx_sessions_user ON sessions(user_id);
"""

#: A turn: (role, text, epoch seconds).
Turn = tuple[str, str, float]


@dataclass
class Corpus:
    """One corpus session as the writers take it: its id, title, start, turns and cwd (or,
    for a file that is not a session, its text)."""

    sid: str
    title: str | None
    created: float
    archived: list[Turn]
    active: list[Turn]
    cwd: str
    unreadable: str | None = None


def _ms(epoch: float) -> int:
    return round(epoch * 1000)


def _json(value: Any) -> str:
    return orjson.dumps(value).decode("utf-8")


def _iso(epoch: float) -> str:
    """JavaScript's ``Date.toISOString()``."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _sql_time(epoch: float) -> str:
    """SQLite's ``CURRENT_TIMESTAMP`` form (UTC), as Goose's rows hold their times."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S")


# ---------------------------------------------------------------------- OpenCode


class _Ids:
    """OpenCode's ascending ids (``Identifier.ascending``): the prefix, 12 hex digits of the
    time in ms times 0x1000 plus a counter, 14 more characters (here from the session id, so
    a run writes the same ids)."""

    def __init__(self, sid: str, start_ms: int) -> None:
        self.base = start_ms * 0x1000
        self.tail = hashlib.sha256(sid.encode("utf-8")).hexdigest()[:14]
        self.n = 0

    def __call__(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}_{(self.base + self.n) & 0xFFFFFFFFFFFF:012x}{self.tail}"


def _opencode_tokens() -> JSONDict:
    return {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}


def opencode_rows(db: sqlite3.Connection, s: Corpus) -> None:
    """Session ``s`` as OpenCode's rows (see the module doc)."""
    start = _ms(s.created)
    ids = _Ids(s.sid, start)
    clock = start
    messages: list[tuple[str, int, JSONDict]] = []
    parts: list[tuple[str, str, int, JSONDict]] = []
    asked: str | None = None

    def message(data: JSONDict, at: float, *items: JSONDict) -> str:
        nonlocal clock
        clock = max(clock, _ms(at))  # OpenCode's times only grow
        mid = ids("msg")
        messages.append((mid, clock, data | {"time": {"created": clock, **data.get("time", {})}}))
        for item in items:
            parts.append((ids("prt"), mid, clock, item))
        return mid

    def user(at: float, part: JSONDict) -> None:
        nonlocal asked
        data = {"role": "user", "agent": "build",
                "model": {"providerID": "bench", "modelID": "bench"}}
        asked = message(data, at, part)

    def answer(text: str, at: float, **extra: Any) -> None:
        done = max(clock, _ms(at))
        data: JSONDict = {
            "role": "assistant", "time": {"completed": done}, "modelID": "bench",
            "providerID": "bench", "mode": "build", "agent": "build",
            "path": {"cwd": s.cwd, "root": s.cwd}, "cost": 0, "tokens": _opencode_tokens(),
            "finish": "stop", **extra,
        }
        if asked is not None:
            data["parentID"] = asked
        finish = {"type": "step-finish", "reason": "stop", "cost": 0,
                  "tokens": _opencode_tokens()}
        text_part = {"type": "text", "text": text, "time": {"start": done, "end": done}}
        message(data, at, {"type": "step-start"}, text_part, finish)

    def turn(role: str, text: str, at: float) -> None:
        if role == "user":
            user(at, {"type": "text", "text": text})
        else:
            answer(text, at)

    if s.unreadable is None:
        for role, text, at in s.archived:
            turn(role, text, at)
        if s.archived:
            at = s.archived[-1][2]
            user(at, {"type": "compaction", "auto": True})
            answer(f"{len(s.archived)} earlier turns", at, summary=True, mode="compaction",
                   agent="compaction")
        for role, text, at in s.active:
            turn(role, text, at)
    title = s.title or f"New session - {_iso(s.created)}"  # OpenCode's title until it names one
    db.execute(
        "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version,"
        " time_created, time_updated) VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?)",
        (s.sid, OPENCODE_PROJECT, f"bench-{ids.tail[:6]}", s.cwd, title, OPENCODE_VERSION,
         start, clock),
    )
    if s.unreadable is not None:
        row = (ids("msg"), s.sid, start, start, s.unreadable)
        db.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", row)
        return
    db.executemany(
        "INSERT INTO message VALUES (?, ?, ?, ?, ?)",
        [(mid, s.sid, at, at, _json(data)) for mid, at, data in messages],
    )
    db.executemany(
        "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
        [(pid, mid, s.sid, at, at, _json(data)) for pid, mid, at, data in parts],
    )


def _opencode_start(db: sqlite3.Connection, now: float) -> None:
    db.executescript(OPENCODE_SCHEMA)
    db.execute(
        "INSERT INTO project VALUES (?, '/', NULL, NULL, ?, ?)",
        (OPENCODE_PROJECT, _ms(now), _ms(now)),
    )


def opencode_add_prompt(db_path: Path, sid: str, text: str) -> None:
    """A user turn added to session ``sid`` of an OpenCode database as OpenCode adds it (a
    message row and its text part, the session's update time moved)."""
    now = time.time()
    ids = _Ids(sid, _ms(now))
    mid, pid, at = ids("msg"), ids("prt"), _ms(now)
    data = {"role": "user", "time": {"created": at}, "agent": "build",
            "model": {"providerID": "bench", "modelID": "bench"}}
    with closing(sqlite3.connect(db_path)) as db, db:
        db.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, at, at, _json(data)))
        db.execute(
            "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
            (pid, mid, sid, at, at, _json({"type": "text", "text": text})),
        )
        db.execute("UPDATE session SET time_updated = ? WHERE id = ?", (at, sid))


# ---------------------------------------------------------------------- Goose


def _visible(user: bool, agent: bool) -> str:
    return _json({"userVisible": user, "agentVisible": agent})


def goose_rows(db: sqlite3.Connection, s: Corpus) -> None:
    """Session ``s`` as Goose's rows (see the module doc)."""
    rows: list[tuple[str, str, str, str, int, str]] = []

    def add(role: str, content: str, at: float, metadata: str) -> None:
        rows.append((f"msg_{s.sid}_{len(rows)}", s.sid, role, content, int(at), metadata))

    def text(value: str) -> str:
        return _json([{"type": "text", "text": value}])

    last = s.created
    if s.unreadable is not None:
        add("user", s.unreadable, s.created, _visible(True, True))
    else:
        for role, words, at in s.archived:
            add(role, text(words), at, _visible(True, False))
        if s.archived:
            add("user", text(f"{len(s.archived)} earlier turns"), s.archived[-1][2],
                _visible(False, True))
        for role, words, at in s.active:
            add(role, text(words), at, _visible(True, True))
        last = max([s.created, *(at for _r, _t, at in [*s.archived, *s.active])])
    db.execute(
        "INSERT INTO sessions (id, name, working_dir, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?)",
        (s.sid, s.title or "", s.cwd, _sql_time(s.created), _sql_time(last)),
    )
    db.executemany(
        "INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp,"
        " metadata_json) VALUES (?, ?, ?, ?, ?, ?)",
        rows,
    )


def _goose_start(db: sqlite3.Connection, now: float) -> None:
    db.executescript(GOOSE_SCHEMA)


def goose_add_prompt(db_path: Path, sid: str, text: str) -> None:
    """A user turn added to session ``sid`` of a Goose database as Goose adds it (one
    ``messages`` row, the session's update time moved)."""
    now = time.time()
    content = _json([{"type": "text", "text": text}])
    with closing(sqlite3.connect(db_path)) as db, db:
        db.execute(
            "INSERT INTO messages (message_id, session_id, role, content_json,"
            " created_timestamp, metadata_json) VALUES (?, ?, 'user', ?, ?, ?)",
            (f"msg_{sid}_{time.time_ns()}", sid, content, int(now), _visible(True, True)),
        )
        db.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (_sql_time(now), sid))


# ---------------------------------------------------------------------- both


@dataclass(frozen=True)
class AgentDatabase:
    """A format whose sessions are rows of one database: its file's name under the root,
    what makes it empty, what writes a session into it and what adds a user turn."""

    name: str
    start: Callable[[sqlite3.Connection, float], None]
    rows: Callable[[sqlite3.Connection, Corpus], None]
    add_prompt: Callable[[Path, str, str], None]


DATABASES: dict[str, AgentDatabase] = {
    "opencode": AgentDatabase(OPENCODE_DB, _opencode_start, opencode_rows, opencode_add_prompt),
    "goose": AgentDatabase(GOOSE_DB, _goose_start, goose_rows, goose_add_prompt),
}


def write_database(fmt: str, root: Path, sessions: Iterable[Corpus]) -> Path:
    """``sessions`` written as the database of ``fmt`` (a key of :data:`DATABASES`) under
    ``root``, in write-ahead-log mode as both agents keep it, in one transaction. Returns the
    database's path."""
    spec = DATABASES[fmt]
    root.mkdir(parents=True, exist_ok=True)
    path = root / spec.name
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA journal_mode=WAL")
        with db:
            spec.start(db, time.time())
            for s in sessions:
                spec.rows(db, s)
    return path
