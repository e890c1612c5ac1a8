"""Cline and Roo Code tasks as a read-only source: task folders laid out as the extensions write
them (tests/fixtures/cline, see its README: Cline at 21cb8d25, Roo Code at cb836567)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core import recall
from session_browser.core.model import SUMMARY_PREFIX, hidden_parts
from session_browser.core.open import index_store
from session_browser.core.resume_line import resume_line
from session_browser.core.sources import SOURCES
from session_browser.core.sources.cline import ClineSource, default_cline_dirs
from session_browser.core.vault import Vault
from session_browser.core.vault.reading import kept_session
from tests.agents import cli, ids, snapshot

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "cline"
CLINE = "saoudrizwan.claude-dev"
ROO = "rooveterinaryinc.roo-cline"
TASK = "1767000000000"
API_ONLY = "1767100000000"
ROO_TASK = "3f2a9c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b"
ROO_SUBTASK = "7c1d2e3f-4a5b-4c6d-9e8f-1a2b3c4d5e6f"
#: The default dirs are the Linux ones here (~/.config/<editor>/User).
linux = pytest.mark.skipif(sys.platform != "linux", reason="the editors' Linux user dirs")


def config(home: Path) -> Path:
    """``~/.config`` holding the fixture's VS Code user dir."""
    dot = home / ".config"
    shutil.copytree(FIXTURE, dot, ignore=shutil.ignore_patterns("README.md"))
    return dot


def storage(dot: Path) -> Path:
    return dot / "Code" / "User" / "globalStorage"


def test_cline_task_turns_compaction_and_hidden_parts(tmp_path: Path) -> None:
    source = ClineSource(storage(config(tmp_path)))
    assert sorted(source.list_files()) == [
        f"{ROO}/tasks/{ROO_TASK}/ui_messages.json",
        f"{ROO}/tasks/{ROO_SUBTASK}/ui_messages.json",
        f"{CLINE}/tasks/{TASK}/ui_messages.json",
        f"{CLINE}/tasks/{API_ONLY}/api_conversation_history.json",
    ]
    data = source.load(f"{CLINE}/tasks/{TASK}/ui_messages.json")
    assert data is not None and data["session_id"] == TASK
    assert data["metadata"]["agent"] == "Cline" and data["metadata"]["cwd"] == "/home/dev/parser"
    assert recall.session_title(data) == "Fix the tokenizer so it keeps CRLF in quoted strings"
    projection = recall.project(data)
    assert [(m["role"], m["content"], bool(m.get("archived"))) for m in projection] == [
        ("user", "Fix the tokenizer so it keeps CRLF in quoted strings", True),
        (
            "assistant",
            "I'll read the tokenizer first.\nShould quoted strings keep a lone CR too?",
            True,
        ),
        ("user", "Yes, keep every line ending inside quotes.", True),
        ("system", f"{SUMMARY_PREFIX}\nContext compacted", False),
        (
            "assistant",
            "Done: the tokenizer now keeps CR, LF and CRLF inside quoted strings.\n"
            "The heron test passes.",
            False,
        ),
    ]
    assert data["last_compaction"]["metadata"]["cline_compaction"] is True
    assert "pytest -q" not in json.dumps(data)  # a command: hidden by default
    full = source.load(f"{CLINE}/tasks/{TASK}/ui_messages.json", include_hidden=True)
    assert full is not None
    labels = [label for m in recall.project(full) for label, _t in hidden_parts(m)]
    assert labels.count("thinking") == 1
    assert sorted(label for label in labels if label.startswith("tool call: ")) == [
        "tool call: command",
        "tool call: readFile",
    ]
    assert "AssertionError: expected CRLF" in json.dumps(full)


def test_a_task_with_only_its_api_history(tmp_path: Path) -> None:
    source = ClineSource(storage(config(tmp_path)))
    data = source.load(f"{CLINE}/tasks/{API_ONLY}/api_conversation_history.json")
    assert data is not None and data["metadata"]["cwd"] == "/home/dev/cache"
    assert [(m["role"], m["content"]) for m in recall.project(data)] == [
        ("user", "Explain the egret cache eviction"),
        (
            "assistant",
            "Let me look at the cache.\n"
            "Entries are evicted least recently used first, ranked by their egret score.",
        ),
    ]
    assert "environment_details" not in json.dumps(data) and "LRU" not in json.dumps(data)


def test_roo_code_task_condense_and_workspace(tmp_path: Path) -> None:
    source = ClineSource(storage(config(tmp_path)) / ROO)
    name = f"tasks/{ROO_TASK}/ui_messages.json"
    assert sorted(source.list_files()) == sorted([name, f"tasks/{ROO_SUBTASK}/ui_messages.json"])
    data = source.load(name, include_hidden=True)
    assert data is not None and data["session_id"] == ROO_TASK
    assert data["metadata"]["agent"] == "Roo Code"
    assert data["metadata"]["cwd"] == "/home/dev/birds"
    projection = recall.project(data)
    assert [(m["role"], bool(m.get("archived"))) for m in projection] == [
        ("user", True),
        ("assistant", True),
        ("system", False),
        ("assistant", False),
    ]
    assert projection[0]["content"] == "Add a heron mode to the CLI"
    assert projection[2]["content"] == (
        f"{SUMMARY_PREFIX}\nThe user wants a heron mode; a --heron flag was added to cli.py."
    )
    labels = [label for m in projection for label, _t in hidden_parts(m)]
    assert "thinking" in labels and "tool call: appliedDiff" in labels


@pytest.mark.parametrize("index", [True, False])
def test_a_roo_subtask_shares_its_parents_lineage(tmp_path: Path, index: bool) -> None:
    """A Roo Code subtask (a task folder of its own, started by the parent's ``new_task``)
    names its root and parent; the parent lists its children: the tree is one lineage, so
    words both hold give one hit, and each still opens as itself."""
    dot = config(tmp_path)
    source = ClineSource(storage(dot) / ROO)
    child = source.load(f"tasks/{ROO_SUBTASK}/ui_messages.json")
    parent = source.load(f"tasks/{ROO_TASK}/ui_messages.json")
    assert child is not None and parent is not None
    assert child["metadata"]["parent_session"] == ROO_TASK
    assert child["metadata"]["lineage_id"] == parent["metadata"]["lineage_id"] == ROO_TASK
    assert "parent_session" not in parent["metadata"]
    store = f"cline:{storage(dot) / ROO}"
    extra = [] if index else ["--no-index"]
    assert ids(cli("search", "wading", "--store", store, "--json", *extra)) == [ROO_SUBTASK]
    both = ids(cli("search", "flag", "--store", store, "--json", *extra))
    assert len(both) == 1 and both[0] in (ROO_TASK, ROO_SUBTASK)  # one hit for the tree


def test_a_file_caught_mid_rewrite_is_skipped(tmp_path: Path) -> None:
    task = tmp_path / "tasks" / "1767300000000"
    task.mkdir(parents=True)
    (task / "ui_messages.json").write_text('[{"ts": 1, "type": "say", "say": "task", "te')
    source = ClineSource(tmp_path)
    [(name, ident)] = source.list_files().items()
    got = source.parse(name, ident, None)
    assert not hasattr(got, "data") and got.reason.startswith("not JSON")


@linux
def test_default_dirs_and_bare_cline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path.home()
    assert default_cline_dirs() == [
        home / ".config" / "Code" / "User" / "globalStorage" / CLINE
    ]  # none exists: where it looked
    dot = config(home)
    assert default_cline_dirs() == [storage(dot) / CLINE, storage(dot) / ROO]
    before = snapshot(dot)
    found = cli("search", "heron", "--store", "cline:", "--json", "--no-index")
    assert sorted(ids(found)) == sorted([TASK, ROO_TASK])
    assert {h["source"] for h in found["results"]} == {"cline"}
    assert TASK in ids(cli("search", "source:cline", "tokenizer", "--json"))
    assert snapshot(dot) == before


@pytest.mark.parametrize("index", [True, False])
def test_search_filters_and_reads_never_write(tmp_path: Path, index: bool) -> None:
    dot = config(tmp_path)
    before = snapshot(dot)
    store = f"cline:{storage(dot)}"
    extra = [] if index else ["--no-index"]
    assert ids(cli("search", "egret eviction", "--store", store, "--json", *extra)) == [API_ONLY]
    assert ids(cli("search", "source:codex", "egret", "--store", store, "--json", *extra)) == []
    assert ids(cli("search", "AssertionError", "--store", store, "--json", *extra)) == []
    tools = cli("search", "in:tools", "AssertionError", "--store", store, "--json", *extra)
    assert ids(tools) == [TASK]
    hit = cli("search", "tokenizer quoted", "--store", store, "--json", *extra)["results"][0]
    assert hit["session_id"] == TASK and hit["project"] == "/home/dev/parser"
    assert snapshot(dot) == before


def test_no_resume_command() -> None:
    assert resume_line("cline", TASK, "/home/dev/parser") is None


def test_a_deleted_task_is_kept_by_the_vault(tmp_path: Path) -> None:
    dot = config(tmp_path)
    ui = storage(dot) / CLINE / "tasks" / TASK / "ui_messages.json"
    original = ui.read_bytes()
    store = index_store(SOURCES["cline"], storage(dot), vault=True)
    try:
        assert [h.session_id for h in store.search("tokenizer")] == [TASK]
        shutil.rmtree(ui.parent)  # the task deleted in the editor
        assert store.reconcile().removed == 1
        [hit] = store.search("tokenizer", limit=5)
        assert hit.session_id == TASK and hit.kept is not None
        assert hit.kept.startswith(f"deleted from {ui} on ")
    finally:
        store.close()
    kept = kept_session(TASK)
    assert kept is not None and kept["session_id"] == TASK
    assert "lone CR" in json.dumps(kept)
    with Vault() as vault:
        [version] = vault.versions(TASK)
        ui.parent.mkdir()
        vault.restore(version)
    assert ui.read_bytes() == original


@linux
def test_doctor_lists_the_agent_its_count_and_its_retention(tmp_path: Path) -> None:
    dot = config(Path.home())
    before = snapshot(dot)
    res = CliRunner().invoke(main, ["doctor", "--json"])
    assert res.exit_code == 0, res.output
    agents = [a for a in json.loads(res.output)["agents"] if a["source"] == "cline"]
    assert [(a["dir"], a["sessions"]) for a in agents] == [
        (str(storage(dot) / CLINE), 2),
        (str(storage(dot) / ROO), 2),
    ]
    assert {a["retention"] for a in agents} == {
        "Cline and Roo Code keep tasks until they are deleted in the editor"
    }
    assert snapshot(dot) == before
