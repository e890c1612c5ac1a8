"""The CLI over Claude Code and Codex CLI transcripts (``--store claude:DIR`` / ``codex:DIR``):
search (indexed and not), recent, show with the resume command, export, index status, on
written files and on the real transcripts, never writing where those agents keep them."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from session_browser.cli import main
from session_browser.core import recall
from session_browser.core.model import hidden_parts
from session_browser.core.sources.claude import read_claude_session
from session_browser.core.store import DefaultSessionStore
from tests.core.test_claude import Transcript, text, tool_use
from tests.core.test_codex import Rollout
from tests.core.test_pi import assistant, header, user, write_lines
from tests.core.test_readonly import Snapshot, snapshot

SID = "11111111-2222-3333-4444-555555555555"  # written in the file, not its name
TID = "019e0000-1111-7222-8333-944445555666"
CLAUDE_CWD = "/home/someone/project"  # Transcript's cwd
CODEX_CWD = "/home/someone/repo"  # Rollout's cwd
SPOTTER_ID = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
TOOL_HEAVY_ID = "d6e0bada-1959-4eec-a9d2-0bfade768d8f"
VIEWER_ID = "fe5e1c67-53e7-4862-81ae-d0e013e3270b"
CODEMIE_ID = "019e1625-789d-76c0-80ab-3724b5ddb799"


def run(*args: str) -> Result:
    res = CliRunner().invoke(main, list(args))
    # search exits 1 when no session matches, as grep
    none = args[0] == "search" and "--json" in args and not json.loads(res.stdout)["results"]
    assert res.exit_code == (1 if none else 0), res.output
    return res


def run_json(*args: str) -> Any:
    return json.loads(run(*args, "--json").stdout)


def ids(found: Any) -> list[str]:
    return [h["session_id"] for h in found["results"]]


# ---------------------------------------------------------------------- written files


def write_claude(root: Path) -> Path:
    """One project folder: a session whose file is not named by its id, with a tool call, a
    subagent run in ``<stem>/subagents/``, an ai-title line; and a file that is no session."""
    t = Transcript(SID)
    t.prompt("how do we migrate the billing ledger")
    t.answer("m1", text("Use an expand and contract migration for the billing ledger."))
    t.answer("m2", tool_use("toolu_ls", "Bash", command="ls"))
    t.result("toolu_ls", "zanzibarquux.txt ledger.sql")
    t.answer("m3", tool_use("toolu_task", "Task", prompt="review the ledger schema"))
    t.result("toolu_task", "the agent said it is fine", toolUseResult={"agentId": "a1"})
    t.answer("m4", text("The schema review is done."))
    t.raw({"type": "ai-title", "aiTitle": "Billing ledger migration", "sessionId": SID})
    folder = root / "-home-someone-project"
    path = t.write(folder / "renamed-session.jsonl")
    sub = Transcript(SID, agentId="a1", isSidechain=True)
    sub.prompt("review the ledger schema")
    sub.answer("s1", text("The quokkaschema columns are consistent."))
    sub.write(folder / "renamed-session" / "subagents" / "agent-a1.jsonl")
    (folder / "broken.jsonl").write_bytes(b"this is not json\n")
    return path


def write_codex(home: Path) -> Path:
    """``<home>/sessions/.../rollout-*.jsonl`` (one thread, a tool call) and the session index
    naming it."""
    r = Rollout(TID)
    r.prompt("what about the pelican cache")
    r.answer("The pelican cache expires hourly; a migration is not needed.")
    r.item("function_call", name="shell", arguments='{"cmd": "ls"}', call_id="c1")
    r.item("function_call_output", call_id="c1", output="marmalizer.log")
    r.answer("Nothing else to change.")
    path = r.write(
        home / "sessions" / "2026" / "05" / "11" / f"rollout-2026-05-11T10-00-00-{TID}.jsonl"
    )
    index = {"id": TID, "thread_name": "Pelican cache question", "updated_at": "2026-05-11"}
    (home / "session_index.jsonl").write_text(json.dumps(index) + "\n", encoding="utf-8")
    (
        home / "sessions" / "2026" / "05" / "11" / "rollout-2026-05-11T11-00-00-empty.jsonl"
    ).write_bytes(b"")
    return path


@pytest.fixture
def written(tmp_path: Path) -> tuple[Path, Path]:
    """(the Claude projects dir, the Codex home) of written transcripts."""
    claude = tmp_path / "claude" / "projects"
    codex = tmp_path / "codex"
    write_claude(claude)
    write_codex(codex)
    return claude, codex


def stores(claude: Path, codex: Path) -> list[str]:
    return ["--store", f"claude:{claude}", "--store", f"codex:{codex / 'sessions'}"]


@pytest.mark.parametrize("index", [True, False])
def test_search_finds_prose_not_tool_output(written: tuple[Path, Path], index: bool) -> None:
    claude, codex = written
    before = snapshot(claude.parent, codex)
    args = [*stores(claude, codex), *([] if index else ["--no-index"])]

    found = run_json("search", "billing ledger", *args)
    assert ids(found) == [SID]
    (hit,) = found["results"]
    assert hit["source"] == "claude"
    assert hit["project"] == CLAUDE_CWD
    found = run_json("search", "pelican cache", *args)
    assert ids(found) == [TID]
    assert found["results"][0]["source"] == "codex"
    # Tool output is not prose.
    assert ids(run_json("search", "zanzibarquux", *args)) == []
    assert ids(run_json("search", "marmalizer", *args)) == []
    # A subagent's answer leads to its parent session, and to nothing else.
    assert ids(run_json("search", "quokkaschema", *args)) == [SID]
    # "migration" is said in both: the filters narrow it.
    assert sorted(ids(run_json("search", "migration", *args))) == sorted([SID, TID])
    assert ids(run_json("search", "source:claude", "migration", *args)) == [SID]
    assert ids(run_json("search", "source:codex", "migration", *args)) == [TID]
    assert ids(run_json("search", f"project:{CLAUDE_CWD}", "migration", *args)) == [SID]
    assert ids(run_json("search", f"project:{CODEX_CWD}", "migration", *args)) == [TID]
    assert snapshot(claude.parent, codex) == before


@pytest.mark.parametrize("index", [True, False])
def test_recent_show_and_export(written: tuple[Path, Path], tmp_path: Path, index: bool) -> None:
    claude, codex = written
    before = snapshot(claude.parent, codex)
    args = stores(claude, codex)
    recent = run_json("recent", *args, *([] if index else ["--no-index"]))
    titles = {r["session_id"]: (r["title"], r["source"]) for r in recent["results"]}
    assert titles == {
        SID: ("Billing ledger migration", "claude"),
        TID: ("Pelican cache question", "codex"),
    }

    shown = run("show", SID, "--window", "20", *args).output
    assert "how do we migrate the billing ledger" in shown
    assert "The quokkaschema columns are consistent." in shown
    assert "zanzibarquux" not in shown
    assert f"resume: cd {CLAUDE_CWD} && claude --resume {SID}" in shown
    shown = run("show", TID, "--window", "20", *args).output
    assert "The pelican cache expires hourly" in shown
    assert f"resume: cd {CODEX_CWD} && codex resume -- {TID}" in shown
    resume = run_json("show", TID, *args)["resume"]
    assert resume == f"cd {CODEX_CWD} && codex resume -- {TID}"

    for sid, phrase in ((SID, "expand and contract"), (TID, "expires hourly")):
        for fmt in ("json", "md", "html"):
            out = tmp_path / f"{sid}.{fmt}"
            run("export", sid, "--format", fmt, "-o", os.fspath(out), *args)
            assert phrase in out.read_text(encoding="utf-8")
    payload = json.loads((tmp_path / f"{SID}.json").read_text(encoding="utf-8"))
    assert "quokkaschema" in json.dumps(payload)
    assert snapshot(claude.parent, codex) == before


def test_index_status_lists_skipped_files(written: tuple[Path, Path]) -> None:
    claude, codex = written
    before = snapshot(claude.parent, codex)
    args = stores(claude, codex)
    run("index", "update", *args)
    status = run("index", "status", *args).output
    assert "broken.jsonl" in status and "not JSON" in status
    assert "rollout-2026-05-11T11-00-00-empty.jsonl" in status
    assert "no conversation" in status
    assert snapshot(claude.parent, codex) == before


def test_a_new_subagent_run_is_indexed_into_its_parent(written: tuple[Path, Path]) -> None:
    claude, _codex = written
    args = ["--store", f"claude:{claude}"]
    assert ids(run_json("search", "wombatreport", *args)) == []
    sub = Transcript(SID, agentId="a2", isSidechain=True)
    sub.prompt("another look")
    sub.answer("s2", text("The wombatreport is attached."))
    sub.write(claude / "-home-someone-project" / "renamed-session" / "subagents" / "agent-a2.jsonl")
    assert ids(run_json("search", "wombatreport", *args)) == [SID]
    # An older build's subagent file beside the main file, found by the parent id it carries.
    old = Transcript(SID, agentId="a3", isSidechain=True)
    old.prompt("one more")
    old.answer("s3", text("The echidnanote is here."))
    old.write(claude / "-home-someone-project" / "agent-a3.jsonl")
    assert ids(run_json("search", "echidnanote", *args)) == [SID]
    assert ids(run_json("search", "echidnanote", *args, "--no-index")) == [SID]


def test_bare_prefixes_and_the_default_store_list(
    written: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    claude, codex = written
    before = snapshot(claude.parent, codex)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude.parent))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    assert ids(run_json("search", "migration", "--store", "claude:")) == [SID]
    assert ids(run_json("search", "migration", "--store", "codex:")) == [TID]
    assert sorted(ids(run_json("search", "migration"))) == sorted([SID, TID])
    assert snapshot(claude.parent, codex) == before
    for args in (["--help"], ["search", "--help"]):
        usage = " ".join(run(*args).output.split())
        assert "'claude:DIR' (Claude Code transcripts" in usage
        assert "'codex:DIR' (Codex CLI rollouts" in usage
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude.parent / "nowhere"))
    monkeypatch.setenv("CODEX_HOME", str(codex / "nowhere"))
    assert ids(run_json("search", "migration")) == []


@pytest.mark.parametrize("index", [True, False])
def test_one_query_over_every_kind_of_store(
    written: tuple[Path, Path], tmp_path: Path, index: bool
) -> None:
    """PraisonAI + Pi + Claude Code + Codex: one query, hits from each, ``source:`` narrows."""
    claude, codex = written
    praison = tmp_path / "praisonai"
    DefaultSessionStore(praison).add_user_message("p1", "the migration of the praisonai notes")
    pi = tmp_path / "pi"
    write_lines(
        pi / "--work--" / "2025-01-02_pi1.jsonl",
        [header("pi1"), user("a migration plan for pi"), assistant("migration steps listed")],
    )
    before = snapshot(claude.parent, codex, pi)
    args = [
        "--store",
        os.fspath(praison),
        "--store",
        f"pi:{pi}",
        *stores(claude, codex),
        *([] if index else ["--no-index"]),
    ]
    hits = run_json("search", "migration", "--limit", "10", *args)["results"]
    assert sorted((h["source"], h["session_id"]) for h in hits) == sorted(
        [("praisonai", "p1"), ("pi", "pi1"), ("claude", SID), ("codex", TID)]
    )
    for kind, sid in (("praisonai", "p1"), ("pi", "pi1"), ("claude", SID), ("codex", TID)):
        assert ids(run_json("search", f"source:{kind}", "migration", *args)) == [sid]
    assert snapshot(claude.parent, codex, pi) == before


# ---------------------------------------------------------------------- real transcripts


@pytest.fixture
def real(shared_data: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The real transcripts copied into a Claude projects dir and a Codex sessions dir."""
    claude = tmp_path / "real-claude"
    codex = tmp_path / "real-codex"
    for name in ("spotter", "claude-code-viewer"):
        shutil.copytree(shared_data / "claude" / name, claude / name)
    for name in ("codemie-code", "codex-session-view"):
        shutil.copytree(shared_data / "codex" / name, codex / name)
    for path in [*claude.rglob("LICENSE"), *codex.rglob("LICENSE")]:
        path.unlink()
    return claude, codex


def real_stores(claude: Path, codex: Path) -> list[str]:
    return ["--store", f"claude:{claude}", "--store", f"codex:{codex}"]


@pytest.mark.parametrize("index", [True, False])
def test_real_transcripts(real: tuple[Path, Path], index: bool) -> None:
    claude, codex = real
    before: Snapshot = snapshot(claude, codex)
    args = [*real_stores(claude, codex), *([] if index else ["--no-index"])]

    recent = run_json("recent", *args)
    assert {(r["session_id"], r["source"]) for r in recent["results"]} == {
        (SPOTTER_ID, "claude"),
        (TOOL_HEAVY_ID, "claude"),
        (VIEWER_ID, "claude"),
        (CODEMIE_ID, "codex"),
        ("019a93b9-f380-7600-98ff-940e6b99603c", "codex"),
    }
    titles = {r["session_id"]: r["title"] for r in recent["results"]}
    # Its summary line names a leaf of another (absent) file of the folder: not its title.
    assert titles[VIEWER_ID] == "/orchestrator create TODO app by Next.js"
    assert titles[CODEMIE_ID] == "show tools"
    assert titles[TOOL_HEAVY_ID] == "start phoenix in background"

    # The subagent's last answer is found in the parent session.
    sub = claude / "spotter" / SPOTTER_ID / "subagents" / "agent-aac57f5.jsonl"
    last = json.loads(sub.read_bytes().splitlines()[-1])["message"]["content"][0]["text"]
    words = " ".join(last.split()[:8])
    found = run_json("search", words, *args)
    assert ids(found)[0] == SPOTTER_ID
    assert ids(found).count(SPOTTER_ID) == 1
    # Words only in tool output of the tool-heavy session are not found.
    heavy = read_claude_session(claude / "spotter" / "tool_heavy.jsonl", include_hidden=True)
    projection = recall.project(heavy.data)
    visible = " ".join(m["content"] for m in projection).lower()
    hidden = " ".join(text for m in projection for _label, text in hidden_parts(m)).lower()
    only_hidden = sorted(
        {w for w in hidden.split() if w.isalpha() and len(w) > 9} - set(visible.split())
    )
    assert only_hidden
    for word in only_hidden[:3]:
        assert TOOL_HEAVY_ID not in ids(run_json("search", word, *args)), word

    assert ids(run_json("search", "OPENCODE_CONFIG_CONTENT", *args)) == [CODEMIE_ID]
    assert ids(run_json("search", "source:claude", "OPENCODE_CONFIG_CONTENT", *args)) == []
    assert ids(run_json("search", "source:codex", "OPENCODE_CONFIG_CONTENT", *args)) == [CODEMIE_ID]
    spotter_cwd = "/home/USER/projects/spotter-worktrees/spotter-4te"
    assert ids(run_json("search", f"project:{spotter_cwd}", "phoenix", *args)) == [SPOTTER_ID]
    assert snapshot(claude, codex) == before


def test_real_transcripts_show_and_export(real: tuple[Path, Path], tmp_path: Path) -> None:
    claude, codex = real
    before = snapshot(claude, codex)
    args = real_stores(claude, codex)
    shown = run("show", SPOTTER_ID, *args).output
    assert f"claude --resume {SPOTTER_ID}" in shown
    assert "archived" in shown
    shown = run("show", CODEMIE_ID, *args).output
    assert f"codex resume -- {CODEMIE_ID}" in shown
    assert "OPENCODE_CONFIG_CONTENT" in shown
    for sid in (SPOTTER_ID, CODEMIE_ID):
        out = tmp_path / f"{sid}.json"
        run("export", sid, "-o", os.fspath(out), *args)
        assert sid in out.read_text(encoding="utf-8")
    assert snapshot(claude, codex) == before


@pytest.mark.parametrize("index", [True, False])
def test_in_tools_opts_into_tool_output(written: tuple[Path, Path], index: bool) -> None:
    claude, codex = written
    args = [*stores(claude, codex), *([] if index else ["--no-index"])]
    assert ids(run_json("search", "zanzibarquux", *args)) == []
    assert ids(run_json("search", "zanzibarquux in:tools", *args)) == [SID]
    assert ids(run_json("search", "marmalizer in:tools", *args)) == [TID]
    (hit,) = run_json("search", "marmalizer in:tools", *args)["results"]
    assert "marmalizer" in hit["snippet"]


def test_index_status_says_what_was_skipped_inside_files(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    t = Transcript(SID)
    t.prompt("where does the heron config live")
    t.answer("m1", text("The heron config lives in etc."))
    t.raw({"type": "future-record", "sessionId": SID})
    path = t.write(root / "proj" / f"{SID}.jsonl")
    with open(path, "ab") as fh:  # a bad line, invalid UTF-8, then a line being written
        fh.write(b"{not json\n" + b'{"type": "user", "x": "\xff\xfe"}\n' + b'{"type": "assi')
    args = ["--store", f"claude:{root}"]
    run("index", "update", *args)
    assert ids(run_json("search", "heron", *args)) == [SID]  # the rest is searchable
    status = run("index", "status", *args).output
    assert status.count("lines:") == 1
    line = " ".join(status.split("lines:")[1].split())  # (folded at the terminal's width)
    assert "in 1 indexed file(s)" in line
    assert "2 unreadable line(s)" in line
    assert "1 unfinished last line(s)" in line
    assert "1 record(s) of unknown types (future-record)" in line
    info = run_json("index", "status", *args)
    assert json.dumps(info).count("future-record") == 1
