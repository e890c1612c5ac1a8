"""``session-browser --index URL mcp``: the MCP tools answer from the team index."""

from __future__ import annotations

from pathlib import Path

import anyio

from session_browser.core.pgindex import push_stores
from session_browser.core.sources import SOURCES
from session_browser.core.store import DefaultSessionStore
from tests.mcp_server.test_server import answer, call, connect, ids, server


def test_the_tools_read_the_team_index(tmp_path: Path, pg_url: str) -> None:
    sessions = tmp_path / "sessions"
    store = DefaultSessionStore(sessions)
    store.add_user_message("team-1", "the heron rollout waits for the audit")
    store.add_message("team-1", "assistant", "The heron rollout is scheduled after it.")
    push_stores(pg_url, [(SOURCES["praisonai"].source(sessions), "praisonai")], machine="m1")

    async def body() -> None:
        async with connect(server(["--index", pg_url])) as session:
            found = await answer(session, "search_sessions", query="heron rollout")
            assert ids(found) == ["team-1"] and "m1" in found["results"][0]["store"]
            page = await answer(session, "read_session", session_id="team-1", start=0)
            assert [m["index"] for m in page["messages"]] == [0, 1]
            recent = await answer(session, "recent_sessions")
            assert ids(recent) == ["team-1"]
            error, text = await call(session, "read_session", session_id="nope")
            assert error and "unknown session_id" in text

    anyio.run(body)
