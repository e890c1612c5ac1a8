"""``mcp``: serve search, read and recent to an agent over the Model Context Protocol."""

from __future__ import annotations

import importlib.util
import os

import click

from .common import fail, group_from, store_option


@click.command()
@click.option(
    "--http",
    "http",
    default=None,
    metavar="[HOST:]PORT",
    help="Serve over streamable HTTP at http://HOST:PORT/mcp instead of stdio (HOST: "
    "127.0.0.1 unless given). A host beyond this machine is refused unless "
    "$SESSION_BROWSER_MCP_TOKEN is set; every request then needs it as a bearer token.",
)
@store_option
@click.pass_context
def mcp(ctx: click.Context, http: str | None, stores: tuple[str, ...]) -> None:
    """Serve the tools search_sessions, read_session and recent_sessions over MCP (stdio;
    streamable HTTP with --http).

    Reads the stores every command reads (--store, the defaults, or the team index with
    --index URL); writes nothing where sessions are kept. The index is brought up to date
    in the background: meanwhile (a first start on a large store) a call answers from what
    is indexed plus the newest files, and says how much it searched. The caller's own live session
    is left out of its results (named by CLAUDE_CODE_SESSION_ID or CODEX_THREAD_ID, else
    the sessions of the current dir updated in the last two minutes) unless a call asks
    for it. Add it to an agent with e.g. 'claude mcp add session-browser --
    session-browser mcp'.
    """
    if importlib.util.find_spec("mcp") is None:
        fail(
            "the MCP server needs the mcp package: "
            "pip install 'session-browser[mcp]' (or pip install mcp)"
        )
    from session_browser.mcp.server import TOKEN_ENV, BadBind, check_bind, serve, serve_http

    where = _host_port(http) if http is not None else None
    token = os.environ.get(TOKEN_ENV) or None
    if where is not None:
        try:
            check_bind(where[0], token)
        except BadBind as exc:
            fail(str(exc))
    # the index is built in the background: the first call answers from what is indexed
    # plus the newest files not indexed yet (and says how much was searched)
    group = group_from(ctx, stores, indexed=True, background=True)
    try:
        if where is None:
            serve(group)
        else:
            serve_http(group, *where, token)
    finally:
        group.close()


def _host_port(text: str) -> tuple[str, int]:
    """``HOST:PORT``, or ``PORT`` alone on this machine (127.0.0.1)."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]") if sep else "127.0.0.1"
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        fail(f"--http must be [HOST:]PORT (e.g. 8765 or 127.0.0.1:8765), not {text!r}")
    return host, int(port)
