"""The status line's vault segment: how many deleted sessions the vault keeps, and which of
the open stores' sources delete history (``session-browser doctor`` says it at length)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from session_browser.core.vault.doctor import claude_cleanup_days, examine

SHORT = {
    "praisonai": "PraisonAI truncate drops old turns",
}


def vault_segment(kinds: Iterable[str], vault_root: Path | None = None) -> str:
    """ "vault: 12 deleted kept · Claude Code deletes after 30 d" ('' when there is nothing
    to say). Only the sources of ``kinds`` (the open stores') are named. Reads settings
    files and the vault's catalog: call it from a worker."""
    wanted = set(kinds)
    doctor = examine(vault_root)
    parts: list[str] = []
    if doctor.stats is not None and doctor.stats.gone:
        parts.append(f"{doctor.stats.gone:,} deleted kept")
    for finding in doctor.findings:
        if finding.source not in wanted:
            continue
        if finding.source == "claude":
            text = f"Claude Code deletes after {claude_cleanup_days()[0]} d"
        else:
            text = SHORT.get(finding.source, finding.text)
        parts.append(text if finding.protected else f"{text} (vault off: lost)")
    if doctor.vault_error:
        parts.append("cannot be read (session-browser doctor)")
    return "vault: " + " · ".join(parts) if parts else ""
