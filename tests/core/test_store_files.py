"""File mechanics: reads leak no descriptor and name the path (issue 9)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from session_browser.core.files import MAX_SESSION_BYTES, read_file_bytes, read_json_file
from session_browser.core.store import DefaultSessionStore


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_directory_named_like_a_session_leaks_no_fd_and_names_its_path(tmp_path: Path) -> None:
    d = tmp_path / "sessions"
    (d / "s1.json").mkdir(parents=True)
    store = DefaultSessionStore(d, spill_dir=tmp_path / "spill")
    before = _fds()
    for _ in range(50):
        with pytest.raises(OSError) as info:
            read_json_file(d / "s1.json")
        assert str(d / "s1.json") in str(info.value)
        assert info.value.filename == str(d / "s1.json")
        store.get_session("s1")
        store.window("s1")
        assert store.recent(limit=5) == []
    assert _fds() == before


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_fifo_and_oversized_files_leak_no_fd(tmp_path: Path) -> None:
    fifo = tmp_path / "f.json"
    os.mkfifo(fifo)
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(2048)
    before = _fds()
    for _ in range(20):
        with pytest.raises(OSError, match="not a regular file"):
            read_file_bytes(fifo, max_bytes=MAX_SESSION_BYTES)
        with pytest.raises(OSError, match="over the 1024-byte limit"):
            read_file_bytes(big, max_bytes=1024)
    assert _fds() == before
    assert read_file_bytes(big, max_bytes=4096) == b"\0" * 2048
    assert read_file_bytes(big) == b"\0" * 2048
