"""Closing an index never waits on a background reconcile stuck in I/O.

A source that opens its files the plain way (a format someone adds) blocks on a FIFO whose
writer never writes: the reconcile thread is stuck in a real ``read``. ``close`` waits a
bounded time (:data:`CLOSE_WAIT`), then returns, and the app can quit.
"""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

from session_browser.core.index import SqliteSessionStore
from session_browser.core.index.schema import CLOSE_WAIT
from tests.core.test_new_source import TextSource


def _writer_when_read(fifo: Path, deadline: float) -> int:
    """The FIFO's write end, once a reader has it open (O_NONBLOCK: ENXIO until then)."""
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            assert exc.errno == errno.ENXIO, exc
            assert time.monotonic() < deadline, "the reconcile never opened the FIFO"
            time.sleep(0.01)


def test_close_returns_while_the_reconcile_is_stuck_in_a_read(tmp_path: Path) -> None:
    root = tmp_path / "texts"
    root.mkdir()
    (root / "0-ok.txt").write_text("A title\nuser: hello there\n", encoding="utf-8")
    fifo = root / "1-stuck.txt"
    os.mkfifo(fifo)
    source = TextSource(root)
    store = SqliteSessionStore(source.root, source=source, reconcile="none")
    thread = store.start_reconcile()
    writer = _writer_when_read(fifo, time.monotonic() + 60)
    try:
        assert thread.is_alive()  # blocked in read(): the writer is open and never writes
        started = time.monotonic()
        store.close()
        took = time.monotonic() - started
        assert thread.is_alive(), "still stuck: close did not wait for it"
        assert took < CLOSE_WAIT + 10, took
        assert thread.daemon  # never keeps the process from exiting
    finally:
        os.close(writer)  # EOF: the stuck read ends
        thread.join(60)
    assert not thread.is_alive()
