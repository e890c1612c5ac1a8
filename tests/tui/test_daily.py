"""Daily-use habits: paging past the first hits, a viewer that follows its session, saved
searches, one key map."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.binding import Binding
from textual.widgets import Input

from session_browser.core.saved_searches import SavedSearch, load_saved, saved_path
from session_browser.tui import backend as backend_module
from session_browser.tui.backend import SEARCH_LIMIT
from session_browser.tui.keymap import keymap_problems, load_keymap
from session_browser.tui.recent.listing import RecentList
from session_browser.tui.search.hits import HitList
from session_browser.tui.search.saved import SavedSearchesScreen, SaveSearchScreen
from session_browser.tui.search.screen import MainScreen
from session_browser.tui.viewer.screen import ViewerScreen
from session_browser.tui.viewer.transcript import CONTEXT_LEVELS, TranscriptView

from .conftest import make_app, screen_text, settle
from .conftest import until as _until
from .stores import BASE, HOUR, _msg, _session

SIZE = (120, 36)


def _many(store: Path, n: int, word: str = "zebracorn") -> None:
    store.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        ts = BASE + i * HOUR
        data = _session(
            f"s{i:03d}",
            [_msg("user", f"{word} number {i}", ts), _msg("assistant", "noted", ts + 1)],
            title=f"Session {i}",
        )
        (store / f"s{i:03d}.json").write_text(json.dumps(data), encoding="utf-8")


async def test_more_hits_past_the_first_page_keep_the_cursor(tmp_path: Path) -> None:
    store = tmp_path / "many"
    _many(store, SEARCH_LIMIT + 12)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"zebracorn")
        await settle(pilot, app)
        hits = app.screen.query_one(HitList)
        assert len(hits.hits) == SEARCH_LIMIT
        assert hits.more and hits.row_count == SEARCH_LIMIT + 1
        await pilot.press("down")  # into the list
        await pilot.press("down", "down")
        assert hits.cursor == 2
        await pilot.press("ctrl+n")  # the next page, the cursor stays
        await settle(pilot, app)
        assert len(hits.hits) == SEARCH_LIMIT + 12
        assert hits.cursor == 2 and not hits.more
        assert hits.row_count == len(hits.hits)
        await pilot.press("ctrl+n")  # nothing more: says so
        await settle(pilot, app)
        assert any("Every matching session" in str(n.message) for n in app._notifications)

        # A new query starts at one page again; moving onto the last row fetches more.
        await pilot.press("escape", "ctrl+a", "ctrl+k", *"number")
        await settle(pilot, app)
        assert len(hits.hits) == SEARCH_LIMIT
        assert "more" in screen_text(app) or hits.more
        await pilot.press("down", "end")  # the cursor reaches the "more" row
        await settle(pilot, app)
        assert len(hits.hits) == SEARCH_LIMIT + 12
        assert hits.cursor == SEARCH_LIMIT  # on the first hit of the new page
        assert {h.session_id for h in hits.hits} == {f"s{i:03d}" for i in range(62)}


def _append_turn(store: Path, session_id: str, text: str) -> int:
    """Append a turn to a session file as an agent saves it (one rename); its new length."""
    path = store / f"{session_id}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    last = data["messages"][-1]["timestamp"]
    data["messages"].append(_msg("user", text, last + 60))
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    tmp.replace(path)
    return len(data["messages"]) + len(data.get("archived_messages") or [])


async def test_the_viewer_follows_appended_turns_and_keeps_a_readers_place(
    store: Path,
) -> None:
    """A store without an index: the open viewer and the lists follow the files."""
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        await settle(pilot, app)
        recent = app.screen.query_one(RecentList)
        total = recent.total
        app.open_session("billing-plan", store="", anchor=-1, terms=[], title="Billing")
        await settle(pilot, app)
        viewer = app.screen
        assert isinstance(viewer, ViewerScreen)
        view = viewer.query_one(TranscriptView)
        assert view.at_end()  # opened at the end: it follows, like tail -f
        n = _append_turn(store, "billing-plan", "zebracorn appended while reading")
        await _until(pilot, lambda: len(view.messages) == n, 3)
        await settle(pilot, app)
        assert view.cursor == n - 1 and view.at_end()
        assert "zebracorn appended" in screen_text(app)

        await pilot.press("g")  # the reader goes to the start: the next turn leaves them there
        await settle(pilot, app)
        n = _append_turn(store, "billing-plan", "another appended turn")
        await _until(pilot, lambda: len(view.messages) == n, 3)
        await settle(pilot, app)
        assert view.cursor == 0 and view.scroll_y == 0
        assert any("1 new turn below" in str(m.message) for m in app._notifications)

        # A new session file: Recent (under the viewer) lists it without a restart.
        (store / "late.json").write_text(
            (store / "billing-plan.json").read_text().replace("billing-plan", "late")
        )
        await _until(pilot, lambda: recent.total == total + 1, 3)


async def test_saved_searches_save_list_run_and_survive_a_bad_file(
    store: Path, tmp_path: Path
) -> None:
    path = saved_path()
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"chargefox")
        await settle(pilot, app)
        await pilot.press("ctrl+s")  # asks for a name (the query, selected)
        await settle(pilot, app)
        assert isinstance(app.screen, SaveSearchScreen)
        await pilot.press(*"billing move", "enter")
        await settle(pilot, app)
        assert isinstance(app.screen, MainScreen)
        assert path.stat().st_mode & 0o777 == 0o600
        assert load_saved() == [SavedSearch("billing move", "chargefox")]

        await pilot.press("ctrl+a", "ctrl+k", *"postgres")  # another query...
        await settle(pilot, app)
        await pilot.press("f9")  # ...then the saved one, run from the list
        await settle(pilot, app)
        assert isinstance(app.screen, SavedSearchesScreen)
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.main.query_one("#query", Input).value == "chargefox"
        hits = app.main.query_one(HitList)
        assert [h.session_id for h in hits.hits] == ["billing-plan"]

    path.write_text('{"searches": [oops')  # a bad file: told, never written over
    again = make_app(store)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.press("f9")
        await settle(pilot, again)
        await pilot.press(*"x", "ctrl+s")
        await settle(pilot, again)
        assert isinstance(again.screen, MainScreen)
        warnings = [str(n.message) for n in again._notifications if n.severity == "warning"]
        assert len(warnings) == 2 and all("cannot read" in w for w in warnings), warnings
    assert path.read_text() == '{"searches": [oops'


async def test_the_viewer_context_level_is_remembered(store: Path, config_dir: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        app.open_session("billing-plan", store="", anchor=2, terms=[], title="Billing")
        await settle(pilot, app)
        await pilot.press("minus", "minus")
        await settle(pilot, app)
        level = app.screen.query_one(TranscriptView).context_level
        assert level == len(CONTEXT_LEVELS) - 3
    assert json.loads((config_dir / "settings.json").read_bytes())["context"] == level
    again = make_app(store)
    async with again.run_test(size=SIZE) as pilot:
        again.open_session("billing-plan", store="", anchor=2, terms=[], title="Billing")
        await settle(pilot, again)
        assert again.screen.query_one(TranscriptView).context_level == level


def test_one_key_one_meaning_across_screens(store: Path) -> None:
    """A letter (or Space) is the same action on every screen that binds it, and Ctrl+S
    runs or saves what the screen is for. Answers to a yes/no question are apart."""
    app = make_app(store)
    same = {"back": "back", "close": "back", "cancel": "back", "delete": "act('discard')"}
    meanings: dict[str, set[str]] = {}
    for section, bindings in app.help_sections():
        if section == "Confirmations":
            continue
        for binding in bindings:
            if not isinstance(binding, Binding):
                continue
            action = binding.action.rpartition(".")[2]
            for key in binding.key.split(","):
                meanings.setdefault(key.strip(), set()).add(same.get(action, action))
    letters = {k: v for k, v in meanings.items() if len(k) == 1 or k == "space"}
    assert {k: v for k, v in letters.items() if len(v) > 1} == {}
    assert letters["space"] == {"toggle_mark"}
    assert letters["m"] == {"act('merge')"} and letters["i"] == {"metadata"}
    assert meanings["ctrl+s"] == {"export", "run_import", "save_search"}
    # The texts name the keys as bound (a keymap moves them too).
    assert app.key_for("viewer.metadata") == "i"
    remapped = make_app(store, keymap={"viewer.metadata": "ctrl+i"})
    assert remapped.key_for("viewer.metadata") == remapped.get_key_display(Binding("ctrl+i", ""))


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def test_freed_memory_goes_back_to_the_system() -> None:
    """What an index build or a closed big session frees is returned, not kept (glibc)."""
    if backend_module._TRIM is None or not Path("/proc/self/status").exists():
        pytest.skip("glibc malloc_trim and /proc are needed")
    backend_module.release_free_memory()
    kept = [bytearray(1000) for _ in range(80_000)]  # ~80 MB of glibc heap (not pymalloc's)
    last = kept[-1]  # the top of the heap stays used: freeing the rest trims nothing itself
    del kept
    before = _rss_mb()
    backend_module.release_free_memory()
    assert before - _rss_mb() > 40, (before, _rss_mb())
    assert len(last) == 1000


def test_a_keymap_naming_the_old_sort_id_still_moves_the_sort(
    store: Path, config_dir: Path
) -> None:
    config_dir.mkdir(parents=True)
    (config_dir / "keymap.toml").write_text('"main.sort" = "o"\n')
    assert load_keymap() == {"recent.sort": "o"}
    app = make_app(store)
    assert app.key_for("recent.sort") == "o"
    assert keymap_problems(load_keymap(), app.help_sections()) == []
