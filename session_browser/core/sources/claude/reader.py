"""Claude Code transcripts: where they are and how one is read (the mapping is described in
the package's docstring)."""

from __future__ import annotations

import copy
import io
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from ...files import loads, open_regular, read_upto
from ...model import JSONDict, iso_epoch
from ..view import session_dict
from .places import (
    claude_session_files,
    subagent_files,
)
from .transcript import (
    WHOLE_READ,
    AgentSessionView,
    FileMark,
    Turn,
    TurnBuilder,
    blocks_text,
    read_json_lines,
    session_times,
    short,
    split_compaction,
)
from .transcript import text_or_none as _str

CLAUDE_SOURCE = "claude"

#: Record types this reader knows; any other type is counted in ``unknown_records``.
CONVERSATION_TYPES = frozenset({"user", "assistant", "system"})
TITLE_TYPES = frozenset({"custom-title", "ai-title", "summary"})
BOOKKEEPING_TYPES = frozenset(
    {
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "attachment",
        "last-prompt",
        "agent-name",
        "permission-mode",
        "mode",
        "worktree-state",
        "relocated",
        "pr-link",
        "frame-link",
        "bridge-session",
        "atis-latch",
        "started",
        "result",
    }
)
KNOWN_TYPES = CONVERSATION_TYPES | TITLE_TYPES | BOOKKEEPING_TYPES
#: What an unknown record of a known type whose fields have the wrong types is counted as.
MALFORMED = "malformed"
#: Fields that are strings (or null) wherever they are written (``type`` besides).
_STRING_FIELDS = ("uuid", "parentUuid", "sessionId", "cwd", "subtype", "agentId")
TASK_TOOLS = frozenset({"Task", "Agent"})
COMPACT_AGENT_PREFIX = "acompact"

_COMMAND_RE = re.compile(r"<command-(name|args|message)>(.*?)</command-\1>", re.DOTALL)
_COMMAND_OUTPUT = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-stdout>",
    "<bash-stderr>",
)
_TAG_RE = re.compile(r"</?(?:local-command-(?:stdout|stderr|caveat)|bash-(?:stdout|stderr))>")
_BASH_INPUT_RE = re.compile(r"^\s*<bash-input>(.*?)</bash-input>", re.DOTALL)
_INTERRUPTED = "[Request interrupted by user"


def record_kind(obj: JSONDict) -> str | None:
    """The type of a record this reader can use: its ``type`` when known and the fields it
    reads have the types Claude Code writes (strings, a ``message`` object whose ``content``
    is a string or a list, a string or numeric ``timestamp``); None otherwise (an unknown
    record: see :func:`unknown_key`)."""
    get = obj.get
    kind = get("type")
    if not isinstance(kind, str) or kind not in KNOWN_TYPES:
        return None
    for name in _STRING_FIELDS:
        value = get(name)
        if value is not None and not isinstance(value, str):
            return None
    stamp = get("timestamp")
    if (
        stamp is not None
        and not isinstance(stamp, str)
        and (not isinstance(stamp, (int, float)) or isinstance(stamp, bool))
    ):
        return None
    side = get("isSidechain", False)
    if side is not False and side is not True:
        return None
    if kind in CONVERSATION_TYPES and "message" in obj:
        message = obj["message"]
        if not isinstance(message, dict):
            return None
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            return None
    return kind


def unknown_key(obj: JSONDict) -> str:
    """How an unknown record is counted: its type when that is a string of a type this
    reader does not know, :data:`MALFORMED` for a known type with wrong-typed fields, else
    ``?``."""
    kind = obj.get("type")
    if not isinstance(kind, str):
        return "?"
    return MALFORMED if kind in KNOWN_TYPES else kind


# ---------------------------------------------------------------------- building


_TEXT = frozenset({"text"})


def block_text(content: Any) -> str:
    """The text of a string or of the ``text`` blocks (and strings) of a block list."""
    return blocks_text(content, _TEXT, bare=True)


def _command_line(text: str) -> str | None:
    """``/name args`` of a slash-command echo (``<command-name>...``); None otherwise."""
    if not text.lstrip().startswith(("<command-name>", "<command-message>", "<command-args>")):
        return None
    parts = {kind: value.strip() for kind, value in _COMMAND_RE.findall(text)}
    name = parts.get("name") or ""
    if not name:
        return None
    return f"{name} {parts.get('args', '')}".strip()


class _Builder(TurnBuilder):
    """Turns of one transcript (a main file, a subagent file or an inline sidechain)."""

    def __init__(self, include_hidden: bool) -> None:
        super().__init__(include_hidden)
        self.by_message_id: dict[str, Turn] = {}
        self.tool_names: dict[str, str] = {}
        self.tasks: dict[str, JSONDict] = {}  # Task tool_use id -> its input
        self.agent_of_call: dict[str, str] = {}  # Task tool_use id -> agentId
        self.open_boundary: Turn | None = None

    # -------------------------------------------------------------- records

    def record(self, obj: JSONDict, stamp: float | None = None, kind: str | None = None) -> None:
        """Add one record (``stamp`` and ``kind``, its time and :func:`record_kind`: when
        the caller has them already)."""
        if kind is None:
            kind = record_kind(obj)
            stamp = iso_epoch(obj.get("timestamp"))
        if kind == "assistant":
            self.assistant(obj, stamp)
        elif kind == "user":
            self.user(obj, stamp)
        elif kind == "system":
            self.system(obj, stamp)
        elif kind in BOOKKEEPING_TYPES:
            self.bookkeeping(str(kind), obj)

    def assistant(self, obj: JSONDict, stamp: float | None) -> None:
        message = obj.get("message")
        if not isinstance(message, dict):
            self.count("assistant/empty")
            return
        mid = _str(message.get("id")) or _str(obj.get("requestId")) or _str(obj.get("uuid"))
        turn = self.by_message_id.get(mid) if mid else None
        if turn is None:
            turn = self.add(Turn("assistant", stamp))
            if mid:
                self.by_message_id[mid] = turn
                turn.meta["claude_message_id"] = mid
            uuid = _str(obj.get("uuid"))
            if uuid:
                turn.meta["claude_uuid"] = uuid
        model = _str(message.get("model"))
        if model:
            turn.meta["model"] = model
        stop = _str(message.get("stop_reason"))
        if stop:
            turn.meta["stop_reason"] = stop
        content = message.get("content")
        if isinstance(content, str):
            turn.texts.append(content)
            return
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text":
                turn.texts.append(_str(block.get("text")) or "")
            elif btype in ("thinking", "redacted_thinking"):
                if self.include_hidden:
                    turn.hidden.append(
                        {"type": "thinking", "text": _str(block.get("thinking")) or ""}
                    )
            elif btype == "tool_use":
                call_id = _str(block.get("id")) or ""
                name = _str(block.get("name")) or "?"
                self.tool_names[call_id] = name
                if name in TASK_TOOLS and isinstance(block.get("input"), dict):
                    self.tasks[call_id] = block["input"]
                if self.include_hidden:
                    turn.hidden.append(
                        {
                            "type": "toolCall",
                            "id": call_id,
                            "name": name,
                            "arguments": block.get("input"),
                        }
                    )
            elif self.include_hidden:
                turn.hidden.append({"type": str(btype), "block": short(block)})

    def user(self, obj: JSONDict, stamp: float | None) -> None:
        message = obj.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if obj.get("isCompactSummary") is True:
            marker = self.open_boundary
            if marker is None:  # a summary without its boundary line still splits
                marker = self.add(Turn(None, stamp, meta={"claude_type": "compact_boundary"}))
            marker.texts = [block_text(content)]
            self.open_boundary = None
            return
        results = (
            [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            if isinstance(content, list)
            else []
        )
        if results:
            self.tool_results(obj, results, stamp)
            return
        text = block_text(content)
        if obj.get("isMeta") is True:
            self.count("user/meta")
            self.hide({"type": "custom", "text": short(text)})
            return
        stripped = text.lstrip()
        tagged = stripped[:1] == "<"  # (prose, the most, is none of what follows)
        if tagged and stripped.startswith(_COMMAND_OUTPUT):
            self.count("user/command-output")
            self.hide({"type": "command output", "block": short(_TAG_RE.sub("", text).strip())})
            return
        if stripped[:1] == "[" and stripped.startswith(_INTERRUPTED):
            self.count("user/interrupted")
            self.hide({"type": "custom", "text": stripped})
            return
        turn = Turn("user", stamp)
        command = _command_line(text) if tagged else None
        bash = _BASH_INPUT_RE.match(text) if tagged else None
        if bash is not None:  # a shell command typed with "!"
            turn.texts.append(f"!{bash.group(1).strip()}")
            turn.meta["command"] = "!"
        elif command is not None:
            turn.texts.append(command)
            turn.meta["command"] = command.split(" ", 1)[0]
        else:
            turn.texts.append(text)
        images = (
            [b for b in content if isinstance(b, dict) and b.get("type") == "image"]
            if isinstance(content, list)
            else []
        )
        if images:
            turn.meta["images"] = len(images)
            if self.include_hidden:
                turn.hidden.extend({"type": "image", "mime_type": _mime(b)} for b in images)
        uuid = _str(obj.get("uuid"))
        if uuid:
            turn.meta["claude_uuid"] = uuid
        self.add(turn)

    def tool_results(self, obj: JSONDict, results: list[JSONDict], stamp: float | None) -> None:
        structured = obj.get("toolUseResult")
        agent_id = _str(structured.get("agentId")) if isinstance(structured, dict) else None
        for block in results:
            call_id = _str(block.get("tool_use_id")) or ""
            name = self.tool_names.get(call_id, "?")
            turn = Turn("tool", stamp, tool_call_id=call_id or None)
            turn.meta["name"] = name
            if block.get("is_error") is True:
                turn.meta["is_error"] = True
            if agent_id and call_id in self.tasks:
                self.agent_of_call.setdefault(call_id, agent_id)
            if self.include_hidden:
                turn.hidden.append(
                    {
                        "type": "toolResult",
                        "tool_name": name,
                        "text": block_text(block.get("content")),
                        "is_error": block.get("is_error") is True,
                    }
                )
            self.add(turn)

    def system(self, obj: JSONDict, stamp: float | None) -> None:
        subtype = _str(obj.get("subtype")) or "?"
        if subtype == "compact_boundary":
            meta: JSONDict = {"claude_type": "compact_boundary"}
            compact = obj.get("compactMetadata")
            if isinstance(compact, dict):
                tokens = compact.get("preTokens")
                if isinstance(tokens, int) and not isinstance(tokens, bool):
                    meta["tokens_before"] = tokens
                trigger = _str(compact.get("trigger"))
                if trigger:
                    meta["trigger"] = trigger
            marker = Turn(None, stamp, texts=[_str(obj.get("content")) or ""], meta=meta)
            self.open_boundary = self.add(marker)
            return
        self.count(f"system/{subtype}")
        detail = obj.get("content") if obj.get("content") is not None else obj.get("durationMs")
        self.hide({"type": f"system {subtype}", "block": short(detail if detail else "")})

    def bookkeeping(self, kind: str, obj: JSONDict) -> None:
        self.count(kind)
        if kind == "progress":
            data = obj.get("data")
            dtype = _str(data.get("type")) if isinstance(data, dict) else None
            if isinstance(data, dict) and dtype == "agent_progress":
                call = _str(obj.get("parentToolUseID"))
                agent = _str(data.get("agentId"))
                if call and agent:
                    self.agent_of_call.setdefault(call, agent)
            self.hide({"type": "progress", "block": dtype or "?"})
        elif kind == "queue-operation":
            op = _str(obj.get("operation")) or "?"
            self.hide({"type": "queue", "block": f"{op} {short(obj.get('content') or '')}"})
        elif kind == "attachment":
            att = obj.get("attachment")
            atype = _str(att.get("type")) if isinstance(att, dict) else None
            self.hide({"type": "attachment", "block": atype or "?"})
        elif kind == "file-history-snapshot":
            snap = obj.get("snapshot")
            files = snap.get("trackedFileBackups") if isinstance(snap, dict) else None
            count = len(files) if isinstance(files, dict) else 0
            self.hide({"type": "file snapshot", "block": f"{count} file(s)"})


def _mime(block: JSONDict) -> str | None:
    source = block.get("source")
    return _str(source.get("media_type")) if isinstance(source, dict) else None


# ---------------------------------------------------------------------- the session


@dataclass
class ClaudeSession(AgentSessionView):
    """A Claude Code transcript read as one session (``data``: the PraisonAI-shaped dict)."""

    KIND = CLAUDE_SOURCE

    subagents: list[JSONDict]
    state: ClaudeParseState = field(repr=False)
    resumed: bool = False
    raw: bytes | None = field(default=None, repr=False)  # the file's bytes, see JsonLines


def _first_prompt(records: list[JSONDict]) -> str:
    for obj in records:
        if obj.get("type") == "user":
            message = obj.get("message")
            if isinstance(message, dict):
                return block_text(message.get("content")).strip()
    return ""


def _sub_turns(
    records: list[JSONDict], include_hidden: bool, agent_id: str, task: JSONDict | None
) -> tuple[list[Turn], dict[str, int]]:
    builder = _Builder(include_hidden)
    for obj in records:
        builder.record(obj)
    turns = [t for t in builder.turns if t.role is not None]
    for turn in turns:
        turn.meta["subagent"] = agent_id
        kind = _str(task.get("subagent_type")) if task else None
        if kind:
            turn.meta["subagent_type"] = kind
    return turns, builder.hidden_records


def claude_summaries(paths: Iterable[str | os.PathLike[str]]) -> dict[str, str]:
    """``leafUuid -> summary`` of the ``summary`` lines of ``paths`` (a project folder's
    transcripts): a summary line often names a leaf in another file of the folder. Lines
    that do not mention ``"summary"`` are not parsed; unreadable files are left out."""
    out: dict[str, str] = {}
    for path in paths:
        try:
            # Unbuffered: most files are read in one piece (no buffer to build for each).
            with open_regular(path, buffered=False) as fh:
                size = os.fstat(fh.fileno()).st_size
                if size <= WHOLE_READ:  # most: one read, one look
                    data = read_upto(fh, size)
                    if b'"summary"' not in data:
                        continue
                    lines: Iterable[bytes] = data.split(b"\n")[:-1]  # (the last: unfinished)
                    whole = True
                else:
                    lines = io.BufferedReader(cast(io.RawIOBase, fh))
                    whole = False
                for raw in lines:
                    if b'"summary"' not in raw or not (whole or raw.endswith(b"\n")):
                        continue
                    try:
                        obj = loads(raw)
                    except (ValueError, RecursionError):
                        continue
                    if isinstance(obj, dict) and obj.get("type") == "summary":
                        leaf, text = _str(obj.get("leafUuid")), _str(obj.get("summary"))
                        if leaf and text and text.strip():
                            out[leaf] = text.strip()
        except OSError:
            continue
    return out


@dataclass
class ClaudeParseState:
    """What a read of a main transcript has gathered so far, to go on from ``end_offset``
    when the file only grew (Claude Code appends). Holds no raw JSON but that of inline
    sidechains (older builds). A state is used once: a read that resumes it takes it over,
    and a state already taken over makes the next read start from the beginning."""

    include_hidden: bool
    builder: _Builder
    mark: FileMark = field(default_factory=FileMark)
    skipped_lines: int = 0
    unknown: dict[str, int] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)
    info: JSONDict = field(default_factory=dict)
    first_stamp: float | None = None
    uuids: list[str] = field(default_factory=list)
    file_summaries: dict[str, str] = field(default_factory=dict)
    chains: dict[str, list[JSONDict]] = field(default_factory=dict)
    root_of: dict[str, str] = field(default_factory=dict)
    spent: bool = False

    def ingest(self, obj: JSONDict) -> None:
        """Add one record."""
        get = obj.get
        uuid = get("uuid")
        if uuid and isinstance(uuid, str):
            self.uuids.append(uuid)
        else:
            uuid = None
        kind = record_kind(obj)
        if kind is None:
            key = unknown_key(obj)
            self.unknown[key] = self.unknown.get(key, 0) + 1
            return
        stamp = iso_epoch(get("timestamp"))
        if stamp is not None and (self.first_stamp is None or stamp < self.first_stamp):
            self.first_stamp = stamp
        if kind in TITLE_TYPES:
            field_name = _TITLE_FIELDS[kind]
            value = _str(get(field_name))
            if value and value.strip():
                self.titles[kind] = value.strip()
                leaf = _str(get("leafUuid")) if kind == "summary" else None
                if leaf:
                    self.file_summaries.setdefault(leaf, value.strip())
        if get("isSidechain") is True:
            key = uuid or f"line-{len(self.uuids)}"
            parent = _str(get("parentUuid"))
            root = self.root_of.get(parent, key) if parent else key
            self.root_of[key] = root
            self.chains.setdefault(root, []).append(obj)
            return
        if kind in CONVERSATION_TYPES:
            info = self.info
            for key, src in _INFO_FIELDS:
                value = get(src)
                # the first session id; the latest of the rest
                if value and isinstance(value, str) and (key != "session_id" or key not in info):
                    info[key] = value
        self.builder.record(obj, stamp, kind)


#: (key in ``info``, the record's field) of what a conversation record says of its session.
_INFO_FIELDS = (
    ("session_id", "sessionId"),
    ("cwd", "cwd"),
    ("git_branch", "gitBranch"),
    ("claude_version", "version"),
    ("slug", "slug"),
)
_TITLE_FIELDS = {"custom-title": "customTitle", "ai-title": "aiTitle", "summary": "summary"}


def read_claude_session(
    path: str | os.PathLike[str],
    *,
    include_hidden: bool = False,
    subagents: bool = True,
    summaries: Mapping[str, str] | None = None,
    prior: ClaudeParseState | None = None,
    sibling_agents: Sequence[str | os.PathLike[str]] = (),
) -> ClaudeSession:
    """Read one main transcript (and, with ``subagents``, its subagent files) without
    writing anything. Raises ``OSError`` when the main file cannot be read; an unreadable
    subagent file is left out.

    With ``prior`` (the ``state`` of an earlier read) only the bytes after its
    ``end_offset`` are read, provided the file only grew (same file, same first and last
    bytes); otherwise the whole file is read and ``resumed`` is False. Subagent files are
    small and read whole each time: ``<stem>/subagents/agent-*.jsonl``, and the older
    builds' files beside it given as ``sibling_agents`` (see :func:`sibling_subagents`).

    ``summaries`` (from :func:`claude_summaries` over the project folder) gives the title of
    a session whose last turns a summary line elsewhere names: a summary whose ``leafUuid``
    is in this file titles it; without ``summaries``, a summary line written in the file
    does (it may name another session's leaf: the folder's summaries settle that)."""
    file_path = Path(path)
    resumed = (
        prior is not None
        and not prior.spent
        and prior.include_hidden == include_hidden
        and prior.mark.grown(file_path)
    )
    if prior is not None and resumed:
        state = replace(prior)
        prior.spent = True
    else:
        state = ClaudeParseState(include_hidden, _Builder(include_hidden))
    lines = read_json_lines(file_path, state.mark.end_offset)
    state.skipped_lines += lines.skipped_lines
    for obj in lines.records:
        state.ingest(obj)
    state.mark = lines.mark
    view = state
    if lines.tail is not None:  # used now, read again once whole: the state never holds it
        view = copy.deepcopy(state)
        view.ingest(lines.tail)
    session = _assemble(
        file_path, view, state, lines.partial_tail, subagents, summaries, resumed, sibling_agents
    )
    session.raw = lines.raw
    return session


def _with_runs(main: list[Turn], runs: list[tuple[str, list[Turn], str | None]]) -> list[Turn]:
    """The turns of ``main`` with each subagent run's turns just before the tool turn of the
    call it answers (in run order), or at the end when there is none: one pass over each
    (call ids are mapped to turns once), however many runs a transcript holds."""
    if not runs:  # (most transcripts: ``main`` as it is)
        return main
    first_at: dict[str, int] = {}
    for i, turn in enumerate(main):
        if turn.role == "tool" and turn.tool_call_id:
            first_at.setdefault(turn.tool_call_id, i)
    before: dict[int, list[Turn]] = {}
    tail: list[Turn] = []
    for _agent, sub_turns, call in runs:
        at = first_at.get(call) if call else None
        (tail if at is None else before.setdefault(at, [])).extend(sub_turns)
    out: list[Turn] = []
    for i, turn in enumerate(main):
        out.extend(before.get(i, ()))
        out.append(turn)
    out.extend(tail)
    return out


def _assemble(
    file_path: Path,
    view: ClaudeParseState,
    state: ClaudeParseState,
    partial_tail: bool,
    subagents: bool,
    summaries: Mapping[str, str] | None,
    resumed: bool,
    sibling_agents: Sequence[str | os.PathLike[str]],
) -> ClaudeSession:
    include_hidden = view.include_hidden
    builder = view.builder
    skipped = view.skipped_lines
    unknown = dict(view.unknown)
    hidden_records = dict(builder.hidden_records)

    # Subagents: (agent id, turns, the Task call id they answer or None).
    runs: list[tuple[str, list[Turn], str | None]] = []
    call_of_agent = {agent: call for call, agent in builder.agent_of_call.items()}
    call_of_prompt = {str(task.get("prompt")).strip(): call for call, task in builder.tasks.items()}
    attached: list[JSONDict] = []
    for n, chain in enumerate(view.chains.values()):
        agent = _str(chain[0].get("agentId")) or f"sidechain-{n + 1}"
        call = call_of_agent.get(agent) or call_of_prompt.get(_first_prompt(chain))
        turns, counts = _sub_turns(chain, include_hidden, agent, builder.tasks.get(call or ""))
        runs.append((agent, turns, call))
        attached.append({"agent_id": agent, "inline": True, "turns": len(turns)})
        for name, count in counts.items():
            hidden_records[name] = hidden_records.get(name, 0) + count
    if subagents:
        for sub in [*subagent_files(file_path), *map(Path, sibling_agents)]:
            sub_agent = sub.stem[len("agent-") :]
            if sub_agent.startswith(COMPACT_AGENT_PREFIX):
                continue
            try:
                sub_lines = read_json_lines(sub)
            except OSError:
                continue
            skipped += sub_lines.skipped_lines
            records = []
            for record in sub_lines.all_records:
                if record_kind(record) is not None:
                    records.append(record)
                else:
                    key = unknown_key(record)
                    unknown[key] = unknown.get(key, 0) + 1
            call = call_of_agent.get(sub_agent) or call_of_prompt.get(_first_prompt(records))
            turns, counts = _sub_turns(
                records, include_hidden, sub_agent, builder.tasks.get(call or "")
            )
            runs.append((sub_agent, turns, call))
            attached.append({"agent_id": sub_agent, "path": str(sub), "turns": len(turns)})
            for name, count in counts.items():
                hidden_records[name] = hidden_records.get(name, 0) + count

    turns = _with_runs(builder.turns, runs)
    archived, active, last_compaction = split_compaction(turns, include_hidden, "claude")

    info = view.info
    session_id = _str(info.get("session_id")) or file_path.stem
    cwd = _str(info.get("cwd"))
    created, updated = session_times(turns, file_path, view.first_stamp)
    model = next((t.meta["model"] for t in reversed(builder.turns) if t.meta.get("model")), None)
    meta: JSONDict = {"source": CLAUDE_SOURCE}
    # The summary of the latest turn of this file a summary line names, wherever it is.
    leaf_summaries = {**view.file_summaries, **(summaries or {})}
    own_summary = (
        next((leaf_summaries[u] for u in reversed(view.uuids) if u in leaf_summaries), None)
        if leaf_summaries  # (most transcripts: no summary line names a turn)
        else None
    )
    titles = view.titles
    title = (
        titles.get("custom-title")
        or titles.get("ai-title")
        or own_summary
        # Without the folder's summaries, a summary line written here is the best guess.
        or (titles.get("summary") if summaries is None else None)
    )
    if title:
        meta["title"] = title
    meta["cwd"] = cwd
    meta["project"] = cwd
    for key in ("git_branch", "claude_version", "slug"):
        if info.get(key):
            meta[key] = info[key]
    if model:
        meta["model"] = model
    meta["claude_path"] = str(file_path)
    if attached:
        meta["subagents"] = attached
    data = session_dict(
        session_id,
        active=active,
        archived=archived,
        created=created,
        updated=updated,
        meta=meta,
        last_compaction=last_compaction,
    )
    return ClaudeSession(
        path=file_path,
        data=data,
        skipped_lines=skipped + (1 if partial_tail else 0),
        partial_tail=partial_tail,
        unknown_records=unknown,
        hidden_records=hidden_records,
        end_offset=state.mark.end_offset,
        subagents=attached,
        state=state,
        resumed=resumed,
    )


def iter_claude_sessions(
    root: str | os.PathLike[str] | None = None, *, include_hidden: bool = False
) -> Iterator[ClaudeSession]:
    """Every readable main transcript under ``root`` as a session."""
    for path in claude_session_files(root):
        try:
            yield read_claude_session(path, include_hidden=include_hidden)
        except OSError:
            continue
