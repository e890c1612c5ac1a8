"""Real Claude Code and Codex sessions read as their owners think: the tool calls between
two prose turns are one folded line that opens to each call (``$ command``, an edit's diff),
with no bookkeeping and no metadata counts on the headers."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from textual.pilot import Pilot

from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.viewer.screen import ViewerScreen
from session_browser.tui.viewer.transcript import TranscriptView
from tests.conftest import SHARED_DATA

from .conftest import screen_text, settle
from .stores import NOW

SIZE = (120, 40)
DATA = Path(os.environ.get("SESSION_BROWSER_DATA_DIR") or SHARED_DATA)
CLAUDE_SID = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
CLAUDE_FILE = DATA / "claude" / "spotter" / f"{CLAUDE_SID}.jsonl"
SHORT_SID = "d6e0bada-1959-4eec-a9d2-0bfade768d8f"
SHORT_FILE = DATA / "claude" / "spotter" / "tool_heavy.jsonl"
CODEX_TID = "019a93b9-f380-7600-98ff-940e6b99603c"
CODEX_FILE = (
    DATA / "codex" / "codex-session-view" / f"rollout-2025-11-17T15-30-28-{CODEX_TID}.jsonl"
)

pytestmark = pytest.mark.skipif(
    not (CLAUDE_FILE.exists() and CODEX_FILE.exists()), reason="needs ../shared/data"
)


def real_stores(tmp_path: Path) -> list[str]:
    """The real transcripts, copied where Claude Code and Codex keep them."""
    claude = tmp_path / "claude" / "-home-USER-projects-spotter"
    claude.mkdir(parents=True)
    shutil.copy(CLAUDE_FILE, claude / CLAUDE_FILE.name)
    shutil.copytree(CLAUDE_FILE.with_suffix(""), claude / CLAUDE_SID)
    shutil.copy(SHORT_FILE, claude / f"{SHORT_SID}.jsonl")
    codex = tmp_path / "codex" / "2025" / "11" / "17"
    codex.mkdir(parents=True)
    shutil.copy(CODEX_FILE, codex / CODEX_FILE.name)
    return [f"claude:{tmp_path / 'claude'}", f"codex:{tmp_path / 'codex'}"]


async def open_session(pilot: Pilot[int], app: SessionBrowserApp, sid: str) -> ViewerScreen:
    viewer = ViewerScreen(sid)
    await app.push_screen(viewer)
    await settle(pilot, app)
    assert isinstance(app.screen, ViewerScreen) and app.screen.loaded
    return viewer


async def goto_run(pilot: Pilot[int], view: TranscriptView, start: int) -> None:
    view.set_cursor(start, top=True)
    await pilot.pause()


async def test_claude_session_folds_tool_calls_and_opens_them(tmp_path: Path) -> None:
    app = SessionBrowserApp(
        Backend(real_stores(tmp_path), indexed=False), now=NOW, animate=False, keymap={}
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        viewer = await open_session(pilot, app, CLAUDE_SID)
        view = viewer.query_one(TranscriptView)
        # Turns 9-14 are six Read results; the six calls were made by turn 8's prose.
        run = view.runs[9]
        assert run.title() == "6 tool calls: Read ×6"
        await goto_run(pilot, view, 9)
        shown = screen_text(app)
        assert "▸ 6 tool calls: Read ×6" in shown
        assert "#9–#14 · 15 of 479" in shown  # the info line names the turns of the run
        assert "Read …/projects/spotter-worktrees/spotter-4te/config/config.exs" not in shown
        assert "metadata}" not in shown and "hook_progress" not in shown
        assert "(tool result: Read)" not in shown and "(called Read)" not in shown
        # Enter opens the run: each call, not raw JSON
        await pilot.press("enter")
        await pilot.pause()
        shown = screen_text(app)
        assert "▾ 6 tool calls: Read ×6" in shown
        assert "Read …/projects/spotter-worktrees/spotter-4te/config/config.exs" in shown
        assert '{"file_path"' not in shown
        # J steps over the run to the next prose turn; K comes back to the run
        await pilot.press("J")
        assert view.cursor == 15 and view.messages[15]["content"].startswith("Now let me")
        await pilot.press("K")
        assert view.cursor == 9
        # Enter again folds it (Space marks rows in lists: it is not bound here)
        await pilot.press("enter")
        await pilot.pause()
        assert "▸ 6 tool calls: Read ×6" in screen_text(app)
        # A shell call reads as the command; an edit as its file and its -/+ lines
        await goto_run(pilot, view, 1)
        await pilot.press("enter")
        await pilot.pause()
        shown = screen_text(app)
        assert "▾ 2 tool calls: Bash ×2" in shown
        assert "$ bd show spotter-4te" in shown and "$ bd ready" in shown
        edit = next(s for s, r in view.runs.items() if r.title() == "1 tool call: Edit")
        await goto_run(pilot, view, edit)
        await pilot.press("enter")
        await pilot.pause()
        shown = screen_text(app)
        assert "Edit /home/USER/projects/spotter-worktrees/spotter-4te/mix.exs" in shown
        assert '+      {:opentelemetry_api, "~> 1.5"},' in shown
        # y copies the opened run as text
        await pilot.press("y")
        assert app.clipboard.startswith("▾ 1 tool call: Edit")


async def test_codex_session_ends_in_a_folded_run_not_ten_stubs(tmp_path: Path) -> None:
    app = SessionBrowserApp(
        Backend(real_stores(tmp_path), indexed=False), now=NOW, animate=False, keymap={}
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        viewer = await open_session(pilot, app, CODEX_TID)
        view = viewer.query_one(TranscriptView)
        # The session ends mid-turn: its last screen is one folded run after the prompt.
        last = max(view.runs)
        assert view.cursor == last
        shown = screen_text(app)
        title = view.runs[last].title()
        assert title.startswith("39 tool calls: shell ×")
        assert f"▸ {title}" in shown
        assert shown.count("(called shell)") == 0 and "(tool result: shell)" not in shown
        await pilot.press("enter")
        await pilot.pause()
        opened = view.runs[last]
        assert view.open_runs == {last}
        assert [c.summary for c in opened.calls[:2]] == [
            "$ ls",
            "$ cat 'LM Studio configuration.md'",
        ]
        await pilot.press("g")
        await pilot.pause()
        shown = screen_text(app)
        assert "$ ls" in shown and "LM Studio configuration.md" in shown
        assert '"command":["bash"' not in shown
        # t shows every turn on its own (bookkeeping left out until t again)
        await pilot.press("t")
        await pilot.pause()
        assert not view.grouped and "ghost snapshot" not in screen_text(app)
        await pilot.press("t")
        await pilot.pause()
        assert "ghost snapshot" in screen_text(app)
        await pilot.press("t")
        await pilot.pause()
        assert view.grouped and "▾ 39 tool calls" in screen_text(app)


async def test_an_interrupted_run_says_so(tmp_path: Path) -> None:
    app = SessionBrowserApp(
        Backend(real_stores(tmp_path), indexed=False), now=NOW, animate=False, keymap={}
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        viewer = await open_session(pilot, app, SHORT_SID)
        view = viewer.query_one(TranscriptView)
        await goto_run(pilot, view, 4)
        assert "▸ 1 tool call: Bash · interrupted by user" in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
        assert "$ tail -5 /tmp/claude-1000/" in screen_text(app)
