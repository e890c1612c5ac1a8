"""The same calls on praisonaiagents 1.7.17's store and on ours: same answers, same files.

Each store writes into its own temp dir; return values and every session file are compared
key by key with clock values (timestamps, ``updated_at``) blanked.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from session_browser.core import DefaultSessionStore, SqliteSessionStore
from session_browser.core.files import SPILL_OWNER_KEY
from session_browser.core.model import ImportReport, SessionData

os.environ.setdefault("DO_NOT_TRACK", "1")
pstore = pytest.importorskip("praisonaiagents.session.store")
psqlite = pytest.importorskip("praisonaiagents.session.sqlite_store")

CLOCK_KEYS = {"timestamp", "created_at", "updated_at", "spilled_at"}


def blank(value: Any) -> Any:
    """``value`` as plain JSON with clock values and clock-derived mirror ids blanked."""
    if isinstance(value, SessionData) or type(value).__name__ == "SessionData":
        value = value.to_dict()
    if isinstance(value, ImportReport) or type(value).__name__ == "ImportReport":
        return {
            "imported": value.imported,
            "skipped": sorted((s["session_id"], s["reason"]) for s in value.skipped),
        }
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in CLOCK_KEYS:
                out[k] = "T"
            elif k == "id" and isinstance(v, str) and ":" in v:
                out[k] = v.split(":", 1)[0] + ":T"
            else:
                out[k] = blank(v)
        return out
    if isinstance(value, list | tuple):
        return [blank(v) for v in value]
    return value


def session_files(directory: Path) -> dict[str, Any]:
    return {
        p.name: blank(json.loads(p.read_text(encoding="utf-8")))
        for p in sorted(directory.glob("*.json"))
    }


def by_content(files: dict[str, Any]) -> dict[str, Any]:
    """Files with each session's turns sorted: PraisonAI appends folded spilled turns at
    the end, we put them in time order (the one documented ordering difference)."""
    for data in files.values():
        data["messages"].sort(key=lambda m: json.dumps(m, sort_keys=True))
    return files


class RecordingMirror:
    def __init__(self) -> None:
        self.records: list[tuple[str, list[dict[str, Any]]]] = []
        self.lock = threading.Lock()

    def append(self, session_id: str, records: list[dict[str, Any]]) -> None:
        with self.lock:
            self.records.append((session_id, records))


Step = tuple[str, Callable[[Any], Any]]

CHAT: list[Step] = [
    *[
        (f"add {i}", lambda s, i=i: s.add_message("s1", ("assistant", "user")[i % 2], f"t{i}"))
        for i in range(7)
    ],
    ("history", lambda s: s.get_chat_history("s1")),
    ("session", lambda s: s.get_session("s1")),
    (
        "checkpoint",
        lambda s: s.append_compaction_checkpoint(
            "s1", "We agreed on two phases.", tokens_before=900, tokens_after=40, metadata={"k": 1}
        ),
    ),
    ("blank checkpoint", lambda s: s.append_compaction_checkpoint("s1", "   ")),
    ("after checkpoint", lambda s: s.add_message("s1", "user", "and refunds?")),
    ("working", lambda s: s.get_working_history("s1")),
    ("working 2", lambda s: s.get_working_history("s1", 2)),
    ("working none", lambda s: s.get_working_history("nobody")),
    ("session data working", lambda s: s.get_session("s1").get_working_history(3)),
    ("compact again", lambda s: [s.add_message("s1", "assistant", f"more {i}") for i in range(4)]),
    ("working after rollup", lambda s: s.get_working_history("s1")),
    ("set state", lambda s: s.set_runtime_state("s1", "native", "t1", {"calls": ["c1"]})),
    ("set state 2", lambda s: s.set_runtime_state("s1", "native", "t2", {"calls": []})),
    ("set state other", lambda s: s.set_runtime_state("s1", "plugin", "t1", {"x": 1})),
    ("set state off", lambda s: s.set_runtime_state("s1", "off", "t1", {"x": 1}, False)),
    ("get state", lambda s: s.get_runtime_state("s1", "native")),
    ("get state turn", lambda s: s.get_runtime_state("s1", "native", "t1")),
    ("get state missing", lambda s: s.get_runtime_state("s1", "nope", "t9")),
    ("clear state one", lambda s: s.clear_runtime_state("s1", "native")),
    ("get state cleared", lambda s: s.get_runtime_state("s1", "native")),
    ("clear state all", lambda s: s.clear_runtime_state("s1")),
    ("model none", lambda s: s.get_session_model("s1")),
    (
        "turn model",
        lambda s: s.add_message(
            "s2", "assistant", "hi", metadata={"model": "m-turn", "reasoning_effort": "low"}
        ),
    ),
    ("model from turn", lambda s: s.get_session_model("s2")),
    ("effort from turn", lambda s: s.get_session_reasoning_effort("s2")),
    (
        "meta",
        lambda s: s.update_session_metadata(
            "s2", model="m-meta", reasoning_effort="high", cost=0.5, total_tokens=77, agent_key="k1"
        ),
    ),
    ("model from meta", lambda s: s.get_session_model("s2")),
    ("effort from meta", lambda s: s.get_session_reasoning_effort("s2")),
    ("model unknown", lambda s: s.get_session_model("nobody")),
    (
        "merge map",
        lambda s: s.merge_session_metadata_map("s2", "tools", {"a": 1}, defaults={"a": 0, "b": 2}),
    ),
    (
        "merge map again",
        lambda s: s.merge_session_metadata_map("s2", "tools", {"c": 3}, defaults={"b": 9, "d": 4}),
    ),
    ("agent", lambda s: s.set_agent_info("s2", agent_name="Bob", user_id="u")),
    ("agent 3", lambda s: s.set_agent_info("s3", agent_name="Bob")),
    ("by agent", lambda s: sorted(s.list_sessions_by_agent("Bob"))),
    ("by agent limit", lambda s: len(s.list_sessions_by_agent("Bob", limit=1))),
    ("by agent none", lambda s: s.list_sessions_by_agent("Nobody")),
    (
        "sessions by agent",
        lambda s: sorted(
            (blank(d) for d in s.get_sessions_by_agent("Bob")), key=lambda d: d["session_id"]
        ),
    ),
    (
        "agent history",
        lambda s: sorted(
            blank(s.get_agent_chat_history("Bob")), key=lambda m: (m["session_id"], m["content"])
        ),
    ),
    ("gateway", lambda s: s.set_gateway_info("s2", gateway_session_id="gw-2", agent_id="ag")),
    ("gateway 3", lambda s: s.set_gateway_info("s3", agent_id="ag")),
    ("by gateway", lambda s: s.get_by_gateway_session("gw-2")),
    ("by gateway none", lambda s: s.get_by_gateway_session("gw-none")),
    ("by gateway agent", lambda s: sorted(s.list_sessions_by_gateway_agent("ag"))),
    ("partial", lambda s: s.upsert_partial_assistant_message("p", "Hel")),
    ("partial more", lambda s: s.upsert_partial_assistant_message("p", "Hello wor")),
    ("partial session", lambda s: s.get_session("p")),
    (
        "partial final",
        lambda s: s.upsert_partial_assistant_message("p", "Hello world", finalize=True),
    ),
    ("finalize nothing", lambda s: s.upsert_partial_assistant_message("p", "", finalize=True)),
    ("finalize fresh", lambda s: s.upsert_partial_assistant_message("p", "direct", finalize=True)),
    ("partial 2", lambda s: s.upsert_partial_assistant_message("p", "oops")),
    ("discard", lambda s: s.discard_partial_assistant_message("p")),
    ("discard none", lambda s: s.discard_partial_assistant_message("p")),
    ("partial empty", lambda s: s.upsert_partial_assistant_message("q", "")),
    ("finalize empty", lambda s: s.upsert_partial_assistant_message("q", "", finalize=True)),
    (
        "set history",
        lambda s: s.set_chat_history(
            "h", [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
        ),
    ),
    ("invalidate", lambda s: s.invalidate_cache()),
    ("invalidate one", lambda s: s.invalidate_cache("s1")),
    (
        "list",
        lambda s: sorted(
            (blank(r) for r in s.list_sessions(limit=None)), key=lambda r: r["session_id"]
        ),
    ),
    ("list limit", lambda s: len(s.list_sessions(limit=2))),
    ("export", lambda s: s.export_session("s2")),
    ("export unknown", lambda s: s.export_session("nobody")),
    (
        "export all",
        lambda s: sorted(blank(s.export_all()["sessions"]), key=lambda d: d["session_id"]),
    ),
    (
        "import",
        lambda s: s.import_sessions(
            {
                "version": 1,
                "sessions": [
                    {
                        "session_id": "imp",
                        "messages": [{"role": "user", "content": "x", "timestamp": 1.0}],
                        "gateway_session_id": "live",
                        "agent_id": "live",
                        "metadata": {"agent_id": "live"},
                    },
                    "not a dict",
                    {"messages": []},
                    {"session_id": "imp"},
                    {"session_id": "s1"},
                ],
            }
        ),
    ),
    (
        "import again overwrite",
        lambda s: s.import_sessions(
            {"sessions": [{"session_id": "s1", "messages": []}]},
            overwrite=True,
            reset_live_fields=False,
        ),
    ),
    ("import not a dict", lambda s: s.import_sessions(["x"])),
    ("import no list", lambda s: s.import_sessions({"version": 1})),
    ("import newer", lambda s: s.import_sessions({"version": 99, "sessions": []})),
    (
        "import capped",
        lambda s: (
            s.import_sessions(
                {"sessions": [{"session_id": "c1"}, {"session_id": "c2"}]}, max_sessions=1
            ).imported
        ),
    ),
    ("imported", lambda s: s.get_session("imp")),
    ("exists", lambda s: [s.session_exists(x) for x in ("imp", "c1", "nobody")]),
]


def run(store: Any) -> list[Any]:
    return [blank(fn(store)) for _name, fn in CHAT]


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_same_calls_same_answers_same_files(tmp_path: Path, kind: str) -> None:
    theirs_dir, ours_dir = tmp_path / "theirs", tmp_path / "ours"
    their_mirror, our_mirror = RecordingMirror(), RecordingMirror()
    if kind == "json":
        theirs = pstore.DefaultSessionStore(str(theirs_dir), active_window=4, mirror=their_mirror)
        ours: Any = DefaultSessionStore(str(ours_dir), active_window=4, mirror=our_mirror)
    else:
        theirs = psqlite.SqliteSessionStore(
            str(theirs_dir), db_path=str(tmp_path / "t.db"), active_window=4, mirror=their_mirror
        )
        ours = SqliteSessionStore(
            str(ours_dir), db_path=str(tmp_path / "o.db"), active_window=4, mirror=our_mirror
        )
    got_theirs, got_ours = run(theirs), run(ours)
    for (name, _fn), a, b in zip(CHAT, got_theirs, got_ours, strict=True):
        assert b == a, f"step {name!r}"
    assert session_files(ours_dir) == session_files(theirs_dir)
    assert theirs.flush_mirror(5) and ours.flush_mirror(5)
    theirs.close_mirror()
    ours.close_mirror()
    assert blank(our_mirror.records) == blank(their_mirror.records)
    assert our_mirror.records, "the mirror saw the persisted turns"


def test_flush_mirror_without_mirror_is_true(tmp_path: Path) -> None:
    store = DefaultSessionStore(tmp_path)
    assert store.flush_mirror() is True
    store.close_mirror()


def test_compaction_logs_one_info_line_per_rollup(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = DefaultSessionStore(tmp_path, active_window=2)
    caplog.set_level(logging.INFO, logger="session_browser.store")
    for i in range(4):
        store.add_message("s", "user", f"t{i}")
    lines = [r.getMessage() for r in caplog.records if "compacted" in r.getMessage()]
    assert lines == [
        "session s: compacted 1 early turns into a summary (retention=compact)",
        "session s: compacted 1 early turns into a summary (retention=compact)",
    ]


def _block_session_file(directory: Path, sid: str) -> Path:
    """A directory where the session file should be: every write of it fails."""
    blocker = directory / f"{sid}.json"
    blocker.mkdir(parents=True)
    return blocker


def test_failed_write_spills_fires_hook_and_folds_back(tmp_path: Path, isolated_home: Path) -> None:
    from praisonaiagents.hooks.registry import get_default_registry
    from praisonaiagents.hooks.types import HookEvent, HookResult

    seen: list[dict[str, Any]] = []

    def hook(event: Any) -> Any:
        seen.append(
            {
                "session_id": event.session_id,
                "role": event.role,
                "content": event.content,
                "spilled": event.spilled,
                "spill": bool(event.spill_path),
            }
        )
        return HookResult(decision="allow")

    registry = get_default_registry()
    hook_id = registry.register_function(HookEvent.SESSION_PERSIST_FAILED, hook)
    try:
        theirs_dir, ours_dir = tmp_path / "theirs", tmp_path / "ours"
        our_spill = tmp_path / "our_spill"
        their_spill = isolated_home / ".praisonai" / "state" / "session_spill"
        theirs = pstore.DefaultSessionStore(str(theirs_dir))
        ours = DefaultSessionStore(str(ours_dir), spill_dir=our_spill)
        results = []
        for store, d in ((theirs, theirs_dir), (ours, ours_dir)):
            blocker = _block_session_file(d, "s")
            results.append(store.add_message("s", "user", "keep me"))
            blocker.rmdir()
        assert results == [False, False]
        assert (
            seen[0]
            == seen[1]
            == {
                "session_id": "s",
                "role": "user",
                "content": "keep me",
                "spilled": True,
                "spill": True,
            }
        )
        # ours records which store spilled the turn (a shared spill dir never moves a turn
        # across stores); every other key is PraisonAI's
        ours_spilled = [json.loads(p.read_text()) for p in our_spill.glob("*.json")]
        assert [s.pop(SPILL_OWNER_KEY) for s in ours_spilled] == [str(tmp_path / "ours")]
        assert [blank(json.loads(p.read_text())) for p in their_spill.glob("*.json")] == [
            blank(s) for s in ours_spilled
        ]
        # ours shows the spilled turn before any write, without writing anything
        assert ours.get_chat_history("s") == [{"role": "user", "content": "keep me"}]
        assert not (ours_dir / "s.json").exists()
        assert list(our_spill.glob("*.json"))
        # ours folds it back on the next write; PraisonAI on its next read (which writes)
        assert theirs.add_message("s", "assistant", "kept") and ours.add_message(
            "s", "assistant", "kept"
        )
        theirs.get_chat_history("s")
        assert by_content(session_files(ours_dir)) == by_content(session_files(theirs_dir))
        assert [m["content"] for m in ours.get_chat_history("s")] == ["keep me", "kept"]
        assert not list(our_spill.glob("*.json")) and not list(their_spill.glob("*.json"))
    finally:
        registry.unregister(hook_id)


def test_spill_files_of_any_name_are_folded_and_listed(tmp_path: Path, isolated_home: Path) -> None:
    """PraisonAI folds every ``<id>.*.json`` of the spill dir; so do we (and list them)."""
    from session_browser.core.quarantine import list_items

    # a spill without an owner (PraisonAI's) folds into the store laid out beside it
    theirs_dir, ours_dir = tmp_path / "theirs", tmp_path / "oh" / "sessions"
    their_spill = isolated_home / ".praisonai" / "state" / "session_spill"
    our_spill = tmp_path / "oh" / "state" / "session_spill"
    payload = {
        "session_id": "s",
        "spilled_at": "x",
        "messages": [
            {"role": "user", "content": "hand-made spill", "timestamp": 5.0, "metadata": {}}
        ],
    }
    for d in (their_spill, our_spill):
        d.mkdir(parents=True)
        (d / "s.manual-copy.json").write_text(json.dumps(payload))
        (d / "other.1.2.deadbeef.json").write_text(json.dumps({**payload, "session_id": "x"}))
    ours = DefaultSessionStore(str(ours_dir), spill_dir=our_spill)
    names = sorted(it.path.name for it in list_items([ours]) if it.kind == "spill")
    assert names == ["other.1.2.deadbeef.json", "s.manual-copy.json"]
    theirs = pstore.DefaultSessionStore(str(theirs_dir))
    theirs.add_message("s", "assistant", "next")
    ours.add_message("s", "assistant", "next")
    theirs.get_chat_history("s")  # PraisonAI folds spills when it reads
    assert by_content(session_files(ours_dir)) == by_content(session_files(theirs_dir))
    assert [m["content"] for m in ours.get_chat_history("s")] == ["hand-made spill", "next"]
    assert sorted(p.name for p in our_spill.iterdir()) == ["other.1.2.deadbeef.json"]


def test_read_side_effects_gives_praisonai_read_semantics(
    tmp_path: Path, isolated_home: Path
) -> None:
    """Default reads write nothing; read_side_effects=True folds spills and quarantines on read."""
    their_spill = isolated_home / ".praisonai" / "state" / "session_spill"
    payload = {
        "session_id": "s",
        "messages": [{"role": "user", "content": "spilled", "timestamp": 5.0, "metadata": {}}],
    }
    dirs = {}
    spills = {"theirs": their_spill}
    for name in ("theirs", "plain", "compat"):
        # ours laid out as <home>/sessions, so PraisonAI's owner-less spills are theirs
        d = tmp_path / name if name == "theirs" else tmp_path / name / "sessions"
        spill = spills.setdefault(name, tmp_path / name / "state" / "session_spill")
        d.mkdir(parents=True)
        (d / "bad.json").write_bytes(b"{not json")
        spill.mkdir(parents=True, exist_ok=True)
        (spill / f"s.1.1.0000000{len(name)}.json").write_text(json.dumps(payload))
        dirs[name] = d
    plain = DefaultSessionStore(str(dirs["plain"]), spill_dir=spills["plain"])
    before = sorted(p.name for p in dirs["plain"].iterdir())
    assert plain.get_chat_history("s") == [{"role": "user", "content": "spilled"}]
    assert plain.get_chat_history("bad") == []
    assert sorted(p.name for p in dirs["plain"].iterdir()) == before

    theirs = pstore.DefaultSessionStore(str(dirs["theirs"]))
    compat = DefaultSessionStore(
        str(dirs["compat"]), spill_dir=spills["compat"], read_side_effects=True
    )
    for store in (theirs, compat):
        assert store.get_chat_history("s") == [{"role": "user", "content": "spilled"}]
        assert store.get_chat_history("bad") == []
    assert session_files(dirs["compat"]) == session_files(dirs["theirs"])
    for d in (dirs["theirs"], dirs["compat"]):
        assert len(list(d.glob("bad.json.corrupt-*"))) == 1
        assert not (d / "bad.json").exists()
    assert not list(their_spill.glob("s.*.json"))
    assert not list(spills["compat"].glob("s.*.json"))
    assert len(list(spills["plain"].glob("s.*.json"))) == 1  # plain reads never fold


def test_session_data_methods_match(tmp_path: Path) -> None:
    raw = {
        "session_id": "x",
        "messages": [
            {"role": "user", "content": "a", "timestamp": 1.0, "metadata": {}},
            {
                "role": "assistant",
                "content": "",
                "timestamp": 2.0,
                "metadata": {},
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {
                "role": "tool",
                "content": "out",
                "timestamp": 3.0,
                "metadata": {},
                "tool_call_id": "c",
            },
            {"role": "assistant", "content": "done", "timestamp": 4.0, "metadata": {}},
        ],
        "last_compaction": {
            "summary": "S",
            "message_index": 2,
            "role": "system",
            "tokens_before": 1,
            "tokens_after": 1,
            "timestamp": 1.0,
            "metadata": {},
        },
    }
    theirs = pstore.SessionData.from_dict(json.loads(json.dumps(raw)))
    ours = SessionData.from_dict(json.loads(json.dumps(raw)))
    for n in (None, 1, 2, 3, 10):
        assert ours.get_chat_history(n) == theirs.get_chat_history(n)
        assert ours.get_working_history(n) == theirs.get_working_history(n)
    assert [m.to_llm_message() for m in ours.messages] == [
        m.to_llm_message() for m in theirs.messages
    ]
    assert ours.last_compaction is not None and theirs.last_compaction is not None
    assert ours.last_compaction.as_message() == theirs.last_compaction.as_message()
    ours.trim_messages(3)
    theirs.trim_messages(3)
    assert blank(ours.to_dict()) == blank(theirs.to_dict())


def test_export_all_of_unreadable_store_raises_oserror(tmp_path: Path) -> None:
    for d, store_cls in (
        (tmp_path / "t", pstore.DefaultSessionStore),
        (tmp_path / "o", DefaultSessionStore),
    ):
        store = store_cls(str(d))
        store.add_message("ok", "user", "x")
        (d / "broken.json").write_bytes(b"{")
        with pytest.raises(OSError):
            store.export_all()
    shutil.rmtree(tmp_path)


def test_new_methods_survive_hostile_files(tmp_path: Path) -> None:
    """Every new read and lookup skips or copes with each hostile file; none raises."""
    from tests import hostile

    store_dir = tmp_path / "s"
    store_dir.mkdir()
    kinds = hostile.write_all(store_dir)
    good = hostile.write_good(store_dir)
    (store_dir / "broken.json").write_bytes(b"{nope")
    before = {p.name: p.read_bytes() for p in store_dir.iterdir()}
    store = DefaultSessionStore(store_dir)
    rows = store.list_sessions(limit=None)
    assert {r["session_id"] for r in rows} >= set(good)
    assert all({"agent_key", "total_tokens", "cost"} <= set(r) for r in rows)
    assert store.list_sessions_by_agent("nobody") == []
    assert store.get_by_gateway_session("nobody") is None
    assert store.list_sessions_by_gateway_agent("nobody") == []
    for sid in [*kinds.values(), *good, "broken"]:
        store.get_working_history(sid)
        store.get_session_model(sid)
        store.get_session_reasoning_effort(sid)
        store.get_runtime_state(sid, "native")
        assert isinstance(store.export_session(sid)["sessions"], list)
    assert store.export_session("broken") == {"version": 1, "sessions": []}
    assert {p.name: p.read_bytes() for p in store_dir.iterdir()} == before, "reads wrote"
    with pytest.raises(OSError):
        store.export_all()
