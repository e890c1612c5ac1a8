"""GitHub Copilot CLI sessions as a read-only source: a real Copilot CLI 1.0.55 events file
(tests/fixtures/copilot, long values trimmed; see its README and licence)."""

from __future__ import annotations

import json
import shutil
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
from session_browser.core.sources.copilot import CopilotSource, default_copilot_dir
from session_browser.core.vault import Vault
from session_browser.core.vault.reading import kept_session
from tests.agents import cli, ids, snapshot

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "copilot"
SID = "030f200c-c26f-4ef0-9099-6d1156c83631"
CWD = "/Users/testuser/workspace/demo-project"
AGENT = "toolu_vrtx_01TxUTxpA98CaQcbRogpf822"


def copilot_home(home: Path) -> Path:
    dot = home / ".copilot"
    shutil.copytree(FIXTURE / "session-state", dot / "session-state")
    return dot


def vscode_user(home: Path) -> Path:
    """``~/.config/Code/User`` holding the fixture's chat sessions."""
    user = home / ".config" / "Code" / "User"
    shutil.copytree(FIXTURE / "Code" / "User", user)
    return user


def events() -> list[dict[str, Any]]:
    path = FIXTURE / "session-state" / SID / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_real_session_turns_subagent_and_hidden_parts(tmp_path: Path) -> None:
    source = CopilotSource(copilot_home(tmp_path) / "session-state")
    assert list(source.list_files()) == [f"{SID}/events.jsonl"]
    data = source.load(f"{SID}/events.jsonl")
    assert data is not None and data["session_id"] == SID
    assert data["metadata"]["cwd"] == CWD
    raw = events()
    prompt = next(e["data"]["content"] for e in raw if e["type"] == "user.message")
    said = [
        e["data"]["content"]
        for e in raw
        if e["type"] == "assistant.message" and e["data"]["content"] and "agentId" not in e
    ]
    sub = [
        e["data"]["content"]
        for e in raw
        if e["type"] == "assistant.message" and e["data"]["content"] and "agentId" in e
    ]
    projection = recall.project(data)
    assert [(m["role"], m["content"], m["metadata"].get("subagent")) for m in projection] == [
        ("user", prompt, None),
        ("assistant", said[0], None),  # the answer, whose tool call ran the subagent
        ("assistant", sub[0], AGENT),  # then the subagent's own answer, marked
    ]
    assert recall.session_title(data).startswith("Read .copilot/skills/demo-greeter/SKILL.md")
    assert "<current_datetime>" not in json.dumps(data)  # what the model got, not shown
    assert "def greet" not in json.dumps(data)  # a tool's output: hidden
    full = source.load(f"{SID}/events.jsonl", include_hidden=True)
    assert full is not None
    labels = [label for m in recall.project(full) for label, _t in hidden_parts(m)]
    requests = [
        r["name"]
        for e in raw
        if e["type"] == "assistant.message"
        for r in e["data"]["toolRequests"]
    ]
    assert sorted(label for label in labels if label.startswith("tool call: ")) == sorted(
        f"tool call: {name}" for name in requests
    )
    thinking = sum(
        1 for e in raw if e["type"] == "assistant.message" and e["data"].get("reasoningText")
    )
    assert labels.count("thinking") == thinking
    assert "def greet" in json.dumps(full)


def test_a_compaction_is_the_archived_boundary(tmp_path: Path) -> None:
    lines = [json.dumps(e) for e in events()]
    more = [
        {
            "type": "session.compaction_start",
            "data": {},
            "id": "c1",
            "timestamp": "2026-05-26T16:20:00.000Z",
            "parentId": None,
        },
        {
            "type": "session.compaction_complete",
            "data": {"success": True, "summary": "Counted hello.py and summarised README.md."},
            "id": "c2",
            "timestamp": "2026-05-26T16:20:05.000Z",
            "parentId": "c1",
        },
        {
            "type": "user.message",
            "data": {"content": "now greet the heron"},
            "id": "c3",
            "timestamp": "2026-05-26T16:21:00.000Z",
            "parentId": "c2",
        },
    ]
    folder = tmp_path / "session-state" / SID
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_text("\n".join([*lines, *map(json.dumps, more)]) + "\n")
    data = CopilotSource(tmp_path / "session-state").load(f"{SID}/events.jsonl")
    assert data is not None
    projection = recall.project(data)
    assert all(m.get("archived") for m in projection[:3])
    assert [(m["role"], m["content"]) for m in projection[3:]] == [
        ("system", f"{SUMMARY_PREFIX}\nCounted hello.py and summarised README.md."),
        ("user", "now greet the heron"),
    ]


def test_default_dir_and_bare_copilot(tmp_path: Path) -> None:
    assert default_copilot_dir() == Path.home() / ".copilot" / "session-state"
    dot = copilot_home(Path.home())
    before = snapshot(dot)
    found = cli("search", "subagent findings", "--store", "copilot:", "--json", "--no-index")
    assert ids(found) == [SID] and found["results"][0]["source"] == "copilot"
    assert SID in ids(cli("search", "source:copilot", "greeting", "--json"))
    assert snapshot(dot) == before


@pytest.mark.parametrize("index", [True, False])
def test_search_filters_and_reads_never_write(tmp_path: Path, index: bool) -> None:
    dot = copilot_home(tmp_path)
    before = snapshot(dot)
    store = f"copilot:{dot / 'session-state'}"
    extra = [] if index else ["--no-index"]
    assert ids(cli("search", "README summary", "--store", store, "--json", *extra)) == [SID]
    assert ids(cli("search", "source:codex", "README", "--store", store, "--json", *extra)) == []
    assert ids(cli("search", "fixture", "--store", store, "--json", *extra)) == []
    tools = cli("search", "in:tools", "fixture", "--store", store, "--json", *extra)
    assert ids(tools) == [SID]
    hit = cli("search", "README summary", "--store", store, "--json", *extra)["results"][0]
    assert hit["project"] == CWD
    assert snapshot(dot) == before


def test_resume_line() -> None:
    assert resume_line("copilot", SID, CWD) == ResumeLine(f"cd {CWD} && copilot --resume {SID}")


def test_a_deleted_session_is_kept_by_the_vault(tmp_path: Path) -> None:
    dot = copilot_home(tmp_path)
    path = dot / "session-state" / SID / "events.jsonl"
    original = path.read_bytes()
    store = index_store(SOURCES["copilot"], dot / "session-state", vault=True)
    try:
        assert [h.session_id for h in store.search("README summary")] == [SID]
        shutil.rmtree(path.parent)
        assert store.reconcile().removed == 1
        [hit] = store.search("README summary", limit=5)
        assert hit.session_id == SID and hit.kept is not None
    finally:
        store.close()
    kept = kept_session(SID)
    assert kept is not None and "Subagent findings" in json.dumps(kept)
    with Vault() as vault:
        [version] = vault.versions(SID)
        path.parent.mkdir()
        vault.restore(version)
    assert path.read_bytes() == original


def test_doctor_lists_the_agent_its_count_and_its_retention(tmp_path: Path) -> None:
    dot = copilot_home(Path.home())
    before = snapshot(dot)
    res = CliRunner().invoke(main, ["doctor", "--json"])
    assert res.exit_code == 0, res.output
    [agent] = [a for a in json.loads(res.output)["agents"] if a["source"] == "copilot"]
    assert agent["dir"] == str(dot / "session-state") and agent["sessions"] == 1
    assert agent["retention"] == (
        "Copilot CLI and VS Code keep chat sessions until they are deleted"
    )
    assert snapshot(dot) == before


def test_flat_early_files_and_a_dir_above_session_state(tmp_path: Path) -> None:
    dot = copilot_home(tmp_path)
    other = "5b1e0c2d-0000-4000-8000-0000000000aa"
    text = (dot / "session-state" / SID / "events.jsonl").read_text().replace(SID, other)
    (dot / "session-state" / f"{other}.jsonl").write_text(text)  # an early build's flat file
    (dot / "session-state" / SID / "files").mkdir()
    (dot / "session-state" / SID / "files" / "notes.jsonl").write_text("{}\n")  # an artifact
    assert sorted(CopilotSource(tmp_path).list_files()) == [
        f".copilot/session-state/{SID}/events.jsonl",
        f".copilot/session-state/{other}.jsonl",
    ]
    source = CopilotSource(dot / "session-state")
    data = source.load(f"{other}.jsonl")
    assert data is not None and data["session_id"] == other


CHAT = "4f6a2b1c-8d9e-4f0a-9b1c-2d3e4f5a6b7c"
EMPTY = "9a8b7c6d-0000-4000-8000-00000000beef"
CHAT_LOG = "c0ffee00-1109-4a6b-8c7d-0e1f2a3b4c5d"
WORKSPACE = "workspaceStorage/6f1d3c2b9a8e7d6c5b4a39281706f5e4/chatSessions"


def test_vscode_chat_turns_title_workspace_and_hidden_parts(tmp_path: Path) -> None:
    user = vscode_user(tmp_path)
    source = CopilotSource(user)
    assert sorted(source.list_files()) == [
        f"globalStorage/emptyWindowChatSessions/{EMPTY}.json",
        f"{WORKSPACE}/{CHAT}.json",
        f"{WORKSPACE}/{CHAT_LOG}.jsonl",  # (its older .json beside it is left out)
    ]
    data = source.load(f"{WORKSPACE}/{CHAT}.json")
    assert data is not None and data["session_id"] == f"vscode-{CHAT}"
    assert recall.session_title(data) == "CRLF in quoted strings"
    assert data["metadata"]["cwd"] == "/home/dev/my parser"  # the workspace's folder
    assert [(m["role"], m["content"]) for m in recall.project(data)] == [
        ("user", "Why does the tokenizer drop CRLF in quoted strings?"),
        (
            "assistant",
            "The lexer splits on `\\n` before it knows it is inside quotes, so the `\\r` of a "
            "CRLF stays at the end of the string.",
        ),
        ("user", "Fix it"),
        ("assistant", "Done: quoted strings now keep CR, LF and CRLF."),
    ]
    assert "egret" not in json.dumps(data)  # a tool's result: hidden
    full = source.load(f"{WORKSPACE}/{CHAT}.json", include_hidden=True)
    assert full is not None
    parts = [(label, text) for m in recall.project(full) for label, text in hidden_parts(m)]
    labels = [label for label, _text in parts]
    assert labels.count("thinking") == 1 and "tool call: copilot_readFile" in labels
    assert "egret" in json.dumps(full) and "rate limited" in json.dumps(full)
    older = source.load(f"globalStorage/emptyWindowChatSessions/{EMPTY}.json")
    assert older is not None and recall.session_title(older) == "Heron regex"  # version 2
    assert [m["content"] for m in recall.project(older)] == [
        "write a regex for heron ids",
        "Use `^HER-[0-9]{4}$`.",
    ]
    # A chat of VS Code has no resume command: its id is no Copilot CLI session's.
    refused = resume_line("copilot", data["session_id"], "/home/dev/my parser")
    assert isinstance(refused, ResumeRefused)


def test_vscode_chat_log_is_replayed(tmp_path: Path) -> None:
    """VS Code 1.109 and later keep a chat as an append log (``<id>.jsonl``): the first line
    is the chat, each later one a change; the chat read is the one the log ends with, and
    the flat ``<id>.json`` an older VS Code left beside it is not a second session."""
    user = vscode_user(tmp_path)
    source = CopilotSource(user)
    data = source.load(f"{WORKSPACE}/{CHAT_LOG}.jsonl")
    assert data is not None and data["session_id"] == f"vscode-{CHAT_LOG}"
    assert recall.session_title(data) == "Pinning ruff in pre-commit"  # set by a later line
    assert data["metadata"]["cwd"] == "/home/dev/my parser"
    assert [(m["role"], m["content"]) for m in recall.project(data)] == [
        ("user", "How do I pin the ruff version in pre-commit?"),
        # a streamed part replaced in place (a push that cuts the array first)
        (
            "assistant",
            "Set `rev: v0.14.2` on the ruff-pre-commit hook; `pre-commit autoupdate` "
            "moves it later.",
        ),
        ("user", "And keep the lockfile in step"),
        (
            "assistant",
            "Add a step that compares the hook's rev with the version in uv.lock and fails "
            "when they differ.",
        ),
    ]
    assert "tern" not in json.dumps(data)  # the stale flat file is not read
    assert "ptarmigan" not in json.dumps(data)  # a tool's result: hidden
    full = source.load(f"{WORKSPACE}/{CHAT_LOG}.jsonl", include_hidden=True)
    assert full is not None and "ptarmigan" in json.dumps(full)
    labels = [label for m in recall.project(full) for label, _text in hidden_parts(m)]
    assert labels.count("thinking") == 1 and "tool call: copilot_readFile" in labels
    # Found by its id as VS Code names it, and a cut-short last line is passed over.
    assert source.named_files(f"vscode-{CHAT_LOG}", set(source.list_files())) == [
        f"{WORKSPACE}/{CHAT_LOG}.jsonl"
    ]
    log = user / WORKSPACE / f"{CHAT_LOG}.jsonl"
    with log.open("a") as f:
        f.write('{"kind":1,"k":["customTitle"],"v":"cut sh')
    again = source.load(f"{WORKSPACE}/{CHAT_LOG}.jsonl")
    assert again is not None and recall.session_title(again) == "Pinning ruff in pre-commit"
    assert len(recall.project(again)) == 4


@pytest.mark.parametrize("index", [True, False])
def test_vscode_chats_found_by_bare_copilot(index: bool) -> None:
    home = Path.home()
    user = vscode_user(home)
    dot = copilot_home(home)
    before = {**snapshot(user), **snapshot(dot)}
    extra = [] if index else ["--no-index"]
    found = ids(cli("search", "CRLF", "--store", "copilot:", "--json", *extra))
    assert f"vscode-{CHAT}" in found
    assert ids(cli("search", "egret", "--store", "copilot:", "--json", *extra)) == []
    tools = cli("search", "in:tools", "egret", "--store", "copilot:", "--json", *extra)
    assert ids(tools) == [f"vscode-{CHAT}"]
    assert SID in ids(cli("search", "README summary", "--store", "copilot:", "--json", *extra))
    assert {**snapshot(user), **snapshot(dot)} == before
