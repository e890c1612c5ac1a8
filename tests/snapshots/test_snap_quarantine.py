"""Snapshot of the quarantine workbench on the demo store (fixed clock, no paths on screen)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input

from session_browser.demo import build_demo_store
from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.screens.quarantine import QuarantineList, QuarantineScreen
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
