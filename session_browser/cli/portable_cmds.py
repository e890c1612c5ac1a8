"""``export`` and ``import``: move, back up and share sessions."""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import click
from rich.text import Text

from session_browser.core import portable
from session_browser.core.actions import export as export_actions
from session_browser.core.actions.import_ import CREATE, REPLACE, ImportRequest, run_import
from session_browser.core.model import ImportReport
from session_browser.core.paths import default_session_dir
from session_browser.core.store import DefaultSessionStore
from session_browser.core.stores import open_store, parse_store_spec
from session_browser.core.text import printable, shown_id

from .common import (
    chosen_stores,
    console,
    echo_json,
    fail,
    group_from,
    json_option,
    os_error_text,
    safe,
    store_option,
    target_refusal,
)

_SIZE_RE = re.compile(r"^\s*(\d+)\s*([kmgt]?)i?b?\s*$", re.I)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """``1G``, ``500M``, ``4096`` -> bytes (binary units)."""
    m = _SIZE_RE.match(text)
    if not m:
        raise click.BadParameter(f"not a size: {text!r} (try 512M or 2G)")
    return int(m.group(1)) * _UNITS[m.group(2).lower()]


@click.command()
@click.argument("session_ids", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Export every session.")
@click.option("--search", "query", metavar="QUERY", help="Export the hits of a search instead.")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(portable.FORMATS),
    default=None,
    help="json (portable, re-importable), md or html. Default: from the file suffix, else json.",
)
@click.option("--redact", is_flag=True, help="Replace API keys, tokens and emails.")
@click.option("--no-lineage", is_flag=True, help="Do not add continuations of the sessions.")
@click.option(
    "--skip-unreadable", is_flag=True, help="With --all: skip corrupt files instead of failing."
)
@click.option(
    "-o",
    "--output",
    required=True,
    metavar="FILE",
    help="Output file ('-': stdout). A symlink, FIFO or device is refused: name the real file.",
)
@click.option("--force", is_flag=True, help="Replace FILE (a regular file) if it exists.")
@store_option
@json_option
@click.pass_context
def export(
    ctx: click.Context,
    session_ids: tuple[str, ...],
    all_: bool,
    query: str | None,
    limit: int,
    fmt: str | None,
    redact: bool,
    no_lineage: bool,
    skip_unreadable: bool,
    output: str,
    force: bool,
    stores: tuple[str, ...],
    as_json: bool,
) -> None:
    """Export sessions as a portable JSON payload, Markdown or one self-contained HTML file.

    The JSON payload is the one PraisonAI's export_all/import_sessions use, so it can be
    imported here or by PraisonAI.
    """
    chosen = sum(bool(x) for x in (session_ids, all_, query))
    if chosen != 1:
        fail("give session ids, --all or --search QUERY (exactly one of them)")
    if fmt is None:
        fmt = export_actions.format_for(output)
    if as_json and output == "-":
        fail("--json needs -o FILE (stdout holds the export)")
    group = group_from(ctx, stores)
    target: Path | None = None
    options: dict[str, Any] = {
        "all_sessions": all_,
        "query": query,
        "limit": limit,
        "fmt": fmt,
        "redact": redact,
        "lineage": not no_lineage,
        "skip_unreadable": skip_unreadable,
    }
    try:
        if output == "-":  # written once complete: a failed export prints nothing
            with tempfile.TemporaryFile() as spool:
                built = export_actions.stream_export(group, spool, session_ids, **options)
                spool.seek(0)
                shutil.copyfileobj(spool, sys.stdout.buffer)
            sys.stdout.buffer.flush()
        else:  # one session at a time into a temp file, renamed into place at the end
            target, built = export_actions.export_file(
                output, group, session_ids, replace=force, **options
            )
    except portable.SessionNotFound as exc:
        fail(f"unknown session id: {shown_id(str(exc.args[0]))}")
    except portable.UnreadableSession as exc:
        fail(f"{exc}; --skip-unreadable exports the rest")
    except export_actions.ExportTargetError as exc:
        fail(target_refusal(exc))
    except portable.PortableError as exc:
        fail(str(exc))
    except OSError as exc:
        exc.filename = output
        fail(os_error_text(exc, "write"))
    count, redactions, skipped = built.count, built.redactions, built.skipped
    report = {
        "output": "-" if target is None else str(target),
        "format": fmt,
        "sessions" if query is None else "hits": count,
        "bytes": built.size,
        "redacted": sum(redactions.values()) if redact else None,
        "redactions": redactions if redact else None,
        "skipped_unreadable": skipped,
    }
    if as_json:
        echo_json(report)
        return
    if target is None:
        for path in skipped:
            click.echo(
                f"session-browser: skipped unreadable {printable(path, one_line=True)}", err=True
            )
        return
    out = console()
    line = Text(f"Exported {count} {'session' if query is None else 'hit'}(s) as {fmt} to ")
    line.append_text(safe(str(target)))
    line.append(f" ({built.size} bytes)")
    out.print(line, overflow="fold")
    if redact:
        kinds = ", ".join(f"{k}: {v}" for k, v in sorted(redactions.items())) or "nothing found"
        out.print(Text(f"Redacted {sum(redactions.values())} item(s) ({kinds})."))
    for path in skipped:
        out.print(Text("Skipped unreadable ") + safe(path), overflow="fold")


def _destination(ctx: click.Context, stores: tuple[str, ...]) -> DefaultSessionStore:
    """The one PraisonAI store an import writes into (created when missing)."""
    chosen = chosen_stores(ctx, stores)
    if len(chosen) > 1:
        fail("import writes into one store: give --store DIR once")
    if not chosen:
        return open_store(default_session_dir())
    spec = parse_store_spec(chosen[0])
    if spec.kind != "praisonai":
        fail(f"{spec.text} is read-only: import writes into a PraisonAI session dir")
    if spec.path.exists() and not spec.path.is_dir():
        fail(f"store not found: {spec.path} is not a directory")
    return open_store(spec.path)


@click.command("import")
@click.argument("file", metavar="FILE")
@click.option("--dry-run", is_flag=True, help="Check and report; write nothing.")
@click.option(
    "--overwrite",
    is_flag=True,
    help="Replace sessions that already exist (undo: session-browser quarantine undo).",
)
@click.option(
    "--allow-redacted",
    is_flag=True,
    help="With --overwrite: also replace existing sessions with the copies of a redacted "
    "export (refused otherwise: their secrets are placeholders).",
)
@click.option(
    "--keep-live-fields",
    is_flag=True,
    help="Keep gateway_session_id and agent_id (cleared by default).",
)
@click.option("--skip-invalid", is_flag=True, help="Skip unusable entries instead of failing.")
@click.option(
    "--max-sessions",
    type=click.IntRange(min=0),
    default=None,
    help="Import at most this many sessions (the rest are reported as skipped).",
)
@click.option(
    "--max-size",
    default="1G",
    show_default=True,
    metavar="SIZE",
    help="Refuse files bigger than this.",
)
@click.option(
    "--store",
    "stores",
    multiple=True,
    metavar="DIR",
    help="Session dir to import into (created if missing). Default: the global store.",
)
@json_option
@click.pass_context
def import_(
    ctx: click.Context,
    file: str,
    dry_run: bool,
    overwrite: bool,
    allow_redacted: bool,
    keep_live_fields: bool,
    skip_invalid: bool,
    max_sessions: int | None,
    max_size: str,
    stores: tuple[str, ...],
    as_json: bool,
) -> None:
    """Import a portable JSON export (ours or PraisonAI's) into the store.

    Nothing is written when the file is unusable; existing sessions are never replaced
    without --overwrite, nor with a redacted export's copies without --allow-redacted.
    --dry-run lists the sessions it would create and those it would replace. An import
    is undone by `session-browser quarantine undo`: replaced files come back
    byte-identical, created ones are removed.
    """
    if allow_redacted and not overwrite:
        fail("--allow-redacted goes with --overwrite (it allows replacing with redacted copies)")
    try:
        cap = parse_size(max_size)
    except click.BadParameter as exc:
        fail(str(exc.message))
    store = _destination(ctx, stores)
    try:
        request = ImportRequest(
            file,
            overwrite=overwrite,
            keep_live=keep_live_fields,
            skip_invalid=skip_invalid,
            max_bytes=cap,
            max_sessions=max_sessions,
        )
        report, changes = run_import(store, request, dry_run=dry_run, allow_redacted=allow_redacted)
    except portable.RedactedReplaceRefused as exc:
        fail(_refusal(exc.ids))
    except portable.PortableError as exc:
        fail(str(exc))
    if as_json:
        echo_json(report.as_dict() | {"store": str(store.session_dir)})
    else:
        _print_import(report, changes, store, dry_run)
    if report.refused:
        fail(_refusal(report.refused, dry_run=True))
    failures = report.failures
    if failures:
        first = failures[0]
        fail(
            f"{len(failures)} session(s) could not be written "
            f"(first: {shown_id(first.get('session_id', ''))}: {first.get('reason', '')}); "
            f"{report.imported} imported"
        )


def _refusal(ids: list[str], *, dry_run: bool = False) -> str:
    """The one line that refuses replacing existing sessions with redacted copies."""
    hint = "--overwrite --allow-redacted replaces them anyway; quarantine undo reverts it"
    return printable(portable.redacted_refusal(ids, dry_run=dry_run, hint=hint), one_line=True)


def _print_import(
    report: ImportReport,
    changes: list[tuple[str, str]],
    store: DefaultSessionStore,
    dry_run: bool,
) -> None:
    out = console()
    verb = "Would import" if dry_run else "Imported"
    line = Text(f"{verb} {report.imported} session(s) into ")
    line.append_text(safe(store.session_dir))
    if report.skipped:
        line.append(f"; skipped {report.skipped_count}")
    line.append(":" if report.imported or report.skipped else ".")
    out.print(line, overflow="fold")
    if report.redacted:
        out.print(Text("  (a redacted export: its secrets are placeholders)", style="yellow"))
    labels = {CREATE: "created", REPLACE: "replaced"}
    for kind in (CREATE, REPLACE):
        ids = [sid for change, sid in changes if change == kind]
        if not ids:
            continue
        label = f"would {kind}" if dry_run else labels[kind]
        out.print(Text(f"  {label} {len(ids)}:"))
        for sid in ids:
            row = Text("    ")
            row.append_text(safe(sid, style="bold"))
            out.print(row, overflow="fold")
    if report.skipped:
        out.print(Text(f"  skipped {report.skipped_count}:"))
    for item in report.skipped:
        row = Text("    ")
        row.append_text(safe(item.get("session_id") or "(no id)", style="bold"))
        row.append(": ")
        row.append_text(safe(item.get("reason", "")))
        out.print(row, overflow="fold")
    if report.action_id:
        line = Text("Undo: session-browser quarantine undo ")
        line.append_text(safe(report.action_id))
        out.print(line, overflow="fold")
