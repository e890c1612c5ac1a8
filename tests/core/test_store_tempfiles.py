"""A writer killed mid-write leaves a temp file; the next write of that session removes it
(``.<id>.json.*.tmp`` files stayed in the session dir: 11 after 30 kills). A live writer's
temp file, another session's and another program's are never touched."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from session_browser.core.files import stale_temp_files
from session_browser.core.store import DefaultSessionStore

# A writer that stops for good once its temp file is written, as one killed mid-write
# would: through the store (under the session lock), or through the atomic writer alone.
_STUCK_WRITER = """
import os, sys, time
from pathlib import Path
from session_browser.core import files
from session_browser.core.store import DefaultSessionStore
def stuck(fd):  # the temp file is written: hang before the rename
    print("writing", flush=True)
    time.sleep(600)
os.fsync = stuck
if sys.argv[3] == "store":
    DefaultSessionStore(sys.argv[1], spill_dir=sys.argv[2]).add_user_message("s1", "never lands")
else:
    files.atomic_write_bytes(Path(sys.argv[1]) / "s1.json", b"{}")
"""


def _temps(d: Path) -> list[str]:
    return sorted(n for n in os.listdir(d) if n.endswith(".tmp"))


def _stuck_writer(d: Path, spill: Path, how: str) -> subprocess.Popen[str]:
    """A writer process that has written its temp file and hangs (waited for, not timed)."""
    child = subprocess.Popen(
        [sys.executable, "-c", _STUCK_WRITER, str(d), str(spill), how],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "writing"
    return child


def _kill(child: subprocess.Popen[str]) -> None:
    child.send_signal(signal.SIGKILL)
    child.wait(30)
    if child.stdout is not None:
        child.stdout.close()


def test_temps_of_writers_killed_mid_write_go_with_the_next_write(tmp_path: Path) -> None:
    d, spill = tmp_path / "sessions", tmp_path / "spill"
    store = DefaultSessionStore(d, spill_dir=spill)
    assert store.add_user_message("s1", "first")
    assert store.add_user_message("s10", "other session")
    for _ in range(5):  # one at a time: each holds the session lock until it is killed
        _kill(_stuck_writer(d, spill, "store"))
    # Each writer removed the temp of the one killed before it (seconds old, not minutes).
    killed = _temps(d)
    assert len(killed) == 1 and killed[0].startswith(".s1.json."), killed
    # Beside them: another session's dead temp, another program's files, a live writer's.
    other = d / ".s10.json.abcdefgh.tmp"
    strangers = [d / ".s1.json.not-ours.tmp", d / "tmpab12cd34.tmp", d / ".s1.json.abcdefgh"]
    for path in (other, *strangers):
        path.write_bytes(b"{}")
    live = _stuck_writer(d, spill, "atomic")
    try:
        (live_temp,) = set(_temps(d)) - set(killed) - {other.name} - {p.name for p in strangers}
        assert stale_temp_files(store.session_path("s1")) == [d / n for n in killed]
        assert store.add_user_message("s1", "second")  # seconds after the kills, not minutes
        assert _temps(d) == sorted([live_temp, other.name, strangers[0].name, strangers[1].name])
        assert all(path.exists() for path in strangers)
        assert [m.content for m in store.get_session("s1").messages] == ["first", "second"]
    finally:
        _kill(live)
    assert store.add_user_message("s1", "third")  # its writer is gone now: so is its temp
    assert not (d / live_temp).exists()
    assert store.add_user_message("s10", "again")
    assert not other.exists()
    assert _temps(d) == sorted([strangers[0].name, strangers[1].name])
