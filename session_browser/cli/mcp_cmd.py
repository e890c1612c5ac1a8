"""``mcp``: serve search, read and recent to an agent over the Model Context Protocol."""

from __future__ import annotations

import importlib.util

import click

from .common import fail, group_from, store_option


@click.command()
@store_option
@click.pass_context
def mcp(ctx: click.Context, stores: tuple[str, ...]) -> None:
    """Serve the tools search_sessions, read_session and recent_sessions over stdio (MCP).

    Reads the stores every command reads (--store, the defaults, or the team index with
    --index URL); writes nothing where sessions are kept. The caller's own live session
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
    from session_browser.mcp.server import serve

    group = group_from(ctx, stores, indexed=True)
    try:
        serve(group)
    finally:
        group.close()
