"""What every JSONL transcript reader shares: reading lines, and turning turns into the
PraisonAI session shape with the same archived / ``[Session Summary]`` / active split as Pi.

Nothing here writes anything: files are opened ``rb`` and closed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ...files import loads
from ...model import SUMMARY_PREFIX, JSONDict, dumps_json

HIDDEN_TEXT_CHARS = 2000  # of one bookkeeping record kept as a hidden part


# ---------------------------------------------------------------------- lines


@dataclass
class JsonLines:
    """The JSON objects of a JSONL file and what could not be used."""

    records: list[JSONDict] = field(default_factory=list)
    skipped_lines: int = 0
    partial_tail: bool = False
    end_offset: int = 0


def read_json_lines(path: str | os.PathLike[str], start_offset: int = 0) -> JsonLines:
    """Every JSON object line of ``path`` from ``start_offset`` (a line boundary) on.

    Blank lines are ignored; a line that is not a JSON object is counted in ``skipped_lines``.
    A last line without its newline is not consumed (``end_offset`` stays before it): it is
    used when it parses, else counted as ``partial_tail``. Raises ``OSError``."""
    out = JsonLines(end_offset=start_offset)
    with open(path, "rb") as fh:
        fh.seek(start_offset)
        for raw in fh:
            complete = raw.endswith(b"\n")
            if complete:
                out.end_offset += len(raw)
            line = raw.strip()
            if not line:
                continue
            try:
                obj = loads(line)
            except (ValueError, RecursionError):
                obj = None
            if isinstance(obj, dict):
                out.records.append(obj)
            elif complete:
                out.skipped_lines += 1
            else:
                out.partial_tail = True
    return out


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def short(value: Any, limit: int = HIDDEN_TEXT_CHARS) -> str:
    """A hidden part's text: strings as they are, anything else as compact JSON, cut."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = dumps_json(value)
        except (TypeError, ValueError, RecursionError):
            text = repr(type(value).__name__)
    return text if len(text) <= limit else text[:limit] + "…"


# ---------------------------------------------------------------------- turns


@dataclass
class Turn:
    """One message being built (``role`` None: a compaction boundary marker)."""

    role: str | None
    timestamp: float | None
    texts: list[str] = field(default_factory=list)
    meta: JSONDict = field(default_factory=dict)
    hidden: list[JSONDict] = field(default_factory=list)
    tool_call_id: str | None = None

    @property
    def text(self) -> str:
        return "\n".join(t for t in self.texts if t).strip()


def message_of(turn: Turn, include_hidden: bool) -> JSONDict:
    """The PraisonAI message of a turn."""
    meta = dict(turn.meta)
    if include_hidden and turn.hidden:
        meta["hidden"] = list(turn.hidden)
    msg: JSONDict = {"role": turn.role, "content": turn.text}
    if turn.timestamp is not None:
        msg["timestamp"] = turn.timestamp
    msg["metadata"] = meta
    if turn.tool_call_id is not None:
        msg["tool_call_id"] = turn.tool_call_id
    return msg


def summary_of_marker(marker: Turn, compacted: int, *, superseded: bool) -> JSONDict:
    """The ``[Session Summary]`` system message of a compaction marker."""
    meta: JSONDict = {"compaction": True, "compacted_count": compacted, **marker.meta}
    if superseded:
        meta["superseded"] = True
    msg: JSONDict = {"role": "system", "content": f"{SUMMARY_PREFIX}\n{marker.text}"}
    if marker.timestamp is not None:
        msg["timestamp"] = marker.timestamp
    msg["metadata"] = meta
    return msg


def split_compaction(
    turns: list[Turn], include_hidden: bool, source_key: str
) -> tuple[list[JSONDict], list[JSONDict], JSONDict | None]:
    """(archived, active, last_compaction) of turns holding boundary markers (``role`` None)."""
    markers = [i for i, t in enumerate(turns) if t.role is None]

    def convert(part: list[Turn], offset: int) -> list[JSONDict]:
        out: list[JSONDict] = []
        for i, turn in enumerate(part):
            if turn.role is None:
                before = sum(1 for t in turns[: offset + i] if t.role is not None)
                out.append(summary_of_marker(turn, before, superseded=True))
            else:
                out.append(message_of(turn, include_hidden))
        return out

    if not markers:
        return [], convert(turns, 0), None
    last = markers[-1]
    marker = turns[last]
    compacted = sum(1 for t in turns[:last] if t.role is not None)
    archived = convert(turns[:last], 0)
    active = [
        summary_of_marker(marker, compacted, superseded=False),
        *convert(turns[last + 1 :], last + 1),
    ]
    info: JSONDict = {
        "summary": marker.text,
        "message_index": 0,
        "role": "system",
        "tokens_before": marker.meta.get("tokens_before") or 0,
        "tokens_after": 0,
        "timestamp": marker.timestamp or 0.0,
        "metadata": {source_key: True, "compacted_count": compacted},
    }
    return archived, active, info
