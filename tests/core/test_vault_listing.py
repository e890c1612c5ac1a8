"""The session lists over rows the vault keeps: a session whose rewrite dropped turns is
listed once (as its file holds it now), a deleted one is listed once and marked, and the
counts count sessions (the command line: tests/test_cli_vault.py)."""

from __future__ import annotations

import json
from pathlib import Path

from session_browser.core.index import SqliteSessionStore
from session_browser.core.open import index_store
from session_browser.core.sources import SOURCES
from tests.core.test_vault_feed import OTHER, SID, claude_dir


def truncated(sessions: Path) -> SqliteSessionStore:
    """Store over ``sessions``: s1 rewritten without its first turns (kept by the vault),
    and s2 untouched."""
    store = SqliteSessionStore(sessions, vault=True, retention="truncate", max_messages=4)
    store.add_user_message("s2", "the heron is fine")
    store.add_user_message("s1", "the pelican budget is forty")
    store.add_assistant_message("s1", "noted the pelican budget")
    for i in range(4):
        store.add_user_message("s1", f"filler turn {i}")
    store.reconcile()
    hits = store.search("pelican", limit=5)
    assert {h.session_id for h in hits} == {"s1"}
    assert all(h.kept is not None and "turns dropped" in h.kept for h in hits)  # not listed
    return store


def test_a_session_with_dropped_turns_is_listed_once_as_its_file_holds_it(
    tmp_path: Path,
) -> None:
    store = truncated(tmp_path / "sessions")
    try:
        for listed in (
            store.recent(limit=10),
            store.summaries(),
            store.browse(limit=10),
            store.browse(limit=10, sort="size"),
            store.browse(limit=10, text="s1"),
        ):
            ids = sorted(s.session_id for s in listed)
            assert ids in (["s1", "s2"], ["s1"]), ids
            assert all(s.kept is None for s in listed)
        [s1] = [s for s in store.recent(limit=10) if s.session_id == "s1"]
        assert s1.message_count == 4  # the file's, not the dropped turns'
        assert store.count() == 2 and store.count(text="s1") == 1
        assert store.status()["sessions"] == 2
        session = store.get_session("s1")
        assert len(session.messages) == 4
        assert "pelican" not in json.dumps(session.to_dict()["messages"])
    finally:
        store.close()


def test_a_deleted_session_is_listed_once_and_marked(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    path, _t = claude_dir(root)
    store = index_store(SOURCES["claude"], root, vault=True)
    try:
        assert all(s.kept is None for s in store.recent(limit=10))
        path.unlink()
        store.reconcile()
        listed = store.recent(limit=10)
        assert sorted(s.session_id for s in listed) == sorted([SID, OTHER])
        marks = {s.session_id: s.kept for s in listed}
        assert marks[OTHER] is None
        assert str(marks[SID]).startswith(f"deleted from {path} on ")
        assert [s.kept for s in store.browse(limit=10, text=SID[:8])] == [marks[SID]]
        assert store.count() == 2 and store.count(text=SID[:8]) == 1
        assert store.summaries()[0].to_json()["kept"] in (marks[SID], None)
    finally:
        store.close()


def test_a_truncated_then_deleted_session_is_listed_once_marked_deleted(
    tmp_path: Path,
) -> None:
    sessions = tmp_path / "sessions"
    store = truncated(sessions)
    try:
        (sessions / "s1.json").unlink()
        store.reconcile()
        listed = [s for s in store.recent(limit=10) if s.session_id == "s1"]
        assert len(listed) == 1
        assert str(listed[0].kept).startswith("deleted from ")
        assert store.count() == 2
    finally:
        store.close()
