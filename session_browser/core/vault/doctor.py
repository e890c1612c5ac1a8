"""Warnings that save data: the sources set to delete history, and what the vault holds.

Claude Code deletes transcripts older than ``cleanupPeriodDays`` (30 when its
``settings.json`` does not say) at start-up; a PraisonAI store in ``truncate`` retention drops
its oldest turns on every write past its limit. The vault keeps what they delete (unless it is
turned off for that source): these lines say so, and how much it keeps.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from ..settings import load_settings, vault_on
from ..sources.claude.reader import claude_config_dir
from .store import Vault, VaultError, VaultStats, catalog_guard, default_vault_dir

CLAUDE_DEFAULT_CLEANUP_DAYS = 30


@dataclass
class Finding:
    source: str
    text: str
    protected: bool  # the vault keeps what this deletes


@dataclass
class Doctor:
    findings: list[Finding] = field(default_factory=list)
    vault_dir: str = ""
    stats: VaultStats | None = None
    vault_error: str | None = None
    off: list[str] = field(default_factory=list)


def claude_cleanup_days() -> tuple[int, Path, bool]:
    """(days after which Claude Code deletes a transcript, its settings file, whether the
    file sets it)."""
    path = claude_config_dir() / "settings.json"
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return CLAUDE_DEFAULT_CLEANUP_DAYS, path, False
    days = data.get("cleanupPeriodDays") if isinstance(data, dict) else None
    if isinstance(days, int) and not isinstance(days, bool):
        return days, path, True
    return CLAUDE_DEFAULT_CLEANUP_DAYS, path, False


def examine(vault_root: Path | None = None) -> Doctor:
    """What deletes history here, and the vault's size and deleted sessions."""
    out = Doctor(off=list(load_settings().vault_off))
    days, path, set_here = claude_cleanup_days()
    where = f"cleanupPeriodDays in {path}" if set_here else f"the default; {path} does not set it"
    out.findings.append(
        Finding(
            "claude",
            f"Claude Code deletes transcripts older than {days} days ({where})",
            vault_on("claude"),
        )
    )
    retention = os.environ.get("PRAISONAI_SESSION_RETENTION")
    if retention == "truncate":
        out.findings.append(
            Finding(
                "praisonai",
                "PraisonAI drops old turns on write (PRAISONAI_SESSION_RETENTION=truncate)",
                vault_on("praisonai"),
            )
        )
    root = vault_root or default_vault_dir()
    out.vault_dir = str(root)
    if (root / "catalog.sqlite").exists():
        try:
            with catalog_guard(root / "catalog.sqlite"), Vault(root) as vault:
                out.stats = vault.stats()
        except (VaultError, OSError, sqlite3.Error) as exc:
            out.vault_error = str(exc)
    return out
