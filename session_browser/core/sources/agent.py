"""What every coding agent's source shares (Claude Code, Codex, Gemini CLI, OpenCode, Kimi,
Aider, Cline / Roo Code, Goose, Copilot): files read in name order, the coding agents'
automation rule, and a hit's project from the session's cwd."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..model import JSONDict, SessionHit
from .base import RAW_KEPT, Identity, LinesSkipped, SessionDoc, SessionSource, Skip
from .pi.store import pi_is_automated, settle_automation

#: Why a read that holds no prompt or answer is no session, unless a reader says more.
NO_CONVERSATION = "no conversation (no prompt or answer)"


def settle_agent_hit(hit: SessionHit, data: JSONDict, kind: str) -> None:
    """Complete a hit on a coding agent's session read straight from its file: its project
    (the session's cwd), and the coding agents' automation rule (user turns an hour, as for
    Pi: the shared rule counts every message, which tool loops exceed)."""
    demoted = hit.automated
    settle_automation(hit, data)
    if demoted and not hit.automated:
        hit.explain["automation_rule"] = f"{kind}: user turns per hour"
    meta = data.get("metadata")
    cwd = meta.get("cwd") if isinstance(meta, dict) else None
    hit.project = cwd if isinstance(cwd, str) else None


class CodingAgentSource(SessionSource):
    """The read order, automation rule and hit completion of a coding agent's source; a
    subclass lists and reads its files."""

    kind: str

    def file_order(self, names: set[str]) -> list[str]:
        return sorted(names)

    def automated(self, data: JSONDict) -> bool | None:
        return pi_is_automated(data)

    def settle_hit(self, hit: SessionHit, data: JSONDict) -> None:
        settle_agent_hit(hit, data, self.kind)


@dataclass(frozen=True)
class AgentRead:
    """One session as a coding agent's source read it whole: the session, what was left out
    inside it, the bytes read when they were read in one piece (the vault keeps them when
    small), and why it is no session when it holds no turn."""

    data: JSONDict
    skipped: LinesSkipped = field(default_factory=LinesSkipped)
    raw: bytes | None = None
    empty: str = NO_CONVERSATION

    @property
    def has_turns(self) -> bool:
        return bool(self.data.get("messages") or self.data.get("archived_messages"))


def listed_file(path: str) -> bool:
    """Whether ``path`` is among the files ``os.walk`` lists (anything but a directory)."""
    return os.path.lexists(path) and not os.path.isdir(path)


def has_dirs(folder: str | os.PathLike[str], skip: tuple[str, ...]) -> bool:
    """Whether ``folder`` holds a folder (not a symlink) not named in ``skip``."""
    try:
        with os.scandir(folder) as entries:
            return any(e.is_dir(follow_symlinks=False) and e.name not in skip for e in entries)
    except OSError:
        return False


class WholeReadSource(CodingAgentSource):
    """A coding agent's source that reads a session whole every time (no resumed parse):
    it says how in :meth:`read_session`; parsing and loading follow from it. Read-only,
    and not watched unless a subclass says how (its sessions lie in a tree of dirs or inside
    one file: a database, a history), so every reconcile stats what it lists."""

    read_only = True
    watchable = False
    state_table: str | None = None
    # A session is read whole, with nothing kept but caches keyed by the files' identities:
    # a copy of the source in a worker process parses it as this one would (a first build
    # parses there while this process writes rows, as for Claude Code and Codex).
    parses_apart = True

    def __init__(self, root: Path) -> None:
        self.root = root
        #: What the last :meth:`list_files` did not take, by kind (symlinks, FIFOs...).
        self.refused: Mapping[str, int] = {}

    def read_session(self, name: str, include_hidden: bool) -> AgentRead | Skip:
        raise NotImplementedError

    def parse(self, name: str, ident: Identity, prior: bytes | None) -> SessionDoc | Skip:
        got = self.read_session(name, include_hidden=True)
        if isinstance(got, Skip):
            return got
        if not got.has_turns:
            return Skip(got.empty)
        raw = got.raw
        return SessionDoc(
            got.data,
            automated=pi_is_automated(got.data),
            skipped=got.skipped,
            raw=raw if raw is not None and len(raw) <= RAW_KEPT else None,
        )

    def load(self, name: str, *, include_hidden: bool = False) -> JSONDict | None:
        got = self.read_session(name, include_hidden=include_hidden)
        return None if isinstance(got, Skip) or not got.has_turns else got.data


class ListedSource(WholeReadSource):
    """A :class:`WholeReadSource` that remembers the sessions of its last listing, kept in
    step by :meth:`identities` (a watched reconcile asks only the changed names): a change
    that turns a folder into a session's may hide sessions listed below it."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self._names: set[str] = set()

    def identities(self, names: Iterable[str]) -> dict[str, Identity | None]:
        out: dict[str, Identity | None] = {}
        for name in names:
            out[name] = ident = self.identity(name)
            if ident is None:
                self._names.discard(name)
            else:
                self._names.add(name)
        return out

    def _listed_below(self, folder: str) -> bool:
        """Whether a session of the last listing lies in a folder below ``folder``
        (relative to the root, ``""`` for the root itself)."""
        top = f"{folder}/" if folder else ""
        return any(n.startswith(top) and "/" in n[len(top) :] for n in self._names)
