"""One counting rule: ``vault log`` counts the turns of a kept version as the viewer counts
the turns it shows ("9 of 344"), not the rows the index keeps (text-bearing messages)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core import recall
from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.viewer.transcript import TranscriptView

from .conftest import screen_text, settle, until
from .stores import NOW

SIZE = (120, 30)


def _log(session_id: str) -> tuple[list[int | None], str]:
    """(turns per version from ``vault log --json``, the plain ``vault log`` text)."""
    res = CliRunner().invoke(main, ["vault", "log", session_id, "--json"])
    assert res.exit_code == 0, res.output
    turns = [row["turns"] for row in json.loads(res.stdout)["versions"]]
    text = CliRunner().invoke(main, ["vault", "log", session_id])
    assert text.exit_code == 0, text.output
    return turns, text.stdout


async def _viewer_total(store: str, session_id: str) -> int:
    """How many turns the viewer says the session has ("#0 · 1 of N")."""
    app = SessionBrowserApp(Backend([store]), now=NOW, animate=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "index ready" in app.status_text, 60)
        app.open_session(session_id, store="", anchor=0, terms=[], title="")
        await until(pilot, lambda: getattr(app.screen, "loaded", False), 60)
        await settle(pilot, app)
        total = len(app.screen.query_one(TranscriptView).messages)
        shown = re.search(r"\d+ of ([\d,]+)", screen_text(app))
        assert shown is not None and int(shown.group(1).replace(",", "")) == total
        return total


def _tool_session(sessions: Path) -> dict[str, object]:
    """A PraisonAI session whose tool calls and results carry no text: 9 turns (3 of them
    archived), 4 with text."""
    sessions.mkdir(parents=True)
    call = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "shell", "arguments": '{"cmd": "ls"}'},
            }
        ],
    }
    result = {"role": "tool", "content": "", "tool_call_id": "c1"}
    data: dict[str, object] = {
        "session_id": "tools",
        "archived_messages": [
            {"role": "user", "content": "list the files", "timestamp": 1.0},
            call,
            result,
        ],
        "messages": [
            {"role": "assistant", "content": "three files", "timestamp": 2.0},
            {"role": "user", "content": "and now?", "timestamp": 3.0},
            call,
            result,
            call,
            {"role": "assistant", "content": "still three", "timestamp": 4.0},
        ],
    }
    (sessions / "tools.json").write_text(json.dumps(data), encoding="utf-8")
    return data


async def test_vault_log_counts_turns_as_the_viewer_does(tmp_path: Path) -> None:
    data = _tool_session(tmp_path / "sessions")
    assert recall.turn_count(data) == 9
    shown = await _viewer_total(str(tmp_path / "sessions"), "tools")
    turns, text = _log("tools")
    assert turns == [shown] == [9]
    assert " 9 turns " in text


async def test_a_real_claude_transcript_counts_the_same(tmp_path: Path, shared_data: Path) -> None:
    src = next((shared_data / "claude" / "claude-code-viewer").glob("*.jsonl"))
    project = tmp_path / "projects" / "p1"
    project.mkdir(parents=True)
    shutil.copy(src, project / src.name)
    shown = await _viewer_total(f"claude:{tmp_path / 'projects'}", src.stem)
    turns, text = _log(src.stem)
    assert turns == [shown] and shown > 100
    assert f" {shown:,} turns " in text
