"""What the coding agents' source tests share: the read-only snapshot of an agent's dir and
the CLI's JSON answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from session_browser.cli import main


def snapshot(root: Path, *, itself: bool = False) -> dict[str, tuple[bytes, int, int, int]]:
    """Every file and dir under ``root`` (``itself``: ``root`` too): bytes, inode, mode,
    mtime."""
    out: dict[str, tuple[bytes, int, int, int]] = {}
    for path in sorted([root, *root.rglob("*")] if itself else root.rglob("*")):
        st = path.lstat()
        body = path.read_bytes() if path.is_file() else b""
        out[str(path.relative_to(root))] = (body, st.st_ino, st.st_mode, st.st_mtime_ns)
    return out


def cli(*args: str) -> Any:
    """The JSON a command prints (exit 1: it found nothing)."""
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code in (0, 1), res.output
    out = json.loads(res.output[res.output.index("{") :])
    assert (res.exit_code == 1) == (not out["results"])
    return out


def ids(result: Any) -> list[str]:
    return [h["session_id"] for h in result["results"]]
