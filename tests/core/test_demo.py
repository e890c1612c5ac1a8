"""The built-in demo store: well-formed PraisonAI files that show every feature of the app."""

from __future__ import annotations

import itertools
import json
import re
import stat
import time
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from session_browser.demo import DemoInfo, build_demo_store, demo_session_ids, safe_session_id

NOW = 1_750_000_000.0  # fixed: 2025-06-15T15:06:40Z
REQUIRED_KEYS = {
    "session_id",
    "messages",
    "created_at",
    "updated_at",
    "agent_name",
    "user_id",
    "metadata",
    "gateway_session_id",
    "agent_id",
    "runtime_state",
    "archived_messages",
}
MESSAGE_KEYS = {"role", "content", "timestamp", "metadata"}
CORRUPT_NAME = re.compile(r"^(?P<stem>[A-Za-z0-9_-]+)\.json\.corrupt-(?P<ms>\d+)$")
SPILL_NAME = re.compile(r"^(?P<stem>[A-Za-z0-9_-]+)\.(?P<ms>\d+)\.(?P<pid>\d+)\.[0-9a-f]{8}\.json$")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoInfo:
    return build_demo_store(tmp_path_factory.mktemp("demo") / ".praisonai", now=NOW)


def load(info: DemoInfo, session_id: str) -> dict[str, Any]:
    path = info.sessions_dir / f"{safe_session_id(session_id)}.json"
    data: dict[str, Any] = json.loads(path.read_bytes())
    return data


def projection(data: dict[str, Any]) -> list[dict[str, Any]]:
    return list(data["archived_messages"]) + list(data["messages"])


def rate_per_hour(messages: list[dict[str, Any]]) -> float:
    stamps = [float(m["timestamp"]) for m in messages]
    return len(stamps) / ((max(stamps) - min(stamps)) / 3600.0)


def all_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_layout(demo: DemoInfo) -> None:
    assert demo.sessions_dir == demo.root / "sessions"
    assert demo.spill_dir == demo.root / "state" / "session_spill"
    assert 16 <= len(demo.session_ids) <= 20
    assert len(set(demo.session_ids)) == len(demo.session_ids)
    assert demo.session_ids == demo_session_ids()
    live = {p.name for p in demo.sessions_dir.glob("*.json")}
    assert live == {f"{safe_session_id(s)}.json" for s in demo.session_ids}
    # An id with characters PraisonAI replaces in file names.
    assert "slack_C04ops_incident-2291.json" in live
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in demo.sessions_dir.iterdir())
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in demo.spill_dir.iterdir())


def test_every_live_file_is_a_praisonai_session(demo: DemoInfo) -> None:
    for session_id in demo.session_ids:
        path = demo.sessions_dir / f"{safe_session_id(session_id)}.json"
        raw = path.read_bytes()
        data = json.loads(raw)
        # Written exactly as praisonaiagents writes: indent=2, ensure_ascii=False.
        assert raw == json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8")
        assert REQUIRED_KEYS <= set(data) <= REQUIRED_KEYS | {"source"}
        assert data["session_id"] == session_id
        assert data["gateway_session_id"] is None and data["agent_id"] is None
        assert data["runtime_state"] == {}
        assert isinstance(data["metadata"], dict)
        if "source" in data["metadata"]:
            assert data["source"] == data["metadata"]["source"]
        msgs = projection(data)
        assert len(msgs) >= 4
        for m in msgs:
            assert MESSAGE_KEYS <= set(m) <= MESSAGE_KEYS | {"tool_calls", "tool_call_id"}
            assert m["role"] in ("user", "assistant", "system", "tool")
            assert isinstance(m["content"], str) and m["content"]
            assert isinstance(m["timestamp"], float)
        stamps = [m["timestamp"] for m in msgs]
        assert stamps == sorted(stamps)
        assert stamps[0] > NOW - 61 * 86400 and stamps[-1] < NOW
        assert datetime.fromisoformat(data["created_at"]).timestamp() == pytest.approx(stamps[0])
        assert datetime.fromisoformat(data["updated_at"]).timestamp() == pytest.approx(stamps[-1])
        assert data["created_at"].endswith("+00:00")


def test_sessions_spread_over_two_months(demo: DemoInfo) -> None:
    latest = sorted(load(demo, s)["messages"][-1]["timestamp"] for s in demo.session_ids)
    assert NOW - latest[-1] < 3 * 3600  # something happened in the last hours
    assert NOW - latest[0] > 45 * 86400  # and some sessions are weeks old


def test_titles_agent_names_and_untitled(demo: DemoInfo) -> None:
    kinds = {"title": 0, "agent": 0, "neither": 0}
    for s in demo.session_ids:
        data = load(demo, s)
        if data["metadata"].get("title"):
            kinds["title"] += 1
        elif data["agent_name"]:
            kinds["agent"] += 1
        else:
            kinds["neither"] += 1
            assert data["messages"][0]["role"] == "user"
    assert min(kinds.values()) >= 3, kinds


def test_archived_session(demo: DemoInfo) -> None:
    data = load(demo, demo.archived_id)
    archived, messages = data["archived_messages"], data["messages"]
    n = len(archived)
    assert n >= 6 and n + len(messages) - 1 >= 14
    users = sum(m["role"] == "user" for m in archived)
    assistants = sum(m["role"] == "assistant" for m in archived)
    summary = messages[0]
    assert summary["role"] == "system"
    assert summary["content"] == (
        f"[Session Summary]\nPrevious conversation: {n} messages\n"
        f"Message breakdown: {{'user': {users}, 'assistant': {assistants}, 'tool': 0, 'system': 0}}"
    )
    assert summary["metadata"] == {"compaction": True, "compacted_count": n}
    assert archived[-1]["timestamp"] < summary["timestamp"] < messages[1]["timestamp"]
    # The memorable decision lives in an archived turn, and the known item points at it.
    (item,) = [k for k in demo.known_items if k.session_id == demo.archived_id]
    assert item.index < n
    assert "cursor-based pagination" in projection(data)[item.index]["content"]


def test_automated_session(demo: DemoInfo) -> None:
    data = load(demo, demo.automated_id)
    assert data["source"] == "cron" and data["metadata"]["source"] == "cron"
    msgs = data["messages"]
    assert len(msgs) >= 20
    gaps = {round(b["timestamp"] - a["timestamp"], 3) for a, b in itertools.pairwise(msgs)}
    assert gaps == {2.0}


def test_interactive_sessions_stay_under_the_automated_rate(demo: DemoInfo) -> None:
    for s in demo.session_ids:
        if s == demo.automated_id:
            continue
        data = load(demo, s)
        assert "source" not in data
        assert rate_per_hour(projection(data)) <= 40.0 + 1e-6, s


def test_lineage_chain(demo: DemoInfo) -> None:
    assert len(demo.lineage_ids) == 3
    chain = [load(demo, s) for s in demo.lineage_ids]
    assert len({d["metadata"]["lineage_id"] for d in chain}) == 1
    assert "continued_from" not in chain[0]["metadata"]
    assert chain[1]["metadata"]["continued_from"] == demo.lineage_ids[0]
    assert chain[2]["metadata"]["continued_from"] == demo.lineage_ids[1]
    assert chain[0]["updated_at"] < chain[1]["created_at"]
    assert chain[1]["updated_at"] < chain[2]["created_at"]
    others = [load(demo, s) for s in demo.session_ids if s not in demo.lineage_ids]
    assert all("lineage_id" not in d["metadata"] for d in others)


def test_tool_calls_session(demo: DemoInfo) -> None:
    msgs = load(demo, demo.tools_id)["messages"]
    first = next(i for i, m in enumerate(msgs) if m.get("tool_calls"))
    assert msgs[first]["role"] == "assistant"
    assert msgs[first]["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "run_shell", "arguments": '{"cmd": "pytest -x"}'},
        }
    ]
    result = msgs[first + 1]
    assert result["role"] == "tool" and result["tool_call_id"] == "call_1"
    seen: set[str] = set()
    for m in msgs:
        for call in m.get("tool_calls", []):
            json.loads(call["function"]["arguments"])
            seen.add(call["id"])
        if m["role"] == "tool":
            assert m["tool_call_id"] in seen
    assert len(seen) >= 3


def test_hostile_session(demo: DemoInfo) -> None:
    data = load(demo, demo.hostile_id)
    assert "[b]markup[/b]" in data["metadata"]["title"]
    text = "\n".join(m["content"] for m in data["messages"])
    for needle in (
        "[@click=app.quit]click me[/]",
        "[bold red]not bold[/bold red]",
        "[/x]",
        "\x1b[31mred\x1b[0m",
        "\x1b]8;;http://example.com\x07link\x1b]8;;\x07",
        "done\x07",
        "\u200f",
        "🚀",
        "部署成功",
    ):
        assert needle in text, needle
    assert data["messages"][0]["content"].startswith("why does my log viewer print garbage?")


def test_long_session(demo: DemoInfo) -> None:
    data = load(demo, demo.long_id)
    msgs = data["messages"]
    assert len(msgs) >= 2000
    assert [m["role"] for m in msgs[:4]] == ["user", "assistant", "user", "assistant"]
    assert len({m["content"] for m in msgs}) > len(msgs) // 2  # varied, not one line repeated
    stamps = [m["timestamp"] for m in msgs]
    assert max(b - a for a, b in itertools.pairwise(stamps)) > 8 * 3600  # nights
    assert rate_per_hour(msgs) < 60
    items = [k for k in demo.known_items if k.session_id == demo.long_id]
    assert len(items) >= 3
    shim = next(k for k in items if "shim" in k.question)
    assert "run_sync()` shim until v3.0" in msgs[shim.index]["content"]


def test_quarantined_truncated_copy(demo: DemoInfo) -> None:
    path = demo.corrupt_files[0]
    match = CORRUPT_NAME.match(path.name)
    assert match and match["stem"] == safe_session_id(demo.salvage_id)
    raw = path.read_bytes()
    with pytest.raises(ValueError):
        json.loads(raw)
    text = raw.decode("utf-8")  # cut on a character boundary: only the JSON is broken
    live = load(demo, demo.salvage_id)
    live_raw = (demo.sessions_dir / f"{safe_session_id(demo.salvage_id)}.json").read_text()
    assert text.startswith('{\n  "session_id": ' + json.dumps(demo.salvage_id))
    # The truncated copy holds more messages than the live file, including turns it lacks.
    assert text.count('"role": ') > len(projection(live))
    assert "keep-monthly 12" in text and "keep-monthly 12" not in live_raw
    assert json.dumps(live["messages"][0]["content"], ensure_ascii=False) in text
    # The file was quarantined after the last salvaged message was written.
    last_ts = float(re.findall(r'"timestamp": ([0-9.]+)', text)[-1])
    assert int(match["ms"]) / 1000 > last_ts


def test_quarantined_bad_utf8_copy(demo: DemoInfo) -> None:
    path = demo.corrupt_files[1]
    match = CORRUPT_NAME.match(path.name)
    assert match and match["stem"] == safe_session_id(demo.lost_id)
    assert demo.lost_id not in demo.session_ids
    assert not (demo.sessions_dir / f"{safe_session_id(demo.lost_id)}.json").exists()
    raw = path.read_bytes()
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    with pytest.raises(ValueError):
        json.loads(raw)
    bad = raw.index(b"\xff")
    assert len(raw) * 0.3 < bad < len(raw) * 0.9  # in the middle
    data = json.loads(raw.decode("utf-8", errors="replace"))
    assert data["session_id"] == demo.lost_id
    assert sum("\ufffd" in m["content"] for m in data["messages"]) == 1


def test_spill_file(demo: DemoInfo) -> None:
    (path,) = demo.spill_files
    assert path.parent == demo.spill_dir
    match = SPILL_NAME.match(path.name)
    assert match and match["stem"] == safe_session_id(demo.spill_owner_id)
    raw = path.read_bytes()
    payload = json.loads(raw)
    assert raw == json.dumps(payload, ensure_ascii=False).encode("utf-8")  # as PraisonAI writes
    assert set(payload) == {"session_id", "spilled_at", "messages"}
    assert payload["session_id"] == demo.spill_owner_id
    spilled_at = datetime.fromisoformat(payload["spilled_at"]).timestamp()
    assert int(match["ms"]) == int(spilled_at * 1000)
    msgs = payload["messages"]
    assert 1 <= len(msgs) <= 2
    assert all(set(m) == MESSAGE_KEYS for m in msgs)
    owner = load(demo, demo.spill_owner_id)
    assert owner["messages"][-1]["timestamp"] < msgs[0]["timestamp"] < spilled_at < NOW
    assert not {m["content"] for m in msgs} & {m["content"] for m in owner["messages"]}


def test_billing_decision_is_findable_by_substring(demo: DemoInfo) -> None:
    hits = []
    for s in demo.session_ids:
        for i, m in enumerate(projection(load(demo, s))):
            content = m["content"].lower()
            if "billing migration" in content and "dual-write" in content and "cut over" in content:
                hits.append((s, i))
    assert hits == [(demo.decision_id, 11)]
    decision = projection(load(demo, demo.decision_id))[11]["content"]
    assert "rollback plan" in decision.lower() and "Tuesday the 18th" in decision
    (item,) = [
        k
        for k in demo.known_items
        if k.question == "what did we decide about the billing migration?"
    ]
    assert (item.session_id, item.index) == hits[0]


def test_known_items_point_at_assistant_answers(demo: DemoInfo) -> None:
    assert len(demo.known_items) >= 8
    for item in demo.known_items:
        msgs = projection(load(demo, item.session_id))
        assert msgs[item.index]["role"] == "assistant", item


def test_same_now_gives_identical_bytes(tmp_path: Path, demo: DemoInfo) -> None:
    again = build_demo_store(tmp_path / "home", now=NOW)
    assert all_files(again.root) == all_files(demo.root)
    assert again.known_items == demo.known_items
    # Building over an existing store rewrites the same files in place.
    build_demo_store(tmp_path / "home", now=NOW)
    assert all_files(again.root) == all_files(demo.root)


def test_timestamps_follow_now(tmp_path: Path, demo: DemoInfo) -> None:
    later = build_demo_store(tmp_path / "later", now=NOW + 86400.0)
    for s in demo.session_ids:
        a, b = load(demo, s), load(later, s)
        assert len(a["messages"]) == len(b["messages"])
        shifted = a["messages"][-1]["timestamp"] + 86400.0
        assert b["messages"][-1]["timestamp"] == pytest.approx(shifted, abs=1e-3)
    before = time.time()
    current = build_demo_store(tmp_path / "now")
    newest = max(load(current, s)["messages"][-1]["timestamp"] for s in current.session_ids)
    assert before - 86400 < newest <= time.time()


def test_conversations_ship_as_package_data() -> None:
    data = resources.files("session_browser.demo").joinpath("conversations.json")
    assert data.is_file()
    assert json.loads(data.read_text(encoding="utf-8"))["sessions"]


def test_demo_module_imports_no_ui() -> None:
    import session_browser.demo as demo_module

    source = Path(demo_module.__file__ or "").read_text(encoding="utf-8")
    assert not re.search(r"^\s*(from|import)\s+(textual|rich)\b", source, re.MULTILINE)


def test_praisonai_loads_and_rewrites_identically(demo: DemoInfo) -> None:
    import praisonaiagents.session.store as store
    for s in demo.session_ids:
        path = demo.sessions_dir / f"{safe_session_id(s)}.json"
        raw = path.read_text(encoding="utf-8")
        session = store.SessionData.from_dict(json.loads(raw))
        assert json.dumps(session.to_dict(), indent=2, ensure_ascii=False) == raw


def test_the_long_session_is_written_from_its_data_file(demo: DemoInfo) -> None:
    """The pairing session's texts come from ``pairing.json`` (the module holds code, not
    text): its milestones are that file's, word for word, at the known items' places."""
    text = resources.files("session_browser.demo").joinpath("pairing.json").read_text("utf-8")
    pairing = json.loads(text)
    doc = json.loads((demo.sessions_dir / f"{safe_session_id(demo.long_id)}.json").read_text())
    messages = [*doc["archived_messages"], *doc["messages"]]
    known = {k.question: k.index for k in demo.known_items if k.session_id == demo.long_id}
    assert len(known) == len(pairing["milestones"]) == 4
    for milestone in pairing["milestones"].values():
        index = known[milestone["question"]]
        assert messages[index]["content"] == milestone["assistant"]
        assert messages[index - 1]["content"].endswith(milestone["user"])
    users = {m["content"] for m in messages if m["role"] == "user"}
    for kind in ("design", "cancel"):
        asked = {q.split("{")[0] for q, _a in pairing[kind]}
        assert any(u.startswith(tuple(asked)) for u in users), kind
