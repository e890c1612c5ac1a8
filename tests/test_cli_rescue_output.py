"""Every text output path escapes the same characters; long messages are cut in ``show``."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.files import dumps_session
from session_browser.core.text import compact_json, printable, safe_json
from tests import hostile

# Raw in output means obeyed by a terminal: none of these may appear (newline/tab aside).
RAW_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
    "\ud800-\udfff]"
)
BIDI = "\u200eL\u200fR"


def _bidi_store(tmp_path: Path) -> tuple[Path, str]:
    """A session whose id, title, content and (quarantined) file name carry bidi marks."""
    sessions = tmp_path / "home" / "sessions"
    hostile.write_good(sessions)
    hostile.nasty_text(sessions)
    hostile.lone_surrogate(sessions)
    sid = f"bidi{BIDI}id"
    data = {
        "session_id": sid,
        "messages": [
            {
                "role": "user",
                "content": f"{hostile.SHARED_WORD} {BIDI} {hostile.NASTY_TEXT}",
                "timestamp": 1767225600.0,
                "metadata": {},
            }
        ],
        "created_at": "2026-01-01T00:00:00+00:00",
        "updated_at": "2026-01-01T00:00:00+00:00",
        "metadata": {"title": f"title {BIDI} {hostile.NASTY_TEXT}"},
    }
    (sessions / "bidi_id.json").write_bytes(dumps_session(data))
    corrupt = sessions / f"x{BIDI}.json.corrupt-1700000000000"
    corrupt.write_bytes(dumps_session(data)[:-20])
    return sessions, sid


def _clean(text: str) -> bool:
    return not RAW_UNSAFE.search(text)


def test_every_cli_text_path_escapes_the_same_set(tmp_path: Path) -> None:
    sessions, sid = _bidi_store(tmp_path)
    runner = CliRunner()
    store = ["--store", str(sessions)]
    commands = [
        ["show", sid],
        ["show", "hostile-nasty-text"],
        ["show", "hostile-surrogate"],
        ["search", hostile.SHARED_WORD, "--no-index"],
        ["recent", "--no-index"],
        ["quarantine", "list"],
        ["quarantine", "show", "x"],
        ["export", sid, "--format", "md", "-o", "-"],
        ["export", sid, "--format", "html", "-o", "-"],
        ["export", sid, "--format", "json", "-o", "-"],
    ]
    for cmd in commands:
        for extra in ([], ["--json"]) if cmd[0] != "export" else ([],):
            res = runner.invoke(main, [*cmd, *store, *extra], env={"COLUMNS": "400"})
            assert res.exit_code == 0, (cmd, res.output)
            out = res.stdout_bytes.decode("utf-8")
            assert _clean(out), (cmd, extra, [m.group() for m in RAW_UNSAFE.finditer(out)])
            if cmd[0] == "show" and cmd[1] == sid and not extra:
                assert "\\u200e" in out and "\\u2028" in out  # shown, visibly
            if extra or cmd[-3:] == ["json", "-o", "-"]:
                parsed = json.loads(out)  # still valid JSON: the data comes back exactly
                if cmd[0] == "show" and cmd[1] == sid:
                    assert parsed["session_id"] == sid


def test_json_escaping_round_trips_the_exact_data() -> None:
    value = {"t": hostile.NASTY_TEXT + BIDI + "\ud83d" + "\u2029\x7f", "n": [1, "x"]}
    text = safe_json(value)
    assert _clean(text) and json.loads(text) == value
    assert printable("a\u2028b\ud83dc\u200f") == "a\\u2028b\\ud83dc\\u200f"


def test_compact_json_escapes_alike_on_both_encoders() -> None:
    """orjson where it can; the standard encoder for a lone surrogate or a huge integer:
    one line, the same data, no unsafe character raw."""
    plain = {"t": hostile.NASTY_TEXT + BIDI + "\u2029\x7f", "n": [1, "x", 0.25]}
    surrogate = {"t": "half \ud83d emoji" + BIDI}
    huge = {"n": 2**70, "t": "\x1b[31m"}
    for value in (plain, surrogate, huge):
        text = compact_json(value)
        assert _clean(text) and "\n" not in text
        assert json.loads(text) == value
    assert compact_json({"a": [1, 2]}) == '{"a":[1,2]}'


def test_show_cuts_a_long_message_unless_full(tmp_path: Path) -> None:
    sessions = tmp_path / "home" / "sessions"
    sessions.mkdir(parents=True)
    body = ("ab cd " * 1_400_000)[:8_000_000] + " THE-END"
    data = {
        "session_id": "big",
        "messages": [{"role": "user", "content": body, "timestamp": 1.7e9, "metadata": {}}],
    }
    (sessions / "big.json").write_text(json.dumps(data))
    runner = CliRunner()
    res = runner.invoke(main, ["show", "big", "--store", str(sessions)])
    assert res.exit_code == 0, res.output
    more = len(body) - 20_000
    assert f"… [{more:,} more characters; --full shows all]" in res.stdout
    assert "THE-END" not in res.stdout and len(res.stdout) < 40_000
    res = runner.invoke(main, ["show", "big", "--full", "--store", str(sessions)])
    assert res.exit_code == 0, res.output
    assert body in res.stdout and "more characters" not in res.stdout
