"""Interop with the real ``praisonaiagents`` 1.7.17 session store, both ways."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from session_browser.core import recall
from session_browser.core.files import dumps_session
from session_browser.core.model import SessionData
from session_browser.core.paths import default_spill_dir
from session_browser.core.store import DefaultSessionStore

os.environ.setdefault("DO_NOT_TRACK", "1")
# the test extra installs praisonaiagents: a broken install must fail here, not skip
import praisonaiagents.session.store as praison_store

PStore = praison_store.DefaultSessionStore


def feed(store: Any) -> None:
    """One conversation with tool calls, rename, metadata and (with a small window) compaction."""
    store.add_message("conv", "user", "Plan the billing migration to the new ledger")
    store.add_message(
        "conv",
        "assistant",
        "",
        tool_calls=[
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "ledger.py"}'},
            }
        ],
    )
    store.add_message(
        "conv",
        "tool",
        "contents of ledger.py and schema.sql",
        metadata={"name": "read_file"},
        tool_call_id="call_1",
    )
    store.add_message("conv", "assistant", "We decided to migrate billing in two phases.")
    store.add_message("conv", "user", "What about refunds?")
    store.add_message("conv", "assistant", "Refunds stay on the old ledger until phase two.")
    store.add_message("conv", "user", 'Thanks — ünïcödé ✓ and "quotes"')
    store.rename_session("conv", "Billing migration")
    store.update_session_metadata("conv", model="gpt-x", source="cli", total_tokens=1234)
    store.set_agent_info("conv", agent_name="Planner", user_id="u1")
    store.set_gateway_info("conv", gateway_session_id="gw-1", agent_id="agent-9")
    store.add_message("other", "user", "unrelated chat about lunch")


def normalise(data: dict[str, Any]) -> dict[str, Any]:
    """A session dict with its clock values blanked, for structural comparison."""
    out = json.loads(json.dumps(data))
    out["created_at"] = out["updated_at"] = "T"
    for key in ("messages", "archived_messages"):
        for m in out[key]:
            m["timestamp"] = 0
    return out


@pytest.fixture
def praison_dir(tmp_path: Path) -> Path:
    d = tmp_path / "praison"
    feed(PStore(session_dir=str(d), active_window=4))
    return d


def test_praisonai_files_load_here(praison_dir: Path) -> None:
    ours = DefaultSessionStore(praison_dir)
    theirs = PStore(session_dir=str(praison_dir), active_window=4)
    raw = json.loads((praison_dir / "conv.json").read_text())
    assert raw["archived_messages"], "fixture must have compacted"
    session = ours.get_session("conv")
    assert session.metadata["title"] == "Billing migration"
    assert session.agent_name == "Planner" and session.gateway_session_id == "gw-1"
    assert [m.to_dict() for m in session.messages] == raw["messages"]
    assert [m.to_dict() for m in session.archived_messages] == raw["archived_messages"]
    assert session.messages[0].metadata["compaction"] is True
    tool_turn = next(m for m in session.archived_messages + session.messages if m.role == "tool")
    assert tool_turn.tool_call_id == "call_1"
    call_turn = next(m for m in session.archived_messages if m.tool_calls)
    assert call_turn.tool_calls is not None
    assert call_turn.tool_calls[0]["function"]["name"] == "read_file"
    assert ours.get_chat_history("conv") == theirs.get_chat_history("conv")
    assert {r["session_id"] for r in ours.list_sessions()} == {"conv", "other"}


@pytest.mark.parametrize(
    "query", ["billing migration", "ledger", "refunds", "phase two", "lunch", "ünïcödé"]
)
def test_search_matches_praisonai_anchors(praison_dir: Path, query: str) -> None:
    ours = DefaultSessionStore(praison_dir).search(query, limit=5, window=2)
    theirs = PStore(session_dir=str(praison_dir), active_window=4).search(query, limit=5, window=2)
    assert ours, query
    assert [(h.session_id, h.anchor_index, h.score) for h in ours] == [
        (h.session_id, h.anchor_index, h.score) for h in theirs
    ]
    for a, b in zip(ours, theirs, strict=True):
        assert a.messages == b.messages
        assert a.when == b.when


def test_archived_hit_anchor_and_window(praison_dir: Path) -> None:
    ours = DefaultSessionStore(praison_dir)
    theirs = PStore(session_dir=str(praison_dir), active_window=4)
    hit = ours.search("billing migration")[0]
    assert hit.archived and hit.messages[0]["archived"] is True
    assert hit.anchor_index == 0
    for anchor in (None, 0, 2, 5, 99):
        assert ours.window("conv", anchor, window=2) == theirs.window("conv", anchor, window=2)


def test_byte_identical_round_trip(praison_dir: Path) -> None:
    ours = DefaultSessionStore(praison_dir)
    for name in ("conv.json", "other.json"):
        path = praison_dir / name
        before = path.read_bytes()
        data = ours.read_raw(name[:-5])
        assert data is not None
        assert dumps_session(SessionData.from_dict(data).to_dict()) == before
        # write it back through the store's own write path, unchanged
        ours.write_session(ours.get_session(name[:-5]), overwrite=True)
        assert path.read_bytes() == before


def test_our_files_load_in_praisonai(tmp_path: Path) -> None:
    d = tmp_path / "ours"
    ours = DefaultSessionStore(d, active_window=4)
    feed(ours)
    theirs = PStore(session_dir=str(d), active_window=4)
    raw = json.loads((d / "conv.json").read_text())
    session = theirs.get_session("conv")
    assert [m.to_dict() for m in session.messages] == raw["messages"]
    assert [m.to_dict() for m in session.archived_messages] == raw["archived_messages"]
    assert session.metadata["title"] == "Billing migration"
    assert session.agent_id == "agent-9"
    assert theirs.get_chat_history("conv") == ours.get_chat_history("conv")
    assert theirs.search("refunds")[0].anchor_index == ours.search("refunds")[0].anchor_index
    # and PraisonAI can keep writing to our file
    assert theirs.add_message("conv", "assistant", "continued by praisonai")
    assert ours.get_chat_history("conv")[-1]["content"] == "continued by praisonai"


def test_same_writes_give_same_files(tmp_path: Path) -> None:
    """Retention, summaries and metadata: identical to PraisonAI's for the same input."""
    for kwargs in (
        {"active_window": 4},
        {"active_window": 3, "retention": "truncate"},
        {"active_window": 2, "retention": "keep_all"},
        {"max_messages": 5},
    ):
        tag = "-".join(f"{k}{v}" for k, v in kwargs.items())
        ours = DefaultSessionStore(tmp_path / f"o{tag}", **kwargs)  # type: ignore[arg-type]
        theirs = PStore(session_dir=str(tmp_path / f"p{tag}"), **kwargs)
        feed(ours)
        feed(theirs)
        for i in range(6):
            for store in (ours, theirs):
                store.add_message("conv", "tool", f"ran step{i}.sh", metadata={"name": f"t{i % 2}"})
        for sid in ("conv", "other"):
            a = json.loads((tmp_path / f"o{tag}" / f"{sid}.json").read_text())
            b = json.loads((tmp_path / f"p{tag}" / f"{sid}.json").read_text())
            assert normalise(a) == normalise(b), (kwargs, sid)
            assert list(a) == list(b)


def test_summary_of_unnamed_tool_turns_matches(tmp_path: Path) -> None:
    ours = DefaultSessionStore(tmp_path / "o", active_window=1)
    theirs = PStore(session_dir=str(tmp_path / "p"), active_window=1)
    for store in (ours, theirs):
        store.add_message("s", "tool", "a.py")
        store.add_message("s", "user", "x")
        store.add_message("s", "tool", "b.py", metadata={"name": "n"})
        store.add_message("s", "assistant", "y")
    a = json.loads((tmp_path / "o" / "s.json").read_text())
    b = json.loads((tmp_path / "p" / "s.json").read_text())
    assert normalise(a) == normalise(b)


def test_praisonai_reingests_our_spill(tmp_path: Path) -> None:
    home_sessions = tmp_path / "sessions"
    ours = DefaultSessionStore(home_sessions)
    assert ours.spill_dir == default_spill_dir()
    ours.add_user_message("s", "first")
    path = ours.session_path("s")
    saved = path.read_bytes()
    path.unlink()
    path.mkdir()  # a real write failure
    assert ours.add_assistant_message("s", "spilled turn") is False
    spills = list(default_spill_dir().iterdir())
    assert len(spills) == 1
    path.rmdir()
    path.write_bytes(saved)
    theirs = PStore(session_dir=str(home_sessions))
    history = theirs.get_chat_history("s")
    assert [m["content"] for m in history] == ["first", "spilled turn"]
    assert list(default_spill_dir().iterdir()) == []


def test_we_reingest_praisonai_spill(tmp_path: Path) -> None:
    # PraisonAI spills into $PRAISONAI_HOME/state/session_spill: its turns belong to the
    # store laid out beside it, $PRAISONAI_HOME/sessions (the default store)
    home = Path(os.environ["PRAISONAI_HOME"])
    theirs = PStore(session_dir=str(home / "sessions"))
    spill = theirs._spill("s", [praison_store.SessionMessage(role="user", content="from them")])
    assert spill and Path(spill).exists()
    assert DefaultSessionStore(tmp_path / "elsewhere").add_user_message("s", "not here")
    assert Path(spill).exists()  # another store never takes it
    ours = DefaultSessionStore()
    assert ours.add_assistant_message("s", "ours")
    assert [m["content"] for m in ours.get_chat_history("s")] == ["from them", "ours"]
    assert not Path(spill).exists()


def test_projection_matches_praisonai(praison_dir: Path) -> None:
    data = json.loads((praison_dir / "conv.json").read_text())
    assert recall.project(data) == PStore._searchable_messages(data)
    assert recall.lineage_key({"metadata": {"thread_id": "t"}}) == PStore._lineage_key(
        {"metadata": {"thread_id": "t"}}
    )
