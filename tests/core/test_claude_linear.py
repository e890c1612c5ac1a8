"""Reading a Claude Code transcript is linear in its lines, whatever its inline sidechains:
one sidechain line per ``agentId``, or sidechains whose ``parentUuid`` links form a cycle (every
line the root of a run of its own), are read with the work of a main chain.

Work is counted, not timed: the Python lines the reader executes (``sys.settrace``) for a
transcript and for one four times as long; a linear read does about four times the work, a
quadratic one sixteen. The result is checked too: every run's turn in place, nothing lost.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import session_browser.core.sources as sources_pkg
from session_browser.core.sources.claude import read_claude_session

SID = "11111111-2222-3333-4444-555555555555"
SOURCES_DIR = str(Path(sources_pkg.__file__).parent)


def _line(i: int, kind: str, **fields: Any) -> dict[str, Any]:
    stamp = f"2026-02-12T14:{(i // 60) % 60:02d}:{i % 60:02d}.000Z"
    return {
        "type": kind,
        "uuid": f"u{i}",
        "sessionId": SID,
        "cwd": "/p",
        "timestamp": stamp,
    } | fields


def _prompt(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def main_chain(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        if i % 2 == 0:
            out.append(_line(i, "user", parentUuid=f"u{i - 1}", message=_prompt(f"prompt {i}")))
        else:
            message = {
                "id": f"m{i}",
                "role": "assistant",
                "content": [{"type": "text", "text": f"answer {i}"}],
            }
            out.append(_line(i, "assistant", parentUuid=f"u{i - 1}", message=message))
    return out


def one_sidechain_per_agent(n: int) -> list[dict[str, Any]]:
    return [
        _line(
            i,
            "user",
            isSidechain=True,
            agentId=f"a{i}",
            parentUuid=None,
            message=_prompt(f"side {i}"),
        )
        for i in range(n)
    ]


def sidechain_cycle(n: int) -> list[dict[str, Any]]:
    return [
        _line(
            i,
            "user",
            isSidechain=True,
            agentId="a",
            parentUuid=f"u{(i + 1) % n}",
            message=_prompt(f"side {i}"),
        )
        for i in range(n)
    ]


def with_tool_calls(n: int) -> list[dict[str, Any]]:
    """Main turns with a Task call and its result every few lines, and as many sidechain
    runs answering those calls (each run placed before its call's result)."""
    out: list[dict[str, Any]] = []
    calls = n // 4
    for c in range(calls):
        call = f"toolu_{c}"
        use = {"type": "tool_use", "id": call, "name": "Task", "input": {"prompt": f"task {c}"}}
        out.append(_line(4 * c, "user", message=_prompt(f"prompt {c}")))
        out.append(
            _line(
                4 * c + 1,
                "assistant",
                message={"id": f"m{c}", "role": "assistant", "content": [use]},
            )
        )
        result = {"type": "tool_result", "tool_use_id": call, "content": "done"}
        out.append(
            _line(
                4 * c + 2,
                "user",
                message={"role": "user", "content": [result]},
                toolUseResult={"agentId": f"ag{c}"},
            )
        )
        out.append(
            _line(
                4 * c + 3, "user", isSidechain=True, agentId=f"ag{c}", message=_prompt(f"task {c}")
            )
        )
    return out


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def work(path: Path) -> int:
    """Python lines executed in the sources package while reading ``path``."""
    count = 0

    def local(frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def call(frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        return local if frame.f_code.co_filename.startswith(SOURCES_DIR) else None

    sys.settrace(call)
    try:
        read_claude_session(path)
    finally:
        sys.settrace(None)
    return count


@pytest.mark.parametrize(
    "shape", [main_chain, one_sidechain_per_agent, sidechain_cycle, with_tool_calls]
)
def test_reading_is_linear_in_the_lines(
    tmp_path: Path, shape: Callable[[int], list[dict[str, Any]]]
) -> None:
    small = work(_write(tmp_path / "small.jsonl", shape(1000)))
    large = work(_write(tmp_path / "large.jsonl", shape(4000)))
    assert large < 6 * small, (small, large)  # linear: about 4x; quadratic: 16x


def test_runs_land_before_the_results_of_their_calls(tmp_path: Path) -> None:
    session = read_claude_session(_write(tmp_path / "t.jsonl", with_tool_calls(400)))
    contents = [(m["role"], m["content"]) for m in session.data["messages"]]
    assert len([c for c in contents if c[0] == "user" and c[1].startswith("task ")]) == 100
    for c in range(100):
        at = contents.index(("user", f"task {c}"))
        assert contents[at + 1][0] == "tool"  # the run, then the result of its call
        assert contents[at - 1][0] == "assistant" and contents[at - 2] == ("user", f"prompt {c}")


def test_a_sidechain_cycle_keeps_every_line(tmp_path: Path) -> None:
    session = read_claude_session(_write(tmp_path / "t.jsonl", sidechain_cycle(500)))
    texts = {m["content"] for m in session.data["messages"]}
    assert texts == {f"side {i}" for i in range(500)}
