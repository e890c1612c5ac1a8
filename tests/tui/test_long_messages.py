"""Long messages in the viewer: a bounded part is laid out, marked, and the rest on request."""

from __future__ import annotations

import contextlib
import resource
import time
from pathlib import Path

from textual.binding import Binding

from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.viewer.transcript import (
    SHOWN_CHARS,
    TranscriptView,
    count_lines,
    message_text,
    wrap,
)

from .. import hostile
from .conftest import screen_text, settle_workers
from .stores import NOW

SIZE = (120, 36)
BIG = 8 << 20  # 8 MiB of "ab ab ab ...": show took 45 s on it before


def reset_peak() -> None:
    """Reset this process's peak RSS (Linux: VmHWM), to measure one step's peak."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def peak_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def test_wrap_is_linear_in_the_line_length() -> None:
    """One 8 MB line wraps in well under a second (re-slicing the rest of the line for every
    wrapped line made it quadratic)."""
    line = "ab " * (BIG // 3)
    started = time.perf_counter()
    lines = wrap(line, 100)
    elapsed = time.perf_counter() - started
    assert elapsed < 5.0, elapsed
    assert len(lines) == count_lines(line, 100) > 80_000
    assert all(len(x) <= 100 for x in lines)
    assert "".join(x + " " for x in lines).rstrip() == line.rstrip()
    nospace = "x" * 1_000_003  # no space: cut every 100 characters
    cut = wrap(nospace, 100)
    assert len(cut) == 10_001 and "".join(cut) == nospace


def test_message_text_cuts_and_says_how_much_more() -> None:
    body = "word " * 10_000  # 50,000 characters
    text = message_text({"role": "user", "content": body})
    head, marker = text.rsplit("\n", 1)
    assert head == body[:SHOWN_CHARS]
    assert marker == f"… {50_000 - SHOWN_CHARS:,} more characters — press w to show all"
    assert message_text({"content": body}, None) == body
    assert message_text({"content": "short"}) == "short"


async def test_an_8mb_message_opens_cut_and_f_shows_all(tmp_path: Path) -> None:
    store = tmp_path / "sessions"
    sid = hostile.big_message(store, size=BIG)
    hostile.write_good(store, 1)
    app = SessionBrowserApp(Backend([store], indexed=False), now=NOW, animate=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle_workers(pilot, app)
        before = rss_mb()
        reset_peak()
        started = time.perf_counter()
        app.open_session(sid, store="", anchor=0, terms=[hostile.SHARED_WORD], title="")
        await settle_workers(pilot, app)
        opened = time.perf_counter() - started
        view = app.screen.query_one(TranscriptView)
        assert view.messages and view.cursor == 0
        # Laid out: the first 20,000 characters (a few hundred lines) and the marker.
        more = len(view.messages[0]["content"]) - SHOWN_CHARS
        marker = f"… {more:,} more characters — press w to show all"
        height = view._offsets[1] - view._offsets[0]
        assert height < SHOWN_CHARS // 50, height
        assert opened < 20.0, opened  # was minutes (quadratic wrap); about 1 s here
        view.scroll_to(y=view._offsets[1] - 10, animate=False, immediate=True)  # its end
        await pilot.pause()
        assert marker in screen_text(app)
        assert view.cursor == 0
        # f: the whole message (laid out once, linearly), the marker gone.
        started = time.perf_counter()
        await pilot.press("w")
        await pilot.pause()
        shown_all = time.perf_counter() - started
        assert 0 in view.full
        height = view._offsets[1] - view._offsets[0]
        assert height > BIG // 120, height
        assert shown_all < 20.0, shown_all
        await pilot.press("G")
        await pilot.pause()
        assert "#1 " in screen_text(app) and "more characters" not in screen_text(app)
        # Any screen of it draws only its own lines: the strip cache stays small.
        await pilot.press("g", "pagedown", "pagedown", "pagedown")
        await pilot.pause()
        assert "ab ab ab" in screen_text(app)
        assert len(view._strips) <= 4000
        # f again: cut again.
        await pilot.press("w")
        await pilot.pause()
        assert 0 not in view.full and view._offsets[1] < SHOWN_CHARS // 50
        print(
            f"8 MB message: opened in {opened:.2f} s, f in {shown_all:.2f} s,"
            f" peak RSS {before:.0f} -> {peak_mb():.0f} MB"
        )
        # f on a short message says it is whole already.
        await pilot.press("G")
        await pilot.press("w")
        await pilot.pause()
        assert 1 not in view.full
        # The key is in help (with its id, for the keymap file).
        rows = [
            (b.id, b.description)
            for _section, bindings in app.help_sections()
            for b in bindings
            if isinstance(b, Binding)
        ]
        assert ("viewer.full_message", "Whole message") in rows


async def test_a_50mb_message_opens_with_bounded_memory(tmp_path: Path) -> None:
    store = tmp_path / "sessions"
    sid = hostile.big_message(store)  # 50 MB in one message
    app = SessionBrowserApp(Backend([store], indexed=False), now=NOW, animate=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle_workers(pilot, app)
        before = rss_mb()
        reset_peak()
        app.open_session(sid, store="", anchor=-1, terms=[], title="")
        await settle_workers(pilot, app)
        view = app.screen.query_one(TranscriptView)
        await pilot.press("g")
        await pilot.pause()
        assert view.messages and view._offsets[1] - view._offsets[0] < SHOWN_CHARS // 50
        view.scroll_to(y=view._offsets[1] - 10, animate=False, immediate=True)
        await pilot.pause()
        assert "more characters — press w to show all" in screen_text(app)
        grown = peak_mb() - before
        print(f"50 MB message: peak RSS {before:.0f} -> {peak_mb():.0f} MB while opening")
        # The file is read (50 MB of JSON, one string): a small multiple of it, not the GBs
        # of laying all of it out.
        assert grown < 400, grown


async def test_the_cut_marker_names_the_key_as_mapped(tmp_path: Path) -> None:
    store = tmp_path / "sessions"
    sid = hostile.big_message(store, size=SHOWN_CHARS * 3)
    app = SessionBrowserApp(
        Backend([store], indexed=False),
        now=NOW,
        animate=False,
        keymap={"viewer.full_message": "x,ctrl+w"},
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle_workers(pilot, app)
        app.open_session(sid, store="", anchor=0, terms=[], title="")
        await settle_workers(pilot, app)
        view = app.screen.query_one(TranscriptView)
        view.scroll_to(y=view._offsets[1] - 10, animate=False, immediate=True)
        await pilot.pause()
        assert "more characters — press x to show all" in screen_text(app)
        await pilot.press("x")
        await pilot.pause()
        assert 0 in view.full
