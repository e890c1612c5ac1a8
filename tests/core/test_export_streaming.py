"""Exports stream: one session at a time into the temp file, the same bytes as in one go."""

from __future__ import annotations

import json
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from session_browser.core import portable
from session_browser.core.actions import export as ex
from session_browser.core.multi import StoreGroup
from session_browser.core.store import DefaultSessionStore

from .. import hostile

T0 = 1_700_000_000.0


def _session(sid: str, *, archived: int = 0, body: str = "") -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    if archived:
        messages.append(
            {
                "role": "system",
                "content": f"[Session Summary]\nPrevious conversation: {archived} messages",
                "timestamp": T0,
                "metadata": {"compaction": True, "compacted_count": archived},
            }
        )
    for i in range(4):
        messages.append(
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"{sid} turn {i} ✓ mail me at ann{i}@example.com "
                f"api_key=sk-{'a' * 24}{i} ``` `fence` <b>&</b>\n\n\n{body}",
                "timestamp": T0 + i * 700,
                "metadata": {},
            }
        )
    messages[-1]["tool_calls"] = [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}]
    return {
        "session_id": sid,
        "messages": messages,
        "created_at": "2023-11-14T22:13:20+00:00",
        "updated_at": "2023-11-15T10:00:00+00:00",
        "agent_name": "helper",
        "metadata": {"title": f"Title {sid} token=abc{'x' * 30}", "lineage_id": f"L-{sid}"},
        "archived_messages": [
            {"role": "user", "content": f"{sid} archived {i}", "timestamp": T0 + i}
            for i in range(archived)
        ],
    }


def _store(tmp_path: Path, sessions: list[dict[str, Any]]) -> StoreGroup:
    home = tmp_path / "home"
    session_dir = home / "sessions"
    session_dir.mkdir(parents=True)
    for data in sessions:
        (session_dir / f"{data['session_id']}.json").write_text(
            json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8"
        )
    store = DefaultSessionStore(
        session_dir, spill_dir=home / "state" / "session_spill", retention="keep_all"
    )
    return StoreGroup([store])


def _expected(group: StoreGroup, fmt: str, redact: bool) -> tuple[bytes, dict[str, int]]:
    """The export as the whole-payload renderer makes it (every session in memory)."""
    sessions = portable.collect_sessions(group, all_sessions=True, skip_unreadable=True)
    return portable.export_bytes(sessions, fmt, redact=redact, skipped=[])


@pytest.mark.parametrize("fmt", ["json", "md", "html"])
@pytest.mark.parametrize("redact", [False, True])
def test_a_streamed_export_is_byte_for_byte_the_whole_payload(
    tmp_path: Path, fmt: str, redact: bool
) -> None:
    group = _store(tmp_path, [_session(f"s{i}", archived=i % 3) for i in range(5)])
    session_dir = Path(group.stores[0].session_dir)
    hostile.write_all(session_dir)  # lone surrogates, controls, 980 levels deep, huge ints
    (session_dir / "broken.json").write_text("{not json")
    expected, redactions = _expected(group, fmt, redact)
    target = tmp_path / f"out.{fmt}"
    path, built = ex.export_file(
        target, group, all_sessions=True, fmt=fmt, redact=redact, skip_unreadable=True
    )
    assert path == target and target.read_bytes() == expected
    assert built.size == len(expected) and built.count == 5 + len(hostile.KINDS)
    assert built.redactions == redactions and (sum(redactions.values()) > 0) == redact
    assert [Path(s).name for s in built.skipped] == ["broken.json"]
    assert not [p for p in tmp_path.rglob("*.tmp")]  # the temp file became the target


@pytest.mark.parametrize("fmt", ["json", "md", "html"])
def test_an_empty_and_a_one_session_export_match_too(tmp_path: Path, fmt: str) -> None:
    group = _store(tmp_path, [])
    for n in (0, 1):
        if n:
            (Path(group.stores[0].session_dir) / "only.json").write_text(
                json.dumps(_session("only"))
            )
        target = tmp_path / f"out{n}.{fmt}"
        ex.export_file(target, group, all_sessions=True, fmt=fmt, redact=bool(n))
        assert target.read_bytes() == _expected(group, fmt, bool(n))[0]


def test_a_failed_or_cancelled_export_leaves_the_target_as_it_was(tmp_path: Path) -> None:
    group = _store(tmp_path, [_session(f"s{i}") for i in range(4)])
    (Path(group.stores[0].session_dir) / "s2.json").write_text("{broken")
    target = tmp_path / "out.json"
    target.write_bytes(b"old")
    with pytest.raises(portable.UnreadableSession):
        ex.export_file(target, group, all_sessions=True, replace=True)
    calls: list[tuple[int, int]] = []
    _path, built = ex.export_file(
        target,
        group,
        all_sessions=True,
        replace=True,
        skip_unreadable=True,
        progress=lambda done, total: calls.append((done, total)),
        cancelled=lambda: len(calls) > 2,
    )
    assert built.cancelled and target.read_bytes() == b"old"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def _peak(group: StoreGroup, target: Path, fmt: str) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        ex.export_file(target, group, all_sessions=True, fmt=fmt)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("fmt", ["json", "html"])
def test_an_export_holds_one_session_at_a_time(tmp_path: Path, fmt: str) -> None:
    """The peak of exporting 60 sessions is about that of exporting one: not 60 times."""
    body = "words of a long answer " * 1000  # ~23 kB a message, ~90 kB a session
    one = _store(tmp_path / "one", [_session("s0", body=body)])
    many = _store(tmp_path / "many", [_session(f"s{i}", body=body) for i in range(60)])
    peak_one = _peak(one, tmp_path / f"one.{fmt}", fmt)
    peak_many = _peak(many, tmp_path / f"many.{fmt}", fmt)
    exported = (tmp_path / f"many.{fmt}").stat().st_size
    assert exported > 50 * (tmp_path / f"one.{fmt}").stat().st_size
    # A whole-payload export holds every session (and its text) at once: > 5 MB here.
    assert peak_many < 3 * peak_one + (1 << 20), (peak_one, peak_many, exported)


def test_stdout_gets_the_same_bytes_and_nothing_when_the_export_fails(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from session_browser.cli import main

    group = _store(tmp_path, [_session(f"s{i}") for i in range(3)])
    session_dir = str(group.stores[0].session_dir)
    args = ["export", "--all", "--store", session_dir, "--format", "md", "-o", "-"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0 and res.stdout_bytes == _expected(group, "md", False)[0]
    (Path(session_dir) / "s1.json").write_text("{broken")
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 1 and res.stdout_bytes == b"" and "s1.json" in res.stderr


def _one_message(size: int) -> dict[str, Any]:
    """A session whose one prompt is ``size`` characters on a single line, backticks in it."""
    unit = "one long line of `code` and ``more`` words "
    text = (unit * (size // len(unit) + 1))[:size]
    return {
        "session_id": "big",
        "created_at": "2023-11-14T22:13:20+00:00",
        "messages": [{"role": "user", "content": text, "timestamp": T0}],
    }


def test_a_huge_message_is_written_to_markdown_without_copies_of_it(tmp_path: Path) -> None:
    """A 20 MB prompt: the Markdown export's own memory is a few chunks, not copies of it."""
    size = 20 << 20
    session = _one_message(size)
    with (tmp_path / "out.md").open("wb") as fh:
        tracemalloc.start()
        try:
            portable.write_sessions([session], "md", fh, spool_dir=tmp_path)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    written = (tmp_path / "out.md").stat().st_size
    assert written > size
    # Building the fenced block, the document and its encoding each copied the message.
    assert peak < size // 4, (peak, size)


def _python_calls(session: dict[str, Any], out: Path) -> int:
    count = 0

    def counted(_frame: Any, event: str, _arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    with out.open("wb") as fh:
        sys.setprofile(counted)
        try:
            portable.write_sessions([session], "md", fh, spool_dir=out.parent)
        finally:
            sys.setprofile(None)
    return count


def test_markdown_work_does_not_grow_with_the_message(tmp_path: Path) -> None:
    """A 4 MB prompt takes about the Python steps of a 1 MB one: a few per block of a file
    copied, none per character (the fence was found one character at a time)."""
    small = _python_calls(_one_message(1 << 20), tmp_path / "small.md")
    big = _python_calls(_one_message(4 << 20), tmp_path / "big.md")
    assert big - small < (3 << 20) // 1000, (small, big)


@pytest.mark.parametrize("run", [0, 1, 2, 3, 4, 7, 8, 1000, 4097])
def test_the_fence_is_one_longer_than_the_longest_run_of_backticks(run: int) -> None:
    text = "a ``` b " + "`" * run + " c ``"
    rendered = portable.render_sessions(
        [{"session_id": "f", "messages": [{"role": "user", "content": text}]}], "md"
    ).text
    fence = "`" * max(3, run + 1, 4)
    assert f"\n{fence}text\n{text}\n{fence}\n" in rendered
    assert "`" * (len(fence) + 1) + "text" not in rendered
