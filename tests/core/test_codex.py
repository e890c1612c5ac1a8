"""Codex CLI rollouts as a read-only source: the reader on real and on written files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from session_browser.core import recall
from session_browser.core.model import SUMMARY_PREFIX, hidden_parts
from session_browser.core.sources.codex import (
    codex_session_files,
    default_codex_dir,
    read_codex_session,
    read_session_index,
)

TID = "019e1625-789d-76c0-80ab-3724b5ddb799"
CWD = "/home/someone/repo"
CODEMIE = "codemie-code/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
VIEW = "codex-session-view/rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"


# ---------------------------------------------------------------------- writing files


class Rollout:
    """Lines of a Codex rollout: ``{timestamp, type, payload}``."""

    def __init__(self, thread_id: str = TID, **meta: Any) -> None:
        self.lines: list[Any] = []
        self.clock = 0
        self.add(
            "session_meta",
            id=thread_id,
            timestamp="2026-05-11T08:26:55.042Z",
            cwd=CWD,
            originator="codex_cli_rs",
            cli_version="0.125.0",
            git={"branch": "feat/x", "commit_hash": "abc"},
            **({"source": "cli"} | meta),
        )

    def add(self, kind: str, **payload: Any) -> None:
        self.clock += 1
        stamp = f"2026-05-11T08:{self.clock // 60:02d}:{self.clock % 60:02d}.000Z"
        self.lines.append({"timestamp": stamp, "type": kind, "payload": payload})

    def event(self, etype: str, **payload: Any) -> None:
        self.add("event_msg", type=etype, **payload)

    def item(self, itype: str, **payload: Any) -> None:
        self.add("response_item", type=itype, **payload)

    def message(self, role: str, text: str) -> None:
        kind = "output_text" if role == "assistant" else "input_text"
        self.item("message", role=role, content=[{"type": kind, "text": text}])

    def prompt(self, text: str) -> None:
        """A typed prompt as Codex writes it: the model item and the client event."""
        self.message("user", text)
        self.event("user_message", message=text, images=[])

    def answer(self, text: str) -> None:
        """An answer as Codex writes it: the client event and the model item."""
        self.event("agent_message", message=text, phase="final_answer")
        self.message("assistant", text)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in self.lines))
        return path


def contents(data: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in recall.project(data)]


def finds(data: dict[str, Any], query: str) -> recall.Candidate | None:
    return recall.classic_candidate(data, recall.ClassicQuery.parse(query), window=1)


def rollout_path(root: Path, thread_id: str = TID) -> Path:
    return root / "2026" / "05" / "11" / f"rollout-2026-05-11T11-26-55-{thread_id}.jsonl"


# ---------------------------------------------------------------------- written files


def test_prompts_answers_and_hidden_parts(tmp_path: Path) -> None:
    r = Rollout()
    r.message("developer", "<permissions instructions>sandbox rules</permissions instructions>")
    r.message("user", "# AGENTS.md instructions for /repo\n<INSTRUCTIONS>be terse</INSTRUCTIONS>")
    r.message("user", "<environment_context><cwd>/repo</cwd></environment_context>")
    r.prompt("rename the flamingo module")
    r.item(
        "reasoning",
        summary=[{"type": "summary_text", "text": "thinking of armadillos"}],
        encrypted_content="xyz",
    )
    r.item(
        "function_call", name="shell", arguments='{"command": ["rg", "flamingo"]}', call_id="call_1"
    )
    r.event("exec_command_end", call_id="call_1", exit_code=0, stdout="found")
    r.item("function_call_output", call_id="call_1", output="src/flamingo.py: pangolinword")
    r.event("token_count", info=None)
    r.answer("Renamed the flamingo module.")
    path = r.write(rollout_path(tmp_path))

    session = read_codex_session(path)
    assert contents(session.data) == [
        ("user", "rename the flamingo module"),
        ("assistant", ""),
        ("tool", ""),
        ("assistant", "Renamed the flamingo module."),
    ]
    tool = session.data["messages"][2]
    assert tool["tool_call_id"] == "call_1" and tool["metadata"]["name"] == "shell"
    for word in ("pangolinword", "armadillos", "terse", "sandbox"):
        assert finds(session.data, word) is None, word
    assert finds(session.data, "flamingo") is not None

    full = read_codex_session(path, include_hidden=True)
    assert contents(full.data) == contents(session.data)
    messages = full.data["messages"]
    # The injected messages are hidden notes of the first turn; the answer's reasoning and
    # call belong to the assistant turn that made the call.
    assert [label for label, _ in hidden_parts(messages[0])] == ["hidden note"] * 3
    # The client's event about the call, written before its output, is shown with the call.
    assert [label for label, _ in hidden_parts(messages[1])] == [
        "thinking",
        "tool call: shell",
        "exec command end",
    ]
    assert hidden_parts(messages[1])[:2] == [
        ("thinking", "thinking of armadillos"),
        ("tool call: shell", '{"command": ["rg", "flamingo"]}'),
    ]
    assert hidden_parts(messages[2]) == [("tool result: shell", "src/flamingo.py: pangolinword")]
    assert session.hidden_records["message/developer"] == 1
    assert session.hidden_records["message/user"] == 2
    assert session.hidden_records["message/user-copy"] == 1
    assert session.hidden_records["event/token_count"] == 1

    meta = session.data["metadata"]
    assert session.session_id == TID and session.cwd == CWD == meta["project"]
    assert meta["source"] == "codex" and meta["git_branch"] == "feat/x"
    assert "resume_command" not in meta  # the line is built from the kind and the id
    assert session.title == "rename the flamingo module"


def test_compacted_lines_make_the_archived_boundary(tmp_path: Path) -> None:
    r = Rollout()
    r.prompt("first about lemurs")
    r.answer("lemurs answer")
    r.event("context_compacted")
    r.add("compacted", message="lemurs were discussed", window_number=2)
    r.prompt("second about tapirs")
    r.answer("tapirs answer")
    r.event("context_compacted")
    r.add(
        "compacted",
        message="",
        replacement_history=[
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "summary: lemurs and tapirs"}],
            },
        ],
    )
    r.prompt("third about okapis")
    r.answer("okapis answer")
    data = read_codex_session(r.write(rollout_path(tmp_path))).data
    assert [m["content"] for m in data["archived_messages"]] == [
        "first about lemurs",
        "lemurs answer",
        f"{SUMMARY_PREFIX}\nlemurs were discussed",
        "second about tapirs",
        "tapirs answer",
    ]
    assert data["archived_messages"][2]["metadata"]["superseded"] is True
    summary = data["messages"][0]
    assert summary["content"] == f"{SUMMARY_PREFIX}\nsummary: lemurs and tapirs"
    assert summary["metadata"]["compaction"] is True
    assert summary["metadata"]["compacted_count"] == 4
    assert contents(data)[-2:] == [("user", "third about okapis"), ("assistant", "okapis answer")]
    hit = finds(data, "tapirs answer")
    assert hit is not None and hit.hit.archived is True

    # Without compacted lines, the event alone marks the boundary.
    r = Rollout()
    r.prompt("before")
    r.event("context_compacted")
    r.prompt("after")
    data = read_codex_session(r.write(rollout_path(tmp_path / "b"))).data
    assert contents(data) == [
        ("user", "before"),
        ("system", f"{SUMMARY_PREFIX}\n"),
        ("user", "after"),
    ]
    assert [m.get("archived", False) for m in recall.project(data)] == [True, False, False]


def test_titles_links_and_the_session_index(tmp_path: Path) -> None:
    parent = "019e0000-0000-7000-8000-000000000001"
    r = Rollout(
        forked_from_id=parent,
        source={
            "subagent": {
                "thread_spawn": {"parent_thread_id": parent, "depth": 1, "agent_nickname": "scout"}
            }
        },
    )
    r.prompt("the first prompt")
    r.event("thread_name_updated", thread_id=TID, thread_name="Named in the file")
    r.event("collab_agent_spawn_end", new_thread_id="child-1")
    path = r.write(rollout_path(tmp_path / "sessions"))
    session = read_codex_session(path)
    meta = session.data["metadata"]
    assert session.title == "Named in the file"
    assert meta["parent_session"] == parent == meta["forked_from"]
    assert meta["subagent"] == {"agent_nickname": "scout", "depth": 1}
    assert meta["child_sessions"] == ["child-1"]

    index = tmp_path / "session_index.jsonl"
    index.write_text(
        json.dumps({"id": TID, "thread_name": "Old name", "updated_at": "1"})
        + "\n"
        + json.dumps({"id": TID, "thread_name": "Index name", "updated_at": "2"})
        + "\n"
        + "not json\n"
    )
    names = read_session_index(tmp_path)
    assert names == {TID: "Index name"}
    assert read_codex_session(path, names=names).title == "Index name"
    assert read_session_index(tmp_path / "nowhere") == {}


def test_legacy_rollouts_and_prompts_without_events(tmp_path: Path) -> None:
    lines = [
        {
            "id": TID,
            "timestamp": "2025-08-01T10:00:00Z",
            "instructions": None,
            "git": {"branch": "old"},
        },
        {"record_type": "state"},
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "<environment_context>x</environment_context>"}
            ],
        },
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "an old typed prompt"}],
        },
        {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c"},
        {"type": "function_call_output", "call_id": "c", "output": {"content": "ok"}},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "an old answer"}],
        },
    ]
    path = tmp_path / "rollout-2025-08-01T10-00-00-legacy.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    session = read_codex_session(path)
    assert contents(session.data) == [
        ("user", "an old typed prompt"),
        ("assistant", ""),
        ("tool", ""),
        ("assistant", "an old answer"),
    ]
    assert session.session_id == TID
    assert session.data["metadata"]["git_branch"] == "old"
    assert session.unknown_records == {}


def test_bad_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    r = Rollout()
    r.prompt("kept prompt")
    r.add("a_record_from_the_future", anything=1)
    r.answer("kept answer")
    path = r.write(rollout_path(tmp_path))
    lines = path.read_bytes().split(b"\n")
    lines.insert(2, b'{"timestamp": "2026-05-11T08:00:00Z", "type": "event_msg", "pay')
    lines.insert(3, b"42")
    whole = b"\n".join(lines)
    path.write_bytes(whole + b'{"timestamp": "2026')
    session = read_codex_session(path)
    assert contents(session.data) == [("user", "kept prompt"), ("assistant", "kept answer")]
    assert session.skipped_lines == 3 and session.partial_tail
    assert session.end_offset == len(whole)
    assert session.unknown_records == {"a_record_from_the_future": 1}


def test_a_grown_rollout_is_read_on_from_where_the_last_read_stopped(tmp_path: Path) -> None:
    r = Rollout()
    r.prompt("start the ibex task")
    r.item("function_call", name="shell", arguments="{}", call_id="c1")
    path = r.write(rollout_path(tmp_path))
    first = read_codex_session(path)
    assert not first.resumed and first.end_offset == path.stat().st_size

    def append(rollout: Rollout, unfinished: bytes = b"") -> bytes:
        body = b"".join(json.dumps(line).encode() + b"\n" for line in rollout.lines)
        with open(path, "ab") as fh:
            fh.write(body[path.stat().st_size :] + unfinished)
        return body

    r.item("function_call_output", call_id="c1", output="ok")
    r.answer("the ibex task is done")
    r.add("mystery_record", x=1)
    late = {
        "timestamp": "2026-05-11T09:00:00.000Z",
        "type": "event_msg",
        "payload": {"type": "agent_message", "message": "a late word"},
    }
    body = append(r, json.dumps(late).encode())
    grown = read_codex_session(path, prior=first.state)
    assert grown.resumed and grown.end_offset == len(body)
    assert grown.data == read_codex_session(path).data
    assert contents(grown.data)[-2:] == [
        ("assistant", "the ibex task is done"),
        ("assistant", "a late word"),
    ]
    assert grown.unknown_records == {"mystery_record": 1}
    with open(path, "ab") as fh:
        fh.write(b"\n")
    done = read_codex_session(path, prior=grown.state)
    assert done.resumed and done.data == read_codex_session(path).data
    assert [c for _r, c in contents(done.data)].count("a late word") == 1
    assert done.unknown_records == {"mystery_record": 1}
    # Used again, a taken-over state reads the file whole.
    assert not read_codex_session(path, prior=grown.state).resumed
    # A first compacted line changes how the earlier lines read: the file is read whole.
    r.lines.append(late)
    r.event("context_compacted")
    r.add("compacted", message="ibex summary")
    r.prompt("after the summary")
    append(r)
    compacted = read_codex_session(path, prior=done.state)
    assert not compacted.resumed
    assert compacted.data == read_codex_session(path).data
    assert compacted.data["messages"][0]["content"] == f"{SUMMARY_PREFIX}\nibex summary"


def test_files_defaults_and_read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODEX_HOME", raising=False)
    assert default_codex_dir() == Path.home() / ".codex" / "sessions"
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    assert default_codex_dir() == tmp_path / "sessions"
    r = Rollout()
    r.prompt("hello")
    path = r.write(rollout_path(tmp_path / "sessions"))
    (tmp_path / "sessions" / "notes.jsonl").write_text("{}\n")
    assert codex_session_files() == [path]
    before = {
        str(p): (p.stat().st_ino, p.stat().st_mtime_ns, p.read_bytes())
        for p in tmp_path.rglob("*")
        if p.is_file()
    }
    read_codex_session(path, include_hidden=True, names=read_session_index())
    after = {
        str(p): (p.stat().st_ino, p.stat().st_mtime_ns, p.read_bytes())
        for p in tmp_path.rglob("*")
        if p.is_file()
    }
    assert after == before
    assert os.listdir(path.parent) == [path.name]


# ---------------------------------------------------------------------- real rollouts


def raw_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def test_codemie_rollout(shared_data: Path) -> None:
    path = shared_data / "codex" / CODEMIE
    raw = raw_lines(path)
    typed = [
        o["payload"]["message"]
        for o in raw
        if o["type"] == "event_msg" and o["payload"]["type"] == "user_message"
    ]
    answers = [
        o["payload"]["message"]
        for o in raw
        if o["type"] == "event_msg" and o["payload"]["type"] == "agent_message"
    ]
    calls = [
        o
        for o in raw
        if o["type"] == "response_item"
        and o["payload"]["type"] in ("function_call", "custom_tool_call")
    ]
    session = read_codex_session(path)
    projection = recall.project(session.data)
    assert session.skipped_lines == 0 and not session.unknown_records
    assert (
        [m["content"] for m in projection if m["role"] == "user"]
        == typed
        == ["show tools", "let's update the defailt context compart to 90 in env var"]
    )
    prose = [m["content"] for m in projection if m["role"] == "assistant" and m["content"]]
    assert prose == [a.strip() for a in answers] and len(prose) == 13
    assert sum(1 for m in projection if m["role"] == "tool") == len(calls) == 102
    assert session.data["archived_messages"] == []
    assert session.title == "show tools"
    assert session.data["metadata"]["git_branch"] == "feat/codex-agent-plugin"
    assert session.session_id == TID
    # A word only in tool output is not found; one of an answer is.
    assert finds(session.data, "OPENCODE_CONFIG_CONTENT") is not None
    hidden = read_codex_session(path, include_hidden=True)
    assert contents(hidden.data) == contents(session.data)
    assert sum(len(hidden_parts(m)) for m in recall.project(hidden.data)) > len(calls) * 2


def test_rollout_ending_mid_turn(shared_data: Path) -> None:
    path = shared_data / "codex" / VIEW
    session = read_codex_session(path)
    projection = recall.project(session.data)
    assert [m["role"] for m in projection if m["role"] == "user"] == ["user"]
    assert not any(m["content"] for m in projection if m["role"] == "assistant")
    assert sum(1 for m in projection if m["role"] == "tool") == 39
    assert session.title.startswith("finish up the users work")
    assert session.hidden_records["message/user"] == 1  # the environment context
    assert session.hidden_records["message/user-copy"] == 1  # the prompt, as the model got it


def test_catalogue_of_record_types(shared_data: Path) -> None:
    path = shared_data / "codex" / "agent-sessions" / "catalogue.jsonl"
    raw = raw_lines(path)
    n_compacted = sum(1 for o in raw if o.get("type") == "compacted")
    session = read_codex_session(path)
    archived = session.data["archived_messages"]
    assert n_compacted == 6
    assert sum(1 for m in archived if m["metadata"].get("superseded")) == n_compacted - 1
    assert session.data["messages"][0]["metadata"]["compaction"] is True
    assert session.unknown_records == {} and session.skipped_lines == 0
    named = [
        o["payload"]["thread_name"]
        for o in raw
        if o.get("type") == "event_msg" and o["payload"].get("type") == "thread_name_updated"
    ]
    assert session.data["metadata"]["title"] == named[-1]
