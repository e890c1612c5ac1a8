"""The viewer offers the command that resumes a Claude Code or Codex session, and one key
copies it (into the session's dir first); a PraisonAI session says it has none."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input, Static

from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.viewer.screen import ViewerScreen
from tests.core.test_claude import CWD as CLAUDE_CWD
from tests.core.test_claude import Transcript, text
from tests.core.test_codex import CWD as CODEX_CWD
from tests.core.test_codex import Rollout, rollout_path

from .conftest import screen_text, settle
from .stores import NOW, build_store

SIZE = (120, 36)
SID = "0a1b2c3d-1111-2222-3333-444455556666"
TID = "019e1625-789d-76c0-80ab-3724b5ddb799"


def stores(tmp_path: Path) -> list[str]:
    t = Transcript(SID)
    t.prompt("where does the pelicanword config live")
    t.answer("m1", text("In etc, beside the heron one."))
    t.write(tmp_path / "claude" / "proj" / f"{SID}.jsonl")
    r = Rollout(TID)
    r.prompt("rename the cormorantword module")
    r.answer("Renamed it.")
    r.write(rollout_path(tmp_path / "codex", TID))
    plain = build_store(tmp_path / "home")
    return [f"claude:{tmp_path / 'claude'}", f"codex:{tmp_path / 'codex'}", str(plain)]


async def open_best(pilot: Pilot[int], app: SessionBrowserApp, query: str) -> ViewerScreen:
    box = app.main.query_one("#query", Input)
    box.focus()
    box.value = ""
    await pilot.press(*query, "enter")  # Enter in the query opens the best hit
    await settle(pilot, app)
    viewer = app.screen
    assert isinstance(viewer, ViewerScreen)
    return viewer


async def test_resume_command_shown_and_copied_with_one_key(tmp_path: Path) -> None:
    app = SessionBrowserApp(
        Backend(stores(tmp_path), indexed=False), now=NOW, animate=False, keymap={}
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)

        viewer = await open_best(pilot, app, "pelicanword")
        assert viewer.session_id == SID
        line = f"cd {CLAUDE_CWD} && claude --resume {SID}"
        assert viewer.query_one("#viewer-resume", Static).display
        assert f"resume: {line}  (C copies it)" in screen_text(app)
        await pilot.press("C")
        assert app.clipboard == line
        toast = list(app._notifications)[-1]
        assert (toast.title, toast.message) == ("Copied the resume command", line)

        await pilot.press("escape")
        await settle(pilot, app)
        viewer = await open_best(pilot, app, "cormorantword")
        assert viewer.session_id == TID
        await pilot.press("C")
        assert app.clipboard == f"cd {CODEX_CWD} && codex resume -- {TID}"

        await pilot.press("escape")
        await settle(pilot, app)
        viewer = await open_best(pilot, app, "chargefox")  # a PraisonAI session
        assert not viewer.query_one("#viewer-resume", Static).display
        await pilot.press("C")
        assert app.clipboard == f"cd {CODEX_CWD} && codex resume -- {TID}"  # unchanged
        assert list(app._notifications)[-1].message == (
            "No resume command for this session: only Claude Code, Codex, Gemini CLI, "
            "OpenCode, Kimi Code CLI, GitHub Copilot CLI and Goose sessions have one."
        )
