"""``session-browser forget``: erase a session or a text from every copy we keep, and keep it
out (dry run by default)."""

from __future__ import annotations

import sqlite3

import click

from session_browser.core.forget import deny
from session_browser.core.forget.record import read_log, record
from session_browser.core.text import printable

from .common import echo_json, fail, json_option
from .team_cmds import team_url


def _say(line: str) -> None:
    click.echo(printable(line, one_line=True))


@click.command()
@click.argument("session_ids", nargs=-1)
@click.option(
    "--text",
    "--secret",
    "text",
    metavar="TEXT",
    default=None,
    help="Forget every session (and vault version) holding TEXT, wherever we keep it.",
)
@click.option(
    "--redact",
    is_flag=True,
    help="With --text: keep those sessions, with TEXT replaced by [REDACTED:forgotten].",
)
@click.option("--yes", is_flag=True, help="Erase (without it: only say what would go where).")
@click.option(
    "--delete-file",
    is_flag=True,
    help="Also delete the session's own file (PraisonAI stores only; Claude Code, Codex and "
    "Pi files are read-only to us and are never deleted).",
)
@click.option(
    "--index",
    "url",
    metavar="URL",
    default=None,
    help="The team index to erase from too (default: --index, SESSION_BROWSER_INDEX_URL or "
    "the config file's index_url, when set).",
)
@click.option("--list", "show_list", is_flag=True, help="Show what is denied (ids and when).")
@click.option("--undo-deny", metavar="ID", default=None, help="Take ID off the denylist.")
@click.option("--log", "show_log", is_flag=True, help="Show the forget log.")
@json_option
@click.pass_context
def forget(
    ctx: click.Context,
    session_ids: tuple[str, ...],
    text: str | None,
    redact: bool,
    yes: bool,
    delete_file: bool,
    url: str | None,
    show_list: bool,
    undo_deny: str | None,
    show_log: bool,
    as_json: bool,
) -> None:
    """Erase sessions (by id) or a text from the index, the vault, our trash and undo
    journal, the history, saved searches and the team index; dry run unless --yes.

    What is forgotten stays out: the next index update, vault keep and push leave it out
    while the agent's own file still holds it (see --list, --undo-deny). Exports written
    elsewhere are not ours: they are not touched."""
    if show_list or undo_deny is not None or show_log:
        if session_ids or text is not None:
            fail("--list, --undo-deny and --log take no session id or --text")
        _denylist(show_list, undo_deny, show_log, as_json)
        return
    from session_browser.core.forget.plan import ForgetError, carry_out, plan, scrub_all
    from session_browser.core.vault.errors import VaultError

    try:
        the_plan = plan(
            list(session_ids),
            text=text,
            redact=redact,
            team_url=team_url(ctx, url),
            delete_file=delete_file,
        )
    except ForgetError as exc:
        fail(str(exc))
    if the_plan.refused:  # nothing is erased when part of what was asked cannot be done
        for why in the_plan.refused[1:]:
            click.echo(f"session-browser: refused: {printable(why, one_line=True)}", err=True)
        fail(f"refused: {the_plan.refused[0]}; nothing was erased")
    if the_plan.empty:
        if as_json:
            echo_json({"dry_run": not yes, "erase": []})
        else:
            _say("nothing we keep holds that" + ("" if text is None else " text"))
        if yes:  # still denied (whatever holds it later stays out) and scrubbed
            if text is not None:
                deny.deny_text(text, redact=redact)
            else:
                deny.deny_sessions(list(session_ids))
            for path in scrub_all():
                _say(f"index {path} is open in another process: not vacuumed yet")
            record(
                what="session" if text is None else "text",
                session_ids=list(session_ids),
                stores=[],
                mode="redact" if redact else "forget",
            )
        return
    if not yes:
        if as_json:
            echo_json({"dry_run": True, "erase": the_plan.lines()})
            return
        _say("dry run: would erase" + (" (redact the text in)" if redact else "") + ":")
        for line in the_plan.lines():
            _say(f"  {line}")
        _say("run again with --yes to erase; exports you wrote elsewhere are not ours to erase")
        return
    try:
        done = carry_out(the_plan)
    except (sqlite3.Error, VaultError) as exc:
        fail(f"forget stopped: {exc}; what was erased stays erased: run it again")
    if as_json:
        echo_json({"dry_run": False, **done.as_dict()})
    else:
        for line in done.lines:
            _say(f"erased: {line}")
        _say(f"denied: {', '.join(done.denied) or 'already denied'} (forget --list)")


def _denylist(show_list: bool, undo_deny: str | None, show_log: bool, as_json: bool) -> None:
    try:
        if undo_deny is not None:
            entry = deny.undo_deny(undo_deny)
            if entry is None:
                fail(f"no denylist entry {undo_deny!r} (see forget --list)")
            from session_browser.core.index.forget import readmit
            from session_browser.core.index.parsing import FORGOTTEN

            readmit(FORGOTTEN)
            if as_json:
                echo_json({"undone": entry.id})
            else:
                _say(f"{entry.id} is off the denylist: the next index update takes it back in")
        if show_list:
            entries = deny.load().entries
            if as_json:
                echo_json(
                    {
                        "denied": [
                            {
                                "id": e.id,
                                "kind": e.kind,
                                "at": e.at,
                                "session_id": e.session,
                                "redact": e.redact,
                            }
                            for e in entries
                        ]
                    }
                )
            else:
                for e in entries:
                    what = f"session {e.session}" if e.kind == "session" else "a text (hash only)"
                    how = " (redacted)" if e.redact else ""
                    _say(f"{e.id}  {e.at}  {what}{how}")
                if not entries:
                    _say("nothing is denied")
    except (OSError, ValueError) as exc:
        fail(f"the denylist cannot be read: {exc}")
    if show_log:
        entries_log = read_log()
        if as_json:
            echo_json({"log": entries_log})
            return
        for item in entries_log:
            ids = ", ".join(str(s) for s in item.get("session_ids") or []) or "-"
            stores = "; ".join(str(s) for s in item.get("stores") or []) or "-"
            _say(f"{item.get('at')}  {item.get('what')} {item.get('mode')}  {ids}  in: {stores}")
        if not entries_log:
            _say("nothing was forgotten")
