"""The stdio transport: lines read by a thread reach the loop in order, and a cancel on the
wire stops a call that runs on the (then busy) event loop."""

from __future__ import annotations

import os
import threading
import time

import anyio
import pytest
from mcp.server.mcpserver.exceptions import ToolError

from session_browser.mcp import answers
from session_browser.mcp.server import Runner
from session_browser.mcp.stdio import Lines, Wire, cancelled_id

CANCEL = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}\n'


def test_a_cancel_line_names_its_request() -> None:
    assert cancelled_id(CANCEL) == "7"
    assert cancelled_id(CANCEL.replace(b"7", b'"abc"')) == "abc"
    assert cancelled_id(b'{"jsonrpc":"2.0","id":1,"method":"tools/call"}\n') is None
    # the words inside a string are not a cancel
    assert cancelled_id(b'{"method":"tools/call","params":{"q":"notifications/cancelled"}}') is None
    assert cancelled_id(b'{"notifications/cancelled" broken') is None


def test_lines_reach_the_loop_in_order_and_end_at_eof() -> None:
    read_end, write_end = os.pipe()
    cancels: list[str] = []

    async def body() -> list[str]:
        lines = Lines(read_end, cancels.append)
        os.write(write_end, b'{"a": 1}\n{"b": "\xc3\xa9"}\n' + CANCEL)
        os.close(write_end)
        return [line async for line in lines]

    try:
        got = anyio.run(body)
    finally:
        os.close(read_end)
    assert got == ['{"a": 1}\n', '{"b": "é"}\n', CANCEL.decode()]
    assert cancels == ["7"]


def test_the_wire_writes_each_answer_whole() -> None:
    read_end, write_end = os.pipe()
    text = "x" * 200_000 + "é\n"  # more than a pipe holds: written as the reader drains it
    got = bytearray()

    def drain() -> None:
        while chunk := os.read(read_end, 65536):
            got.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        anyio.run(Wire(write_end).write, text)
    finally:
        os.close(write_end)
        reader.join()
        os.close(read_end)
    assert got.decode() == text


def test_a_cancel_on_the_wire_stops_a_call_running_on_the_loop() -> None:
    """The call runs inline, so the loop cannot read; the reader thread sets its flag."""
    read_end, write_end = os.pipe()
    runner = Runner(group=None, inline=True)  # type: ignore[arg-type]
    runner._refreshed = float("inf")  # no index to bring up to date
    started = threading.Event()
    polls: list[int] = []

    def work(stop: answers.Cancelled) -> str:
        started.set()
        deadline = time.monotonic() + 30
        while not stop():  # what SQLite's progress handler does, on the loop thread
            polls.append(1)
            if time.monotonic() > deadline:
                return "never stopped"
        raise answers.Stopped

    def send_cancel() -> None:
        assert started.wait(30)
        os.write(write_end, CANCEL)

    readers: list[Lines] = []

    async def body() -> str:
        readers.append(Lines(read_end, runner.cancel))
        return await runner.run(work, "7")

    sender = threading.Thread(target=send_cancel)
    sender.start()
    try:
        with pytest.raises(ToolError, match="cancelled"):
            anyio.run(body)
    finally:
        sender.join()
        os.close(write_end)
        for lines in readers:
            lines.thread.join(30)
        os.close(read_end)
    assert polls  # it was running when the cancel came


def test_a_call_cancelled_before_it_starts_does_not_run() -> None:
    runner = Runner(group=None, inline=True)  # type: ignore[arg-type]
    runner._refreshed = float("inf")
    runner.cancel("9")
    ran: list[str] = []

    async def body() -> str:
        return await runner.run(lambda _stop: ran.append("ran") or "done", "9")

    with pytest.raises(ToolError, match="cancelled"):
        anyio.run(body)
    assert ran == []
    # other calls run
    assert anyio.run(runner.run, lambda _stop: "done", "10") == "done"
