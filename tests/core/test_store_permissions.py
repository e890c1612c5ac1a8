"""Everything the JSON store creates is private under umask 022: files 0600, dirs 0700."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from session_browser.core.paths import ensure_private_dir
from session_browser.core.store import DefaultSessionStore


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _modes(root: Path) -> dict[str, int]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            p = Path(dirpath) / name
            out[str(p.relative_to(root))] = stat.S_IMODE(p.lstat().st_mode)
    return out


def test_store_dirs_files_locks_and_spills_are_private(tmp_path: Path, umask_022: None) -> None:
    root = tmp_path / "new"
    store = DefaultSessionStore(root / "a" / "sessions", spill_dir=root / "b" / "spill")
    assert store.add_user_message("s1", "hello")
    store.session_path("s2").mkdir()  # the next write of s2 fails and spills
    assert store.add_user_message("s2", "spilled") is False
    store.session_path("s2").rmdir()
    modes = _modes(root)
    assert any(name.startswith("b/spill/s2.") for name in modes)
    for name, mode in modes.items():
        is_dir = (root / name).is_dir()
        assert mode == (0o700 if is_dir else 0o600), (name, oct(mode))


def test_ensure_private_dir_only_makes_missing_dirs(tmp_path: Path, umask_022: None) -> None:
    existing = tmp_path / "mine"
    existing.mkdir(mode=0o755)
    made = ensure_private_dir(existing / "x" / "y")
    assert made == existing / "x" / "y" and made.is_dir()
    assert stat.S_IMODE(existing.stat().st_mode) == 0o755
    assert stat.S_IMODE((existing / "x").stat().st_mode) == 0o700
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
    assert ensure_private_dir(made) == made  # idempotent
    (tmp_path / "file").write_text("x")
    with pytest.raises(OSError):
        ensure_private_dir(tmp_path / "file" / "sub")
