"""Keyboard habits: Enter opens the best hit, earlier queries come back with Up / Ctrl+R."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from textual.widgets import Input

from session_browser.core.history import history_path
from session_browser.tui.messages import SearchFinished
from session_browser.tui.search.hits import HitList
from session_browser.tui.search.screen import MainScreen
from session_browser.tui.viewer.screen import ViewerScreen

from .conftest import make_app, screen_text, settle

SIZE = (120, 36)


async def test_enter_in_the_query_opens_the_best_hit(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"billing")
        await settle(pilot, app)
        hits = app.screen.query_one(HitList)
        assert len(hits.hits) >= 2
        best = hits.hits[0].session_id
        assert isinstance(app.focused, Input)
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, ViewerScreen)
        assert app.screen.session_id == best


async def test_enter_before_the_hits_arrive_opens_the_best_one(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"chargefox", "enter")  # before the debounce fired
        await settle(pilot, app)
        assert isinstance(app.screen, ViewerScreen)
        assert app.screen.session_id == "billing-plan"


async def test_replaced_results_put_the_cursor_on_the_best_hit(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"billing")
        await settle(pilot, app)
        main = app.screen
        assert isinstance(main, MainScreen)
        hits = main.query_one(HitList)
        first = hits.hits[0].session_id
        # The same query answered again in another order (the index grew meanwhile), while
        # the user is still in the query field: the cursor is on the new best hit.
        main.rerun_search(keep_cursor=True)
        await settle(pilot, app)
        outcome = dataclasses.replace(
            main.browser.backend.search("billing"), hits=list(reversed(hits.hits))
        )
        main._search_gen += 1
        main._keep_cursor = True
        main.post_message(SearchFinished(main._search_gen, outcome))
        await settle(pilot, app)
        assert hits.hits[0].session_id != first
        assert hits.cursor == 0
        await pilot.press("down")  # into the list: the first row, not the second
        assert app.focused is hits
        assert hits.cursor == 0
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, ViewerScreen)
        assert app.screen.session_id == hits.hits[0].session_id


async def test_history_recall_across_restarts(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        for query in ("chargefox", "retention"):
            query_field = app.screen.query_one("#query", Input)
            query_field.value = ""
            await pilot.press(*query, "enter")
            await settle(pilot, app)
            assert isinstance(app.screen, ViewerScreen)
            await pilot.press("escape")
            await settle(pilot, app)
    saved = json.loads(history_path().read_bytes())
    assert saved == {"queries": ["chargefox", "retention"]}
    assert history_path().stat().st_mode & 0o777 == 0o600

    again = make_app(store)
    async with again.run_test(size=SIZE) as pilot:
        query_field = again.screen.query_one("#query", Input)
        await pilot.press("up")
        assert query_field.value == "retention"
        await pilot.press("up")
        assert query_field.value == "chargefox"
        await settle(pilot, again)
        assert [h.session_id for h in again.screen.query_one(HitList).hits] == ["billing-plan"]
        query_field.value = "ret"
        await pilot.press("ctrl+r")  # only the earlier queries containing what is typed
        assert query_field.value == "retention"
        await pilot.press("ctrl+r")
        assert query_field.value == "retention"  # no older match: it stays


async def test_f_keys_switch_screens_instead_of_stacking(store: Path) -> None:
    from session_browser.tui.transfer.screen import ExportScreen, ImportScreen

    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        for key in ("f6", "f7", "f6", "f7", "f4", "f6"):
            await pilot.press(key)
            await settle(pilot, app)
        assert isinstance(app.screen, ExportScreen)
        assert len(app.screen_stack) == 2  # main + the one shown
        await pilot.press("f7", "f7")
        await settle(pilot, app)
        assert isinstance(app.screen, ImportScreen) and len(app.screen_stack) == 2
        await pilot.press("escape")
        await settle(pilot, app)
        assert isinstance(app.screen, MainScreen)
        # From a viewer: the viewer stays under the screen the F-keys switch.
        await pilot.press(*"chargefox", "enter")
        await settle(pilot, app)
        assert isinstance(app.screen, ViewerScreen)
        await pilot.press("f6", "f7", "f6")
        await settle(pilot, app)
        assert isinstance(app.screen, ExportScreen)
        assert [type(s).__name__ for s in app.screen_stack] == [
            "MainScreen",
            "ViewerScreen",
            "ExportScreen",
        ]


async def test_ctrl_c_asks_to_quit(store: Path) -> None:
    from session_browser.tui.app import QuitConfirm

    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert isinstance(app.screen, QuitConfirm)
        assert "[b]" not in screen_text(app)
        await pilot.press("n")  # stays
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        assert not app._exit
        await pilot.press("ctrl+c")
        await pilot.pause()
        await pilot.press("ctrl+c")  # twice: quits
        await pilot.pause()
        assert app._exit  # the app is on its way out


async def test_compact_rows_and_settings_persist_across_restart(
    store: Path, config_dir: Path
) -> None:
    from session_browser.tui.recent.listing import RecentList

    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"billing")
        await settle(pilot, app)
        hits = app.screen.query_one(HitList)
        full = hits.virtual_size.height
        assert full >= 2 * 5  # several lines a hit
        await pilot.press("f8")
        await settle(pilot, app)
        assert hits.virtual_size.height == len(hits.hits)  # one line a hit
        assert "Billing migration" in screen_text(app)
        await pilot.press("ctrl+t", "f3", "down", "s")  # light theme, sort by created
        await settle(pilot, app)
        recent = app.screen.query_one(RecentList)
        assert recent.virtual_size.height == recent.total == 6
    path = config_dir / "settings.json"
    assert path.stat().st_mode & 0o777 == 0o600
    assert json.loads(path.read_bytes()) == {
        "compact": True,
        "context": None,
        "sort": "created",
        "theme": "textual-light",
        "vault_off": [],  # the sources whose history the vault does not keep: none
    }

    again = make_app(store)
    async with again.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"billing")
        await settle(pilot, again)
        assert again.theme == "textual-light"
        main = again.screen
        assert isinstance(main, MainScreen) and main.sort == "created"
        hits = main.query_one(HitList)
        assert hits.virtual_size.height == len(hits.hits) == 2
        await pilot.press("f8")  # back to full rows, remembered too
        await settle(pilot, again)
        assert hits.virtual_size.height > 2 * 2
    assert json.loads(path.read_bytes())["compact"] is False


async def test_a_bad_settings_file_gives_the_defaults(store: Path, config_dir: Path) -> None:
    config_dir.mkdir(parents=True)
    (config_dir / "settings.json").write_text('{"theme": 3, "compact": "yes", "sort": "x"')
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert app.theme == "textual-dark"
        assert not app.screen.query_one(HitList).compact


async def test_keymap_with_unknown_id_or_conflicting_key_warns_at_start(
    store: Path, config_dir: Path
) -> None:
    config_dir.mkdir(parents=True)
    (config_dir / "keymap.toml").write_text(
        '"viewer.next_hitt" = "n"\n"app.theme" = "ctrl+t,f2"\n"list.first" = "g,home"\n'
    )
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        texts = [str(n.message) for n in app._notifications]
        assert any("unknown binding id 'viewer.next_hitt'" in t for t in texts), texts
        # f2 is the Search key everywhere: giving it to the theme too is a conflict.
        assert any("'f2'" in t and "'app.search'" in t and "'app.theme'" in t for t in texts)
        assert not any("'g'" in t for t in texts)  # a free key: no warning
        assert sum("'f2'" in line for t in texts for line in t.splitlines()) == 1  # said once


async def test_a_sound_keymap_gives_no_warning(store: Path, config_dir: Path) -> None:
    config_dir.mkdir(parents=True)
    (config_dir / "keymap.toml").write_text('"viewer.next_hit" = "n,ctrl+n"\n')
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert not [n for n in app._notifications if n.severity != "information"]


async def test_letters_typed_in_the_hit_list_go_back_to_the_query(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"billing")
        await settle(pilot, app)
        hits = app.screen.query_one(HitList)
        await pilot.press("down")
        assert app.focused is hits
        await pilot.press("space", "p", "l")
        query_field = app.screen.query_one("#query", Input)
        assert app.focused is query_field
        assert query_field.value == "billing pl"
        await pilot.press("down", "e")  # a key the list binds keeps its action
        await pilot.pause()
        assert type(app.screen).__name__ == "ExplainScreen"


async def test_copy_the_id_and_file_of_the_session_in_hand(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"chargefox")
        await settle(pilot, app)
        await pilot.press("ctrl+y")  # from the query: the best hit
        assert app.clipboard == "billing-plan"
        await app.run_action("copy_session_path")
        assert Path(app.clipboard) == store / "billing-plan.json"
        await pilot.press("enter")
        await settle(pilot, app)
        app.copy_to_clipboard("")
        await pilot.press("ctrl+y")  # in the viewer: its session
        assert app.clipboard == "billing-plan"
        (store / "billing-plan.json").unlink()
        app.copy_to_clipboard("")
        await app.run_action("copy_session_path")
        await pilot.pause()
        assert app.clipboard == ""
        assert any(
            "No file holds session billing-plan" in str(n.message) for n in app._notifications
        )


async def test_export_shows_what_it_exports_at_80x24(store: Path) -> None:
    from textual.widgets import RadioSet

    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await pilot.press("f6")
        await settle(pilot, app)
        scope = app.screen.query_one("#x-scope", RadioSet)
        assert scope.size.width >= 20  # was squeezed to a "…"
        assert "All sessions (6)" in screen_text(app)
