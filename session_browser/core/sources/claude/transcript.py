"""What every JSONL transcript reader shares: reading lines, and turning turns into the
PraisonAI session shape with the same archived / ``[Session Summary]`` / active split as Pi.

Nothing here writes anything: files are opened ``rb`` (regular files only, never through a
symlink: :func:`~...files.open_regular`) and closed.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

import orjson

from ...files import loads, open_regular, read_upto
from ...model import SUMMARY_PREFIX, JSONDict, dumps_json
from ..base import RAW_KEPT
from ..view import SessionView

HIDDEN_TEXT_CHARS = 2000  # of one bookkeeping record kept as a hidden part


# ---------------------------------------------------------------------- lines


#: A line longer than this is skipped without being held in memory whole.
MAX_LINE_BYTES = 512 << 20
_SKIP_CHUNK = 1 << 20


@dataclass
class JsonLines:
    """The JSON objects of a JSONL file and what could not be used.

    ``records`` come from complete lines only; ``tail`` is the unterminated last line when it
    parses (a line being written), never consumed: ``end_offset`` is the byte offset after the
    last complete line, where a later read of the grown file goes on, and ``mark`` says how
    to tell later that the file only grew (taken from the same open file). ``raw``: the
    file's whole bytes, when it was read from its start in one piece and is small
    (:data:`~..base.RAW_KEPT`: the vault keeps them rather than read the file again)."""

    records: list[JSONDict] = field(default_factory=list)
    tail: JSONDict | None = None
    skipped_lines: int = 0
    long_lines: int = 0
    partial_tail: bool = False
    end_offset: int = 0
    mark: FileMark = field(default_factory=lambda: FileMark())
    raw: bytes | None = None

    @property
    def all_records(self) -> list[JSONDict]:
        return self.records if self.tail is None else [*self.records, self.tail]

    def line(self, line: bytes, complete: bool) -> None:
        """Take one line (without its newline; ``complete``: a newline ended it)."""
        line = line.strip()
        if not line:
            return
        try:
            obj = loads(line)
        except (ValueError, RecursionError):
            obj = None
        if not complete:
            self.tail = obj if isinstance(obj, dict) else None
            self.partial_tail = self.tail is None
        elif isinstance(obj, dict):
            self.records.append(obj)
        else:
            self.skipped_lines += 1


#: Up to this many bytes after the start offset, a file is read in one piece and split in
#: memory (one read call, no per-line reads); a bigger one is read a line at a time.
WHOLE_READ = 16 << 20


def read_json_lines(
    path: str | os.PathLike[str], start_offset: int = 0, *, max_line: int = MAX_LINE_BYTES
) -> JsonLines:
    """Every JSON object line of ``path`` from ``start_offset`` (a line boundary) on.

    Blank lines are ignored; a line that is not a JSON object (bad JSON, invalid UTF-8, a
    bare value) or is longer than ``max_line`` bytes is counted in ``skipped_lines`` (the long
    ones also in ``long_lines``). The file is opened once. Raises ``OSError``
    (:class:`~...files.NotRegularFile` for anything but a regular file, a symlink included,
    refused without blocking)."""
    out = JsonLines(end_offset=start_offset)
    # Unbuffered: most files are read in one piece (no buffer to build for each).
    with open_regular(path, buffered=False) as raw:
        st = os.fstat(raw.fileno())
        raw.seek(start_offset)
        size = st.st_size - start_offset
        if size <= WHOLE_READ:
            # What fstat said, plus a byte to notice growth (never a buffer of the limit's size)
            data = read_upto(raw, size + 1)
            if len(data) > size:  # it grew meanwhile: the rest, up to the limit
                data += read_upto(raw, WHOLE_READ + 1 - len(data))
            if len(data) <= WHOLE_READ:
                _split(out, data, max_line)
                if start_offset == 0 and len(data) <= RAW_KEPT:
                    out.raw = data
                out.mark = FileMark.taken(raw, st, out.end_offset, data, start_offset)
                return out
            raw.seek(start_offset)  # it grew past the limit meanwhile: a line at a time
        fh = io.BufferedReader(cast(io.RawIOBase, raw))  # (a line at a time: buffered)
        _stream(out, fh, max_line)
        out.mark = FileMark.taken(fh, st, out.end_offset)
    return out


def _split(out: JsonLines, data: bytes, max_line: int) -> None:
    """:func:`read_json_lines` of bytes in memory."""
    *lines, last = data.split(b"\n")
    records = out.records
    end, skipped, long_lines = out.end_offset, 0, 0
    for line in lines:  # (JsonLines.line, inlined: a transcript has a record a line)
        size = len(line)
        end += size + 1
        if size > max_line:
            skipped += 1
            long_lines += 1
            continue
        try:
            # (JSON allows the spaces a line may have around its value: no stripped copy)
            obj = orjson.loads(line)
        except (ValueError, RecursionError):
            line = line.strip()
            if not line:
                continue
            try:
                obj = loads(line)  # (orjson, then what the standard library accepts besides)
            except (ValueError, RecursionError):
                obj = None
        if isinstance(obj, dict):
            records.append(obj)
        else:
            skipped += 1
    out.end_offset = end
    out.skipped_lines += skipped
    out.long_lines += long_lines
    if last:
        if len(last) > max_line:
            out.partial_tail = True
        else:
            out.line(last, False)


def _stream(out: JsonLines, fh: IO[bytes], max_line: int) -> None:
    """:func:`read_json_lines` a line at a time (a long line is skipped a chunk at a time,
    never held whole)."""
    while True:
        raw = fh.readline(max_line + 1)
        if not raw:
            break
        complete = raw.endswith(b"\n")
        if not complete and len(raw) > max_line:
            size = len(raw)
            while not complete:  # skip the rest of the long line, a chunk at a time
                chunk = fh.readline(_SKIP_CHUNK)
                if not chunk:
                    break
                size += len(chunk)
                complete = chunk.endswith(b"\n")
            if not complete:
                out.partial_tail = True
                break
            out.end_offset += size
            out.skipped_lines += 1
            out.long_lines += 1
            continue
        if complete:
            out.end_offset += len(raw)
        out.line(raw, complete)


FINGERPRINT_BYTES = 64


@dataclass
class FileMark:
    """Where a read of an append-only file stopped, and how to tell the file only grew since:
    the same device and inode, at least ``end_offset`` bytes, the same first bytes and the
    same bytes just before ``end_offset``."""

    end_offset: int = 0
    device: int = 0
    inode: int = 0
    head: bytes = b""
    tail: bytes = b""

    @classmethod
    def of(cls, path: str | os.PathLike[str], end_offset: int) -> FileMark:
        """The mark of ``path`` read up to ``end_offset`` (``OSError``)."""
        with open_regular(path) as fh:
            return cls.taken(fh, os.fstat(fh.fileno()), end_offset)

    @classmethod
    def taken(
        cls,
        fh: IO[bytes],
        st: os.stat_result,
        end_offset: int,
        data: bytes = b"",
        at: int = 0,
    ) -> FileMark:
        """The mark of the open file ``fh`` read up to ``end_offset``; ``data``: its bytes
        from offset ``at`` on, as read (what they hold of the mark is not read again)."""
        lo = max(0, end_offset - FINGERPRINT_BYTES)
        head_end = min(FINGERPRINT_BYTES, end_offset)
        if at == 0 and len(data) >= end_offset:
            head, tail = data[:head_end], data[lo:end_offset]
        else:
            fh.seek(0)
            head = fh.read(head_end)
            fh.seek(lo)
            tail = fh.read(end_offset - lo)
        return cls(end_offset, st.st_dev, st.st_ino, head, tail)

    def grown(self, path: str | os.PathLike[str]) -> bool:
        """True when ``path`` is the marked file with bytes only added after the mark."""
        try:
            with open_regular(path) as fh:
                st = os.fstat(fh.fileno())
                if (st.st_dev, st.st_ino) != (self.device, self.inode):
                    return False
                if st.st_size < self.end_offset or fh.read(len(self.head)) != self.head:
                    return False
                fh.seek(self.end_offset - len(self.tail))
                return fh.read(len(self.tail)) == self.tail
        except OSError:
            return False


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


@dataclass(slots=True)
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
        texts = self.texts
        if len(texts) == 1:  # (most turns)
            return texts[0].strip()
        return "\n".join(t for t in texts if t).strip()


def text_or_none(value: Any) -> str | None:
    """``value`` when it is a string, else None."""
    return value if isinstance(value, str) else None


def blocks_text(content: Any, types: frozenset[str], *, bare: bool = False) -> str:
    """The text of a string, or of the blocks of a block list whose ``type`` is one of
    ``types`` (``bare``: plain strings in the list count too; Claude Code writes them,
    Codex does not), one per line."""
    if isinstance(content, str):
        return content
    texts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, str):
            if bare:
                texts.append(block)
        elif isinstance(block, dict) and block.get("type") in types:
            text = block.get("text")
            if isinstance(text, str) and (text or not bare):
                texts.append(text)
    return "\n".join(texts)


class TurnBuilder:
    """The turns of one transcript as they are built, and where its hidden parts go: a
    Claude Code and a Codex reader each add their records' meaning on top."""

    def __init__(self, include_hidden: bool) -> None:
        self.include_hidden = include_hidden
        self.turns: list[Turn] = []
        self.pending: list[JSONDict] = []  # hidden parts seen before the first turn
        self.hidden_records: dict[str, int] = {}

    def count(self, key: str) -> None:
        """Count one record that is not prose, by kind."""
        self.hidden_records[key] = self.hidden_records.get(key, 0) + 1

    def hide(self, part: JSONDict) -> None:
        """Attach a hidden part to the latest turn (or the first one to come)."""
        if not self.include_hidden:
            return
        target = next((t for t in reversed(self.turns) if t.role is not None), None)
        if target is None:
            self.pending.append(part)
        else:
            target.hidden.append(part)

    def add(self, turn: Turn) -> Turn:
        """Append ``turn``, with the hidden parts that came before any turn."""
        if self.pending and turn.role is not None:
            turn.hidden[:0] = self.pending
            self.pending = []
        self.turns.append(turn)
        return turn


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
    seen = 0  # turns before the one being converted (one pass: linear in the turns)

    def convert(part: list[Turn]) -> list[JSONDict]:
        nonlocal seen
        out: list[JSONDict] = []
        for turn in part:
            if turn.role is None:
                out.append(summary_of_marker(turn, seen, superseded=True))
            else:
                out.append(message_of(turn, include_hidden))
                seen += 1
        return out

    if not markers:
        return [], convert(turns), None
    last = markers[-1]
    marker = turns[last]
    archived = convert(turns[:last])
    compacted = seen
    active = [summary_of_marker(marker, compacted, superseded=False), *convert(turns[last + 1 :])]
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


@dataclass
class AgentSessionView(SessionView):
    """A Claude Code or Codex session record: a :class:`SessionView` of the file ``path``,
    what reading it found."""

    path: Path
    data: JSONDict
    skipped_lines: int
    partial_tail: bool
    unknown_records: dict[str, int]
    hidden_records: dict[str, int]
    end_offset: int


def session_times(turns: Iterable[Turn], path: Path, first: float | None) -> tuple[float, float]:
    """(created, updated) of a transcript: created is ``first`` (its first time stamp), else
    the file's mtime; updated is the time of its latest user or assistant turn, else
    created."""
    activity = [
        t.timestamp for t in turns if t.role in ("user", "assistant") and t.timestamp is not None
    ]
    if first is None:
        try:
            first = os.stat(path).st_mtime
        except OSError:
            first = 0.0
    return first, max(activity) if activity else first
