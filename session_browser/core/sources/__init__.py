"""Readers that turn other agents' session formats into the core's session shape.

Every source is read-only: it never writes, locks, moves or creates anything where the other
agent keeps its files. Each one yields PraisonAI-shaped session dicts, so the shared recall code
(:mod:`session_browser.core.recall`) scores, projects and summarises them unchanged.

- :mod:`.pi`: Pi coding-agent sessions (``~/.pi/agent/sessions/**/*.jsonl``).
"""

from __future__ import annotations

from .pi import (
    PI_SOURCE,
    PiBranch,
    PiParseState,
    PiSession,
    PiStore,
    cwd_matches,
    default_pi_dir,
    pi_is_automated,
    pi_jsonl,
    read_pi_branch,
    read_pi_session,
)
from .readonly import ReadOnlyStore

__all__ = [
    "PI_SOURCE",
    "PiBranch",
    "PiParseState",
    "PiSession",
    "PiStore",
    "ReadOnlyStore",
    "cwd_matches",
    "default_pi_dir",
    "pi_is_automated",
    "pi_jsonl",
    "read_pi_branch",
    "read_pi_session",
]
