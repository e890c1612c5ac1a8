"""Codex CLI rollouts as a read-only source.

Where they live
    ``$CODEX_HOME`` (else ``~/.codex``) ``/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl``;
    thread names in ``<home>/session_index.jsonl`` (``{id, thread_name, updated_at}``, the
    latest line for an id wins). :func:`codex_session_files` lists the rollouts.

The format (not a stable contract: unknown record types and fields are skipped and counted)
    Each line is ``{timestamp, type, payload}``: ``session_meta`` (thread id, cwd, git, source,
    fork and subagent links), ``response_item`` (model input and output: ``message``,
    ``reasoning``, ``function_call`` / ``custom_tool_call`` and their outputs, web search ...),
    ``event_msg`` (what the client showed: ``user_message``, ``agent_message``, tool ends,
    ``context_compacted``, ``thread_name_updated`` ...), ``turn_context`` and ``compacted``.
    Older rollouts write bare items without the envelope; they are read too.

The mapping (one PraisonAI-shaped session dict per rollout, as the Pi reader gives)
    - ``user`` turns: ``event_msg`` ``user_message`` (what the person typed). The user-role
      ``response_item`` messages also carry injected text (``<environment_context>``,
      AGENTS.md, instructions); they are used only in a rollout with no ``user_message``
      event at all, injected text left out.
    - ``assistant`` turns: assistant ``response_item`` messages and ``agent_message`` events,
      the pair written for one answer shown once. Reasoning and tool calls are hidden parts
      of the assistant turn they belong to (an empty one when no prose came with them).
    - ``tool`` turns: one per call output, empty content, the output a hidden part.
    - Other events and items are counted in ``hidden_records`` and, with ``include_hidden``,
      kept as one-line hidden parts of the turn before them. Both modes give the same list.
    - The last ``compacted`` line (or, in a rollout without one, ``context_compacted`` event)
      splits the transcript into archived turns, the ``[Session Summary]`` turn and the rest,
      as for Pi; earlier ones stay in place as superseded markers.
    - ``metadata``: ``title`` (session index, else the latest ``thread_name_updated``; the
      shared rule takes the first prompt otherwise), ``cwd`` / ``project``, ``git_branch``,
      ``parent_session`` (fork or spawning thread), ``lineage_id`` (the parent's id, else the
      thread's own: a thread, its forks and subagents fold into one hit).

Reading
    As for Claude Code (:mod:`.claude.transcript`): bad lines are skipped and counted, an
    unfinished last line is used but never consumed, and the returned ``state`` lets the next
    read of a grown rollout parse only the new lines (``prior=``). Nothing here writes,
    locks, renames or creates anything.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..files import regular_lstat
from ..model import JSONDict, iso_epoch
from .claude.transcript import (
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
from .claude.transcript import text_or_none as _str
from .view import session_dict

CODEX_SOURCE = "codex"

KNOWN_TYPES = frozenset(
    {
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
        "world_state",
        "inter_agent_communication",
        "inter_agent_communication_metadata",
        "token_usage_record",
        "security_risk_score",
        "retained_context",
        "realtime_item",
    }
)
#: Item types of the bare (pre-envelope) rollouts.
LEGACY_ITEMS = frozenset(
    {"message", "reasoning", "function_call", "function_call_output", "local_shell_call"}
)
CALL_ITEMS = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "web_search_call",
        "tool_search_call",
        "image_generation_call",
    }
)
OUTPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})
#: Events counted but not kept as hidden parts (bookkeeping with nothing to read).
QUIET_EVENTS = frozenset({"token_count", "task_started", "task_complete"})
INJECTED_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "<INSTRUCTIONS>",
    "# AGENTS.md instructions",
    "<user_shell_command>",
    "<turn_aborted>",
)
_THREAD_ID_RE = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")


# ---------------------------------------------------------------------- where


def codex_home() -> Path:
    """Codex's data folder: ``$CODEX_HOME``, else ``~/.codex``."""
    env = os.environ.get("CODEX_HOME", "").strip()
    return Path(env).expanduser() if env else Path.home() / ".codex"


def default_codex_dir() -> Path:
    """Where the rollouts are: ``<codex home>/sessions``."""
    return codex_home() / "sessions"


def codex_session_files(root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Every ``rollout-*.jsonl`` under ``root`` (default :func:`default_codex_dir`), sorted;
    symlinked folders are not followed and nothing is opened."""
    base = Path(root).expanduser() if root is not None else default_codex_dir()
    out: list[Path] = []
    if not base.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if name.startswith("rollout-") and name.endswith(".jsonl") and regular_lstat(path):
                out.append(path)
    return out


def read_session_index(home: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """Thread names from ``<home>/session_index.jsonl`` (the latest line of an id wins);
    empty when there is no such file."""
    path = Path(home).expanduser() if home is not None else codex_home()
    try:
        lines = read_json_lines(path / "session_index.jsonl")
    except OSError:
        return {}
    names: dict[str, str] = {}
    for obj in lines.all_records:
        tid, name = obj.get("id"), obj.get("thread_name")
        if isinstance(tid, str) and isinstance(name, str) and name.strip():
            names[tid] = name.strip()
    return names


# ---------------------------------------------------------------------- helpers


_TEXTS = frozenset({"input_text", "output_text", "text"})


def item_text(content: Any) -> str:
    """The text of a message's content (``input_text`` / ``output_text`` / ``text`` blocks)."""
    return blocks_text(content, _TEXTS)


def is_injected(text: str) -> bool:
    """True for text Codex put in a user-role item (context, instructions), not typed."""
    return text.lstrip().startswith(INJECTED_PREFIXES)


#: What a record whose fields have the wrong types is counted as (an unknown record).
MALFORMED = "malformed"


_STRING_FIELDS = ("id", "cwd", "call_id", "role", "message", "name", "thread_name", "model")
_LIST_FIELDS = ("images", "local_images", "replacement_history")
#: The type each of those fields has when it is written (null: not written).
_FIELD_TYPES: dict[str, type | tuple[type, ...]] = {
    **dict.fromkeys(_STRING_FIELDS, str),
    **dict.fromkeys(_LIST_FIELDS, list),
    "content": (str, list),
}
_TYPED_KINDS = frozenset({"event_msg", "response_item"})


def _well_typed(kind: str, payload: JSONDict, obj: JSONDict) -> bool:
    """Whether the fields of a record this reader reads have the types Codex writes."""
    stamp = obj.get("timestamp")
    if stamp is not None and not isinstance(stamp, str) and (
        not isinstance(stamp, (int, float)) or isinstance(stamp, bool)
    ):
        return False
    get = payload.get
    ptype = get("type")
    if kind in _TYPED_KINDS and not isinstance(ptype, str):
        return False
    # The fields a payload has are looked at (three or four: fewer than the fields read).
    expect = _FIELD_TYPES.get
    for name, value in payload.items():
        wanted = expect(name)
        if wanted is not None and value is not None and not isinstance(value, wanted):
            return False
    if ptype == "reasoning":
        summary = get("summary")
        if summary is not None and not isinstance(summary, list):
            return False
    return True


def _envelope(obj: JSONDict, first: bool) -> tuple[str | None, JSONDict]:
    """(record type, payload) of a line, bare pre-envelope lines included; the type is
    :data:`MALFORMED` for a known record whose fields have the wrong types, None for one
    without a type this reader can name."""
    kind, payload = _bare_envelope(obj, first)
    if kind in KNOWN_TYPES and not _well_typed(kind, payload, obj):
        return MALFORMED, payload
    return kind, payload


def _bare_envelope(obj: JSONDict, first: bool) -> tuple[str | None, JSONDict]:
    kind = obj.get("type")
    if kind is not None and not isinstance(kind, str):
        return None, obj
    payload = obj.get("payload")
    if isinstance(payload, dict) and isinstance(kind, str):
        return kind, payload
    if kind in KNOWN_TYPES and "payload" in obj:
        return MALFORMED, obj
    if kind in LEGACY_ITEMS or (isinstance(kind, str) and kind.endswith("_call_output")):
        return "response_item", obj
    if first and "id" in obj and kind is None and "record_type" not in obj:
        return "session_meta", obj
    if obj.get("record_type") == "state":
        return "state", obj
    return (kind if isinstance(kind, str) else None), obj


# ---------------------------------------------------------------------- building


class _Builder(TurnBuilder):
    def __init__(self, include_hidden: bool, typed_events: bool, compacted_lines: bool) -> None:
        super().__init__(include_hidden)
        self.typed_events = typed_events  # user_message events exist: prompts come from them
        self.compacted_lines = compacted_lines  # compacted lines exist: they mark boundaries
        self.call_names: dict[str, str] = {}
        self.meta: JSONDict | None = None
        self.thread_name: str | None = None
        self.model: str | None = None
        self.turn_cwd: str | None = None
        self.children: list[str] = []

    def answering(self, stamp: float | None) -> Turn:
        """The assistant turn calls and reasoning belong to (a new empty one when the
        last turn is not an assistant's)."""
        last = self.turns[-1] if self.turns else None
        if last is not None and last.role == "assistant":
            return last
        return self.add(Turn("assistant", stamp))

    def prose(self, text: str, stamp: float | None, phase: str | None) -> None:
        if not text.strip():
            return
        for turn in reversed(self.turns):  # the event/item pair of one answer: shown once
            if turn.role == "user":
                break
            if turn.role == "assistant" and turn.text == text.strip():
                return
        last = self.turns[-1] if self.turns else None
        if last is not None and last.role == "assistant" and not last.text:
            turn = last
        else:
            turn = self.add(Turn("assistant", stamp))
        turn.texts.append(text)
        if phase:
            turn.meta["phase"] = phase
        if self.model:
            turn.meta["model"] = self.model

    # -------------------------------------------------------------- records

    def record(self, kind: str | None, payload: JSONDict, stamp: float | None) -> None:
        if kind == "session_meta":
            if self.meta is None:
                self.meta = payload
            else:
                self.count("session_meta")
        elif kind == "turn_context":
            self.count("turn_context")
            self.model = _str(payload.get("model")) or self.model
            self.turn_cwd = _str(payload.get("cwd")) or self.turn_cwd
        elif kind == "event_msg":
            self.event(payload, stamp)
        elif kind == "response_item":
            self.item(payload, stamp)
        elif kind == "compacted":
            self.boundary(payload, stamp, "compacted")
        else:
            self.count(str(kind))
            self.hide({"type": str(kind), "block": short(payload, 200)})

    def event(self, payload: JSONDict, stamp: float | None) -> None:
        etype = _str(payload.get("type")) or "?"
        if etype == "user_message":
            text = _str(payload.get("message")) or ""
            turn = Turn("user", stamp, texts=[text])
            images = [
                *(payload.get("images") or []),
                *(payload.get("local_images") or []),
            ]
            if images:
                turn.meta["images"] = len(images)
            self.add(turn)
        elif etype == "agent_message":
            self.prose(_str(payload.get("message")) or "", stamp, _str(payload.get("phase")))
        elif etype == "agent_reasoning":
            self.count("event/agent_reasoning")
            text = _str(payload.get("text")) or ""
            turn = self.answering(stamp)
            if self.include_hidden and text:
                turn.hidden.append({"type": "thinking", "text": text})
        elif etype == "context_compacted" and not self.compacted_lines:
            self.boundary(payload, stamp, "context_compacted")
        elif etype == "thread_name_updated":
            self.count("event/thread_name_updated")
            name = _str(payload.get("thread_name"))
            if name and name.strip():
                self.thread_name = name.strip()
        else:
            self.count(f"event/{etype}")
            if etype == "collab_agent_spawn_end":
                child = _str(payload.get("new_thread_id"))
                if child:
                    self.children.append(child)
            if etype not in QUIET_EVENTS:
                rest = {k: v for k, v in payload.items() if k != "type"}
                self.hide({"type": etype.replace("_", " "), "block": short(rest, 500)})

    def item(self, payload: JSONDict, stamp: float | None) -> None:
        itype = _str(payload.get("type")) or "?"
        if itype == "message":
            role = payload.get("role")
            text = item_text(payload.get("content"))
            if role == "assistant":
                self.prose(text, stamp, _str(payload.get("phase")))
            elif role == "user" and not is_injected(text):
                if self.typed_events:  # the model's copy of a typed prompt: shown once
                    self.count("message/user-copy")
                elif text.strip():
                    self.add(Turn("user", stamp, texts=[text]))
            else:
                self.count(f"message/{role}")
                self.hide({"type": "custom", "text": short(text)})
        elif itype == "reasoning":
            self.count("reasoning")
            summary = payload.get("summary")
            text = item_text(
                [
                    {**b, "type": "text"}
                    for b in (summary if isinstance(summary, list) else [])
                    if isinstance(b, dict)
                ]
            )
            turn = self.answering(stamp)
            if self.include_hidden:
                turn.hidden.append({"type": "thinking", "text": text or "(encrypted)"})
        elif itype in CALL_ITEMS:
            self.count(itype)
            call_id = _str(payload.get("call_id")) or _str(payload.get("id")) or ""
            name = _str(payload.get("name")) or itype.removesuffix("_call")
            self.call_names[call_id] = name
            turn = self.answering(stamp)
            if self.include_hidden:
                args = payload.get("arguments", payload.get("input", payload.get("action")))
                turn.hidden.append(
                    {"type": "toolCall", "id": call_id, "name": name, "arguments": args}
                )
        elif itype in OUTPUT_ITEMS:
            call_id = _str(payload.get("call_id")) or ""
            name = self.call_names.get(call_id, "?")
            turn = Turn("tool", stamp, tool_call_id=call_id or None)
            turn.meta["name"] = name
            if self.include_hidden:
                output = payload.get("output")
                if isinstance(output, dict):  # older builds: {content, success}
                    output = output.get("content", output)
                turn.hidden.append(
                    {
                        "type": "toolResult",
                        "tool_name": name,
                        "text": output if isinstance(output, str) else short(output),
                        "is_error": False,
                    }
                )
            self.add(turn)
        else:
            self.count(itype)
            rest = {k: v for k, v in payload.items() if k != "type"}
            self.hide({"type": itype.replace("_", " "), "block": short(rest, 500)})

    def boundary(self, payload: JSONDict, stamp: float | None, kind: str) -> None:
        text = _str(payload.get("message")) or ""
        if not text.strip():
            history = payload.get("replacement_history")
            items = [i for i in history if isinstance(i, dict)] if isinstance(history, list) else []
            text = item_text(items[-1].get("content")) if items else ""
        meta: JSONDict = {"codex_type": kind}
        window = payload.get("window_number")
        if isinstance(window, int) and not isinstance(window, bool):
            meta["window_number"] = window
        self.add(Turn(None, stamp, texts=[text], meta=meta))


# ---------------------------------------------------------------------- the session


@dataclass
class CodexSession(AgentSessionView):
    """A Codex rollout read as one session (``data``: the PraisonAI-shaped dict)."""

    KIND = CODEX_SOURCE

    state: CodexParseState = field(repr=False)
    resumed: bool = False
    raw: bytes | None = field(default=None, repr=False)  # the file's bytes, see JsonLines


def _parent_of(meta: JSONDict) -> tuple[str | None, JSONDict | None]:
    """(parent thread id, subagent spawn info) of a ``session_meta`` payload."""
    spawn: JSONDict | None = None
    source = meta.get("source")
    sub = source.get("subagent") if isinstance(source, dict) else None
    if isinstance(sub, dict):
        found = sub.get("thread_spawn")
        spawn = found if isinstance(found, dict) else {}
    parent = (
        _str(meta.get("forked_from_id"))
        or (_str(spawn.get("parent_thread_id")) if spawn else None)
        or _str(meta.get("parent_thread_id"))
    )
    return parent, spawn


_Record = tuple[str | None, JSONDict, float | None]


@dataclass
class CodexParseState:
    """What a read of a rollout has gathered, to go on from ``mark.end_offset`` when the
    file only grew (Codex appends, also on resume). Used once, like the Claude state."""

    include_hidden: bool
    builder: _Builder | None = None
    mark: FileMark = field(default_factory=FileMark)
    lines_seen: int = 0
    skipped_lines: int = 0
    unknown: dict[str, int] = field(default_factory=dict)
    first_stamp: float | None = None
    spent: bool = False

    def sort(self, objs: list[JSONDict]) -> list[_Record]:
        """The known records of ``objs`` (lines after the ones seen), unknown ones counted."""
        out: list[_Record] = []
        for obj in objs:
            kind, payload = _envelope(obj, self.lines_seen == 0)
            self.lines_seen += 1
            if kind not in KNOWN_TYPES and kind != "state":
                key = kind if kind is not None else "?"
                self.unknown[key] = self.unknown.get(key, 0) + 1
                continue
            stamp = iso_epoch(obj.get("timestamp"))
            if stamp is not None and (self.first_stamp is None or stamp < self.first_stamp):
                self.first_stamp = stamp
            out.append((kind, payload, stamp))
        return out


def _typed(records: list[_Record]) -> bool:
    return any(k == "event_msg" and p.get("type") == "user_message" for k, p, _s in records)


def _compacted(records: list[_Record]) -> bool:
    return any(k == "compacted" for k, _p, _s in records)


def read_codex_session(
    path: str | os.PathLike[str],
    *,
    include_hidden: bool = False,
    names: Mapping[str, str] | None = None,
    prior: CodexParseState | None = None,
) -> CodexSession:
    """Read one rollout without writing anything (``names``: thread names from
    :func:`read_session_index`). Raises ``OSError`` when the file cannot be read.

    With ``prior`` (the ``state`` of an earlier read) only the lines after its offset are
    read when the file only grew, and when they do not change how the earlier lines read
    (a first ``user_message`` event or ``compacted`` line does: the file is read whole)."""
    file_path = Path(path)
    resumed = (
        prior is not None
        and not prior.spent
        and prior.include_hidden == include_hidden
        and prior.builder is not None
        and prior.mark.grown(file_path)
    )
    if prior is not None and resumed:
        state = replace(prior, unknown=dict(prior.unknown))
        prior.spent = True
    else:
        state = CodexParseState(include_hidden)
    lines = read_json_lines(file_path, state.mark.end_offset)
    records = state.sort(lines.records)
    # The unfinished last line is sorted on a copy: the state never holds it.
    view = replace(state, unknown=dict(state.unknown))
    tail = view.sort([lines.tail]) if lines.tail is not None else []
    if state.builder is None:
        seen = records + tail
        state.builder = _Builder(include_hidden, _typed(seen), _compacted(seen))
    elif (_typed(records + tail) and not state.builder.typed_events) or (
        _compacted(records + tail) and not state.builder.compacted_lines
    ):
        return read_codex_session(file_path, include_hidden=include_hidden, names=names)
    state.skipped_lines += lines.skipped_lines
    for kind, payload, stamp in records:
        state.builder.record(kind, payload, stamp)
    state.mark = lines.mark
    builder = state.builder
    if tail:  # used now, read again once whole
        builder = copy.deepcopy(builder)
        for kind, payload, stamp in tail:
            builder.record(kind, payload, stamp)
    archived, active, last_compaction = split_compaction(builder.turns, include_hidden, "codex")

    head = builder.meta or {}
    match = _THREAD_ID_RE.search(file_path.stem)
    session_id = _str(head.get("id")) or (match.group(1) if match else file_path.stem)
    cwd = _str(head.get("cwd")) or builder.turn_cwd
    turns = builder.turns
    first = view.first_stamp or iso_epoch(head.get("timestamp")) or None
    created, updated = session_times(turns, file_path, first)

    meta: JSONDict = {"source": CODEX_SOURCE}
    title = (names or {}).get(session_id) or builder.thread_name
    if title:
        meta["title"] = title
    meta["cwd"] = cwd
    meta["project"] = cwd
    git = head.get("git")
    if isinstance(git, dict):
        for key, src in (
            ("git_branch", "branch"),
            ("git_commit", "commit_hash"),
            ("git_repository", "repository_url"),
        ):
            value = _str(git.get(src))
            if value:
                meta[key] = value
    for key, src in (
        ("codex_version", "cli_version"),
        ("originator", "originator"),
        ("model_provider", "model_provider"),
    ):
        value = _str(head.get(src))
        if value:
            meta[key] = value
    if builder.model:
        meta["model"] = builder.model
    parent, spawn = _parent_of(head)
    if parent:
        meta["parent_session"] = parent
    if _str(head.get("forked_from_id")):
        meta["forked_from"] = head["forked_from_id"]
    if spawn is not None:
        meta["subagent"] = {
            k: spawn[k] for k in ("agent_nickname", "agent_role", "depth") if k in spawn
        }
    if builder.children:
        meta["child_sessions"] = list(builder.children)
    # A fork or a subagent thread continues its parent's work: they share a lineage (one hit
    # for them all, as PraisonAI's continuations), keyed by the parent's id (a thread that
    # has none keys its own: its forks and subagents join it).
    meta["lineage_id"] = parent or session_id
    meta["codex_path"] = str(file_path)
    data = session_dict(
        session_id,
        active=active,
        archived=archived,
        created=created,
        updated=updated,
        meta=meta,
        last_compaction=last_compaction,
    )
    return CodexSession(
        path=file_path,
        data=data,
        skipped_lines=state.skipped_lines + (1 if lines.partial_tail else 0),
        partial_tail=lines.partial_tail,
        unknown_records=view.unknown,
        hidden_records=dict(builder.hidden_records),
        end_offset=state.mark.end_offset,
        state=state,
        resumed=resumed,
        raw=lines.raw,
    )


def iter_codex_sessions(
    root: str | os.PathLike[str] | None = None,
    *,
    include_hidden: bool = False,
    names: Mapping[str, str] | None = None,
) -> Iterator[CodexSession]:
    """Every readable rollout under ``root`` as a session."""
    for path in codex_session_files(root):
        try:
            yield read_codex_session(path, include_hidden=include_hidden, names=names)
        except OSError:
            continue
