"""Goose sessions as a read-only source: its SQLite sessions database and older JSONL files.

Where they live
    ``<goose data dir>/sessions``: ``$GOOSE_PATH_ROOT/data`` when set, else
    ``$XDG_DATA_HOME/goose`` (default ``~/.local/share/goose``; ``%APPDATA%/Block/goose/data``
    on Windows). Current releases keep every session in ``sessions.db`` (tables ``sessions``
    and ``messages``); older ones wrote one ``<session id>.jsonl`` per session, which the first
    start of a newer release imports into the database (the files stay: a session in the
    database is not read again from its file).

Reading the database
    Opened with a ``file:...?mode=ro&immutable=1`` URI (as OpenCode's): no lock is taken and no
    ``-wal`` or ``-shm`` file is created beside it. A session of the database is named
    ``sessions.db/<session id>``; its identity is the database's inode with the session's
    message count and latest message row id (a compaction rewrites the rows).

The format (read from block/goose: ``crates/goose/src/session/session_manager.rs`` at
dbec1655, ``conversation/message.rs`` at 6416fe74, ``session/legacy.rs``)
    ``sessions(id, name, description, working_dir, created_at, updated_at, ...)``;
    ``messages(id, message_id, session_id, role, content_json, created_timestamp (unix s),
    metadata_json)``. ``content_json`` is a list of ``{type, ...}`` contents: ``text``,
    ``image``, ``toolRequest`` (``toolCall: {status, value: {name, arguments}}``),
    ``toolResponse`` (``toolResult: {status, value}``), ``thinking``, ``redactedThinking``,
    ``systemNotification``, ``actionRequired``... ``metadata_json`` says whether the user and
    the agent see the message (``userVisible``, ``agentVisible``). A legacy file is a metadata
    line (``working_dir``, ``description``...) then one message a line (``{role, created,
    content, metadata}``).

The mapping
    User and assistant messages with text are turns (the ``text`` contents); tool requests,
    tool responses (carried by user messages) and thinking are hidden parts. Compaction:
    goose keeps the messages it compacted, visible to the user only, and adds the summary
    visible to the agent only: the last such summary after messages the agent no longer sees
    is the archived/active boundary; other messages the user does not see are hidden.
    ``title``: the session's name; ``cwd``: its working dir. Resume:
    ``goose session --resume --session-id <id>`` (``crates/goose-cli/src/cli.rs``).
"""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
import zlib
from collections.abc import Iterable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..files import loads, read_file_bytes
from ..model import JSONDict
from .agent import AgentRead, WholeReadSource
from .base import (
    Identity,
    LinesSkipped,
    Retention,
    Skip,
    SourceKind,
)
from .claude.source import file_ident
from .claude.transcript import Turn, short, split_compaction
from .named import NamedScanStore, named_reader
from .opencode import connect_immutable
from .scan import SourceStore
from .view import session_dict

GOOSE_SOURCE = "goose"
GOOSE_CONTENT_VERSION = "2"  # 2: the database's sessions kept by the vault
DB_NAME = "sessions.db"
MAX_FILE_BYTES = 512 << 20


def default_goose_dir() -> Path:
    """Goose's sessions dir (see the module doc)."""
    root = os.environ.get("GOOSE_PATH_ROOT", "").strip()
    if root:
        return Path(root).expanduser() / "data" / "sessions"
    if sys.platform == "win32":
        appdata = os.environ.get("APPDATA") or str(Path.home() / "AppData" / "Roaming")
        return Path(appdata) / "Block" / "goose" / "data" / "sessions"
    env = os.environ.get("XDG_DATA_HOME", "").strip()
    base = Path(env).expanduser() if env else Path.home() / ".local" / "share"
    return base / "goose" / "sessions"


# ---------------------------------------------------------------------- messages


@dataclass
class GooseMessage:
    role: str
    created: float | None
    content: list[Any]
    user_visible: bool = True
    agent_visible: bool = True


@dataclass
class GooseRead:
    data: JSONDict
    bad: int = 0
    hidden_records: dict[str, int] = field(default_factory=dict)


def _result_text(result: Any) -> str:
    """The text of a ``toolResult`` (``{status, value}``: a list of contents or a
    ``CallToolResult`` with ``content``; ``{status: error, error}``)."""
    if not isinstance(result, dict):
        return short(result)
    if result.get("status") == "error":
        return short(result.get("error", "error"))
    value = result.get("value")
    items = value.get("content") if isinstance(value, dict) else value
    parts = items if isinstance(items, list) else []
    texts = [c["text"] for c in parts if isinstance(c, dict) and isinstance(c.get("text"), str)]
    return "\n".join(texts) if texts else short(value)


def _turns(messages: list[GooseMessage], read: GooseRead) -> list[Turn]:
    """The turns of a session's messages, the compaction boundary marked."""
    summary_at = -1
    for i, m in enumerate(messages):
        if (
            not m.user_visible
            and m.agent_visible
            and any(not earlier.agent_visible for earlier in messages[:i])
        ):
            summary_at = i
    turns: list[Turn] = []
    pending: list[JSONDict] = []

    def count(key: str) -> None:
        read.hidden_records[key] = read.hidden_records.get(key, 0) + 1

    def hide(part: JSONDict) -> None:
        target = next((t for t in reversed(turns) if t.role is not None), None)
        (target.hidden if target is not None else pending).append(part)

    for i, m in enumerate(messages):
        texts: list[str] = []
        hidden: list[JSONDict] = []
        for c in m.content:
            kind = c.get("type") if isinstance(c, dict) else None
            if not isinstance(c, dict):
                count("content/bad")
            elif kind == "text" and isinstance(c.get("text"), str):
                texts.append(c["text"])
            elif kind == "toolRequest":
                call = c.get("toolCall")
                value = call.get("value") if isinstance(call, dict) else None
                name = value.get("name") if isinstance(value, dict) else None
                args = value.get("arguments") if isinstance(value, dict) else call
                label = name if isinstance(name, str) else "?"
                hidden.append({"type": "toolCall", "name": label, "arguments": short(args or {})})
            elif kind == "toolResponse":
                result = c.get("toolResult")
                error = isinstance(result, dict) and result.get("status") == "error"
                hidden.append(
                    {"type": "toolResult", "text": _result_text(result), "is_error": error}
                )
            elif kind == "thinking":
                hidden.append({"type": "thinking", "text": short(c.get("thinking", ""))})
            elif kind == "redactedThinking":
                hidden.append({"type": "thinking", "text": "(redacted)"})
            else:
                count(f"content/{kind}")
                msg = c.get("msg")
                if isinstance(msg, str) and msg:
                    hidden.append({"type": "custom", "text": short(msg)})
        text = "\n".join(t for t in texts if t).strip()
        if i == summary_at:
            turns.append(Turn(None, m.created, [text or "Conversation compacted"]))
            continue
        if not m.user_visible or not text or m.role not in ("user", "assistant"):
            if not m.user_visible and text:
                count("message/agent only")
                hidden.append({"type": "custom", "text": short(text)})
            for part in hidden:
                hide(part)
            continue
        turn = Turn(m.role, m.created, [text])
        turn.hidden = [*pending, *hidden]
        pending = []
        turns.append(turn)
    return turns


def _message(role: Any, created: Any, content: Any, metadata: Any) -> GooseMessage | None:
    if not isinstance(role, str) or not isinstance(content, list):
        return None
    meta = metadata if isinstance(metadata, dict) else {}
    stamp = float(created) if isinstance(created, (int, float)) and created > 0 else None
    return GooseMessage(
        role,
        stamp,
        content,
        user_visible=meta.get("userVisible", True) is not False,
        agent_visible=meta.get("agentVisible", True) is not False,
    )


def session_of(
    session_id: str, info: JSONDict, messages: list[GooseMessage], read: GooseRead, hidden: bool
) -> JSONDict:
    turns = _turns(messages, read)
    if not hidden:
        for turn in turns:
            turn.hidden = []
    archived, active, last = split_compaction(turns, hidden, "goose_compaction")
    meta: JSONDict = {"source": GOOSE_SOURCE, "hidden_records": dict(read.hidden_records)}
    title = info.get("name") or info.get("description")
    if isinstance(title, str) and title.strip():
        meta["title"] = title.strip()
    cwd = info.get("working_dir")
    if isinstance(cwd, str) and cwd:
        meta["cwd"] = cwd
        meta["project"] = cwd
    stamps = [t.timestamp for t in turns if t.role and t.timestamp is not None]
    return session_dict(
        session_id,
        active=active,
        archived=archived,
        created=min(stamps) if stamps else None,
        updated=max(stamps) if stamps else None,
        meta=meta,
        last_compaction=last,
    )


def read_legacy(raw: bytes, session_id: str, *, include_hidden: bool = False) -> GooseRead:
    """A legacy ``<id>.jsonl`` session's bytes."""
    read = GooseRead(data={})
    info: JSONDict = {}
    messages: list[GooseMessage] = []
    for n, line in enumerate(raw.splitlines()):
        if not line.strip():
            continue
        try:
            obj = loads(line)
        except (ValueError, RecursionError):
            read.bad += 1
            continue
        if not isinstance(obj, dict):
            read.bad += 1
        elif n == 0 and "role" not in obj:
            info = obj
        else:
            m = _message(
                obj.get("role"), obj.get("created"), obj.get("content"), obj.get("metadata")
            )
            if m is None:
                read.bad += 1
            else:
                messages.append(m)
    read.data = session_of(session_id, info, messages, read, include_hidden)
    return read


def database_sessions(db: sqlite3.Connection) -> dict[str, tuple[int, int]]:
    """Session id -> (its message count, a number that changes when it is written)."""
    sql = (
        "SELECT s.id, s.name, s.description, s.updated_at,"
        " (SELECT count(*) FROM messages m WHERE m.session_id = s.id),"
        " (SELECT max(m.id) FROM messages m WHERE m.session_id = s.id)"
        " FROM sessions s"
    )
    out: dict[str, tuple[int, int]] = {}
    for sid, name, description, updated, count, last in db.execute(sql):
        if isinstance(sid, str) and sid:
            stamp = zlib.crc32(f"{name}\0{description}\0{updated}".encode())
            out[sid] = (int(count or 0), int(last or 0) * (1 << 32) + stamp)
    return out


def database_session(
    db: sqlite3.Connection, session_id: str, *, include_hidden: bool = False
) -> GooseRead | None:
    row = db.execute(
        "SELECT name, description, working_dir FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if row is None:
        return None
    info: JSONDict = {"name": row[0], "description": row[1], "working_dir": row[2]}
    read = GooseRead(data={})
    messages: list[GooseMessage] = []
    rows = db.execute(
        "SELECT role, content_json, created_timestamp, metadata_json FROM messages"
        " WHERE session_id = ? ORDER BY id",
        (session_id,),
    )
    for role, content_json, created, metadata_json in rows:
        try:
            content = loads(content_json.encode()) if isinstance(content_json, str) else None
            metadata = loads(metadata_json.encode()) if isinstance(metadata_json, str) else None
        except (ValueError, RecursionError):
            read.bad += 1
            continue
        m = _message(role, created, content, metadata)
        if m is None:
            read.bad += 1
        else:
            messages.append(m)
    read.data = session_of(session_id, info, messages, read, include_hidden)
    return read


# ---------------------------------------------------------------------- source


class GooseSource(WholeReadSource):
    """The Goose sessions under one sessions dir (see the module doc)."""

    kind = GOOSE_SOURCE
    index_prefix = f"{GOOSE_SOURCE}-"
    content_version: str | None = GOOSE_CONTENT_VERSION
    # (It parses apart, as every whole-read source does: a copy in a worker process opens
    # a connection of its own.)

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self._refusing: dict[str, int] = {}  # what the listing in progress refuses
        self._lock = threading.Lock()
        self._open: dict[str, tuple[Identity, sqlite3.Connection]] = {}
        self._listed: tuple[Identity, dict[str, tuple[int, int]]] | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_open"] = {}  # connections stay in the process that opened them
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _connection(self) -> sqlite3.Connection | None:
        ident = file_ident(self.root / DB_NAME)
        kept = self._open.get(DB_NAME)
        if kept is not None and kept[0] == ident:
            return kept[1]
        if kept is not None:
            kept[1].close()
            del self._open[DB_NAME]
        if ident is None:
            return None
        db = connect_immutable(self.root / DB_NAME)
        self._open[DB_NAME] = (ident, db)
        return db

    def _db_sessions(self) -> tuple[Identity, dict[str, tuple[int, int]]] | None:
        ident = file_ident(self.root / DB_NAME, self._refusing)
        if ident is None:
            return None
        if self._listed is not None and self._listed[0] == ident:
            return self._listed
        try:
            with closing(connect_immutable(self.root / DB_NAME)) as db:
                self._listed = (ident, database_sessions(db))
        except sqlite3.Error:
            return None
        return self._listed

    def list_files(self) -> dict[str, Identity]:
        self._refusing = {}
        self.refused = self._refusing
        out: dict[str, Identity] = {}
        listed = self._db_sessions()
        in_db: set[str] = set()
        if listed is not None:
            db_ident, sessions = listed
            for sid, (count, stamp) in sessions.items():
                in_db.add(sid)
                out[f"{DB_NAME}/{sid}"] = (count, stamp, db_ident[2])
        try:
            names = sorted(os.listdir(self.root))
        except OSError:
            names = []
        for name in names:
            if name.endswith(".jsonl") and name[: -len(".jsonl")] not in in_db:
                ident = file_ident(self.root / name, self._refusing)
                if ident is not None:
                    out[name] = ident
        return out

    def kept_whole(self, name: str) -> bool:
        """A session of the database is rows of it: the vault keeps it whole (an older
        ``<id>.jsonl`` is kept as its file)."""
        return name.startswith(f"{DB_NAME}/")

    def identity(self, name: str) -> Identity | None:
        """A session of the database is no file of its own: its identity is its message
        count and last update in the database (as :meth:`list_files` gives it), read again
        only when the database file changed; an older JSONL session's is its file's."""
        if not name.startswith(f"{DB_NAME}/"):
            return file_ident(self.root / name) if name.endswith(".jsonl") else None
        listed = self._db_sessions()
        if listed is None:
            return None
        db_ident, sessions = listed
        got = sessions.get(name[len(DB_NAME) + 1 :])
        return None if got is None else (got[0], got[1], db_ident[2])

    def identities(self, names: Iterable[str]) -> dict[str, Identity | None]:
        return {n: self.identity(n) for n in names}

    def read_session(self, name: str, include_hidden: bool) -> AgentRead | Skip:
        try:
            if name.startswith(f"{DB_NAME}/"):
                sid = name[len(DB_NAME) + 1 :]
                with self._lock:
                    db = self._connection()
                    if db is None:
                        return Skip("unreadable: not a regular file")
                    got = database_session(db, sid, include_hidden=include_hidden)
                raw = None
            elif name.endswith(".jsonl"):
                raw = read_file_bytes(
                    self.root / name, max_bytes=MAX_FILE_BYTES, follow_links=False
                )
                got = read_legacy(raw, Path(name).stem, include_hidden=include_hidden)
            else:
                return Skip("not a Goose session")
        except (OSError, sqlite3.Error) as exc:
            return Skip(f"unreadable: {exc}")
        if got is None:
            return Skip("not a Goose session")
        return AgentRead(got.data, LinesSkipped(bad=got.bad), raw)

    def named_files(self, session_id: str, names: set[str]) -> list[str]:
        return [
            n
            for n in self.file_order(names)
            if n in (f"{DB_NAME}/{session_id}", f"{session_id}.jsonl")
        ]


def _open_scan(path: Path) -> SourceStore:
    return NamedScanStore(GooseSource(path))


KIND = SourceKind(
    name=GOOSE_SOURCE,
    prefix=f"{GOOSE_SOURCE}:",
    read_only=True,
    default_dirs=lambda _cwd: [default_goose_dir()],
    only_if_present=True,
    source=GooseSource,
    open_scan=_open_scan,
    reader=named_reader,
    describe="Goose sessions dir",
    retention=lambda: Retention(
        "Goose keeps sessions until they are deleted in Goose (no automatic deletion)", False
    ),
)
