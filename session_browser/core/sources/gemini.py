"""Gemini CLI chats as a read-only source.

Where they live
    ``$GEMINI_CLI_HOME`` (else the home dir) ``/.gemini/tmp/<project>/chats/session-*.json``
    (older releases: one JSON object per file) or ``session-*.jsonl`` (newer ones). ``<project>``
    is the SHA-256 of the project dir (older releases) or a short slug (newer ones, listed in
    ``~/.gemini/projects.json`` and named in ``<project>/.project_root``). A store of this kind
    is the ``tmp`` dir (every project) or any dir under it; every ``session-*.json[l]`` below it
    is read. A subagent's own chat (``chats/<parent session id>/<agent id>.jsonl``) is no
    session of its own: it is folded into its parent (its turns after the tool call whose
    ``agentId`` names it; its file's identity folded into the parent's, and kept with it by
    the vault).

The format (read from gemini-cli's ``chatRecordingService.ts``; not a stable contract)
    The legacy file is ``{sessionId, projectHash, startTime, lastUpdated, summary?, messages}``.
    The JSONL file starts with that object without ``messages``, then has one line per message
    record (a record written again with the same ``id`` replaces the earlier one in place),
    ``{"$set": {...}}`` lines that update the metadata (``summary`` is the title; a
    ``messages`` list replaces the whole history) and ``{"$rewindTo": id}`` lines that drop
    that message and every later one. A migrated legacy file is written beside the old one
    as ``<name>.jsonl``: the old one is then not listed.

The mapping (one PraisonAI-shaped session dict per file)
    - ``user`` messages: user turns (``displayContent`` when given: what was typed, before
      ``@file`` expansion). A user record holding only tool responses (newer releases record
      them so) and injected context (``<session_context>``, ``<hook_context>``) are hidden.
    - ``gemini`` messages: assistant turns; ``thoughts`` (and ``thought`` parts), tool calls
      with their results are hidden parts (``in:tools``); ``model`` is kept per turn.
    - ``info`` / ``error`` / ``warning`` messages (CLI notices) are hidden notes.
    - Compaction: a ``$set.messages`` that brings a new user message holding the
      ``<state_snapshot>`` summary (what a compression writes) is the archived/active
      boundary (the records it drops are archived). Any other replacement (a rollback, a
      resume) and ``$rewindTo`` drop records as Gemini CLI does.
    - ``metadata``: ``title`` (``summary``), ``cwd`` (the project dir, when
      ``.project_root`` or ``projects.json`` names it), ``project_hash``.

Nothing here writes, locks, renames or creates anything: files are read whole (``rb``).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..files import loads, read_file_bytes, real_dir, rel_below
from ..model import JSONDict, iso_epoch
from .agent import AgentRead, WholeReadSource, listed_file
from .base import Identity, LinesSkipped, Retention, Skip
from .claude.source import empty_reason, file_ident, fold
from .claude.transcript import Turn, short, split_compaction
from .named import agent_kind
from .view import session_dict

GEMINI_SOURCE = "gemini"
GEMINI_CONTENT_VERSION = "1"  # what this reader puts in the rows; another value rebuilds
SESSION_PREFIX = "session-"
#: Text gemini-cli puts in a user record that nobody typed (its ``isIgnoredUserContent``).
INJECTED_PREFIXES = ("<session_context>", "<hook_context>")
SNAPSHOT_TAG = "<state_snapshot>"
NOTE_TYPES = frozenset({"info", "error", "warning"})
#: A session file bigger than this is not read (one chat file is rewritten whole by
#: legacy releases; a JSONL file grows by a line a message).
MAX_FILE_BYTES = 512 << 20


# ---------------------------------------------------------------------- where


def gemini_home() -> Path:
    """Gemini CLI's data folder: ``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini``."""
    env = os.environ.get("GEMINI_CLI_HOME", "").strip()
    return (Path(env).expanduser() if env else Path.home()) / ".gemini"


def default_gemini_dir() -> Path:
    """Where the chats are: ``<gemini home>/tmp`` (one folder per project)."""
    return gemini_home() / "tmp"


#: gemini-cli's defaults for ``general.sessionRetention`` (its settings schema, v0.56.0):
#: chats older than 30 days are deleted at start-up.
DEFAULT_RETENTION: JSONDict = {"enabled": True, "maxAge": "30d"}


def gemini_retention() -> Retention:
    """What Gemini CLI deletes at start-up: ``general.sessionRetention`` of its user
    ``settings.json`` over its defaults (a project's own settings may differ)."""
    path = gemini_home() / "settings.json"
    try:
        data = json.loads(read_file_bytes(path, max_bytes=16 << 20))
    except (OSError, ValueError):
        data = None
    general = data.get("general") if isinstance(data, dict) else None
    own = general.get("sessionRetention") if isinstance(general, dict) else None
    where = (
        f"general.sessionRetention in {path}"
        if isinstance(own, dict)
        else f"the default; {path} does not set general.sessionRetention"
    )
    rule = {**DEFAULT_RETENTION, **(own if isinstance(own, dict) else {})}
    if rule.get("enabled") is not True:
        return Retention(f"Gemini CLI keeps chats until they are deleted ({where})", False)
    limits: list[str] = []
    if isinstance(rule.get("maxAge"), str) and rule["maxAge"]:
        limits.append(f"older than {rule['maxAge']}")
    count = rule.get("maxCount")
    if isinstance(count, int) and not isinstance(count, bool):
        limits.append(f"beyond the newest {count}")
    if not limits:
        return Retention(f"Gemini CLI keeps chats until they are deleted ({where})", False)
    return Retention(f"Gemini CLI deletes chats {' and '.join(limits)} ({where})", True)


def project_dirs(tmp_dir: Path) -> dict[str, str]:
    """Project folder name (slug or path hash) -> project dir, from ``projects.json`` beside
    ``tmp_dir`` (``{"projects": {dir: slug}}``); a dir is also known by its SHA-256, the name
    older releases gave its folder. Empty when there is none."""
    try:
        data = json.loads(read_file_bytes(tmp_dir.parent / "projects.json", max_bytes=16 << 20))
    except (OSError, ValueError):
        return {}
    projects = data.get("projects") if isinstance(data, dict) else None
    out: dict[str, str] = {}
    for path, slug in projects.items() if isinstance(projects, dict) else ():
        if isinstance(path, str) and path:
            out[hashlib.sha256(path.encode()).hexdigest()] = path
            if isinstance(slug, str) and slug:
                out[slug] = path
    return out


def project_root_file(folder: Path) -> str | None:
    """The project dir newer releases write in ``<project folder>/.project_root``."""
    try:
        text = read_file_bytes(folder / ".project_root", max_bytes=1 << 16).decode()
    except (OSError, UnicodeDecodeError):
        return None
    text = text.strip()
    return text or None


# ---------------------------------------------------------------------- parts


def _parts(content: Any) -> list[Any]:
    """A ``PartListUnion`` as a list of parts (a string is one text part)."""
    if isinstance(content, list):
        return content
    return [] if content is None else [content]


def _text(content: Any, *, thoughts: bool = False) -> str:
    """The text of a content: strings and ``text`` parts (``thought`` parts only when
    ``thoughts``), one per line."""
    out: list[str] = []
    for part in _parts(content):
        if isinstance(part, str):
            if not thoughts:
                out.append(part)
        elif (
            isinstance(part, dict)
            and isinstance(part.get("text"), str)
            and bool(part.get("thought")) == thoughts
        ):
            out.append(part["text"])
    return "\n".join(t for t in out if t)


def _list(value: Any) -> list[Any]:
    """``value`` when it is a list, else an empty one (a field of the wrong type)."""
    return value if isinstance(value, list) else []


def _has(content: Any, key: str) -> bool:
    return any(isinstance(p, dict) and key in p for p in _parts(content))


def _result_text(result: Any) -> str:
    """The output of a tool call's ``result`` (``functionResponse`` parts), as text."""
    out: list[str] = []
    for part in _parts(result):
        response = part.get("functionResponse") if isinstance(part, dict) else None
        if isinstance(response, dict):
            body = response.get("response")
            if isinstance(body, dict) and set(body) <= {"output", "error"}:
                value = body.get("output", body.get("error"))
                out.append(value if isinstance(value, str) else short(value))
            else:
                out.append(short(body))
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(part["text"])
        elif part is not None:
            out.append(short(part))
    return "\n".join(out)


# ---------------------------------------------------------------------- reading


@dataclass
class GeminiRead:
    """What reading one chat file found."""

    data: JSONDict
    skipped_lines: int = 0
    unknown_records: dict[str, int] = field(default_factory=dict)
    hidden_records: dict[str, int] = field(default_factory=dict)


class _History:
    """The message records of a chat file as gemini-cli's loader keeps them, plus what its
    compactions archived (boundary markers included)."""

    def __init__(self) -> None:
        self.live: dict[str, JSONDict] = {}  # id -> record, in first-written order
        self.past: list[JSONDict | Turn] = []  # archived records and boundary markers

    def put(self, record: JSONDict) -> None:
        self.live[record["id"]] = record

    def rewind(self, message_id: str) -> None:
        ids = list(self.live)
        cut = ids.index(message_id) if message_id in self.live else 0
        for key in ids[cut:]:
            del self.live[key]

    def replace(self, records: list[JSONDict]) -> None:
        """A ``$set.messages`` checkpoint: a compaction when it brings a new user message
        holding the ``<state_snapshot>`` summary (after the session context gemini-cli puts
        first), whose place is the boundary; the records it drops are archived."""
        summary = next(
            (
                r
                for r in records
                if r["id"] not in self.live
                and r.get("type") == "user"
                and SNAPSHOT_TAG in _text(r.get("content"))
            ),
            None,
        )
        if summary is not None:
            kept = {r["id"] for r in records}
            self.past.extend(r for key, r in self.live.items() if key not in kept)
            text = _text(summary.get("content"))
            self.past.append(Turn(None, iso_epoch(summary.get("timestamp")), [text]))
            records = [r for r in records if r is not summary]
        self.live = {}
        for record in records:
            self.put(record)

    def records(self) -> list[JSONDict | Turn]:
        return [*self.past, *self.live.values()]


def _message(obj: Any) -> JSONDict | None:
    return obj if isinstance(obj, dict) and isinstance(obj.get("id"), str) else None


def _records(raw: bytes, meta: JSONDict, read: GeminiRead) -> _History:
    """The history of a chat file's bytes (a legacy object or JSONL lines); its metadata
    lines are merged into ``meta``."""
    history = _History()
    stripped = raw.lstrip()
    objects: list[Any]
    try:
        whole = loads(stripped) if stripped.startswith(b"{") and b"\n{" not in raw else None
    except (ValueError, RecursionError):
        whole = None
    if isinstance(whole, dict):
        objects = [whole]
    else:
        objects = []
        for line in raw.splitlines():
            if not line.strip():
                continue
            try:
                objects.append(loads(line))
            except (ValueError, RecursionError):
                read.skipped_lines += 1
    for obj in objects:
        if not isinstance(obj, dict):
            read.skipped_lines += 1
        elif isinstance(obj.get("$rewindTo"), str):
            history.rewind(obj["$rewindTo"])
        elif isinstance(obj.get("id"), str):
            history.put(obj)
        elif isinstance(obj.get("$set"), dict):
            update = obj["$set"]
            messages = update.get("messages")
            if isinstance(messages, list):
                history.replace([m for m in map(_message, messages) if m is not None])
            meta.update({k: v for k, v in update.items() if k != "messages"})
        elif isinstance(obj.get("sessionId"), str):
            meta.update({k: v for k, v in obj.items() if k != "messages"})
            for m in _list(obj.get("messages")):
                if _message(m) is not None:
                    history.put(m)
        else:
            key = next(iter(obj), "empty")
            read.unknown_records[key] = read.unknown_records.get(key, 0) + 1
    return history


def _count(read: GeminiRead, key: str) -> None:
    read.hidden_records[key] = read.hidden_records.get(key, 0) + 1


def _tool_parts(calls: Any) -> list[JSONDict]:
    out: list[JSONDict] = []
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, dict):
            continue
        name = call.get("name") if isinstance(call.get("name"), str) else "?"
        out.append({"type": "toolCall", "name": name, "arguments": short(call.get("args") or {})})
        status = call.get("status")
        result = _result_text(call.get("result"))
        if result or status not in (None, "success"):
            out.append(
                {
                    "type": "toolResult",
                    "tool_name": name,
                    "text": short(result or str(status)),
                    "is_error": status in ("error", "cancelled"),
                }
            )
    return out


def _turn(record: JSONDict, read: GeminiRead, hidden_before: list[JSONDict]) -> Turn | None:
    """The turn of one message record (None: a record with no turn of its own; what it
    holds goes to ``hidden_before``, for the turn before it)."""
    kind = record.get("type")
    stamp = iso_epoch(record.get("timestamp"))
    content = record.get("content")
    if kind == "user":
        shown = record.get("displayContent")
        text = _text(shown if shown is not None else content).strip()
        if not text:
            # Tool responses newer releases record as a user message: the tool call of the
            # turn before already holds them as its result.
            responses = _has(content, "functionResponse")
            _count(read, "user/functionResponse" if responses else "user/empty")
            return None
        if text.startswith(INJECTED_PREFIXES):
            _count(read, "user/injected")
            hidden_before.append({"type": "custom", "text": short(text)})
            return None
        return Turn("user", stamp, [text], {"gemini_id": record["id"]})
    if kind == "gemini":
        turn = Turn("assistant", stamp, [_text(content)], {"gemini_id": record["id"]})
        if isinstance(record.get("model"), str):
            turn.meta["model"] = record["model"]
        for thought in _list(record.get("thoughts")):
            if isinstance(thought, dict):
                subject, body = thought.get("subject"), thought.get("description")
                words = [w for w in (subject, body) if isinstance(w, str) and w]
                turn.hidden.append({"type": "thinking", "text": short(": ".join(words))})
        thinking = _text(content, thoughts=True)
        if thinking:
            turn.hidden.append({"type": "thinking", "text": short(thinking)})
        for part in _parts(content):
            call = part.get("functionCall") if isinstance(part, dict) else None
            if isinstance(call, dict) and not record.get("toolCalls"):
                name = call.get("name") if isinstance(call.get("name"), str) else "?"
                turn.hidden.append(
                    {"type": "toolCall", "name": name, "arguments": short(call.get("args") or {})}
                )
        turn.hidden.extend(_tool_parts(record.get("toolCalls")))
        return turn
    _count(read, f"message/{kind}" if isinstance(kind, str) else "message/untyped")
    note = _text(content).strip()
    if note:
        label = kind if isinstance(kind, str) and kind in NOTE_TYPES else "note"
        hidden_before.append({"type": "custom", "text": short(f"{label}: {note}")})
    return None


def _chat_turns(raw: bytes, read: GeminiRead, meta: JSONDict) -> tuple[list[Turn], dict[str, Turn]]:
    """The turns of a chat file's bytes (hidden parts attached), and the turn of each tool
    call that ran a subagent, by the subagent's id (``agentId``)."""
    history = _records(raw, meta, read)
    turns: list[Turn] = []
    pending: list[JSONDict] = []
    by_agent: dict[str, Turn] = {}
    for record in history.records():
        if isinstance(record, Turn):
            turns.append(record)
            continue
        before: list[JSONDict] = []
        turn = _turn(record, read, before)
        target = next((t for t in reversed(turns) if t.role is not None), None)
        if before:
            if target is None:
                pending.extend(before)
            else:
                target.hidden.extend(before)
        if turn is not None:
            turn.hidden[:0] = pending
            pending = []
            turns.append(turn)
            for call in _list(record.get("toolCalls")):
                agent = call.get("agentId") if isinstance(call, dict) else None
                if isinstance(agent, str) and agent:
                    by_agent[agent] = turn
    return turns, by_agent


def subagent_chats(path: Path, session_id: str) -> list[Path]:
    """The subagents' own chats of the chat file ``path`` of session ``session_id``:
    ``<its folder>/<session id>/*.jsonl`` (regular files, sorted)."""
    folder = path.parent / session_id
    if not session_id or "/" in session_id or not real_dir(folder):
        return []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [folder / n for n in names if n.endswith(".jsonl") and file_ident(folder / n)]


def _with_subagents(
    path: Path, session_id: str, turns: list[Turn], by_agent: dict[str, Turn], read: GeminiRead
) -> list[Turn]:
    """``turns`` with each subagent's turns just after the turn of the tool call that ran
    it (at the end when none did), marked with the subagent's id."""
    after: dict[int, list[Turn]] = {}
    tail: list[Turn] = []
    for sub in subagent_chats(path, session_id):
        try:
            raw = read_file_bytes(sub, max_bytes=MAX_FILE_BYTES, follow_links=False)
        except OSError:
            continue
        sub_turns, _calls = _chat_turns(raw, read, {})
        agent = sub.stem
        mine = [t for t in sub_turns if t.role is not None]
        for turn in mine:
            turn.meta["subagent"] = agent
        caller = by_agent.get(agent)
        if caller is None:
            tail.extend(mine)
        else:
            after.setdefault(id(caller), []).extend(mine)
    if not after and not tail:
        return turns
    out: list[Turn] = []
    for turn in turns:
        out.append(turn)
        out.extend(after.get(id(turn), ()))
    return [*out, *tail]


def read_gemini_chat(
    path: Path,
    *,
    cwd: str | None = None,
    include_hidden: bool = False,
    raw: bytes | None = None,
    subagents: bool = True,
) -> GeminiRead:
    """The session of one Gemini CLI chat file (legacy JSON or JSONL), with its subagents'
    chats folded in (``subagents``); ``cwd``: its project dir when known. Raises ``OSError``
    when it cannot be read."""
    if raw is None:
        raw = read_file_bytes(path, max_bytes=MAX_FILE_BYTES, follow_links=False)
    read = GeminiRead(data={})
    meta: JSONDict = {}
    turns, by_agent = _chat_turns(raw, read, meta)
    session_id = meta.get("sessionId") if isinstance(meta.get("sessionId"), str) else None
    if subagents and session_id:
        turns = _with_subagents(path, session_id, turns, by_agent, read)
    if not include_hidden:
        for turn in turns:
            turn.hidden = []
    archived, active, last = split_compaction(turns, include_hidden, "gemini_compaction")
    info: JSONDict = {"source": GEMINI_SOURCE}
    summary = meta.get("summary")
    if isinstance(summary, str) and summary.strip():
        info["title"] = summary.strip()
    if cwd:
        info["cwd"] = cwd
        info["project"] = cwd
    if isinstance(meta.get("projectHash"), str):
        info["project_hash"] = meta["projectHash"]
    if meta.get("kind") == "subagent":
        info["subagent"] = True
    info["hidden_records"] = dict(read.hidden_records)
    stamps = [t.timestamp for t in turns if t.role and t.timestamp is not None]
    created = iso_epoch(meta.get("startTime")) or (min(stamps) if stamps else None)
    updated = max(stamps) if stamps else iso_epoch(meta.get("lastUpdated")) or created
    read.data = session_dict(
        session_id or path.stem,
        active=active,
        archived=archived,
        created=created,
        updated=updated,
        meta=info,
        last_compaction=last,
    )
    if session_id is None:
        read.unknown_records["no sessionId"] = 1
    return read


# ---------------------------------------------------------------------- source


def _is_chat(name: str) -> bool:
    return name.startswith(SESSION_PREFIX) and name.endswith((".json", ".jsonl"))


class GeminiSource(WholeReadSource):
    """The Gemini CLI chats under one root (see the module doc)."""

    kind = GEMINI_SOURCE
    index_prefix = f"{GEMINI_SOURCE}-"
    content_version: str | None = GEMINI_CONTENT_VERSION
    # A tree of project folders, all watched: a reconcile after the first stats what changed
    # (see :meth:`changed_names`). Not watched: what gemini-cli keeps beside a project's
    # ``chats`` (checkpoints, tool outputs, plans) and its ripgrep download (``tmp/bin``).
    watchable = True
    watch_tree = True
    watch_skip: tuple[str, ...] = ("checkpoints", "tool-outputs", "plans", "bin", ".git")

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self._projects: tuple[Identity | None, dict[str, str]] | None = None
        # The chat files of the last listing that are in no ``chats`` folder (gemini-cli
        # writes none there): a ``chats`` folder made beside their folders hides them.
        self._loose: set[str] = set()
        # chats dir -> ((its mtime, inode), its sub-folders): one listing per dir, not one
        # per chat file (5,000 chats in one dir made asking every file's parts quadratic)
        self._folders: dict[str, tuple[tuple[int, int], list[str]]] = {}

    def list_files(self) -> dict[str, Identity]:
        out: dict[str, Identity] = {}
        if not self.root.is_dir():
            return out
        base = str(self.root)
        refused: dict[str, int] = {}
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if real_dir(os.path.join(dirpath, d), refused))
            folders = list(dirnames)  # beside a chat file: its subagents' chats
            if os.path.basename(dirpath) == "chats":
                dirnames[:] = []  # only subagents' chats below, read with their parents
            elif "chats" in dirnames:
                dirnames[:] = ["chats"]  # a project's logs, checkpoints, tool outputs: not chats
            rel_dir = rel_below(dirpath, base)
            names = set(filenames)
            for name in sorted(filenames):
                if not _is_chat(name) or (name.endswith(".json") and f"{name}l" in names):
                    continue  # a legacy file migrated beside itself is read from the new one
                path = os.path.join(dirpath, name)
                ident = file_ident(path, refused)
                if ident is not None:
                    rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
                    parts = self._parts(Path(path), folders)
                    out[rel] = fold(ident, (i for p in parts if (i := file_ident(p)) is not None))
        self.refused = refused
        self._loose = {n for n in out if not self._in_chats(n.split("/")[:-1])}
        return out

    def _in_chats(self, dirs: list[str]) -> bool:
        """Whether the folder ``dirs`` (parts relative to the root) is named ``chats``."""
        return (dirs[-1] if dirs else self.root.name) == "chats"

    def _walked(self, dirs: list[str]) -> int:
        """How many of the folders ``dirs`` (parts relative to the root) :meth:`list_files`
        walks down into as they are now (``len(dirs)``: it lists the files of the last)."""
        here, name = str(self.root), self.root.name
        for at, part in enumerate(dirs):
            if name == "chats" or (part != "chats" and real_dir(os.path.join(here, "chats"))):
                return at
            here = os.path.join(here, part)
            if not real_dir(here):
                return at
            name = part
        return len(dirs)

    def _owners(self, dirs: list[str], folder: str) -> set[str]:
        """The chat files in folder ``dirs`` whose subagents' chats may be in ``folder``
        beside them (see :meth:`_parts`)."""
        try:
            listed = os.listdir(os.path.join(self.root, *dirs))
        except OSError:
            return set()
        out: set[str] = set()
        for name in listed:
            short_id = name.split(".")[0].rsplit("-", 1)[-1]
            if _is_chat(name) and len(short_id) >= 8 and folder.startswith(short_id):
                out.add("/".join([*dirs, name]))
        return out

    def changed_names(self, paths: Iterable[str]) -> set[str] | None:
        """The chat files a change to ``paths`` touched: a chat file itself (and the legacy
        ``.json`` a ``.jsonl`` of the same name replaces), or the one whose subagents'
        folder holds a changed ``.jsonl``. None (a full pass) for a chat file in no
        ``chats`` folder, or one in a ``chats`` folder made beside folders that held such
        files (which it hides from the listing)."""
        out: set[str] = set()
        for path in paths:
            parts = path.split("/")
            dirs, leaf = parts[:-1], parts[-1]
            if not leaf.endswith((".json", ".jsonl")):
                continue
            walked = self._walked(dirs)
            if walked == len(dirs) and _is_chat(leaf):
                if not self._in_chats(dirs):
                    return None
                over = "/".join(dirs[:-1])
                top = f"{over}/" if over else ""
                below = (n[len(top) :] for n in self._loose if n.startswith(top))
                if any("/" in rest and not rest.startswith("chats/") for rest in below):
                    return None
                out.add(path)
                if leaf.endswith(".jsonl"):
                    out.add(path[:-1])  # a legacy file beside it is listed again or no more
            if dirs and walked >= len(dirs) - 1 and leaf.endswith(".jsonl"):
                owners = self._owners(dirs[:-1], dirs[-1])  # a subagent's chat
                if owners and not self._in_chats(dirs[:-1]):
                    return None
                out |= owners
        return out

    def _parts(self, path: Path, folders: Iterable[str] | None = None) -> list[Path]:
        """The subagent chats that may go with chat file ``path``: those in the folders
        beside it named after a session id that starts as its name ends (``-<id8>``)."""
        short_id = path.name.split(".")[0].rsplit("-", 1)[-1]
        if len(short_id) < 8:
            return []
        if folders is None:
            folders = self._folders_of(path.parent)
        out: list[Path] = []
        for folder in sorted(folders):
            if folder.startswith(short_id):
                out.extend(subagent_chats(path, folder))
        return out

    def _folders_of(self, parent: Path) -> list[str]:
        """The real (not symlinked) folders in ``parent``, listed again only when it changed
        (its mtime or inode) or changed in the last two seconds (a folder made in the same
        clock tick as a listing would not move its mtime)."""
        try:
            st = os.stat(parent)
        except OSError:
            return []
        key, mark = str(parent), (st.st_mtime_ns, st.st_ino)
        kept = self._folders.get(key)
        if kept is not None and kept[0] == mark:
            return kept[1]
        try:
            with os.scandir(parent) as entries:
                folders = [e.name for e in entries if e.is_dir(follow_symlinks=False)]
        except OSError:
            return []
        if time.time_ns() - st.st_mtime_ns > 2_000_000_000:
            self._folders[key] = (mark, folders)
        return folders

    @property
    def part_files(self) -> Callable[[str], list[Path]] | None:
        return self.chat_parts

    def chat_parts(self, name: str) -> list[Path]:
        """The subagents' chats of chat file ``name`` as they are now (the vault keeps them
        with it)."""
        return self._parts(self.root / name)

    def identities(self, names: Iterable[str]) -> dict[str, Identity | None]:
        return {name: self.identity(name) for name in names}

    def identity(self, name: str) -> Identity | None:
        """The identity of chat file ``name`` as :meth:`list_files` gives it (its subagents'
        chats folded in); None when it lists no such file now."""
        path = self.root / name
        dirs = name.split("/")[:-1]
        listed = (
            _is_chat(path.name)
            and not (path.suffix == ".json" and listed_file(f"{path}l"))
            and self._walked(dirs) == len(dirs)
        )
        ident = file_ident(path) if listed else None
        if ident is None:
            return None
        parts = self._parts(path)
        return fold(ident, (i for p in parts if (i := file_ident(p)) is not None))

    def project_dir(self, name: str) -> str | None:
        """The project dir of chat file ``name`` (``<project>/chats/<file>``), when known."""
        parts = name.split("/")
        if len(parts) >= 2 and parts[-2] == "chats":
            folder = self.root.joinpath(*parts[:-2])
        elif len(parts) == 1 and self.root.name == "chats":
            folder = self.root.parent  # a store of one project's chats dir
        else:
            return None
        found = project_root_file(folder)
        if found is not None:
            return found
        tmp = folder.parent
        ident = file_ident(tmp.parent / "projects.json")
        if self._projects is None or self._projects[0] != ident:
            self._projects = (ident, project_dirs(tmp) if ident is not None else {})
        return self._projects[1].get(folder.name)

    def read_session(self, name: str, include_hidden: bool) -> AgentRead | Skip:
        path = self.root / name
        try:
            raw = read_file_bytes(path, max_bytes=MAX_FILE_BYTES, follow_links=False)
            read = read_gemini_chat(
                path, cwd=self.project_dir(name), include_hidden=include_hidden, raw=raw
            )
        except OSError as exc:
            return Skip(f"unreadable: {exc.strerror or exc}")
        except (ValueError, RecursionError) as exc:  # pragma: no cover - defensive
            return Skip(f"unusable Gemini CLI chat: {exc}")
        skipped = LinesSkipped(bad=read.skipped_lines, unknown=dict(read.unknown_records))
        empty = empty_reason(read.skipped_lines, read.unknown_records)
        return AgentRead(read.data, skipped, raw, empty)

    def named_files(self, session_id: str, names: set[str]) -> list[str]:
        """Files named ``session-<time>-<first 8 characters of the id>.json[l]``."""
        want = f"-{session_id[:8]}"
        return [
            n for n in self.file_order(names) if n.rsplit("/", 1)[-1].split(".")[0].endswith(want)
        ]


KIND = agent_kind(
    GEMINI_SOURCE, GeminiSource, default_gemini_dir, "Gemini CLI chats dir", gemini_retention
)
