"""Reading and parsing the files of a first build: in this process, or in one worker process
while this one writes the rows of the batches before.

A first build spends about as long reading, parsing and (with the vault on) hashing and
compressing the files as it spends writing rows, and a thread beside the writer cannot help
(both need the GIL for every row). A worker process can: it reads and parses batch n+1 while
this process writes batch n, and hands over each file's rows, and its bytes hashed and
compressed for the vault. It only reads: every write stays in this process, in the same
transactions as without it. It ends when this process closes its pipe (or dies: the pipe
closes then too), and if it fails, the batches it did not hand back are parsed here.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import queue
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from ..files import FileIdentity
from ..sources.base import SessionSource, Skip
from ..vault.bulk import seal
from . import hidden
from .rows import Parsed, extract, safely, skip_reason

log = logging.getLogger("session_browser.index")

#: One file to parse: (name, identity, the parse state kept of it or None).
Task = tuple[str, tuple[int, int, int], bytes | None]
#: One file parsed: (name, its rows or why it is skipped, whether the parse resumed).
Done = tuple[str, Parsed | str, bool | None]
IN_FLIGHT = 2  # batches handed to the worker and not yet back (what it holds at most)
AHEAD = 2  # later batches parsed here, waiting for their turn, at most


def parse_one(
    source: SessionSource,
    name: str,
    ident: tuple[int, int, int],
    prior: bytes | None,
    *,
    folded: bool,
    sealed: bool = False,
) -> Done:
    """One file as index rows, or the reason it cannot be indexed (anything its content
    raises included). ``sealed``: its bytes (when the source kept them) are also hashed and
    compressed as the vault stores them."""
    try:
        doc = source.parse(name, ident, prior)
        resumed = doc.resumed
        if isinstance(doc, Skip):
            return name, doc.reason, resumed
        try:
            parsed = extract(name, FileIdentity(*ident), doc.data, folded=folded)
        except Exception as exc:  # one file's content never stops the others
            return name, skip_reason(exc), resumed
        if doc.automated is not None:
            parsed.row.settle_automation(doc.automated)
        parsed.state = doc.state
        parsed.hidden = safely([], hidden.hidden_rows, doc.data, folded)
        parsed.partly = doc.skipped
        parsed.raw = doc.raw
        if sealed and doc.raw is not None:
            parsed.sealed = seal(doc.raw)
        return name, parsed, resumed
    except Exception as exc:
        log.warning("%s: skipped: %s", name, exc)
        return name, skip_reason(exc), None


def _work(tasks_fd: int, out_fd: int) -> None:
    """The worker (a fresh interpreter, see :class:`Worker`): its settings, then batches of
    tasks in and batches of parsed files out, until the tasks pipe closes."""
    tasks = Connection(tasks_fd, writable=False)
    out = Connection(out_fd, readable=False)
    source, folded, sealed = tasks.recv()
    # Tasks are read as they come, so a batch sent while a result is on its way never
    # waits for it (both pipes full would stop both processes).
    inbox: queue.SimpleQueue[list[Task] | None] = queue.SimpleQueue()

    def read() -> None:
        try:
            while True:
                inbox.put(tasks.recv())
        except (EOFError, OSError):
            inbox.put(None)

    threading.Thread(target=read, daemon=True).start()
    try:
        out.send("ready")
        while (batch := inbox.get()) is not None:
            out.send(
                [parse_one(source, n, i, p, folded=folded, sealed=sealed) for n, i, p in batch]
            )
    except OSError:  # the index's process is gone
        return


_BOOT = (
    "import sys\n"
    "root = sys.argv[1]\n"
    "if root not in sys.path:\n"
    "    sys.path.insert(0, root)\n"
    "from session_browser.core.index.parsing import _work\n"
    "_work(*map(int, sys.argv[2:]))\n"
)


class Worker:
    """One worker process parsing batches for a first build (see the module doc).

    A fresh interpreter running this module (not :mod:`multiprocessing`, which would run the
    caller's main script again in it), on two pipes of its own; its output goes nowhere."""

    def __init__(self, source: SessionSource, *, folded: bool, sealed: bool) -> None:
        if not sys.executable or os.name != "posix":
            raise OSError("no interpreter to start on two pipes of its own")
        task_r, task_w = os.pipe()
        out_r, out_w = os.pipe()
        package = Path(__file__).resolve().parents[3]  # where session_browser is imported from
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", _BOOT, os.fspath(package), str(task_r), str(out_w)],
                pass_fds=(task_r, out_w),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except BaseException:
            for fd in (task_w, out_r):
                os.close(fd)
            raise
        finally:
            os.close(task_r)
            os.close(out_w)
        self._tasks = Connection(task_w, readable=False)
        self._results = Connection(out_r, writable=False)
        self.ready = False
        try:
            self._tasks.send((source, folded, sealed))
        except BaseException:
            self.close()
            raise

    def poll_ready(self) -> bool:
        """Whether the worker has started (never waits)."""
        if not self.ready and self._results.poll():
            self.ready = self._results.recv() == "ready"
        return self.ready

    def send(self, batch: list[Task]) -> None:
        self._tasks.send(batch)

    def has_result(self) -> bool:
        """Whether a batch is back (never waits)."""
        return self._results.poll()

    def recv(self) -> list[Done]:
        result: list[Done] = self._results.recv()
        return result

    def close(self) -> None:
        for conn in (self._tasks, self._results):
            with contextlib.suppress(OSError):
                conn.close()
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


def picklable(value: Any) -> bool:
    try:
        pickle.dumps(value)
    except Exception:
        return False
    return True


def batches(
    todo: Sequence[Task],
    size: int,
    parse: Callable[[Task], Done],
    worker: Worker | None,
) -> Iterator[list[Done]]:
    """The parsed files of ``todo``, ``size`` at a time and in order. With a ``worker``, a
    batch is parsed here until the worker has started (and when it fails); after that it
    parses up to :data:`IN_FLIGHT` batches ahead of the one handed back, and rather than
    wait for one, this process parses a later batch itself (up to :data:`AHEAD` of them)."""
    chunks = [list(todo[start : start + size]) for start in range(0, len(todo), size)]
    sent: deque[int] = deque()  # the batches the worker holds, in order
    ahead: dict[int, list[Done]] = {}  # later batches parsed here while the worker was busy
    assigned = 0  # the batches before this one are sent or parsed
    try:
        for index, chunk in enumerate(chunks):
            done = ahead.pop(index, None)
            if done is None and worker is not None:
                try:
                    here = not sent or sent[0] != index
                    if here:
                        assigned = max(assigned, index + 1)
                    if worker.poll_ready():
                        while len(sent) < IN_FLIGHT and assigned < len(chunks):
                            worker.send(chunks[assigned])
                            sent.append(assigned)
                            assigned += 1
                    if not here:
                        while (
                            not worker.has_result()
                            and len(ahead) < AHEAD
                            and assigned < len(chunks)
                        ):
                            ahead[assigned] = [parse(task) for task in chunks[assigned]]
                            assigned += 1
                        sent.popleft()
                        done = worker.recv()
                except Exception as exc:  # it died, or sent what cannot be read
                    log.warning("the parsing worker stopped (%s): parsing here", exc)
                    worker.close()
                    worker, done = None, None
                    sent.clear()
            yield done if done is not None else [parse(task) for task in chunk]
    finally:
        if worker is not None:
            worker.close()
