"""DefaultSessionStore: file format, write operations, retention, salvage and quarantine."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path
from typing import Any, ClassVar

import pytest

from session_browser.core import files
from session_browser.core.model import SessionData, SessionMessage
from session_browser.core.paths import safe_id
from session_browser.core.store import DefaultSessionStore, fallback_summary


def read(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def make_store(tmp_path: Path, **kwargs: Any) -> DefaultSessionStore:
    return DefaultSessionStore(tmp_path / "sessions", spill_dir=tmp_path / "spill", **kwargs)


# ---------------------------------------------------------------- where things live


def test_default_dirs_resolved_when_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRAISONAI_HOME", str(tmp_path / "home1"))
    first = DefaultSessionStore()
    monkeypatch.setenv("PRAISONAI_HOME", str(tmp_path / "home2"))
    second = DefaultSessionStore()
    assert first.session_dir == tmp_path / "home1" / "sessions"
    assert second.session_dir == tmp_path / "home2" / "sessions"
    assert second.spill_dir == tmp_path / "home2" / "state" / "session_spill"
    # building a store writes nothing
    assert not (tmp_path / "home1").exists()


def test_default_dir_without_praisonai_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PRAISONAI_HOME")
    store = DefaultSessionStore()
    assert store.session_dir == Path.home() / ".praisonai" / "sessions"
    assert store.spill_dir == Path.home() / ".praisonai" / "state" / "session_spill"


# ---------------------------------------------------------------- file format


def test_file_format_matches_praisonai(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    assert store.add_user_message("s1", "héllo ✓")
    assert store.add_assistant_message("s1", "hi", metadata={"model": "gpt"})
    path = store.session_path("s1")
    raw = path.read_bytes()
    data = json.loads(raw)
    assert list(data) == [
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
    ]
    assert raw == json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8")
    assert "héllo ✓".encode() in raw  # ensure_ascii=False
    msg = data["messages"][0]
    assert list(msg) == ["role", "content", "timestamp", "metadata"]
    assert isinstance(msg["timestamp"], float)
    assert data["created_at"].endswith("+00:00")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_update_metadata_mirrors_and_skips_none(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    assert store.update_session_metadata("s", model="m1", source="cli", cost=None, agent_id="a7")
    data = read(store.session_path("s"))
    assert data["metadata"] == {"model": "m1", "source": "cli", "agent_id": "a7"}
    assert data["model"] == "m1" and data["source"] == "cli"
    assert "cost" not in data and data["agent_id"] == "a7"
    assert store.update_session_metadata("s")  # nothing to do


def test_agent_gateway_rename(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.set_agent_info("s", agent_name="Bot", user_id="u1")
    store.set_gateway_info("s", gateway_session_id="g1", agent_id="a1")
    store.rename_session("s", "  Billing plan  ")
    data = read(store.session_path("s"))
    assert (data["agent_name"], data["user_id"]) == ("Bot", "u1")
    assert (data["gateway_session_id"], data["agent_id"]) == ("g1", "a1")
    assert data["metadata"]["title"] == "Billing plan"
    store.rename_session("s", "   ")
    assert "title" not in read(store.session_path("s"))["metadata"]


def test_set_chat_history_replaces_active_window(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.add_user_message("s", "old")
    ok = store.set_chat_history(
        "s",
        [
            {"role": "user", "content": "q", "timestamp": 10.0},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
            {"role": "tool", "content": "r", "tool_call_id": "c1"},
        ],
    )
    assert ok
    history = store.get_chat_history("s")
    assert history == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1"}]},
        {"role": "tool", "content": "r", "tool_call_id": "c1"},
    ]
    assert store.get_session("s").messages[0].timestamp == 10.0


def test_get_chat_history_max_messages_skips_orphan_tool(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.add_message("s", "user", "q")
    store.add_message("s", "assistant", "", tool_calls=[{"id": "c"}])
    store.add_message("s", "tool", "out", tool_call_id="c")
    store.add_message("s", "assistant", "done")
    assert [m["role"] for m in store.get_chat_history("s", max_messages=2)] == ["assistant"]
    assert len(store.get_chat_history("s")) == 4


def test_delete_session(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.add_user_message("s", "x")
    assert store.session_exists("s")
    assert store.delete_session("s")
    assert not store.session_exists("s")
    assert store.delete_session("never")


def test_delete_refuses_file_of_another_id(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.add_user_message("a_b", "mine")
    assert store.delete_session("a/b") is False
    assert store.get_session("a_b").messages[0].content == "mine"


def test_empty_session_id_rejected(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    with pytest.raises(ValueError):
        store.add_user_message("", "x")
    assert not (tmp_path / "sessions").exists()


def test_missing_session_reads_empty_and_writes_nothing(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    assert store.get_session("nope").messages == []
    assert store.get_chat_history("nope") == []
    assert store.list_sessions() == []
    assert not (tmp_path / "sessions").exists()


# ---------------------------------------------------------------- hostile ids


@pytest.mark.parametrize("sid", ["../x", "a/b", "../../etc/passwd", "..", "a\\b", "x\x00y"])
def test_hostile_ids_stay_inside_dir(tmp_path: Path, sid: str) -> None:
    store = make_store(tmp_path)
    assert store.add_user_message(sid, "payload")
    path = store.session_path(sid)
    assert path.parent == tmp_path / "sessions"
    assert path.name == safe_id(sid) + ".json"
    assert sorted(p.name for p in (tmp_path / "sessions").iterdir() if p.suffix == ".json") == [
        path.name
    ]
    assert [p.name for p in tmp_path.iterdir()] == ["sessions"]
    # the stored id is displayed, never the file name
    assert store.list_sessions()[0]["session_id"] == sid
    assert store.recent()[0].session_id == sid
    assert store.search("payload")[0].session_id == sid
    assert store.window(sid)[0]["content"] == "payload"


def test_safe_id_rule() -> None:
    assert safe_id("../x") == "___x"
    assert safe_id("a/b c.d-e_f") == "a_b_c_d-e_f"
    assert safe_id("é1") == "é1"  # PraisonAI keeps unicode letters (str.isalnum)


# ---------------------------------------------------------------- unknown keys


def test_unknown_keys_survive_read_modify_write(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    path = store.session_path("s")
    path.parent.mkdir(parents=True)
    original = {
        "session_id": "s",
        "messages": [
            {
                "role": "user",
                "content": "hi",
                "timestamp": 1.5,
                "metadata": {},
                "custom_msg": {"k": [1, 2]},
                "name": "n",
            },
            None,
            "junk",
        ],
        "created_at": "2020-01-01T00:00:00+00:00",
        "updated_at": "2020-01-01T00:00:00+00:00",
        "agent_name": None,
        "user_id": None,
        "metadata": {"title": "T", "deep": {"x": 1}},
        "gateway_session_id": None,
        "agent_id": None,
        "runtime_state": {"r": {"t": {"s": 1}}},
        "archived_messages": [{"role": "user", "content": "a", "timestamp": 1, "extra": True}],
        "future_field": {"v": 2},
        "parent_session_id": "p",
    }
    path.write_text(json.dumps(original, indent=2), encoding="utf-8")
    assert store.add_assistant_message("s", "ok")
    data = read(path)
    assert data["future_field"] == {"v": 2}
    assert data["parent_session_id"] == "p"
    assert data["messages"][0]["custom_msg"] == {"k": [1, 2]}
    assert data["messages"][0]["name"] == "n"
    assert data["archived_messages"][0]["extra"] is True
    assert data["archived_messages"][0]["timestamp"] == 1  # int stays int
    assert data["metadata"]["deep"] == {"x": 1}
    assert data["runtime_state"] == {"r": {"t": {"s": 1}}}
    assert data["created_at"] == "2020-01-01T00:00:00+00:00"
    assert [m["content"] for m in data["messages"]] == ["hi", "ok"]  # junk entries skipped


def test_odd_typed_values_survive_read_modify_write(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    path = store.session_path("s")
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps(
            {
                "session_id": "s",
                "messages": [
                    {"role": 7, "content": ["a"], "timestamp": "yesterday", "metadata": None},
                    {"role": "tool", "content": "x", "tool_calls": "bad", "tool_call_id": 3},
                ],
                "created_at": 12345,
                "agent_name": ["x"],
                "metadata": None,
                "runtime_state": [],
                "last_compaction": {"summary": 5, "message_index": "x"},
            }
        ),
        encoding="utf-8",
    )
    assert store.add_user_message("s", "new")
    data = read(path)
    m0, m1 = data["messages"][0], data["messages"][1]
    assert m0 == {"role": 7, "content": ["a"], "timestamp": "yesterday", "metadata": None}
    assert m1["tool_calls"] == "bad" and m1["tool_call_id"] == 3
    assert data["created_at"] == 12345
    assert data["agent_name"] == ["x"]
    assert data["metadata"] is None
    assert data["runtime_state"] == []
    assert data["last_compaction"] == {"summary": 5, "message_index": "x"}
    # changing a field replaces the odd value
    store.set_agent_info("s", agent_name="Bot")
    assert read(path)["agent_name"] == "Bot"
    store.clear_session("s")
    assert "last_compaction" not in read(path)


# ---------------------------------------------------------------- retention


def test_compact_archives_and_summarises(tmp_path: Path) -> None:
    store = make_store(tmp_path, active_window=3)
    assert store.retention == "compact"
    for i in range(6):
        store.add_message("s", "user" if i % 2 == 0 else "assistant", f"m{i}")
    data = read(store.session_path("s"))
    active, archived = data["messages"], data["archived_messages"]
    assert [m["content"] for m in archived] == ["m0", "m1", "m2"]
    assert [m["content"] for m in active[1:]] == ["m3", "m4", "m5"]
    summary = active[0]
    assert summary["role"] == "system"
    assert summary["content"].startswith("[Session Summary]\n")
    assert summary["metadata"] == {"compaction": True, "compacted_count": 3}
    # archived turns stay searchable
    hit = store.search("m0")[0]
    assert hit.anchor_index == 0 and hit.messages[0]["archived"] is True


def test_truncate_and_keep_all(tmp_path: Path) -> None:
    trunc = DefaultSessionStore(tmp_path / "t", retention="truncate", active_window=2)
    keep = DefaultSessionStore(tmp_path / "k", retention="keep_all", active_window=2)
    for i in range(5):
        trunc.add_user_message("s", f"m{i}")
        keep.add_user_message("s", f"m{i}")
    t = read(trunc.session_path("s"))
    assert [m["content"] for m in t["messages"]] == ["m3", "m4"]
    assert t["archived_messages"] == []
    k = read(keep.session_path("s"))
    assert len(k["messages"]) == 5 and k["archived_messages"] == []


def test_max_messages_without_retention_means_truncate(tmp_path: Path) -> None:
    store = DefaultSessionStore(tmp_path / "s", max_messages=3)
    assert store.retention == "truncate" and store.active_window == 3
    for i in range(5):
        store.add_user_message("s", f"m{i}")
    data = read(store.session_path("s"))
    assert [m["content"] for m in data["messages"]] == ["m2", "m3", "m4"]
    default = DefaultSessionStore(tmp_path / "d")
    assert default.retention == "compact" and default.active_window == 100
    explicit = DefaultSessionStore(tmp_path / "e", max_messages=3, retention="compact")
    assert explicit.retention == "compact"


def test_bad_retention_raises(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="retention"):
        DefaultSessionStore(tmp_path, retention="forever")


def test_env_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRAISONAI_SESSION_RETENTION", "keep_all")
    monkeypatch.setenv("PRAISONAI_SESSION_ACTIVE_WINDOW", "7")
    store = DefaultSessionStore(tmp_path)
    assert (store.retention, store.active_window) == ("keep_all", 7)
    # explicit arguments win over the environment
    store = DefaultSessionStore(tmp_path, retention="truncate", active_window=2)
    assert (store.retention, store.active_window) == ("truncate", 2)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("PRAISONAI_SESSION_RETENTION", "bogus"),
        ("PRAISONAI_SESSION_ACTIVE_WINDOW", "many"),
        ("PRAISONAI_SESSION_ACTIVE_WINDOW", "-3"),
    ],
)
def test_bad_env_values_logged_and_ignored(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    name: str,
    value: str,
) -> None:
    monkeypatch.setenv(name, value)
    with caplog.at_level(logging.WARNING, logger="session_browser.store"):
        store = DefaultSessionStore(tmp_path)
    assert (store.retention, store.active_window) == ("compact", 100)
    assert name in caplog.text and value in caplog.text


def test_clear_session_keeps_archive(tmp_path: Path) -> None:
    store = make_store(tmp_path, active_window=2)
    for i in range(5):
        store.add_user_message("s", f"turn {i}")
    store.clear_session("s")
    data = read(store.session_path("s"))
    assert data["messages"] == []
    assert [m["content"] for m in data["archived_messages"]] == ["turn 0", "turn 1", "turn 2"]
    assert store.search("turn 1")[0].session_id == "s"


def test_repeated_compaction_accumulates(tmp_path: Path) -> None:
    store = make_store(tmp_path, active_window=2)
    for i in range(8):
        store.add_user_message("s", f"m{i}")
    data = read(store.session_path("s"))
    summary = data["messages"][0]
    assert summary["metadata"]["compacted_count"] == len(data["archived_messages"]) == 6
    assert summary["content"].count("[Session Summary]") == 1
    assert summary["content"].count("\n---\n") == 5


def test_fallback_summary_text() -> None:
    msgs = [
        SessionMessage("user", "look at a.py"),
        SessionMessage("tool", "read a.py and b.txt", metadata={"name": "read"}),
        SessionMessage("tool", "x", metadata={"name": "grep"}),
    ]
    assert fallback_summary(msgs) == (
        "Previous conversation: 3 messages\n"
        "Message breakdown: {'user': 1, 'assistant': 0, 'tool': 2, 'system': 0}\n"
        "Tools used: grep, read\n"
        "Files referenced: a.py, b.txt"
    )
    # a tool turn without a name: PraisonAI's summariser falls back to one line
    assert fallback_summary([SessionMessage("tool", "x")]) == (
        "Previous conversation: 1 messages compacted."
    )


# ---------------------------------------------------------------- atomic writes


def test_no_temp_files_left_and_mode(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    for i in range(5):
        store.add_user_message("s", f"m{i}")
    names = sorted(p.name for p in (tmp_path / "sessions").iterdir())
    assert names == ["s.json", "s.json.lock"]
    assert stat.S_IMODE(store.session_path("s").stat().st_mode) == 0o600


def test_atomic_write_failure_leaves_target(tmp_path: Path) -> None:
    target = tmp_path / "t.json"
    target.write_bytes(b"old")
    with pytest.raises(TypeError):
        files.write_session_file(target, {"x": object()})
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]


def test_unserialisable_content_returns_false(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.add_user_message("s", "before")
    before = store.session_path("s").read_bytes()
    assert store.add_message("s", "user", object()) is False  # type: ignore[arg-type]
    assert store.session_path("s").read_bytes() == before


def test_after_write_hook_failure_does_not_fail_write(tmp_path: Path) -> None:
    class Hooked(DefaultSessionStore):
        calls: ClassVar[list[str]] = []

        def _after_write(self, session_id: str, path: Path, data: dict[str, Any] | None) -> None:
            self.calls.append(session_id)
            raise RuntimeError("index down")

    store = Hooked(tmp_path / "s", spill_dir=tmp_path / "spill")
    assert store.add_user_message("x", "hello") is True
    assert Hooked.calls == ["x"]
    assert not (tmp_path / "spill").exists()


def test_write_session_verbatim(tmp_path: Path) -> None:
    store = make_store(tmp_path, active_window=2)
    session = SessionData(
        session_id="imp", messages=[SessionMessage("user", f"m{i}", 1.0 + i) for i in range(5)]
    )
    assert store.write_session(session)
    assert len(read(store.session_path("imp"))["messages"]) == 5  # no retention
    with pytest.raises(FileExistsError):
        store.write_session(session)
    assert store.write_session(session, overwrite=True)


# ---------------------------------------------------------------- quarantine


@pytest.mark.parametrize(
    "payload",
    [b'{"session_id": "s", "messages": [', b"\xff\xfe not utf8 \x80", b"[1, 2, 3]", b"42"],
    ids=["bad-json", "bad-utf8", "list-root", "number-root"],
)
def test_corrupt_file_quarantined_on_write(tmp_path: Path, payload: bytes) -> None:
    store = make_store(tmp_path)
    path = store.session_path("s")
    path.parent.mkdir(parents=True)
    path.write_bytes(payload)
    assert store.add_user_message("s", "fresh start")
    corrupt = [p for p in path.parent.iterdir() if ".corrupt-" in p.name]
    assert len(corrupt) == 1
    assert files.CORRUPT_RE.match(corrupt[0].name)
    assert corrupt[0].name.startswith("s.json.corrupt-")
    assert corrupt[0].read_bytes() == payload
    assert [m["content"] for m in read(path)["messages"]] == ["fresh start"]


def test_quarantine_collision_suffix(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    names = []
    for n in range(3):
        path.write_bytes(b"bad%d" % n)
        names.append(files.quarantine(path, now_ms=1000).name)
    assert names == ["s.json.corrupt-1000", "s.json.corrupt-1000-1", "s.json.corrupt-1000-2"]
    assert (tmp_path / "s.json.corrupt-1000-2").read_bytes() == b"bad2"


def test_corrupt_file_untouched_by_reads(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    path = store.session_path("s")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"{broken")
    assert store.get_session("s").messages == []
    assert store.window("s") == []
    assert store.list_sessions() == []
    assert path.read_bytes() == b"{broken"
    assert [p.name for p in path.parent.iterdir()] == ["s.json"]


def test_read_oserror_is_reraised_and_turn_spilled(tmp_path: Path) -> None:
    """A session path that cannot be read (here: a directory) is never overwritten."""
    store = make_store(tmp_path)
    path = store.session_path("s")
    path.mkdir(parents=True)
    (path / "keep").write_text("x")
    with pytest.raises(IsADirectoryError):
        store.read_raw("s")
    assert store.add_user_message("s", "precious") is False
    assert (path / "keep").read_text() == "x"
    spills = list((tmp_path / "spill").iterdir())
    assert len(spills) == 1
    assert json.loads(spills[0].read_text())["messages"][0]["content"] == "precious"
    assert not [p for p in path.parent.iterdir() if ".corrupt-" in p.name]


# ---------------------------------------------------------------- spill salvage


def spill_payload(session_id: str, *messages: Any, owner: Path | None = None) -> dict[str, Any]:
    """A spill payload as we write it for the store ``owner`` (as PraisonAI does: None)."""
    payload: dict[str, Any] = {
        "session_id": session_id,
        "spilled_at": "2026-01-01T00:00:00+00:00",
        "messages": list(messages),
    }
    if owner is not None:
        payload[files.SPILL_OWNER_KEY] = str(owner.resolve())
    return payload


def test_write_failure_spills_and_next_write_reingests(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.add_user_message("s", "first")
    path = store.session_path("s")
    saved = path.read_bytes()
    # make the write fail for real: the session path becomes a directory
    path.unlink()
    path.mkdir()
    assert store.add_assistant_message("s", "lost?") is False
    spills = list((tmp_path / "spill").iterdir())
    assert len(spills) == 1
    spill = spills[0]
    assert files.SPILL_RE.match(spill.name)
    stem, ms, pid, hexpart = spill.name[: -len(".json")].split(".")
    assert (stem, pid) == ("s", str(os.getpid())) and len(hexpart) == 8 and ms.isdigit()
    assert stat.S_IMODE(spill.stat().st_mode) == 0o600
    payload = json.loads(spill.read_text())
    assert set(payload) == {"session_id", "spilled_at", "messages", files.SPILL_OWNER_KEY}
    assert payload[files.SPILL_OWNER_KEY] == str(store.session_dir.resolve())
    assert payload["session_id"] == "s" and payload["messages"][0]["content"] == "lost?"
    # heal the disk: the next write folds the spilled turn back in, then removes the spill
    path.rmdir()
    path.write_bytes(saved)
    assert store.add_user_message("s", "third")
    assert [m["content"] for m in read(path)["messages"]] == ["first", "lost?", "third"]
    assert list((tmp_path / "spill").iterdir()) == []


def test_reingest_dedups_and_skips_malformed(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.add_user_message("s", "kept")
    existing = read(store.session_path("s"))["messages"][0]
    spill_dir = tmp_path / "spill"
    spill_dir.mkdir()
    good = spill_dir / "s.1000.1.aaaaaaaa.json"
    good.write_text(
        json.dumps(
            spill_payload(
                "s",
                existing,  # already in the file: not duplicated
                {"role": "assistant", "content": "salvaged", "timestamp": 5.0, "metadata": {}},
                {"role": "assistant", "content": "salvaged", "timestamp": 5.0, "metadata": {}},
                "junk",
                owner=store.session_dir,
            )
        )
    )
    bad_json = spill_dir / "s.1001.1.bbbbbbbb.json"
    bad_json.write_bytes(b"{nope")
    wrong_root = spill_dir / "s.1002.1.cccccccc.json"
    wrong_root.write_text("[1]")
    other = spill_dir / "s.1003.1.dddddddd.json"
    other.write_text(
        json.dumps(spill_payload("s2", {"role": "user", "content": "x"}, owner=store.session_dir))
    )
    other_session = spill_dir / "s2.1004.1.eeeeeeee.json"
    other_session.write_text(json.dumps(spill_payload("s2", {"role": "user", "content": "y"})))
    assert store.add_user_message("s", "next")
    contents = [m["content"] for m in read(store.session_path("s"))["messages"]]
    assert contents == ["kept", "salvaged", "next"]
    assert not good.exists()
    assert bad_json.exists() and wrong_root.exists() and other.exists()
    assert other_session.exists()


def test_spill_not_deleted_when_reingest_write_fails(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    spill_dir = tmp_path / "spill"
    spill_dir.mkdir()
    spill = spill_dir / "s.1000.1.aaaaaaaa.json"
    spill.write_text(
        json.dumps(spill_payload("s", {"role": "user", "content": "z"}, owner=store.session_dir))
    )
    store.session_path("s").mkdir(parents=True)  # the write cannot land
    assert store.add_user_message("s", "now") is False
    assert spill.exists()


def _write_under_fsize_limit(session_dir: str, spill_dir: str, limit: int, out: str) -> None:
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-big write fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    store = DefaultSessionStore(session_dir, spill_dir=spill_dir)
    ok = store.add_assistant_message("big", "the turn that does not fit")
    Path(out).write_text(json.dumps(ok))


def test_disk_full_write_spills_turn(tmp_path: Path) -> None:
    """A real failed write (file size limit, like a full disk) spills the turn."""
    import multiprocessing

    store = make_store(tmp_path)
    store.add_user_message("big", "x" * 8000)
    path = store.session_path("big")
    before = path.read_bytes()
    out = tmp_path / "result.json"
    proc = multiprocessing.get_context("fork").Process(
        target=_write_under_fsize_limit,
        args=(str(tmp_path / "sessions"), str(tmp_path / "spill"), 4096, str(out)),
    )
    proc.start()
    proc.join(60)
    assert proc.exitcode == 0
    assert json.loads(out.read_text()) is False
    assert path.read_bytes() == before  # the old file is intact
    assert sorted(p.name for p in path.parent.iterdir()) == ["big.json", "big.json.lock"]
    spills = list((tmp_path / "spill").iterdir())
    assert len(spills) == 1
    assert json.loads(spills[0].read_text())["messages"][0]["content"] == (
        "the turn that does not fit"
    )
    # no limit any more: the next write lands both turns and removes the spill
    assert store.add_user_message("big", "after")
    contents = [m["content"] for m in read(path)["messages"]]
    assert contents[1:] == ["the turn that does not fit", "after"]
    assert list((tmp_path / "spill").iterdir()) == []


def test_overlong_ids(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    sid = "x" * 300
    with pytest.raises(ValueError, match="too long"):
        store.add_user_message(sid, "hi")
    assert store.get_session(sid).messages == []
    assert store.window(sid) == []
    assert store.session_exists(sid) is False
    assert store.delete_session(sid) is True


def test_renamed_file_found_by_stored_id(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.add_user_message("orig", "content here")
    os.rename(store.session_path("orig"), tmp_path / "sessions" / "backup copy.json")
    assert store.session_exists("orig")
    assert store.window("orig")[0]["content"] == "content here"
    assert store.get_session("orig").messages[0].content == "content here"
    assert store.search("content")[0].session_id == "orig"
    assert not store.session_exists("other")


def _sparse(path: Path, size: int) -> None:
    with open(path, "wb") as fh:
        fh.truncate(size)


def test_huge_file_is_skipped_by_reads_and_never_replaced(tmp_path: Path) -> None:
    store = DefaultSessionStore(tmp_path / "sessions", spill_dir=tmp_path / "spill")
    store.add_user_message("ok", "hello")
    huge = store.session_path("huge")
    _sparse(huge, files.MAX_SESSION_BYTES + 1)  # sparse: no real disk or memory used
    assert [s.session_id for s in store.recent()] == ["ok"]
    assert store.get_session("huge").messages == []
    with pytest.raises(OSError, match="limit"):
        store.read_raw("huge")
    # A write must not treat it as corrupt (no quarantine) nor overwrite it: the turn spills.
    assert store.add_user_message("huge", "new turn") is False
    assert huge.stat().st_size == files.MAX_SESSION_BYTES + 1
    assert not list(store.session_dir.glob("*.corrupt-*"))
    assert len(list((tmp_path / "spill").iterdir())) == 1


def test_fifo_named_like_a_session_never_blocks(tmp_path: Path) -> None:
    store = DefaultSessionStore(tmp_path)
    store.add_user_message("ok", "hello")
    os.mkfifo(store.session_path("pipe"))
    assert store.get_session("pipe").messages == []  # returns at once, no writer needed
    with pytest.raises(OSError):
        files.read_json_file(store.session_path("pipe"))
    assert [s.session_id for s in store.recent()] == ["ok"]


def test_failed_atomic_write_names_the_target_not_the_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "x.json"
    with pytest.raises(FileNotFoundError) as info:
        files.atomic_write_bytes(target, b"{}")
    assert info.value.filename == str(target)


def test_delete_never_removes_corrupt_bytes_of_another_session(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.session_dir.mkdir(parents=True)
    path = store.session_path("a/b")  # a_b.json
    theirs = b'{"session_id": "a_b", "messages": [{"role": "user", "content": "prec'
    path.write_bytes(theirs)
    assert store.delete_session("a/b") is False
    assert path.read_bytes() == theirs
    nameless = b'{"messages": [{"role": "user", "content": "who'
    path.write_bytes(nameless)
    assert store.delete_session("a/b") is False
    assert path.read_bytes() == nameless
    assert sorted(p.name for p in store.session_dir.iterdir() if p.suffix != ".lock") == [
        "a_b.json"
    ]


def test_delete_moves_own_corrupt_file_aside(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.session_dir.mkdir(parents=True)
    path = store.session_path("s")
    mine = b'{"session_id": "s", "messages": [{"role": "user", "content": "last wor'
    path.write_bytes(mine)
    assert store.delete_session("s") is True
    assert not path.exists()
    (aside,) = [p for p in store.session_dir.iterdir() if ".corrupt-" in p.name]
    assert aside.name.startswith("s.json.corrupt-") and aside.read_bytes() == mine


def test_write_session_overwrite_rechecks_under_the_lock(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.add_user_message("a_b", "theirs")
    path = store.session_path("a/b")
    theirs = path.read_bytes()
    incoming = SessionData(session_id="a/b")
    incoming.messages.append(SessionMessage(role="user", content="mine", timestamp=1.0))
    with pytest.raises(OSError, match="holds session 'a_b'"):
        store.write_session(incoming, overwrite=True)
    assert path.read_bytes() == theirs
    broken = b'{"session_id": "a/b", "messa'
    path.write_bytes(broken)
    with pytest.raises(OSError, match="corrupt"):
        store.write_session(incoming, overwrite=True)
    assert path.read_bytes() == broken
    path.write_bytes(files.dumps_session({"session_id": "a/b", "messages": []}))
    assert store.write_session(incoming, overwrite=True) is True
    assert read(path)["messages"][0]["content"] == "mine"
