"""``search``, ``show`` and ``recent``: recall from the command line."""

from __future__ import annotations

import click
from rich.table import Table
from rich.text import Text

from session_browser.core import recall
from session_browser.core.model import SessionHit
from session_browser.core.text import printable

from .common import (
    OneLineCommand,
    console,
    echo_json,
    fail,
    group_from,
    json_option,
    safe,
    store_option,
    when_text,
)


def _message_line(msg: dict[str, object], *, mark: bool = False) -> Text:
    line = Text()
    line.append("▶ " if mark else "  ", style="bold yellow")
    line.append(f"#{msg.get('index')} ", style="dim")
    line.append(str(msg.get("role", "")), style="bold cyan")
    if msg.get("archived"):
        line.append(" [archived]", style="magenta")
    line.append(": ")
    line.append_text(safe(msg.get("content", ""), one_line=True))
    return line


def _print_hit(n: int, hit: SessionHit) -> None:
    out = console()
    head = Text()
    head.append(f"{n}. ", style="bold")
    head.append_text(safe(hit.title, style="bold"))
    head.append(f"  score {hit.score:g}", style="green")
    head.append(f"  {when_text(hit.when)}", style="dim")
    badges = []
    if hit.archived:
        badges.append("archived hit")
    if hit.automated:
        badges.append("automated")
    if hit.folded:
        badges.append(f"{len(hit.folded)} continuation(s) folded")
    if hit.source != "praisonai":
        badges.append(printable(hit.source, one_line=True))
    if badges:
        head.append("  [" + ", ".join(badges) + "]", style="magenta")
    out.print(head, overflow="fold")
    idline = Text("   id: ", style="dim")
    idline.append_text(safe(hit.session_id))
    idline.append(f"  anchor #{hit.anchor_index}", style="dim")
    out.print(idline, overflow="fold")
    out.print(Text("   ") + safe(hit.snippet), overflow="ellipsis", crop=True)
    out.print()


@click.command(cls=OneLineCommand)
@click.argument("query")
@click.option("--limit", default=5, show_default=True, type=click.IntRange(min=1))
@click.option("--window", default=5, show_default=True, type=click.IntRange(min=0))
@store_option
@json_option
@click.pass_context
def search(
    ctx: click.Context, query: str, limit: int, window: int, stores: tuple[str, ...], as_json: bool
) -> None:
    """Search every session (archived and active turns) for QUERY."""
    if not query.strip():
        fail("the query is empty")
    group = group_from(ctx, stores)
    hits = group.search(query, limit=limit, window=window)
    if as_json:
        echo_json(
            {"query": query, "total_found": len(hits), "results": [h.to_json() for h in hits]}
        )
        return
    if not hits:
        console().print(
            Text("No session matches ") + safe(query) + Text(f" (searched {group.label}).")
        )
        return
    for n, hit in enumerate(hits, 1):
        _print_hit(n, hit)


@click.command(cls=OneLineCommand)
@click.argument("session_id")
@click.option("--around", type=click.IntRange(min=0), default=None, help="Anchor message index.")
@click.option("--window", default=5, show_default=True, type=click.IntRange(min=0))
@store_option
@json_option
@click.pass_context
def show(
    ctx: click.Context,
    session_id: str,
    around: int | None,
    window: int,
    stores: tuple[str, ...],
    as_json: bool,
) -> None:
    """Show the messages of SESSION_ID around a message (the latest by default)."""
    group = group_from(ctx, stores)
    if not group.session_exists(session_id):
        fail(f"unknown session id: {session_id}")
    messages = group.window(session_id, around, window=window)
    if as_json:
        echo_json({"session_id": session_id, "around": around, "messages": messages})
        return
    out = console()
    session = group.get_session(session_id)
    head = safe(recall.session_title(session.to_dict()), style="bold")
    head.append("  id: ", style="dim")
    head.append_text(safe(session_id))
    head.append(
        f"  {len(session.messages)} messages, {len(session.archived_messages)} archived",
        style="dim",
    )
    if session.source_kind != "praisonai":
        head.append(f"  [{printable(session.source_kind, one_line=True)}]", style="magenta")
    out.print(head, overflow="fold")
    anchor = around if around is not None else (messages[-1]["index"] if messages else None)
    for msg in messages:
        out.print(_message_line(msg, mark=msg.get("index") == anchor), overflow="fold")


@click.command(cls=OneLineCommand)
@click.option("--limit", default=10, show_default=True, type=click.IntRange(min=1))
@store_option
@json_option
@click.pass_context
def recent(ctx: click.Context, limit: int, stores: tuple[str, ...], as_json: bool) -> None:
    """List the most recently updated sessions."""
    group = group_from(ctx, stores)
    rows = group.recent(limit=limit)
    if as_json:
        echo_json({"total_found": len(rows), "results": [s.to_json() for s in rows]})
        return
    if not rows:
        console().print(f"No sessions in {group.label}.")
        return
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("when")
    table.add_column("title", overflow="ellipsis", max_width=50, no_wrap=True)
    table.add_column("msgs", justify="right")
    table.add_column("archived", justify="right")
    table.add_column("id", overflow="fold")
    for s in rows:
        title = safe(s.title)
        if s.source != "praisonai":
            title = Text(f"[{printable(s.source, one_line=True)}] ", style="magenta") + title
        if s.automated:
            title.append(" [automated]", style="magenta")
        table.add_row(
            when_text(s.when),
            title,
            str(s.message_count),
            str(s.archived_count),
            safe(s.session_id),
        )
    console().print(table)
