"""Warnings that save data: the sources set to delete history, and what the vault holds.

Claude Code deletes transcripts older than ``cleanupPeriodDays`` (30 when its
``settings.json`` does not say) at start-up, Gemini CLI chats older than its
``general.sessionRetention`` (30 days by default); a PraisonAI store in ``truncate`` retention
drops its oldest turns on every write past its limit. The vault keeps what they delete (unless
it is turned off for that source): these lines say so, and how much it keeps. The agents found
where they keep their sessions are listed with their session counts and retention rules.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from ..settings import load_settings, vault_on
from ..sources import SOURCES
from ..sources.claude.places import claude_cleanup_days as claude_cleanup_days  # the app's
from .errors import VaultError, catalog_guard
from .format import VaultStats
from .store import Vault, default_vault_dir


@dataclass
class Finding:
    source: str
    text: str
    protected: bool  # the vault keeps what this deletes


@dataclass
class AgentFound:
    """An agent's sessions found in their default place: how many, and what deletes them."""

    source: str
    dir: str
    sessions: int
    retention: str


@dataclass
class Doctor:
    findings: list[Finding] = field(default_factory=list)
    agents: list[AgentFound] = field(default_factory=list)
    vault_dir: str = ""
    stats: VaultStats | None = None
    vault_error: str | None = None
    off: list[str] = field(default_factory=list)


def examine(vault_root: Path | None = None, *, agents: bool = False) -> Doctor:
    """What deletes history here, and the vault's size and deleted sessions; with
    ``agents``, also the agents found in their default places with their session counts
    (their files are listed: not for a status line)."""
    out = Doctor(off=list(load_settings().vault_off))
    for kind in SOURCES.values():
        rule = kind.retention() if kind.retention is not None else None
        if rule is not None and rule.deletes:
            out.findings.append(Finding(kind.name, rule.text, vault_on(kind.name)))
        if not agents or not kind.read_only:
            continue  # PraisonAI's own store: its retention is the env line below
        for path in kind.default_dirs(None):
            if path.is_dir():
                count = len(kind.source(path).list_files())
                said = rule.text if rule is not None else "no automatic deletion known"
                out.agents.append(AgentFound(kind.name, str(path), count, said))
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
