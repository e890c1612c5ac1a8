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

:data:`SOURCES` is the one table of source kinds: ``--store KIND:DIR``, the default store
list, the agent tool and the benchmark learn from it which sources exist. A new format is one
reader module plus one row here.
"""

from __future__ import annotations

from . import aider, cline, codex_source, copilot, gemini, goose, kimi, opencode, praisonai
from .base import SessionDoc, SessionSource, Skip, SourceKind
from .claude import source as claude_source
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
from .pi import source as pi_source
from .readonly import ReadOnlyStore

#: Every source kind by name, the default kind (named by a bare ``DIR``) first.
SOURCES: dict[str, SourceKind] = {
    praisonai.KIND.name: praisonai.KIND,
    pi_source.KIND.name: pi_source.KIND,
    claude_source.KIND.name: claude_source.KIND,
    codex_source.KIND.name: codex_source.KIND,
    gemini.KIND.name: gemini.KIND,
    opencode.KIND.name: opencode.KIND,
    kimi.KIND.name: kimi.KIND,
    aider.KIND.name: aider.KIND,
    cline.KIND.name: cline.KIND,
    goose.KIND.name: goose.KIND,
    copilot.KIND.name: copilot.KIND,
}
#: The kind of a store named without a prefix.
DEFAULT_KIND = praisonai.PRAISONAI_SOURCE

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
