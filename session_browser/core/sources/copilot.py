"""GitHub Copilot CLI sessions and VS Code Copilot Chat sessions as a read-only source.

VS Code's chats (``<user dir>/workspaceStorage/<hash>/chatSessions/<id>.json`` and
``<user dir>/globalStorage/emptyWindowChatSessions/<id>.json``) are read as VS Code's
``chatModel.ts`` writes them (``ISerializableChatData`` versions 1-3); see
:func:`read_vscode_chat`. Since VS Code 1.109 a chat is an append log beside them,
``<id>.jsonl`` (``objectMutationLog.ts``, ``chatSessionOperationLog.ts``): its first line is
the whole chat, each later line one change (set, push/splice or delete at a path); it is
replayed (:func:`replay_chat_log`) and read as the ``.json`` is. Where both files of a chat
exist, the log is the chat (VS Code reads it first) and the older ``.json`` is left out.

Where they live
    ``~/.copilot/session-state/<session id>/events.jsonl`` (early builds: a flat
    ``~/.copilot/session-state/<session id>.jsonl``). A store of this kind is the
    ``session-state`` dir (or a dir above it: ``session-state`` dirs up to :data:`DEPTH` levels
    below it are read). Copilot CLI's source is not public: the format is what a real 1.0.55
    session holds (``tests/fixtures/copilot``), read defensively.

The format
    One event a line, ``{type, data, id, timestamp (ISO), parentId, agentId?}``:
    ``session.start`` (``sessionId``, ``context.cwd``), ``user.message`` (``content``: what was
    typed; ``transformedContent``: what the model got), ``assistant.message`` (``content``,
    ``toolRequests[]``, ``reasoningText``; ``parentToolCallId`` and the event's ``agentId``
    when a subagent wrote it), ``tool.execution_start`` / ``tool.execution_complete``
    (``result.content``), ``subagent.started`` / ``completed``, ``session.compaction_complete``,
    and bookkeeping (``session.model_change``, ``system.message``, ``hook.*``,
    ``assistant.turn_*``, ``session.shutdown``).

The mapping
    ``user.message`` is a user turn; the non-empty ``assistant.message`` contents until the
    next prompt are one assistant turn, a subagent's one turn of their own marked with its
    agent id (folded into the session, after the answer whose tool call ran it). Hidden:
    reasoning, tool requests and results, the system prompt. A compaction
    (``session.compaction_complete``) is the archived/active boundary. ``cwd``:
    ``session.start``'s ``context.cwd``. Resume: ``cd <cwd> && copilot --resume <id>``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from ..files import loads, read_file_bytes, real_dir, rel_below, walk_real
from ..model import JSONDict, iso_epoch
from .agent import AgentRead, ListedSource, has_dirs, listed_file
from .base import (
    Identity,
    LinesSkipped,
    Retention,
    Skip,
    SourceKind,
)
from .claude.source import empty_reason, file_ident
from .claude.transcript import Turn, short, split_compaction
from .cline import editor_user_dirs
from .named import NamedScanStore, named_reader
from .scan import SourceStore
from .view import session_dict

COPILOT_SOURCE = "copilot"
COPILOT_CONTENT_VERSION = "1"
EVENTS = "events.jsonl"
DEPTH = 4
MAX_FILE_BYTES = 512 << 20
#: Events that carry nothing to read.
QUIET = frozenset(
    {
        "session.model_change",
        "session.info",
        "system.message",
        "assistant.turn_start",
        "assistant.turn_end",
        "tool.execution_start",
        "hook.start",
        "hook.end",
        "subagent.started",
        "subagent.completed",
        "session.shutdown",
        "session.compaction_start",
    }
)


def default_copilot_dir() -> Path:
    """``~/.copilot/session-state``."""
    return Path.home() / ".copilot" / "session-state"


@dataclass
class CopilotRead:
    turns: list[Turn] = field(default_factory=list)
    session_id: str | None = None
    cwd: str | None = None
    bad: int = 0
    hidden_records: dict[str, int] = field(default_factory=dict)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def read_events(raw: bytes) -> CopilotRead:
    """The turns of an events file's bytes."""
    read = CopilotRead()
    answers: dict[str, Turn] = {}  # agent ('' for the main one) -> its current answer
    callers: dict[str, Turn] = {}  # tool call id -> the answer that made it
    subagent_turns: dict[str, list[Turn]] = {}
    pending: list[JSONDict] = []

    def count(key: str) -> None:
        read.hidden_records[key] = read.hidden_records.get(key, 0) + 1

    def main_turns() -> list[Turn]:
        return read.turns

    def hide(agent: str, part: JSONDict) -> None:
        target = answers.get(agent)
        if target is None and not agent:
            target = next((t for t in reversed(read.turns) if t.role is not None), None)
        if target is None:
            pending.append(part)
        else:
            target.hidden.append(part)

    def answer(agent: str, stamp: float | None) -> Turn:
        turn = answers.get(agent)
        if turn is None:
            turn = Turn("assistant", stamp, [])
            if agent:
                turn.meta["subagent"] = agent
                subagent_turns.setdefault(agent, []).append(turn)
            else:
                turn.hidden[:0] = pending
                pending.clear()
                main_turns().append(turn)
            answers[agent] = turn
        return turn

    for line in raw.splitlines():
        if not line.strip():
            continue
        try:
            obj = loads(line)
        except (ValueError, RecursionError):
            read.bad += 1
            continue
        if not isinstance(obj, dict):
            read.bad += 1
            continue
        kind = obj.get("type")
        found = obj.get("data")
        data: JSONDict = found if isinstance(found, dict) else {}
        stamp = iso_epoch(obj.get("timestamp"))
        agent_id = obj.get("agentId")
        agent: str = agent_id if isinstance(agent_id, str) else ""
        if kind == "session.start":
            if isinstance(data.get("sessionId"), str):
                read.session_id = data["sessionId"]
            context = data.get("context")
            cwd = context.get("cwd") if isinstance(context, dict) else None
            if isinstance(cwd, str) and cwd:
                read.cwd = cwd
            count(kind)
        elif kind == "user.message":
            text = _text(data.get("content")).strip()
            if text:
                turn = Turn("user", stamp, [text])
                turn.hidden[:0] = pending
                pending.clear()
                read.turns.append(turn)
                answers.clear()
            else:
                count("user.message/empty")
        elif kind == "assistant.message":
            turn = answer(agent, stamp)
            text = _text(data.get("content")).strip()
            if text:
                turn.texts.append(text)
            reasoning = _text(data.get("reasoningText")).strip()
            if reasoning:
                turn.hidden.append({"type": "thinking", "text": short(reasoning)})
            calls = data.get("toolRequests")
            for call in calls if isinstance(calls, list) else []:
                if not isinstance(call, dict):
                    continue
                name = call.get("name") if isinstance(call.get("name"), str) else "?"
                turn.hidden.append(
                    {"type": "toolCall", "name": name, "arguments": short(call.get("arguments"))}
                )
                if isinstance(call.get("toolCallId"), str):
                    callers[call["toolCallId"]] = turn
        elif kind == "tool.execution_complete":
            got = data.get("result")
            result: JSONDict = got if isinstance(got, dict) else {}
            error = data.get("error")
            body = _text(result.get("content")) or (short(error) if error else "")
            hide(
                agent,
                {
                    "type": "toolResult",
                    "text": short(body),
                    "is_error": data.get("success") is False,
                },
            )
        elif kind == "session.compaction_complete":
            summary = _text(data.get("summary")) or _text(data.get("summaryContent"))
            read.turns.append(Turn(None, stamp, [summary or "Conversation compacted"]))
            answers.clear()
        elif kind in ("session.error", "session.warning"):
            count(kind)
            message = data.get("message")
            if isinstance(message, str) and message:
                hide(agent, {"type": "custom", "text": short(f"{kind}: {message}")})
        else:
            count(kind if isinstance(kind, str) else "untyped")
    # Each subagent's turns right after the answer whose tool call ran it.
    after: dict[int, list[Turn]] = {}
    tail: list[Turn] = []
    for agent, turns in subagent_turns.items():
        mine = [t for t in turns if t.text or t.hidden]
        caller = callers.get(agent)
        (after.setdefault(id(caller), []) if caller is not None else tail).extend(mine)
    if after or tail:
        merged: list[Turn] = []
        for turn in read.turns:
            merged.append(turn)
            merged.extend(after.get(id(turn), ()))
        read.turns = [*merged, *tail]
    return read


def read_copilot_session(
    path: Path, *, include_hidden: bool = False, raw: bytes | None = None
) -> tuple[JSONDict, CopilotRead]:
    """The session of one events file. Raises ``OSError`` when it cannot be read."""
    if raw is None:
        raw = read_file_bytes(path, max_bytes=MAX_FILE_BYTES, follow_links=False)
    read = read_events(raw)
    turns = [t for t in read.turns if t.role is None or t.text or (include_hidden and t.hidden)]
    if not include_hidden:
        for turn in turns:
            turn.hidden = []
    archived, active, last = split_compaction(turns, include_hidden, "copilot_compaction")
    info: JSONDict = {"source": COPILOT_SOURCE, "hidden_records": dict(read.hidden_records)}
    if read.cwd:
        info["cwd"] = read.cwd
        info["project"] = read.cwd
    stamps = [t.timestamp for t in turns if t.role and t.timestamp is not None]
    fallback = path.parent.name if path.name == EVENTS else path.stem
    data = session_dict(
        read.session_id or fallback,
        active=active,
        archived=archived,
        created=min(stamps) if stamps else None,
        updated=max(stamps) if stamps else None,
        meta=info,
        last_compaction=last,
    )
    return data, read


# ---------------------------------------------------------------------- VS Code Copilot Chat

#: The folders VS Code keeps chat sessions in (a workspace's, and the windows without one).
CHAT_DIRS = ("chatSessions", "emptyWindowChatSessions")
#: VS Code chat sessions are named so: they have no resume command (their ids are no UUIDs).
VSCODE_PREFIX = "vscode-"


def _markdown(value: Any) -> str:
    """A ``string | IMarkdownString`` as text."""
    if isinstance(value, dict):
        value = value.get("value")
    return value if isinstance(value, str) else ""


def _workspace_dir(chat_dir: Path) -> str | None:
    """The folder of the workspace whose ``chatSessions`` is ``chat_dir`` (its
    ``workspace.json`` names it as a ``file://`` URI)."""
    try:
        data = loads(read_file_bytes(chat_dir.parent / "workspace.json", max_bytes=1 << 16))
    except (OSError, ValueError, RecursionError):
        return None
    folder = data.get("folder") if isinstance(data, dict) else None
    if not isinstance(folder, str) or not folder.startswith("file://"):
        return None
    path = unquote(urlparse(folder).path)
    return path or None


#: A change's path deeper than this is no chat's (the deepest VS Code writes is about 6).
MAX_LOG_PATH = 64
_INITIAL, _SET, _PUSH, _DELETE = 0, 1, 2, 3


def _walk(state: Any, path: list[Any]) -> Any:
    """The container at ``path`` inside ``state``, or None when the path leads nowhere."""
    here = state
    for step in path:
        if isinstance(here, dict) and isinstance(step, str):
            here = here.get(step)
        elif isinstance(here, list) and type(step) is int and 0 <= step < len(here):
            here = here[step]
        else:
            return None
    return here


def _apply(state: Any, entry: JSONDict, kind: int) -> bool:
    """Apply one change of a chat log to ``state`` in place; False when it does not fit."""
    path = entry.get("k")
    if not isinstance(path, list) or not path or len(path) > MAX_LOG_PATH:
        return kind == _SET and path == []  # (VS Code ignores a set of the root)
    parent, last = _walk(state, path[:-1]), path[-1]
    if isinstance(parent, dict) and isinstance(last, str):
        slot_ok = True
    elif isinstance(parent, list) and type(last) is int and 0 <= last <= len(parent):
        slot_ok = kind != _DELETE or last < len(parent)
    else:
        slot_ok = False
    if not slot_ok:
        return False
    if kind == _PUSH:
        if isinstance(parent, dict):
            current = parent.get(last)
        else:
            current = parent[last] if last < len(parent) else None
        items = current if isinstance(current, list) else []
        cut, more = entry.get("i"), entry.get("v")
        if cut is not None:
            if type(cut) is not int or cut < 0:
                return False
            del items[cut:]
        if isinstance(more, list):
            items.extend(more)
        value: Any = items
    elif kind == _DELETE:
        value = None
        if isinstance(parent, dict):
            parent.pop(last, None)
            return True
    else:
        value = entry.get("v")
    if isinstance(parent, list) and last == len(parent):
        parent.append(value)
    else:
        parent[last] = value
    return True


def replay_chat_log(raw: bytes, read: CopilotRead) -> Any:
    """The chat a VS Code chat log (``<id>.jsonl``) holds: its first entry (``kind`` 0) with
    each later change applied in order. A line that is no JSON (a write cut short) or a
    change that does not fit the chat is counted in ``read.bad`` and passed over."""
    state: Any = None
    for line in raw.split(b"\n"):
        if not line.strip():
            continue
        try:
            entry = loads(line)
        except (ValueError, RecursionError):
            read.bad += 1
            continue
        kind = entry.get("kind") if isinstance(entry, dict) else None
        if type(kind) is not int or not isinstance(entry, dict):
            read.bad += 1
        elif kind == _INITIAL:
            state = entry.get("v")
        elif kind in (_SET, _PUSH, _DELETE) and state is not None:
            if not _apply(state, entry, kind):
                read.bad += 1
        else:
            read.bad += 1
    return state


def read_vscode_chat(raw: bytes, read: CopilotRead, *, log: bool = False) -> JSONDict:
    """The turns of a VS Code chat session file (``ISerializableChatData``, versions 1-3;
    ``log``: the append log of 1.109 and later): each request's message is a user turn, its
    response an assistant turn (markdown parts; thinking and tool invocations hidden).
    Returns the session object's other fields."""
    if log:
        obj = replay_chat_log(raw, read)
    else:
        try:
            obj = loads(raw)
        except (ValueError, RecursionError):
            read.bad += 1
            return {}
    if not isinstance(obj, dict):
        read.bad += 1
        return {}
    created = obj.get("creationDate")
    base = created / 1000.0 if isinstance(created, (int, float)) and created > 0 else None
    requests = obj.get("requests")
    for request in requests if isinstance(requests, list) else []:
        if not isinstance(request, dict):
            read.bad += 1
            continue
        when = request.get("timestamp")
        stamp = when / 1000.0 if isinstance(when, (int, float)) and when > 0 else base
        message = request.get("message")
        text = (
            _markdown({"value": message.get("text")})
            if isinstance(message, dict)
            else _markdown(message)
        ).strip()
        if text:
            read.turns.append(Turn("user", stamp, [text]))
        answer = Turn("assistant", stamp, [])
        if isinstance(request.get("modelId"), str):
            answer.meta["model"] = request["modelId"]
        pieces: list[str] = []
        response = request.get("response")
        for part in response if isinstance(response, list) else []:
            kind = part.get("kind") if isinstance(part, dict) else None
            if not isinstance(part, dict):
                read.bad += 1
            elif kind in (None, "markdownContent"):
                pieces.append(_markdown(part.get("content", part)))
            elif kind == "thinking":
                value = part.get("value")
                words = (
                    "".join(v for v in value if isinstance(v, str))
                    if isinstance(value, list)
                    else _markdown(value)
                )
                if words:
                    answer.hidden.append({"type": "thinking", "text": short(words)})
            elif kind in ("toolInvocationSerialized", "toolInvocation"):
                name = part.get("toolId") if isinstance(part.get("toolId"), str) else "?"
                said = _markdown(part.get("invocationMessage"))
                answer.hidden.append({"type": "toolCall", "name": name, "arguments": short(said)})
                details = part.get("resultDetails")
                done = _markdown(part.get("pastTenseMessage"))
                if details or done:
                    body = short(details) if details else done
                    answer.hidden.append({"type": "toolResult", "text": body, "is_error": False})
            else:
                key = f"response/{kind}" if isinstance(kind, str) else "response/untyped"
                read.hidden_records[key] = read.hidden_records.get(key, 0) + 1
        result = request.get("result")
        details = result.get("errorDetails") if isinstance(result, dict) else None
        if isinstance(details, dict) and isinstance(details.get("message"), str):
            answer.hidden.append({"type": "custom", "text": short(f"error: {details['message']}")})
        reply = "".join(pieces).strip()
        if reply:
            answer.texts.append(reply)
        if reply or answer.hidden:
            read.turns.append(answer)
    return obj


def read_chat_session(
    path: Path, *, include_hidden: bool = False, raw: bytes | None = None
) -> tuple[JSONDict, CopilotRead]:
    """The session of one VS Code chat file. Raises ``OSError`` when it cannot be read."""
    if raw is None:
        raw = read_file_bytes(path, max_bytes=MAX_FILE_BYTES, follow_links=False)
    read = CopilotRead()
    obj = read_vscode_chat(raw, read, log=path.suffix == ".jsonl")
    turns = [t for t in read.turns if t.text or (include_hidden and t.hidden)]
    if not include_hidden:
        for turn in turns:
            turn.hidden = []
    archived, active, last = split_compaction(turns, include_hidden, "copilot_compaction")
    info: JSONDict = {
        "source": COPILOT_SOURCE,
        "agent": "VS Code Copilot Chat",
        "hidden_records": dict(read.hidden_records),
    }
    title = obj.get("customTitle") or obj.get("computedTitle")
    if isinstance(title, str) and title.strip():
        info["title"] = title.strip()
    cwd = _workspace_dir(path.parent) if path.parent.name == "chatSessions" else None
    if cwd:
        info["cwd"] = cwd
        info["project"] = cwd
    sid = obj.get("sessionId") if isinstance(obj.get("sessionId"), str) else path.stem
    stamps = [t.timestamp for t in turns if t.role and t.timestamp is not None]
    data = session_dict(
        f"{VSCODE_PREFIX}{sid}",
        active=active,
        archived=archived,
        created=min(stamps) if stamps else None,
        updated=max(stamps) if stamps else None,
        meta=info,
        last_compaction=last,
    )
    return data, read


class CopilotSource(ListedSource):
    """The Copilot CLI sessions under one root (see the module doc)."""

    kind = COPILOT_SOURCE
    index_prefix = f"{COPILOT_SOURCE}-"
    content_version: str | None = COPILOT_CONTENT_VERSION
    # A tree of session folders (or an editor's user dir), all watched: a reconcile after
    # the first stats what changed (see :meth:`changed_names`). Not watched: the editor's
    # local file history and settings sync, which hold no chats.
    watchable = True
    watch_tree = True
    watch_skip: tuple[str, ...] = ("History", "sync", ".git", "node_modules")

    def list_files(self) -> dict[str, Identity]:
        """``<id>/events.jsonl`` and the flat ``<id>.jsonl`` of the ``session-state`` dir the
        root is or holds (up to :data:`DEPTH` levels below it)."""
        out: dict[str, Identity] = {}
        if not self.root.is_dir():
            return out
        base = str(self.root)
        refused: dict[str, int] = {}
        for dirpath, dirnames, filenames in walk_real(base, refused):
            rel = rel_below(dirpath, base)
            depth = 0 if rel == "." else rel.count(os.sep) + 1
            parent = os.path.basename(os.path.dirname(dirpath))
            here = os.path.basename(dirpath)
            names: list[str] = []
            if here in CHAT_DIRS:
                logs = {f for f in filenames if f.endswith(".jsonl")}
                names = sorted(
                    f
                    for f in filenames
                    if f in logs or (f.endswith(".json") and f"{f}l" not in logs)
                )
                dirnames[:] = []
            elif here == "globalStorage":
                dirnames[:] = [d for d in dirnames if d == "emptyWindowChatSessions"]
            elif parent == "workspaceStorage":
                dirnames[:] = [d for d in dirnames if d == "chatSessions"]
            elif EVENTS in filenames and (rel == "." or parent == "session-state" or depth == 1):
                names = [EVENTS]  # a session's folder: nothing below it is a session
                dirnames[:] = []
            else:
                if os.path.basename(dirpath) == "session-state":
                    names = sorted(f for f in filenames if f.endswith(".jsonl"))
                dirnames[:] = [] if depth >= DEPTH else sorted(dirnames)
            for name in names:
                rel_name = name if rel == "." else f"{rel}/{name}".replace(os.sep, "/")
                ident = file_ident(os.path.join(dirpath, name), refused)
                if ident is not None:
                    out[rel_name] = ident
        self.refused = refused
        self._names = set(out)
        return out

    def _rule(self, folder: str, depth: int) -> str:
        """What :meth:`list_files` does in ``folder`` (``depth`` levels below the root) as
        it is now: ``chats`` (a chat dir), ``global`` / ``workspace`` (only its chat dir
        below), ``session`` (a session's folder) or ``walk``."""
        here = os.path.basename(folder)
        parent = os.path.basename(os.path.dirname(folder))
        if here in CHAT_DIRS:
            return "chats"
        if here == "globalStorage":
            return "global"
        if parent == "workspaceStorage":
            return "workspace"
        events = os.path.join(folder, EVENTS)
        if (
            (depth <= 1 or parent == "session-state")
            and os.path.lexists(events)
            and not os.path.isdir(events)
        ):
            return "session"
        return "walk"

    def _walked(self, dirs: list[str]) -> str | None:
        """The rule of folder ``dirs`` (parts relative to the root) when :meth:`list_files`
        reaches it as the folders are now (see :meth:`_rule`); None when it does not."""
        here = str(self.root)
        for depth, part in enumerate(dirs):
            rule = self._rule(here, depth)
            if (
                rule in ("chats", "session")
                or (rule == "global" and part != "emptyWindowChatSessions")
                or (rule == "workspace" and part != "chatSessions")
                or (rule == "walk" and depth >= DEPTH)
            ):
                return None
            here = os.path.join(here, part)
            if not real_dir(here):
                return None
        return self._rule(here, len(dirs))

    def changed_names(self, paths: Iterable[str]) -> set[str] | None:
        """The sessions a change to ``paths`` touched: a ``.json`` / ``.jsonl`` file in a
        folder :meth:`list_files` reaches (in a chat dir, both files of the chat: the log
        leaves the ``.json`` out). None (a full pass) when an ``events.jsonl`` made a folder
        a session's while sessions are listed below it, or when one that is a session's
        folder no more has folders below it (sessions there are listed now)."""
        out: set[str] = set()
        for path in paths:
            parts = path.split("/")
            dirs, leaf = parts[:-1], parts[-1]
            if not leaf.endswith((".json", ".jsonl")):
                continue
            rule = self._walked(dirs)
            if rule is None:
                continue
            folder = "/".join(dirs)
            top = f"{folder}/" if folder else ""
            if rule == "session":
                if self._listed_below(folder):
                    return None
            elif (
                leaf == EVENTS
                and rule == "walk"
                and (len(dirs) <= 1 or dirs[-2] == "session-state")
                and len(dirs) < DEPTH
                and has_dirs(self.root / folder, self.watch_skip)
            ):
                return None
            out.add(path)
            if rule == "chats":
                stem = leaf.rsplit(".", 1)[0]
                out.update((f"{top}{stem}.json", f"{top}{stem}.jsonl"))
        return out

    def _session(self, name: str) -> bool:
        """Whether :meth:`list_files` lists file ``name`` as the files are now."""
        parts = name.split("/")
        dirs, leaf = parts[:-1], parts[-1]
        rule = self._walked(dirs)
        if rule == "chats":
            path = os.path.join(self.root, name)
            return leaf.endswith(".jsonl") or (
                leaf.endswith(".json") and not listed_file(f"{path}l")
            )
        if rule == "session":
            return leaf == EVENTS
        if rule == "walk":
            here = dirs[-1] if dirs else self.root.name
            return here == "session-state" and leaf.endswith(".jsonl")
        return False

    def identity(self, name: str) -> Identity | None:
        """The identity of file ``name`` when :meth:`list_files` lists it now (else None)."""
        return file_ident(self.root / name) if self._session(name) else None

    def read_session(self, name: str, include_hidden: bool) -> AgentRead | Skip:
        path = self.root / name
        try:
            raw = read_file_bytes(path, max_bytes=MAX_FILE_BYTES, follow_links=False)
        except OSError as exc:
            return Skip(f"unreadable: {exc.strerror or exc}")
        chat = path.suffix == ".json" or path.parent.name in CHAT_DIRS
        reader = read_chat_session if chat else read_copilot_session
        data, read = reader(path, include_hidden=include_hidden, raw=raw)
        return AgentRead(data, LinesSkipped(bad=read.bad), raw, empty_reason(read.bad, {}))

    def named_files(self, session_id: str, names: set[str]) -> list[str]:
        """``<id>/events.jsonl``, ``<id>.jsonl``, or a VS Code chat's ``<id>.json(l)``."""
        chat = session_id.removeprefix(VSCODE_PREFIX)
        ends = (f"{session_id}/{EVENTS}", f"{session_id}.jsonl", f"/{chat}.json", f"/{chat}.jsonl")
        return [n for n in self.file_order(names) if n.endswith(ends)]


def copilot_retention() -> Retention:
    return Retention("Copilot CLI and VS Code keep chat sessions until they are deleted", False)


def default_copilot_dirs() -> list[Path]:
    """The Copilot CLI's ``session-state`` dir and the editors' user dirs that hold chat
    sessions, those that exist (the CLI's when none does, so that ``copilot:`` alone says
    where it looked)."""
    users = [
        user
        for user in editor_user_dirs()
        if (user / "workspaceStorage").is_dir()
        or (user / "globalStorage" / "emptyWindowChatSessions").is_dir()
    ]
    found = [d for d in (default_copilot_dir(), *users) if d.is_dir()]
    return found or [default_copilot_dir()]


def _open_scan(path: Path) -> SourceStore:
    return NamedScanStore(CopilotSource(path))


KIND = SourceKind(
    name=COPILOT_SOURCE,
    prefix=f"{COPILOT_SOURCE}:",
    read_only=True,
    default_dirs=lambda _cwd: default_copilot_dirs(),
    only_if_present=True,
    source=CopilotSource,
    open_scan=_open_scan,
    reader=named_reader,
    describe="Copilot session dir",
    retention=copilot_retention,
)
