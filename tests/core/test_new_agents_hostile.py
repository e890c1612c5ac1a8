"""Records of the wrong shape never break a read of the Kimi Code CLI, Aider, Cline / Roo Code,
Goose and Copilot CLI sources: every field of a real-looking record replaced by values of
other types, the file is still read (a session, or one clear skip reason), never an error."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from session_browser.core.sources import SOURCES
from session_browser.core.sources.base import SessionDoc, Skip

ODD: list[Any] = [None, 7, -1.5, True, "", "x", [], [1, "a"], {}, {"type": 3}, [{"text": 5}]]


def variants(record: dict[str, Any]) -> list[dict[str, Any]]:
    """``record`` with each of its fields (and each field of its dict fields) set to each odd
    value."""
    out: list[dict[str, Any]] = []
    for key, value in record.items():
        for odd in ODD:
            out.append({**record, key: odd})
        if isinstance(value, dict):
            for inner in value:
                for odd in ODD:
                    out.append({**record, key: {**value, inner: odd}})
    return out


def read_all(kind: str, root: Path) -> None:
    source = SOURCES[kind].source(root)
    files = source.list_files()
    assert files, "the hostile file must be listed"
    for name, ident in files.items():
        got = source.parse(name, ident, None)
        assert isinstance(got, (SessionDoc, Skip))
        if isinstance(got, Skip):
            assert got.reason
        source.load(name, include_hidden=True)


KIMI = [
    {"type": "turn.prompt", "input": [{"type": "text", "text": "hi"}], "time": 1},
    {
        "type": "context.append_loop_event",
        "event": {"type": "content.part", "part": {"type": "text", "text": "ok"}},
        "time": 2,
    },
    {
        "type": "context.append_loop_event",
        "event": {"type": "tool.call", "toolCallId": "a", "name": "Bash", "args": {}},
        "time": 3,
    },
    {
        "type": "context.append_loop_event",
        "event": {"type": "tool.result", "toolCallId": "a", "result": {"output": "agent_id: x"}},
        "time": 4,
    },
    {"type": "context.apply_compaction", "summary": "s", "time": 5},
    {"type": "profile.bind", "environmentDisclosure": {"cwd": "/w"}, "time": 6},
    {"timestamp": 7.0, "message": {"type": "TurnBegin", "payload": {"user_input": "hi"}}},
    {"timestamp": 8.0, "message": {"type": "ToolResult", "payload": {"return_value": {}}}},
]


@pytest.mark.parametrize("index", range(len(KIMI)))
def test_kimi(tmp_path: Path, index: int) -> None:
    folder = tmp_path / "wd" / "0b7d9c2a-3e4f-4a5b-9c6d-7e8f9a0b1c2d"
    folder.mkdir(parents=True)
    lines = [json.dumps(v) for v in variants(KIMI[index])]
    (folder / "wire.jsonl").write_text("\n".join([json.dumps(KIMI[0]), *lines]) + "\n")
    (folder / "state.json").write_text(json.dumps({"custom_title": 5}))
    read_all("kimi", tmp_path)


UI = [
    {"ts": 1, "type": "say", "say": "task", "text": "t"},
    {"ts": 2, "type": "ask", "ask": "followup", "text": '{"question": 5}'},
    {"ts": 3, "type": "say", "say": "tool", "text": "[1]", "reasoning": "r"},
    {"ts": 4, "type": "say", "say": "condense_context", "contextCondense": {"summary": 3}},
    {"ts": 5, "type": "say", "say": "compaction", "text": '{"status": "completed"}'},
]
API = [
    {"role": "user", "content": [{"type": "text", "text": "<task>\nt\n</task>"}]},
    {"role": "assistant", "content": [{"type": "tool_use", "name": "x", "input": {}}]},
]


@pytest.mark.parametrize("index", range(len(UI) + len(API)))
def test_cline(tmp_path: Path, index: int) -> None:
    task = tmp_path / "tasks" / "1767000000000"
    task.mkdir(parents=True)
    if index < len(UI):
        messages = [UI[0], *variants(UI[index]), 5, "x", None]
        (task / "ui_messages.json").write_text(json.dumps(messages))
    else:
        messages = [API[0], *variants(API[index - len(UI)]), 5, None]
        (task / "api_conversation_history.json").write_text(json.dumps(messages))
    (task / "history_item.json").write_text(json.dumps({"workspace": 3}))
    read_all("cline", tmp_path)


COPILOT = [
    {"type": "session.start", "data": {"sessionId": "s", "context": {"cwd": "/w"}}},
    {"type": "user.message", "data": {"content": "hi"}, "timestamp": "2026-01-01T00:00:00Z"},
    {
        "type": "assistant.message",
        "data": {"content": "ok", "toolRequests": [{"toolCallId": "a", "name": "view"}]},
        "agentId": "a",
    },
    {"type": "tool.execution_complete", "data": {"result": {"content": "c"}, "success": False}},
    {"type": "session.compaction_complete", "data": {"summary": "s"}},
]


@pytest.mark.parametrize("index", range(len(COPILOT)))
def test_copilot(tmp_path: Path, index: int) -> None:
    folder = tmp_path / "session-state" / "5b1e0c2d-0000-4000-8000-0000000000aa"
    folder.mkdir(parents=True)
    lines = [json.dumps(v) for v in variants(COPILOT[index])]
    (folder / "events.jsonl").write_text("\n".join([json.dumps(COPILOT[1]), *lines]) + "\n")
    read_all("copilot", tmp_path / "session-state")


GOOSE = [
    {"role": "user", "created": 1, "content": [{"type": "text", "text": "hi"}]},
    {
        "role": "assistant",
        "created": 2,
        "content": [{"type": "toolRequest", "toolCall": {"status": "success", "value": {}}}],
        "metadata": {"userVisible": False, "agentVisible": True},
    },
    {
        "role": "user",
        "created": 3,
        "content": [{"type": "toolResponse", "toolResult": {"status": "error", "error": 5}}],
    },
]


@pytest.mark.parametrize("index", range(len(GOOSE)))
def test_goose(tmp_path: Path, index: int) -> None:
    lines = [json.dumps({"working_dir": 5}), *(json.dumps(v) for v in variants(GOOSE[index]))]
    (tmp_path / "20250301_1.jsonl").write_text("\n".join([*lines, json.dumps(GOOSE[0])]) + "\n")
    schema = (Path(__file__).resolve().parents[1] / "fixtures" / "goose" / "schema.sql").read_text()
    with closing(sqlite3.connect(tmp_path / "sessions.db")) as db:
        db.executescript(schema)
        db.execute("INSERT INTO sessions (id, name, working_dir) VALUES ('20260301_1', 'n', '/w')")
        rows = [
            ("user", json.dumps(v.get("content")), v.get("created"), json.dumps(v.get("metadata")))
            for v in variants(GOOSE[index])
            if isinstance(v.get("created"), (int, float)) and isinstance(v.get("role"), str)
        ]
        rows += [
            ("user", "not json", 1, "{"),
            ("user", json.dumps([{"type": "text", "text": "x"}]), 1, None),
        ]
        db.executemany(
            "INSERT INTO messages (session_id, role, content_json, created_timestamp,"
            " metadata_json) VALUES ('20260301_1', ?, ?, ?, ?)",
            rows,
        )
        db.commit()
    read_all("goose", tmp_path)


def test_aider_binary_and_odd_text(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".aider.chat.history.md").write_bytes(
        b"\xff\xfe# aider chat started at 2026-13-45 99:99:99\n\n#### \x00odd\n\n"
        b"<thinking-content-abc>\nnever closed\n# aider chat started at 2026-01-01 00:00:00\n"
        b"#### <blank>\n####\n> \n\xc3\x28 reply\n"
    )
    read_all("aider", tmp_path)


VSCODE_REQUEST: dict[str, Any] = {
    "message": {"text": "hi"},
    "response": [
        {"value": "ok"},
        {"kind": "thinking", "value": ["a", 5]},
        {"kind": "toolInvocationSerialized", "toolId": "t", "invocationMessage": {"value": 3}},
    ],
    "result": {"errorDetails": {"message": 4}},
    "timestamp": 1767225600000,
}


def test_vscode_chat(tmp_path: Path) -> None:
    folder = tmp_path / "workspaceStorage" / "abc" / "chatSessions"
    folder.mkdir(parents=True)
    (folder.parent / "workspace.json").write_text(json.dumps({"folder": 5}))
    requests = [VSCODE_REQUEST, *variants(VSCODE_REQUEST), 5, None]
    chat = {"version": 3, "sessionId": 7, "creationDate": "x", "requests": requests}
    (folder / "a.json").write_text(json.dumps(chat))
    for odd in ODD:
        (folder / f"odd-{ODD.index(odd)}.json").write_text(json.dumps({"requests": odd}))
    (folder / "broken.json").write_text('{"requests": [')
    read_all("copilot", tmp_path)


def test_vscode_chat_log(tmp_path: Path) -> None:
    """A VS Code chat log (``.jsonl``) whose changes point anywhere: at paths that do not
    exist, at the wrong types, past an array's end, with odd kinds, a cut-short last line
    and a change before any first entry: every file is still read."""
    folder = tmp_path / "workspaceStorage" / "abc" / "chatSessions"
    folder.mkdir(parents=True)
    first = {"kind": 0, "v": {"version": 3, "sessionId": "s", "requests": [VSCODE_REQUEST]}}
    odd_paths: list[Any] = [
        [],
        ["pending"],  # a key the chat does not have yet
        ["requests", 9, "response"],
        ["requests", "0"],
        ["requests", -1],
        ["requests", True],
        ["version", "x"],
        [[1]],
        ["a"] * 100,
        "requests",
        None,
    ]
    changes = [
        {"kind": kind, "k": path, "v": value, "i": cut}
        for kind in (1, 2, 3)
        for path in odd_paths
        for value in ODD
        for cut in (None, -1, 0, 5, "x")
    ]
    odd_kinds = [{"kind": k, "k": ["requests"], "v": []} for k in (None, 4, -1, "1", True, 1.5)]
    lines = [json.dumps(first), *map(json.dumps, changes + odd_kinds), "[", "5", '{"kind": 1, "k"']
    (folder / "a.jsonl").write_text("\n".join(lines))
    (folder / "early.jsonl").write_text(
        json.dumps({"kind": 2, "k": ["requests"], "v": [VSCODE_REQUEST]}) + "\n" + json.dumps(first)
    )
    (folder / "empty.jsonl").write_text("\n\n")
    read_all("copilot", tmp_path)
