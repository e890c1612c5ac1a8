"""``session-browser index status|rebuild|update``: the search index of each store."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import click
from rich.text import Text

from session_browser.core.files import describe_refused
from session_browser.core.index import ReconcileReport, SqliteSessionStore
from session_browser.core.index.partly import describe as describe_lines_skipped
from session_browser.core.paths import package_env
from session_browser.core.stores import StoreNotFound, StoreSpec, open_index, store_specs

from .common import (
    chosen_stores,
    console,
    echo_json,
    fail,
    json_option,
    progress_printer,
    safe,
    store_option,
)


def _dirs(ctx: click.Context, stores: tuple[str, ...]) -> list[StoreSpec]:
    return store_specs(list(chosen_stores(ctx, stores)) or None)


def _open(spec: StoreSpec) -> SqliteSessionStore:
    return open_index(spec, reconcile="none", vault=True)


def _print_report(store: SqliteSessionStore, report: ReconcileReport) -> None:
    out = console()
    line = Text()
    line.append_text(safe(store.label, style="bold"))
    line.append(
        f": {report.added} added, {report.updated} updated, {report.removed} removed, "
        f"{report.unchanged} unchanged, {len(report.skipped)} skipped, "
        f"{report.messages} messages indexed in {report.elapsed:.2f} s"
    )
    if report.cancelled:
        line.append(" (cancelled)", style="yellow")
    out.print(line, overflow="fold")
    for name, reason in report.skipped:
        out.print(Text("  skipped ") + safe(name) + Text(": ") + safe(reason), overflow="fold")


def _team_status(ctx: click.Context, as_json: bool) -> None:
    """``index status`` of the team index (the password of its URL never shown)."""
    from session_browser.core.pgindex.store import PgIndexStore

    from .team_cmds import team_url

    url = team_url(ctx)
    assert url is not None
    with PgIndexStore(url) as team:
        info = team.status()
    if as_json:
        echo_json({"team": info})
        return
    out = console()
    out.print(Text("team index ") + safe(str(info["index"]), style="bold"), overflow="fold")
    out.print(Text(f"  schema:   version {info['schema_version']}"))
    out.print(
        Text(
            f"  indexed:  {info['sessions']} sessions, {info['messages']} messages from "
            f"{info['machines']} machine(s), {info['users']} user(s)"
        )
    )
    for machine, n in list(info["per_machine"].items())[:20]:
        out.print(Text("    ") + safe(machine) + Text(f": {n} sessions"), overflow="fold")
    if info["last_push"]:
        out.print(Text(f"  pushed:   last at {info['last_push']}"))
    out.print(Text(f"  typos:    {'pg_trgm' if info['typo_pass'] else 'no pg_trgm: no typo pass'}"))


def _run(ctx: click.Context, stores: tuple[str, ...], as_json: bool, action: str) -> None:
    try:
        dirs = _dirs(ctx, stores)
    except StoreNotFound as exc:
        fail(str(exc))
    payload: list[dict[str, Any]] = []
    failed = False
    show_progress = not as_json and sys.stderr.isatty()
    for spec in dirs:
        path = spec.path
        try:
            store = _open(spec)
        except OSError as exc:
            fail(f"cannot open the index of {path}: {exc.strerror or exc}")
        with store:
            if action == "status":
                info = store.status()
                payload.append(info)
                if store.broken:
                    failed = True
                if not as_json:
                    _print_status(info)
                continue
            progress = progress_printer(str(path), show_progress)
            if action == "rebuild":
                report = store.rebuild(progress=progress)
            else:
                report = store.reconcile(progress=progress)
            if store.broken:
                failed = True
            entry = {"session_dir": str(path), "db_path": store.db_path, **report.as_dict()}
            if store.broken:
                entry["error"] = store.broken
            payload.append(entry)
            if not as_json:
                if store.broken:  # the counts of a pass that failed would mislead
                    click.echo(f"session-browser: {store.broken}", err=True)
                else:
                    _print_report(store, report)
    if as_json:
        echo_json({"stores": payload})
    if failed:
        sys.exit(1)


def _print_status(info: dict[str, Any]) -> None:
    out = console()
    head = Text()
    head.append_text(safe(str(info["session_dir"]), style="bold"))
    out.print(head, overflow="fold")
    out.print(Text("  index:    ") + safe(str(info["db_path"])), overflow="fold")
    out.print(Text(f"  mode:     {info['mode']}"))
    if info.get("broken"):
        out.print(Text("  problem:  ") + safe(str(info["broken"])), overflow="fold")
    if "sessions" in info:
        out.print(
            Text(
                f"  indexed:  {info['sessions']} sessions, {info['messages']} messages "
                f"({info['files']} files on disk)"
            )
        )
    ratio = (info["db_bytes"] / info["json_bytes"]) if info.get("json_bytes") else 0.0
    out.print(
        Text(
            f"  size:     {info['db_bytes'] / 1e6:.1f} MB index for "
            f"{info['json_bytes'] / 1e6:.1f} MB of JSON ({ratio:.2f}x)"
        )
    )
    vectors = info.get("vectors")
    if vectors:
        said = vectors.get("error") or (
            f"{vectors['sessions']} of {vectors['of_sessions']} sessions, "
            f"{vectors['windows']} windows of {vectors['model']} "
            f"({vectors['bytes'] / 1e6:.1f} MB)"
        )
        if vectors.get("updating"):
            said += "; being updated in the background"
        out.print(Text("  vectors:  ") + safe(str(said)), overflow="fold")
    done, total = info.get("progress", [0, 0])
    if info.get("indexing"):
        out.print(Text(f"  progress: {done}/{total} files"))
    skipped = info.get("skipped") or []
    refused = describe_refused(info.get("refused") or {})
    also = f"; not read: {refused} (never followed or opened)" if refused else ""
    out.print(Text(f"  skipped:  {len(skipped)} file(s){also}"))
    for item in skipped:
        out.print(
            Text("    ") + safe(item["file"]) + Text(": ") + safe(item["reason"]), overflow="fold"
        )
    inside = describe_lines_skipped(info.get("lines_skipped") or {})
    if inside:
        out.print(Text("  lines:    skipped ") + safe(inside), overflow="fold")
    if "sessions" in info and info["files"] != info["sessions"] + len(skipped):
        out.print(Text("  stale:    run 'session-browser index update'", style="yellow"))


@click.group()
def index() -> None:
    """The search index of each store (kept in the cache dir, never in the session dir)."""


@index.command()
@store_option
@json_option
@click.pass_context
def status(ctx: click.Context, stores: tuple[str, ...], as_json: bool) -> None:
    """Where each index is, what it holds, and the files it could not read (the team
    index's sessions, messages, machines and schema with --index or its URL set)."""
    from .team_cmds import team_url

    if not stores and team_url(ctx) is not None:
        _team_status(ctx, as_json)
        return
    _run(ctx, stores, as_json, "status")


@index.command()
@store_option
@json_option
@click.pass_context
def update(ctx: click.Context, stores: tuple[str, ...], as_json: bool) -> None:
    """Index new and changed session files and drop deleted ones."""
    _run(ctx, stores, as_json, "update")


@index.command()
@store_option
@json_option
@click.pass_context
def rebuild(ctx: click.Context, stores: tuple[str, ...], as_json: bool) -> None:
    """Throw each index away and build it again from the session files."""
    _run(ctx, stores, as_json, "rebuild")


@index.command()
@store_option
@click.option(
    "--background",
    is_flag=True,
    help="Build in a process of its own and return at once (its output goes to a log file "
    "beside the vectors, named on stdout).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Processes that embed (each holds the model, about 250 MB). Default: 2, or 1 on a "
    "one-core machine.",
)
@json_option
@click.pass_context
def vectors(
    ctx: click.Context,
    stores: tuple[str, ...],
    background: bool,
    workers: int | None,
    as_json: bool,
) -> None:
    """Build the vectors hybrid search reads (the semantic extra's local model, on the CPU):
    each index updated first, then the windows of new and grown sessions embedded. Stopped,
    it resumes where it stopped; searches answer lexically meanwhile."""
    from session_browser.core.embed import EmbedderUnavailable, embedder_named
    from session_browser.core.index.vectors import (
        VectorsBusy,
        build_vectors,
        size_of,
        vectors_path,
    )

    try:
        dirs = _dirs(ctx, stores)
    except StoreNotFound as exc:
        fail(str(exc))
    try:
        model = embedder_named("all-MiniLM-L6-v2")
    except EmbedderUnavailable as exc:
        fail(str(exc))
    if workers is None:
        workers = min(2, os.cpu_count() or 1)
    if background:
        _in_background(dirs, workers, as_json)
        return
    payload: list[dict[str, Any]] = []
    show_progress = not as_json and sys.stderr.isatty()
    for spec in dirs:
        try:
            store = _open(spec)
        except OSError as exc:
            fail(f"cannot open the index of {spec.path}: {exc.strerror or exc}")
        with store:
            store.reconcile()
            if store.broken or store.memory:
                fail(f"{spec.path}: the index cannot be used: {store.broken or 'in memory'}")
            done = progress_printer(f"embedding {spec.path}", show_progress)
            try:
                report = build_vectors(store.db_path, model, progress=done, workers=workers)
            except VectorsBusy as exc:
                fail(f"{spec.path}: {exc}")
            except (OSError, sqlite3.Error) as exc:
                fail(f"{spec.path}: cannot write the vectors: {exc}")
            path = vectors_path(store.db_path)
            size = size_of(path)
            entry: dict[str, Any] = {
                "session_dir": str(spec.path),
                "vectors": str(path),
                "model": model.name,
                "sessions_embedded": report.sessions,
                "windows_embedded": report.windows,
                "texts_embedded": report.embedded,
                "sessions_removed": report.removed,
                "seconds": round(report.seconds, 3),
                "bytes": size,
            }
            payload.append(entry)
            if not as_json:
                click.echo(
                    f"{spec.path}: {report.sessions} sessions ({report.windows} windows, "
                    f"{report.windows - report.embedded} of them a text embedded before) "
                    f"embedded, {report.removed} removed in {report.seconds:.1f} s; "
                    f"{size / 1e6:.1f} MB of vectors"
                )
    if as_json:
        echo_json({"stores": payload})


def _in_background(dirs: list[StoreSpec], workers: int, as_json: bool) -> None:
    """``index vectors --background``: the same command, without it, in a new session of its
    own (it outlives this one), its output in a log beside the first store's vectors."""
    import subprocess

    from session_browser.core.index.vectors import vectors_path

    first = _open(dirs[0])
    with first:
        log = Path(str(vectors_path(first.db_path)) + ".log")
    args = [sys.executable, "-m", "session_browser", "index", "vectors", "--workers", str(workers)]
    for spec in dirs:
        args += ["--store", str(spec.path)]
    env = package_env()  # (the child runs this very package)
    try:
        with open(log, "ab") as out:
            os.chmod(log, 0o600)
            child = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=env,
            )
    except OSError as exc:
        fail(f"cannot start the build: {exc}")
    if as_json:
        echo_json({"pid": child.pid, "log": str(log)})
    else:
        click.echo(f"building the vectors in the background (process {child.pid}); log: {log}")
