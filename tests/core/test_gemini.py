"""Gemini CLI chats as a read-only source: the real legacy files of ../shared/data/gemini, and a
JSONL file laid out as gemini-cli v0.56.0 writes it (tests/fixtures/gemini, see its README)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
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
from session_browser.core.sources.gemini import (
    GeminiSource,
    default_gemini_dir,
    read_gemini_chat,
)
from session_browser.core.vault import Vault
from session_browser.core.vault.parts import parts_of
from session_browser.core.vault.reading import kept_session
from tests.agents import cli, ids, snapshot

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "gemini"
SID = "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f"
CHAT = "parser-fix/chats/session-2026-08-20T09-15-7c1d2e3f.jsonl"
PROJECT = "/home/dev/parser"
AGENT = "b3a2c1d0-9e8f-4a7b-8c6d-5e4f3a2b1c0d"
REAL = {
    # file: (title, user turns, tool calls)
    "m-gemini/session-2025-12-30T01-16-3f9ce747.json": ("Update Gemini CLI via npm", 2, 7),
    "m-gemini/session-2025-12-24T06-27-36e8d28f.json": (
        "Set up Gemini-Playground and its context.",
        4,
        28,
    ),
    "m-gemini/session-2025-12-24T21-37-2ccb51c5.json": (
        "Configure YubiKey for sudo and login",
        13,
        78,
    ),
    "codemie-code/session-2026-01-16T11-01-file-ops-37b7abef.json": ("show tools", 5, 14),
}


def gemini_home(home: Path) -> Path:
    """A ``.gemini`` dir under ``home`` holding the fixture's ``tmp`` and ``projects.json``."""
    dot = home / ".gemini"
    shutil.copytree(FIXTURE, dot, ignore=shutil.ignore_patterns("README.md"))
    return dot


def roles(messages: list[dict[str, Any]]) -> list[str]:
    return [m["role"] for m in messages]


# ---------------------------------------------------------------------- real legacy files


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_legacy_chats(shared_data: Path, name: str) -> None:
    path = shared_data / "gemini" / name
    raw = json.loads(path.read_bytes())
    title, users, calls = REAL[name]
    read = read_gemini_chat(path)
    data = read.data
    projection = recall.project(data)
    assert data["session_id"] == raw["sessionId"]
    assert recall.session_title(data) == title
    typed = [m["content"].strip() for m in raw["messages"] if m["type"] == "user"]
    assert [m["content"] for m in projection if m["role"] == "user"] == typed
    assert len(typed) == users
    said = [m["content"] for m in raw["messages"] if m["type"] == "gemini"]
    assert [m["content"] for m in projection if m["role"] == "assistant"] == said
    notes = sum(1 for m in raw["messages"] if m["type"] in ("info", "error"))
    assert sum(read.hidden_records.values()) == notes  # CLI notices are no turns
    assert read.skipped_lines == 0 and not read.unknown_records
    assert data["archived_messages"] == []
    # Hidden parts only with include_hidden, and the same turns either way.
    assert not any(hidden_parts(m) for m in projection)
    full = recall.project(read_gemini_chat(path, include_hidden=True).data)
    assert [(m["role"], m["content"]) for m in full] == [
        (m["role"], m["content"]) for m in projection
    ]
    labels = [label for m in full for label, _text in hidden_parts(m)]
    assert sum(1 for label in labels if label.startswith("tool call: ")) == calls
    thoughts = sum(len(m.get("thoughts") or []) for m in raw["messages"])
    assert labels.count("thinking") == thoughts


def test_tool_output_is_found_only_with_in_tools(shared_data: Path) -> None:
    path = shared_data / "gemini" / "m-gemini" / "session-2025-12-30T01-16-3f9ce747.json"
    raw = json.loads(path.read_bytes())
    commands = [
        c["args"]["command"]
        for m in raw["messages"]
        for c in m.get("toolCalls") or []
        if c["name"] == "run_shell_command"
    ]
    assert "which gemini" in commands
    plain = read_gemini_chat(path).data
    full = read_gemini_chat(path, include_hidden=True).data
    assert "which gemini" not in json.dumps(plain)
    query = recall.ClassicQuery.parse("in:tools which gemini", language=True)
    assert recall.classic_candidate(full, query, window=1) is not None


# ---------------------------------------------------------------------- the JSONL writer


def test_jsonl_records_rewinds_rewrites_and_compaction(tmp_path: Path) -> None:
    dot = gemini_home(tmp_path)
    # a project's other folders (logs, checkpoints, tool outputs) hold no chats to read
    outputs = dot / "tmp" / "parser-fix" / "tool-outputs" / SID
    outputs.mkdir(parents=True)
    shutil.copy(dot / "tmp" / CHAT, outputs / "session-2026-08-20T09-15-7c1d2e3f.jsonl")
    source = GeminiSource(dot / "tmp")
    assert list(source.list_files()) == [CHAT]
    data = source.load(CHAT, include_hidden=True)
    assert data is not None
    assert data["session_id"] == SID
    meta = data["metadata"]
    assert meta["title"] == "Fix CRLF handling in the tokenizer"  # a $set summary
    assert meta["cwd"] == PROJECT  # from .project_root
    archived, active = data["archived_messages"], data["messages"]
    # What the compression dropped is archived; the summary starts the active part.
    assert roles(archived) == ["user", "assistant", "assistant", "user", "assistant"]
    assert archived[0]["content"] == "the tokenizer test fails on CRLF input, find out why"
    # displayContent (what was typed) rather than the expanded @file content
    assert archived[3]["content"] == "apply the splitlines fix and rerun @tests/test_tokenizer.py"
    assert active[0]["role"] == "system" and active[0]["content"].startswith(SUMMARY_PREFIX)
    assert "<state_snapshot>" in active[0]["content"]
    assert active[0]["metadata"]["compacted_count"] == 5
    assert [m["content"] for m in active[1:]] == [
        "Got it. Thanks for the additional context!",
        "now add a regression test for mixed line endings",
        "",  # the tool call that ran a subagent; its turns come right after it
        "Find every caller of tokenize() that passes raw file text",
        "Searching for the callers.",
        "Two callers pass raw text: loader.py line 41 and cli.py line 88 (the heron branch).",
        "Added test_mixed_line_endings covering \\r\\n, \\n and a lone \\r.",
    ]
    # The subagent's own chat (chats/<session id>/<agent id>.jsonl) is folded in.
    assert [m["metadata"].get("subagent") for m in active[4:7]] == [AGENT] * 3
    assert [label for label, _t in hidden_parts(active[3])] == [
        "tool call: codebase_investigator",
        "tool result: codebase_investigator",
    ]
    assert "cli.py:88" in hidden_parts(active[5])[1][1]
    assert data["last_compaction"]["metadata"]["compacted_count"] == 5
    # The rewound prompt is gone, as gemini-cli's own loader drops it.
    assert "rust" not in json.dumps(data)
    # The record written four times (tokens, tool call scheduled, then done) is one turn.
    first = archived[1]
    assert first["metadata"]["model"] == "gemini-2.5-pro"
    assert archived[4]["metadata"]["model"] == "gemini-2.5-flash"
    labels = [label for label, _t in hidden_parts(first)]
    assert labels == ["thinking", "tool call: run_shell_command", "tool result: run_shell_command"]
    assert "AssertionError" in hidden_parts(first)[2][1]
    # The session context and the tool response recorded as a user message are no turns.
    everything = json.dumps(data)
    assert "This is the Gemini CLI" in everything  # a hidden note, with include_hidden
    plain = source.load(CHAT)
    assert plain is not None and "This is the Gemini CLI" not in json.dumps(plain)
    assert sum(1 for m in recall.project(plain) if m["role"] == "user") == 4


def test_project_dir_from_projects_json_for_a_hash_folder(tmp_path: Path) -> None:
    dot = gemini_home(tmp_path)
    digest = hashlib.sha256(PROJECT.encode()).hexdigest()
    (dot / "tmp" / "parser-fix" / ".project_root").unlink()
    (dot / "tmp" / "parser-fix").rename(dot / "tmp" / digest)  # the older releases' name
    source = GeminiSource(dot / "tmp")
    [name] = source.list_files()
    data = source.load(name)
    assert data is not None and data["metadata"]["cwd"] == PROJECT
    (dot / "projects.json").unlink()
    data = GeminiSource(dot / "tmp").load(name)
    assert data is not None and "cwd" not in data["metadata"]  # unknown: none guessed


def test_a_migrated_legacy_file_is_read_once(tmp_path: Path, shared_data: Path) -> None:
    chats = tmp_path / "tmp" / "p" / "chats"
    chats.mkdir(parents=True)
    legacy = shared_data / "gemini" / "m-gemini" / "session-2025-12-30T01-16-3f9ce747.json"
    shutil.copy(legacy, chats / legacy.name)
    source = GeminiSource(tmp_path / "tmp")
    assert list(source.list_files()) == [f"p/chats/{legacy.name}"]
    # gemini-cli resumes it by writing the whole record to <name>l, line by line.
    raw = json.loads(legacy.read_bytes())
    head = {k: v for k, v in raw.items() if k != "messages"}
    lines = [head, *raw["messages"], {"$set": {"sessionId": raw["sessionId"]}}]
    (chats / f"{legacy.name}l").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert list(source.list_files()) == [f"p/chats/{legacy.name}l"]
    old = read_gemini_chat(legacy).data
    new = source.load(f"p/chats/{legacy.name}l")
    assert new is not None
    assert new["messages"] == old["messages"]
    assert new["metadata"]["title"] == old["metadata"]["title"]


def test_bad_lines_are_counted_and_a_file_without_turns_is_skipped(tmp_path: Path) -> None:
    chats = tmp_path / "chats"
    chats.mkdir()
    good = (FIXTURE / "tmp" / CHAT).read_bytes()
    (chats / "session-2026-08-21T10-00-aaaaaaaa.jsonl").write_bytes(b"not json\n[1]\n" + good)
    (chats / "session-2026-08-21T10-01-bbbbbbbb.jsonl").write_text(
        json.dumps({"sessionId": "x", "projectHash": "y", "startTime": "2026-08-21T10:01:00Z"})
    )
    source = GeminiSource(chats)
    doc = source.parse("session-2026-08-21T10-00-aaaaaaaa.jsonl", (0, 0, 0), None)
    assert not hasattr(doc, "reason") and doc.skipped is not None  # type: ignore[union-attr]
    assert doc.skipped.bad == 2  # type: ignore[union-attr]
    skip = source.parse("session-2026-08-21T10-01-bbbbbbbb.jsonl", (0, 0, 0), None)
    assert getattr(skip, "reason", "").startswith("no conversation")


# ---------------------------------------------------------------------- stores and the CLI


def test_default_dir_and_the_env_var_that_moves_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert default_gemini_dir() == Path.home() / ".gemini" / "tmp"
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path))
    assert default_gemini_dir() == tmp_path / ".gemini" / "tmp"
    dot = gemini_home(tmp_path)
    before = snapshot(dot)
    # bare `gemini:`: the default place
    found = cli("search", "regression test", "--store", "gemini:", "--json", "--no-index")
    assert ids(found) == [SID]
    assert found["results"][0]["source"] == "gemini"
    # no store named: the default stores include Gemini CLI's when it exists
    assert SID in ids(cli("search", "source:gemini", "regression", "--json"))
    assert snapshot(dot) == before


@pytest.mark.parametrize("index", [True, False])
def test_search_filters_and_reads_never_write(tmp_path: Path, index: bool) -> None:
    dot = gemini_home(tmp_path)
    before = snapshot(dot)
    store = f"gemini:{dot / 'tmp'}"
    extra = [] if index else ["--no-index"]
    assert ids(cli("search", "regression test", "--store", store, "--json", *extra)) == [SID]
    assert ids(cli("search", "source:gemini", "CRLF", "--store", store, "--json", *extra)) == [SID]
    assert ids(cli("search", "source:codex", "CRLF", "--store", store, "--json", *extra)) == []
    # a word only in a tool's output: found with in:tools only
    assert ids(cli("search", "AssertionError", "--store", store, "--json", *extra)) == []
    tools = cli("search", "in:tools", "AssertionError", "--store", store, "--json", *extra)
    assert ids(tools) == [SID]
    hit = cli("search", "regression", "--store", store, "--json", *extra)["results"][0]
    assert hit["project"] == PROJECT
    recent = cli("recent", "--store", store, "--json", *extra)
    assert ids(recent) == [SID]
    assert recent["results"][0]["title"] == "Fix CRLF handling in the tokenizer"
    assert snapshot(dot) == before


def test_resume_line() -> None:
    assert resume_line("gemini", SID, PROJECT) == ResumeLine(
        f"cd {PROJECT} && gemini --resume {SID}"
    )


def test_a_deleted_chat_is_kept_by_the_vault(tmp_path: Path) -> None:
    dot = gemini_home(tmp_path)
    chat = dot / "tmp" / CHAT
    original = chat.read_bytes()
    sub_original = (chat.parent / SID / f"{AGENT}.jsonl").read_bytes()
    store = index_store(SOURCES["gemini"], dot / "tmp", vault=True)
    try:
        assert [h.session_id for h in store.search("regression")] == [SID]
        assert [h.session_id for h in store.search("heron")] == [SID]
        chat.unlink()  # Gemini CLI's retention deletes old chats
        assert store.reconcile().removed == 1
        [hit] = store.search("regression", limit=5)
        assert hit.session_id == SID and hit.kept is not None
        assert hit.kept.startswith(f"deleted from {chat} on ")
        shutil.rmtree(chat.parent / SID)  # and its subagents' chats
        assert store.reconcile().removed == 0
        [hit] = store.search("heron", limit=5)  # a subagent's words, from the vault's copy
        assert hit.session_id == SID and hit.kept is not None
    finally:
        store.close()
    kept = kept_session(SID)
    assert kept is not None and "mixed line endings" in json.dumps(kept)
    assert "heron branch" in json.dumps(kept)
    assert os.listdir(chat.parent) == []
    with Vault() as vault:
        [version] = vault.versions(SID)
        assert [rel for _p, rel in parts_of(vault, version)] == [f"{SID}/{AGENT}.jsonl"]
        vault.restore(version)
    assert chat.read_bytes() == original
    assert (chat.parent / SID / f"{AGENT}.jsonl").read_bytes() == sub_original


def test_doctor_lists_the_agent_its_count_and_its_retention(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path))
    dot = gemini_home(tmp_path)
    second = dot / "tmp" / "parser-fix" / "chats" / "session-2026-08-21T08-00-12345678.jsonl"
    shutil.copy(dot / "tmp" / CHAT, second)
    before = snapshot(dot)
    report = cli_json("doctor", "--json")
    [agent] = [a for a in report["agents"] if a["source"] == "gemini"]
    assert agent["dir"] == str(dot / "tmp") and agent["sessions"] == 2
    settings = dot / "settings.json"
    assert agent["retention"] == (
        f"Gemini CLI deletes chats older than 30d (the default; {settings} does not set "
        "general.sessionRetention)"
    )
    assert any(f["source"] == "gemini" for f in report["findings"])
    settings.write_text(
        json.dumps({"general": {"sessionRetention": {"maxAge": "7d", "maxCount": 5}}})
    )
    res = CliRunner().invoke(main, ["doctor"])
    assert res.exit_code == 0, res.output
    assert (
        f"gemini: 2 sessions in {dot / 'tmp'} (Gemini CLI deletes chats older than 7d and "
        f"beyond the newest 5 (general.sessionRetention in {settings}))"
    ) in res.output
    settings.write_text(json.dumps({"general": {"sessionRetention": {"enabled": False}}}))
    report = cli_json("doctor", "--json")
    [agent] = [a for a in report["agents"] if a["source"] == "gemini"]
    assert agent["retention"].startswith("Gemini CLI keeps chats until they are deleted")
    assert not any(f["source"] == "gemini" for f in report["findings"])
    settings.unlink()
    assert snapshot(dot) == before


def cli_json(*args: str) -> Any:
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


@pytest.mark.parametrize("value", [None, 5, True, "text", [], {}, [1, None], {"a": 1}])
def test_fields_of_the_wrong_type_never_break_a_read(tmp_path: Path, value: object) -> None:
    good = {"id": "u1", "timestamp": "2026-01-01T00:00:00Z", "type": "user", "content": "kept"}
    fields = ("id", "timestamp", "type", "content", "displayContent", "thoughts", "toolCalls")
    for field in fields:
        for kind in ("user", "gemini", "info"):
            bad = {"id": "m2", "timestamp": "2026-01-01T00:01:00Z", "type": kind, field: value}
            head = {"sessionId": "s1", "projectHash": "h", "summary": value, "startTime": value}
            # a string $rewindTo is a rewind (to an unknown id: everything, as gemini-cli does)
            rewind = bad["id"] if isinstance(value, str) else value
            lines = [head, good, bad, {"$set": {"summary": value}}, {"$rewindTo": rewind}]
            raw = "".join(json.dumps(x) + "\n" for x in lines).encode()
            data = read_gemini_chat(tmp_path / "c.jsonl", raw=raw, include_hidden=True).data
            assert data["messages"][0]["content"] == "kept", (field, kind)
            legacy = json.dumps({**head, "messages": [good, bad]}).encode()
            data = read_gemini_chat(tmp_path / "c.json", raw=legacy, include_hidden=True).data
            assert data["messages"][0]["content"] == "kept", (field, kind)


def test_a_chats_dir_is_listed_once_for_all_its_files_parts(tmp_path: Path) -> None:
    """The vault asks each chat file for its subagents' chats: with many chats in one dir
    that must not list the dir once per file (it made a 5,000-chat build take minutes); a
    subagent folder made later is still found."""
    root = gemini_home(tmp_path) / "tmp"
    chats = root / CHAT.rsplit("/", 1)[0]
    chat = root / CHAT
    for i in range(200):
        shutil.copy(chat, chats / f"session-2026-08-20T09-15-{i:08x}.jsonl")
    old = 1_700_000_000_000_000_000  # (a dir changed two seconds ago or more is remembered)
    os.utime(chats, ns=(old, old))
    source = GeminiSource(root)
    names = [n for n in source.list_files() if n.startswith(CHAT.rsplit("/", 1)[0])]
    listed: list[str] = []

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in ("os.scandir", "os.listdir") and str(args[0]) == str(chats):
            listed.append(event)

    sys.addaudithook(hook)
    parts = {n: source.chat_parts(n) for n in names}
    assert len(listed) == 1, listed
    assert [p.parent.name for p in parts[CHAT]] == [SID]  # the fixture's subagent chat
    (chats / "0000002a-late").mkdir()  # the dir changed: listed again
    (chats / "0000002a-late" / "agent.jsonl").write_text("{}\n")
    late = "session-2026-08-20T09-15-0000002a.jsonl"
    rel = f"{CHAT.rsplit('/', 1)[0]}/{late}"
    assert [p.name for p in source.chat_parts(rel)] == ["agent.jsonl"]
