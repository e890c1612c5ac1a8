"""praisonaiagents' own Agent and Session code on our store, across real processes.

Each phase runs in a fresh interpreter with our store installed as praisonaiagents' default
store (its documented ``store._default_store`` hook); the same phases run on PraisonAI's own
store in another dir, and both must print the same and leave the same files. No model call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("praisonaiagents.session.store")

DRIVER = r"""
import json, os, sys
os.environ["DO_NOT_TRACK"] = "1"
kind, session_dir, phase = sys.argv[1:4]
import praisonaiagents.session.store as ps
if kind == "ours":
    from session_browser.core import DefaultSessionStore
    store = DefaultSessionStore(session_dir, active_window=6)
else:
    store = ps.DefaultSessionStore(session_dir, active_window=6)
ps._default_store = store
out = {}


def agent():
    from praisonaiagents import Agent, MemoryConfig
    a = Agent(name="Planner", instructions="plan", llm="gpt-4o-mini",
              memory=MemoryConfig(history=True, session_id="run1", user_id="u1"))
    a._init_session_store()
    assert a._session_store is store
    return a


if phase == "turns":
    a = agent()
    out["restored"] = list(a.chat_history)
    a._persist_message("user", "Plan the billing migration")
    a._persist_assistant_delta("We migrate in", force=True)
    out["mid_stream"] = store.get_chat_history("run1")
    a._finalize_assistant_turn("We migrate in two phases.")
    a._persist_assistant_delta("stale partial", force=True)
    a._discard_partial_assistant_turn()
    call = {"id": "c1", "type": "function",
            "function": {"name": "read_file", "arguments": "{\"path\": \"ledger.py\"}"}}
    a._persist_message("assistant", "", tool_calls=[call])
    a._persist_message("tool", "ledger contents", tool_call_id="c1")
    for i in range(4):
        a._persist_message("user", f"question {i}")
    out["history"] = store.get_chat_history("run1")
elif phase == "resume":
    a = agent()
    out["restored"] = list(a.chat_history)

    class Result:
        summary = "Agreed: billing migrates in two phases; refunds stay put."
        original_tokens = 900
        compacted_tokens = 40

    a._persist_compaction_checkpoint(Result())
    a._persist_message("user", "after the compaction")
elif phase == "resume2":
    a = agent()
    out["restored"] = list(a.chat_history)
elif phase == "legacy":
    store.add_message("parent_old", "user", "legacy helper turn")
    store.update_session_metadata("parent_old", parent_session_id="parent",
                                  agent_key="Old:helper")
    store.add_message("parent", "user", "parent turn")
    from praisonaiagents.session.api import Session
    s = Session(session_id="parent")
    s._agents = {"New:agent": {"agent": None,
                               "chat_history": [{"role": "user", "content": "new turn"}]}}
    s._save_agent_chat_histories()
elif phase == "restore":
    from praisonaiagents.session.api import Session
    s = Session(session_id="parent")
    out["old"] = s._restore_agent_chat_history("Old:helper")
    out["new"] = s._restore_agent_chat_history("New:agent")
    out["rows"] = sorted((r["session_id"], r["agent_key"], r["parent_session_id"])
                         for r in store.list_sessions(limit=None))
print(json.dumps(out))
"""


def _run(kind: str, session_dir: Path, phase: str, cwd: Path) -> Any:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, kind, str(session_dir), phase],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _files(directory: Path) -> dict[str, Any]:
    out = {}
    for path in sorted(directory.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        data["created_at"] = data["updated_at"] = "T"
        for holder in (data, data.get("metadata") or {}):
            if holder.get("agent_id"):
                holder["agent_id"] = "random per Agent"
        for key in ("messages", "archived_messages"):
            for m in data[key]:
                m["timestamp"] = "T"
        if data.get("last_compaction"):
            data["last_compaction"]["timestamp"] = "T"
        out[path.name] = data
    return out


def test_agent_and_session_history_on_our_store_match_praisonai(tmp_path: Path) -> None:
    dirs = {kind: tmp_path / kind / "sessions" for kind in ("ours", "theirs")}
    outputs: dict[str, list[Any]] = {"ours": [], "theirs": []}
    for kind, d in dirs.items():
        cwd = tmp_path / kind / "cwd"
        cwd.mkdir(parents=True)
        for phase in ("turns", "resume", "resume2", "legacy", "restore"):
            outputs[kind].append(_run(kind, d, phase, cwd))
    assert outputs["ours"] == outputs["theirs"]
    assert _files(dirs["ours"]) == _files(dirs["theirs"])

    turns, resume, resume2, _legacy, restore = outputs["ours"]
    assert turns["restored"] == []
    assert turns["mid_stream"][-1] == {"role": "assistant", "content": "We migrate in"}
    # the second process resumes what the first one stored (the compacted window)
    assert resume["restored"] == [
        {"role": m["role"], "content": m["content"]} for m in turns["history"]
    ]
    assert resume["restored"][0]["content"].startswith("[Session Summary]")
    # the next process resumes from the checkpoint: its summary, then the turn after it
    assert resume2["restored"] == [
        {"role": "system", "content": "Agreed: billing migrates in two phases; refunds stay put."},
        {"role": "user", "content": "after the compaction"},
    ]
    session = json.loads((dirs["ours"] / "run1.json").read_text())
    assert session["archived_messages"], "the window of 6 compacted the early turns"
    assert session["last_compaction"]["tokens_before"] == 900
    assert not any(m["metadata"].get("partial") for m in session["messages"])
    # a legacy sub-agent record (tagged with its parent) is migrated into the parent
    assert restore["old"] == [{"role": "user", "content": "legacy helper turn"}]
    assert restore["new"] == [{"role": "user", "content": "new turn"}]
    parent = json.loads((dirs["ours"] / "parent.json").read_text())
    assert set(parent["metadata"]["agent_histories"]) == {"Old:helper", "New:agent"}
