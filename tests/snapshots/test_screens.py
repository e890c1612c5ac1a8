"""Snapshots of every screen (pytest-textual-snapshot), 120x36, frozen clock, fixed store.

Each test says what the picture should show. Workers are awaited before each shot, the
input cursor does not blink and toasts are cleared, so the pictures are stable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from tests.tui.conftest import settle as settle_app
from tests.tui.stores import NOW, build_store

SIZE = (120, 36)


def app_on(path: Path) -> SessionBrowserApp:
    app = SessionBrowserApp(
        Backend([path], indexed=False),
        now=NOW,
        store_labels=["test-store"],
        animate=False,
        show_timings=False,
    )
    return app


async def settle(pilot: Pilot[Any]) -> None:
    """Wait by state (the debounce fired, the workers done, their answers handled: a loaded
    machine fires a timer late), then stop the input cursor's blink."""
    app = pilot.app
    assert isinstance(app, SessionBrowserApp)
    await settle_app(pilot, app)
    for node in app.screen.query("Input"):
        node.cursor_blink = False  # type: ignore[attr-defined]
    # A toast lives a few seconds: on a loaded machine it is gone before the shot, on a
    # quiet one it is in it. The pictures are of the screens, not of the toasts.
    app.clear_notifications()
    await pilot.pause()


def typed(*keys: str) -> Any:
    async def run(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        for key in keys:
            if key == "|settle":
                await settle(pilot)
            else:
                await pilot.press(key)
        await settle(pilot)

    return run


def test_search_results(snap_compare: Any, tmp_path: Path) -> None:
    """Search "billing": the plan session first (title, date + age, score, bookends with
    "billing" highlighted), the cron session below with an "automated" badge; the info line
    says 2 sessions matched and that the files were scanned."""
    app = app_on(build_store(tmp_path))
    assert snap_compare(app, terminal_size=SIZE, run_before=typed(*"billing"))


def test_viewer_archived_boundary(snap_compare: Any, tmp_path: Path) -> None:
    """The pg-tuning session opened from a hit in an archived turn: archived turns marked
    ┆ and labelled "archived", the rule "4 earlier turns archived here", the summary labelled
    SUMMARY, the matched turn labelled "search match"."""
    app = app_on(build_store(tmp_path))
    keys = [*"retention policy", "|settle", "enter"]
    assert snap_compare(app, terminal_size=SIZE, run_before=typed(*keys))


def test_recent_list(snap_compare: Any, tmp_path: Path) -> None:
    """Recent sessions, newest first: the hostile title shown literally at the top, badges
    (compacted, automated, continued), message/archived counts and sizes."""
    app = app_on(build_store(tmp_path))
    assert snap_compare(app, terminal_size=SIZE, run_before=typed("f3"))


def test_help(snap_compare: Any, tmp_path: Path) -> None:
    """The help dialog: every binding with its keys, action and binding id."""
    app = app_on(build_store(tmp_path))
    assert snap_compare(app, terminal_size=SIZE, run_before=typed("f1"))


def test_empty_state(snap_compare: Any, tmp_path: Path) -> None:
    """An empty store: says where it looked (test-store) and how to point elsewhere."""
    empty = tmp_path / "empty"
    empty.mkdir()
    assert snap_compare(app_on(empty), terminal_size=SIZE, run_before=typed())


def test_markup_injection(snap_compare: Any, tmp_path: Path) -> None:
    """A transcript full of Rich markup, ANSI/OSC escapes, a bell and RTL marks, opened in the
    viewer: every character is shown literally (escapes as \\x1b, \\u202e), nothing styled
    by the content itself."""
    app = app_on(build_store(tmp_path))
    keys = [*"needle-hostile", "|settle", "enter"]
    assert snap_compare(app, terminal_size=SIZE, run_before=typed(*keys))


def test_light_theme_search(snap_compare: Any, tmp_path: Path) -> None:
    """The search results in the light theme (Ctrl+T)."""
    app = app_on(build_store(tmp_path))
    assert snap_compare(app, terminal_size=SIZE, run_before=typed("ctrl+t", *"temporal"))
