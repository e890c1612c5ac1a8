"""``session-browser vault ...``: what the vault keeps, its versions, restore, check, prune."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import click

from session_browser.core.text import parse_size, printable, shown_id
from session_browser.core.vault import Vault, VaultError, Version, default_vault_dir
from session_browser.core.vault.errors import catalog_guard
from session_browser.core.vault.parts import parts_size
from session_browser.core.vault.reading import version_turns

from .common import echo_json, fail, json_option, os_error_text


def _size(_ctx: click.Context, _param: click.Parameter, value: str) -> int:
    """A byte count, or a number with K, M, G or T (powers of 1024)."""
    try:
        return parse_size(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@contextlib.contextmanager
def _open() -> Iterator[Vault]:
    """The vault, open for one command: a vault that cannot be opened or read (a damaged
    catalog, a symlinked dir) is one line and exit 1."""
    root = default_vault_dir()
    try:
        with catalog_guard(root / "catalog.sqlite"), Vault(root) as vault:
            yield vault
    except VaultError as exc:
        fail(str(exc))
    except sqlite3.Error as exc:
        fail(f"the vault catalog {root / 'catalog.sqlite'} cannot be read: {exc}")
    except OSError as exc:
        fail(os_error_text(exc, "open the vault"))


def _line(text: object) -> str:
    """Kept text (a path, an id) as it may reach the terminal: every control and bidi
    character escaped."""
    return printable(str(text), one_line=True)


def _when(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")


def _row(vault: Vault, number: int, v: Version) -> dict[str, object]:
    parts, parts_bytes = parts_size(vault, v)
    return {
        "version": number,
        "seen": _when(v.seen),
        "size": v.size + parts_bytes,  # with its subagent files
        "subagent_files": parts,
        "subagent_bytes": parts_bytes,
        # Counted as the viewer counts them (not the rows the index keeps of it).
        "turns": version_turns(vault, v),
        "source": v.source,
        "path": v.path,
        "sha256": v.sha256,
        "gone_at": _when(v.gone_at),
    }


def _versions(vault: Vault, session_id: str) -> list[Version]:
    found = vault.versions(session_id)
    if not found:
        fail(f"the vault keeps no version of session {shown_id(session_id)}")
    return found


@click.group()
def vault() -> None:
    """Exact copies of the session files read, kept in our data dir (see 'vault status')."""


@vault.command()
@json_option
def status(as_json: bool) -> None:
    """Where the vault is, how many files and versions it keeps, and how big it is."""
    with _open() as v:
        stats = v.stats()
        root = str(v.root)
        unknown = v.unknown_packs()
    payload = {
        "dir": root,
        "files": stats.files,
        "versions": stats.versions,
        "gone": stats.gone,
        "stored_bytes": stats.stored_bytes,
        "kept_bytes": stats.kept_bytes,
        "unknown_packs": [{"path": str(path), "bytes": size} for path, size in unknown],
    }
    if as_json:
        echo_json(payload)
        return
    click.echo(f"vault: {_line(root)}")
    click.echo(
        f"{stats.files:,} files, {stats.versions:,} versions, {stats.gone:,} no longer on disk"
    )
    click.echo(
        f"{stats.stored_bytes:,} bytes stored for {stats.kept_bytes:,} bytes of latest versions"
    )
    if unknown:
        click.echo(
            f"{len(unknown)} packs ({sum(size for _p, size in unknown):,} bytes) are not in the"
            " catalog: 'session-browser vault rebuild' takes them back"
        )


@vault.command()
@click.argument("session_id")
@json_option
def log(session_id: str, as_json: bool) -> None:
    """The versions kept of one session, oldest first (numbered for 'restore --version');
    a size counts the session's subagent files too, a count of turns is the viewer's."""
    with _open() as v:
        rows = [_row(v, i, version) for i, version in enumerate(_versions(v, session_id), 1)]
    if as_json:
        echo_json({"session_id": session_id, "versions": rows})
        return
    for row in rows:
        gone = f"  gone since {row['gone_at']}" if row["gone_at"] else ""
        turns = "?" if row["turns"] is None else f"{row['turns']:,}"
        subs = f" (with {row['subagent_files']} subagent files)" if row["subagent_files"] else ""
        click.echo(
            f"{row['version']:>3}  {row['seen']}  {row['size']:>12,} bytes{subs}"
            f"  {turns} turns  {click.style(_line(row['path']), bold=True)}{gone}"
        )


@vault.command()
@click.argument("session_id")
@click.option("--version", "number", type=int, help="Which version (see 'vault log'); the latest.")
@click.option(
    "--to",
    "to",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write into this dir instead of where the file was (made, 0700, with its parents "
    "when missing; never through a symlink).",
)
@json_option
def restore(session_id: str, number: int | None, to: Path | None, as_json: bool) -> None:
    """Write a kept version back with its subagent files, byte-identical; never over a file
    that exists (nothing is written when one does)."""
    with _open() as v:
        versions = _versions(v, session_id)
        if number is not None and not 1 <= number <= len(versions):
            fail(f"--version must be between 1 and {len(versions)}, not {number}", code=2)
        chosen = versions[-1] if number is None else versions[number - 1]
        try:
            path = v.restore(chosen, to=to)
            parts, parts_bytes = parts_size(v, chosen)
        except VaultError as exc:
            fail(str(exc))
        except OSError as exc:
            fail(os_error_text(exc, "restore"))
    if as_json:
        echo_json(
            {
                "session_id": session_id,
                "restored": str(path),
                "size": chosen.size,
                "subagent_files": parts,
                "subagent_bytes": parts_bytes,
            }
        )
    else:
        subs = f" and {parts} subagent files ({parts_bytes:,} bytes)" if parts else ""
        click.echo(
            f"restored {shown_id(session_id)} to {_line(path)} ({chosen.size:,} bytes){subs}"
        )


@vault.command()
@json_option
def check(as_json: bool) -> None:
    """Read every kept entry and check it against its hash, and name the packs the catalog
    does not know (see 'vault rebuild'); exit 1 when one is damaged or unknown."""
    with _open() as v:
        problems = v.check()
    if as_json:
        echo_json({"damaged": problems})
    else:
        for line in problems:
            click.echo(_line(line))
        click.echo("the vault is sound" if not problems else f"{len(problems)} problems found")
    if problems:
        raise SystemExit(1)


@vault.command()
@click.option(
    "--budget",
    required=True,
    callback=_size,
    help="Size to keep at most: bytes, or with K, M, G or T (powers of 1024): 500M, 2G.",
)
@click.option("--gone-too", is_flag=True, help="Also drop old versions of deleted sessions.")
@json_option
def prune(budget: int, gone_too: bool, as_json: bool) -> None:
    """Drop the oldest versions until the vault fits BUDGET (500M, 2G, or bytes); never a
    session's last copy."""
    with _open() as v:
        freed = v.prune(budget, gone_too=gone_too)
        stored = v.stats().stored_bytes
    if as_json:
        echo_json({"freed_bytes": freed, "stored_bytes": stored})
    else:
        click.echo(f"freed {freed:,} bytes; {stored:,} bytes stored")


@vault.command()
@json_option
def rebuild(as_json: bool) -> None:
    """Rebuild a lost or damaged catalog from the packs (the catalog there was is moved
    aside, never deleted; no pack is changed). Run it while nothing else uses the vault."""
    from session_browser.core.vault.rebuild import rebuild as rebuild_catalog

    try:
        done = rebuild_catalog(default_vault_dir())
    except VaultError as exc:
        fail(str(exc))
    except sqlite3.Error as exc:
        fail(f"the vault catalog cannot be rebuilt: {exc}")
    except OSError as exc:
        fail(os_error_text(exc, "rebuild the vault catalog"))
    if as_json:
        echo_json(
            {
                "packs": done.packs,
                "chunks": done.chunks,
                "files": done.files,
                "versions": done.versions,
                "versions_missing_chunks": done.missing,
                "problems": done.problems,
                "old_catalog": None if done.old_catalog is None else str(done.old_catalog),
            }
        )
        return
    for line in done.problems:
        click.echo(_line(line))
    click.echo(
        f"rebuilt the catalog from {done.packs} packs: {done.files:,} files,"
        f" {done.versions:,} versions, {done.chunks:,} chunks"
    )
    if done.missing:
        click.echo(f"{done.missing:,} versions left out: their chunks are not in the packs")
    if done.old_catalog is not None:
        click.echo(f"the catalog there was is kept as {_line(done.old_catalog)}")
