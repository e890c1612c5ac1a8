"""Pi session files built from PraisonAI-shaped sessions (for tests and the benchmark)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson

from ...model import (
    JSONDict,
)
from .entries import (
    _epoch,
)

# ---------------------------------------------------------------------- building Pi files


def chat_turns(data: JSONDict, key: str) -> list[tuple[str, str, Any]]:
    """(role, text, stored timestamp) of the user and assistant turns of the PraisonAI-shaped
    ``data[key]`` (text: the content when it is a string, else empty)."""
    out: list[tuple[str, str, Any]] = []
    items = data.get(key)
    for msg in items if isinstance(items, list) else []:
        if not isinstance(msg, dict) or msg.get("role") not in ("user", "assistant"):
            continue
        content = msg.get("content")
        out.append(
            (str(msg["role"]), content if isinstance(content, str) else "", msg.get("timestamp"))
        )
    return out


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
        for role, text, ts in chat_turns(data, key):
            stamp = float(ts) if isinstance(ts, (int, float)) and not isinstance(ts, bool) else 0.0
            out.append((role, text, stamp or created))
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
