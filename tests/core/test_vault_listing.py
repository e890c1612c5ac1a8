"""The session lists over rows the vault keeps: a session whose rewrite dropped turns is
listed once (as its file holds it now), a deleted one is listed once and marked, and the
counts count sessions, in the library and on the command line."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.index import SqliteSessionStore
from session_browser.core.sources import SOURCES
from tests.core.test_vault_feed import OTHER, SID, claude_dir


def truncated(sessions: Path) -> SqliteSessionStore:
    """Store over ``sessions``: s1 rewritten without its first turns (kept by the vault),
    and s2 untouched."""
    store = SqliteSessionStore(sessions, retention="truncate", max_messages=4)
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


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.stdout


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
    store = SOURCES["claude"].index(root)
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


def test_the_recent_command_lists_each_session_once_and_marks_the_deleted(
    tmp_path: Path,
) -> None:
    sessions = tmp_path / "sessions"
    truncated(sessions).close()
    code, out = run("recent", "--store", str(sessions), "--json")
    assert code == 0
    rows = json.loads(out)["results"]
    assert sorted(r["session_id"] for r in rows) == ["s1", "s2"]
    assert [r["kept"] for r in rows] == [None, None]
    code, out = run("recent", "--store", str(sessions))
    assert code == 0 and out.count(" s1") == 1 and "[deleted]" not in out
    code, out = run("show", "s1", "--store", str(sessions), "--json")
    assert code == 0 and "pelican" not in out and "filler turn 3" in out

    root = tmp_path / "projects"
    path, _t = claude_dir(root)
    store = f"claude:{root}"
    code, out = run("recent", "--store", store)
    assert code == 0 and "[deleted]" not in out
    path.unlink()
    code, out = run("recent", "--store", store)
    assert code == 0 and out.count("[deleted]") == 1
    [line] = [line for line in out.splitlines() if "[deleted]" in line]
    assert SID[:8] in line and OTHER[:8] not in line
    code, out = run("recent", "--store", store, "--json")
    kept = {r["session_id"]: r["kept"] for r in json.loads(out)["results"]}
    assert kept[OTHER] is None and kept[SID].startswith(f"deleted from {path} on ")
