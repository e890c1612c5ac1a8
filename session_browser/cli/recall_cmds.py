"""``search``, ``show`` and ``recent``: recall from the command line."""

from __future__ import annotations

import shlex
from datetime import UTC, datetime
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from session_browser.core import recall
from session_browser.core.compat import CompatReads
from session_browser.core.explaining import explain_lines
from session_browser.core.files import SessionFileError
from session_browser.core.model import JSONDict, SessionData, SessionHit, content_text
from session_browser.core.multi import RecallStore, resume_of
from session_browser.core.pgindex.engine import origin_label
from session_browser.core.pgindex.store import CopyNotChosen, PgIndexStore
from session_browser.core.resume_line import ResumeLine, ResumeRefused
from session_browser.core.text import printable, shown_id

from .common import (
    console,
    echo_json,
    fail,
    group_from,
    index_option,
    json_option,
    mode_option,
    os_error_text,
    safe,
    stdout_is_terminal,
    store_option,
    use_error_status,
    use_mode,
    when_text,
)

# ``show`` prints at most this much of one message unless --full: wrapping a many-megabyte
# message for the terminal is slow (quadratic in Rich) and nobody reads it there.
SHOW_MAX_CHARS = 20_000


def _cut_body(text: str, full: bool) -> str:
    if full or len(text) <= SHOW_MAX_CHARS:
        return text
    more = len(text) - SHOW_MAX_CHARS
    return f"{text[:SHOW_MAX_CHARS]}… [{more:,} more characters; --full shows all]"


def _message_line(
    msg: dict[str, object], *, mark: bool = False, body: bool = True, full: bool = False
) -> Text:
    """One message: a marked head line, then its text as written (line breaks kept).

    Long text is cut at :data:`SHOW_MAX_CHARS`, marked, unless ``full``; with
    ``body=False`` only the head line is built (the caller writes the body itself).
    """
    line = Text()
    line.append("▶ " if mark else "  ", style="bold yellow")
    line.append(f"#{msg.get('index')} ", style="dim")
    line.append_text(safe(msg.get("role", ""), style="bold cyan"))
    if msg.get("archived"):
        line.append(" [archived]", style="magenta")
    line.append(": ")
    if body:
        text = _cut_body(content_text(msg.get("content")).rstrip("\n"), full)
        line.append_text(safe(text, one_line=False))
    return line


def _print_hit(n: int, hit: SessionHit, *, origin: bool = False, explain: bool = False) -> None:
    out = console()
    head = Text()
    head.append(f"{n}. ", style="bold")
    head.append_text(safe(hit.display_title, style="bold"))
    head.append(f"  score {hit.score:g}", style="green")
    head.append(f"  {when_text(hit.when)}", style="dim")
    badges = [printable(b, one_line=True) for b in hit.badges()]
    if badges:
        head.append("  [" + ", ".join(badges) + "]", style="magenta")
    out.print(head, overflow="fold")
    idline = Text("   id: ", style="dim")
    idline.append_text(safe(hit.session_id))
    idline.append(f"  anchor #{hit.anchor_index}", style="dim")
    if origin and hit.store:  # the team index: the user@machine that pushed it
        idline.append("  from ", style="dim")
        idline.append_text(safe(hit.store))
    out.print(idline, overflow="fold")
    out.print(Text("   ") + safe(hit.snippet), overflow="ellipsis", crop=True)
    if explain:
        for line in explain_lines(hit):
            out.print(Text("   ") + safe(line), overflow="fold")
    out.print()


# ``search``'s exit statuses besides 0, as grep's: nothing matched, and an error.
SEARCH_NO_MATCH_STATUS = 1
SEARCH_ERROR_STATUS = 2

LIMIT_HELP = "How many sessions to list at most."
WINDOW_HELP = "Messages to show on each side of the anchor."


@click.command()
@click.argument("words", nargs=-1, required=True, metavar="QUERY...")
@click.option("--limit", default=5, show_default=True, type=click.IntRange(min=1), help=LIMIT_HELP)
@click.option(
    "--window", default=5, show_default=True, type=click.IntRange(min=0), help=WINDOW_HELP
)
@click.option(
    "--ranking",
    type=click.Choice(["relevance", "classic"]),
    default=None,
    help="relevance (BM25, phrase and proximity boosts; the default with the index) or "
    "classic (the documented substring heuristic; the default with --no-index).",
)
@click.option(
    "--explain",
    is_flag=True,
    help="Under each hit, why it scored so: the factors and how they make its score.",
)
@mode_option
@index_option
@store_option
@json_option
@click.pass_context
def search(
    ctx: click.Context,
    words: tuple[str, ...],
    limit: int,
    window: int,
    ranking: str | None,
    explain: bool,
    mode: str | None,
    no_index: bool,
    stores: tuple[str, ...],
    as_json: bool,
) -> None:
    """Search every session (archived and active turns) for QUERY.

    The words of QUERY need no quotes: 'search billing migration' searches for
    "billing migration".

    Exit status (as grep's): 0 when a session matches, 1 when none does (--json still
    prints its answer), 2 on an error.
    """
    use_error_status(SEARCH_ERROR_STATUS)
    use_mode(mode)
    query = " ".join(words)
    if not query.strip():
        fail("the query is empty")
    group = group_from(ctx, stores, indexed=not no_index)
    if no_index and ranking == "relevance":
        fail("relevance ranking needs the index (drop --no-index)")
    result = group.search_ex(query, limit=limit, window=window, ranking=ranking)
    if result.error:
        fail(result.error)
    for warning in result.warnings:
        click.echo(f"session-browser: {printable(warning, one_line=True)}", err=True)
    hits = result.hits
    if as_json:
        echo_json(
            {
                "query": query,
                "total_found": len(hits),
                "matched_sessions": result.matched_sessions,
                "matched_exact": result.matched_exact,
                "ranking": result.ranking,
                "mode": result.mode,
                "fuzzy": result.fuzzy,
                "results": [h.to_json() for h in hits],
            }
        )
    elif not hits:
        console().print(
            Text("No session matches ") + safe(query) + Text(f" (searched {group.label}).")
        )
    else:
        origin = any(isinstance(s, PgIndexStore) for s in group.stores)
        for n, hit in enumerate(hits, 1):
            _print_hit(n, hit, origin=origin, explain=explain)
    if not hits:
        ctx.exit(SEARCH_NO_MATCH_STATUS)


@click.command()
@click.argument("session_id")
@click.option(
    "--around",
    type=click.IntRange(min=0),
    default=None,
    help="Index of the message to centre on (as search reports it; past the last message "
    "is an error). Default: the latest.",
)
@click.option(
    "--window", default=5, show_default=True, type=click.IntRange(min=0), help=WINDOW_HELP
)
@click.option(
    "--full",
    is_flag=True,
    help=f"Print long messages whole (else cut at {SHOW_MAX_CHARS:,} characters, marked).",
)
@click.option(
    "--version",
    "number",
    type=click.IntRange(min=1),
    default=None,
    help="Read version N the vault keeps (see 'vault log'); a deleted session's latest "
    "version is read from the vault without it.",
)
@click.option(
    "--machine",
    default=None,
    metavar="NAME",
    help="On the team index: read the session pushed from machine NAME (or USER@NAME), "
    "for an id pushed from several.",
)
@store_option
@json_option
@click.pass_context
def show(
    ctx: click.Context,
    session_id: str,
    around: int | None,
    window: int,
    full: bool,
    number: int | None,
    machine: str | None,
    stores: tuple[str, ...],
    as_json: bool,
) -> None:
    """Show the messages of SESSION_ID around a message (the latest by default).

    On the team index, a session id pushed from several machines (or users) is several
    sessions: name one with --machine.
    """
    if not session_id:
        fail("the session id is empty")
    if machine is not None and number is not None:
        fail("--machine reads the team index, --version the vault: give one of them")
    kept: str | None = None
    origin: str | None = None
    store: RecallStore | None = None
    if number is None:
        group = group_from(ctx, stores)
        store = group.store_of(session_id)
        if isinstance(store, PgIndexStore):
            origin = _choose_copy(store, session_id, machine)
        elif machine is not None:
            if store is None:
                fail(f"unknown session id: {shown_id(session_id)}")
            fail("--machine chooses among the team index's sessions (--index URL)")
    if store is None:
        data, kept = _from_vault(session_id, number)
    else:
        data = _read_session(store, session_id)
    projection = recall.project(data)
    if around is not None and around >= len(projection):
        # An error, not the nearest message: a script that asks for a message search named
        # must not get another one (the session was rewritten or shortened since).
        fail(f"message #{around} does not exist; {_messages_text(len(projection))}")
    anchor = recall.parse_anchor(around, len(projection))
    messages = recall.window_slice(projection, anchor, window)
    # A kept copy of a deleted session is not offered: its agent no longer has it.
    meta = data.get("metadata")
    resume = None
    if store is not None:
        resume = resume_of(store, session_id, meta if isinstance(meta, dict) else {})
    if as_json:
        payload: JSONDict = {"session_id": session_id, "around": around, "messages": messages}
        if origin:
            payload["from"] = origin
        if kept:
            payload["kept"] = kept
        if isinstance(resume, ResumeLine):
            payload["resume"] = resume.line
        elif isinstance(resume, ResumeRefused):
            payload["resume_refused"] = resume.reason
        echo_json(payload)
        return
    out = console()
    archived = sum(1 for m in projection if m.get("archived"))
    head = safe(recall.session_title(data, projection), style="bold")
    head.append("  id: ", style="dim")
    head.append_text(safe(session_id))
    head.append(f"  {len(projection) - archived} messages, {archived} archived", style="dim")
    source = store.source_kind if store is not None else "praisonai"
    if source != "praisonai":
        head.append(f"  [{printable(str(source), one_line=True)}]", style="magenta")
    if kept:
        head.append(f"  [{printable(kept, one_line=True)}]", style="magenta")
    if origin:
        head.append("  from ", style="dim")
        head.append_text(safe(origin))
    out.print(head, overflow="fold")
    if resume is not None:
        line = Text("resume: ", style="dim")
        if isinstance(resume, ResumeLine):
            line.append_text(safe(resume.line))
        else:
            line.append_text(safe(f"not offered: {resume.reason}"))
        out.print(line, soft_wrap=True)  # one line: the terminal wraps it, a copy stays whole
    for msg in messages:
        mark = msg.get("index") == anchor
        text = content_text(msg.get("content")).rstrip("\n")
        if len(text) <= SHOW_MAX_CHARS or not full:
            out.print(_message_line(msg, mark=mark, full=full), overflow="fold")
            continue
        # Whole and long: the terminal wraps it; Rich's fold would take minutes.
        out.print(_message_line(msg, mark=mark, body=False), end="")
        out.file.flush()
        click.echo(printable(text))


def _choose_copy(store: PgIndexStore, session_id: str, machine: str | None) -> str:
    """The ``user@machine`` of the team index's copy of ``session_id`` that ``show`` reads
    (the only one, or the one ``machine`` names); one clear error otherwise."""
    try:
        return origin_label(*store.choose(session_id, machine))
    except CopyNotChosen as exc:
        shown = shown_id(session_id)
        listed = printable(", ".join(exc.matching or exc.held), one_line=True)
        named = printable(str(machine), one_line=True)
        if exc.matching:
            where = "machines" if machine is None else f"users of {named}"
            fail(
                f"session {shown} is on the team index from {len(exc.matching)} {where} "
                f"({listed}): choose one with "
                f"show {shlex.quote(printable(session_id, one_line=True))} --machine NAME "
                "(or USER@NAME)"
            )
        if not exc.held:
            fail(f"unknown session id: {shown}")
        fail(f"session {shown} is not on the team index from {named} (it is from {listed})")


def _messages_text(count: int) -> str:
    """``the session has 7 messages (#0 to #6)``."""
    if count == 0:
        return "the session has no messages"
    if count == 1:
        return "the session has 1 message (#0)"
    return f"the session has {count} messages (#0 to #{count - 1})"


def _from_vault(session_id: str, number: int | None) -> tuple[JSONDict, str]:
    """Version ``number`` (None: the latest) of a session from the vault, and what it is."""
    from session_browser.core.vault import VaultError
    from session_browser.core.vault.reading import load_session

    try:
        data, version, n = load_session(session_id, number)
    except VaultError as exc:
        if number is None and "keeps no version" in str(exc):
            fail(f"unknown session id: {shown_id(session_id)}")
        fail(str(exc))
    except OSError as exc:
        fail(os_error_text(exc, "read the vault"))
    if data is None:
        fail(f"version {n} of {shown_id(session_id)} cannot be read as a session")
    seen = when_text(datetime.fromtimestamp(version.seen, UTC).isoformat(), relative=False)
    what = f"version {n}, kept {seen}"
    if version.gone_at is not None:
        day = datetime.fromtimestamp(version.gone_at).astimezone().strftime("%Y-%m-%d")
        what += f", deleted from {version.path} on {day}"
    return data, what


def _read_session(store: Any, session_id: str) -> JSONDict:
    """The stored dict of a session; one clear error when its file cannot be read."""
    if isinstance(store, CompatReads):  # the JSON store's reads (an index's too)
        try:
            data = store.read_raw(session_id)
        except SessionFileError as exc:
            fail(f"cannot read session {shown_id(session_id)}: {exc.path.name}: {exc.reason}")
        except OSError as exc:
            fail(f"cannot read session {shown_id(session_id)}: {os_error_text(exc)}")
        if data is None:
            fail(f"unknown session id: {shown_id(session_id)}")
        return data
    session: SessionData = store.get_session(session_id)
    return session.to_dict()


@click.command()
@click.option("--limit", default=10, show_default=True, type=click.IntRange(min=1), help=LIMIT_HELP)
@index_option
@store_option
@json_option
@click.pass_context
def recent(
    ctx: click.Context, limit: int, no_index: bool, stores: tuple[str, ...], as_json: bool
) -> None:
    """List the most recently updated sessions."""
    group = group_from(ctx, stores, indexed=not no_index)
    rows = group.recent(limit=limit)
    if as_json:
        echo_json({"total_found": len(rows), "results": [s.to_json() for s in rows]})
        return
    if not rows:
        console().print(f"No sessions in {group.label}.")
        return
    out = console()
    # The title gets what the id leaves (ids fold onto more lines on a narrow terminal).
    # the team index: under each id the user@machine it comes from (an id from two machines
    # is two sessions)
    origin = any(isinstance(s, PgIndexStore) for s in group.stores)
    id_width = min(
        40,
        max(
            len(printable(text, one_line=True))
            for s in rows
            for text in ((s.session_id, s.store) if origin else (s.session_id,))
        ),
    )
    counts = max(len(str(s.message_count)) for s in rows) + 6
    # Piped (no terminal width to fit): every title whole.
    title_width = max(20, min(60, out.width - (16 + counts + id_width + 14)))
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("updated", no_wrap=True, width=16)
    table.add_column(
        "title",
        overflow="ellipsis",
        no_wrap=True,
        max_width=title_width if stdout_is_terminal() else None,
    )
    table.add_column("msgs", justify="right", no_wrap=True)
    table.add_column("arch.", justify="right", no_wrap=True)
    table.add_column("id", overflow="fold", min_width=12)
    for s in rows:
        title = safe(s.display_title)
        if s.source != "praisonai":
            title = Text(f"[{printable(s.source, one_line=True)}] ", style="magenta") + title
        if s.kept:  # first, so a long title never hides it (--json has where it was kept)
            title = Text("[deleted] ", style="magenta") + title
        if s.automated:
            title.append(" [automated]", style="magenta")
        ident = safe(s.session_id)
        if origin:
            ident.append("\n")
            ident.append_text(safe(s.store, style="dim"))
        table.add_row(
            when_text(s.when, relative=False),
            title,
            str(s.message_count),
            str(s.archived_count),
            ident,
        )
    out.print(table)
