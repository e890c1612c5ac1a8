"""The data model: sessions, messages and the shapes recall returns.

Names and dict shapes mirror ``praisonaiagents.session`` (1.7.17) so code ports over and
files round-trip byte for byte. ``from_dict`` is tolerant (non-object entries are skipped,
missing keys get defaults) and every key we do not know survives a read-modify-write.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

# JSON writing and copying live in :mod:`.jsonio`; these names stay importable from here.
from .jsonio import MAX_JSON_DEPTH as MAX_JSON_DEPTH
from .jsonio import copy_json as copy_json
from .jsonio import dumps_json as dumps_json
from .jsonio import json_utf8 as json_utf8

JSONDict = dict[str, Any]

# Metadata keys PraisonAI mirrors to the top level of a session file.
MIRRORED_KEYS = (
    "model",
    "llm",
    "total_tokens",
    "token_count",
    "cost",
    "source",
    "reasoning_effort",
)

_MESSAGE_KEYS = frozenset(
    {"role", "content", "timestamp", "metadata", "tool_calls", "tool_call_id"}
)
_SESSION_KEYS = frozenset(
    {
        "session_id",
        "messages",
        "created_at",
        "updated_at",
        "agent_name",
        "user_id",
        "metadata",
        "gateway_session_id",
        "agent_id",
        "runtime_state",
        "archived_messages",
        "last_compaction",
        *MIRRORED_KEYS,
    }
)

SUMMARY_PREFIX = "[Session Summary]"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# The epochs a datetime can hold with a day to spare at either end (so any UTC offset fits).
EPOCH_MIN = -62135510400.0  # 0001-01-02T00:00:00Z
EPOCH_MAX = 253402128000.0  # 9999-12-30T00:00:00Z


def epoch_seconds(value: Any) -> float | None:
    """A usable epoch (seconds) from a stored number; None when it cannot be used.

    ``None`` for non-numbers, booleans, NaN/infinities and values outside the dates a
    ``datetime`` can hold (an integer of hundreds of digits, ``1e308``, ``-62135596801``).
    Never raises.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not EPOCH_MIN <= value <= EPOCH_MAX:  # also False for NaN; no float() overflow
        return None
    return float(value)


def utc_datetime(value: Any) -> datetime | None:
    """An aware UTC ``datetime`` from an ISO string or an epoch number; None when unusable.

    The one converter for stored dates: a naive ISO string counts as UTC; a date that has
    no UTC equivalent (``0001-01-01T00:00:00+14:00``, ``9999-12-31T23:59:59-14:00``), text
    that is not ISO and every number :func:`epoch_seconds` refuses give None. Never raises,
    and the result can be formatted, compared and subtracted without overflowing.
    """
    if isinstance(value, str):
        if len(value) > 64:
            return None
        try:
            parsed = datetime.fromisoformat(value.strip())
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=UTC)
            parsed = parsed.astimezone(UTC)
        except (ValueError, OverflowError):
            return None
        stamp = parsed.timestamp()
        return parsed if EPOCH_MIN <= stamp <= EPOCH_MAX else None
    stamp_or_none = epoch_seconds(value)
    if stamp_or_none is None:
        return None
    try:
        return datetime.fromtimestamp(stamp_or_none, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def iso_epoch(value: Any) -> float | None:
    """Epoch seconds of a stored ISO date string or number (see :func:`utc_datetime`; a
    string is read without building the UTC ``datetime``: every record of a transcript
    has one)."""
    if isinstance(value, str):
        if len(value) > 64:
            return None
        try:
            parsed = datetime.fromisoformat(value.strip())
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=UTC)
            stamp = parsed.timestamp()  # (no UTC equivalent: out of the range below)
        except (ValueError, OverflowError):
            return None
        return stamp if EPOCH_MIN <= stamp <= EPOCH_MAX else None
    found = utc_datetime(value)
    return None if found is None else found.timestamp()


def stored_epoch(value: Any) -> float | None:
    """The epoch of an ISO date string as the index stores a session's time (a naive one
    is local time); None for anything else, or a date whose epoch cannot be computed (year
    1 east of UTC, year 9999 west of it)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value).timestamp()
    except (ValueError, OverflowError, OSError):
        return None


def finite_float(value: Any) -> float | None:
    """A number usable as a timestamp: a finite float (an int too large for a float, NaN
    and the infinities are treated as absent)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        out = float(value)
    except OverflowError:
        return None
    return out if math.isfinite(out) else None


def iso_of_epoch(value: Any) -> str | None:
    """PraisonAI's ISO form (``datetime.isoformat()`` in UTC) of an epoch; None if unusable."""
    parsed = utc_datetime(value) if not isinstance(value, str) else None
    return None if parsed is None else parsed.isoformat()


def utc_now_iso() -> str:
    """The current time as PraisonAI writes it (``datetime.now(timezone.utc).isoformat()``)."""
    return datetime.now(UTC).isoformat()


def content_text(content: Any) -> str:
    """The searchable text of a message's ``content``, whatever its JSON type."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    try:
        return dumps_json(content)
    except (TypeError, ValueError, RecursionError):
        return ""


def _compact_json(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return dumps_json(value)
    except (TypeError, ValueError, RecursionError):
        return repr(type(value).__name__)


def hidden_parts(message: JSONDict) -> list[tuple[str, str]]:
    """(label, text) of each part of ``message`` a reader does not see by default, in order:
    thinking, tool calls, tool results, shell runs (Pi's ``metadata.hidden``) and
    OpenAI-style ``tool_calls``. Labels are short (``tool call: bash``); texts are whole."""
    out: list[tuple[str, str]] = []
    meta = message.get("metadata")
    hidden = meta.get("hidden") if isinstance(meta, dict) else None
    for block in hidden if isinstance(hidden, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "thinking":
            out.append(("thinking", _compact_json(block.get("text") or "")))
        elif kind == "toolCall":
            name = block.get("name") or "?"
            out.append((f"tool call: {name}", _compact_json(block.get("arguments") or "")))
        elif kind == "toolResult":
            word = "tool error" if block.get("is_error") else "tool result"
            name = block.get("tool_name") or "?"
            out.append((f"{word}: {name}", _compact_json(block.get("text") or "")))
        elif kind == "bash":
            command = _compact_json(block.get("command") or "")
            output = _compact_json(block.get("output") or "")
            code = block.get("exit_code")
            label = "shell" if code in (None, 0) else f"shell (exit {_compact_json(code)})"
            out.append((label, f"$ {command}\n{output}" if output else f"$ {command}"))
        elif kind == "image":
            out.append(("image", _compact_json(block.get("mime_type") or "")))
        elif kind == "custom":
            out.append(("hidden note", _compact_json(block.get("text") or "")))
        else:
            out.append((_compact_json(kind or "hidden"), _compact_json(block.get("block", block))))
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            name = function.get("name") or "?"
            args = _compact_json(function.get("arguments") or "")
            out.append((f"tool call: {_compact_json(name)}", args))
        else:
            out.append(("tool call", _compact_json(call)))
    return out


def called_tools(message: JSONDict) -> list[str]:
    """The names of the tools ``message`` called, in order (a name once)."""
    names: list[str] = []
    for label, _text in hidden_parts(message):
        if label.startswith("tool call: "):
            name = label[len("tool call: ") :]
            if name not in names:
                names.append(name)
    return names


def is_summary_message(message: JSONDict) -> bool:
    """True for the synthetic compaction summary (``[Session Summary]`` + ``compaction``)."""
    meta = message.get("metadata")
    return (
        message.get("role") == "system"
        and isinstance(meta, dict)
        and bool(meta.get("compaction"))
        and content_text(message.get("content")).startswith(SUMMARY_PREFIX)
    )


@dataclass
class SessionMessage:
    """One message; unknown keys are kept in ``extra`` and written back."""

    role: str
    content: Any
    timestamp: float | None = field(default_factory=time.time)
    metadata: JSONDict = field(default_factory=dict)
    tool_calls: list[Any] | None = None
    tool_call_id: str | None = None
    extra: JSONDict = field(default_factory=dict)

    @property
    def text(self) -> str:
        return content_text(self.content)

    def to_dict(self) -> JSONDict:
        """The stored dict: PraisonAI's key order, then every key we did not know.

        A stored value of an unexpected type (a string timestamp, a ``null`` metadata) is
        kept in ``extra`` under its own key and written back in its original place, so a
        read-modify-write never rewrites what it did not touch.
        """
        extra = self.extra
        raw_role = extra.get("role", None)
        keep_raw = "role" in extra and self.role == str(raw_role)
        data: JSONDict = {"role": raw_role if keep_raw else self.role}
        data["content"] = self.content
        if self.timestamp is not None:
            data["timestamp"] = self.timestamp
        elif "timestamp" in extra:
            data["timestamp"] = extra["timestamp"]
        if self.metadata or "metadata" not in extra:
            data["metadata"] = self.metadata
        else:
            data["metadata"] = extra["metadata"]
        if self.tool_calls is not None:
            data["tool_calls"] = self.tool_calls
        elif "tool_calls" in extra:
            data["tool_calls"] = extra["tool_calls"]
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        elif "tool_call_id" in extra:
            data["tool_call_id"] = extra["tool_call_id"]
        for key, value in extra.items():
            data.setdefault(key, value)
        return data

    @classmethod
    def from_dict(cls, data: JSONDict) -> SessionMessage:
        extra = {k: v for k, v in data.items() if k not in _MESSAGE_KEYS}
        role = data.get("role", "user")
        if not isinstance(role, str):
            extra["role"] = role
            role = str(role)
        content = data.get("content", "")
        ts = data.get("timestamp")
        timestamp: float | None = None
        if _is_number(ts):
            timestamp = ts
        elif "timestamp" in data:
            extra["timestamp"] = ts
        meta = data.get("metadata")
        if not isinstance(meta, dict):
            if "metadata" in data:
                extra["metadata"] = meta
            meta = {}
        tool_calls = data.get("tool_calls")
        if not isinstance(tool_calls, list):
            if tool_calls is not None:
                extra["tool_calls"] = tool_calls
            tool_calls = None
        tool_call_id = data.get("tool_call_id")
        if not isinstance(tool_call_id, str):
            if tool_call_id is not None:
                extra["tool_call_id"] = tool_call_id
            tool_call_id = None
        return cls(
            role=role,
            content=content,
            timestamp=timestamp,
            metadata=meta,
            tool_calls=tool_calls,
            tool_call_id=tool_call_id,
            extra=extra,
        )

    def dedup_key(self) -> tuple[str, str, str]:
        """The (role, content, timestamp) identity used to de-duplicate salvaged turns."""
        return message_key(self.to_dict())

    def to_llm_message(self) -> JSONDict:
        """``{"role", "content"}`` plus ``tool_calls`` / ``tool_call_id`` when present."""
        msg: JSONDict = {"role": self.role, "content": self.content}
        if self.tool_calls:
            msg["tool_calls"] = self.tool_calls
        if self.tool_call_id is not None:
            msg["tool_call_id"] = self.tool_call_id
        return msg


def message_key(message: JSONDict) -> tuple[str, str, str]:
    """(role, content, timestamp) as a hashable key, for any JSON values."""
    try:
        content = dumps_json(message.get("content"), sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):  # mixed key types; over 1000 deep
        try:
            content = repr(message.get("content"))
        except (RecursionError, ValueError):
            content = f"<{type(message.get('content')).__name__}>"
    return (repr(message.get("role", "")), content, repr(message.get("timestamp")))


@dataclass
class CompactionCheckpoint:
    """PraisonAI's ``last_compaction`` record; unknown keys are kept in ``extra``."""

    summary: str
    message_index: int = 0
    role: str = "system"
    tokens_before: int = 0
    tokens_after: int = 0
    timestamp: float = field(default_factory=time.time)
    metadata: JSONDict = field(default_factory=dict)
    extra: JSONDict = field(default_factory=dict)

    def to_dict(self) -> JSONDict:
        data: JSONDict = {
            "summary": self.summary,
            "message_index": self.message_index,
            "role": self.role,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "timestamp": self.timestamp,
            "metadata": self.metadata,
        }
        for key, value in self.extra.items():
            data.setdefault(key, value)
        return data

    @classmethod
    def from_dict(cls, data: JSONDict) -> CompactionCheckpoint:
        """Parse a checkpoint; ``ValueError`` when a known field has the wrong type."""
        summary = data.get("summary", "")
        role = data.get("role", "system")
        meta = data.get("metadata", {})
        ints = [data.get(k, 0) for k in ("message_index", "tokens_before", "tokens_after")]
        ts = data.get("timestamp", 0.0)
        if (
            not isinstance(summary, str)
            or not isinstance(role, str)
            or not isinstance(meta, dict)
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in ints)
            or not _is_number(ts)
        ):
            raise ValueError("last_compaction has a field of an unexpected type")
        return cls(
            summary=summary,
            message_index=ints[0],
            role=role,
            tokens_before=ints[1],
            tokens_after=ints[2],
            timestamp=ts if "timestamp" in data else time.time(),
            metadata=meta,
            extra={k: v for k, v in data.items() if k not in _CHECKPOINT_KEYS},
        )

    def as_message(self) -> dict[str, str]:
        """The summary as the message resume replays."""
        return {"role": self.role, "content": self.summary}


_CHECKPOINT_KEYS = frozenset(
    {"summary", "message_index", "role", "tokens_before", "tokens_after", "timestamp", "metadata"}
)

# Session fields whose stored value may have an unexpected type; such a value is kept
# verbatim and written back for as long as the field is not changed.
_TYPED_FIELDS = (
    "created_at",
    "updated_at",
    "agent_name",
    "user_id",
    "metadata",
    "gateway_session_id",
    "agent_id",
    "runtime_state",
    "last_compaction",
)


def tail_turns(messages: list[SessionMessage], keep: int | None) -> list[SessionMessage]:
    """The last ``keep`` messages (all when falsy), never starting on an orphaned ``tool``
    result (PraisonAI's rule for a history window)."""
    if not keep or len(messages) <= keep:
        return messages
    start = len(messages) - keep
    while start < len(messages) and messages[start].role == "tool":
        start += 1
    return messages[start:]


@dataclass
class SessionData:
    """A whole session as stored; ``to_dict`` writes PraisonAI's exact key order.

    Keys we do not know are kept in ``extra``; a known key holding a value of an
    unexpected type is kept verbatim in ``raw`` and written back unless its field was
    changed, so a read-modify-write never rewrites what it did not touch.
    """

    session_id: str
    messages: list[SessionMessage] = field(default_factory=list)
    created_at: str = field(default_factory=utc_now_iso)
    updated_at: str = field(default_factory=utc_now_iso)
    agent_name: str | None = None
    user_id: str | None = None
    metadata: JSONDict = field(default_factory=dict)
    gateway_session_id: str | None = None
    agent_id: str | None = None
    runtime_state: JSONDict = field(default_factory=dict)
    archived_messages: list[SessionMessage] = field(default_factory=list)
    last_compaction: CompactionCheckpoint | None = None
    extra: JSONDict = field(default_factory=dict)
    # Not stored: where this session came from ("praisonai", "pi", ...).
    source_kind: str = field(default="praisonai", compare=False)
    # field name -> (stored raw value, the field's value right after loading)
    raw: dict[str, tuple[Any, Any]] = field(default_factory=dict, compare=False, repr=False)

    def _out(self, name: str) -> Any:
        value = getattr(self, name)
        stash = self.raw.get(name)
        if stash is not None and value == stash[1]:
            return stash[0]
        return value

    def drop_checkpoint(self) -> None:
        """Forget the compaction checkpoint (also one kept verbatim)."""
        self.last_compaction = None
        self.raw.pop("last_compaction", None)

    def get_chat_history(self, max_messages: int | None = None) -> list[JSONDict]:
        """The active window as LLM messages (the last ``max_messages``, whole tool turns)."""
        return [m.to_llm_message() for m in tail_turns(self.messages, max_messages)]

    def trim_messages(self, max_messages: int) -> None:
        """Keep the last ``max_messages`` turns; the checkpoint anchor follows."""
        overflow = len(self.messages) - max_messages
        if overflow <= 0:
            return
        self.messages = self.messages[-max_messages:]
        if self.last_compaction is not None:
            cp = self.last_compaction
            cp.message_index = max(0, cp.message_index - overflow)

    def get_working_history(self, max_messages: int | None = None) -> list[JSONDict]:
        """Resume history: the checkpoint summary and the turns after it, else the window."""
        cp = self.last_compaction
        if cp is None:
            return self.get_chat_history(max_messages)
        tail = self.messages[max(0, min(cp.message_index, len(self.messages))) :]
        history: list[JSONDict] = [cp.as_message(), *(m.to_llm_message() for m in tail)]
        if max_messages and len(history) > max_messages:
            body = history[1:][-(max_messages - 1) :] if max_messages > 1 else []
            while body and body[0].get("role") == "tool":
                body = body[1:]
            history = history[:1] + body
        return history

    def to_dict(self) -> JSONDict:
        data: JSONDict = {
            "session_id": self.session_id,
            "messages": [m.to_dict() for m in self.messages],
            "created_at": self._out("created_at"),
            "updated_at": self._out("updated_at"),
            "agent_name": self._out("agent_name"),
            "user_id": self._out("user_id"),
            "metadata": self._out("metadata"),
            "gateway_session_id": self._out("gateway_session_id"),
            "agent_id": self._out("agent_id"),
            "runtime_state": self._out("runtime_state"),
            "archived_messages": [m.to_dict() for m in self.archived_messages],
        }
        if self.last_compaction is not None:
            data["last_compaction"] = self.last_compaction.to_dict()
        elif "last_compaction" in self.raw:
            data["last_compaction"] = self.raw["last_compaction"][0]
        for key in MIRRORED_KEYS:
            if key in self.metadata:
                data[key] = self.metadata[key]
        for key, value in self.extra.items():
            data.setdefault(key, value)
        return data

    @classmethod
    def from_dict(cls, data: JSONDict) -> SessionData:
        raw: dict[str, tuple[Any, Any]] = {}
        raw_messages = data.get("messages")
        raw_archived = data.get("archived_messages")
        raw_messages = raw_messages if isinstance(raw_messages, list) else []
        raw_archived = raw_archived if isinstance(raw_archived, list) else []
        messages = [SessionMessage.from_dict(m) for m in raw_messages if isinstance(m, dict)]
        archived = [SessionMessage.from_dict(m) for m in raw_archived if isinstance(m, dict)]
        checkpoint_data = data.get("last_compaction")
        checkpoint: CompactionCheckpoint | None = None
        if isinstance(checkpoint_data, dict) and checkpoint_data:
            try:
                checkpoint = CompactionCheckpoint.from_dict(checkpoint_data)
            except ValueError:
                raw["last_compaction"] = (checkpoint_data, None)
        elif checkpoint_data:
            raw["last_compaction"] = (checkpoint_data, None)
        if checkpoint is not None:
            dropped = sum(
                1 for m in raw_messages[: checkpoint.message_index] if not isinstance(m, dict)
            )
            checkpoint.message_index = max(0, checkpoint.message_index - dropped)
        meta = data.get("metadata")
        metadata = dict(meta) if isinstance(meta, dict) else {}
        extra = {k: v for k, v in data.items() if k not in _SESSION_KEYS}
        for key in MIRRORED_KEYS:
            if key not in metadata and data.get(key) is not None:
                metadata[key] = data[key]
            elif key in data and key not in metadata:
                extra[key] = data[key]  # a top-level null mirror: keep it
        if "metadata" in data and not isinstance(meta, dict):
            raw["metadata"] = (meta, dict(metadata))
        runtime_state = data.get("runtime_state")
        if not isinstance(runtime_state, dict):
            if runtime_state is not None:
                raw["runtime_state"] = (runtime_state, {})
            runtime_state = {}
        fields: dict[str, Any] = {}
        for key in ("created_at", "updated_at"):
            value = data.get(key)
            if isinstance(value, str):
                fields[key] = value
            else:
                fields[key] = utc_now_iso()
                if value is not None:
                    raw[key] = (value, fields[key])
        for key in ("agent_name", "user_id", "gateway_session_id", "agent_id"):
            value = data.get(key)
            if value is None or isinstance(value, str):
                fields[key] = value
            else:
                fields[key] = None
                raw[key] = (value, None)
        sid = data.get("session_id")
        return cls(
            session_id=sid if isinstance(sid, str) else ("" if sid is None else str(sid)),
            messages=messages,
            metadata=metadata,
            runtime_state=runtime_state,
            archived_messages=archived,
            last_compaction=checkpoint,
            extra=extra,
            raw=raw,
            **fields,
        )


@dataclass
class SessionHit:
    """One cross-session match, in context (PraisonAI's ``SessionHit`` plus explanations)."""

    session_id: str
    # PraisonAI's title, by its rule (see :func:`~session_browser.core.recall.peer_title`).
    title: str = ""
    when: str | None = None
    snippet: str = ""
    score: float = 0.0
    anchor_index: int = -1
    messages: list[JSONDict] = field(default_factory=list)
    bookends: dict[str, list[JSONDict]] = field(default_factory=dict)
    # Ours (not in PraisonAI's dict): what the UI and CLI show beside a hit.
    # The title shown (the first prompt before the agent name, see
    # :func:`~session_browser.core.recall.session_title`); ``title`` when not given.
    display_title: str = ""
    source: str = "praisonai"
    store: str = ""
    archived: bool = False
    automated: bool = False
    folded: list[str] = field(default_factory=list)
    explain: JSONDict = field(default_factory=dict)
    project: str | None = None  # the session's working dir, when it records one
    agent: str | None = None  # the agent the session was held with, shown beside the title
    # Read from the vault's copy: "deleted from <path> on <date>" (or the turns a rewrite
    # of its file dropped); None for a session as its file holds it now.
    kept: str | None = None

    def __post_init__(self) -> None:
        if not self.display_title:
            self.display_title = self.title

    def folded_counts(self) -> tuple[int, int]:
        """The sessions folded into this hit: (continuations of it, other versions of this
        same session: the turns rewrites dropped, kept by the vault, or the file as it is)."""
        versions = sum(1 for f in self.folded if f == self.session_id)
        return len(self.folded) - versions, versions

    def folded_note(self) -> str | None:
        """The folded sessions in words, for a badge (None when none is)."""
        continuations, versions = self.folded_counts()
        parts = []
        if continuations:
            parts.append(f"{continuations} continuation{'s' if continuations != 1 else ''} folded")
        if versions:
            parts.append(f"{versions} other version{'s' if versions != 1 else ''} match")
        return ", ".join(parts) or None

    def badges(self) -> list[str]:
        """What the app and the CLI show beside the hit, as plain text (each shows it with
        its own escaping): an archived turn, automated, the folded sessions, a source other
        than PraisonAI's, and where the vault's copy comes from."""
        badges = []
        if self.archived:
            badges.append("archived hit")
        if self.automated:
            badges.append("automated")
        folded = self.folded_note()
        if folded:
            badges.append(folded)
        if self.source and self.source != "praisonai":
            badges.append(self.source)
        if self.kept:  # "deleted from <path> on <date>", or the turns a rewrite dropped
            badges.append(self.kept)
        return badges

    def as_dict(self) -> JSONDict:
        """PraisonAI's shape, exactly."""
        result: JSONDict = {
            "session_id": self.session_id,
            "title": self.title,
            "when": self.when,
            "snippet": self.snippet,
            "score": self.score,
            "anchor_index": self.anchor_index,
            "messages": self.messages,
        }
        if self.bookends:
            result["bookends"] = self.bookends
        return result

    def to_json(self) -> JSONDict:
        """PraisonAI's shape plus our fields (badges, folded continuations, explanation)."""
        result = self.as_dict()
        result.update(
            {
                "display_title": self.display_title,
                "source": self.source,
                "store": self.store,
                "archived": self.archived,
                "automated": self.automated,
                "folded": list(self.folded),
                "explain": self.explain,
                "project": self.project,
                "agent": self.agent,
                "kept": self.kept,
            }
        )
        return result


@dataclass
class SessionSummary:
    """A session in a browse listing."""

    session_id: str
    # PraisonAI's title, by its rule (see :func:`~session_browser.core.recall.peer_title`).
    title: str = ""
    when: str | None = None
    message_count: int = 0
    archived_count: int = 0
    created_at: str | None = None
    size: int = 0
    # The title shown (see :attr:`SessionHit.display_title`); ``title`` when not given.
    display_title: str = ""
    source: str = "praisonai"
    store: str = ""
    automated: bool = False
    lineage: str | None = None
    project: str | None = None
    agent: str | None = None  # the agent the session was held with, shown beside the title
    # Its file is gone, its rows kept from the vault's copy: "deleted from <path> on <date>"
    # (as :attr:`SessionHit.kept`); None for a session its store holds.
    kept: str | None = None

    def __post_init__(self) -> None:
        if not self.display_title:
            self.display_title = self.title

    def as_dict(self) -> JSONDict:
        """PraisonAI's browse shape plus ``archived_count``."""
        return {
            "session_id": self.session_id,
            "title": self.title,
            "when": self.when,
            "message_count": self.message_count,
            "archived_count": self.archived_count,
        }

    def to_json(self) -> JSONDict:
        result = self.as_dict()
        result.update(
            {
                "display_title": self.display_title,
                "created_at": self.created_at,
                "size": self.size,
                "source": self.source,
                "store": self.store,
                "automated": self.automated,
                "lineage": self.lineage,
                "project": self.project,
                "agent": self.agent,
                "kept": self.kept,
            }
        )
        return result


# The reason of a skipped import entry whose write failed (disk full, permission...).
REASON_WRITE_FAILED = "write failed"


@dataclass
class ImportReport:
    """What an import did: how many sessions landed and why the others did not.

    ``skipped`` holds every session not imported with its reason; those whose write
    failed (:attr:`failures`) are errors, the others (exists, duplicate...) are not.
    ``created_ids`` and ``replaced_ids`` split ``imported_ids`` by whether a file was
    there before. ``redacted``: the payload is a redacted export; ``refused`` (a dry run
    only): the existing sessions the import would refuse to replace with redacted copies.
    ``action_id``: the journal entry that undoes the import.
    """

    imported: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)
    version: int = 1
    dry_run: bool = False
    imported_ids: list[str] = field(default_factory=list)
    created_ids: list[str] = field(default_factory=list)
    replaced_ids: list[str] = field(default_factory=list)
    redacted: bool = False
    refused: list[str] = field(default_factory=list)
    action_id: str | None = None

    @property
    def skipped_count(self) -> int:
        return len(self.skipped)

    @property
    def failures(self) -> list[dict[str, str]]:
        """The skipped entries whose write failed."""
        return [s for s in self.skipped if s.get("reason", "").startswith(REASON_WRITE_FAILED)]

    def as_dict(self) -> JSONDict:
        return {
            "imported": self.imported,
            "skipped": list(self.skipped),
            "skipped_count": self.skipped_count,
            "failed_count": len(self.failures),
            "version": self.version,
            "dry_run": self.dry_run,
            "imported_ids": list(self.imported_ids),
            "created_ids": list(self.created_ids),
            "replaced_ids": list(self.replaced_ids),
            "redacted": self.redacted,
            "refused_redacted_ids": list(self.refused),
            "action_id": self.action_id,
        }
