"""Goose sessions as a read-only source: a ``sessions.db`` made with goose's own schema and
filled as its writer fills it, and a legacy ``<id>.jsonl`` (tests/fixtures/goose, see its
README: block/goose at dbec1655 and 6416fe74)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core import recall
from session_browser.core.model import SUMMARY_PREFIX, hidden_parts
from session_browser.core.open import index_store
from session_browser.core.resume_line import ResumeLine, ResumeRefused, resume_line
from session_browser.core.sources import SOURCES
from session_browser.core.sources.goose import DB_NAME, GooseSource, default_goose_dir
from session_browser.core.vault import Vault
from session_browser.core.vault.reading import kept_session
from tests.agents import cli, ids, snapshot

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "goose"
SID = "20260301_1"
LEGACY = "20250301_1"
T = 1772355600


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def visible(user: bool = True, agent: bool = True) -> str:
    return json.dumps({"userVisible": user, "agentVisible": agent})


#: (role, content, created, metadata) rows of session SID, as goose writes them after a
#: compaction: the compacted messages kept for the user only, the summary for the agent only.
ROWS: list[tuple[str, list[dict[str, Any]], int, str]] = [
    (
        "user",
        [text("Why does the tokenizer drop CRLF in quoted strings?")],
        T,
        visible(agent=False),
    ),
    (
        "assistant",
        [
            {"type": "thinking", "thinking": "Read the lexer first.", "signature": "sig"},
            text("Let me read the lexer."),
            {
                "type": "toolRequest",
                "id": "call_1",
                "toolCall": {
                    "status": "success",
                    "value": {"name": "developer__shell", "arguments": {"command": "pytest -q"}},
                },
            },
        ],
        T + 5,
        visible(agent=False),
    ),
    (
        "user",
        [
            {
                "type": "toolResponse",
                "id": "call_1",
                "toolResult": {
                    "status": "success",
                    "value": {"content": [text("AssertionError: expected CRLF")], "isError": False},
                },
            }
        ],
        T + 9,
        visible(agent=False),
    ),
    (
        "user",
        [text("The lexer split on LF only; quoted strings lost their CR.")],
        T + 20,
        visible(user=False),
    ),
    ("user", [text("Now keep a lone CR inside quotes too")], T + 30, visible()),
    ("assistant", [text("Done: quoted strings keep CR, LF and CRLF.")], T + 40, visible()),
]


def make_db(path: Path, rows: list[tuple[str, list[dict[str, Any]], int, str]] = ROWS) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA journal_mode=WAL")  # as goose opens it
        db.executescript((FIXTURE / "schema.sql").read_text())
        db.execute(
            "INSERT INTO sessions (id, name, working_dir) VALUES (?, ?, ?)",
            (SID, "CRLF in quoted strings", "/home/dev/parser"),
        )
        db.executemany(
            "INSERT INTO messages (message_id, session_id, role, content_json,"
            " created_timestamp, metadata_json) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (f"msg_{i}", SID, role, json.dumps(content), created, meta)
                for i, (role, content, created, meta) in enumerate(rows)
            ],
        )
        db.commit()


def goose_dir(base: Path) -> Path:
    sessions = base / "sessions"
    sessions.mkdir(parents=True)
    make_db(sessions / DB_NAME)
    shutil.copy(FIXTURE / f"{LEGACY}.jsonl", sessions)
    return sessions


def test_database_session_turns_compaction_and_hidden_parts(tmp_path: Path) -> None:
    source = GooseSource(goose_dir(tmp_path))
    assert sorted(source.list_files()) == [f"{LEGACY}.jsonl", f"{DB_NAME}/{SID}"]
    data = source.load(f"{DB_NAME}/{SID}")
    assert data is not None and data["session_id"] == SID
    assert recall.session_title(data) == "CRLF in quoted strings"
    assert data["metadata"]["cwd"] == "/home/dev/parser"
    projection = recall.project(data)
    assert [(m["role"], m["content"], bool(m.get("archived"))) for m in projection] == [
        ("user", "Why does the tokenizer drop CRLF in quoted strings?", True),
        ("assistant", "Let me read the lexer.", True),
        (
            "system",
            f"{SUMMARY_PREFIX}\nThe lexer split on LF only; quoted strings lost their CR.",
            False,
        ),
        ("user", "Now keep a lone CR inside quotes too", False),
        ("assistant", "Done: quoted strings keep CR, LF and CRLF.", False),
    ]
    assert data["last_compaction"]["metadata"]["goose_compaction"] is True
    assert "pytest" not in json.dumps(data)
    full = source.load(f"{DB_NAME}/{SID}", include_hidden=True)
    assert full is not None
    labels = [label for m in recall.project(full) for label, _t in hidden_parts(m)]
    assert labels.count("thinking") == 1
    assert [label for label in labels if label.startswith("tool call: ")] == [
        "tool call: developer__shell"
    ]
    assert "AssertionError: expected CRLF" in json.dumps(full)


def test_legacy_file_and_a_migrated_one_read_once(tmp_path: Path) -> None:
    sessions = goose_dir(tmp_path)
    source = GooseSource(sessions)
    data = source.load(f"{LEGACY}.jsonl")
    assert data is not None and data["session_id"] == LEGACY
    assert recall.session_title(data) == "Egret cache eviction"
    assert data["metadata"]["cwd"] == "/home/dev/cache"
    assert [m["role"] for m in recall.project(data)] == ["user", "assistant"]
    shutil.copy(sessions / f"{LEGACY}.jsonl", sessions / f"{SID}.jsonl")  # imported already
    assert sorted(source.list_files()) == [f"{LEGACY}.jsonl", f"{DB_NAME}/{SID}"]


def test_a_database_goose_has_open_is_read_without_blocking_it(tmp_path: Path) -> None:
    sessions = goose_dir(tmp_path)
    with closing(sqlite3.connect(sessions / DB_NAME, timeout=0)) as goose:
        goose.execute("PRAGMA journal_mode=WAL")
        goose.execute("BEGIN IMMEDIATE")  # goose holds the write lock
        goose.execute("UPDATE sessions SET name = 'renamed' WHERE id = ?", (SID,))
        names = sorted(os.listdir(sessions))
        assert ids(cli("search", "lone CR", "--store", f"goose:{sessions}", "--json")) == [SID]
        assert sorted(os.listdir(sessions)) == names  # no -wal / -shm of ours
        goose.commit()  # and goose was never blocked
    assert sorted(os.listdir(sessions)) == [f"{LEGACY}.jsonl", DB_NAME]


def test_default_dir_and_the_env_vars_that_move_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert default_goose_dir() == Path.home() / ".local" / "share" / "goose" / "sessions"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_goose_dir() == tmp_path / "xdg" / "goose" / "sessions"
    monkeypatch.setenv("GOOSE_PATH_ROOT", str(tmp_path / "root"))
    sessions = goose_dir(tmp_path / "root" / "data")
    assert default_goose_dir() == sessions
    before = snapshot(sessions)
    found = cli("search", "egret", "--store", "goose:", "--json", "--no-index")
    assert ids(found) == [LEGACY] and found["results"][0]["source"] == "goose"
    assert SID in ids(cli("search", "source:goose", "quotes", "--json"))
    assert snapshot(sessions) == before


@pytest.mark.parametrize("index", [True, False])
def test_search_filters_and_reads_never_write(tmp_path: Path, index: bool) -> None:
    sessions = goose_dir(tmp_path)
    before = snapshot(sessions)
    store = f"goose:{sessions}"
    extra = [] if index else ["--no-index"]
    assert ids(cli("search", "lone CR quotes", "--store", store, "--json", *extra)) == [SID]
    assert ids(cli("search", "source:codex", "egret", "--store", store, "--json", *extra)) == []
    assert ids(cli("search", "AssertionError", "--store", store, "--json", *extra)) == []
    tools = cli("search", "in:tools", "AssertionError", "--store", store, "--json", *extra)
    assert ids(tools) == [SID]
    hit = cli("search", "lone CR", "--store", store, "--json", *extra)["results"][0]
    assert hit["project"] == "/home/dev/parser"
    assert snapshot(sessions) == before


def test_resume_line() -> None:
    assert resume_line("goose", SID, "/home/dev/parser") == ResumeLine(
        f"cd /home/dev/parser && goose session --resume --session-id {SID}"
    )
    refused = resume_line("goose", "--help", None)
    assert isinstance(refused, ResumeRefused)


def test_a_deleted_legacy_session_is_kept_by_the_vault(tmp_path: Path) -> None:
    sessions = goose_dir(tmp_path)
    legacy = sessions / f"{LEGACY}.jsonl"
    original = legacy.read_bytes()
    store = index_store(SOURCES["goose"], sessions, vault=True)
    try:
        assert [h.session_id for h in store.search("egret")] == [LEGACY]
        legacy.unlink()
        assert store.reconcile().removed == 1
        [hit] = store.search("egret", limit=5)
        assert hit.session_id == LEGACY and hit.kept is not None
    finally:
        store.close()
    kept = kept_session(LEGACY)
    assert kept is not None and "egret score" in json.dumps(kept)
    with Vault() as vault:
        [version] = vault.versions(LEGACY)
        vault.restore(version)
    assert legacy.read_bytes() == original


def test_doctor_lists_the_agent_its_count_and_its_retention(tmp_path: Path) -> None:
    sessions = goose_dir(Path.home() / ".local" / "share" / "goose")
    before = snapshot(sessions)
    res = CliRunner().invoke(main, ["doctor", "--json"])
    assert res.exit_code == 0, res.output
    [agent] = [a for a in json.loads(res.output)["agents"] if a["source"] == "goose"]
    assert agent["dir"] == str(sessions) and agent["sessions"] == 2
    assert agent["retention"] == (
        "Goose keeps sessions until they are deleted in Goose (no automatic deletion)"
    )
    assert snapshot(sessions) == before
