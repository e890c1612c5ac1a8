"""Kimi Code CLI sessions as a read-only source: the real wire logs of ../shared/data/kimi laid
out as newer releases keep them (``<share>/sessions/<work dir md5>/<session>/agents/<agent>/``),
and a wire log as kimi-cli's Python releases write it (``wire/file.py`` and ``wire/types.py``
of MoonshotAI/kimi-cli at 4a550effdfcb29a25a5d325bf935296cc50cd417)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core import recall
from session_browser.core.model import SUMMARY_PREFIX, hidden_parts
from session_browser.core.open import index_store
from session_browser.core.resume_line import ResumeLine, resume_line
from session_browser.core.sources import SOURCES
from session_browser.core.sources.kimi import KimiSource, default_kimi_dir
from session_browser.core.vault import Vault
from session_browser.core.vault.reading import kept_session
from tests.agents import cli, ids, snapshot

SID = "5e3f0c1e-1111-4222-8333-944455556666"
OLD_SID = "0b7d9c2a-3e4f-4a5b-9c6d-7e8f9a0b1c2d"
PROJECT = "/private/tmp/as-agent-lab/kimi/project"
OLD_PROJECT = "/home/dev/parser"


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def python_wire() -> str:
    """A wire log as kimi-cli's Python releases write it: a metadata line, then
    ``WireMessageRecord``s (``{timestamp, message: {type, payload}}``)."""

    def rec(t: float, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": t, "message": {"type": kind, "payload": payload}}

    lines: list[dict[str, Any]] = [
        {"type": "metadata", "protocol_version": "1.10"},
        rec(1767000000.0, "TurnBegin", {"user_input": "why does the tokenizer drop CRLF"}),
        rec(1767000000.1, "StepBegin", {"n": 1}),
        rec(1767000001.0, "ThinkPart", {"type": "think", "think": "look at the lexer first"}),
        rec(
            1767000001.5,
            "ToolCall",
            {
                "type": "function",
                "id": "Shell_0",
                "function": {"name": "Shell", "arguments": '{"command": "pytest -q"}'},
            },
        ),
        rec(
            1767000002.0,
            "ToolResult",
            {
                "tool_call_id": "Shell_0",
                "return_value": {
                    "is_error": True,
                    "output": "AssertionError: expected LF",
                    "message": "",
                    "display": [],
                },
            },
        ),
        rec(1767000003.0, "TextPart", {"type": "text", "text": "The lexer splits on LF only."}),
        rec(1767000003.1, "TurnEnd", {}),
        rec(1767000004.0, "CompactionBegin", {}),
        rec(1767000004.5, "CompactionEnd", {}),
        rec(1767000005.0, "TurnBegin", {"user_input": [{"type": "text", "text": "fix it"}]}),
        rec(
            1767000006.0,
            "TextPart",
            {"type": "text", "text": "Fixed: the lexer now splits on CRLF."},
        ),
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


def kimi_home(home: Path, shared_data: Path) -> Path:
    """A ``.kimi`` share dir: the real session (main log and its subagent's) under a newer
    release's layout, and a Python release's session with its ``state.json`` title."""
    share = home / ".kimi"
    real = shared_data / "kimi" / "agent-sessions"
    session = share / "sessions" / "wd_real" / SID / "agents"
    (session / "main").mkdir(parents=True)
    (session / "agent-0").mkdir()
    shutil.copy(real / "assistant_tools.jsonl", session / "main" / "wire.jsonl")
    shutil.copy(real / "subagent_agent-0.jsonl", session / "agent-0" / "wire.jsonl")
    digest = hashlib.md5(OLD_PROJECT.encode()).hexdigest()
    old = share / "sessions" / digest / OLD_SID
    old.mkdir(parents=True)
    (old / "wire.jsonl").write_text(python_wire())
    (old / "context.jsonl").write_text("")
    (old / "state.json").write_text(json.dumps({"custom_title": "CRLF in the tokenizer"}))
    (share / "kimi.json").write_text(json.dumps({"work_dirs": [{"path": OLD_PROJECT}]}))
    return share


MAIN = f"wd_real/{SID}/agents/main/wire.jsonl"
OLD = f"{hashlib.md5(OLD_PROJECT.encode()).hexdigest()}/{OLD_SID}/wire.jsonl"


def test_real_session_turns_compaction_subagent_and_hidden_parts(
    tmp_path: Path, shared_data: Path
) -> None:
    share = kimi_home(tmp_path, shared_data)
    source = KimiSource(share / "sessions")
    assert sorted(source.list_files()) == sorted([MAIN, OLD])  # the subagent's log is no session
    raw = records(share / "sessions" / MAIN)
    sub = records(share / "sessions" / f"wd_real/{SID}/agents/agent-0/wire.jsonl")
    data = source.load(MAIN)
    assert data is not None and data["session_id"] == SID
    assert data["metadata"]["cwd"] == PROJECT  # where its tools ran
    projection = recall.project(data)
    prompts = [r["input"][0]["text"] for r in raw if r["type"] == "turn.prompt"]
    sub_prompts = [r["input"][0]["text"] for r in sub if r["type"] == "turn.prompt"]
    users = [m for m in projection if m["role"] == "user"]
    assert [m["content"] for m in users if not m["metadata"].get("subagent")] == prompts
    assert [m["content"] for m in users if m["metadata"].get("subagent")] == [
        p.strip() for p in sub_prompts
    ]
    assert recall.session_title(data) == "hi"
    state = share / "sessions" / f"wd_real/{SID}/agents/main/state.json"
    before = source.identities([MAIN])[MAIN]
    state.write_text(json.dumps({"custom_title": "Count the Swift files"}))
    assert source.identities([MAIN])[MAIN] != before  # a new title is read again
    titled = source.load(MAIN)
    assert titled is not None and recall.session_title(titled) == "Count the Swift files"
    state.unlink()
    # The compaction: everything before it archived, its summary the first active message.
    summary = next(r for r in raw if r["type"] == "context.apply_compaction")["summary"]
    assert all(m.get("archived") for m in projection[:-1])
    assert projection[-1]["role"] == "system"
    assert projection[-1]["content"] == f"{SUMMARY_PREFIX}\n{summary}"
    assert data["last_compaction"]["metadata"]["kimi_compaction"] is True
    # The subagent's turns come right after the answer that ran it.
    roles = [(m["role"], m["metadata"].get("subagent")) for m in projection]
    first_sub = roles.index(("user", "agent-0"))
    assert projection[first_sub - 1]["content"].startswith("The subagent counted")
    # What the model said: each turn's text parts, in order.
    texts = [
        r["event"]["part"]["text"]
        for r in raw
        if r["type"] == "context.append_loop_event"
        and r["event"]["type"] == "content.part"
        and "text" in r["event"]["part"]
    ]
    said = "\n".join(
        m["content"]
        for m in projection
        if m["role"] == "assistant" and not m["metadata"].get("subagent")
    )
    assert all(t.strip() in said for t in texts)
    # Thinking, tool calls and results only with include_hidden.
    assert not any(hidden_parts(m) for m in projection)
    full = source.load(MAIN, include_hidden=True)
    assert full is not None
    labels = [label for m in recall.project(full) for label, _t in hidden_parts(m)]
    loop = [r["event"] for r in [*raw, *sub] if r["type"] == "context.append_loop_event"]
    calls = sum(1 for e in loop if e["type"] == "tool.call")
    thinks = sum(1 for e in loop if e["type"] == "content.part" and "think" in e["part"])
    assert sum(1 for label in labels if label.startswith("tool call: ")) == calls
    assert labels.count("thinking") == thinks
    assert "find /private/tmp" not in json.dumps(data)  # a command, hidden by default


def test_real_small_log_steer_and_cancel(tmp_path: Path, shared_data: Path) -> None:
    folder = tmp_path / "sessions" / "wd" / SID
    folder.mkdir(parents=True)
    shutil.copy(shared_data / "kimi" / "agent-sessions" / "small.jsonl", folder / "wire.jsonl")
    source = KimiSource(tmp_path / "sessions")
    data = source.load(f"wd/{SID}/wire.jsonl")
    assert data is not None
    assert data["metadata"]["cwd"] == PROJECT  # profile.bind's environmentDisclosure
    typed = [
        r["input"][0]["text"]
        for r in records(folder / "wire.jsonl")
        if r["type"] in ("turn.prompt", "turn.steer")
    ]
    assert [m["content"] for m in recall.project(data) if m["role"] == "user"] == typed
    assert data["archived_messages"] == []


def test_python_release_wire_log(tmp_path: Path, shared_data: Path) -> None:
    share = kimi_home(tmp_path, shared_data)
    source = KimiSource(share / "sessions")
    data = source.load(OLD, include_hidden=True)
    assert data is not None and data["session_id"] == OLD_SID
    assert data["metadata"]["cwd"] == OLD_PROJECT  # from kimi.json's work dirs
    assert recall.session_title(data) == "CRLF in the tokenizer"  # state.json
    projection = recall.project(data)
    assert [(m["role"], m["content"], bool(m.get("archived"))) for m in projection] == [
        ("user", "why does the tokenizer drop CRLF", True),
        ("assistant", "The lexer splits on LF only.", True),
        ("system", f"{SUMMARY_PREFIX}\nConversation compacted", False),
        ("user", "fix it", False),
        ("assistant", "Fixed: the lexer now splits on CRLF.", False),
    ]
    labels = [label for m in projection for label, _t in hidden_parts(m)]
    assert labels.count("thinking") == 1
    assert sum(1 for label in labels if label.startswith("tool call: ")) == 1


def test_bad_lines_are_counted_and_a_log_without_turns_is_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "wd" / SID
    folder.mkdir(parents=True)
    (folder / "wire.jsonl").write_bytes(b'{"type":"metadata"}\nnot json\n[1]\n')
    source = KimiSource(tmp_path)
    name = f"wd/{SID}/wire.jsonl"
    got = source.parse(name, source.list_files()[name], None)
    assert not hasattr(got, "data") and "2 line(s) are not JSON records" in got.reason


def test_default_dir_and_the_env_var_that_moves_it(
    tmp_path: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert default_kimi_dir() == Path.home() / ".kimi" / "sessions"
    monkeypatch.setenv("KIMI_SHARE_DIR", str(tmp_path / ".kimi"))
    assert default_kimi_dir() == tmp_path / ".kimi" / "sessions"
    share = kimi_home(tmp_path, shared_data)
    before = snapshot(share)
    found = cli("search", "tokenizer CRLF", "--store", "kimi:", "--json", "--no-index")
    assert ids(found) == [OLD_SID]
    assert found["results"][0]["source"] == "kimi"
    assert OLD_SID in ids(cli("search", "source:kimi", "tokenizer", "--json"))
    assert snapshot(share) == before


@pytest.mark.parametrize("index", [True, False])
def test_search_filters_and_reads_never_write(
    tmp_path: Path, shared_data: Path, index: bool
) -> None:
    share = kimi_home(tmp_path, shared_data)
    before = snapshot(share)
    store = f"kimi:{share / 'sessions'}"
    extra = [] if index else ["--no-index"]
    assert ids(cli("search", "Swift files", "--store", store, "--json", *extra)) == [SID]
    assert ids(cli("search", "source:codex", "Swift", "--store", store, "--json", *extra)) == []
    # words only in a tool's output: found with in:tools only
    assert ids(cli("search", "AssertionError", "--store", store, "--json", *extra)) == []
    tools = cli("search", "in:tools", "AssertionError", "--store", store, "--json", *extra)
    assert ids(tools) == [OLD_SID]
    hit = cli("search", "tokenizer", "--store", store, "--json", *extra)["results"][0]
    assert hit["project"] == OLD_PROJECT
    recent = cli("recent", "--store", store, "--json", *extra)
    assert sorted(ids(recent)) == sorted([SID, OLD_SID])
    assert snapshot(share) == before


def test_resume_line() -> None:
    assert resume_line("kimi", SID, PROJECT) == ResumeLine(f"cd {PROJECT} && kimi --session {SID}")


def test_a_deleted_session_is_kept_by_the_vault(tmp_path: Path, shared_data: Path) -> None:
    share = kimi_home(tmp_path, shared_data)
    wire = share / "sessions" / OLD
    original = wire.read_bytes()
    store = index_store(SOURCES["kimi"], share / "sessions", vault=True)
    try:
        assert [h.session_id for h in store.search("tokenizer")] == [OLD_SID]
        shutil.rmtree(wire.parent)  # deleted in Kimi Code CLI
        assert store.reconcile().removed == 1
        [hit] = store.search("tokenizer", limit=5)
        assert hit.session_id == OLD_SID and hit.kept is not None
        assert hit.kept.startswith(f"deleted from {wire} on ")
    finally:
        store.close()
    kept = kept_session(OLD_SID)
    assert kept is not None and kept["session_id"] == OLD_SID
    assert "splits on CRLF" in json.dumps(kept)
    with Vault() as vault:
        [version] = vault.versions(OLD_SID)
        os.makedirs(wire.parent)
        vault.restore(version)
    assert wire.read_bytes() == original


def test_doctor_lists_the_agent_its_count_and_its_retention(
    tmp_path: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIMI_SHARE_DIR", str(tmp_path / ".kimi"))
    share = kimi_home(tmp_path, shared_data)
    before = snapshot(share)
    res = CliRunner().invoke(main, ["doctor", "--json"])
    assert res.exit_code == 0, res.output
    [agent] = [a for a in json.loads(res.output)["agents"] if a["source"] == "kimi"]
    assert agent["dir"] == str(share / "sessions") and agent["sessions"] == 2
    assert agent["retention"] == "Kimi Code CLI keeps sessions until they are deleted in it"
    assert snapshot(share) == before



def test_the_listing_and_identity_agree_on_which_logs_are_sessions(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    logs = {
        "wd/s1/wire.jsonl": True,  # a Python release's session
        "wd/s2/agents/main/wire.jsonl": True,  # a newer release's
        "wd/s2/agents/helper/wire.jsonl": False,  # its subagent
        "wd/s3/agents/main/deeper/wire.jsonl": False,  # no layout kimi-cli writes
        "wd/s4/subagents/a/wire.jsonl": False,  # a subagent's log alone
        "other/main/wire.jsonl": True,  # a session folder named "main" (no agent's)
    }
    for name in logs:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text('{"type": "metadata"}\n')
    (root / "wd" / "s5" / "agents").mkdir(parents=True)
    os.symlink(root / "other" / "main", root / "wd" / "s5" / "agents" / "main")
    logs["wd/s5/agents/main/wire.jsonl"] = False  # through a symlink: never followed
    source = KimiSource(root)
    listed = source.list_files()
    assert sorted(listed) == sorted(name for name, session in logs.items() if session)
    assert source.refused == {"symlink": 1}
    for name, session in logs.items():
        assert source.identity(name) == (listed[name] if session else None), name
