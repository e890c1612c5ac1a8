"""OpenCode sessions as a read-only source: its SQLite database and the older JSON storage.

Where they live
    ``$XDG_DATA_HOME/opencode`` (default ``~/.local/share/opencode``): current releases keep
    every session in ``opencode.db`` (``opencode-<channel>.db`` for other release channels),
    tables ``session``, ``message`` and ``part`` (``message.data`` and ``part.data`` are JSON);
    older ones wrote ``storage/session/<project>/<session>.json``,
    ``storage/message/<session>/<message>.json`` and ``storage/part/<message>/<part>.json``,
    which a migration copies into the database (the tree may stay on disk: a session in a
    database is not read again from it).

Reading a database
    Opened with a ``file:...?mode=ro&immutable=1`` URI: no lock is taken and no ``-wal`` or
    ``-shm`` file is created beside it, so OpenCode, running, is never blocked. Immutable means
    what OpenCode has written to its write-ahead log and not yet checkpointed into the file is
    not seen until it is (SQLite checkpoints every 1,000 pages, OpenCode at each start).
    A session of a database is named ``<database file>/<session id>``; its identity is the
    database's inode with the session's latest update time and its row counts.

The mapping (one PraisonAI-shaped session dict per session)
    - ``user`` messages: their ``text`` parts (``synthetic`` or ``ignored`` text, files,
      agents and subtasks are hidden parts).
    - ``assistant`` messages: their ``text`` parts; ``reasoning`` and ``tool`` parts (call and
      result in one) are hidden parts; step, snapshot, patch and retry parts are counted.
    - Compaction: a user message holding a ``compaction`` part is the archived/active
      boundary; the summary is the text of the assistant message flagged ``summary`` after it.
    - ``metadata``: ``title``, ``cwd`` (the session's directory), ``parent_session`` and
      ``lineage_id`` (a subagent session started by the ``task`` tool points to its parent:
      they fold into one hit).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..files import loads, read_file_bytes, real_dir, regular_lstat
from ..model import JSONDict
from .agent import AgentRead, WholeReadSource
from .base import Identity, LinesSkipped, Retention, Skip
from .claude.source import file_ident
from .claude.transcript import Turn, short, split_compaction
from .named import agent_kind
from .view import session_dict

OPENCODE_SOURCE = "opencode"
OPENCODE_CONTENT_VERSION = "2"  # 2: every session kept by the vault
MAX_JSON_BYTES = 64 << 20  # one message or part file of the older layout
_SEP = "/"


# ---------------------------------------------------------------------- where


def default_opencode_dir() -> Path:
    """OpenCode's data dir: ``$XDG_DATA_HOME/opencode``, else ``~/.local/share/opencode``."""
    env = os.environ.get("XDG_DATA_HOME", "").strip()
    base = Path(env).expanduser() if env else Path.home() / ".local" / "share"
    return base / "opencode"


def is_database(name: str) -> bool:
    """``opencode.db`` or ``opencode-<channel>.db`` (never its ``-wal`` / ``-shm``)."""
    return name == "opencode.db" or (name.startswith("opencode-") and name.endswith(".db"))


def connect_immutable(path: Path) -> sqlite3.Connection:
    """A read-only, immutable connection to database ``path``: no lock, no file created."""
    uri = f"file:{quote(os.fspath(path.resolve()))}?mode=ro&immutable=1"
    return sqlite3.connect(uri, uri=True, check_same_thread=False)


# ---------------------------------------------------------------------- mapping


@dataclass
class OpenCodeRead:
    """One session read: its dict and what was left out."""

    data: JSONDict
    unknown_parts: dict[str, int] = field(default_factory=dict)
    bad: int = 0


#: Part types that carry nothing to read (bookkeeping of a step).
QUIET_PARTS = frozenset({"step-start", "step-finish", "snapshot", "patch", "retry"})


def _epoch(value: Any) -> float | None:
    """Seconds of an OpenCode time (epoch milliseconds)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value) / 1000.0
    return None


def _tool_parts(part: JSONDict) -> list[JSONDict]:
    name = part.get("tool") if isinstance(part.get("tool"), str) else "?"
    found = part.get("state")
    state: JSONDict = found if isinstance(found, dict) else {}
    out: list[JSONDict] = [
        {"type": "toolCall", "name": name, "arguments": short(state.get("input") or {})}
    ]
    status = state.get("status")
    if status == "completed":
        out.append(
            {"type": "toolResult", "tool_name": name, "text": short(state.get("output", ""))}
        )
    elif status == "error":
        text = short(state.get("error", ""))
        out.append({"type": "toolResult", "tool_name": name, "text": text, "is_error": True})
    return out


def _hidden_of(part: JSONDict, kind: str) -> list[JSONDict]:
    """The hidden parts of a part that is not visible text."""
    if kind == "reasoning":
        return [{"type": "thinking", "text": short(part.get("text", ""))}]
    if kind == "tool":
        return _tool_parts(part)
    if kind == "text":
        return [{"type": "custom", "text": short(part.get("text", ""))}]
    if kind == "file":
        name = part.get("filename") or part.get("url") or ""
        return [{"type": "custom", "text": short(f"file: {name}")}]
    if kind == "agent":
        return [{"type": "custom", "text": short(f"agent: {part.get('name', '')}")}]
    if kind == "subtask":
        words = f"subtask ({part.get('agent', '')}): {part.get('prompt', '')}"
        return [{"type": "custom", "text": short(words)}]
    return []


def opencode_session(
    info: JSONDict,
    messages: Iterable[tuple[JSONDict, list[JSONDict]]],
    *,
    include_hidden: bool = False,
) -> OpenCodeRead:
    """The session dict of session ``info`` (``id``, ``title``, ``directory``, ``parentID``,
    ``time``) and its ``(message, parts)`` in order."""
    read = OpenCodeRead(data={})
    turns: list[Turn] = []
    pending_summary: Turn | None = None
    for msg, parts in messages:
        role = msg.get("role")
        times = msg.get("time")
        stamp = _epoch(times.get("created") if isinstance(times, dict) else None)
        if role not in ("user", "assistant"):
            read.bad += 1
            continue
        texts: list[str] = []
        hidden: list[JSONDict] = []
        compaction: JSONDict | None = None
        for part in parts:
            kind = part.get("type")
            if not isinstance(kind, str):
                read.bad += 1
                continue
            if kind == "text" and not part.get("synthetic") and not part.get("ignored"):
                if isinstance(part.get("text"), str):
                    texts.append(part["text"])
                continue
            if kind == "compaction":
                compaction = part
                continue
            if kind in QUIET_PARTS:
                continue
            found = _hidden_of(part, kind)
            if not found:
                read.unknown_parts[kind] = read.unknown_parts.get(kind, 0) + 1
            hidden.extend(found)
        if compaction is not None and role == "user":
            pending_summary = Turn(
                None, stamp, [], {"auto_compaction": bool(compaction.get("auto"))}
            )
            turns.append(pending_summary)
            continue
        if role == "assistant" and msg.get("summary") is True and pending_summary is not None:
            pending_summary.texts.extend(texts)
            pending_summary = None
            continue
        meta: JSONDict = {"opencode_id": msg.get("id")}
        if role == "assistant" and isinstance(msg.get("modelID"), str):
            meta["model"] = msg["modelID"]
        turn = Turn(role, stamp, texts, meta)
        turn.hidden = hidden if include_hidden else []
        turns.append(turn)
    archived, active, last = split_compaction(turns, include_hidden, "opencode_compaction")
    sid = str(info.get("id") or "")
    meta_out: JSONDict = {"source": OPENCODE_SOURCE}
    title = info.get("title")
    if isinstance(title, str) and title.strip():
        meta_out["title"] = title.strip()
    directory = info.get("directory")
    if isinstance(directory, str) and directory:
        meta_out["cwd"] = directory
        meta_out["project"] = directory
    parent = info.get("parentID")
    if isinstance(parent, str) and parent:
        meta_out["parent_session"] = parent
        meta_out["lineage_id"] = parent
    clock = info.get("time")
    span: JSONDict = clock if isinstance(clock, dict) else {}
    stamps = [t.timestamp for t in turns if t.role and t.timestamp is not None]
    created = _epoch(span.get("created")) or (min(stamps) if stamps else None)
    updated = max(stamps) if stamps else _epoch(span.get("updated")) or created
    read.data = session_dict(
        sid,
        active=active,
        archived=archived,
        created=created,
        updated=updated,
        meta=meta_out,
        last_compaction=last,
    )
    return read


# ---------------------------------------------------------------------- the database


def _loads(text: Any) -> JSONDict | None:
    """A JSON object of a ``data`` column or a file (None: anything else)."""
    if isinstance(text, str):
        text = text.encode("utf-8", "surrogatepass")
    if not isinstance(text, bytes):
        return None
    try:
        value = loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def database_sessions(path: Path) -> dict[str, tuple[int, int]]:
    """Session id -> (row count of its messages and parts, its latest update in ms) of the
    database at ``path``."""
    sql = (
        "SELECT s.id, s.time_updated,"
        " (SELECT count(*) FROM message m WHERE m.session_id = s.id),"
        " (SELECT count(*) FROM part p WHERE p.session_id = s.id),"
        " (SELECT max(p.time_updated) FROM part p WHERE p.session_id = s.id)"
        " FROM session s"
    )
    out: dict[str, tuple[int, int]] = {}
    with closing(connect_immutable(path)) as db:
        for sid, updated, messages, parts, latest in db.execute(sql):
            if isinstance(sid, str):
                when = max(int(updated or 0), int(latest or 0))
                out[sid] = (int(messages) + int(parts), when)
    return out


def database_session(
    db: sqlite3.Connection, session_id: str, *, include_hidden: bool = False
) -> OpenCodeRead | None:
    """Session ``session_id`` of the database ``db`` is connected to (None: not in it)."""
    row = db.execute(
        "SELECT id, parent_id, directory, title, time_created, time_updated"
        " FROM session WHERE id = ?",
        (session_id,),
    ).fetchone()
    if row is None:
        return None
    info: JSONDict = {
        "id": row[0],
        "parentID": row[1],
        "directory": row[2],
        "title": row[3],
        "time": {"created": row[4], "updated": row[5]},
    }
    parts: dict[str, list[JSONDict]] = {}
    bad = 0
    for mid, data in db.execute(
        "SELECT message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id",
        (session_id,),
    ):
        part = _loads(data)
        if part is None:
            bad += 1
            continue
        parts.setdefault(mid, []).append(part)
    messages: list[tuple[JSONDict, list[JSONDict]]] = []
    for mid, data in db.execute(
        "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id",
        (session_id,),
    ):
        msg = _loads(data)
        if msg is None:
            bad += 1
            continue
        msg["id"] = mid
        messages.append((msg, parts.get(mid, [])))
    read = opencode_session(info, messages, include_hidden=include_hidden)
    read.bad += bad
    return read


# ---------------------------------------------------------------------- the JSON storage


def _json_files(folder: Path) -> list[Path]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [folder / n for n in names if n.endswith(".json") and regular_lstat(folder / n)]


def storage_parts(storage: Path, session_id: str) -> list[Path]:
    """The message and part files of a session of the older layout, as they are now."""
    out: list[Path] = []
    for msg in _json_files(storage / "message" / session_id):
        out.append(msg)
        out.extend(_json_files(storage / "part" / msg.stem))
    return out


def _read_json(path: Path) -> JSONDict | None:
    try:
        return _loads(read_file_bytes(path, max_bytes=MAX_JSON_BYTES, follow_links=False))
    except OSError:
        return None


def storage_session(
    storage: Path, session_file: Path, *, include_hidden: bool = False
) -> OpenCodeRead | None:
    """The session of ``storage/session/<project>/<id>.json`` with its messages and parts
    (ids from the file names, as OpenCode's migration takes them)."""
    info = _read_json(session_file)
    if info is None:
        return None
    info["id"] = session_file.stem
    messages: list[tuple[JSONDict, list[JSONDict]]] = []
    bad = 0
    for path in _json_files(storage / "message" / session_file.stem):
        msg = _read_json(path)
        if msg is None:
            bad += 1
            continue
        msg["id"] = path.stem
        parts = [p for p in map(_read_json, _json_files(storage / "part" / path.stem)) if p]
        messages.append((msg, parts))

    def created(item: tuple[JSONDict, list[JSONDict]]) -> tuple[float, str]:
        times = item[0].get("time")
        when = times.get("created") if isinstance(times, dict) else None
        if isinstance(when, (int, float)) and not isinstance(when, bool):
            return (float(when), str(item[0]["id"]))
        return (0.0, str(item[0]["id"]))

    messages.sort(key=created)
    read = opencode_session(info, messages, include_hidden=include_hidden)
    read.bad += bad
    return read


# ---------------------------------------------------------------------- source


class OpenCodeSource(WholeReadSource):
    """OpenCode's sessions under its data dir (see the module doc)."""

    kind = OPENCODE_SOURCE
    index_prefix = f"{OPENCODE_SOURCE}-"
    content_version: str | None = OPENCODE_CONTENT_VERSION
    # (It parses apart, as every whole-read source does: a copy in a worker process opens
    # a connection of its own.)

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        # database file -> (its identity, its sessions) as last listed (read immutable: the
        # same file is the same sessions)
        self._listed: dict[str, tuple[Identity, dict[str, tuple[int, int]]]] = {}
        # database file -> (its identity, an open immutable connection to it)
        self._open: dict[str, tuple[Identity, sqlite3.Connection]] = {}
        self._lock = threading.Lock()  # one read of a kept connection at a time

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_open"] = {}  # connections stay in the process that opened them
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _connection(self, db_name: str) -> sqlite3.Connection | None:
        """An immutable connection to database ``db_name`` as it is now (one is kept per
        file while the file is unchanged: reading a session opens nothing)."""
        ident = file_ident(self.root / db_name)
        kept = self._open.get(db_name)
        if ident is None:
            if kept is not None:
                kept[1].close()
                del self._open[db_name]
            return None
        if kept is not None and kept[0] == ident:
            return kept[1]
        if kept is not None:
            kept[1].close()
        db = connect_immutable(self.root / db_name)
        self._open[db_name] = (ident, db)
        return db

    def _databases(self, refused: dict[str, int]) -> Iterator[tuple[str, Identity]]:
        try:
            names = sorted(os.listdir(self.root))
        except OSError:
            return
        for name in names:
            if is_database(name):
                ident = file_ident(self.root / name, refused)
                if ident is not None:
                    yield name, ident

    def list_files(self) -> dict[str, Identity]:
        refused: dict[str, int] = {}
        self.refused = refused
        out: dict[str, Identity] = {}
        seen: set[str] = set()
        for db_name, db_ident in self._databases(refused):
            sessions = self._sessions(db_name, db_ident)
            if sessions is None:
                continue
            for sid, (rows, when) in sessions.items():
                if sid in seen:
                    continue
                seen.add(sid)
                out[f"{db_name}{_SEP}{sid}"] = (rows, when * 1_000_000, db_ident[2])
        storage = self.root / "storage"
        for project in _json_dirs(storage / "session"):
            for path in _json_files(project):
                if path.stem in seen:
                    continue  # migrated: the database's copy is read
                ident = self._storage_identity(path)
                if ident is not None:
                    out[path.relative_to(self.root).as_posix()] = ident
        return out

    def _sessions(self, db_name: str, db_ident: Identity) -> dict[str, tuple[int, int]] | None:
        """The sessions of database ``db_name`` (whose file's identity is ``db_ident``) by id,
        with their (rows, last update); None when it cannot be read."""
        cached = self._listed.get(db_name)
        if cached is not None and cached[0] == db_ident:
            return cached[1]  # the file is as it was: so are its sessions
        try:
            sessions = database_sessions(self.root / db_name)
        except sqlite3.Error:
            return None
        self._listed[db_name] = (db_ident, sessions)
        return sessions

    def kept_whole(self, name: str) -> bool:
        """A session is rows of a database, or a tree of JSON files: the vault keeps it whole."""
        return True

    def identity(self, name: str) -> Identity | None:
        """A session of a database is no file of its own: its identity is its row count and
        last update in the database (as :meth:`list_files` gives it), read again only when
        the database file changed; a JSON session's is its files'."""
        if name.startswith("storage/"):
            return self._storage_identity(self.root / name)
        db_name, _, sid = name.partition(_SEP)
        if not is_database(db_name) or not sid:
            return None
        db_ident = file_ident(self.root / db_name)
        if db_ident is None:
            return None
        sessions = self._sessions(db_name, db_ident)
        got = None if sessions is None else sessions.get(sid)
        return None if got is None else (got[0], got[1] * 1_000_000, db_ident[2])

    def _storage_identity(self, path: Path) -> Identity | None:
        own = file_ident(path)
        if own is None:
            return None
        size, mtime, inode = own
        for part in storage_parts(self.root / "storage", path.stem):
            ident = file_ident(part)
            if ident is not None:
                size += ident[0]
                mtime = max(mtime, ident[1])
        return (size, mtime, inode)

    def identities(self, names: Iterable[str]) -> dict[str, Identity | None]:
        wanted = list(names)
        if any(not n.startswith("storage/") for n in wanted):
            files = self.list_files()
            return {n: files.get(n) for n in wanted}
        return {n: self._storage_identity(self.root / n) for n in wanted}

    def read_session(self, name: str, include_hidden: bool) -> AgentRead | Skip:
        try:
            if name.startswith("storage/"):
                got = storage_session(
                    self.root / "storage", self.root / name, include_hidden=include_hidden
                )
            else:
                db_name, _, sid = name.partition(_SEP)
                if not is_database(db_name) or not sid:
                    return Skip("not an OpenCode session")
                with self._lock:
                    db = self._connection(db_name)
                    if db is None:
                        return Skip("unreadable: not a regular file")
                    got = database_session(db, sid, include_hidden=include_hidden)
        except (OSError, sqlite3.Error) as exc:
            return Skip(f"unreadable: {exc}")
        if got is None:
            return Skip("not an OpenCode session")
        return AgentRead(got.data, LinesSkipped(bad=got.bad, unknown=dict(got.unknown_parts)))

    def named_files(self, session_id: str, names: set[str]) -> list[str]:
        """The names that end with the session id (``<db>/<id>`` or ``.../<id>.json``)."""
        return [
            n
            for n in self.file_order(names)
            if n.endswith((f"{_SEP}{session_id}", f"{_SEP}{session_id}.json"))
        ]


def _json_dirs(folder: Path) -> list[Path]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [folder / n for n in names if real_dir(folder / n)]


KIND = agent_kind(
    OPENCODE_SOURCE,
    OpenCodeSource,
    default_opencode_dir,
    "OpenCode data dir",
    lambda: Retention(
        "OpenCode keeps sessions until they are deleted in OpenCode (no automatic deletion)",
        False,
    ),
)
