"""praisonaiagents' private hook points on our stores, used as its tests and code use them.

``_atomic_write_json`` patched to fail makes the next write fail as on praisonaiagents
(spill, ``SESSION_PERSIST_FAILED``, re-ingest on the next write); ``_session_title`` is
its rule; ``_save_session`` stores its ``SessionData``; a corrupt file met on a read with
``read_side_effects=True`` is moved aside and reported with the session id.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest

from session_browser.core import DefaultSessionStore, SqliteSessionStore

os.environ.setdefault("DO_NOT_TRACK", "1")
pstore = pytest.importorskip("praisonaiagents.session.store")
registry_mod = pytest.importorskip("praisonaiagents.hooks.registry")
hook_types = pytest.importorskip("praisonaiagents.hooks.types")


@pytest.fixture
def persist_failed() -> Iterator[list[Any]]:
    """The SESSION_PERSIST_FAILED events fired while the test runs."""
    registry = registry_mod.get_default_registry()
    events: list[Any] = []

    def hook(event: Any) -> Any:
        events.append(event)
        return hook_types.HookResult.allow()

    hook_id = registry.register_function(hook_types.HookEvent.SESSION_PERSIST_FAILED, hook)
    try:
        yield events
    finally:
        registry.unregister(hook_id)


def test_patched_atomic_write_spills_fires_and_reingests(
    tmp_path: Path, persist_failed: list[Any]
) -> None:
    spill = tmp_path / "spill"
    store = DefaultSessionStore(tmp_path / "sessions", spill_dir=spill)
    assert store.add_user_message("s1", "first")
    with patch.object(store, "_atomic_write_json", return_value=False):
        assert store.add_user_message("s1", "lost turn") is False
    [spilled] = list(spill.iterdir())
    assert [m["content"] for m in json.loads(spilled.read_text())["messages"]] == ["lost turn"]
    [event] = persist_failed
    assert (event.session_id, event.content, event.spilled) == ("s1", "lost turn", True)
    assert store.add_user_message("s1", "next")  # the next write folds the spill in
    stored = json.loads((tmp_path / "sessions" / "s1.json").read_text())
    assert [m["content"] for m in stored["messages"]] == ["first", "lost turn", "next"]
    assert not list(spill.iterdir())


def test_session_title_is_the_peers(tmp_path: Path) -> None:
    cases: list[dict[str, Any]] = [
        {"session_id": "a", "metadata": {"title": "Named"}, "agent_name": "Agent"},
        {"session_id": "b", "agent_name": "Agent", "messages": [{"role": "user", "content": "q"}]},
        {"session_id": "c", "messages": [{"role": "user", "content": "  a\n b " + "x" * 90}]},
        {"session_id": "d", "messages": [{"role": "user", "content": ["list", "content"]}]},
        {"session_id": "e", "messages": [{"role": "assistant", "content": "only"}]},
        {"session_id": "f", "messages": [{"role": "user", "content": ""}, "junk"]},
    ]
    for data in cases:
        expected = pstore.DefaultSessionStore._session_title(data)
        assert DefaultSessionStore._session_title(data) == expected, data
        assert SqliteSessionStore._session_title(data) == expected, data


def test_save_and_load_session_take_the_peers_session_data(tmp_path: Path) -> None:
    store = DefaultSessionStore(tmp_path / "sessions")
    theirs = pstore.SessionData(session_id="p1", agent_name="Agent")
    theirs.messages.append(pstore.SessionMessage(role="user", content="hello"))
    assert store._save_session(theirs) is True
    loaded = store._load_session("p1")
    assert (loaded.agent_name, [m.content for m in loaded.messages]) == ("Agent", ["hello"])
    peer = pstore.DefaultSessionStore(session_dir=str(tmp_path / "sessions"))
    assert peer.get_chat_history("p1") == store.get_chat_history("p1")


def test_corrupt_file_on_read_is_quarantined_and_reported(
    tmp_path: Path, persist_failed: list[Any]
) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    bad = sessions / "bad.json"
    bad.write_bytes(b'{"session_id": "bad", "messages": [')
    # A plain store (the app's and the CLI's reads) never moves a user's file.
    assert DefaultSessionStore(sessions).get_chat_history("bad") == []
    assert bad.exists() and not persist_failed
    store = DefaultSessionStore(sessions, read_side_effects=True)
    assert store.get_chat_history("bad") == []
    assert not bad.exists()
    [moved] = [p for p in sessions.iterdir() if p.name.startswith("bad.json.corrupt-")]
    assert moved.read_bytes() == b'{"session_id": "bad", "messages": ['
    [event] = persist_failed
    assert event.session_id == "bad" and event.spill_path == str(moved)
    assert event.error.startswith("corrupt session file")


def test_ensure_backfilled_indexes_files_written_behind_its_back(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    with SqliteSessionStore(sessions, db_path=tmp_path / "i.sqlite3") as store:
        assert store.search("okapi") == []
        other = pstore.DefaultSessionStore(session_dir=str(sessions))
        other.add_user_message("late", "an okapi walked in")
        store._ensure_backfilled()
        assert [h.session_id for h in store.search("okapi")] == ["late"]


class _Mirror:
    def __init__(self) -> None:
        self.records: list[Any] = []

    def append(self, session_id: str, records: list[Any]) -> None:
        self.records.extend(records)


def test_impossible_dir_raises_and_leaves_no_thread(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    before = {t.ident for t in threading.enumerate()}
    for bad in (afile, afile / "sessions", afile / "a" / "b"):
        with pytest.raises(NotADirectoryError):
            DefaultSessionStore(bad, mirror=_Mirror())
        with pytest.raises(NotADirectoryError):
            SqliteSessionStore(bad, db_path=tmp_path / "i.sqlite3")
    assert {t.ident for t in threading.enumerate()} == before
    assert afile.read_text() == "x"
    # A dir that does not exist yet is fine, and is not created by constructing a store.
    DefaultSessionStore(tmp_path / "later" / "sessions")
    assert not (tmp_path / "later").exists()


def test_module_override_wins_over_praisonai_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from session_browser.core import store as our_module

    monkeypatch.setenv("PRAISONAI_HOME", str(tmp_path / "home"))
    assert DefaultSessionStore().session_dir == str(tmp_path / "home" / "sessions")
    for module in (pstore, our_module):
        module.DEFAULT_SESSION_DIR = str(tmp_path / "pinned")  # type: ignore[attr-defined]
        try:
            assert DefaultSessionStore().session_dir == str(tmp_path / "pinned")
        finally:
            del module.DEFAULT_SESSION_DIR  # type: ignore[attr-defined]
    assert DefaultSessionStore().session_dir == str(tmp_path / "home" / "sessions")


def test_the_class_tree_is_the_peers(tmp_path: Path) -> None:
    with SqliteSessionStore(tmp_path / "s", db_path=tmp_path / "i.sqlite3") as store:
        assert isinstance(store, DefaultSessionStore)
        assert isinstance(store.writer, DefaultSessionStore)
    assert issubclass(SqliteSessionStore, DefaultSessionStore)


def test_gateway_route_is_read_from_the_index_without_a_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions = tmp_path / "sessions"
    db = tmp_path / "i.sqlite3"
    with SqliteSessionStore(sessions, db_path=db) as store:
        store.add_user_message("s1", "hi")
        store.set_gateway_info("s1", gateway_session_id="gw-1", agent_id="a-1")
    # an index of the previous version held no routes: it is rebuilt, the route backfilled
    with sqlite3.connect(db) as old:
        old.execute("UPDATE sessions SET gateway = NULL")
        old.execute("PRAGMA user_version=8")
    with SqliteSessionStore(sessions, db_path=db) as store:
        scans: list[str] = []
        real_scan = SqliteSessionStore._scan

        def counted(self: Any, key: str, value: str) -> Any:
            scans.append(value)
            return real_scan(self, key, value)

        monkeypatch.setattr(SqliteSessionStore, "_scan", counted)
        found = store.get_by_gateway_session("gw-1")
        assert found is not None and found.session_id == "s1"
        assert scans == []  # the route, not a scan
        # A file that no longer names that gateway session is not returned from its route.
        plain = DefaultSessionStore(sessions)
        plain.set_gateway_info("s1", gateway_session_id="gw-2")
        assert store.get_by_gateway_session("gw-1") is None
        # A session the index has not seen yet is still found (by the scan).
        found = store.get_by_gateway_session("gw-2")
        assert found is not None and found.session_id == "s1"
