"""SIGTERM ends ``bench`` as Ctrl+C does: what it started ends with it, its work dir goes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


def children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    out: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # (pid (comm) state ppid ...: comm may hold spaces and parentheses)
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.add(int(entry))
    return out


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
def test_sigterm_ends_the_bench_and_the_processes_it_started(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = os.environ | {
        "HOME": str(tmp_path),
        "PRAISONAI_HOME": str(tmp_path / ".praisonai"),
        "SESSION_BROWSER_CACHE_DIR": str(tmp_path / "cache"),
        "SESSION_BROWSER_DATA_HOME": str(tmp_path / "data"),
        "DO_NOT_TRACK": "1",
    }
    args = ["--sessions", "300", "--no-sgd", "--no-peers", "--no-big-message", "--no-contention"]
    bench = subprocess.Popen(
        [sys.executable, "-m", "session_browser", "bench", *args, "--workdir", str(work)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 300
        started: set[int] = set()
        while not started:  # until it runs a phase in a process of its own
            assert bench.poll() is None, bench.communicate()
            assert time.monotonic() < deadline, "the bench started no process"
            started = children(bench.pid)
            time.sleep(0.02)
        assert any(work.iterdir())  # (its work dir, with the corpus)
        bench.send_signal(signal.SIGTERM)
        _out, err = bench.communicate(timeout=120)
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait()
    assert bench.returncode == 130, err
    assert b"bench: interrupted" in err
    assert [p for p in started if running(p)] == []
    assert list(work.iterdir()) == []
