"""The parse state of a Pi file: the entries read so far and where to resume when the file only
grew."""

from __future__ import annotations

import base64
import os
import zlib
from dataclasses import dataclass, field
from typing import IO

import orjson

from ...files import loads
from ...model import (
    JSONDict,
    dumps_json,
    json_utf8,
)
from .entries import (
    FINGERPRINT_BYTES,
    KNOWN_TYPES,
    STATE_FORMAT,
    _Entry,
    _normalize,
)

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
