""" "Forget this session…" in the app (Ctrl+D), from the viewer and from Recent: a
confirmation that names every place and what goes from it; No changes nothing; Yes erases
the session from the index and the vault and leaves the agent's file alone."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Static

from session_browser.core.index.forget import connect, holding_ids, index_files
from session_browser.core.vault.reading import kept_versions
from session_browser.tui.common.confirm import ConfirmScreen
from session_browser.tui.viewer.screen import ViewerScreen

from .conftest import screen_text, settle, until
from .test_vault_app import OTHER, SID, app_for, claude_dir, indexed

SIZE = (120, 40)


def indexed_ids() -> set[str]:
    out: set[str] = set()
    for path in index_files():
        db = connect(path)
        assert db is not None
        try:
            out |= {sid for _f, sid in holding_ids(db, [SID, OTHER])}
        finally:
            db.close()
    return out


def confirm_body(app: object) -> str:
    screen = app.screen  # type: ignore[attr-defined]
    assert isinstance(screen, ConfirmScreen)
    return "\n".join(str(s.render()) for s in screen.query(Static))


async def test_forget_from_the_viewer_and_from_recent(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    path, _t = claude_dir(root)
    indexed(root)
    before = path.read_bytes()
    assert kept_versions(SID) and indexed_ids() == {SID, OTHER}
    app = app_for(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.main.query_one("#query", Input).focus()
        await pilot.press(*"heron", "enter")
        await settle(pilot, app)
        assert isinstance(app.screen, ViewerScreen)
        await pilot.press("ctrl+d")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), 10)
        body = confirm_body(app)
        assert f"Forget session {SID}?" in body
        assert "index" in body and "vault" in body and "1 version(s)" in body
        assert "agent's own file is left alone" in body
        await pilot.press("n")  # No: nothing changes
        await settle(pilot, app)
        assert isinstance(app.screen, ViewerScreen)
        assert kept_versions(SID) and indexed_ids() == {SID, OTHER}
        await pilot.press("ctrl+d")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), 10)
        await pilot.press("y")
        await until(pilot, lambda: not isinstance(app.screen, (ViewerScreen, ConfirmScreen)), 10)
        await settle(pilot, app)
        assert kept_versions(SID) == [] and indexed_ids() == {OTHER}
        assert path.read_bytes() == before  # the agent's file is not ours

        await pilot.press("f3")
        await settle(pilot, app)
        assert "osprey" in screen_text(app)
        await pilot.press("down")  # into the list (in the filter field Ctrl+D deletes a character)
        await pilot.press("ctrl+d")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), 10)
        assert f"Forget session {OTHER}?" in confirm_body(app)
        await pilot.press("y")
        await until(pilot, lambda: not indexed_ids(), 10)
        assert kept_versions(OTHER) == []
