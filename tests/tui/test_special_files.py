"""The app over stores holding a FIFO and a link to /dev/zero among a Claude Code session's
subagent files and a Codex session's rollouts: searches answer for the other sessions, and
the app quits (the special files are never opened; closing never waits on a stuck read)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.widgets import Input

from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.viewer.screen import ViewerScreen
from tests.core.test_claude import Transcript, text
from tests.core.test_codex import Rollout, rollout_path

from .conftest import settle
from .stores import NOW

SID = "0a1b2c3d-1111-2222-3333-444455556666"
TID = "019e1625-789d-76c0-80ab-3724b5ddb799"


def stores(tmp_path: Path) -> list[str]:
    t = Transcript(SID)
    t.prompt("where does the pelicanword config live")
    t.answer("m1", text("In etc, beside the heron one."))
    main = t.write(tmp_path / "claude" / "proj" / f"{SID}.jsonl")
    subagents = main.with_suffix("") / "subagents"
    subagents.mkdir(parents=True)
    os.mkfifo(subagents / "agent-fifo.jsonl")
    os.symlink("/dev/zero", subagents / "agent-zero.jsonl")
    os.mkfifo(main.parent / "agent-old.jsonl")  # an older build's sibling subagent file
    r = Rollout(TID)
    r.prompt("rename the cormorantword module")
    r.answer("Renamed it.")
    rollout = r.write(rollout_path(tmp_path / "codex", TID))
    os.mkfifo(rollout.parent / "rollout-2026-05-11T09-00-00-fifo.jsonl")
    return [f"claude:{tmp_path / 'claude'}", f"codex:{tmp_path / 'codex'}"]


@pytest.mark.parametrize("indexed", [True, False])
async def test_search_answers_and_the_app_quits(tmp_path: Path, indexed: bool) -> None:
    app = SessionBrowserApp(
        Backend(stores(tmp_path), indexed=indexed), now=NOW, animate=False, keymap={}
    )
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        for query, sid in (("pelicanword", SID), ("cormorantword", TID)):
            box = app.main.query_one("#query", Input)
            box.focus()
            box.value = ""
            await pilot.press(*query, "enter")  # Enter opens the best hit
            await settle(pilot, app)
            viewer = app.screen
            assert isinstance(viewer, ViewerScreen) and viewer.session_id == sid
            await pilot.press("escape")
            await settle(pilot, app)
    assert app.backend.closed  # quitting closed every store
