"""``quarantine``: see what broke, how much can be saved, put it back, undo."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar, cast

import click
from rich.table import Table
from rich.text import Text

from session_browser.core import quarantine as q
from session_browser.core.actions.rescue import store_holding, writable_stores
from session_browser.core.files import dumps_session
from session_browser.core.store import DefaultSessionStore
from session_browser.core.text import human_size, printable, relative_age

from .common import (
    confirm,
    console,
    echo_json,
    fail,
    group_from,
    json_option,
    os_error_text,
    safe,
    store_option,
    write_output,
)

F = TypeVar("F", bound=Callable[..., Any])


def _stores(ctx: click.Context, stores: tuple[str, ...]) -> list[DefaultSessionStore]:
    return writable_stores(group_from(ctx, stores).stores)


def _item(ctx: click.Context, stores: tuple[str, ...], ref: str) -> q.QuarantineItem:
    try:
        return q.find_item(_stores(ctx, stores), ref)
    except q.QuarantineError as exc:
        fail(str(exc))


def _store_of(
    ctx: click.Context, stores: tuple[str, ...], item: q.QuarantineItem
) -> DefaultSessionStore:
    return store_holding(_stores(ctx, stores), item)


def action_options(func: F) -> F:
    func = click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")(
        func
    )
    func = click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")(func)
    return func


@click.group()
def quarantine() -> None:
    """Corrupt session files and spill files: list, inspect, salvage, put back, undo."""


@quarantine.command("list")
@store_option
@json_option
@click.pass_context
def list_(ctx: click.Context, stores: tuple[str, ...], as_json: bool) -> None:
    """List every quarantined (*.json.corrupt-*), spill and damaged live session file."""
    items = q.list_items(_stores(ctx, stores))
    if as_json:
        echo_json({"total": len(items), "items": [it.as_dict() for it in items]})
        return
    if not items:
        console().print("No quarantined, spill or damaged live files.")
        return
    table = Table(show_edge=False, pad_edge=False)
    for col in ("kind", "file", "size", "age", "session", "error", "done"):
        table.add_column(col, overflow="fold")
    for it in items:
        session = safe(it.session_id or "?")
        if it.id_source == "name":
            session.append(" (from name)", style="dim")
        if it.inner_id is not None:  # shown, never acted on: the name is the identity
            session.append(" ⚠ its bytes claim ", style="yellow")
            session.append_text(safe(it.inner_id, style="yellow"))
        if it.kind == q.KIND_LIVE:
            session.append(" live file, damaged", style="bold red")
        else:
            session.append(" live" if it.live_exists else " no live session", style="magenta")
        error = str(it.problem) if it.problem else "ok"
        if it.unusable:
            error = f"unusable: {it.unusable}" + ("" if error == "ok" else f"; {error}")
        table.add_row(
            it.kind,
            safe(it.name),
            human_size(it.size),
            relative_age(it.age_seconds()),
            session,
            safe(error),
            safe(it.status or "-"),
        )
    console().print(table)


def _print_salvage(item: q.QuarantineItem, result: q.Salvage, comp: q.Comparison) -> None:
    out = console()
    out.print(Text("file:    ") + safe(item.path), overflow="fold")
    out.print(Text(f"kind:    {item.kind}, {result.total_bytes} bytes"))
    session = Text("session: ") + safe(result.session_id or "?")
    if item.inner_id is not None:
        session.append(" ⚠ its bytes claim ", style="yellow")
        session.append_text(safe(item.inner_id, style="yellow"))
    out.print(session, overflow="fold")
    out.print(Text("error:   ") + safe(str(result.problem) if result.problem else "none"))
    out.print(
        Text(
            f"salvage: {result.method}; {len(result.messages)} message(s) and "
            f"{len(result.archived_messages)} archived recovered; "
            f"{result.kept_bytes} bytes kept, {result.lost_bytes} lost"
        )
    )
    for s, e in result.invalid_utf8[:10]:
        out.print(Text(f"  invalid UTF-8 at bytes {s}-{e - 1}"))
    if len(result.invalid_utf8) > 10:
        out.print(Text(f"  ... and {len(result.invalid_utf8) - 10} more invalid runs"))
    for entry in result.skipped_entries[:10]:
        out.print(Text("  skipped entry: ") + safe(entry))
    if result.partial:
        p = result.partial
        line = Text(f"  lost: a partial {p.get('list')} entry at byte {p.get('offset')}")
        if p.get("role"):
            line.append(" (role ")
            line.append_text(safe(p["role"]))
            line.append(")")
        line.append(f", {p.get('chars')} characters cut off")
        out.print(line)
    for note in result.notes:
        out.print(Text("  note: ") + safe(note))
    if item.kind == q.KIND_LIVE:
        out.print(
            Text(
                "live:    this is the live file itself, damaged; restore moves its bytes "
                "aside and writes the salvage in its place"
            )
        )
    elif comp.live_exists:
        out.print(
            Text(
                f"live:    {comp.live_messages} message(s); the salvage has "
                f"{len(comp.missing)} it lacks, {comp.present} it already has"
            )
        )
    else:
        out.print(Text("live:    no live session with this id"))


@quarantine.command()
@click.argument("item")
@click.option("--messages", is_flag=True, help="With --json: include the recovered messages.")
@store_option
@json_option
@click.pass_context
def show(
    ctx: click.Context, item: str, messages: bool, stores: tuple[str, ...], as_json: bool
) -> None:
    """Inspect ITEM (file name, unique prefix or path): error, salvage, comparison."""
    it = _item(ctx, stores, item)
    result = q.salvage(it)
    comp = q.compare(_store_of(ctx, stores, it), result)
    if as_json:
        echo_json(
            {
                "item": it.as_dict(),
                "salvage": result.as_dict(with_messages=messages),
                "live": comp.as_dict(with_messages=messages),
            }
        )
        return
    _print_salvage(it, result, comp)


@quarantine.command()
@click.argument("item")
@click.option("-o", "--output", metavar="FILE", help="Write the salvaged session (JSON) to FILE.")
@click.option("--force", is_flag=True, help="Replace FILE if it exists.")
@store_option
@json_option
@click.pass_context
def salvage(
    ctx: click.Context,
    item: str,
    output: str | None,
    force: bool,
    stores: tuple[str, ...],
    as_json: bool,
) -> None:
    """Recover what ITEM still holds; with -o, write it as a session file elsewhere."""
    it = _item(ctx, stores, item)
    result = q.salvage(it)
    comp = q.compare(_store_of(ctx, stores, it), result)
    if as_json and output == "-":
        fail("--json needs -o FILE (stdout holds the report)")
    written = None
    if output:
        try:
            payload = dumps_session(result.session_dict())
        except RecursionError:
            fail(f"{it.name}: the salvaged session is nested too deeply to write")
        # Never into a session dir: a file there would be a live session no journal undoes.
        written = write_output(output, payload, force=force, stores=_stores(ctx, stores))
    if as_json:
        echo_json(
            {
                "item": it.as_dict(),
                "salvage": result.as_dict(with_messages=True),
                "live": comp.as_dict(),
                "output": written,
            }
        )
        return
    if written != "-":
        _print_salvage(it, result, comp)
    if written and written != "-":
        console().print(Text("written to ") + safe(written), overflow="fold")


def _report(result: q.ActionResult, as_json: bool) -> None:
    if as_json:
        echo_json(result.as_dict())
        return
    out = console()
    head = Text("Would " if result.dry_run else "Done: ")
    head.append(result.action)
    head.append(" ")
    head.append_text(safe(Path(result.item).name))
    if result.session_id:
        head.append(" -> session ")
        head.append_text(safe(result.session_id))
    if result.added:
        head.append(f" ({result.added} message(s))")
    out.print(head, overflow="fold")
    for f in result.files:
        out.print(Text(f"  {f['change']:<7} ") + safe(f["path"]), overflow="fold")
    for note in result.notes:
        out.print(Text("  ") + safe(note))
    if result.action_id:
        out.print(Text(f"Undo with: session-browser quarantine undo {result.action_id}"))


def _run(
    action: Callable[[bool], q.ActionResult], what: str, dry_run: bool, yes: bool, as_json: bool
) -> None:
    try:
        preview = action(True)
        if dry_run:
            _report(preview, as_json)
            return
        if not preview.files:
            _report(preview, as_json)
            return
        if not yes:
            listing = "\n".join(
                [
                    *(
                        f"  {f['change']} {printable(str(f['path']), one_line=True)}"
                        for f in preview.files
                    ),
                    *(f"  ({printable(n, one_line=True)})" for n in preview.notes),
                ]
            )
            confirm("Proceed?", f"{what}:\n{listing}")
        _report(action(False), as_json)
    except q.AlreadyRestored as exc:
        fail(f"warning: {exc} (--again, or --as SESSION_ID)")
    except q.QuarantineError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(os_error_text(exc, "write"))


def item_action_options(func: F) -> F:
    """ITEM, ``--dry-run``/``--yes``, ``--store``, ``--json`` and the click context."""
    func = cast(F, click.pass_context(func))
    return click.argument("item")(action_options(store_option(json_option(func))))


def _item_action(
    ctx: click.Context,
    stores: tuple[str, ...],
    item: str,
    what: str,
    act: Callable[..., q.ActionResult],
    dry_run: bool,
    yes: bool,
    as_json: bool,
    *,
    needs_store: bool = True,
) -> None:
    """Find ITEM, then preview, confirm and run ``act([store, ]item, dry_run=...)``."""
    it = _item(ctx, stores, item)
    args = (_store_of(ctx, stores, it), it) if needs_store else (it,)
    _run(lambda dry: act(*args, dry_run=dry), what, dry_run, yes, as_json)


@quarantine.command()
@click.argument("item")
@click.option("--as", "new_id", metavar="SESSION_ID", help="The new session id.")
@click.option("--again", is_flag=True, help="Restore an item already restored once more.")
@action_options
@store_option
@json_option
@click.pass_context
def restore(
    ctx: click.Context,
    item: str,
    new_id: str | None,
    again: bool,
    dry_run: bool,
    yes: bool,
    stores: tuple[str, ...],
    as_json: bool,
) -> None:
    """Restore what ITEM holds as a new session (default id: <id>-restored).

    A damaged live file is restored in place: its bytes move aside to
    <id>.json.corrupt-<ms> and the salvage takes its place (undo puts them back).
    """
    act = partial(q.restore, new_session_id=new_id, again=again)
    _item_action(ctx, stores, item, "Restore", act, dry_run, yes, as_json)


@quarantine.command()
@item_action_options
def merge(
    ctx: click.Context, item: str, dry_run: bool, yes: bool, stores: tuple[str, ...], as_json: bool
) -> None:
    """Merge the messages the live session lacks from ITEM into it (time order kept)."""
    _item_action(ctx, stores, item, "Merge", q.merge, dry_run, yes, as_json)


@quarantine.command()
@item_action_options
def fold(
    ctx: click.Context, item: str, dry_run: bool, yes: bool, stores: tuple[str, ...], as_json: bool
) -> None:
    """Fold spill file ITEM back into its session."""
    _item_action(ctx, stores, item, "Fold the spill", q.fold, dry_run, yes, as_json)


@quarantine.command()
@item_action_options
def discard(
    ctx: click.Context, item: str, dry_run: bool, yes: bool, stores: tuple[str, ...], as_json: bool
) -> None:
    """Move ITEM to session-browser's trash (never deleted; undo brings it back)."""
    _item_action(
        ctx, stores, item, "Move to trash", q.discard, dry_run, yes, as_json, needs_store=False
    )


@quarantine.command()
@click.argument("action_id", required=False)
@click.option("--list", "list_only", is_flag=True, help="List the journal instead.")
@action_options
@json_option
def undo(action_id: str | None, list_only: bool, dry_run: bool, yes: bool, as_json: bool) -> None:
    """Undo the last action (or ACTION_ID), byte-identical."""
    if list_only:
        try:
            q.recover_pending()  # an action killed mid-way is finished or dropped first
        except OSError as exc:
            fail(f"the journal could not be checked: {os_error_text(exc)}")
        entries = [
            {k: e.get(k) for k in ("id", "action", "at", "item", "session_id", "status")}
            for e in q.journal_entries()
        ]
        if as_json:
            echo_json({"entries": entries})
            return
        if not entries:
            console().print("The journal is empty.")
        for e in entries:
            status = "" if e.get("status") == "done" else f"  [{e.get('status')}]"
            console().print(
                Text(f"{e['id']}  {e['action']}  ") + safe(str(e.get("item") or "")) + status,
                overflow="fold",
            )
        return
    try:
        preview = q.undo(action_id, dry_run=True)
        if not dry_run and not yes:
            listing = "\n".join(
                f"  {f['restore']} {printable(str(f['path']), one_line=True)}"
                for f in preview["files"]
            )
            confirm("Proceed?", f"Undo {preview['action']} {preview['action_id']}:\n{listing}")
        result = preview if dry_run else q.undo(str(preview["action_id"]))
    except q.QuarantineError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(os_error_text(exc, "write"))
    if as_json:
        echo_json(result)
        return
    verb = "Would undo" if dry_run else "Undone"
    console().print(Text(f"{verb}: {result['action']} {result['action_id']}"))
    for f in result["files"]:
        console().print(Text(f"  {f['restore']:<6} ") + safe(f["path"]), overflow="fold")
