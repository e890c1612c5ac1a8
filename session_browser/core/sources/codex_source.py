"""Codex CLI rollouts as a :class:`~session_browser.core.sources.base.SessionSource`.

Files: every ``rollout-*.jsonl`` under the root (``YYYY/MM/DD/``, see
:func:`~.codex.codex_session_files`), named by their path relative to it. Thread names come
from ``session_index.jsonl`` in the root or the folder above it (``~/.codex`` for
``~/.codex/sessions``), else from the rollout's own ``thread_name_updated`` events; the
session id is the thread id the rollout's ``session_meta`` carries.

A grown rollout is read on from where the last read stopped when this source still holds
that read's state (as for Claude Code, :mod:`.resume`); otherwise it is read whole.
Read-only: files are opened ``rb`` and closed; nothing is written, locked or created under
the root. Automation: as for Claude Code (prompts an hour).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..files import real_dir, rel_below
from .base import Identity, Skip
from .claude.source import AgentSource, file_ident
from .codex import (
    CODEX_SOURCE,
    CodexParseState,
    CodexSession,
    default_codex_dir,
    read_codex_session,
    read_session_index,
)
from .named import agent_kind
from .resume import ResumeStates

CODEX_CONTENT_VERSION = "1"  # what the Codex reader puts in the rows; another value rebuilds
INDEX_NAME = "session_index.jsonl"


def _is_rollout(name: str) -> bool:
    return name.startswith("rollout-") and name.endswith(".jsonl")


class CodexSource(AgentSource[CodexParseState]):
    """The Codex rollouts under one root (see the module doc)."""

    kind = CODEX_SOURCE
    index_prefix = f"{CODEX_SOURCE}-"
    state_table: str | None = "codex_state"
    content_version: str | None = CODEX_CONTENT_VERSION

    def __init__(self, root: Path) -> None:
        self.root = root
        self._names: tuple[Identity | None, dict[str, str]] | None = None
        self._resume: ResumeStates[CodexParseState] = ResumeStates()
        #: What the last :meth:`list_files` did not take, by kind (as for Claude Code).
        self.refused: Mapping[str, int] = {}

    def list_files(self) -> dict[str, Identity]:
        out: dict[str, Identity] = {}
        if not self.root.is_dir():
            return out
        base = str(self.root)
        refused: dict[str, int] = {}
        for dirpath, dirnames, filenames in os.walk(base):
            # A symlinked folder is listed by os.walk but never walked into: counted.
            dirnames[:] = sorted(d for d in dirnames if real_dir(os.path.join(dirpath, d), refused))
            rel_dir = rel_below(dirpath, base)
            for name in sorted(filenames):
                if not _is_rollout(name):
                    continue
                ident = file_ident(os.path.join(dirpath, name), refused)
                if ident is not None:
                    rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
                    out[rel] = ident
        self.refused = refused
        return out

    def identities(self, names: Iterable[str]) -> dict[str, Identity | None]:
        return {
            name: file_ident(self.root / name) if _is_rollout(os.path.basename(name)) else None
            for name in names
        }

    def thread_names(self) -> dict[str, str]:
        """Thread names from the session index beside the root (read again when it changed)."""
        home = self.root if (self.root / INDEX_NAME).is_file() else self.root.parent
        ident = file_ident(home / INDEX_NAME)
        if self._names is None or self._names[0] != ident:
            self._names = (ident, read_session_index(home) if ident is not None else {})
        return self._names[1]

    def _read(
        self, name: str, prior: CodexParseState | None, include_hidden: bool = False
    ) -> CodexSession | Skip:
        try:
            return read_codex_session(
                self.root / name,
                names=self.thread_names(),
                prior=prior,
                include_hidden=include_hidden,
            )
        except OSError as exc:
            return Skip(f"unreadable: {exc.strerror or exc}")
        except (ValueError, RecursionError) as exc:  # pragma: no cover - defensive
            return Skip(f"unusable Codex rollout: {exc}")

    def named_files(self, session_id: str, names: set[str]) -> list[str]:
        want = f"-{session_id}.jsonl"
        return [n for n in self.file_order(names) if n.endswith(want)]


KIND = agent_kind(CODEX_SOURCE, CodexSource, default_codex_dir, "Codex CLI rollouts dir")
