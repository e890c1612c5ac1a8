"""A writer killed mid-write leaves a temp file; the next write of that session removes it
(issue 9: ``.<id>.json.*.tmp`` files stayed in the session dir forever)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from session_browser.core.files import stale_temp_files
from session_browser.core.store import DefaultSessionStore

_KILLED_WRITER = """
import os, sys, time
from session_browser.core.store import DefaultSessionStore
real_fsync = os.fsync
def stuck(fd):  # the temp file is written: hang before the rename, as a crash would
    print("writing", flush=True)
    time.sleep(600)
os.fsync = stuck
DefaultSessionStore(sys.argv[1], spill_dir=sys.argv[2]).add_user_message("s1", "never lands")
"""


def _temps(d: Path) -> list[str]:
    return sorted(n for n in os.listdir(d) if n.endswith(".tmp"))


def test_stale_temp_of_a_killed_writer_is_removed_by_the_next_write(tmp_path: Path) -> None:
    d = tmp_path / "sessions"
    store = DefaultSessionStore(d, spill_dir=tmp_path / "spill")
    assert store.add_user_message("s1", "first")
    assert store.add_user_message("s10", "other session")
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WRITER, str(d), str(tmp_path / "spill")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "writing"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    left = _temps(d)
    assert len(left) == 1 and left[0].startswith(".s1.json.")
    stale = d / left[0]
    # planted beside it: a live writer's fresh temp, another session's, and a stranger's file
    fresh = d / ".s1.json.abcdefgh.tmp"
    fresh.write_bytes(b"{}")
    other = d / ".s10.json.abcdefgh.tmp"
    stranger = d / ".s1.json.not-ours.tmp"
    for path in (other, stranger):
        path.write_bytes(b"{}")
    old = time.time() - 3600
    for path in (stale, other, stranger):
        os.utime(path, (old, old))
    assert stale_temp_files(store.session_path("s1")) == [stale]
    assert store.add_user_message("s1", "second")
    assert not stale.exists()
    assert fresh.exists() and other.exists() and stranger.exists()
    assert [m.content for m in store.get_session("s1").messages] == ["first", "second"]
    assert store.add_user_message("s10", "again")
    assert not other.exists()
