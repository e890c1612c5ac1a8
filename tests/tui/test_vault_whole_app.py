"""A session that is no file of its own (a row of OpenCode's database), deleted by its agent,
opens in the app from its hit, read from the vault's copy and marked deleted."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from textual.widgets import Input, Static

from session_browser.core.open import index_store
from session_browser.core.sources import SOURCES
from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.viewer.screen import ViewerScreen
from tests.core import test_opencode

from .conftest import screen_text, settle
from .stores import NOW

SIZE = (120, 36)


def indexed(root: Path) -> None:
    store = index_store(SOURCES["opencode"], root, vault=True)
    try:
        store.reconcile()
    finally:
        store.close()


async def test_a_deleted_database_session_opens_from_its_hit(tmp_path: Path) -> None:
    root = tmp_path / "opencode"
    root.mkdir()
    db = test_opencode.write_database(root / "opencode.db", test_opencode.sessions())
    sid = test_opencode.SID
    indexed(root)
    with closing(sqlite3.connect(db)) as conn:  # OpenCode adds a turn: a second version
        when = test_opencode.T0 + 10**7
        conn.execute(
            "INSERT INTO message VALUES ('msg_late', ?, ?, ?, ?)",
            (sid, when, when, '{"role": "user"}'),
        )
        conn.execute(
            "INSERT INTO part VALUES ('prt_late', 'msg_late', ?, ?, ?, ?)",
            (sid, when, when, json.dumps({"type": "text", "text": "and the grebe cache"})),
        )
        conn.commit()
    indexed(root)
    with closing(sqlite3.connect(db)) as conn:  # ... then deletes the session
        for table, key in (("part", "session_id"), ("message", "session_id"), ("session", "id")):
            conn.execute(f"DELETE FROM {table} WHERE {key} = ?", (sid,))
        conn.commit()
    app = SessionBrowserApp(
        Backend([f"opencode:{root}"], indexed=True), now=NOW, animate=False, keymap={}
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        box = app.main.query_one("#query", Input)
        box.focus()
        await pilot.press(*"ninety minutes", "enter")
        await settle(pilot, app)
        viewer = app.screen
        assert isinstance(viewer, ViewerScreen)
        assert "expire after ninety minutes" in screen_text(app)
        info = str(viewer.query_one("#viewer-info", Static).render())
        assert f"deleted from {root / 'opencode.db' / sid} on " in info
        assert "version 2 of 2" in info and "grebe" in screen_text(app)
        await pilot.press("less_than_sign")
        await settle(pilot, app)
        assert viewer.version_no == 1 and "grebe" not in screen_text(app)
