"""A JSONL transcript read in one piece (small files) and a line at a time (big ones) gives
the same records, counts, offsets and mark; the one-piece read hands over the bytes it read
and opens the file once."""

from __future__ import annotations

from pathlib import Path

import pytest

from session_browser.core.sources.claude import transcript
from session_browser.core.sources.claude.transcript import FileMark, read_json_lines

LINES = [
    b'{"type": "user", "n": 1}\n',
    b"\n",
    b"   \n",
    b"not json\n",
    b"[1, 2]\n",
    b'{"type": "assistant", "text": "' + b"x" * 300 + b'"}\n',  # long with max_line=200
    b'{"type": "user", "n": 2}\r\n',
    b"\xff\xfe invalid utf-8\n",
]
TAILS = [b"", b'{"type": "user", "n": 3}', b'{"type": "us', b"   ", b"y" * 400]


def fields(lines: transcript.JsonLines) -> tuple[object, ...]:
    return (
        lines.records,
        lines.tail,
        lines.skipped_lines,
        lines.long_lines,
        lines.partial_tail,
        lines.end_offset,
        lines.mark,
    )


@pytest.mark.parametrize("tail", TAILS)
@pytest.mark.parametrize("start", [0, len(LINES[0]), len(b"".join(LINES[:4]))])
def test_one_piece_and_line_by_line_read_the_same(
    tail: bytes, start: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(LINES) + tail)
    whole = read_json_lines(path, start, max_line=200)
    monkeypatch.setattr(transcript, "WHOLE_READ", 0)
    streamed = read_json_lines(path, start, max_line=200)
    assert fields(whole) == fields(streamed)
    assert whole.mark == FileMark.of(path, whole.end_offset)
    assert whole.raw == (path.read_bytes() if start == 0 else None)
    assert streamed.raw is None
    assert whole.long_lines == 1 and whole.records


def test_a_small_transcript_is_opened_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(LINES))
    opened: list[object] = []
    real = transcript.open_regular

    def counting(p: object, **kw: bool) -> object:
        opened.append(p)
        return real(p, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(transcript, "open_regular", counting)
    lines = read_json_lines(path)
    assert opened == [path] and lines.raw == path.read_bytes()
    assert lines.mark.grown(path)
