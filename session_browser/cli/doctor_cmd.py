"""``session-browser doctor``: the agents found here with their session counts, what deletes
history, and what the vault keeps of it."""

from __future__ import annotations

import click

from session_browser.core.vault.doctor import examine

from .common import echo_json, json_option


@click.command()
@json_option
def doctor(as_json: bool) -> None:
    """Say which agents' sessions are here, which sources delete history, and how many
    deleted sessions the vault keeps."""
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
