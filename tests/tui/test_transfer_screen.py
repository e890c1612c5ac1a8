"""Export and import screens driven with the keyboard: files written, dry run before import."""

from __future__ import annotations

import json
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input, RadioSet

from session_browser.core import portable
from session_browser.core.actions.export import ExportJob, run_export
from session_browser.demo import DemoInfo
from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.common.confirm import ConfirmScreen
from session_browser.tui.search.hits import HitList
from session_browser.tui.transfer.screen import ExportScreen, ImportScreen
from session_browser.tui.viewer.screen import ViewerScreen

from .conftest import make_app, said, screen_text
from .conftest import settle_workers as settle

SIZE = (120, 36)


def notes(app: SessionBrowserApp) -> str:
    return " | ".join(n.message for n in app._notifications)


def files_of(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


async def open_export_on(
    pilot: Pilot[int], app: SessionBrowserApp, session_id: str
) -> ExportScreen:
    await settle(pilot, app)
    app.open_session(session_id, store="", anchor=-1, terms=[], title="")
    await settle(pilot, app)
    await pilot.press("f6")
    await settle(pilot, app)
    screen = app.screen
    assert isinstance(screen, ExportScreen)
    return screen


async def choose_format(pilot: Pilot[int], screen: ExportScreen, index: int) -> None:
    """Move the format choice (JSON, Markdown, HTML) to ``index`` with the keyboard."""
    radios = screen.query_one("#x-format", RadioSet)
    radios.focus()
    for _ in range((index - radios.pressed_index) % 3):
        await pilot.press("down")
    await pilot.press("enter")
    assert radios.pressed_index == index


async def test_export_open_session_as_markdown_and_html(demo: DemoInfo) -> None:
    sid = demo.archived_id
    app = make_app(demo.sessions_dir)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_export_on(pilot, app, sid)
        assert screen.scope == "current"
        await choose_format(pilot, screen, 1)
        path_input = screen.query_one("#x-path", Input)
        assert path_input.value == f"{sid}.md"  # the default follows the format
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        md = Path.cwd() / f"{sid}.md"
        text = md.read_text(encoding="utf-8")
        assert "archived" in text.lower()
        assert "Exported 1 session(s)" in notes(app)
        await choose_format(pilot, screen, 2)
        assert path_input.value == f"{sid}.html"
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        html = (Path.cwd() / f"{sid}.html").read_text(encoding="utf-8")
        assert html.lstrip().lower().startswith("<!doctype html")
        assert "<link" not in html.lower() and 'src="http' not in html  # self-contained
        original = json.loads((demo.sessions_dir / f"{sid}.json").read_bytes())
        first_user = next(m for m in original["archived_messages"] if m["role"] == "user")
        assert first_user["content"].split("\n")[0][:40] in html.replace("&#x27;", "'")


async def test_export_key_in_the_viewer_writes_the_open_session(demo: DemoInfo) -> None:
    """Search, Enter opens the best hit, F6 exports it: the file holds that session alone,
    turn for turn as its store file has them, and Esc goes back to the viewer."""
    app = make_app(demo.sessions_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press(*"chargefox")
        await settle(pilot, app)
        best = app.main.query_one(HitList).hits[0].session_id
        await pilot.press("enter")
        await settle(pilot, app)
        viewer = app.screen
        assert isinstance(viewer, ViewerScreen) and viewer.session_id == best
        await pilot.press(app.key_for("app.export").lower())
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, ExportScreen)
        assert (screen.scope, screen.fmt) == ("current", "json")
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        assert screen.outcome is not None and screen.outcome.error is None
        written = Path.cwd() / f"{best}.json"
        payload = json.loads(written.read_bytes())
        original = json.loads((demo.sessions_dir / f"{best}.json").read_bytes())
        assert [s["session_id"] for s in payload["sessions"]] == [best]
        exported = payload["sessions"][0]
        assert exported["messages"] == original["messages"]
        assert exported.get("archived_messages", []) == original.get("archived_messages", [])
        assert f"Exported 1 session(s) to {best}.json" in notes(app)
        await pilot.press("escape")
        await settle(pilot, app)
        assert app.screen is viewer


async def test_export_all_json_refuses_to_overwrite_then_replaces(demo: DemoInfo) -> None:
    app = make_app(demo.sessions_dir)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_export_on(pilot, app, demo.decision_id)
        screen.query_one("#x-scope").focus()
        await pilot.press("down", "enter")  # "All sessions"
        assert screen.scope == "all"
        path_input = screen.query_one("#x-path", Input)
        path_input.value = "backup.json"
        path_input.focus()
        await pilot.press("enter")
        await settle(pilot, app)
        target = Path.cwd() / "backup.json"
        payload = json.loads(target.read_bytes())
        assert payload["version"] == 1
        assert sorted(s["session_id"] for s in payload["sessions"]) == sorted(demo.session_ids)
        first = target.read_bytes()
        target.write_bytes(b"keep me")
        await pilot.press("enter")
        said = screen_text(app)
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmScreen)
        said = screen_text(app)
        assert "Replace backup.json?" in said
        await pilot.press("n")
        await settle(pilot, app)
        assert target.read_bytes() == b"keep me"  # refused: unchanged
        await pilot.press("enter")
        await settle(pilot, app)
        await pilot.press("y")
        await settle(pilot, app)
        assert target.read_bytes() == first


async def test_export_redacts_secrets(demo: DemoInfo, tmp_path: Path) -> None:
    store = tmp_path / "secret" / "sessions"
    store.mkdir(parents=True)
    key = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
    data = json.loads((demo.sessions_dir / f"{demo.decision_id}.json").read_bytes())
    data["messages"][0]["content"] = f"my key is {key} and mail me at ann@example.com"
    (store / f"{demo.decision_id}.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_export_on(pilot, app, demo.decision_id)
        screen.query_one("#x-redact").focus()
        await pilot.press("space")
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        out = (Path.cwd() / f"{demo.decision_id}.json").read_text(encoding="utf-8")
        assert key not in out and "ann@example.com" not in out
        assert demo.decision_id in out
        assert "Redacted" in screen_text(app)


def test_export_cancelled_writes_nothing(demo: DemoInfo) -> None:
    from session_browser.tui.backend import Backend

    backend = Backend([demo.sessions_dir], indexed=False)
    seen: list[tuple[int, int, str]] = []
    target = Path.cwd() / "all.json"
    job = ExportJob("all", [], "json", False, False, target)
    out = run_export(
        backend.group,
        job,
        progress=lambda d, t, s: seen.append((d, t, s)),
        cancelled=lambda: bool(seen),
    )
    assert out.cancelled and out.error is None
    assert not target.exists()
    full = run_export(backend.group, job, progress=lambda d, t, s: seen.append((d, t, s)))
    assert full.sessions == len(demo.session_ids) and target.exists()
    assert (len(demo.session_ids), len(demo.session_ids), "reading") in seen


async def test_import_dry_run_then_confirmed_import(demo: DemoInfo, tmp_path: Path) -> None:
    export = tmp_path / "export.json"
    app = make_app(demo.sessions_dir)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_export_on(pilot, app, demo.decision_id)
        screen.query_one("#x-scope").focus()
        await pilot.press("down", "enter")
        screen.query_one("#x-path", Input).value = str(export)
        await pilot.press("ctrl+s")
        await settle(pilot, app)
    assert export.is_file()

    empty = tmp_path / "empty" / "sessions"
    empty.mkdir(parents=True)
    app = make_app(empty)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("f7")
        await settle(pilot, app)
        importer = app.screen
        assert isinstance(importer, ImportScreen)
        await pilot.press("ctrl+s")  # no dry run yet: refused
        await settle(pilot, app)
        assert isinstance(app.screen, ImportScreen) and files_of(empty) == {}
        await pilot.press(*"nope", "enter")
        await settle(pilot, app)
        assert "Cannot import" in screen_text(app) and files_of(empty) == {}
        importer.query_one("#i-path", Input).value = str(export)
        await pilot.press("f5")
        await settle(pilot, app)
        n = len(demo.session_ids)
        # (a long tmp path wraps the lines: the words are compared, not the line breaks)
        text = said(app)
        assert "nothing was written" in text
        assert f"Would import {n} session(s) into test-store" in text
        assert files_of(empty) == {}  # a dry run writes nothing
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmScreen)
        assert f"Import {n} sessions?" in screen_text(app)
        await pilot.press("n")
        await settle(pilot, app)
        assert files_of(empty) == {}
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        await pilot.press("y")
        await settle(pilot, app)
        written = files_of(empty)
        assert len([f for f in written if f.endswith(".json")]) == n
        assert f"Imported {n} session(s)" in screen_text(app)
        original = json.loads((demo.sessions_dir / f"{demo.archived_id}.json").read_bytes())
        copy = json.loads(written[f"{demo.archived_id}.json"])
        assert copy["archived_messages"] == original["archived_messages"]
        assert copy["messages"] == original["messages"]
        # A second dry run skips every session: they exist; overwrite is an explicit option.
        await pilot.press("f5")
        await settle(pilot, app)
        text = screen_text(app)
        assert "Would import 0 session(s)" in text and "already exists" in text
        importer.query_one("#i-overwrite").focus()
        await pilot.press("space")
        await pilot.press("f5")
        await settle(pilot, app)
        assert f"Would import {n} session(s)" in screen_text(app)
        assert "replace" in screen_text(app)
        assert files_of(empty) == written


async def test_redacted_import_over_a_session_needs_a_second_yes_and_undoes(
    demo: DemoInfo, tmp_path: Path
) -> None:
    sid = "homelab-restic-backups"
    target = demo.sessions_dir / f"{sid}.json"
    original = target.read_bytes()
    data, counts = portable.export_bytes([json.loads(original)], "json", redact=True)
    assert counts == {"secret": 1}
    payload = json.loads(data)
    payload["sessions"].append({**payload["sessions"][0], "session_id": "restic-copy"})
    export = tmp_path / "redacted.json"
    export.write_text(json.dumps(payload), encoding="utf-8")
    app = make_app(demo.sessions_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("f7")
        await settle(pilot, app)
        importer = app.screen
        assert isinstance(importer, ImportScreen)
        importer.query_one("#i-path", Input).value = str(export)
        importer.query_one("#i-overwrite").focus()
        await pilot.press("space")
        await pilot.press("f5")
        await settle(pilot, app)
        text = screen_text(app)
        assert "Would create 1:" in text and "Would replace 1:" in text
        assert text.index("restic-copy") < text.index("Would replace 1:")
        assert "redacted export" in text and "asks a second time" in text
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        await pilot.press("y")  # the first confirmation
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmScreen)
        assert "Replace 1 session with redacted copies?" in screen_text(app)
        await pilot.press("n")
        await settle(pilot, app)
        assert target.read_bytes() == original
        assert not (demo.sessions_dir / "restic-copy.json").exists()
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        await pilot.press("y")
        await settle(pilot, app)
        await pilot.press("y")  # asked twice
        await settle(pilot, app)
        assert b"[REDACTED:secret]" in target.read_bytes()
        assert (demo.sessions_dir / "restic-copy.json").exists()
        assert "Imported 2 session(s) (created 1, replaced 1). Undo: F4, then u." in notes(app)
        assert "Undo: F4 (quarantine workbench), then u" in screen_text(app)
        await pilot.press("escape")
        await settle(pilot, app)
        await pilot.press("f4")
        await settle(pilot, app)
        await pilot.press("u")
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmScreen) and "Undo the last import" in screen_text(app)
        await pilot.press("y")
        await settle(pilot, app)
    assert target.read_bytes() == original
    assert not (demo.sessions_dir / "restic-copy.json").exists()


async def test_checkbox_and_radio_state_reads_without_colour(demo: DemoInfo) -> None:
    """On and off are told apart by the text, not only by the colour: ``[x]`` / ``[ ]``
    and ``(•)`` / ``( )``, following the values as they change."""
    app = make_app(demo.sessions_dir)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_export_on(pilot, app, demo.archived_id)
        text = screen_text(app)
        assert "(•) JSON (portable)" in text
        assert "( ) Markdown" in text and "( ) HTML (self-contained)" in text
        assert "[ ] Redact secrets and emails" in text
        assert "[x] Add continuations (lineage)" in text
        await choose_format(pilot, screen, 1)
        screen.query_one("#x-redact").focus()
        await pilot.press("space")
        await settle(pilot, app)
        text = screen_text(app)
        assert "( ) JSON (portable)" in text and "(•) Markdown" in text
        assert "[x] Redact secrets and emails" in text
        await pilot.press("escape")
        await settle(pilot, app)
        await pilot.press("escape")
        await settle(pilot, app)
        await pilot.press("f7")
        await settle(pilot, app)
        assert isinstance(app.screen, ImportScreen)
        text = screen_text(app)
        for label in (
            "Overwrite existing sessions",
            "Keep gateway/agent ids",
            "Skip unusable entries",
        ):
            assert f"[ ] {label}" in text
