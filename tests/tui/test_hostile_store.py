"""The app on a store holding one file of every hostile kind beside good sessions.

It starts, lists and finds the good sessions, opens every session it lists, and shows what
it cannot use literally; no exception from one session's content escapes a render or a
worker (a row says it cannot be shown, a failed worker is one toast).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from session_browser.core.model import SessionHit, SessionSummary
from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.common.render import printable, short_time, when_text
from session_browser.tui.recent.listing import RecentList
from session_browser.tui.search.hits import HitList
from session_browser.tui.search.screen import MainScreen
from session_browser.tui.viewer.screen import ViewerScreen
from session_browser.tui.viewer.transcript import TranscriptView

from .. import hostile
from .conftest import screen_text, settle_workers
from .stores import NOW, build_store

SIZE = (120, 36)
# What must never reach the terminal raw: C0/C1 controls (but newline), bidi controls,
# the line/paragraph separators, lone surrogates.
RAW = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
    "\u2028\u2029\ud800-\udfff]"
)


def hostile_store(root: Path) -> tuple[list[str], list[str], dict[str, str]]:
    """Store dirs (as the app takes them), the good ids, and kind -> hostile id."""
    sessions = root / "sessions"
    bad = hostile.write_all(sessions)
    good = hostile.write_good(sessions)
    for kind, path in hostile.write_pi_all(root / "pi").items():
        bad[f"pi_{kind}"] = f"pi-{kind}"
        assert path.is_file()
    return [str(sessions), f"pi:{root / 'pi'}"], good, bad


async def settle(pilot: Pilot[int], app: SessionBrowserApp, rounds: int = 3) -> None:
    """Workers done, and the index build (a background thread) finished."""
    for _ in range(40):
        await settle_workers(pilot, app)
        if app.backend.index_state().mode != "building" and rounds <= 0:
            break
        rounds -= 1
        await pilot.pause(0.1)
    await settle_workers(pilot, app)


def no_raw_characters(app: SessionBrowserApp) -> None:
    text = "".join(seg.text for strip in app.screen._compositor.render_strips() for seg in strip)
    found = sorted({f"U+{ord(c):04X}" for c in RAW.findall(text)})
    assert not found, f"raw characters on screen: {found}"


def recent_ids(app: SessionBrowserApp) -> list[str]:
    recent = app.main.query_one("#recent", RecentList)
    rows = [recent.summary(i) for i in range(recent.row_count)]
    return [r.session_id for r in rows if r is not None]


def alive(app: SessionBrowserApp) -> None:
    assert app.is_running and app.return_code is None and app._exception is None


@pytest.mark.parametrize("indexed", [True, False], ids=["indexed", "scan"])
async def test_hostile_store_lists_finds_and_opens_every_session(
    tmp_path: Path, indexed: bool
) -> None:
    # Both kinds of store at once: a PraisonAI store alone takes the same paths.
    dirs, good, bad = hostile_store(tmp_path / "home")
    app = SessionBrowserApp(Backend(dirs, indexed=indexed), now=NOW, animate=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot, app)
        alive(app)
        failures = [n.message for n in app._notifications if n.severity == "error"]
        assert not failures, failures
        # Search: every good session is found by the word all files share.
        await pilot.press(*hostile.SHARED_WORD)
        await settle(pilot, app)
        hits = app.main.query_one("#hits", HitList)
        found = {h.session_id for h in hits.hits}
        assert set(good) <= found, (found, screen_text(app))
        no_raw_characters(app)
        # The good hits open (Enter on one) and Esc comes back (the others open below).
        for index in [i for i, h in enumerate(hits.hits) if h.session_id in good]:
            hits.focus()
            hits.move_cursor(index)
            await pilot.press("enter")
            await settle(pilot, app, rounds=0)
            assert isinstance(app.screen, ViewerScreen)
            sid = hits.hits[index].session_id
            assert f"good session {good.index(sid)} about" in screen_text(app)
            no_raw_characters(app)
            await pilot.press("escape")
            await settle(pilot, app, rounds=0)
            alive(app)
        # Recent: every good session, most recent first (a hostile one dated 9999 may lead).
        await pilot.press("f3")
        await settle(pilot, app)
        listed = recent_ids(app)
        assert [s for s in listed if s in good] == list(reversed(good)), listed
        no_raw_characters(app)
        recent = app.main.query_one("#recent", RecentList)
        for index, sid in enumerate(listed):
            if sid in good:  # opened from its hit above
                continue
            recent.focus()
            recent.move_cursor(index)
            await pilot.press("enter")
            await settle(pilot, app, rounds=0)
            screen = app.screen
            assert isinstance(screen, ViewerScreen) and screen.loaded, sid
            text = screen_text(app)
            info = str(screen.query_one("#viewer-info").render())
            # A hostile one: its turns, or one line saying why it cannot be opened.
            view = screen.query_one(TranscriptView)
            assert view.messages or info.startswith("Cannot open this session"), (sid, text)
            no_raw_characters(app)
            if indexed:  # its metadata, whatever it holds (the same file as the scan reads)
                await pilot.press("i")
                await settle(pilot, app, rounds=0)
                no_raw_characters(app)
                await pilot.press("escape")
            await pilot.press("escape")
            await settle(pilot, app, rounds=0)
            alive(app)
            assert isinstance(app.screen, MainScreen)
        # Every hostile session that is listed is one the test wrote (none is lost or
        # renamed into another's id).
        assert set(listed) - set(good) <= set(bad.values())
    assert app.return_code in (None, 0)


# --------------------------------------------------------------------------- shown literally


def test_unusable_values_render_literally() -> None:
    huge = int(hostile.HUGE_INT)
    assert short_time(huge).startswith("1000000000")
    assert "(401 chars)" in short_time(huge)
    assert short_time(float("nan")) == "nan"
    assert short_time(1e308).startswith("1e+308")
    assert short_time(1767225600.0) == "2026-01-01 00:00:00"
    assert when_text(hostile.EARLY_DATE, NOW) == hostile.EARLY_DATE
    assert when_text(hostile.LATE_DATE, NOW) == hostile.LATE_DATE
    assert when_text("not a date", NOW) == "not a date"
    assert when_text(None, NOW) == "-"
    assert printable("cut emoji \ud83d and \udc00") == "cut emoji \\ud83d and \\udc00"
    assert printable("a\u2028b\u2029c") == "a\\u2028b\\u2029c"
    assert printable("\u200eltr\u200f", one_line=True) == "\\u200eltr\\u200f"


def _hostile_messages() -> list[Any]:
    deep: Any = "bottom"
    for _ in range(900):
        deep = [deep]
    return [
        {"role": "user", "content": "cut emoji \ud83d here", "timestamp": int(hostile.HUGE_INT)},
        {"role": "assistant", "content": {"deep": deep}, "timestamp": float("nan")},
        {"role": "user", "content": hostile.NASTY_TEXT, "timestamp": hostile.LATE_DATE},
        {"role": "tool", "content": None, "tool_calls": [{"x": deep}], "metadata": {"d": deep}},
        {"role": "\ud800" * 3, "content": "role of surrogates", "timestamp": -1e308},
    ]


async def test_viewer_shows_hostile_turns_literally(store: Path) -> None:
    """Turns with values the core passes through as they are: shown, never a crash."""
    app = SessionBrowserApp(Backend([store], indexed=False), now=NOW, animate=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle_workers(pilot, app)
        app.open_session("billing-plan", store="", anchor=-1, terms=[], title="\ud83d title")
        await settle_workers(pilot, app)
        view = app.screen.query_one(TranscriptView)
        view.load(_hostile_messages(), anchor=0, terms=["emoji"])
        await pilot.pause()
        text = screen_text(app)
        assert "\\ud83d title" in text  # the viewer's title line
        assert "cut emoji \\ud83d here" in text
        assert "1000000000" in text and "(401 chars)" in text  # the timestamp as typed
        assert " nan" in text
        assert hostile.LATE_DATE in text
        assert "\\u200eltr\\u200f" in text and "\\u2028sep" in text
        no_raw_characters(app)
        await pilot.press("G")  # the last turn: a role made of surrogates
        await pilot.pause()
        assert "\\ud800\\ud800\\ud800" in screen_text(app)
        no_raw_characters(app)
        for _ in range(len(view.messages)):  # metadata of each, deep nesting included
            await pilot.press("i")
            await pilot.pause()
            no_raw_characters(app)
            await pilot.press("escape", "J")
            await pilot.pause()
        alive(app)


class _Unprintable:
    def __str__(self) -> str:
        raise RecursionError("maximum recursion depth exceeded")

    __repr__ = __str__


async def test_a_row_that_cannot_be_drawn_is_a_placeholder(store: Path) -> None:
    """One summary or hit whose values cannot be drawn: a placeholder row, the others shown."""
    app = SessionBrowserApp(Backend([store], indexed=False), now=NOW, animate=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle_workers(pilot, app)
        await pilot.press("f3")
        await settle_workers(pilot, app)
        recent = app.main.query_one("#recent", RecentList)
        good = recent.pages[0][0]
        bad = SessionSummary(
            session_id="bad-row",
            title=_Unprintable(),  # type: ignore[arg-type]
            when=hostile.EARLY_DATE,
        )
        recent.reset(2)
        recent.add_page(0, [bad, good])
        await pilot.pause()
        text = screen_text(app)
        assert "this row cannot be shown (RecursionError" in text
        assert printable(good.session_id, one_line=True) in text
        await pilot.press("f2")
        hits = app.main.query_one("#hits", HitList)
        when = datetime(2026, 1, 1, tzinfo=UTC).isoformat()
        hits.set_hits(
            [
                SessionHit("bad-hit", _Unprintable(), when, "x", 1.0, 0),  # type: ignore[arg-type]
                SessionHit("late-hit", "late \ud83d", hostile.LATE_DATE, "y", 0.5, 0),
            ],
            ["x"],
        )
        await pilot.pause()
        text = screen_text(app)
        assert "this row cannot be shown (RecursionError" in text
        assert "late \\ud83d" in text and hostile.LATE_DATE in text
        no_raw_characters(app)
        alive(app)


# --------------------------------------------------------------------------- failing workers


class FailingBackend(Backend):
    """Stores whose listing fails (as a bad file made the whole listing fail before)."""

    def count(self, text: str = "") -> int:
        raise OverflowError("int too large to convert to float")

    def browse(self, *args: Any, **kwargs: Any) -> list[SessionSummary]:
        raise OverflowError("int too large to convert to float")

    def projection(self, session_id: str, store_label: str = "") -> list[dict[str, Any]]:
        raise RecursionError("maximum recursion depth exceeded")


async def test_a_failing_worker_is_one_message_never_a_crash(store: Path) -> None:
    app = SessionBrowserApp(FailingBackend([store], indexed=False), now=NOW, animate=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle_workers(pilot, app)
        await pilot.press("f3")
        await settle_workers(pilot, app)
        alive(app)
        text = screen_text(app)
        assert "Cannot list the sessions: OverflowError: int too large" in text
        assert "No sessions here yet" not in text  # unknown is not empty
        assert "0 sessions" not in text
        errors = [n for n in app._notifications if n.severity == "error"]
        assert len(errors) == 1 and "OverflowError" in errors[0].message
        await pilot.press("a")  # mark all: another listing that fails
        app.refresh_status()
        await settle_workers(pilot, app)
        assert len([n for n in app._notifications if n.severity == "error"]) == 1  # once
        app.open_session("billing-plan", store="", anchor=-1, terms=[], title="")
        await settle_workers(pilot, app)
        info = str(app.screen.query_one("#viewer-info").render())
        assert info == "Cannot open this session: RecursionError: maximum recursion depth exceeded"
        alive(app)


async def test_an_error_in_any_worker_is_a_toast(store: Path) -> None:
    """The class guard: a worker of any screen that raises is told, the app goes on."""
    app = SessionBrowserApp(Backend([store], indexed=False), now=NOW, animate=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle_workers(pilot, app)

        def boom() -> None:
            raise ValueError("month must be in 1..12")

        app.main.run_worker(boom, thread=True, name="reading_a_session", exit_on_error=False)
        await settle_workers(pilot, app)
        alive(app)
        note = [n for n in app._notifications if n.severity == "error"][-1]
        assert note.title == "Failed: reading a session"
        assert note.message == "ValueError: month must be in 1..12"


# --------------------------------------------------------------------------- skipped files


async def test_status_line_says_how_many_files_the_index_skipped(tmp_path: Path) -> None:
    sessions = build_store(tmp_path / "home")
    (sessions / "broken.json").write_text("not json{", encoding="utf-8")
    (sessions / "list.json").write_text("[1, 2]", encoding="utf-8")
    (sessions / "latin1.json").write_bytes(b'{"session_id": "\xff"}')
    app = SessionBrowserApp(Backend([sessions]), now=NOW, animate=False, store_labels=["s"])
    async with app.run_test(size=(160, 36)) as pilot:
        await settle(pilot, app)
        assert app.skipped_files == 3
        assert "3 files skipped — session-browser index status" in app.status_text
        assert "3 files skipped" in screen_text(app)


async def test_a_failed_index_build_is_said_not_an_empty_store(tmp_path: Path) -> None:
    """A build that raises (the index's own fault, not a file's) is named on the status line
    and in one toast; the empty state does not pretend the store is empty."""
    sessions = build_store(tmp_path / "home")
    backend = Backend([sessions])
    (store,) = backend.stores

    def failing_reconcile(*args: Any, **kwargs: Any) -> Any:
        raise json.JSONDecodeError("bad", "x", 0)

    store.reconciler.run = failing_reconcile  # the build the app starts in the background
    app = SessionBrowserApp(backend, now=NOW, animate=False, store_labels=["s"])
    async with app.run_test(size=(200, 36), notifications=True) as pilot:
        await settle(pilot, app)
        alive(app)
        assert "index build failed: bad: line 1 column 1" in app.status_text
        errors = [n for n in app._notifications if n.severity == "error"]
        assert len(errors) == 1 and "The index build failed" in errors[0].message
        assert app.session_count == 0  # nothing got into the index
        text = screen_text(app)
        assert "No session could be listed: the index build failed" in text
        assert "No sessions here yet" not in text
