"""Exports written as they are made: one session at a time, the same bytes as in one go.

:func:`write_sessions` renders each session of an iterable (typically read one file at a
time) and writes it out before the next is read, so the memory an export takes grows with
its largest session, not with the store. The bytes are exactly those of
:func:`~.exporting.export_bytes` for the same sessions: the portable JSON payload is
``{"version": 1, "sessions": [...]}`` (plus the ``redacted`` marker, which comes last),
and a Markdown or HTML file is its head (title and redaction note, known only once every
session is rendered) followed by the sessions, which wait in an unnamed temp file.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ..model import JSONDict
from ..redact import Redactor
from ..text import safe_json
from .errors import PORTABLE_VERSION, REDACTED_KEY, PortableError
from .exporting import unexportable_error
from .human import (
    HTML_END,
    _html_block,
    _html_head,
    _md_block,
    _md_head,
    _note,
    _session_block,
    _Text,
    sessions_title,
)

# One session as it sits in the payload: dumped inside a frame of the payload's depth, so
# it is indented (and nested) exactly as in the whole payload.
_FRAME_HEAD = '{\n  "sessions": [\n'
_FRAME_TAIL = "\n  ]\n}"
_EMPTY = "[]"


@dataclass
class Streamed:
    """What :func:`write_sessions` wrote: how many sessions, how many bytes, what redaction
    replaced, and the ids left out as unexportable (nested too deeply)."""

    count: int = 0
    size: int = 0
    redactions: dict[str, int] = field(default_factory=dict)
    unexportable: list[str] = field(default_factory=list)


# Text is encoded this many characters at a time: a huge message never has a second,
# encoded copy of itself in memory.
_CHUNK = 1 << 20


class _Out:
    """A binary file written as UTF-8 text, its size counted."""

    def __init__(self, fh: IO[bytes]) -> None:
        self.fh = fh
        self.size = 0

    def write(self, text: str, end: int | None = None) -> None:
        """Write ``text`` (its first ``end`` characters when given), a chunk at a time."""
        stop = len(text) if end is None else end
        for start in range(0, stop, _CHUNK):
            data = text[start : min(start + _CHUNK, stop)].encode("utf-8")
            self.fh.write(data)
            self.size += len(data)


def write_sessions(
    sessions: Iterable[JSONDict],
    fmt: str,
    out: IO[bytes],
    *,
    redact: bool = False,
    skip_unexportable: bool = False,
    spool_dir: Path | None = None,
) -> Streamed:
    """Render ``sessions`` as ``fmt`` (``json``, ``md`` or ``html``) into ``out``, one at a
    time; the bytes are those of :func:`~.exporting.export_bytes`.

    A session that cannot be written (nested too deeply) is left out; unless
    ``skip_unexportable`` the rest are still checked and :class:`UnexportableSession`
    names them all at the end (``out`` then holds a partial file: write into a temp file).
    ``spool_dir``: where Markdown and HTML keep the rendered sessions until the head is
    known (an unnamed temp file; the system's temp dir by default).
    """
    if fmt == "json":
        result = _write_json(sessions, _Out(out), redact=redact)
    elif fmt in ("md", "html"):
        result = _write_human(sessions, fmt, out, redact=redact, spool_dir=spool_dir)
    else:
        raise PortableError(f"unknown format {fmt!r} (expected md or html)")
    if result.unexportable and not skip_unexportable:
        raise unexportable_error(result.unexportable)
    return result


def _session_json(session: JSONDict) -> str:
    text = safe_json({"sessions": [session]})
    return text[len(_FRAME_HEAD) : len(text) - len(_FRAME_TAIL)]


def _write_json(sessions: Iterable[JSONDict], out: _Out, *, redact: bool) -> Streamed:
    skeleton = safe_json({"version": PORTABLE_VERSION, "sessions": []})
    cut = skeleton.index(_EMPTY) + 1
    out.write(skeleton[:cut])  # '{\n  "version": 1,\n  "sessions": ['
    result = Streamed()
    counts: Counter[str] = Counter()
    for session in sessions:
        redactor = Redactor() if redact else None
        value = redactor.value(session) if redactor is not None else session
        try:
            text = _session_json(value)
        except RecursionError:
            result.unexportable.append(str(session.get("session_id")))
            continue
        if redactor is not None:
            counts.update(redactor.counts)
        out.write((",\n" if result.count else "\n") + text)
        result.count += 1
    out.write("\n  ]" if result.count else "]")
    if redact:
        marked = Redactor()
        marked.counts = counts
        tail = safe_json(
            {"version": PORTABLE_VERSION, "sessions": [], REDACTED_KEY: marked.as_dict()}
        )
        out.write(tail[tail.index(_EMPTY) + len(_EMPTY) :])
    else:
        out.write(skeleton[cut + 1 :])
    result.size = out.size
    result.redactions = dict(sorted(counts.items()))
    return result


def _body_end(text: str) -> int:
    """The length of ``text`` without its trailing newlines, found a chunk at a time (no
    copy of a huge text, no Python step per character)."""
    end = len(text)
    while end:
        chunk = text[max(0, end - _CHUNK) : end]
        kept = chunk.rstrip("\n")
        end -= len(chunk) - len(kept)
        if kept:
            break
    return end


class _Trimmed:
    """Text written with its trailing newlines held back until more text follows (the
    Markdown file ends in exactly one newline)."""

    def __init__(self, out: _Out) -> None:
        self.out = out
        self.pending = 0

    def write(self, text: str) -> None:
        end = _body_end(text)
        if end:
            if self.pending:
                self.out.write("\n" * self.pending)
            self.out.write(text, end)
            self.pending = len(text) - end
        else:
            self.pending += len(text)


def _write_human(
    sessions: Iterable[JSONDict],
    fmt: str,
    out: IO[bytes],
    *,
    redact: bool,
    spool_dir: Path | None,
) -> Streamed:
    redactor = Redactor() if redact else None
    clean = _Text(redactor)
    result = Streamed()
    first_title = ""
    with tempfile.TemporaryFile(dir=spool_dir) as spool:
        body = _Out(spool)
        trimmed = _Trimmed(body)
        for session in sessions:
            before = Counter(redactor.counts) if redactor is not None else None
            try:
                block = _session_block(session, clean)
                lines = _md_block(block, 2) if fmt == "md" else _html_block(block)
            except RecursionError:
                if redactor is not None and before is not None:
                    redactor.counts = before
                result.unexportable.append(str(session.get("session_id")))
                continue
            if not result.count:
                first_title = block.title
            result.count += 1
            sink = trimmed if fmt == "md" else body
            for line in lines:  # each line written as it is: a huge message is not copied
                sink.write("\n")
                sink.write(line)
        title = clean(sessions_title(first_title, result.count), one_line=True)
        note = _note(redactor)
        head = _Out(out)
        spool.flush()
        spool.seek(0)
        if fmt == "md":
            text = "\n".join(_md_head(title, note))
            start = text.rstrip("\n")
            head.write(start)
            if body.size:
                head.write("\n" * (len(text) - len(start)))
                shutil.copyfileobj(spool, out)
            head.write("\n")
        else:
            head.write("\n".join(_html_head(title, note)))
            shutil.copyfileobj(spool, out)
            head.write("\n" + HTML_END + "\n")
    result.size = head.size + body.size
    result.redactions = dict(redactor.counts) if redactor is not None else {}
    return result
