"""The stdio transport of ``session-browser mcp``: the SDK's ``stdio_server`` framing over
our own ends of the pipes, with as few thread hand-offs per call as cancellation allows.

The SDK's own stdio transport reads each line and writes and flushes each answer in a
worker thread (three hand-offs per call, each a wake-up the scheduler may delay on a busy
machine) and the tools ran in a fourth. Here one reader thread blocks on stdin and hands
each line to the event loop without waiting; the tools run on the loop itself and each
answer is written there, straight to the pipe. While a tool runs the loop is busy, so the
reader thread is what sees a ``notifications/cancelled``: it calls ``on_cancel`` with the
request's id at once (the running call's flag is set, its SQLite query stops), and the
notification still reaches the SDK after it.

As the SDK does, the process's own stdin and stdout are moved out of the way while serving
(fd 0 reads the null device, fd 1 writes to stderr), so nothing a library prints can
corrupt the protocol's stream; both are put back on exit.

With ``$SESSION_BROWSER_MCP_TIMINGS`` set to a file, the server writes there when it stops
where each tool call's time went inside it (``bench --mcp`` reads it; see :class:`Timings`).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

import orjson
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server

CANCELLED = b'"notifications/cancelled"'
TOOL_CALL = b'"tools/call"'
TIMINGS_ENV = "SESSION_BROWSER_MCP_TIMINGS"


class Timings:
    """Per tool call, in order, the ``time.perf_counter()`` seconds when its line was read,
    its tool started and ended, and its answer was framed, about to be written: measured
    for one call at a time (the calls of ``bench --mcp``), written as JSON to ``path`` by
    :meth:`save`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.calls: list[dict[str, float]] = []

    def read(self, line: bytes) -> None:
        if TOOL_CALL in line:
            self.calls.append({"read": time.perf_counter()})

    def work(self, started: float, ended: float) -> None:
        if self.calls and "started" not in self.calls[-1]:
            self.calls[-1] |= {"started": started, "ended": ended}

    def answered(self) -> None:
        last = self.calls[-1] if self.calls else {}
        if "ended" in last and "answered" not in last:
            last["answered"] = time.perf_counter()

    def save(self) -> None:
        with open(self.path, "w", encoding="utf-8") as out:
            json.dump(self.calls, out)


def timings_from_env() -> Timings | None:
    path = os.environ.get(TIMINGS_ENV)
    return Timings(path) if path else None


def cancelled_id(line: bytes) -> str | None:
    """The request id a ``notifications/cancelled`` line names (as a string), else None."""
    if CANCELLED not in line:
        return None
    try:
        message = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(message, dict) or message.get("method") != "notifications/cancelled":
        return None
    params = message.get("params")
    request_id = params.get("requestId") if isinstance(params, dict) else None
    return None if request_id is None else str(request_id)


class Lines:
    """The lines of the wire's read end, read by a daemon thread and given to the loop as
    they come (an async iterator of ``str``, as the SDK's ``stdio_server`` reads stdin)."""

    def __init__(
        self, fd: int, on_cancel: Callable[[str], None], timings: Timings | None = None
    ) -> None:
        self._fd = fd
        self._on_cancel = on_cancel
        self._timings = timings
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.thread = threading.Thread(target=self._read, name="mcp-stdin", daemon=True)
        self.thread.start()

    def _read(self) -> None:
        put = self._queue.put_nowait
        try:
            # closefd=False: the descriptor stays ours (a blocked read never sees it reused)
            with os.fdopen(self._fd, "rb", closefd=False) as wire:
                for raw in wire:
                    if self._timings is not None:
                        self._timings.read(raw)
                    request_id = cancelled_id(raw)
                    if request_id is not None:
                        self._on_cancel(request_id)
                    self._loop.call_soon_threadsafe(put, raw.decode("utf-8", "replace"))
        except (OSError, ValueError):
            pass
        finally:
            with suppress(RuntimeError):  # the loop is already closed
                self._loop.call_soon_threadsafe(put, None)

    def __aiter__(self) -> AsyncIterator[str]:
        return self

    async def __anext__(self) -> str:
        line = await self._queue.get()
        if line is None:
            raise StopAsyncIteration
        return line


class Wire:
    """The wire's write end: each answer written whole, on the loop, with no hand-off."""

    def __init__(self, fd: int, timings: Timings | None = None) -> None:
        self._fd = fd
        self._timings = timings

    async def write(self, text: str) -> None:
        if self._timings is not None:
            self._timings.answered()
        data = memoryview(text.encode("utf-8"))
        while data:
            data = data[os.write(self._fd, data) :]

    async def flush(self) -> None:
        return None


@contextmanager
def claimed_stdio() -> Iterator[tuple[int, int]]:
    """Private duplicates of fd 0 and 1 (the wire) while fd 0 reads the null device and
    fd 1 writes to stderr; both put back on exit."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        yield wire_in, wire_out
    finally:
        os.close(null)
        os.dup2(wire_out, 1)
        os.dup2(wire_in, 0)
        os.close(wire_out)  # the reader thread may still block on wire_in: left open


async def serve_stdio(
    server: MCPServer, on_cancel: Callable[[str], None], timings: Timings | None = None
) -> None:
    """Serve ``server`` over this process's stdin and stdout until the client closes stdin."""
    lowlevel: Any = server._lowlevel_server  # what the SDK's run_stdio_async serves
    with claimed_stdio() as (wire_in, wire_out):
        stdin: Any = Lines(wire_in, on_cancel, timings)
        stdout: Any = Wire(wire_out, timings)
        async with stdio_server(stdin=stdin, stdout=stdout) as (read, write):
            await lowlevel.run(read, write, lowlevel.create_initialization_options())
