"""Snapshots of the compact rows (F8) at 80x24: many hits and recent sessions on one screen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.tui.stores import build_store

from .test_screens import app_on, typed

SMALL = (80, 24)


def test_compact_hits(snap_compare: Any, tmp_path: Path) -> None:
    """Search "billing" with compact rows at 80x24: each hit one line (title, badges, the
    matched words highlighted, age and score flush right), the best hit under the cursor."""
    app = app_on(build_store(tmp_path))
    assert snap_compare(app, terminal_size=SMALL, run_before=typed("f8", *"billing"))


def test_compact_recent(snap_compare: Any, tmp_path: Path) -> None:
    """Recent sessions with compact rows at 80x24: one line each, the age and counts on the
    right; every session of the store fits."""
    app = app_on(build_store(tmp_path))
    assert snap_compare(app, terminal_size=SMALL, run_before=typed("f8", "f3"))
