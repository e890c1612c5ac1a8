"""Cline and Roo Code tasks as a read-only source.

Where they live
    Both are VS Code extensions that keep one folder per task under the editor's global
    storage: ``<user dir>/globalStorage/saoudrizwan.claude-dev/tasks/<task id>/`` (Cline) and
    ``…/rooveterinaryinc.roo-cline/tasks/<task id>/`` (Roo Code), the user dir being
    ``~/.config/<editor>/User`` (Linux), ``~/Library/Application Support/<editor>/User``
    (macOS) or ``%APPDATA%/<editor>/User`` (Windows), for Code, Code - Insiders, VSCodium,
    Cursor and Windsurf. A store of this kind is such an extension dir, its ``tasks`` dir, or
    any dir above them (task folders are looked for up to :data:`DEPTH` levels down); ``cline:``
    alone reads every one of those that exists.

The format (read from cline/cline at 21cb8d25 and RooCodeInc/Roo-Code at cb836567)
    A task folder holds ``ui_messages.json`` (what the chat showed: an array of ``{ts (ms),
    type: "ask"|"say", ask?|say?, text, reasoning?, partial?}``), ``api_conversation_history.json``
    (what the model was sent: Anthropic-style ``{role, content}`` messages, the task wrapped in
    ``<task>`` and ``<environment_details>`` appended), and ``task_metadata.json``; Roo Code adds
    ``history_item.json`` (``task``, ``title``, ``workspace``, ``rootTaskId``, ``parentTaskId``,
    ``childIds``...), Cline keeps its task
    list in ``<extension dir>/state/taskHistory.json`` (``cwdOnTaskInitialization``). Both files
    are rewritten whole on every change.

The mapping (one session per task folder; its id is the task id)
    From ``ui_messages.json``: ``say: task`` (Cline) or Roo Code's first ``say: text`` is the
    first user turn, ``say: user_feedback`` a later one; ``say: text``, ``completion_result``
    and the questions and plans the agent asks (``followup``, ``plan_mode_respond``) are the
    assistant's turns. Hidden: reasoning, tools, commands and their output, API request
    records, errors and checkpoints. Cline's ``say: compaction`` (completed) and Roo Code's
    ``say: condense_context`` (its summary) are the archived/active boundary. A task with no
    ``ui_messages.json`` is read from ``api_conversation_history.json`` (tool use and results,
    thinking and the environment details hidden). ``cwd``: Roo Code's ``workspace``, Cline's
    ``cwdOnTaskInitialization``. A Roo Code subtask (started by ``new_task``) is a task folder of
    its own: it and its parent share a lineage (the root task's id), so a search shows the
    tree as one hit, as for OpenCode's subagents. Neither has a resume command outside the
    editor.

Nothing here writes, locks, renames or creates anything: files are read whole (``rb``).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..files import loads, read_file_bytes, real_dir, rel_below, walk_real
from ..model import JSONDict
from .agent import AgentRead, ListedSource, has_dirs
from .base import (
    Identity,
    LinesSkipped,
    Retention,
    Skip,
    SourceKind,
)
from .claude.source import file_ident, fold
from .claude.transcript import Turn, short, split_compaction
from .view import session_dict

CLINE_SOURCE = "cline"
CLINE_CONTENT_VERSION = "1"
UI = "ui_messages.json"
API = "api_conversation_history.json"
#: Roo Code's record of a task (its title, workspace, tree of subtasks), read with the task.
ITEM = "history_item.json"
#: Extension id -> the agent's name.
EXTENSIONS = {"saoudrizwan.claude-dev": "Cline", "rooveterinaryinc.roo-cline": "Roo Code"}
EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
DEPTH = 6
MAX_FILE_BYTES = 512 << 20
_TASK_TAG = re.compile(r"^\s*<task>\s*(.*?)\s*</task>", re.S)
_ENV = re.compile(r"<environment_details>.*?(</environment_details>|$)", re.S)
#: ``ask`` kinds whose text (JSON) is something the agent said.
_SAID_ASKS = {
    "followup": "question",
    "plan_mode_respond": "response",
    "act_mode_respond": "response",
}
_HIDDEN_SAYS = frozenset(
    {"tool", "command", "command_output", "use_mcp_server", "mcp_server_response"}
)


def editor_user_dirs() -> list[Path]:
    """Each editor's user dir on this system (whether it exists or not)."""
    home = Path.home()
    if sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    elif sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
    else:
        env = os.environ.get("XDG_CONFIG_HOME", "").strip()
        base = Path(env) if env else home / ".config"
    return [base / editor / "User" for editor in EDITORS]


def default_cline_dirs() -> list[Path]:
    """The Cline and Roo Code dirs that exist here (Cline's in VS Code when none does, so
    that ``cline:`` alone says where it looked)."""
    found = [
        user / "globalStorage" / ext
        for user in editor_user_dirs()
        for ext in EXTENSIONS
        if (user / "globalStorage" / ext).is_dir()
    ]
    return found or [editor_user_dirs()[0] / "globalStorage" / next(iter(EXTENSIONS))]


# ---------------------------------------------------------------------- reading


@dataclass
class ClineRead:
    turns: list[Turn] = field(default_factory=list)
    skipped: int = 0
    hidden_records: dict[str, int] = field(default_factory=dict)


class _Builder:
    def __init__(self, read: ClineRead) -> None:
        self.read = read
        self.pending: list[JSONDict] = []

    def count(self, key: str) -> None:
        self.read.hidden_records[key] = self.read.hidden_records.get(key, 0) + 1

    def say(self, role: str, stamp: float | None, text: str) -> None:
        text = text.strip()
        if not text:
            return
        last = self.read.turns[-1] if self.read.turns else None
        if role == "assistant" and last is not None and last.role == "assistant":
            last.texts.append(text)
            return
        turn = Turn(role, stamp, [text])
        turn.hidden[:0] = self.pending
        self.pending = []
        self.read.turns.append(turn)

    def hide(self, part: JSONDict) -> None:
        turns = self.read.turns
        (turns[-1].hidden if turns and turns[-1].role else self.pending).append(part)

    def boundary(self, stamp: float | None, summary: str) -> None:
        self.read.turns.append(Turn(None, stamp, [summary]))


def _json_field(text: str, key: str) -> str:
    """``key`` of the JSON object ``text`` (the text itself when it is no such object)."""
    try:
        obj = json.loads(text)
    except ValueError:
        return text
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, str) else text


def read_ui_messages(messages: list[Any], read: ClineRead) -> None:
    """The turns of a task's ``ui_messages.json``."""
    b = _Builder(read)
    has_task = any(isinstance(m, dict) and m.get("say") == "task" for m in messages)
    first_text = not has_task
    for m in messages:
        if not isinstance(m, dict):
            read.skipped += 1
            continue
        stamp = m["ts"] / 1000.0 if isinstance(m.get("ts"), (int, float)) else None
        text: str = m["text"] if isinstance(m.get("text"), str) else ""
        kind = m.get("say") if m.get("type") == "say" else m.get("ask")
        kind = kind if isinstance(kind, str) else "untyped"
        if isinstance(m.get("reasoning"), str) and m["reasoning"]:
            b.hide({"type": "thinking", "text": short(m["reasoning"])})
        if m.get("type") == "say" and kind == "text" and first_text:
            first_text = False  # Roo Code says the task as its first text
            b.say("user", stamp, text)
        elif m.get("type") == "say" and kind in ("task", "user_feedback"):
            b.say("user", stamp, text)
        elif m.get("type") == "say" and kind in ("text", "completion_result"):
            b.say("assistant", stamp, text)
        elif m.get("type") == "ask" and kind in _SAID_ASKS:
            b.say("assistant", stamp, _json_field(text, _SAID_ASKS[kind]))
        elif kind == "reasoning":
            b.hide({"type": "thinking", "text": short(text)})
        elif kind in _HIDDEN_SAYS:
            b.count(f"{m.get('type')}/{kind}")
            if kind == "command_output" or kind == "mcp_server_response":
                b.hide({"type": "toolResult", "text": short(text), "is_error": False})
            else:
                name = _json_field(text, "tool") if kind == "tool" else kind
                b.hide({"type": "toolCall", "name": short(name, 80), "arguments": short(text)})
        elif kind == "compaction" and _json_field(text, "status") == "completed":
            b.boundary(stamp, "Context compacted")
        elif kind == "condense_context":
            condense = m.get("contextCondense")
            summary = condense.get("summary") if isinstance(condense, dict) else None
            b.boundary(
                stamp, summary if isinstance(summary, str) and summary else "Context condensed"
            )
        else:
            b.count(f"{m.get('type')}/{kind}")
            if kind in ("error", "api_req_failed", "diff_error") and text:
                b.hide({"type": "custom", "text": short(f"{kind}: {text}")})


def _api_text(block: Any) -> str:
    if isinstance(block, str):
        return block
    text = block.get("text") if isinstance(block, dict) and block.get("type") == "text" else None
    return text if isinstance(text, str) else ""


def read_api_history(messages: list[Any], read: ClineRead) -> None:
    """The turns of a task's ``api_conversation_history.json`` (no ``ui_messages.json``)."""
    b = _Builder(read)
    for m in messages:
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            read.skipped += 1
            continue
        stamp = m["ts"] / 1000.0 if isinstance(m.get("ts"), (int, float)) else None
        content = m.get("content")
        blocks = content if isinstance(content, list) else [content]
        texts: list[str] = []
        for block in blocks:
            if not isinstance(block, dict):
                texts.append(_api_text(block))
                continue
            kind = block.get("type")
            if kind == "tool_use":
                name = block.get("name") if isinstance(block.get("name"), str) else "?"
                b.hide({"type": "toolCall", "name": name, "arguments": short(block.get("input"))})
            elif kind == "tool_result":
                b.hide(
                    {
                        "type": "toolResult",
                        "text": short(block.get("content")),
                        "is_error": bool(block.get("is_error")),
                    }
                )
            elif kind in ("thinking", "redacted_thinking"):
                b.hide({"type": "thinking", "text": short(block.get("thinking") or "")})
            else:
                texts.append(_api_text(block))
        text = "\n".join(t for t in texts if t)
        if m["role"] == "user":
            task = _TASK_TAG.match(text)
            text = task.group(1) if task else text
            text = _ENV.sub("", text).strip()
            if text.startswith("[") and "] Result:" in text.split("\n", 1)[0]:
                b.hide({"type": "toolResult", "text": short(text), "is_error": False})
                continue
        b.say(m["role"], stamp, text)


# ---------------------------------------------------------------------- source


def _chosen(folder: str) -> str | None:
    """The file a task in ``folder`` is read from (None: no task's folder)."""
    for name in (UI, API):
        path = os.path.join(folder, name)
        if os.path.lexists(path) and not os.path.isdir(path):
            return name
    return None


def _task_ident(path: str, refused: dict[str, int] | None = None) -> Identity | None:
    """The identity of the task read from file ``path``, Roo Code's ``history_item.json``
    beside it folded in (it gives the task's title and place in its tree)."""
    ident = file_ident(path, refused)
    if ident is None:
        return None
    item = file_ident(os.path.join(os.path.dirname(path), ITEM))
    return ident if item is None else fold(ident, [item])


def _load_json(path: Path) -> Any:
    try:
        return loads(read_file_bytes(path, max_bytes=MAX_FILE_BYTES, follow_links=False))
    except (OSError, ValueError, RecursionError):
        return None


class ClineSource(ListedSource):
    """The Cline and Roo Code tasks under one root (see the module doc)."""

    kind = CLINE_SOURCE
    index_prefix = f"{CLINE_SOURCE}-"
    content_version: str | None = CLINE_CONTENT_VERSION
    # A tree of task folders, all watched: a reconcile after the first stats what changed
    # (see :meth:`changed_names`). Not watched: the shadow git repos of checkpoints (Cline's
    # beside ``tasks``, Roo Code's in each task folder) and the browser Puppeteer fetched.
    watchable = True
    watch_tree = True
    watch_skip: tuple[str, ...] = ("checkpoints", "puppeteer", ".git", "node_modules")

    def list_files(self) -> dict[str, Identity]:
        out: dict[str, Identity] = {}
        if not self.root.is_dir():
            return out
        base = str(self.root)
        refused: dict[str, int] = {}
        for dirpath, dirnames, filenames in walk_real(base, refused):
            rel = rel_below(dirpath, base)
            depth = 0 if rel == "." else rel.count(os.sep) + 1
            names = set(filenames)
            chosen = UI if UI in names else API if API in names else None
            if chosen is not None:
                dirnames[:] = []  # a task folder: nothing below it is a task
                name = chosen if rel == "." else f"{rel}/{chosen}".replace(os.sep, "/")
                ident = _task_ident(os.path.join(dirpath, chosen), refused)
                if ident is not None:
                    out[name] = ident
                continue
            dirnames[:] = [] if depth >= DEPTH else sorted(dirnames)
        self.refused = refused
        self._names = set(out)
        return out

    def _walked(self, dirs: list[str]) -> bool:
        """Whether :meth:`list_files` reaches the folder ``dirs`` (parts relative to the
        root) as the folders are now: no folder above it is a task's, none is a symlink,
        and it is at most :data:`DEPTH` levels down."""
        here = str(self.root)
        for depth, part in enumerate(dirs):
            if depth >= DEPTH or _chosen(here) is not None:
                return False
            here = os.path.join(here, part)
            if not real_dir(here):
                return False
        return True

    def changed_names(self, paths: Iterable[str]) -> set[str] | None:
        """The tasks a change to ``paths`` touched: the task file of the folder where a
        ``ui_messages.json``, ``api_conversation_history.json`` or ``history_item.json``
        changed (both names: which one is the task's, :meth:`identities` says). None (a full
        pass) when a folder that became a task's hides tasks listed below it, or one that
        is a task's no more has folders below it (tasks there are listed now)."""
        out: set[str] = set()
        for path in paths:
            parts = path.split("/")
            dirs, leaf = parts[:-1], parts[-1]
            if leaf not in (UI, API, ITEM) or not self._walked(dirs):
                continue
            folder = "/".join(dirs)
            top = f"{folder}/" if folder else ""
            if leaf != ITEM:
                if _chosen(os.path.join(self.root, folder)) is not None:
                    if self._listed_below(folder):
                        return None
                elif len(dirs) < DEPTH and has_dirs(self.root / folder, self.watch_skip):
                    return None
            out.update((f"{top}{UI}", f"{top}{API}"))
        return out

    def identity(self, name: str) -> Identity | None:
        """The identity of task file ``name`` as :meth:`list_files` gives it; None when it
        lists no such file now."""
        parts = name.split("/")
        path = os.path.join(self.root, name)
        task = _chosen(os.path.dirname(path)) == parts[-1] and self._walked(parts[:-1])
        return _task_ident(path) if task else None

    def _about(self, task_dir: Path) -> tuple[str | None, str | None, JSONDict]:
        """(the agent's name, the task's cwd, more metadata) from what is kept beside the
        task. Roo Code's subtasks (``rootTaskId``, ``parentTaskId``; a parent lists its
        ``childIds``) share one lineage, the root task's id: a search shows the tree once."""
        agent = next((a for ext, a in EXTENSIONS.items() if ext in task_dir.parts), None)
        item = _load_json(task_dir / ITEM)
        if isinstance(item, dict):
            cwd = item.get("workspace")
            return agent or "Roo Code", cwd if isinstance(cwd, str) and cwd else None, _tree(item)
        history = _load_json(task_dir.parent.parent / "state" / "taskHistory.json")
        for entry in history if isinstance(history, list) else []:
            if isinstance(entry, dict) and entry.get("id") == task_dir.name:
                cwd = entry.get("cwdOnTaskInitialization")
                return agent or "Cline", cwd if isinstance(cwd, str) and cwd else None, {}
        return agent, None, {}

    def read_session(self, name: str, include_hidden: bool) -> AgentRead | Skip:
        path = self.root / name
        try:
            raw = read_file_bytes(path, max_bytes=MAX_FILE_BYTES, follow_links=False)
        except OSError as exc:
            return Skip(f"unreadable: {exc.strerror or exc}")
        try:
            messages = loads(raw)
        except (ValueError, RecursionError):
            return Skip("not JSON (a file being rewritten?)")
        if not isinstance(messages, list):
            return Skip("not a list of messages")
        read = ClineRead()
        (read_ui_messages if path.name == UI else read_api_history)(messages, read)
        turns = read.turns
        if not include_hidden:
            for turn in turns:
                turn.hidden = []
        archived, active, last = split_compaction(turns, include_hidden, "cline_compaction")
        agent, cwd, more = self._about(path.parent)
        info: JSONDict = {"source": CLINE_SOURCE, "hidden_records": dict(read.hidden_records)}
        info.update(more)
        if agent:
            info["agent"] = agent
        if cwd:
            info["cwd"] = cwd
            info["project"] = cwd
        stamps = [t.timestamp for t in turns if t.role and t.timestamp is not None]
        task_id = path.parent.name
        data = session_dict(
            task_id,
            active=active,
            archived=archived,
            created=min(stamps) if stamps else None,
            updated=max(stamps) if stamps else None,
            meta=info,
            last_compaction=last,
        )
        return AgentRead(data, LinesSkipped(bad=read.skipped), raw)


def _tree(item: JSONDict) -> JSONDict:
    """A Roo Code task's place in its tree of subtasks, from its ``history_item.json``:
    ``parent_session`` (the task that started it) and ``lineage_id`` (the root task's id, on
    the root too once it has children); and its ``title`` where the task has one."""
    out: JSONDict = {}
    own = item.get("id")
    root, parent, children = item.get("rootTaskId"), item.get("parentTaskId"), item.get("childIds")
    if isinstance(parent, str) and parent:
        out["parent_session"] = parent
    if isinstance(root, str) and root:
        out["lineage_id"] = root
    elif isinstance(parent, str) and parent:
        out["lineage_id"] = parent  # (an older release: no root; the parent is the nearest)
    elif isinstance(children, list) and children and isinstance(own, str) and own:
        out["lineage_id"] = own
    title = item.get("title")
    if isinstance(title, str) and title.strip():
        out["title"] = title.strip()
    return out


def cline_retention() -> Retention:
    return Retention("Cline and Roo Code keep tasks until they are deleted in the editor", False)


KIND = SourceKind(
    name=CLINE_SOURCE,
    prefix=f"{CLINE_SOURCE}:",
    read_only=True,
    default_dirs=lambda _cwd: default_cline_dirs(),
    only_if_present=True,
    source=ClineSource,
    describe="Cline or Roo Code dir",
    retention=cline_retention,
)
