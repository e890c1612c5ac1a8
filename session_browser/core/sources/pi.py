"""Pi coding-agent sessions as a read-only source.

Where they live
    ``$PI_CODING_AGENT_SESSION_DIR``, else the ``sessionDir`` of ``<agent dir>/settings.json``,
    else ``<agent dir>/sessions`` (agent dir: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``), laid
    out as ``--<cwd with / replaced by ->--/<timestamp>_<uuid>.jsonl``. :class:`PiStore` reads
    ``root/**/*.jsonl`` whatever the layout below the root.

The format
    One JSON object a line. The first is a header ``{"type": "session", "id", "timestamp",
    "cwd", "version"?}``. Every later entry has ``type`` and ``timestamp``; v2/v3 entries also
    have ``id`` and ``parentId``, forming a tree whose last entry is the active leaf. Legacy v1
    files have neither: each entry is the child of the one before, and a ``compaction`` names
    its first kept entry by position (``firstKeptEntryIndex``, counting the header as 0)
    instead of by id.

The mapping (one PraisonAI-shaped session dict per file, so :mod:`..recall` works unchanged)
    - ``session_id``: the header id (the file stem when there is none); ``metadata.title``: the
      latest ``session_info.name``; ``metadata.cwd`` / ``metadata.project``: the header cwd;
      ``metadata.source``: ``"pi"``.
    - The transcript is the active branch: the path from the last entry back to the root.
    - Every ``message`` entry becomes one message: ``user`` and ``assistant`` keep their role,
      ``toolResult`` and ``bashExecution`` become ``tool``, ``custom`` messages, custom message
      entries and branch summaries become ``system``. ``content`` is the visible prose only:
      user and assistant text blocks, visible custom messages and summaries. Thinking, images,
      tool-call arguments, tool results and bash commands and output are never content, so
      search never matches them; with ``include_hidden`` they are kept in ``metadata.hidden``
      for the viewer. Both modes give the SAME list of messages (tool entries are present with
      empty content), so a projection index found by search is valid in the viewer.
    - The latest ``compaction`` on the active branch splits the transcript: the turns before
      its first kept entry are ``archived_messages``; ``messages`` opens with the summary (a
      ``system`` message ``[Session Summary]\\n...`` with metadata ``compaction: true``), then
      the kept turns, then everything after the compaction. Earlier compactions stay in place
      as summary markers (``superseded: true``).

Reading
    :func:`read_pi_session` streams the file line by line. Blank lines are ignored; lines that
    are not JSON objects are skipped and counted; a last line without its newline is never
    consumed (it is used when it parses, and counted as a partial tail when it does not).
    ``end_offset`` is the byte offset after the last complete line and the returned
    :class:`PiParseState` resumes from there when the file only grew.

Nothing here writes, locks, renames or creates anything: files are opened ``rb`` and closed.
"""

from __future__ import annotations

import base64
import logging
import os
import stat
import threading
import zlib
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import orjson

from .. import recall
from ..files import loads
from ..model import (
    SUMMARY_PREFIX,
    JSONDict,
    SessionData,
    SessionHit,
    SessionSummary,
    dumps_json,
    epoch_seconds,
    iso_epoch,
    iso_of_epoch,
    json_utf8,
)
from .readonly import ReadOnlyWrites

log = logging.getLogger("session_browser.sources.pi")

PI_SOURCE = "pi"
STATE_FORMAT = 1  # PiParseState.dump's layout; another value is read again from the start
FINGERPRINT_BYTES = 64
HEADER_LINE_LIMIT = 1 << 20
DEFAULT_CACHE_SIZE = 512
PREVIEW_CHARS = 80
# Pi sessions are interactive: tool calls make several entries a minute, so the automated
# rule is applied to the user's turns (more than 60 user turns an hour) instead of all turns.
USER_TURN_RATE_THRESHOLD = recall.AUTOMATED_RATE_THRESHOLD

KNOWN_TYPES = frozenset(
    {
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom_message",
        "custom",
        "label",
        "session_info",
    }
)


# ---------------------------------------------------------------------- where


def default_pi_dir() -> Path:
    """Pi's session root: ``$PI_CODING_AGENT_SESSION_DIR``, the settings, or the default."""
    env = os.environ.get("PI_CODING_AGENT_SESSION_DIR", "").strip()
    if env:
        return Path(env).expanduser()
    agent_env = os.environ.get("PI_CODING_AGENT_DIR", "").strip()
    agent_dir = Path(agent_env).expanduser() if agent_env else Path.home() / ".pi" / "agent"
    configured = _settings_session_dir(agent_dir / "settings.json")
    return configured if configured is not None else agent_dir / "sessions"


def _settings_session_dir(settings: Path) -> Path | None:
    try:
        with open(settings, "rb") as fh:
            data = loads(fh.read())
    except (OSError, ValueError, RecursionError):
        return None
    value = data.get("sessionDir") if isinstance(data, dict) else None
    if not isinstance(value, str) or not value.strip():
        return None
    path = Path(value.strip()).expanduser()
    return path if path.is_absolute() else None


def cwd_matches(cwd: str | None, project: str | os.PathLike[str], *, subdirs: bool = True) -> bool:
    """True when a session's ``cwd`` is ``project`` (or, with ``subdirs``, inside it).

    Paths are compared as text after ``~`` expansion and normalisation; nothing on disk is
    consulted (the cwd may come from another machine).
    """
    if not cwd:
        return False
    have = _norm_path(cwd)
    want = _norm_path(os.fspath(project))
    if have == want:
        return True
    if not subdirs:
        return False
    prefix = want if want.endswith(os.sep) else want + os.sep
    return have.startswith(prefix)


def _norm_path(value: str) -> str:
    return os.path.normpath(os.path.expanduser(value))


# ---------------------------------------------------------------------- time


def _epoch(value: Any) -> float | None:
    """Epoch seconds from an ISO string or a number (Pi writes milliseconds); None when the
    value cannot be used (see :func:`~..model.utc_datetime`). Never raises."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        if isinstance(value, int) and abs(value) > 10**18:  # no epoch, in s or ms
            return None
        number = float(value)
        return epoch_seconds(number / 1000.0 if abs(number) > 1e11 else number)
    return iso_epoch(value)


def _iso(ts: float | None) -> str | None:
    """PraisonAI's ISO form (``datetime.isoformat()`` in UTC)."""
    return iso_of_epoch(ts)


# ---------------------------------------------------------------------- entries


@dataclass(slots=True)
class _Entry:
    """One parsed entry, reduced to what the transcript needs (raw JSON is not kept)."""

    index: int
    id: str
    parent: str | None
    type: str
    timestamp: float | None
    role: str | None = None
    pi_role: str | None = None
    text: str = ""
    tool_call_id: str | None = None
    meta: JSONDict = field(default_factory=dict)
    hidden: list[JSONDict] | None = None
    info: JSONDict = field(default_factory=dict)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _blocks(content: Any, include_hidden: bool) -> tuple[str, int, list[JSONDict]]:
    """(visible text, image count, hidden blocks) of a user/assistant/custom ``content``."""
    if isinstance(content, str):
        return content, 0, []
    if not isinstance(content, list):
        return "", 0, []
    texts: list[str] = []
    images = 0
    hidden: list[JSONDict] = []
    for block in content:
        if isinstance(block, str):
            texts.append(block)
            continue
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            text = _str(block.get("text"))
            if text:
                texts.append(text)
        elif kind == "image":
            images += 1
            if include_hidden:
                hidden.append({"type": "image", "mime_type": _str(block.get("mimeType"))})
        elif kind == "thinking":
            if include_hidden:
                hidden.append({"type": "thinking", "text": _str(block.get("thinking")) or ""})
        elif kind == "toolCall":
            if include_hidden:
                hidden.append(
                    {
                        "type": "toolCall",
                        "id": _str(block.get("id")),
                        "name": _str(block.get("name")),
                        "arguments": block.get("arguments"),
                    }
                )
        elif include_hidden:
            hidden.append({"type": str(kind), "block": block})
    return "\n".join(texts), images, hidden


def _hidden_text(content: Any) -> tuple[str, list[JSONDict]]:
    """The text of a tool result's content and its image blocks (for ``metadata.hidden``)."""
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    images: list[JSONDict] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    texts.append(block["text"])
                elif block.get("type") == "image":
                    images.append({"type": "image", "mime_type": _str(block.get("mimeType"))})
    return "\n".join(texts), images


def _fill_custom(
    entry: _Entry, source: JSONDict, include_hidden: bool, role_label: str | None
) -> None:
    text, images, hidden = _blocks(source.get("content"), include_hidden)
    display = source.get("display")
    visible = display is not False
    entry.role = "system"
    entry.pi_role = role_label
    entry.text = text if visible else ""
    custom_type = _str(source.get("customType"))
    if custom_type:
        entry.meta["custom_type"] = custom_type
    if not visible:
        entry.meta["display"] = False
    if images:
        entry.meta["images"] = images
    if include_hidden:
        if not visible and text:
            hidden.insert(0, {"type": "custom", "text": text})
        entry.hidden = hidden


def _fill_message(entry: _Entry, message: Any, include_hidden: bool) -> None:
    if not isinstance(message, dict):
        return
    role = message.get("role")
    stamp = _epoch(message.get("timestamp"))
    if stamp is not None:
        entry.timestamp = stamp
    if role == "user":
        text, images, hidden = _blocks(message.get("content"), include_hidden)
        entry.role, entry.pi_role, entry.text = "user", "user", text
        if images:
            entry.meta["images"] = images
        if include_hidden:
            entry.hidden = hidden
    elif role == "assistant":
        text, _images, hidden = _blocks(message.get("content"), include_hidden)
        entry.role, entry.pi_role, entry.text = "assistant", "assistant", text
        for key, meta_key in (
            ("model", "model"),
            ("provider", "provider"),
            ("stopReason", "stop_reason"),
            ("errorMessage", "error"),
        ):
            value = _str(message.get(key))
            if value:
                entry.meta[meta_key] = value
        if include_hidden:
            entry.hidden = hidden
    elif role == "toolResult":
        entry.role, entry.pi_role = "tool", "toolResult"
        entry.tool_call_id = _str(message.get("toolCallId"))
        name = _str(message.get("toolName"))
        if name:
            entry.meta["name"] = name
        if message.get("isError") is True:
            entry.meta["is_error"] = True
        if include_hidden:
            output, image_blocks = _hidden_text(message.get("content"))
            entry.hidden = [
                {
                    "type": "toolResult",
                    "tool_name": name,
                    "text": output,
                    "is_error": message.get("isError") is True,
                },
                *image_blocks,
            ]
    elif role == "bashExecution":
        entry.role, entry.pi_role = "tool", "bashExecution"
        if include_hidden:
            entry.hidden = [
                {
                    "type": "bash",
                    "command": _str(message.get("command")) or "",
                    "output": _str(message.get("output")) or "",
                    "exit_code": message.get("exitCode"),
                    "cancelled": message.get("cancelled") is True,
                    "truncated": message.get("truncated") is True,
                }
            ]
    elif role in ("custom", "hookMessage"):
        _fill_custom(entry, message, include_hidden, str(role))
    elif role == "branchSummary":
        entry.role, entry.pi_role = "system", "branchSummary"
        entry.text = _str(message.get("summary")) or ""
        entry.meta["branch_summary"] = True
    # Any other role is not a turn: the entry stays in the tree without a message.


def _normalize(obj: JSONDict, index: int, prev_id: str | None, include_hidden: bool) -> _Entry:
    """One entry; ``prev_id`` is the parent of an entry without ``parentId`` (v1 files)."""
    kind = obj.get("type")
    etype = kind if isinstance(kind, str) else ""
    raw_id = obj.get("id")
    eid = raw_id if isinstance(raw_id, str) and raw_id else f"entry-{index}"
    if "parentId" in obj:
        raw_parent = obj.get("parentId")
        parent = raw_parent if isinstance(raw_parent, str) and raw_parent else None
    else:
        parent = prev_id
    entry = _Entry(index, eid, parent, etype, _epoch(obj.get("timestamp")))
    if etype == "message":
        _fill_message(entry, obj.get("message"), include_hidden)
    elif etype == "custom_message":
        _fill_custom(entry, obj, include_hidden, None)
    elif etype == "branch_summary":
        entry.role = "system"
        entry.text = _str(obj.get("summary")) or ""
        entry.meta["branch_summary"] = True
        from_id = _str(obj.get("fromId"))
        if from_id:
            entry.meta["from_id"] = from_id
    elif etype == "compaction":
        entry.info["summary"] = _str(obj.get("summary")) or ""
        entry.info["first_kept_id"] = _str(obj.get("firstKeptEntryId"))
        first_index = obj.get("firstKeptEntryIndex")
        if isinstance(first_index, int) and not isinstance(first_index, bool):
            entry.info["first_kept_index"] = first_index
        tokens = obj.get("tokensBefore")
        if isinstance(tokens, (int, float)) and not isinstance(tokens, bool):
            entry.info["tokens_before"] = int(tokens)
    elif etype == "session_info":
        if "name" in obj:
            name = obj.get("name")
            entry.info["name"] = name.strip() if isinstance(name, str) else ""
    elif etype == "label":
        entry.info["target_id"] = _str(obj.get("targetId"))
        entry.info["label"] = _str(obj.get("label"))
    elif etype == "model_change":
        entry.info["provider"] = _str(obj.get("provider"))
        entry.info["model"] = _str(obj.get("modelId"))
    elif etype == "thinking_level_change":
        entry.info["thinking_level"] = _str(obj.get("thinkingLevel"))
    return entry


# ---------------------------------------------------------------------- parse state


@dataclass
class PiParseState:
    """Everything needed to continue a parse where it stopped (no raw JSON is kept).

    ``end_offset`` is the byte offset after the last complete line; ``head``/``tail`` are the
    first bytes of the file and the bytes just before ``end_offset``, compared on resume to
    make sure the file only grew (a rewritten or replaced file is read again from the start).
    """

    include_hidden: bool = False
    end_offset: int = 0
    header: JSONDict | None = None
    entries: list[_Entry] = field(default_factory=list)
    skipped_lines: int = 0
    unknown_entries: int = 0
    value_count: int = 0
    last_id: str | None = None
    head: bytes = b""
    tail: bytes = b""
    device: int = 0
    inode: int = 0

    @property
    def entry_count(self) -> int:
        return len(self.entries)

    def dump(self) -> bytes:
        """This state as compact bytes (compressed JSON) for :meth:`load` in a later run."""
        payload: JSONDict = {
            "v": STATE_FORMAT,
            "include_hidden": self.include_hidden,
            "end_offset": self.end_offset,
            "header": self.header,
            "skipped_lines": self.skipped_lines,
            "unknown_entries": self.unknown_entries,
            "value_count": self.value_count,
            "last_id": self.last_id,
            "head": base64.b64encode(self.head).decode("ascii"),
            "tail": base64.b64encode(self.tail).decode("ascii"),
            "device": self.device,
            "inode": self.inode,
            "entries": [
                [
                    e.index,
                    e.id,
                    e.parent,
                    e.type,
                    e.timestamp,
                    e.role,
                    e.pi_role,
                    e.text,
                    e.tool_call_id,
                    e.meta,
                    e.hidden,
                    e.info,
                ]
                for e in self.entries
            ],
        }
        try:
            raw = orjson.dumps(payload)
        except (TypeError, orjson.JSONEncodeError):  # lone surrogates, deep nesting, NaN
            raw = json_utf8(dumps_json(payload))
        return zlib.compress(raw, 1)

    @classmethod
    def load(cls, raw: bytes) -> PiParseState:
        """A state saved by :meth:`dump` (``ValueError`` when it is not one, or is of
        another format version)."""
        try:
            obj = loads(zlib.decompress(raw))
            if not isinstance(obj, dict) or obj.get("v") != STATE_FORMAT:
                raise ValueError("not a Pi parse state of this version")
            entries = [_Entry(*fields) for fields in obj["entries"]]
            header = obj["header"]
            return cls(
                include_hidden=bool(obj["include_hidden"]),
                end_offset=int(obj["end_offset"]),
                header=header if isinstance(header, dict) else None,
                entries=entries,
                skipped_lines=int(obj["skipped_lines"]),
                unknown_entries=int(obj["unknown_entries"]),
                value_count=int(obj["value_count"]),
                last_id=obj["last_id"],
                head=base64.b64decode(obj["head"]),
                tail=base64.b64decode(obj["tail"]),
                device=int(obj["device"]),
                inode=int(obj["inode"]),
            )
        except (zlib.error, KeyError, TypeError, IndexError, RecursionError) as exc:
            raise ValueError(f"not a usable Pi parse state: {exc}") from None


def _can_resume(state: PiParseState, fh: IO[bytes], st: os.stat_result, hidden: bool) -> bool:
    if state.include_hidden != hidden:
        return False
    if (st.st_dev, st.st_ino) != (state.device, state.inode):
        return False
    if st.st_size < state.end_offset:
        return False
    if state.head:
        fh.seek(0)
        if fh.read(len(state.head)) != state.head:
            return False
    if state.tail:
        fh.seek(state.end_offset - len(state.tail))
        if fh.read(len(state.tail)) != state.tail:
            return False
    return True


def _ingest(state: PiParseState, raw: bytes) -> bool:
    """Add one complete line to ``state``; True when it added the header or an entry."""
    line = raw.strip()
    if not line:
        return False
    try:
        obj = loads(line)
    except (ValueError, RecursionError):
        state.skipped_lines += 1
        return False
    index = state.value_count
    state.value_count += 1
    if not isinstance(obj, dict):
        state.skipped_lines += 1
        return False
    if obj.get("type") == "session" and state.header is None and not state.entries:
        state.header = obj
        return True
    entry = _normalize(obj, index, state.last_id, state.include_hidden)
    if entry.type not in KNOWN_TYPES:
        state.unknown_entries += 1
    state.entries.append(entry)
    state.last_id = entry.id
    return True


@dataclass
class _Tail:
    """What the unterminated last line contributed (never part of the parse state)."""

    header: JSONDict | None = None
    entry: _Entry | None = None
    partial: bool = False


def _read_tail(state: PiParseState, fragment: bytes) -> _Tail:
    text = fragment.strip()
    if not text:
        return _Tail()
    try:
        obj = loads(text)
    except (ValueError, RecursionError):
        return _Tail(partial=True)
    if not isinstance(obj, dict):
        return _Tail(partial=True)
    if obj.get("type") == "session" and state.header is None and not state.entries:
        return _Tail(header=obj)
    return _Tail(entry=_normalize(obj, state.value_count, state.last_id, state.include_hidden))


def _consume(fh: IO[bytes], state: PiParseState) -> tuple[int, _Tail]:
    """Read complete lines from ``state.end_offset`` on; return (entries added, tail)."""
    start = state.end_offset
    fh.seek(start)
    pos = start
    added = 0
    fragment = b""
    for raw in fh:
        if not raw.endswith(b"\n"):
            fragment = raw
            break
        pos += len(raw)
        if _ingest(state, raw):
            added += 1
    state.end_offset = pos
    if pos > start:
        lo = max(0, pos - FINGERPRINT_BYTES)
        fh.seek(lo)
        state.tail = fh.read(pos - lo)
    if len(state.head) < FINGERPRINT_BYTES and pos > len(state.head):
        fh.seek(0)
        state.head = fh.read(min(FINGERPRINT_BYTES, pos))
    return added, _read_tail(state, fragment)


# ---------------------------------------------------------------------- the session


@dataclass
class PiBranch:
    """One leaf of the session tree (the active branch or another one)."""

    leaf_id: str
    active: bool
    fork_id: str | None
    entry_count: int
    message_count: int
    preview: str
    updated_at: str | None

    def to_json(self) -> JSONDict:
        return {
            "leaf_id": self.leaf_id,
            "active": self.active,
            "fork_id": self.fork_id,
            "entry_count": self.entry_count,
            "message_count": self.message_count,
            "preview": self.preview,
            "updated_at": self.updated_at,
        }


@dataclass
class PiSession:
    """A Pi file read as one session: ``data`` is the PraisonAI-shaped dict of one branch."""

    path: Path
    data: JSONDict
    header: JSONDict | None
    leaf_id: str | None
    active_leaf_id: str | None
    branches: list[PiBranch]
    skipped_lines: int
    partial_tail: bool
    unknown_entries: int
    end_offset: int
    state: PiParseState
    resumed: bool = False
    new_entries: int = 0
    mtime: float = 0.0
    tail: _Tail = field(default_factory=_Tail, repr=False)

    @property
    def session_id(self) -> str:
        return str(self.data.get("session_id", ""))

    @property
    def cwd(self) -> str | None:
        value = self.data["metadata"].get("cwd")
        return value if isinstance(value, str) else None

    @property
    def title(self) -> str:
        return recall.session_title(self.data)

    @property
    def is_active_branch(self) -> bool:
        return self.leaf_id == self.active_leaf_id

    def projection(self) -> list[JSONDict]:
        """The archived+active projection (archived entries flagged ``archived: true``)."""
        return recall.project(self.data)

    def to_session_data(self) -> SessionData:
        session = SessionData.from_dict(self.data)
        session.source_kind = PI_SOURCE
        return session

    def branch(self, leaf_id: str) -> PiSession:
        """The same file read along another branch (``KeyError`` for an unknown entry id)."""
        return _assemble(
            self.path,
            self.state,
            self.tail,
            leaf_id=leaf_id,
            resumed=self.resumed,
            new_entries=self.new_entries,
            mtime=self.mtime,
        )


def read_pi_session(
    path: str | os.PathLike[str],
    *,
    include_hidden: bool = False,
    start_offset: int = 0,
    prior: PiParseState | None = None,
) -> PiSession:
    """Read a Pi session file (or continue reading it) without writing anything.

    With ``prior`` (the ``state`` of an earlier read) only the bytes after
    ``prior.end_offset`` are parsed, provided the file only grew; otherwise (another file at
    that path, a shorter file, changed bytes, a different ``include_hidden``) it is read from
    the start and ``resumed`` is False. ``start_offset`` without ``prior`` reads the lines from
    that offset on (a line boundary) as if they were the whole file. Raises ``OSError`` when
    the file cannot be read and ``ValueError`` when ``start_offset`` contradicts ``prior``.
    """
    if start_offset < 0:
        raise ValueError(f"start_offset must not be negative (got {start_offset})")
    if prior is not None and start_offset not in (0, prior.end_offset):
        raise ValueError(
            f"start_offset {start_offset} does not match the parse state's end_offset "
            f"{prior.end_offset}"
        )
    file_path = Path(path)
    with open(file_path, "rb") as fh:
        st = os.fstat(fh.fileno())
        resumed = False
        if prior is not None and _can_resume(prior, fh, st, include_hidden):
            state = replace(prior, entries=list(prior.entries))
            resumed = True
        else:
            state = PiParseState(
                include_hidden=include_hidden,
                end_offset=start_offset if prior is None else 0,
                device=st.st_dev,
                inode=st.st_ino,
            )
        added, tail = _consume(fh, state)
    return _assemble(
        file_path, state, tail, leaf_id=None, resumed=resumed, new_entries=added, mtime=st.st_mtime
    )


def read_pi_branch(
    path: str | os.PathLike[str], leaf_id: str, *, include_hidden: bool = False
) -> PiSession:
    """The transcript of the branch ending at entry ``leaf_id`` (``KeyError`` if unknown)."""
    return read_pi_session(path, include_hidden=include_hidden).branch(leaf_id)


# ---------------------------------------------------------------------- assembling


class _Tree:
    def __init__(self, entries: Sequence[_Entry]) -> None:
        self.by_id: dict[str, _Entry] = {}
        parents: set[str] = set()
        for entry in entries:
            self.by_id[entry.id] = entry
            if entry.parent is not None:
                parents.add(entry.parent)
        seen: set[str] = set()
        leaves: list[_Entry] = []
        for entry in reversed(entries):
            if entry.id not in parents and entry.id not in seen:
                seen.add(entry.id)
                leaves.append(self.by_id[entry.id])
        leaves.reverse()
        self.leaves = leaves

    def path_to(self, leaf_id: str) -> list[_Entry]:
        path: list[_Entry] = []
        seen: set[str] = set()
        current = self.by_id.get(leaf_id)
        while current is not None and current.id not in seen:
            seen.add(current.id)
            path.append(current)
            current = self.by_id.get(current.parent) if current.parent is not None else None
        path.reverse()
        return path


def _first_kept_position(
    path: Sequence[_Entry], comp_pos: int, ids_by_index: dict[int, str]
) -> int:
    """Where the kept turns of the compaction at ``path[comp_pos]`` start (``comp_pos``: none)."""
    comp = path[comp_pos]
    first_id = comp.info.get("first_kept_id")
    if not first_id:
        first_index = comp.info.get("first_kept_index")
        if isinstance(first_index, int):
            first_id = ids_by_index.get(first_index)
    if first_id:
        for pos in range(comp_pos):
            if path[pos].id == first_id:
                return pos
    return comp_pos


def _is_turn(entry: _Entry) -> bool:
    return entry.role is not None


def _message(entry: _Entry, labels: dict[str, str], include_hidden: bool) -> JSONDict:
    meta: JSONDict = {"pi_id": entry.id, "pi_type": entry.type}
    if entry.pi_role:
        meta["pi_role"] = entry.pi_role
    meta.update(entry.meta)
    label = labels.get(entry.id)
    if label:
        meta["label"] = label
    if include_hidden and entry.hidden:
        meta["hidden"] = list(entry.hidden)
    msg: JSONDict = {"role": entry.role, "content": entry.text}
    if entry.timestamp is not None:
        msg["timestamp"] = entry.timestamp
    msg["metadata"] = meta
    if entry.tool_call_id is not None:
        msg["tool_call_id"] = entry.tool_call_id
    return msg


def _summary(entry: _Entry, compacted: int, *, superseded: bool) -> JSONDict:
    meta: JSONDict = {
        "compaction": True,
        "compacted_count": compacted,
        "pi": True,
        "pi_id": entry.id,
        "pi_type": "compaction",
    }
    tokens = entry.info.get("tokens_before")
    if isinstance(tokens, int):
        meta["tokens_before"] = tokens
    if superseded:
        meta["superseded"] = True
    msg: JSONDict = {
        "role": "system",
        "content": f"{SUMMARY_PREFIX}\n{entry.info.get('summary') or ''}",
    }
    if entry.timestamp is not None:
        msg["timestamp"] = entry.timestamp
    msg["metadata"] = meta
    return msg


def _messages(
    entries: Sequence[_Entry],
    path: Sequence[_Entry],
    labels: dict[str, str],
    include_hidden: bool,
    ids_by_index: dict[int, str],
) -> list[JSONDict]:
    out: list[JSONDict] = []
    for entry in entries:
        if entry.type == "compaction":
            pos = next(i for i, e in enumerate(path) if e is entry)
            kept = _first_kept_position(path, pos, ids_by_index)
            count = sum(1 for e in path[:kept] if _is_turn(e))
            out.append(_summary(entry, count, superseded=True))
        elif _is_turn(entry):
            out.append(_message(entry, labels, include_hidden))
    return out


def _labels(entries: Sequence[_Entry]) -> dict[str, str]:
    labels: dict[str, str] = {}
    for entry in entries:
        if entry.type != "label":
            continue
        target = entry.info.get("target_id")
        if not isinstance(target, str):
            continue
        label = entry.info.get("label")
        if isinstance(label, str) and label.strip():
            labels[target] = label.strip()
        else:
            labels.pop(target, None)
    return labels


def _title(entries: Sequence[_Entry]) -> str | None:
    title: str | None = None
    for entry in entries:
        if entry.type == "session_info" and "name" in entry.info:
            title = entry.info["name"] or None
    return title


def _preview(entries: Sequence[_Entry]) -> str:
    for role in ("user", None):
        for entry in entries:
            if entry.role is not None and (role is None or entry.role == role):
                text = recall.fold_prefix(entry.text, PREVIEW_CHARS)
                if text:
                    return text
    return ""


def _branches(tree: _Tree, active: Sequence[_Entry], active_leaf: str | None) -> list[PiBranch]:
    out: list[PiBranch] = []
    active_ids = {e.id for e in active}
    if active_leaf is not None:
        out.append(
            PiBranch(
                leaf_id=active_leaf,
                active=True,
                fork_id=None,
                entry_count=len(active),
                message_count=sum(1 for e in active if _is_turn(e)),
                preview=_preview(active),
                updated_at=_iso(max((e.timestamp for e in active if e.timestamp), default=None)),
            )
        )
    for leaf in tree.leaves:
        if leaf.id == active_leaf or leaf.id in active_ids:
            continue
        own: list[_Entry] = []
        seen: set[str] = set()
        current: _Entry | None = leaf
        fork: str | None = None
        depth = 0
        while current is not None and current.id not in seen:
            if current.id in active_ids:
                fork = current.id
                break
            seen.add(current.id)
            own.append(current)
            current = tree.by_id.get(current.parent) if current.parent is not None else None
        own.reverse()
        if fork is not None:
            depth = next(i for i, e in enumerate(active) if e.id == fork) + 1
        out.append(
            PiBranch(
                leaf_id=leaf.id,
                active=False,
                fork_id=fork,
                entry_count=depth + len(own),
                message_count=sum(1 for e in own if _is_turn(e)),
                preview=_preview(own),
                updated_at=_iso(max((e.timestamp for e in own if e.timestamp), default=None)),
            )
        )
    return out


def _assemble(
    path: Path,
    state: PiParseState,
    tail: _Tail,
    *,
    leaf_id: str | None,
    resumed: bool,
    new_entries: int,
    mtime: float,
) -> PiSession:
    header = state.header if state.header is not None else tail.header
    entries: list[_Entry] = list(state.entries)
    if tail.entry is not None:
        entries.append(tail.entry)
    tree = _Tree(entries)
    active_leaf = entries[-1].id if entries else None
    if leaf_id is not None and leaf_id not in tree.by_id:
        raise KeyError(leaf_id)
    leaf = leaf_id if leaf_id is not None else active_leaf
    path_entries = tree.path_to(leaf) if leaf is not None else []
    active_path = (
        path_entries
        if leaf == active_leaf
        else (tree.path_to(active_leaf) if active_leaf is not None else [])
    )
    ids_by_index = {e.index: e.id for e in entries}
    labels = _labels(entries)
    hidden = state.include_hidden

    comp_pos = next(
        (i for i in range(len(path_entries) - 1, -1, -1) if path_entries[i].type == "compaction"),
        None,
    )
    last_compaction: JSONDict | None = None
    if comp_pos is None:
        archived: list[JSONDict] = []
        active = _messages(path_entries, path_entries, labels, hidden, ids_by_index)
    else:
        comp = path_entries[comp_pos]
        kept = _first_kept_position(path_entries, comp_pos, ids_by_index)
        archived = _messages(path_entries[:kept], path_entries, labels, hidden, ids_by_index)
        compacted = sum(1 for e in path_entries[:kept] if _is_turn(e))
        active = [
            _summary(comp, compacted, superseded=False),
            *_messages(path_entries[kept:comp_pos], path_entries, labels, hidden, ids_by_index),
            *_messages(path_entries[comp_pos + 1 :], path_entries, labels, hidden, ids_by_index),
        ]
        last_compaction = {
            "summary": comp.info.get("summary") or "",
            "message_index": 0,
            "role": "system",
            "tokens_before": comp.info.get("tokens_before") or 0,
            "tokens_after": 0,
            "timestamp": comp.timestamp or 0.0,
            "metadata": {"pi": True, "pi_id": comp.id, "compacted_count": compacted},
        }

    hdr = header or {}
    raw_id = hdr.get("id")
    session_id = raw_id if isinstance(raw_id, str) and raw_id else path.stem
    cwd = _str(hdr.get("cwd"))
    # The header's time, unless an entry is older (a forked file gets a new header).
    stamps = [t for t in (_epoch(hdr.get("timestamp")), *(e.timestamp for e in entries)) if t]
    created_ts = min(stamps) if stamps else mtime
    activity = [
        e.timestamp for e in entries if e.role in ("user", "assistant") and e.timestamp is not None
    ]
    updated_ts = max(activity) if activity else created_ts

    provider = _str(hdr.get("provider"))
    model = _str(hdr.get("modelId"))
    thinking = _str(hdr.get("thinkingLevel"))
    for entry in path_entries:
        if entry.type == "model_change":
            provider = entry.info.get("provider") or provider
            model = entry.info.get("model") or model
        elif entry.type == "thinking_level_change":
            thinking = entry.info.get("thinking_level") or thinking
        elif entry.role == "assistant" and entry.meta.get("model"):
            model = entry.meta.get("model")
            provider = entry.meta.get("provider") or provider

    version = hdr.get("version")
    meta: JSONDict = {"source": PI_SOURCE}
    title = _title(entries)
    if title:
        meta["title"] = title
    meta["cwd"] = cwd
    meta["project"] = cwd
    meta["pi_version"] = (
        version if isinstance(version, int) and not isinstance(version, bool) else 1
    )
    meta["pi_path"] = str(path)
    meta["pi_leaf_id"] = leaf
    meta["pi_active_leaf_id"] = active_leaf
    meta["pi_active_branch"] = leaf == active_leaf
    meta["pi_branch_count"] = max(1, len(tree.leaves)) if entries else 0
    if model:
        meta["model"] = model
    if provider:
        meta["provider"] = provider
    if thinking:
        meta["thinking_level"] = thinking
    parent = _str(hdr.get("parentSession")) or _str(hdr.get("branchedFrom"))
    if parent:
        meta["parent_session"] = parent

    data: JSONDict = {
        "session_id": session_id,
        "messages": active,
        "created_at": _iso(created_ts) or "",
        "updated_at": _iso(updated_ts) or "",
        "agent_name": None,
        "user_id": None,
        "metadata": meta,
        "archived_messages": archived,
    }
    if last_compaction is not None:
        data["last_compaction"] = last_compaction
    return PiSession(
        path=path,
        data=data,
        header=header,
        leaf_id=leaf,
        active_leaf_id=active_leaf,
        branches=_branches(tree, active_path, active_leaf),
        skipped_lines=state.skipped_lines + (1 if tail.partial else 0),
        partial_tail=tail.partial,
        unknown_entries=state.unknown_entries
        + (1 if tail.entry is not None and tail.entry.type not in KNOWN_TYPES else 0),
        end_offset=state.end_offset,
        state=state,
        resumed=resumed,
        new_entries=new_entries,
        mtime=mtime,
        tail=tail,
    )


# ---------------------------------------------------------------------- automation


def pi_is_automated(data: JSONDict) -> bool:
    """Pi's automated rule: tagged, or more than 60 *user* turns an hour (>= 4 of them).

    The shared rule counts every message, which any coding-agent session with tool calls
    exceeds; counting the user's turns keeps interactive sessions undemoted.
    """
    if recall.tagged_automated(data):
        return True
    users = [m for m in recall.project(data) if m.get("role") == "user"]
    rate = recall.message_rate(users)
    return rate is not None and rate > USER_TURN_RATE_THRESHOLD


def settle_automation(hit: SessionHit, data: JSONDict) -> None:
    """Undo the shared rule's demotion of ``hit`` when :func:`pi_is_automated` says no."""
    if not hit.automated or pi_is_automated(data):
        return
    raw = hit.explain.get("raw_score")
    hit.score = (
        float(raw) if isinstance(raw, (int, float)) else hit.score / recall.AUTOMATED_DEMOTION
    )
    hit.automated = False
    hit.explain["demotion"] = 1.0
    hit.explain["automation_rule"] = "pi: user turns per hour"


# ---------------------------------------------------------------------- the store

_Ident = tuple[int, int, int, int]


def _ident(st: os.stat_result) -> _Ident:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _header_id(path: Path) -> str | None:
    """The session id of a Pi file (header id, else the stem); None when it is not one."""
    try:
        with open(path, "rb") as fh:
            first = fh.readline(HEADER_LINE_LIMIT)
    except OSError:
        return None
    try:
        obj = loads(first.strip()) if first.strip() else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict) or obj.get("type") != "session":
        return None
    raw = obj.get("id")
    return raw if isinstance(raw, str) and raw else path.stem


class PiStore(ReadOnlyWrites):
    """A read-only store over ``root/**/*.jsonl`` with the recall API of the other stores.

    Parsed sessions are cached in memory by file identity; a file that only grew is parsed
    from where the cached read stopped. Nothing is ever written, locked or created: every
    write method raises :class:`~.readonly.ReadOnlyStore`.
    """

    source_kind = PI_SOURCE

    def __init__(
        self, root: str | os.PathLike[str] | None = None, *, cache_size: int = DEFAULT_CACHE_SIZE
    ) -> None:
        self.root = Path(root).expanduser() if root is not None else default_pi_dir()
        self.cache_size = max(1, cache_size)
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, bool], tuple[_Ident, PiSession]] = OrderedDict()
        self._ids: dict[_Ident, str | None] = {}
        self._paths: dict[str, Path] = {}

    @property
    def label(self) -> str:
        return f"{PI_SOURCE}:{self.root}"

    # ------------------------------------------------------------------ files

    def session_files(self) -> list[tuple[Path, os.stat_result]]:
        """Every ``*.jsonl`` regular file under the root (symlinked dirs are not followed)."""
        out: list[tuple[Path, os.stat_result]] = []
        if not self.root.is_dir():
            return out
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(".jsonl"):
                    continue
                path = Path(dirpath) / name
                try:
                    st = path.stat()
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    out.append((path, st))
        return out

    def _session_id_of(self, path: Path, st: os.stat_result) -> str | None:
        key = _ident(st)
        with self._lock:
            if key in self._ids:
                return self._ids[key]
        sid = _header_id(path)
        with self._lock:
            self._ids[key] = sid
        return sid

    def _scan(self) -> list[tuple[str, Path, os.stat_result]]:
        """(session id, path, stat) of every Pi session file; the first file of an id wins."""
        found: list[tuple[str, Path, os.stat_result]] = []
        seen: set[str] = set()
        for path, st in self.session_files():
            sid = self._session_id_of(path, st)
            if sid is None or sid in seen:
                continue
            seen.add(sid)
            found.append((sid, path, st))
        with self._lock:
            self._paths = {sid: path for sid, path, _st in found}
            live = {_ident(st) for _sid, _path, st in found}
            for key in [k for k in self._ids if k not in live]:
                del self._ids[key]
        return found

    def remember_path(self, session_id: str, path: Path) -> None:
        """Note where ``session_id`` lives (e.g. from an index), sparing a scan; the file
        is still checked when it is used."""
        with self._lock:
            self._paths[session_id] = path

    def session_path(self, session_id: str) -> Path | None:
        """The file holding ``session_id`` (None when there is none)."""
        with self._lock:
            path = self._paths.get(session_id)
        if path is not None:
            try:
                st = path.stat()
            except OSError:
                st = None
            if st is not None and self._session_id_of(path, st) == session_id:
                return path
        for sid, found, _st in self._scan():
            if sid == session_id:
                return found
        return None

    def session_exists(self, session_id: str) -> bool:
        return self.session_path(session_id) is not None

    # ------------------------------------------------------------------ parsing (cached)

    def load(self, path: Path, *, include_hidden: bool = False) -> PiSession | None:
        """The parsed file (from the cache when unchanged); None when it cannot be read."""
        try:
            st = path.stat()
        except OSError:
            return None
        key = (str(path), include_hidden)
        ident = _ident(st)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
        if cached is not None and cached[0] == ident:
            return cached[1]
        prior = cached[1].state if cached is not None else None
        try:
            session = read_pi_session(path, include_hidden=include_hidden, prior=prior)
        except OSError as exc:
            log.debug("cannot read Pi session %s: %s", path, exc)
            return None
        # Keyed by the identity seen before the read: bytes appended meanwhile are picked
        # up by the next call (a resumed read), never hidden behind a newer identity.
        with self._lock:
            self._cache[key] = (ident, session)
            self._cache.move_to_end(key)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return session

    def read(self, session_id: str, *, include_hidden: bool = False) -> PiSession | None:
        path = self.session_path(session_id)
        return None if path is None else self.load(path, include_hidden=include_hidden)

    def iter_sessions(
        self, *, project: str | os.PathLike[str] | None = None
    ) -> Iterator[tuple[Path, os.stat_result, PiSession]]:
        """Every readable session (optionally only those whose cwd is in ``project``)."""
        for _sid, path, st in self._scan():
            session = self.load(path)
            if session is None:
                continue
            if project is not None and not cwd_matches(session.cwd, project):
                continue
            yield path, st, session

    # ------------------------------------------------------------------ recall protocol

    def summaries(self, *, project: str | os.PathLike[str] | None = None) -> list[SessionSummary]:
        out: list[SessionSummary] = []
        for _path, st, session in self.iter_sessions(project=project):
            summary = recall.summary_of(
                session.data,
                size=st.st_size,
                source=PI_SOURCE,
                store=self.label,
                project_dir=session.cwd,
            )
            summary.automated = pi_is_automated(session.data)
            out.append(summary)
        return out

    def recent(
        self, *, limit: int = 10, project: str | os.PathLike[str] | None = None
    ) -> list[SessionSummary]:
        return recall.sort_recent(self.summaries(project=project), limit)

    def projects(self) -> list[tuple[str, int]]:
        """Every cwd with its number of sessions, most sessions first."""
        counts: dict[str, int] = {}
        for _path, _st, session in self.iter_sessions():
            if session.cwd:
                counts[session.cwd] = counts.get(session.cwd, 0) + 1
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    def search_candidates(
        self,
        query: str,
        *,
        window: int = 5,
        project: str | os.PathLike[str] | None = None,
        language: bool = False,
    ) -> list[recall.Candidate]:
        parsed = recall.ClassicQuery.parse(query, language=language)
        if not parsed.searchable:
            return []
        out: list[recall.Candidate] = []
        for path, _st, session in self.iter_sessions(project=project):
            cand = recall.classic_candidate(
                session.data,
                parsed,
                window=window,
                source=PI_SOURCE,
                store=self.label,
                file_name=path.name,
            )
            if cand is not None:
                settle_automation(cand.hit, session.data)
                cand.hit.project = session.cwd
                out.append(cand)
        return out

    def search(
        self,
        query: str,
        *,
        limit: int = 5,
        window: int = 5,
        project: str | os.PathLike[str] | None = None,
    ) -> list[SessionHit]:
        if limit <= 0 or not (query or "").strip():
            return []
        return recall.rank(self.search_candidates(query, window=window, project=project), limit)

    def get_session(self, session_id: str) -> SessionData:
        session = self.read(session_id)
        if session is None:
            empty = SessionData(session_id=session_id)
            empty.source_kind = PI_SOURCE
            return empty
        return session.to_session_data()

    def window(
        self, session_id: str, around_message_id: Any = None, *, window: int = 5
    ) -> list[JSONDict]:
        session = self.read(session_id)
        if session is None:
            return []
        messages = recall.project(session.data)
        if not messages:
            return []
        anchor = recall.parse_anchor(around_message_id, len(messages))
        return recall.window_slice(messages, anchor, window)

    def projection(
        self, session_id: str, *, include_hidden: bool = False, leaf_id: str | None = None
    ) -> list[JSONDict]:
        """The whole projection in the public message shape plus metadata (``KeyError``).

        ``include_hidden`` adds ``metadata.hidden`` (thinking, tool calls, tool results, bash)
        without changing the indices; ``leaf_id`` reads another branch.
        """
        session = self.read(session_id, include_hidden=include_hidden)
        if session is None:
            raise KeyError(session_id)
        if leaf_id is not None and leaf_id != session.leaf_id:
            session = session.branch(leaf_id)
        return recall.full_view(recall.project(session.data))

    def branches(self, session_id: str) -> list[PiBranch]:
        """The active branch first, then every other leaf (``KeyError`` when missing)."""
        session = self.read(session_id)
        if session is None:
            raise KeyError(session_id)
        return list(session.branches)

    def to_json(self) -> JSONDict:
        return {"source": PI_SOURCE, "root": str(self.root), "label": self.label}


# ---------------------------------------------------------------------- building Pi files


def pi_jsonl(data: JSONDict, *, cwd: str = "/work") -> bytes:
    """A PraisonAI-shaped session dict as the bytes of a Pi v3 session file.

    For benchmarks and tests that need Pi stores of a known content (the browser itself never
    writes Pi files). User and assistant turns become ``message`` entries (assistant text as a
    ``text`` block); other roles are left out. When the session has archived turns, a
    ``compaction`` entry follows them all, keeping the first active turn, so reading the file
    back gives the same archived/active split. ``session_info`` carries the title.
    """
    sid = str(data.get("session_id") or "session")
    created = _epoch(data.get("created_at")) or 0.0
    lines: list[JSONDict] = [
        {
            "type": "session",
            "version": 3,
            "id": sid,
            "timestamp": _iso_ms(created),
            "cwd": cwd,
        }
    ]
    parent: str | None = None
    counter = 0

    def add(entry: JSONDict, ts: float) -> str:
        nonlocal parent, counter
        counter += 1
        eid = f"e{counter:07d}"
        lines.append({"id": eid, "parentId": parent, "timestamp": _iso_ms(ts), **entry})
        parent = eid
        return eid

    meta = data.get("metadata")
    title = meta.get("title") if isinstance(meta, dict) else None
    if isinstance(title, str) and title:
        add({"type": "session_info", "name": title}, created)

    def turns(key: str) -> list[tuple[str, str, float]]:
        out: list[tuple[str, str, float]] = []
        items = data.get(key)
        for msg in items if isinstance(items, list) else []:
            if not isinstance(msg, dict) or msg.get("role") not in ("user", "assistant"):
                continue
            content = msg.get("content")
            text = content if isinstance(content, str) else ""
            ts = msg.get("timestamp")
            stamp = float(ts) if isinstance(ts, (int, float)) and not isinstance(ts, bool) else 0.0
            out.append((str(msg["role"]), text, stamp or created))
        return out

    def message(role: str, text: str, ts: float) -> str:
        content: Any = text if role == "user" else [{"type": "text", "text": text}]
        body = {"role": role, "content": content, "timestamp": int(ts * 1000)}
        return add({"type": "message", "message": body}, ts)

    archived = turns("archived_messages")
    active = turns("messages")
    for role, text, ts in archived:
        message(role, text, ts)
    first_kept: str | None = None
    for role, text, ts in active:
        eid = message(role, text, ts)
        first_kept = first_kept or eid
    if archived:
        last_ts = (active or archived)[-1][2]
        add(
            {
                "type": "compaction",
                "summary": f"{len(archived)} earlier turns",
                "firstKeptEntryId": first_kept,
                "tokensBefore": 0,
            },
            last_ts,
        )
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def _iso_ms(ts: float) -> str:
    try:
        return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    except (OverflowError, OSError, ValueError):
        return "1970-01-01T00:00:00.000Z"
