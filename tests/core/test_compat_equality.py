"""Our library classes read what praisonaiagents 1.7.17 wrote and answer as it does.

The real ``praisonaiagents`` package writes a store (agent names, explicit titles, long and
multi-line first messages, an archived opener, sessions without a user message); its store
classes and ours then read that same directory, and ``search`` (every hit field, titles
included), ``list_sessions`` and ``get_session`` are compared value by value. The app's
title is a separate field (``display_title``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from session_browser.core import DefaultSessionStore, SqliteSessionStore

os.environ.setdefault("DO_NOT_TRACK", "1")
pstore = pytest.importorskip("praisonaiagents.session.store")
psqlite = pytest.importorskip("praisonaiagents.session.sqlite_store")

QUERIES = ["postgres", "disk usage", "deploy", "rotate", "nothing-matches-this", "the"]


def write_peer_store(directory: Path) -> None:
    """Sessions written by praisonaiagents' own store."""
    peer = pstore.DefaultSessionStore(session_dir=str(directory))
    peer.add_user_message("ops-1", "Check disk usage on the postgres host.")
    peer.add_assistant_message("ops-1", "The postgres volume is 91% full; the WAL grew.")
    peer.set_agent_info("ops-1", agent_name="DevOps Agent")
    peer.add_user_message("ops-2", "  Deploy   the\n new postgres\treplica " + "x" * 80)
    peer.add_assistant_message("ops-2", "Deployed; the replica follows the primary.")
    peer.add_user_message("named", "rotate the postgres credentials")
    peer.rename_session("named", "Credential rotation")
    peer.set_agent_info("named", agent_name="DevOps Agent")
    peer.add_assistant_message("quiet", "No user asked; the deploy ran on schedule.")
    peer.add_user_message("plain", "How do I rotate a PDF?")
    peer.add_assistant_message("plain", "Open it and rotate the page; the disk usage is fine.")
    for i in range(6):  # enough turns for bookends
        peer.add_user_message("long", f"question {i} about the deploy window")
        peer.add_assistant_message("long", f"answer {i}: the deploy window is at night")
    peer.close_mirror()


def hits(found: list[Any]) -> list[dict[str, Any]]:
    return [h.as_dict() for h in found]


@pytest.fixture
def peer_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "sessions"
    write_peer_store(directory)
    return directory


def test_titles_are_praisonaiagents_own(peer_dir: Path) -> None:
    peer = pstore.DefaultSessionStore(session_dir=str(peer_dir))
    ours = DefaultSessionStore(peer_dir)
    [theirs] = peer.search("disk usage postgres", limit=1)
    [hit] = ours.search("disk usage postgres", limit=1)
    assert theirs.title == hit.title == "DevOps Agent"
    # What the app shows is the first prompt, in its own field.
    assert hit.display_title == "Check disk usage on the postgres host."
    assert hit.to_json()["display_title"] == hit.display_title
    assert "display_title" not in hit.as_dict()


def test_json_store_answers_as_praisonaiagents(peer_dir: Path) -> None:
    peer = pstore.DefaultSessionStore(session_dir=str(peer_dir))
    ours = DefaultSessionStore(peer_dir)
    titles = set()
    for query in QUERIES:
        for limit, window in ((5, 5), (10, 1)):
            expected = hits(peer.search(query, limit=limit, window=window))
            assert hits(ours.search(query, limit=limit, window=window)) == expected, query
            titles |= {h["title"] for h in expected}
    # the rule's every branch is met: explicit, agent name, first message cut, id
    assert {"Credential rotation", "DevOps Agent", "quiet"} <= titles
    assert "Deploy the new postgres replica " + "x" * 28 in titles
    assert ours.list_sessions() == peer.list_sessions()
    assert ours.list_sessions(limit=2) == peer.list_sessions(limit=2)
    for sid in ("ops-1", "ops-2", "named", "quiet", "plain", "long"):
        assert ours.get_session(sid).to_dict() == peer.get_session(sid).to_dict(), sid
    clock = {"created_at", "updated_at"}  # a new session's: now, on each side
    mine, theirs = (
        {k: v for k, v in s.get_session("missing").to_dict().items() if k not in clock}
        for s in (ours, peer)
    )
    assert mine == theirs


def test_sqlite_store_answers_as_praisonaiagents(peer_dir: Path, tmp_path: Path) -> None:
    theirs_dir = tmp_path / "theirs"
    shutil.copytree(peer_dir, theirs_dir)
    peer = psqlite.SqliteSessionStore(session_dir=str(theirs_dir))
    with SqliteSessionStore(peer_dir, db_path=tmp_path / "ours.sqlite3") as ours:
        for query in QUERIES:
            expected = hits(peer.search(query, limit=5, window=5))
            got = hits(ours.search(query, limit=5, window=5, ranking="classic"))
            assert got == expected, query
        assert ours.list_sessions() == peer.list_sessions()
        assert ours.get_session("ops-1").to_dict() == peer.get_session("ops-1").to_dict()
