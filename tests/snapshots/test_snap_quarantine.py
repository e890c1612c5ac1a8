"""Snapshot of the quarantine workbench on the demo store (fixed clock, no paths on screen)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input

from session_browser.demo import build_demo_store
from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.rescue.screen import QuarantineList, QuarantineScreen
from tests.tui.stores import NOW

SIZE = (120, 36)


def demo_app(tmp_path: Path) -> tuple[SessionBrowserApp, Any]:
    info = build_demo_store(tmp_path / "home", now=NOW.timestamp())
    app = SessionBrowserApp(
        Backend([info.sessions_dir], indexed=False),
        now=NOW,
        store_labels=["demo-store"],
        keymap={},
        animate=False,
        show_timings=False,
    )
    return app, info


async def settle(pilot: Pilot[Any]) -> None:
    """Every worker finished, its messages handled, and no blinking cursor."""
    for _ in range(3):
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
    for node in pilot.app.screen.query(Input):
        node.cursor_blink = False
    await pilot.pause()


def test_quarantine_with_salvage_preview(snap_compare: Any, tmp_path: Path) -> None:
    """The three demo files listed (kind, name, size, age, session, live or not, the error
    with line/column/byte), the truncated homelab-restic-backups copy selected: on the left
    what the salvage recovered and lost (a partial assistant message) with + for the 5
    messages the live file lacks; on the right the live session with those 5 merged in
    time order. The header badge says 3 in quarantine."""
    app, info = demo_app(tmp_path)

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("f4")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, QuarantineScreen)
        await pilot.press("down")
        await settle(pilot)
        current = screen.query_one(QuarantineList).current()
        assert current is not None and current.path == info.corrupt_files[0]

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_quarantine_with_a_damaged_live_file(snap_compare: Any, tmp_path: Path) -> None:
    """A live session file cut short by a crash, listed with the quarantined ones: the
    ``live`` badge, "live file, damaged" in red and the parse error with line/column/byte.
    It is selected: the salvage on the left (what was recovered, the partial message lost
    at the cut), on the right what r does (restore in place, the damaged bytes kept aside,
    u undoes). The info line counts 1 damaged live file."""
    app, info = demo_app(tmp_path)
    path = info.sessions_dir / f"{info.decision_id}.json"
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) * 2 // 3])
    stamp = NOW.timestamp() - 2 * 3600
    os.utime(path, (stamp, stamp))

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("f4")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, QuarantineScreen)
        lst = screen.query_one(QuarantineList)
        index = [it.path for it in lst.items].index(path)
        await pilot.press("home", *["down"] * index)
        await settle(pilot)
        current = lst.current()
        assert current is not None and current.kind == "live"

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
