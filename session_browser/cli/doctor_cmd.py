"""``session-browser doctor``: the agents found here with their session counts, what deletes
history, and what the vault keeps of it."""

from __future__ import annotations

import click

from session_browser.core.text import printable
from session_browser.core.vault.doctor import examine

from .common import echo_json, fail, json_option


def _secrets(ctx: click.Context, url: str | None, as_json: bool) -> None:
    from session_browser.core.forget.secrets import scan

    from .team_cmds import team_url

    found = scan(team_url(ctx, url))
    rows = sorted(found.findings.values(), key=lambda f: f.session_id)
    if as_json:
        echo_json(
            {
                "sessions": [
                    {
                        "session_id": f.session_id,
                        "kinds": dict(sorted(f.kinds.items())),
                        "where": sorted(f.where),
                    }
                    for f in rows
                ],
                "problems": found.problems,
            }
        )
        return
    for problem in found.problems:
        click.echo(f"warning: {printable(problem, one_line=True)}")
    for f in rows:
        kinds = ", ".join(f"{k} x{n}" for k, n in sorted(f.kinds.items()))
        where = ", ".join(sorted(f.where))
        click.echo(printable(f"{f.session_id}: {kinds} (in: {where})", one_line=True))
    if rows:
        click.echo(
            f"{len(rows)} session(s) hold likely secrets: 'session-browser forget --text ...' "
            "erases a secret from every copy we keep (or --redact to keep the sessions)"
        )
    else:
        click.echo("no likely secrets in what we keep")


@click.command()
@click.option(
    "--secrets",
    is_flag=True,
    help="List the sessions whose copies we keep (index, vault, team index) hold likely "
    "secrets (keys, tokens, private keys, password= pairs), by kind; never printing them.",
)
@click.option(
    "--index",
    "url",
    metavar="URL",
    default=None,
    help="With --secrets: the team index to scan too (default: --index, "
    "SESSION_BROWSER_INDEX_URL or the config file's index_url, when set).",
)
@json_option
@click.pass_context
def doctor(ctx: click.Context, secrets: bool, url: str | None, as_json: bool) -> None:
    """Say which agents' sessions are here, which sources delete history, and how many
    deleted sessions the vault keeps (--secrets: which kept sessions hold likely secrets)."""
    if secrets:
        _secrets(ctx, url, as_json)
        return
    if url is not None:
        fail("--index goes with --secrets")
    found = examine(agents=True)
    stats = found.stats
    if as_json:
        echo_json(
            {
                "agents": [
                    {
                        "source": a.source,
                        "dir": a.dir,
                        "sessions": a.sessions,
                        "retention": a.retention,
                    }
                    for a in found.agents
                ],
                "findings": [
                    {"source": f.source, "text": f.text, "kept_by_vault": f.protected}
                    for f in found.findings
                ],
                "vault": {
                    "dir": found.vault_dir,
                    "off_for": found.off,
                    "error": found.vault_error,
                    "files": stats.files if stats else 0,
                    "gone": stats.gone if stats else 0,
                    "stored_bytes": stats.stored_bytes if stats else 0,
                    "disk_bytes": stats.disk_bytes if stats else 0,
                    "kept_bytes": stats.kept_bytes if stats else 0,
                },
            }
        )
        return
    for a in found.agents:
        click.echo(f"{a.source}: {a.sessions:,} sessions in {a.dir} ({a.retention})")
    if not found.agents:
        click.echo("no agent's sessions found in their default places")
    for f in found.findings:
        tail = "the vault keeps them" if f.protected else "the vault is OFF for it: they are lost"
        click.echo(f"warning: {f.text}; {tail}")
    if found.off:
        click.echo(f"the vault is off for: {', '.join(found.off)} (settings.json vault_off)")
    if found.vault_error:
        click.echo(f"the vault cannot be read: {found.vault_error}")
    elif stats is None:
        click.echo(f"vault: {found.vault_dir} (empty: nothing indexed yet)")
    else:
        click.echo(
            f"vault: {found.vault_dir}: {stats.files:,} files, {stats.gone:,} sessions no "
            f"longer on disk, {stats.disk_bytes:,} bytes on disk for {stats.kept_bytes:,} "
            f"bytes of transcripts"
        )
