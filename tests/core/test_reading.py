"""The reading model of coding-agent sessions, on real Claude Code and Codex transcripts:
runs of turns without prose, each call as a reader sees it, interruptions, bookkeeping, and
slash commands that are not titles."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from session_browser.core import recall
from session_browser.core.reading import (
    describe_call,
    has_prose,
    interruption,
    reader_parts,
    tool_runs,
)
from session_browser.core.sources.claude import read_claude_session
from session_browser.core.sources.codex import read_codex_session
from session_browser.core.sources.pi import read_pi_session
from session_browser.core.stores import open_stores

CLAUDE = "claude/spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
CLAUDE_SHORT = "claude/spotter/tool_heavy.jsonl"
CODEX = "codex/codemie-code/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
CODEX_SHELL = (
    "codex/codex-session-view/"
    "rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"
)
CODEX_CATALOGUE = "codex/agent-sessions/catalogue.jsonl"


def claude(path: Path) -> list[dict[str, Any]]:
    data = read_claude_session(path, include_hidden=True).data
    return recall.full_view(recall.project(data))


def codex(path: Path) -> list[dict[str, Any]]:
    data = read_codex_session(path, include_hidden=True).data
    return recall.full_view(recall.project(data))


def test_runs_cover_exactly_the_turns_without_prose(shared_data: Path) -> None:
    for messages in (claude(shared_data / CLAUDE), codex(shared_data / CODEX)):
        runs = tool_runs(messages)
        in_runs = {i for r in runs for i in range(r.start, r.end + 1)}
        quiet = {
            i
            for i, m in enumerate(messages)
            if m["role"] in ("assistant", "tool") and not has_prose(m)
        }
        assert in_runs == quiet
        for before, after in itertools.pairwise(runs):
            assert before.end + 1 < after.start  # a prose turn between two runs
        # every call of the session is in a run (a prose turn's calls in the run after it)
        calls = sum(
            1
            for m in messages
            for p in m["metadata"].get("hidden", [])
            if isinstance(p, dict) and p.get("type") == "toolCall"
        )
        shown = sum(len(r.calls) for r in runs)
        assert calls - 3 <= shown <= calls


def test_claude_runs_read_as_the_work_done(shared_data: Path) -> None:
    messages = claude(shared_data / CLAUDE)
    runs = {r.start: r for r in tool_runs(messages)}
    assert len(messages) == 479 and len(runs) == 159
    # The six Read calls turn 8 made, and their six results.
    reads = runs[9]
    assert (reads.start, reads.end) == (9, 14)
    assert reads.title() == "6 tool calls: Read ×6"
    assert (
        reads.calls[0].summary == "Read /home/USER/projects/spotter-worktrees/spotter-4te/mix.exs"
    )
    assert reads.calls[0].lines == [("out", "93 lines")] and all(c.done for c in reads.calls)
    # Shell calls as the command and the first lines of the output.
    bash = runs[1]
    assert bash.title() == "2 tool calls: Bash ×2"
    assert [c.summary for c in bash.calls] == ["$ bd show spotter-4te", "$ bd ready"]
    assert bash.calls[0].lines[-1] == ("more", "… 53 more lines")
    assert len(bash.calls[0].lines) == 4
    # A Task and a Skill called before the subagent's turns: their results find them.
    late = runs[32]
    assert late.title() == "2 tool calls: Task, Skill"
    assert late.calls[0].summary == "Task Check OTEL hex package versions"
    # An edit: its file and only the lines it changed.
    edit = next(r for r in runs.values() if r.title() == "1 tool call: Edit")
    call = edit.calls[0]
    assert call.summary == "Edit /home/USER/projects/spotter-worktrees/spotter-4te/mix.exs"
    assert call.lines[0] == ("del", '-      {:toml, "~> 0.7"}')
    assert ("add", '+      {:opentelemetry_api, "~> 1.5"},') in call.lines
    # Never raw JSON arguments.
    for run in runs.values():
        for c in run.calls:
            assert '{"' not in c.summary, c.summary


def test_codex_calls_read_as_commands_and_patches(shared_data: Path) -> None:
    messages = codex(shared_data / CODEX)
    runs = tool_runs(messages)
    first = runs[0]
    assert first.title() == "2 tool calls: exec_command, write_stdin"
    assert first.calls[0].summary.startswith("$ sed -n '1,180p' /Users/Sample_User/.codex/")
    patches = [c for r in runs for c in r.calls if c.name == "apply_patch"]
    assert patches[0].summary == (
        "Patch src/agents/plugins/__tests__/codemie-code-reasoning.test.ts"
    )
    assert patches[0].lines[1] == ("add", "+  describe('Compaction Config', () => {")
    assert patches[0].lines[-1][0] == "more"  # capped
    # The older rollout: shell calls with an argv, results as {"output": ...}.
    shell = codex(shared_data / CODEX_SHELL)
    last = tool_runs(shell)[-1]
    assert last.end == len(shell) - 1  # it ends mid-turn, in the run
    assert last.calls[0].summary == "$ ls"
    assert last.calls[0].lines[0] == ("out", "LM Studio configuration.md")


def test_interruptions_are_named(shared_data: Path) -> None:
    messages = claude(shared_data / CLAUDE_SHORT)
    notes = [r.title() for r in tool_runs(messages) if r.note]
    assert notes == [
        "1 tool call: Bash · interrupted by user",
        "4 tool calls: WebSearch, Glob, Read, WebFetch · interrupted by user",
    ]
    catalogue = codex(shared_data / CODEX_CATALOGUE)
    assert [interruption(m) for m in catalogue].count("interrupted by user") == 1
    assert interruption({"role": "assistant", "content": "hi"}) is None


def test_bookkeeping_stays_out_unless_asked(shared_data: Path) -> None:
    messages = claude(shared_data / CLAUDE)
    first = messages[1]  # thinking, two calls, eight hook_progress records
    labels = [label for label, _text in reader_parts(first, bookkeeping=False)]
    assert labels == ["thinking", "tool call: Bash", "tool call: Bash"]
    texts = [text for _label, text in reader_parts(first, bookkeeping=False)]
    assert texts[1] == "$ bd show spotter-4te"
    everything = [label for label, _text in reader_parts(first, bookkeeping=True)]
    assert everything.count("progress") == 6


def test_calls_of_other_agents_read_without_json() -> None:
    assert describe_call("bash", {"command": "git status"}).summary == "$ git status"
    assert describe_call("shell", json.dumps({"command": ["ls", "-la"]})).summary == "$ ls -la"
    pi_edit = describe_call(
        "edit", {"path": "a.py", "oldText": "x = 1\ny = 2", "newText": "x = 1\ny = 3"}
    )
    assert pi_edit.summary == "Edit a.py" and pi_edit.lines == [
        ("del", "-y = 2"),
        ("add", "+y = 3"),
    ]
    write = describe_call("Write", {"file_path": "n.txt", "content": "a\nb"})
    assert write.summary == "Write n.txt (2 lines)"
    grep = describe_call("Grep", {"pattern": "TODO", "path": "src"})
    assert grep.summary == "Grep TODO in src"
    other = describe_call("update_plan", {"plan": [{"step": "x"}], "explanation": "why"})
    assert other.summary == "update_plan why"


def test_slash_commands_are_not_titles(tmp_path: Path, shared_data: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "pi-slash", "timestamp": "2026-01-10T09:00:00Z"},
    ]
    for n, text in enumerate(["/model", "/mode plan", "/home/me/app fails to start"], 1):
        lines.append(
            {
                "type": "message",
                "id": f"e{n}",
                "parentId": f"e{n - 1}" if n > 1 else None,
                "timestamp": f"2026-01-10T09:0{n}:00Z",
                "message": {"role": "user", "content": text, "timestamp": 1768035600000 + n},
            }
        )
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    session = read_pi_session(path)
    assert session.title == "/home/me/app fails to start"
    assert [b.preview for b in session.branches] == ["/home/me/app fails to start"]
    assert recall.session_title({"messages": [{"role": "user", "content": "/compact"}]}) == ""


def test_bookends_skip_turns_without_text_on_every_path(
    tmp_path: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSION_BROWSER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(tmp_path / "data"))
    root = tmp_path / "codex" / "2026" / "05" / "11"
    root.mkdir(parents=True)
    shutil.copy(shared_data / CODEX, root / Path(CODEX).name)
    claude_dir = tmp_path / "claude" / "proj"
    claude_dir.mkdir(parents=True)
    shutil.copy(shared_data / CLAUDE, claude_dir / Path(CLAUDE).name)
    dirs = [f"codex:{tmp_path / 'codex'}", f"claude:{tmp_path / 'claude'}"]
    seen = {}
    for indexed in (False, True):
        group = open_stores(dirs, indexed=indexed)
        try:
            for query in ("compaction threshold", "opentelemetry"):
                hits = group.search(query, limit=1)
                assert hits, query
                ends = hits[0].bookends
                turns = [*ends.get("opening", []), *ends.get("closing", [])]
                assert turns and all(str(t["content"]).strip() for t in turns), turns
                seen[(query, indexed)] = [t["index"] for t in turns]
        finally:
            group.close()
    for query in ("compaction threshold", "opentelemetry"):
        assert seen[(query, False)] == seen[(query, True)]


def test_junk_turns_fold_without_raising() -> None:
    junk: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "metadata": {"hidden": "not a list"}},
        {"role": "assistant", "content": [], "metadata": {"hidden": [1, None, {"type": 5}]}},
        {
            "role": "assistant",
            "content": "",
            "metadata": {
                "hidden": [
                    {"type": "toolCall", "name": None, "arguments": [1, 2]},
                    {"type": "toolCall", "name": "Edit", "arguments": {"file_path": {"x": 1}}},
                    {"type": "toolCall", "name": "shell", "arguments": "{not json"},
                ]
            },
            "tool_calls": [{"function": {"name": "bash", "arguments": '{"command": 3}'}}, "x"],
        },
        {"role": "tool", "content": {"odd": True}, "tool_call_id": 7},
        {"role": "tool", "content": "", "metadata": {"hidden": [{"type": "toolResult"}]}},
        {"role": "assistant", "content": "done"},
    ]
    runs = tool_runs(junk)
    # a tool turn with content of its own (as PraisonAI writes them) is a turn to read
    assert [(r.start, r.end) for r in runs] == [(1, 3), (5, 5)]
    assert runs[0].title() == "4 tool calls: ?, Edit, shell, bash"
    assert runs[1].title() == "1 turn without text"
    summaries = [c.summary for c in runs[0].calls]
    assert summaries[3] == "$ 3" and summaries[2] == "$ {not json"
