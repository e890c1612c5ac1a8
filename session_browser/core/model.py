"""The data model: sessions, messages and the shapes recall returns.

Names and dict shapes mirror ``praisonaiagents.session`` (1.7.17) so code ports over and
files round-trip byte for byte. ``from_dict`` is tolerant (non-object entries are skipped,
missing keys get defaults) and every key we do not know survives a read-modify-write.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

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
        return json.dumps(content, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(content)


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
        data: JSONDict = {"role": self.role, "content": self.content}
        if self.timestamp is not None:
            data["timestamp"] = self.timestamp
        data["metadata"] = self.metadata
        if self.tool_calls is not None:
            data["tool_calls"] = self.tool_calls
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        for key, value in self.extra.items():
            data.setdefault(key, value)
        return data

    @classmethod
    def from_dict(cls, data: JSONDict) -> SessionMessage:
        role = data.get("role", "user")
        meta = data.get("metadata")
        ts = data.get("timestamp")
        tool_calls = data.get("tool_calls")
        tool_call_id = data.get("tool_call_id")
        return cls(
            role=role if isinstance(role, str) else str(role),
            content=data.get("content", ""),
            timestamp=ts if isinstance(ts, (int, float)) and not isinstance(ts, bool) else None,
            metadata=meta if isinstance(meta, dict) else {},
            tool_calls=tool_calls if isinstance(tool_calls, list) else None,
            tool_call_id=tool_call_id if isinstance(tool_call_id, str) else None,
            extra={k: v for k, v in data.items() if k not in _MESSAGE_KEYS},
        )

    def dedup_key(self) -> tuple[str, str, str]:
        """The (role, content, timestamp) identity used to de-duplicate salvaged turns."""
        return message_key(self.to_dict())


def message_key(message: JSONDict) -> tuple[str, str, str]:
    """(role, content, timestamp) as a hashable key, for any JSON values."""
    return (
        str(message.get("role", "")),
        json.dumps(message.get("content"), sort_keys=True, ensure_ascii=False, default=str),
        repr(message.get("timestamp")),
    )


@dataclass
class CompactionCheckpoint:
    """PraisonAI's ``last_compaction`` record, kept verbatim."""

    summary: str
    message_index: int = 0
    role: str = "system"
    tokens_before: int = 0
    tokens_after: int = 0
    timestamp: float = field(default_factory=time.time)
    metadata: JSONDict = field(default_factory=dict)

    def to_dict(self) -> JSONDict:
        return {
            "summary": self.summary,
            "message_index": self.message_index,
            "role": self.role,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "timestamp": self.timestamp,
            "metadata": self.metadata,
        }

    @classmethod
    def from_dict(cls, data: JSONDict) -> CompactionCheckpoint:
        meta = data.get("metadata")
        return cls(
            summary=str(data.get("summary", "")),
            message_index=int(data.get("message_index", 0) or 0),
            role=str(data.get("role", "system")),
            tokens_before=int(data.get("tokens_before", 0) or 0),
            tokens_after=int(data.get("tokens_after", 0) or 0),
            timestamp=float(data.get("timestamp", time.time()) or 0.0),
            metadata=meta if isinstance(meta, dict) else {},
        )


@dataclass
class SessionData:
    """A whole session as stored; ``to_dict`` writes PraisonAI's exact key order."""

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

    def to_dict(self) -> JSONDict:
        data: JSONDict = {
            "session_id": self.session_id,
            "messages": [m.to_dict() for m in self.messages],
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "agent_name": self.agent_name,
            "user_id": self.user_id,
            "metadata": self.metadata,
            "gateway_session_id": self.gateway_session_id,
            "agent_id": self.agent_id,
            "runtime_state": self.runtime_state,
            "archived_messages": [m.to_dict() for m in self.archived_messages],
        }
        if self.last_compaction is not None:
            data["last_compaction"] = self.last_compaction.to_dict()
        for key in MIRRORED_KEYS:
            if key in self.metadata:
                data[key] = self.metadata[key]
        for key, value in self.extra.items():
            data.setdefault(key, value)
        return data

    @classmethod
    def from_dict(cls, data: JSONDict) -> SessionData:
        raw_messages = data.get("messages")
        raw_archived = data.get("archived_messages")
        raw_messages = raw_messages if isinstance(raw_messages, list) else []
        raw_archived = raw_archived if isinstance(raw_archived, list) else []
        messages = [SessionMessage.from_dict(m) for m in raw_messages if isinstance(m, dict)]
        archived = [SessionMessage.from_dict(m) for m in raw_archived if isinstance(m, dict)]
        checkpoint_data = data.get("last_compaction")
        checkpoint = (
            CompactionCheckpoint.from_dict(checkpoint_data)
            if isinstance(checkpoint_data, dict) and checkpoint_data
            else None
        )
        if checkpoint is not None:
            dropped = sum(
                1 for m in raw_messages[: checkpoint.message_index] if not isinstance(m, dict)
            )
            checkpoint.message_index = max(0, checkpoint.message_index - dropped)
        meta = data.get("metadata")
        metadata = dict(meta) if isinstance(meta, dict) else {}
        for key in MIRRORED_KEYS:
            if key not in metadata and data.get(key) is not None:
                metadata[key] = data[key]
        runtime_state = data.get("runtime_state")
        return cls(
            session_id=str(data.get("session_id", "") or ""),
            messages=messages,
            created_at=_str_or(data.get("created_at"), utc_now_iso),
            updated_at=_str_or(data.get("updated_at"), utc_now_iso),
            agent_name=_opt_str(data.get("agent_name")),
            user_id=_opt_str(data.get("user_id")),
            metadata=metadata,
            gateway_session_id=_opt_str(data.get("gateway_session_id")),
            agent_id=_opt_str(data.get("agent_id")),
            runtime_state=runtime_state if isinstance(runtime_state, dict) else {},
            archived_messages=archived,
            last_compaction=checkpoint,
            extra={k: v for k, v in data.items() if k not in _SESSION_KEYS},
        )


def _opt_str(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _str_or(value: Any, default: Any) -> str:
    if isinstance(value, str) and value:
        return value
    return str(default())


@dataclass
class SessionHit:
    """One cross-session match, in context (PraisonAI's ``SessionHit`` plus explanations)."""

    session_id: str
    title: str = ""
    when: str | None = None
    snippet: str = ""
    score: float = 0.0
    anchor_index: int = -1
    messages: list[JSONDict] = field(default_factory=list)
    bookends: dict[str, list[JSONDict]] = field(default_factory=dict)
    # Ours (not in PraisonAI's dict): what the UI and CLI show beside a hit.
    source: str = "praisonai"
    store: str = ""
    archived: bool = False
    automated: bool = False
    folded: list[str] = field(default_factory=list)
    explain: JSONDict = field(default_factory=dict)

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
                "source": self.source,
                "store": self.store,
                "archived": self.archived,
                "automated": self.automated,
                "folded": list(self.folded),
                "explain": self.explain,
            }
        )
        return result


@dataclass
class SessionSummary:
    """A session in a browse listing."""

    session_id: str
    title: str = ""
    when: str | None = None
    message_count: int = 0
    archived_count: int = 0
    created_at: str | None = None
    size: int = 0
    source: str = "praisonai"
    store: str = ""
    automated: bool = False
    lineage: str | None = None
    project: str | None = None

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
                "created_at": self.created_at,
                "size": self.size,
                "source": self.source,
                "store": self.store,
                "automated": self.automated,
                "lineage": self.lineage,
                "project": self.project,
            }
        )
        return result


@dataclass
class ImportReport:
    """What an import did: how many sessions landed and why the others did not."""

    imported: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)
    version: int = 1
    dry_run: bool = False
    imported_ids: list[str] = field(default_factory=list)

    @property
    def skipped_count(self) -> int:
        return len(self.skipped)

    def as_dict(self) -> JSONDict:
        return {
            "imported": self.imported,
            "skipped": list(self.skipped),
            "skipped_count": self.skipped_count,
            "version": self.version,
            "dry_run": self.dry_run,
            "imported_ids": list(self.imported_ids),
        }
