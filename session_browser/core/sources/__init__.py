"""Session sources: one reader per transcript format, and the table of source kinds.

Every source is read-only except PraisonAI's, which is written only through
:class:`~session_browser.core.store.DefaultSessionStore`. A source never writes, locks, moves
or creates anything where the other agent keeps its files. Each one yields PraisonAI-shaped
session dicts, so the shared recall code (:mod:`session_browser.core.recall`) scores, projects
and summarises them unchanged (see :mod:`.base` for what a source offers).

- :mod:`.praisonai`: PraisonAI's JSON sessions (``~/.praisonai/sessions/*.json``).
- :mod:`.pi`: Pi coding-agent sessions (``~/.pi/agent/sessions/**/*.jsonl``).
- :mod:`.claude`: Claude Code transcripts (``~/.claude/projects/<dir>/*.jsonl``).
- :mod:`.codex`: Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).
- :mod:`.gemini`: Gemini CLI chats (``~/.gemini/tmp/<project>/chats/session-*.json[l]``).
- :mod:`.opencode`: OpenCode sessions (``~/.local/share/opencode/opencode.db`` and ``storage/``).
- :mod:`.aider`: Aider chat histories (``<repo>/.aider.chat.history.md``, one session a launch).
- :mod:`.cline`: Cline and Roo Code tasks (``<editor>/User/globalStorage/<extension>/tasks/<id>/``).
- :mod:`.copilot`: GitHub Copilot CLI sessions (``~/.copilot/session-state/<id>/events.jsonl``).
- :mod:`.goose`: Goose sessions (``~/.local/share/goose/sessions/sessions.db`` and ``*.jsonl``).
- :mod:`.kimi`: Kimi Code CLI sessions (``~/.kimi/sessions/<work dir>/<session>/wire.jsonl``).

:data:`SOURCES` (in :mod:`.kinds`) is the one table of source kinds: ``--store KIND:DIR``, the
default store list, the agent tool and the benchmark learn from it which sources exist. A new
format is one reader module plus one row there.

The names here are imported on first use: a process that reads one format (the parsing worker
of a first build) imports that reader only, not every reader of the table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import on_first_use
from .base import SessionDoc, SessionSource, Skip, SourceKind

if TYPE_CHECKING:
    from .kinds import DEFAULT_KIND, SOURCES
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

#: Where each name imported on first use is defined.
_LAZY = {
    "DEFAULT_KIND": ".kinds",
    "SOURCES": ".kinds",
    "ReadOnlyStore": ".readonly",
    **dict.fromkeys(
        (
            "PI_SOURCE",
            "PiBranch",
            "PiParseState",
            "PiSession",
            "PiStore",
            "cwd_matches",
            "default_pi_dir",
            "pi_is_automated",
            "pi_jsonl",
            "read_pi_branch",
            "read_pi_session",
        ),
        ".pi",
    ),
}


__getattr__ = on_first_use(__name__, _LAZY)


__all__ = [
    "DEFAULT_KIND",
    "PI_SOURCE",
    "SOURCES",
    "PiBranch",
    "PiParseState",
    "PiSession",
    "PiStore",
    "ReadOnlyStore",
    "SessionDoc",
    "SessionSource",
    "Skip",
    "SourceKind",
    "cwd_matches",
    "default_pi_dir",
    "pi_is_automated",
    "pi_jsonl",
    "read_pi_branch",
    "read_pi_session",
]
