"""Snapshots of the viewer reading Markdown and showing a Pi session's tool calls/thinking."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from tests.tui.stores import NOW
from tests.tui.test_reading import markdown_store, pi_store

from .test_screens import SIZE, app_on, settle


def opened(*keys: str) -> Any:
    """Open the only session from Recent, press ``keys``, no notification left on screen."""

    async def run(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        await pilot.press("down", "enter")
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
        await settle(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()

    return run


def test_markdown_rendered(snap_compare: Any, tmp_path: Path) -> None:
    """The reply's heading, bold words, table and highlighted code blocks, rendered; the
    ``[@bold]`` tag shown as written; the question's title without its ``**``."""
    app = app_on(markdown_store(tmp_path / "home"))
    assert snap_compare(app, terminal_size=SIZE, run_before=opened("g"))


def test_pi_tool_calls_and_thinking_one_line_each(snap_compare: Any, tmp_path: Path) -> None:
    """A Pi session with ``t`` pressed: thinking before the turn that says what it called,
    the call and its result one line each."""
    app = SessionBrowserApp(
        Backend([f"pi:{pi_store(tmp_path)}"], indexed=False),
        now=NOW,
        store_labels=["pi-store"],
        animate=False,
        show_timings=False,
    )
    assert snap_compare(app, terminal_size=SIZE, run_before=opened("t"))
