"""The vault in the app: what deletes history (a status segment), a deleted session read from
the vault's copy, and the kept versions of a session stepped through in the viewer."""

from __future__ import annotations

import os
from pathlib import Path

from textual.widgets import Input, Static

from session_browser.core.open import index_store
from session_browser.core.sources import SOURCES
from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.viewer.screen import ViewerScreen
from tests.core.test_claude import Transcript, text

from .conftest import screen_text, settle
from .stores import NOW, build_store

SIZE = (120, 36)
SID = "11111111-2222-3333-4444-555555555555"
OTHER = "99999999-2222-3333-4444-555555555555"


def claude_dir(root: Path) -> tuple[Path, Transcript]:
    t = Transcript(SID)
    t.prompt("where is the heron config kept")
    t.answer("m1", text("The heron config is in etc, beside the egret notes."))
    path = t.write(root / "proj" / f"{SID}.jsonl")
    o = Transcript(OTHER)
    o.prompt("what about the osprey")
    o.answer("m2", text("The osprey is fine."))
    o.write(root / "proj" / f"{OTHER}.jsonl")
    return path, t


def indexed(root: Path) -> None:
    store = index_store(SOURCES["claude"], root, vault=True)
    try:
        store.reconcile()
    finally:
        store.close()


def app_for(root: Path) -> SessionBrowserApp:
    return SessionBrowserApp(
        Backend([f"claude:{root}"], indexed=True), now=NOW, animate=False, keymap={}
    )


async def test_a_deleted_session_opens_from_its_hit(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    path, t = claude_dir(root)
    indexed(root)
    t.prompt("and the grebe one")  # appended: a second version
    t.write(path)
    indexed(root)
    path.unlink()
    app = app_for(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        box = app.main.query_one("#query", Input)
        box.focus()
        await pilot.press(*"heron", "enter")
        await settle(pilot, app)
        viewer = app.screen
        assert isinstance(viewer, ViewerScreen)
        shown = screen_text(app)
        assert "The heron config is in etc" in shown
        info = str(viewer.query_one("#viewer-info", Static).render())
        assert f"deleted from {path} on " in info
        assert "version 2 of 2" in info and "grebe" in screen_text(app)
        await pilot.press("less_than_sign")
        await settle(pilot, app)
        assert viewer.version_no == 1 and "grebe" not in screen_text(app)
        await pilot.press("greater_than_sign")  # back to the latest kept copy
        await settle(pilot, app)
        assert viewer.version_no == 2 and "grebe" in screen_text(app)
        info = str(viewer.query_one("#viewer-info", Static).render())
        assert "version 2 of 2" in info and "removed" not in info
        await pilot.press("escape", "f3")  # the recent list marks it as the hit rows do
        await settle(pilot, app)
        rows = [
            line for line in screen_text(app).splitlines() if "heron" in line or "osprey" in line
        ]
        assert len(rows) == 2
        assert ["deleted from" in row for row in rows] == [True, False]


async def test_the_viewer_steps_through_kept_versions_and_marks_removed_turns(
    tmp_path: Path,
) -> None:
    root = tmp_path / "projects"
    path, _t = claude_dir(root)
    indexed(root)
    later = Transcript(SID)  # rewritten: the heron turns dropped, a new one written
    later.prompt("now the kestrel settings")
    later.answer("m3", text("The kestrel settings are in var."))
    later.write(path)
    indexed(root)
    app = app_for(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        box = app.main.query_one("#query", Input)
        box.focus()
        await pilot.press(*"kestrel", "enter")
        await settle(pilot, app)
        viewer = app.screen
        assert isinstance(viewer, ViewerScreen) and viewer.session_id == SID
        assert len(viewer.versions) == 2 and viewer.version_no is None
        await pilot.press("less_than_sign")
        await settle(pilot, app)
        info = str(viewer.query_one("#viewer-info", Static).render())
        assert "version 1 of 2 (" in info and "2 turns removed in version 2" in info
        shown = screen_text(app)
        assert "The heron config is in etc" in shown and "kestrel settings are" not in shown
        assert shown.count("removed in version 2") == 3  # both turns, and the info line
        await pilot.press("less_than_sign")
        await settle(pilot, app)
        assert viewer.version_no == 1
        await pilot.press("greater_than_sign")
        await settle(pilot, app)
        assert viewer.version_no is None
        shown = screen_text(app)
        assert "kestrel settings are" in shown and "removed in version" not in shown
        assert "version 1" not in str(viewer.query_one("#viewer-info", Static).render())
        await pilot.press("escape")
        box.focus()
        box.value = ""
        await pilot.press(*"heron", "enter")  # the hit on the dropped turns: their version
        await settle(pilot, app)
        viewer = app.screen
        assert isinstance(viewer, ViewerScreen) and viewer.version_no == 1
        assert "The heron config is in etc" in screen_text(app)
        await pilot.press("escape", "f3")  # the recent list: the session once, as it is now
        await settle(pilot, app)
        lines = screen_text(app).splitlines()
        assert len([line for line in lines if SID in line]) == 1
        assert len([line for line in lines if OTHER in line]) == 1
        assert not [line for line in lines if "dropped from" in line or "deleted from" in line]


async def test_the_status_line_says_what_deletes_history_and_what_the_vault_keeps(
    tmp_path: Path,
) -> None:
    root = tmp_path / "projects"
    path, _t = claude_dir(root)
    indexed(root)
    path.unlink()
    settings = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text('{"cleanupPeriodDays": 12}')
    app = app_for(root)
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(pilot, app)
        for _ in range(50):  # the index's pass ends (seen by a timer), then the note is read
            if app.index_state.mode != "building":
                break
            await pilot.pause(0.1)
        await settle(pilot, app)
        assert app.vault_note == "vault: 1 deleted kept · Claude Code deletes after 12 d"
        status = str(app.screen.query_one("#status", Static).render())
        assert status == (  # counts and index state first, then the stores by kind
            "2 sessions · index ready · Claude Code · vault: 1 deleted kept · "
            "Claude Code deletes after 12 d"
        )
    plain = SessionBrowserApp(Backend([build_store(tmp_path / "home")], indexed=False), now=NOW)
    async with plain.run_test(size=SIZE) as pilot:
        await settle(pilot, plain)  # PraisonAI without truncate: what the vault keeps only
        assert plain.vault_note == "vault: 1 deleted kept"
