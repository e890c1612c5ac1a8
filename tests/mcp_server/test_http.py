"""``session-browser mcp --http HOST:PORT``: the same tools over streamable HTTP, with a bearer
token when one is set, and no bind beyond this machine without one."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from session_browser.core.store import DefaultSessionStore
from tests.mcp_server.test_server import ROOT, answer, ids

TOKEN = "s3cret-token-for-the-test"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(store: Path, where: str, token: str | None) -> subprocess.Popen[bytes]:
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    env.pop("SESSION_BROWSER_MCP_TOKEN", None)
    if token:
        env["SESSION_BROWSER_MCP_TOKEN"] = token
    return subprocess.Popen(
        [sys.executable, "-m", "session_browser", "--store", str(store), "mcp", "--http", where],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def wait_listening(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None, proc.communicate()
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, "the server never listened"
            time.sleep(0.05)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    sessions = tmp_path / "sessions"
    DefaultSessionStore(sessions).add_user_message("h-1", "the ibis dashboard is slow")
    return sessions


def test_over_http_with_a_token(store: Path) -> None:
    port = free_port()
    proc = start(store, str(port), TOKEN)  # a port alone: on 127.0.0.1
    try:
        wait_listening(port, proc)
        url = f"http://127.0.0.1:{port}/mcp"

        async def body() -> None:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with (
                httpx2.AsyncClient(headers=headers) as client,
                streamable_http_client(url, http_client=client) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                tools = {t.name for t in (await session.list_tools()).tools}
                assert tools == {"search_sessions", "read_session", "recent_sessions"}
                found = await answer(session, "search_sessions", query="ibis dashboard")
                assert ids(found) == ["h-1"]
            async with httpx2.AsyncClient() as client:
                for given in ({}, {"Authorization": "Bearer wrong"}):
                    res = await client.post(url, json={}, headers=given)
                    assert res.status_code == 401

        anyio.run(body)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_bind_beyond_this_machine_needs_a_token(store: Path) -> None:
    proc = start(store, f"0.0.0.0:{free_port()}", None)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and out == b""
    assert err.count(b"\n") == 1 and b"SESSION_BROWSER_MCP_TOKEN" in err
    proc = start(store, "127.0.0.1:notaport", None)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and err.count(b"\n") == 1 and b"[HOST:]PORT" in err
