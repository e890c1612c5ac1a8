"""The app driven with the keyboard (Pilot), on real store files."""

from __future__ import annotations

import json
from pathlib import Path

from textual.command import CommandList, CommandPalette
from textual.widgets import Input

from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.common.explain import ExplainScreen, TextScreen
from session_browser.tui.help.screen import HelpScreen
from session_browser.tui.recent.listing import RecentList
from session_browser.tui.search.hits import HitList
from session_browser.tui.search.screen import MainScreen
from session_browser.tui.viewer.screen import ViewerScreen
from session_browser.tui.viewer.transcript import TranscriptView

from .conftest import make_app, said, screen_text, settle, until
from .stores import HOSTILE_ID, NOW, long_session, snapshot_files

SIZE = (120, 36)


async def test_search_open_hit_next_prev_and_back(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        query = app.screen.query_one("#query", Input)
        assert app.focused is query  # typing searches at once
        await pilot.press(*"chargefox")
        await settle(pilot, app)
        hits = app.screen.query_one(HitList)
        assert [h.session_id for h in hits.hits] == ["billing-plan"]
        assert "1 session matched" in screen_text(app)
        await pilot.press("enter")  # opens the best hit
        await settle(pilot, app)
        assert isinstance(app.screen, ViewerScreen)
        view = app.screen.query_one(TranscriptView)
        assert len(view.messages) == 6
        assert view.cursor == 0  # the anchor: the first message mentions Chargefox
        assert app.screen.matches == [0, 3]
        await pilot.press("n")
        assert view.cursor == 3
        await pilot.press("n")  # wraps
        assert view.cursor == 0
        await pilot.press("N")
        assert view.cursor == 3
        await pilot.press("left_square_bracket")
        assert view.cursor == 2
        await pilot.press("right_square_bracket")
        assert view.cursor == 4
        await pilot.press("G")
        assert view.cursor == 5
        await pilot.press("g")
        assert view.cursor == 0
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)
        assert app.screen.query_one(HitList).hits  # the results are still there


async def test_down_moves_into_hits_and_explain(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"billing")
        await settle(pilot, app)
        hits = app.screen.query_one(HitList)
        assert {h.session_id for h in hits.hits} == {"billing-plan", "nightly-audit-412"}
        automated = next(h for h in hits.hits if h.session_id == "nightly-audit-412")
        assert automated.automated
        await pilot.press("down")
        assert app.focused is hits
        await pilot.press("e")
        assert isinstance(app.screen, ExplainScreen)
        assert "score" in screen_text(app)
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)
        await pilot.press("escape")
        assert isinstance(app.focused, Input)


async def test_archived_hit_opens_at_archived_turn(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"retention policy")
        await settle(pilot, app)
        hit = app.screen.query_one(HitList).hits[0]
        assert hit.session_id == "pg-tuning" and hit.archived
        await pilot.press("enter")  # opens the best hit
        await settle(pilot, app)
        view = app.screen.query_one(TranscriptView)
        assert view.archived_count == 4
        assert view.cursor == hit.anchor_index == 0
        text = screen_text(app)
        assert "archived" in text
        assert "4 earlier turns archived here" in text
        assert "SUMMARY" in text


async def test_recent_open_and_sort_and_filter(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("f3")
        await settle(pilot, app)
        recent = app.screen.query_one(RecentList)
        assert recent.total == 6
        first = recent.summary(0)
        assert first is not None and first.session_id == HOSTILE_ID  # most recently updated
        assert isinstance(app.focused, Input) and app.focused.id == "filter"
        await pilot.press("down")  # from the filter into the list
        assert app.focused is recent and recent.cursor == 0
        await pilot.press("down")
        second = recent.current()
        assert second is not None and second.session_id == "jobs-temporal-2"
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, ViewerScreen)
        assert app.screen.session_id == "jobs-temporal-2"
        view = app.screen.query_one(TranscriptView)
        assert view.cursor == len(view.messages) - 1  # opened at the latest turn
        await pilot.press("escape")
        await pilot.press("s")  # sort by created
        await settle(pilot, app)
        assert app.screen.sort == "created"  # type: ignore[attr-defined]
        await pilot.press("s")  # by size
        await settle(pilot, app)
        biggest = recent.summary(0)
        assert biggest is not None and biggest.session_id == "pg-tuning"
        app.screen.query_one("#filter", Input).focus()
        await pilot.press(*"temporal")
        await settle(pilot, app)
        assert recent.total == 2


async def test_typing_on_the_recent_pane_filters(store: Path) -> None:
    """F3 puts the cursor in the filter: letters filter (``s``/``a`` do not sort or mark);
    in the list, s/a/Space keep their actions and other letters go to the filter."""
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("f3")
        await settle(pilot, app)
        recent = app.screen.query_one(RecentList)
        field = app.screen.query_one("#filter", Input)
        assert recent.total == 6
        await pilot.press(*"temporal")  # has an "a" and no sort happens on the "s"-less word
        await settle(pilot, app)
        assert field.value == "temporal"
        assert recent.total == 2
        assert not recent.marked
        await pilot.press("ctrl+u")  # clear the field (Input binding)
        field.value = ""
        await pilot.press(*"pgs")  # an "s" in the filter: no sort cycling
        await settle(pilot, app)
        assert app.screen.sort == "updated"  # type: ignore[attr-defined]
        assert field.value == "pgs"
        field.value = ""
        await settle(pilot, app)
        assert recent.total == 6
        await pilot.press("enter")  # into the list
        assert app.focused is recent
        await pilot.press("s")  # in the list: sorts
        await settle(pilot, app)
        assert app.screen.sort == "created"  # type: ignore[attr-defined]
        await pilot.press("space")  # marks
        assert len(recent.marked) == 1
        await pilot.press("p", "g")  # other letters go to the filter
        await settle(pilot, app)
        assert app.focused is field
        assert field.value == "pg"
        assert recent.total == 1
        assert "type to filter" in str(app.screen.query_one("#recent-info").render())


async def test_empty_state_says_where_it_looked(tmp_path: Path) -> None:
    empty = tmp_path / "nothing"
    empty.mkdir()
    app = SessionBrowserApp(Backend([empty], indexed=False), now=NOW, animate=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        text = screen_text(app)
        assert "No sessions here yet" in text
        assert str(empty) in text
        assert "--store DIR" in text


async def test_markup_injection_renders_literally_and_app_survives(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"needle-hostile")
        await settle(pilot, app)
        hits = app.screen.query_one(HitList)
        assert [h.session_id for h in hits.hits] == [HOSTILE_ID]
        text = screen_text(app)
        assert "[@click=app.quit]x[/x]" in text
        assert "\\x1b[31mred" in text and "\\u202e" in text
        assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
        await pilot.press("enter")  # opens the best hit
        await settle(pilot, app)
        assert isinstance(app.screen, ViewerScreen)
        text = screen_text(app)
        assert "[@click=app.quit]click me[/]" in text
        assert "[bold]bold[/bold]" in text
        assert "\\x1b]0;pwned\\x07" in text
        assert "\x1b" not in text and "\u200f" not in text
        # clicking the would-be link does nothing: the app is still running
        await pilot.click(TranscriptView, offset=(6, 2))
        await pilot.press("i")  # metadata of a hostile message: shown, not obeyed
        assert isinstance(app.screen, TextScreen)
        await pilot.press("escape")
        assert app.is_running
        assert app.return_code is None


async def test_browsing_leaves_store_byte_identical(store: Path) -> None:
    before = snapshot_files(store)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"retention")
        await settle(pilot, app)
        await pilot.press("enter")  # opens the best hit
        await settle(pilot, app)
        await pilot.press("n", "G", "g", "minus", "plus", "y", "escape", "f3")
        await settle(pilot, app)
        await pilot.press("enter")
        await settle(pilot, app)
        await pilot.press("escape")
    assert snapshot_files(store) == before


async def test_find_in_session_and_context_width(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"slow query")
        await settle(pilot, app)
        await pilot.press("enter")  # opens the best hit
        await settle(pilot, app)
        viewer = app.screen
        assert isinstance(viewer, ViewerScreen)
        view = viewer.query_one(TranscriptView)
        await pilot.press("slash")
        find = viewer.query_one("#find", Input)
        assert find.has_focus
        find.value = ""
        await pilot.press(*"index", "enter")
        await settle(pilot, app)
        assert viewer.matches == [2, 3, 4, 6, 8]
        await pilot.press("n")
        assert view.cursor in viewer.matches
        await pilot.press("g")
        full = view.virtual_size.height
        await pilot.press("minus", "minus", "minus", "minus", "minus")
        assert view.virtual_size.height == full - 2  # message 6 collapsed to one line
        await pilot.pause()
        assert "±0 turns expanded" in screen_text(app)
        await pilot.press("plus", "plus", "plus", "plus", "plus")
        assert view.virtual_size.height == full


async def test_copy_message(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"card data export")
        await settle(pilot, app)
        await pilot.press("enter")  # opens the best hit
        await settle(pilot, app)
        await pilot.press("y")
        assert app.clipboard == "What about the card data export?"


async def test_help_palette_theme_and_missing_screens(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        body = app.screen.query_one("#help-body")
        text = ""
        for _ in range(20):  # read the whole (scrolling) help, a screen at a time
            text += screen_text(app)
            if body.scroll_y >= body.max_scroll_y:
                break
            body.scroll_to(y=body.scroll_y + body.size.height - 1, animate=False)
            await pilot.pause()
        for binding_id in (
            "app.help",
            "hits.explain",
            "viewer.next_hit",
            "viewer.full_message",
            "recent.sort",
            "recent.mark",
            "app.cancel_index",
        ):
            assert binding_id in text
        await pilot.press("escape")
        assert app.current_theme.dark
        await pilot.press("ctrl+t")
        assert not app.current_theme.dark
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), 30)
        await pilot.press(*"recent sess")

        def recent_first() -> bool:  # the palette searched what was typed
            found = app.screen.query(CommandList)
            if not found or found.first().highlighted is None:
                return False
            results = found.first()
            prompt = results.get_option_at_index(results.highlighted or 0).prompt
            return "recent" in str(prompt).lower()

        await until(pilot, recent_first, 30)
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.screen.pane == "recent-pane"
        await pilot.press("f4")  # quarantine: absent or present, never a crash
        await pilot.pause()
        assert app.is_running


async def test_keymap_file_remaps_keys(store: Path, config_dir: Path) -> None:
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "keymap.toml").write_text('"app.recent" = "f9"\n"viewer.next_hit" = "x"\n')
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("f9")
        await settle(pilot, app)
        assert app.screen.pane == "recent-pane"  # type: ignore[attr-defined]


async def test_bad_keymap_is_reported_not_fatal(store: Path, config_dir: Path) -> None:
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "keymap.json").write_text("{not json")
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert any("keymap" in str(n.message) for n in app._notifications)


async def test_twenty_thousand_messages_open_and_scroll(tmp_path: Path) -> None:
    store = long_session(tmp_path, 20_000)
    app = SessionBrowserApp(Backend([store], indexed=False), now=NOW, animate=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.open_session("long", store="", anchor=15_000, terms=["message"], title="long")
        await settle(pilot, app)
        view = app.screen.query_one(TranscriptView)
        assert len(view.messages) == 20_000
        assert view.cursor == 15_000
        assert "#15000" in screen_text(app)
        await pilot.press("pagedown", "pagedown", "G")
        assert view.cursor == 19_999
        await pilot.press("g")
        assert view.cursor == 0
        assert "10000 earlier turns archived here" not in screen_text(app)
        view.set_cursor(10_000)
        await pilot.pause()
        assert "10000 earlier turns archived here" in screen_text(app)
        assert len(view._strips) <= 4000


def test_store_json_is_what_praisonai_writes(store: Path) -> None:
    data = json.loads((store / "pg-tuning.json").read_text())
    assert data["messages"][0]["content"].startswith("[Session Summary]")


async def test_recent_marks_feed_the_screen_context(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("f3")
        await settle(pilot, app)
        recent = app.screen.query_one(RecentList)
        first, second = recent.summary(0), recent.summary(1)
        assert first is not None and second is not None
        assert app.screen_context().session_ids == [first.session_id]  # no marks: the cursor
        await pilot.press("down")  # from the filter into the list
        await pilot.press("space", "space")  # marks two rows, moving down each time
        assert list(recent.marked) == [first.session_id, second.session_id]
        assert recent.cursor == 2
        await pilot.pause()
        text = screen_text(app)
        assert text.count("✓") == 2
        assert "2 marked" in text
        context = app.screen_context()
        assert context.session_ids == [first.session_id, second.session_id]
        assert context.current_session is None
        await pilot.press("up", "space")  # unmark the second
        assert list(recent.marked) == [first.session_id]
        await pilot.press("a")  # every session of the list
        await settle(pilot, app)
        assert len(recent.marked) == recent.total == 6
        await pilot.press("a")  # all marked already: unmark them all
        await settle(pilot, app)
        assert not recent.marked
        await pilot.press("slash", *"pg")  # a filter, then mark all of what it shows
        await settle(pilot, app)
        assert recent.total == 1
        await pilot.press("enter", "a")
        await settle(pilot, app)
        assert app.screen_context().session_ids == ["pg-tuning"]


async def test_viewer_position_counts_consistently(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"chargefox")
        await settle(pilot, app)
        await pilot.press("enter")  # opens the best hit
        await settle(pilot, app)
        info = str(app.screen.query_one("#viewer-info").render())
        assert "#0 · 1 of 6" in info
        await pilot.press("G")
        await pilot.pause()
        info = str(app.screen.query_one("#viewer-info").render())
        assert "#5 · 6 of 6" in info


def _many_sessions(root: Path, count: int) -> Path:
    root.mkdir(parents=True)
    for i in range(count):
        data = {
            "session_id": f"s{i:05d}",
            "messages": [
                {"role": "user", "content": f"note {i} about walrus{i}", "timestamp": 1.7e9 + i}
            ],
            "created_at": "2026-01-01T00:00:00+00:00",
            "updated_at": "2026-01-01T00:00:00+00:00",
            "metadata": {},
        }
        (root / f"s{i:05d}.json").write_text(json.dumps(data, indent=2))
    return root


async def test_index_build_shows_progress_and_can_be_cancelled(tmp_path: Path) -> None:
    """The first build runs in the background with a progress bar; Ctrl+G stops it after the
    batch in hand; searches answer throughout; the palette's resume finishes it."""
    import sqlite3

    from textual.widgets import ProgressBar

    from session_browser.tui.common.chrome import IndexBar

    store = _many_sessions(tmp_path / "many", 1200)
    backend = Backend([store])  # indexed; nothing built yet
    index = backend.stores[0]
    # Hold the index's write lock: the build parses its first batch and then waits for it,
    # so the app is reliably caught in the middle of the build.
    blocker = sqlite3.connect(index.db_path, timeout=30.0, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    app = SessionBrowserApp(backend, now=NOW, store_labels=["many"], animate=False)
    try:
        async with app.run_test(size=SIZE) as pilot:
            for _ in range(100):
                await pilot.pause(0.05)
                if app.index_state.mode == "building" and app.index_state.total:
                    break
            assert app.index_state.mode == "building"
            assert app.index_state.total == 1200
            bar = app.screen.query_one(IndexBar)
            assert bar.display
            assert bar.query_one(ProgressBar).total == 1200
            assert "of 1,200 files" in screen_text(app)
            await pilot.press(*"walrus7")  # answers while the index builds
            await pilot.pause(0.3)
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert "index building" in str(app.screen.query_one("#search-info").render())
            await pilot.press("ctrl+g")
            blocker.execute("ROLLBACK")
            for _ in range(200):
                await pilot.pause(0.05)
                if app.index_state.mode != "building":
                    break
            state = app.index_state
            assert state.mode == "cancelled"
            assert state.done < state.total == 1200
            assert not bar.display
            assert "index stopped at" in app.status_text
            await app.run_action("resume_index")
            for _ in range(200):
                await pilot.pause(0.05)
                if app.index_state.mode == "ready":
                    break
            assert app.index_state.mode == "ready"
            await settle(pilot, app)
            assert backend.count("") == 1200
    finally:
        blocker.close()
        backend.group.close()


async def test_first_build_is_never_an_empty_store_and_search_catches_up(tmp_path: Path) -> None:
    """While the first build runs the app never says "no sessions", the search line says the
    index is building, and the results refresh by themselves when the build finishes."""
    import sqlite3

    store = _many_sessions(tmp_path / "many", 300)
    backend = Backend([store])  # indexed; nothing built yet
    blocker = sqlite3.connect(backend.stores[0].db_path, timeout=30.0, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # the build waits for it after its first batch
    app = SessionBrowserApp(backend, now=NOW, store_labels=["many"], animate=False)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"walrus7")
            for _ in range(20):
                await pilot.pause(0.05)
                assert "No sessions here yet" not in screen_text(app)
                assert not app.main.query_one("#empty-state").display
            await app.workers.wait_for_complete()
            await pilot.pause()
            info = str(app.main.query_one("#search-info").render())
            assert "searched 100 of 300 sessions; full results when the index is ready" in info
            assert "index building" in info or "checking for new" in info
            assert "No sessions here yet" not in screen_text(app)
            blocker.execute("ROLLBACK")
            for _ in range(200):
                await pilot.pause(0.05)
                if app.index_state.mode == "ready":
                    break
            assert app.index_state.mode == "ready"
            await settle(pilot, app)
            info = str(app.main.query_one("#search-info").render())
            assert "1 session matched" in info and "searched" not in info  # asked again
            hits = app.main.query_one(HitList)
            assert [h.session_id for h in hits.hits] == ["s00007"]
            assert "No sessions here yet" not in screen_text(app)
    finally:
        blocker.close()
        backend.group.close()


async def test_missing_store_opens_the_app_with_its_empty_state(tmp_path: Path) -> None:
    """``--store`` naming a dir that is not there: the app opens anyway and says so."""
    from session_browser.tui.launch import open_backend

    gone = tmp_path / "no" / "such" / "dir"
    backend, labels, missing = open_backend([str(gone)])
    assert missing == [str(gone)]
    assert labels is not None and f"{gone} (not found)" in labels
    assert backend.stores == []
    app = SessionBrowserApp(
        backend, now=NOW, store_labels=labels, missing_stores=missing, animate=False
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        text = screen_text(app)
        assert "No sessions here yet" in text
        # (a long tmp path wraps the line: the words are compared, not the line breaks)
        assert f"Not found: {gone} is not a directory" in said(app)
        assert "--store DIR" in text
        assert any(str(gone) in n.message for n in app._notifications)


async def test_missing_store_next_to_a_real_one_still_shows_the_real_one(store: Path) -> None:
    from session_browser.tui.launch import open_backend

    gone = store.parent / "gone"
    backend, labels, missing = open_backend([str(store), str(gone)])
    assert missing == [str(gone)]
    assert labels is not None and labels[-1] == f"{gone} (not found)"
    assert len(backend.stores) == 1
    backend.close()


async def test_ages_use_the_live_clock_unless_one_is_given(store: Path) -> None:
    from datetime import UTC, datetime, timedelta

    app = SessionBrowserApp(Backend([store], indexed=False), store_labels=["s"], animate=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        first = app.now
        await pilot.pause(0.02)
        assert app.now > first  # live, not frozen at launch
        assert abs(app.now - datetime.now(UTC)) < timedelta(seconds=5)
        recent = app.main.query_one(RecentList)
        assert abs(recent.now - datetime.now(UTC)) < timedelta(seconds=5)
        assert app.main.query_one(HitList).now > first
    fixed = make_app(store)
    assert fixed.now == NOW


async def test_viewer_counts_the_matches_from_the_first_paint(store: Path) -> None:
    """Opened from a hit, the info line counts the matches as soon as the transcript shows;
    the opened message (the search match) is always one of them."""
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"chargefox")
        await settle(pilot, app)
        await pilot.press("enter")  # opens the best hit
        viewer = app.screen
        assert isinstance(viewer, ViewerScreen)
        for _ in range(100):
            if viewer.loaded:
                break
            await pilot.pause(0.01)
        assert viewer.loaded
        info = str(viewer.query_one("#viewer-info").render())
        assert "chargefox: 1/2 matching messages" in info
        await pilot.press("escape")
        # A match the plain find cannot see (stemming, fuzzy): the opened message counts.
        app.push_screen(
            ViewerScreen("billing-plan", anchor=2, terms=["zzznotthere"], title="billing")
        )
        await settle(pilot, app)
        info = str(app.screen.query_one("#viewer-info").render())
        assert "#2 · 3 of" in info
        assert "1/1 matching message (n/N)" in info


async def test_hit_bookends_are_in_index_order_without_repeats(store: Path) -> None:
    from session_browser.core.model import SessionHit

    def turn(i: int, role: str) -> dict[str, object]:
        return {"index": i, "role": role, "content": f"turn number {i}"}

    hit = SessionHit(
        "s1",
        title="t",
        snippet="the match",
        score=1.0,
        anchor_index=0,
        bookends={
            "opening": [turn(0, "user"), turn(1, "assistant")],
            "closing": [turn(1, "assistant"), turn(8, "user"), turn(9, "assistant")],
        },
    )
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        hits = app.main.query_one(HitList)
        hits.set_hits([hit], [])
        lines = [line.plain for line in hits.row_lines(0, 100)][2:-1]
        assert lines[0].startswith("   ▸ #0 the match")  # the match first: nothing before it
        assert [ln.split("turn number ")[-1] for ln in lines[1:]] == ["1", "8", "9"]
        assert lines[-1].startswith("   └ ")
        assert hits._height(hit) == len(lines) + 3
        hit.anchor_index = 5
        lines = [line.plain for line in hits.row_lines(0, 100)][2:-1]
        assert [ln[3] for ln in lines] == ["┌", "│", "├", "│", "└"]
        assert "#5 the match" in lines[2]
        assert [ln.split("turn number ")[-1] for ln in lines if "turn" in ln] == [
            "0",
            "1",
            "8",
            "9",
        ]
        # A turn with no text (a tool call, its result) says so instead of a bare role.
        hit.bookends["closing"][1] = {"index": 8, "role": "tool", "content": ""}
        hits.set_hits([hit], [])
        lines = [line.plain for line in hits.row_lines(0, 100)][2:-1]
        assert "   │ tool: (no text)" in lines


async def test_help_and_palette_cover_the_added_screens(store: Path) -> None:
    from textual.binding import Binding

    from session_browser.tui.commands import COMMANDS
    from session_browser.tui.rescue.screen import QuarantineScreen
    from session_browser.tui.transfer.screen import ExportScreen, ImportScreen

    for screen_class in (QuarantineScreen, ExportScreen, ImportScreen):
        offered = {c.action for c in COMMANDS if c.screen == screen_class.__name__}
        for binding in screen_class.BINDINGS:
            assert isinstance(binding, Binding)
            assert f"screen.{binding.action}" in offered, (screen_class, binding.action)
    app = make_app(store)
    async with app.run_test(size=(160, 200)) as pilot:
        await settle(pilot, app)
        await pilot.press("f1")
        await pilot.pause()
        text = screen_text(app)
        for needle in (
            "quarantine.restore",
            "quarantine.merge",
            "quarantine.fold",
            "quarantine.discard",
            "quarantine.undo",
            "export.run",
            "import.dry_run",
            "import.run",
            "any of them",
        ):
            assert needle in text, needle
        assert "all must match" not in text


async def test_narrow_rows_keep_counts_and_scores_whole(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"chargefox")
        await settle(pilot, app)
        hits = app.main.query_one(HitList)
        for width in (40, 60, 78):
            line = hits.row_lines(0, width)[0].plain
            assert line.rstrip().endswith(f"score {hits.hits[0].score:.2f}")
            assert len(line) <= width
        await pilot.press("f3")
        await settle(pilot, app)
        recent = app.main.query_one(RecentList)
        for index in range(recent.total):
            summary = recent.summary(index)
            assert summary is not None
            line = recent.row_lines(index, 50)[0].plain
            assert len(line) <= 50
            assert f" {summary.message_count} msgs" in line
            if len(summary.display_title) > 20:
                assert "…" in line


async def test_created_sort_shows_created_dates_and_ctrl_g_without_a_build(store: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert any("No index build is running" in n.message for n in app._notifications)
        await pilot.press("f3")
        await settle(pilot, app)
        recent = app.main.query_one(RecentList)
        assert "created" not in recent.row_lines(0, 100)[1].plain
        await pilot.press("down", "s")  # sort by created
        await settle(pilot, app)
        first = recent.summary(0)
        assert first is not None and first.created_at
        meta = recent.row_lines(0, 100)[1].plain
        assert "created " + first.created_at[:10] in meta
