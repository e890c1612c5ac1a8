"""The quarantine screen driven with the keyboard on the demo store: act, confirm, undo."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Static

from session_browser.core.paths import data_dir
from session_browser.demo import DemoInfo
from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.common.confirm import ConfirmScreen
from session_browser.tui.rescue.screen import QuarantineList, QuarantineScreen

from .conftest import make_app, screen_text
from .conftest import settle_workers as settle
from .stores import NOW

SIZE = (120, 36)


def preview_text(screen: QuarantineScreen) -> str:
    """Both preview panes as plain text, unwrapped."""
    console = Console(width=400, record=True, file=io.StringIO(), color_system=None)
    for pane in ("#q-salvage-body", "#q-live-body"):
        console.print(screen.query_one(pane, Static).content)
    return console.export_text()


def tree(demo: DemoInfo) -> dict[str, bytes]:
    """Every file of the session dir and the spill dir (lock files aside)."""
    out: dict[str, bytes] = {}
    for base in (demo.sessions_dir, demo.spill_dir):
        for path in sorted(base.rglob("*")):
            if path.is_file() and not path.name.endswith(".lock"):
                out[str(path.relative_to(demo.root))] = path.read_bytes()
    return out


def messages_of(path: Path) -> list[dict[str, object]]:
    data = json.loads(path.read_bytes())
    return list(data["archived_messages"]) + list(data["messages"])


async def open_quarantine(pilot: Pilot[int], app: SessionBrowserApp) -> QuarantineScreen:
    await settle(pilot, app)
    await pilot.press("f4")
    await settle(pilot, app)
    screen = app.screen
    assert isinstance(screen, QuarantineScreen)
    return screen


async def select(pilot: Pilot[int], screen: QuarantineScreen, path: Path) -> None:
    lst = screen.query_one(QuarantineList)
    names = [it.path for it in lst.items]
    assert path in names
    lst.focus()
    await pilot.press("home")
    for _ in range(names.index(path)):
        await pilot.press("down")
    current = lst.current()
    assert current is not None and current.path == path


async def confirm(pilot: Pilot[int], app: SessionBrowserApp, key: str = "y") -> str:
    """Answer the confirmation with ``key``; returns what it said."""
    await settle(pilot, app)
    assert isinstance(app.screen, ConfirmScreen)
    said = screen_text(app)
    await pilot.press(key)
    await settle(pilot, app)
    return said


async def test_list_shows_every_file_and_the_badge(demo: DemoInfo) -> None:
    app = make_app(demo.sessions_dir)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_quarantine(pilot, app)
        items = screen.query_one(QuarantineList).items
        assert {it.path for it in items} == {*demo.corrupt_files, *demo.spill_files}
        assert app.attention == 3
        text = screen_text(app)
        assert "3 in quarantine" in text  # the header badge
        assert "3 files waiting for attention: 2 corrupt, 1 spill" in text
        assert "invalid UTF-8: invalid start byte (line 42, column 44, byte 2119)" in text
        assert "Unterminated string" in text and "no live session" in text


async def test_merge_then_undo_is_byte_identical(demo: DemoInfo) -> None:
    before = tree(demo)
    live = demo.sessions_dir / f"{demo.salvage_id}.json"
    live_before = messages_of(live)
    app = make_app(demo.sessions_dir)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_quarantine(pilot, app)
        await select(pilot, screen, demo.corrupt_files[0])
        await settle(pilot, app)
        text = preview_text(screen)
        # The preview: what was lost, what the live file lacks, side by side with it.
        assert "a partial assistant message at byte 5504, 291 characters cut off" in text
        assert "+ 5 the live file lacks · = 8 it already has" in text
        assert "10 message(s) now; a merge adds 5 (+) → 15" in text
        await pilot.press("m")
        said = await confirm(pilot, app, "n")  # cancelled: nothing changes
        assert f"{demo.salvage_id}.json" in said and "modify" in said
        assert "Merge 5 missing message(s)" in said
        assert tree(demo) == before
        await pilot.press("m")
        await confirm(pilot, app)
        after = messages_of(live)
        assert len(after) == len(live_before) + 5
        stamps = [float(m["timestamp"]) for m in after]  # type: ignore[arg-type]
        assert stamps == sorted(stamps)
        changed = {k for k in before if tree(demo).get(k) != before[k]}
        assert changed == {f"sessions/{demo.salvage_id}.json"}  # nothing else touched
        assert "Merged 5 message(s)" in " ".join(n.message for n in app._notifications)
        assert (data_dir() / "journal").is_dir()
        # Merging again finds nothing missing: the preview says so.
        await settle(pilot, app)
        assert "+ 0 the live file lacks" in preview_text(screen)
        await pilot.press("u")
        said = await confirm(pilot, app)
        assert "Undo the last merge" in said and f"{demo.salvage_id}.json" in said
        assert tree(demo) == before
        assert "+ 5 the live file lacks" in preview_text(screen)


async def test_fold_spill_then_undo(demo: DemoInfo) -> None:
    before = tree(demo)
    spill = demo.spill_files[0]
    live = demo.sessions_dir / f"{demo.spill_owner_id}.json"
    count = len(messages_of(live))
    app = make_app(demo.sessions_dir)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_quarantine(pilot, app)
        await select(pilot, screen, spill)
        await settle(pilot, app)
        await pilot.press("m")  # merge is for corrupt files: a toast says why, nothing runs
        await settle(pilot, app)
        assert isinstance(app.screen, QuarantineScreen)
        await pilot.press("f")
        said = await confirm(pilot, app)
        assert "Fold 2 spilled message(s)" in said
        assert "remove" in said and spill.name in said
        assert not spill.exists()
        assert len(messages_of(live)) == count + 2
        assert app.attention == 2
        assert len(screen.query_one(QuarantineList).items) == 2
        await pilot.press("u")
        await confirm(pilot, app)
        assert tree(demo) == before
        assert app.attention == 3


async def test_discard_restore_and_undo(demo: DemoInfo) -> None:
    before = tree(demo)
    lost = demo.corrupt_files[1]
    app = make_app(demo.sessions_dir)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_quarantine(pilot, app)
        await select(pilot, screen, lost)
        await settle(pilot, app)
        text = preview_text(screen)
        assert "invalid UTF-8 at bytes 2119-2121, 2123-2124" in text
        assert "No live session with this id." in text
        # Restore as a new session, then undo it.
        await pilot.press("r")
        said = await confirm(pilot, app)
        assert f"{demo.lost_id}-restored" in said and "create" in said
        restored = demo.sessions_dir / f"{demo.lost_id}-restored.json"
        assert len(messages_of(restored)) == 10
        assert lost.exists()
        await pilot.press("u")
        await confirm(pilot, app)
        assert tree(demo) == before
        # Discard: moved to our trash, never deleted; undo brings it back.
        await select(pilot, screen, lost)
        await pilot.press("d")
        said = await confirm(pilot, app)
        assert "Move" in said and lost.name in said
        assert not lost.exists()
        trashed = list((data_dir() / "trash").rglob(lost.name))
        assert (
            len(trashed) == 1
            and trashed[0].read_bytes() == before[str(lost.relative_to(demo.root))]
        )
        assert trashed[0].parent.name in said  # the dialog named the folder it went to
        assert app.attention == 2
        await pilot.press("u")
        await confirm(pilot, app)
        assert tree(demo) == before
        assert app.attention == 3
        assert not list((data_dir() / "trash").rglob(lost.name))


async def test_empty_quarantine_and_nothing_to_undo(tmp_path: Path) -> None:
    store = tmp_path / "home" / "sessions"
    store.mkdir(parents=True)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await open_quarantine(pilot, app)
        assert "Nothing in quarantine." in screen_text(app)
        await pilot.press("u")
        await settle(pilot, app)
        assert isinstance(app.screen, QuarantineScreen)
        assert "nothing to undo" in " ".join(n.message for n in app._notifications)
        await pilot.press("escape")
        assert not isinstance(app.screen, QuarantineScreen)


async def test_restore_then_undo_keeps_index_and_recent_list_in_step(demo: DemoInfo) -> None:
    """With the index open, an undone restore leaves no trace in the recent list or search."""
    from session_browser.tui.backend import Backend
    from session_browser.tui.recent.listing import RecentList

    backend = Backend([demo.sessions_dir])  # indexed
    app = SessionBrowserApp(backend, now=NOW, store_labels=["demo"], animate=False)
    restored_id = f"{demo.lost_id}-restored"
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(200):
            await pilot.pause(0.05)
            if app.index_state.mode == "ready":
                break
        assert app.index_state.mode == "ready"
        await pilot.press("f3")
        await settle(pilot, app)
        recent = app.main.query_one(RecentList)
        before_total = recent.total
        screen = await open_quarantine(pilot, app)
        await select(pilot, screen, demo.corrupt_files[1])
        await settle(pilot, app)
        await pilot.press("r")
        await confirm(pilot, app)
        restored = demo.sessions_dir / f"{restored_id}.json"
        assert restored.exists()
        await pilot.pause(0.3)
        await settle(pilot, app)
        assert recent.total == before_total + 1
        assert backend.count(restored_id) == 1
        word = next(
            w
            for m in messages_of(restored)
            for w in str(m.get("content", "")).split()
            if w.isalpha() and len(w) > 6
        )
        assert restored_id in [h.session_id for h in backend.search(word, limit=500).hits]
        await pilot.press("u")
        await confirm(pilot, app)
        assert not restored.exists()
        await pilot.pause(0.3)
        await settle(pilot, app)
        assert backend.count(restored_id) == 0
        assert restored_id not in [h.session_id for h in backend.search(word, limit=500).hits]
        assert recent.total == before_total
        ids = [s.session_id for p in recent.pages.values() for s in p]
        assert restored_id not in ids


def damage_live(demo: DemoInfo) -> tuple[Path, bytes]:
    """Cut a healthy live session file short, as a crash mid-write leaves it."""
    path = demo.sessions_dir / f"{demo.decision_id}.json"
    raw = path.read_bytes()
    damaged = raw[: len(raw) * 2 // 3]
    path.write_bytes(damaged)
    return path, damaged


def toasts(app: SessionBrowserApp) -> str:
    return " | ".join(f"{n.title}: {n.message}" for n in app._notifications)


async def test_a_truncated_live_file_is_restored_in_place_and_undone(demo: DemoInfo) -> None:
    path, damaged = damage_live(demo)
    app = make_app(demo.sessions_dir)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_quarantine(pilot, app)
        items = screen.query_one(QuarantineList).items
        assert {it.path for it in items} == {*demo.corrupt_files, *demo.spill_files, path}
        text = screen_text(app)
        assert "4 files waiting for attention: 2 corrupt, 1 spill, 1 damaged live" in text
        assert "live file, damaged" in text
        await select(pilot, screen, path)
        await settle(pilot, app)
        assert "This is the live file itself, and it is damaged." in preview_text(screen)
        await pilot.press("r")
        said = await confirm(pilot, app, "n")
        assert f"Restore session {demo.decision_id} in place" in said
        assert "modify" in said and "create" in said and ".corrupt-" in said
        assert path.read_bytes() == damaged  # nothing written without a yes
        await pilot.press("r")
        await confirm(pilot, app)
        restored = json.loads(path.read_bytes())
        assert restored["session_id"] == demo.decision_id and restored["messages"]
        [aside] = demo.sessions_dir.glob(f"{demo.decision_id}.json.corrupt-*")
        assert aside.read_bytes() == damaged
        assert "in place" in toasts(app)
        assert f"restored in place as {demo.decision_id}" in screen_text(app)
        assert path not in {it.path for it in screen.query_one(QuarantineList).items}
        await pilot.press("u")
        await confirm(pilot, app)
        assert path.read_bytes() == damaged and not aside.exists()


async def test_restore_under_a_chosen_id_then_a_second_restore_warns(demo: DemoInfo) -> None:
    lost = demo.corrupt_files[1]  # no live session: its own id restores in place
    app = make_app(demo.sessions_dir)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_quarantine(pilot, app)
        await select(pilot, screen, lost)
        await settle(pilot, app)
        await pilot.press("R")
        await settle(pilot, app)
        from textual.widgets import Input

        field = app.screen.query_one("#restore-as-id", Input)
        assert field.value == demo.lost_id
        await pilot.press("enter")
        said = await confirm(pilot, app)
        assert f"as the new session {demo.lost_id}?" in said
        own = demo.sessions_dir / f"{demo.lost_id}.json"
        assert len(messages_of(own)) == 10
        assert f"restored as {demo.lost_id}" in screen_text(app)
        await select(pilot, screen, lost)
        await pilot.press("r")
        await settle(pilot, app)
        assert isinstance(app.screen, QuarantineScreen)
        assert f"already restored as {demo.lost_id}" in toasts(app)
        assert not (demo.sessions_dir / f"{demo.lost_id}-restored.json").exists()


async def test_merge_and_fold_say_why_they_do_not_apply(demo: DemoInfo) -> None:
    app = make_app(demo.sessions_dir)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_quarantine(pilot, app)
        await select(pilot, screen, demo.corrupt_files[1])
        await pilot.press("f")
        await settle(pilot, app)
        assert "Cannot fold: fold is for spill files" in toasts(app)
        await pilot.press("m")
        await settle(pilot, app)
        assert "has no live file to merge into" in toasts(app)
        await select(pilot, screen, demo.spill_files[0])
        await pilot.press("m")
        await settle(pilot, app)
        assert "is a spill file: fold it (f)" in toasts(app)
        assert isinstance(app.screen, QuarantineScreen)


async def test_a_merged_item_says_it_can_be_discarded(demo: DemoInfo) -> None:
    app = make_app(demo.sessions_dir)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_quarantine(pilot, app)
        await select(pilot, screen, demo.corrupt_files[0])
        await settle(pilot, app)
        assert "can be discarded" not in screen_text(app)
        await pilot.press("m")
        await confirm(pilot, app)
        assert f"fully merged into {demo.salvage_id}, can be discarded" in screen_text(app)
