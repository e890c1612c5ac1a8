"""The entries of a Pi file: where the files live, their times, and each JSON line normalized into
one entry."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import recall
from ...files import loads, open_regular
from ...model import (
    JSONDict,
    epoch_seconds,
    iso_epoch,
    iso_of_epoch,
)

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
        with open_regular(settings, follow_links=True) as fh:
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
