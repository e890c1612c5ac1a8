"""Untrusted text in toasts, closing the stores on exit, exports kept out of the stores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Input
from textual.widgets._toast import Toast

from session_browser.core.actions.export import ExportJob, run_export
from session_browser.core.paths import safe_id
from session_browser.demo import DemoInfo, build_demo_store
from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.common.confirm import ConfirmScreen
from session_browser.tui.rescue.screen import QuarantineScreen
from session_browser.tui.transfer.screen import ExportScreen

from .conftest import make_app
from .conftest import settle_workers as settle
from .stores import NOW, build_store

SIZE = (120, 36)
HOSTILE_IDS = ["[/x]", "[@click=app.quit]x", "[b]bold[/b]\x1b[31m"]


def toast_texts(app: SessionBrowserApp) -> list[str]:
    """What the toasts on screen show, as plain text."""
    return [toast.render().plain for toast in app.screen.query(Toast)]


def corrupt_store(root: Path, session_id: str) -> Path:
    sessions = root / "sessions"
    sessions.mkdir(parents=True)
    data = {
        "session_id": session_id,
        "messages": [
            {"role": "user", "content": "hello", "timestamp": 1.0, "metadata": {}},
            {"role": "assistant", "content": "world", "timestamp": 2.0, "metadata": {}},
        ],
        "created_at": "2026-01-01T00:00:00+00:00",
        "updated_at": "2026-01-01T00:00:00+00:00",
        "metadata": {},
    }
    raw = json.dumps(data, indent=2).encode()
    (sessions / f"{safe_id(session_id)}.json.corrupt-1700000000000").write_bytes(raw[:-10])
    return sessions


@pytest.mark.parametrize("session_id", HOSTILE_IDS)
async def test_quarantine_restore_toast_shows_a_markup_id_literally(
    tmp_path: Path, session_id: str
) -> None:
    sessions = corrupt_store(tmp_path / "home", session_id)
    app = make_app(sessions)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot, app)
        await pilot.press("f4")
        await settle(pilot, app)
        await pilot.press("r")
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(pilot, app)
        assert app.is_running and app.return_code is None
        assert isinstance(app.screen, QuarantineScreen)
        shown_id = session_id.replace("\x1b", "\\x1b")
        notes = [n for n in app._notifications if "Restored" in n.message]
        assert notes and all(not n.markup for n in notes)
        assert f"as session {shown_id}-restored" in notes[-1].message
        assert any(f"{shown_id}-restored" in text for text in toast_texts(app))
        assert not any("\x1b" in text for text in toast_texts(app))
        # Clicking the toast runs nothing (an ``@click`` in an id is not an action).
        await pilot.click(Toast)
        await settle(pilot, app)
        assert app.is_running and app.return_code is None
    restored = json.loads((sessions / f"{safe_id(session_id + '-restored')}.json").read_bytes())
    assert restored["session_id"] == f"{session_id}-restored"


@pytest.mark.parametrize("name", ["[/x]", "[@click=app.quit]x"])
async def test_export_error_toast_shows_a_markup_path_literally(tmp_path: Path, name: str) -> None:
    demo = build_demo_store(tmp_path / "home", now=NOW.timestamp())
    app = make_app(demo.sessions_dir)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot, app)
        await pilot.press("f6")
        await settle(pilot, app)
        assert isinstance(app.screen, ExportScreen)
        path = app.screen.query_one("#x-path", Input)
        path.value = f"{name}/out.json"  # a dir that does not exist: the export fails
        path.focus()
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.is_running and app.return_code is None
        failed = [n for n in app._notifications if n.title == "Export refused"]
        assert failed and not failed[-1].markup
        assert f"no such directory: {name}" in failed[-1].message
        assert any(f"no such directory: {name}" in text for text in toast_texts(app))
    assert not (Path.cwd() / name).exists()


async def test_notify_never_reads_markup(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app.notify("[@click=app.quit]x [/x]\x07", title="[b]t", markup=True)
        await pilot.pause()
        note = list(app._notifications)[-1]
        assert note.markup is False
        assert note.message == "[@click=app.quit]x [/x]\\x07"
        assert note.title == "[b]t"
        assert any("[@click=app.quit]x [/x]\\x07" in t for t in toast_texts(app))
        assert app.is_running


# --------------------------------------------------------------------------- closing the stores


async def test_app_closes_the_stores_on_exit(tmp_path: Path) -> None:
    store = build_store(tmp_path / "home")
    backend = Backend([store])  # indexed: SQLite, a reconcile thread
    app = SessionBrowserApp(backend, now=NOW, animate=False)
    indexed = [s for s in backend.stores if hasattr(s, "start_reconcile")]
    assert indexed
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert all(getattr(s, "_db", None) is not None for s in indexed)
        backend.start_index()  # a build may be running when the user quits
        await pilot.press("ctrl+q")
    assert backend.closed
    for s in indexed:
        thread = getattr(s, "_thread", None)
        assert thread is None or not thread.is_alive()
        assert getattr(s, "_db", "missing") is None
        assert getattr(s, "_watch", None) is None
    backend.close()  # a second close does nothing


async def test_app_closes_the_stores_when_run_test_ends(store: Path) -> None:
    backend = Backend([store])
    app = SessionBrowserApp(backend, now=NOW, animate=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
    assert backend.closed
    for s in backend.stores:
        thread = getattr(s, "_thread", None)
        assert thread is None or not thread.is_alive()
        assert getattr(s, "_db", None) is None


# --------------------------------------------------------------------------- exports stay out


def tree(*dirs: Path) -> dict[str, bytes]:
    return {
        str(p): p.read_bytes()
        for d in dirs
        if d.is_dir()
        for p in sorted(d.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("where", ["live", "new-in-sessions", "spill", "dotdot"])
async def test_export_refuses_to_write_into_a_store(demo: DemoInfo, where: str) -> None:
    sid = demo.decision_id
    target = {
        "live": demo.sessions_dir / f"{sid}.json",
        "new-in-sessions": demo.sessions_dir / "export.json",
        "spill": demo.spill_dir / "export.json",
        "dotdot": demo.sessions_dir / "sub" / ".." / f"{sid}.json",
    }[where]
    before = tree(demo.sessions_dir, demo.spill_dir)
    app = make_app(demo.sessions_dir)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot, app)
        app.open_session(sid, store="", anchor=-1, terms=[], title="")
        await settle(pilot, app)
        await pilot.press("f6")
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, ExportScreen)
        path = screen.query_one("#x-path", Input)
        path.value = str(target)
        path.focus()
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.screen is screen  # no "replace?" question: refused outright
        refused = [n for n in app._notifications if n.title == "Export refused"]
        assert refused and "inside the session store" in refused[-1].message
        assert screen.outcome is None  # nothing ran
    assert tree(demo.sessions_dir, demo.spill_dir) == before


def test_export_job_refuses_a_store_dir_even_when_told_to_replace(demo: DemoInfo) -> None:
    backend = Backend([demo.sessions_dir], indexed=False)
    try:
        live = demo.sessions_dir / f"{demo.decision_id}.json"
        before = live.read_bytes()
        job = ExportJob("all", [], "json", False, False, live, replace=True)
        out = run_export(backend.group, job)
        assert out.error is not None and "inside the session store" in out.error
        assert live.read_bytes() == before
        elsewhere = Path.cwd() / "fine.json"
        ok = run_export(backend.group, ExportJob("all", [], "json", False, False, elsewhere))
        assert ok.error is None and elsewhere.is_file()
    finally:
        backend.close()
