"""Snapshots of the export and import screens (fixed clock, relative paths only)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from session_browser.tui.transfer.screen import ExportScreen, ImportScreen
from tests.snapshots.test_snap_quarantine import demo_app, settle

SIZE = (120, 36)


def test_export_screen(snap_compare: Any, tmp_path: Path) -> None:
    """Export opened from the viewer: "Open session" (chosen) or all 19 sessions; JSON,
    Markdown or HTML; redaction off, continuations on; the path defaults to
    <session id>.json relative to ~/work, and the line below says what will be written."""
    app, info = demo_app(tmp_path)

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        app.open_session(info.decision_id, store="", anchor=-1, terms=[], title="")
        await settle(pilot)
        await pilot.press("f6")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ExportScreen)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_import_screen_dry_run(snap_compare: Any, tmp_path: Path) -> None:
    """Import after a dry run of export.json (in ~/work): it would import the two sessions
    the store lacks and skips the one it already has ("already exists (use overwrite)");
    nothing was written, and Ctrl+S is now offered in the footer."""
    app, info = demo_app(tmp_path)
    keep = [info.decision_id, info.archived_id]
    payload = {
        "version": 1,
        "sessions": [
            {"session_id": "imported-one", "messages": [], "metadata": {"title": "One"}},
            {"session_id": "imported-two", "messages": [], "metadata": {"title": "Two"}},
            {"session_id": keep[0], "messages": []},
        ],
    }
    (Path.cwd() / "export.json").write_text(json.dumps(payload), encoding="utf-8")

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("f7")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, ImportScreen)
        await pilot.press(*"export.json", "enter")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
