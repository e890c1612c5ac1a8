"""Claude Code transcripts as a :class:`~session_browser.core.sources.base.SessionSource`.

Files: the main transcripts under the root (``<project dir>/<file>.jsonl``, see
:func:`claude_session_files`), named by their path relative to it. A subagent file is no
session of its own: its identity is folded into its parent's (:meth:`ClaudeSource.identity`),
so a subagent run written or grown makes the index read the parent again, which attaches it
(newer builds' ``<stem>/subagents/agent-*.jsonl``, older builds' ``agent-*.jsonl`` beside the
main files, found by the parent's session id on their first line). Titles a ``summary`` line
gives across files are taken from the whole project folder (:func:`claude_summaries`).

A file that only grew is read on from where the last read stopped when this source still holds
that read's state (the app, indexing the transcripts being written: :mod:`..resume`);
otherwise it is read whole, streamed line by line. The session id is the one written in the
file, not its name.
Read-only: files are opened ``rb`` and closed; nothing is written, locked or created under
the root. Automation: Pi's rule (:func:`pi_is_automated`: more than 60 prompts an hour;
the shared rule counts every message, which any session with tool calls exceeds).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from ...files import loads, open_regular, real_dir, regular_lstat, rel_below
from ...model import JSONDict
from ..agent import CodingAgentSource
from ..base import LEARNED_SUFFIX, Identity, Learned, LinesSkipped, Retention, SessionDoc, Skip
from ..named import agent_kind
from ..pi.store import pi_is_automated
from ..resume import ResumeStates
from .places import (
    FIRST_LINE_LIMIT,
    claude_cleanup_days,
    default_claude_dir,
    sibling_subagents,
    stem_of,
    subagent_names,
)
from .reader import (
    CLAUDE_SOURCE,
    CONVERSATION_TYPES,
    ClaudeParseState,
    ClaudeSession,
    claude_summaries,
    read_claude_session,
    record_kind,
)

CLAUDE_CONTENT_VERSION = "1"  # what the Claude reader puts in the rows; another value rebuilds
_SIDE_DIRS = ("subagents", "tool-results")

_Listing = tuple[tuple[str, Identity], ...]


def file_ident(
    path: str | os.PathLike[str], refused: dict[str, int] | None = None
) -> Identity | None:
    """(size, mtime_ns, inode) of ``path`` when it is a regular file itself: a symlink (never
    followed), a FIFO, a device or a socket is None, and counted in ``refused``."""
    st = regular_lstat(path, refused)
    return None if st is None else (st.st_size, st.st_mtime_ns, st.st_ino)


def _is_main(name: str) -> bool:
    return name.endswith(".jsonl") and not name.startswith((".", "agent-"))


def _agent_file(name: str) -> bool:
    return name.startswith("agent-") and name.endswith(".jsonl")


def fold(own: Identity, parts: Iterable[Identity]) -> Identity:
    """The identity of a main file with its subagent files: it changes when any of them is
    written, added or removed (sizes summed, the latest mtime, the main file's inode)."""
    size, mtime, inode = own
    for part in parts:
        size += part[0]
        mtime = max(mtime, part[1])
    return (size, mtime, inode)


S = TypeVar("S")


class _Read(Protocol[S]):
    """What a reader's session record gives the source (Claude Code's and Codex's)."""

    data: JSONDict
    skipped_lines: int
    partial_tail: bool
    unknown_records: dict[str, int]
    resumed: bool
    state: S
    raw: bytes | None


class AgentSource(CodingAgentSource, Generic[S]):
    """What the Claude Code and Codex sources share: read-only JSONL transcripts under a
    tree of dirs, read on from a kept parse state when a file grew (:mod:`..resume`), the
    coding agents' automation rule, and a hit's project from the session's cwd. A subclass
    lists its files and reads one (:meth:`_read`)."""

    kind: str
    read_only = True
    # A tree of dirs, all watched: a reconcile after the first stats what changed.
    watchable = True
    watch_tree = True
    # A first build has no parse state to resume, and a copy of this source in a worker
    # process parses every file as this one would; the states it keeps stay there (a later
    # change to one of those files is read whole once, see :mod:`..resume`).
    parses_apart = True
    _resume: ResumeStates[S]

    def _read(self, name: str, prior: S | None, include_hidden: bool = False) -> _Read[S] | Skip:
        raise NotImplementedError

    def parse(self, name: str, ident: Identity, prior: bytes | None) -> SessionDoc | Skip:
        # With the hidden parts: the index keeps them apart, for in:tools.
        session = self._read(name, self._resume.take(name, prior), include_hidden=True)
        if isinstance(session, Skip):
            return session
        data = session.data
        if not data.get("messages") and not data.get("archived_messages"):
            reason = empty_reason(session.skipped_lines, session.unknown_records)
            return Skip(reason, resumed=session.resumed)
        return SessionDoc(
            data,
            automated=pi_is_automated(data),
            state=self._resume.keep(name, session.state),
            resumed=session.resumed,
            skipped=LinesSkipped(
                bad=session.skipped_lines - (1 if session.partial_tail else 0),
                tail=session.partial_tail,
                unknown=dict(session.unknown_records),
            ),
            raw=session.raw,
        )

    def load(self, name: str, *, include_hidden: bool = False) -> JSONDict | None:
        """The session of file ``name`` (``include_hidden``: with tool calls and results,
        reasoning and bookkeeping as hidden parts of the same turns, for the viewer)."""
        session = self._read(name, None, include_hidden)
        if isinstance(session, Skip):
            return None
        data = session.data
        return data if data.get("messages") or data.get("archived_messages") else None


class ClaudeSource(AgentSource[ClaudeParseState]):
    """The Claude Code transcripts under one root (see the module doc)."""

    kind = CLAUDE_SOURCE
    index_prefix = f"{CLAUDE_SOURCE}-"
    state_table: str | None = "claude_state"
    content_version: str | None = CLAUDE_CONTENT_VERSION
    watch_skip: tuple[str, ...] = ("tool-results",)  # (what a tool printed: no transcript there)
    # Each main file's summary lines, by its identity: a new process reads only the files
    # changed since (see :meth:`_folder_summaries`).
    learned_table: str | None = f"{CLAUDE_SOURCE}{LEARNED_SUFFIX}"

    def __init__(self, root: Path) -> None:
        self.root = root
        # folder -> (its agent-* files with identities, parent session id -> those files)
        self._siblings: dict[str, tuple[_Listing, dict[str, list[Path]]]] = {}
        # main file path -> (identity, leafUuid -> summary of its summary lines)
        self._summaries: dict[str, tuple[Identity, dict[str, str]]] = {}
        # the main file paths of ``_summaries`` read since :meth:`learned` last said them
        self._learned: set[str] = set()
        # main file path -> session id written in it (cached by identity)
        self._sids: dict[str, tuple[Identity, str | None]] = {}
        # folder -> its main files and identities, as the last list_files found them
        self._listed: dict[str, list[tuple[Path, Identity]]] = {}
        # folder -> (that listing, the summaries of all its main files)
        self._merged: dict[str, tuple[list[tuple[Path, Identity]], dict[str, str]]] = {}
        # folder -> ((inode, mtime_ns) of the folder, the agent-* names it held then)
        self._agents: dict[str, tuple[tuple[int, int], list[str]]] = {}
        # folder -> its older subagent files by parent id, as the last list_files found them
        self._listed_siblings: dict[str, dict[str, list[Path]]] = {}
        self._resume: ResumeStates[ClaudeParseState] = ResumeStates()
        #: What the last :meth:`list_files` did not take, by kind (symlinks are never
        #: followed; FIFOs, devices and sockets never opened): ``index status`` says it.
        self.refused: Mapping[str, int] = {}

    # ------------------------------------------------------------------ listing

    def list_files(self) -> dict[str, Identity]:
        out: dict[str, Identity] = {}
        root = self.root
        if not root.is_dir():
            return out
        base = str(root)
        self._listed.clear()
        self._listed_siblings.clear()
        refused: dict[str, int] = {}
        for dirpath, dirnames, filenames in os.walk(base):
            # A symlinked folder is listed by os.walk but never walked into: counted.
            dirnames[:] = sorted(
                d
                for d in dirnames
                if d not in _SIDE_DIRS and real_dir(os.path.join(dirpath, d), refused)
            )
            subdirs = set(dirnames)
            rel_dir = rel_below(dirpath, base)
            folder = Path(dirpath)
            mains = sorted(n for n in filenames if _is_main(n))
            if not mains:
                continue
            agents = sorted(n for n in filenames if _agent_file(n))
            siblings = self._sibling_map(folder, agents, refused)
            listed: list[tuple[Path, Identity]] = []
            for name in mains:
                path = folder / name
                own = file_ident(path, refused)
                if own is None:
                    continue
                listed.append((path, own))
                subs = self._subagents(path, own, name[:-6] in subdirs, siblings, refused)
                rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
                out[rel] = fold(own, (ident for _p, ident in subs))
            self._listed[dirpath] = listed
            self._listed_siblings[dirpath] = siblings
        self.refused = refused
        return out

    def learned(self) -> dict[str, Learned]:
        """The summary lines (``leafUuid -> summary``) of the main files read since the
        last call, by name, with the identity they were read at."""
        base = str(self.root)
        out = {
            rel_below(path, base).replace(os.sep, "/"): self._summaries[path]
            for path in sorted(self._learned)
            if path in self._summaries
        }
        self._learned.clear()
        return out

    def relearn(self, known: Mapping[str, Learned]) -> None:
        """The summary lines kept of main files (see :meth:`learned`), where this process
        has read none yet; each is used only while its file keeps that identity."""
        for name, learned in known.items():
            self._summaries.setdefault(os.path.join(self.root, name), learned)

    def learn_for_copies(self) -> None:
        """The summary lines of every listed folder (each file is read for them once, here,
        not again in each worker's copy)."""
        for folder in list(self._listed):
            self._folder_summaries(Path(folder))

    def changed_names(self, paths: Iterable[str]) -> set[str] | None:
        """The main files a change to ``paths`` touched: a main file itself, or the one
        whose ``<stem>/subagents/`` holds a changed file; None for an older build's subagent
        file beside its parent (which parent, its first lines say: a full pass reads them)."""
        out: set[str] = set()
        for path in paths:
            parts = path.split("/")
            if "subagents" in parts[:-1]:
                at = parts.index("subagents")
                if at:
                    out.add("/".join([*parts[: at - 1], parts[at - 1] + ".jsonl"]))
            elif _agent_file(parts[-1]):
                return None
            elif _is_main(parts[-1]):
                out.add(path)
        return out

    def identities(self, names: Iterable[str]) -> dict[str, Identity | None]:
        out = {name: self.identity(name) for name in names}
        self._relist(out)
        return out

    def _relist(self, names: Iterable[str]) -> None:
        """Bring the folder listings the last :meth:`list_files` kept (which the folders'
        summary lines are read by) in step with main files ``names`` as they are now."""
        by_folder: dict[str, list[str]] = {}
        for name in names:
            path = os.path.join(self.root, name)
            by_folder.setdefault(os.path.dirname(path), []).append(path)
        for folder, paths in by_folder.items():
            listed = self._listed.get(folder)
            if listed is None:
                continue
            now = {str(p): (p, ident) for p, ident in listed}
            for path in paths:
                ident = file_ident(path)
                if ident is None or not _is_main(os.path.basename(path)):
                    now.pop(path, None)
                else:
                    now[path] = (Path(path), ident)
            self._listed[folder] = [now[k] for k in sorted(now)]  # (a new list: merged again)

    def identity(self, name: str) -> Identity | None:
        """The identity of main file ``name`` with its subagent files folded in (None: not a
        main transcript)."""
        if not _is_main(os.path.basename(name)) or "subagents" in name.split("/")[:-1]:
            return None
        # (strings, not Paths: a search asks this of every hit it shows)
        path = os.path.join(self.root, name)
        own = file_ident(path)
        if own is None:
            return None
        subs = self._subagents(path, own, True, self._sibling_map(os.path.dirname(path)))
        return fold(own, (ident for _p, ident in subs))

    @property
    def part_files(self) -> Callable[[str], list[Path]] | None:
        return self.subagent_files

    def subagent_files(self, name: str) -> list[Path]:
        """The subagent files of main file ``name`` as they are now (the index reads them
        with it; the vault keeps them with it)."""
        # (strings, not Paths: the vault asks this of every file a first build keeps)
        path = os.path.join(self.root, name)
        folder = os.path.dirname(path)
        siblings = self._listed_siblings.get(folder)  # not the folder listed again
        if siblings is None:
            siblings = self._sibling_map(folder)
        if not siblings and not real_dir(stem_of(path)):
            return []  # (nothing to keep with it: its own identity is not needed)
        own = file_ident(path)
        if own is None:
            return []
        return [p for p, _ident in self._subagents(path, own, True, siblings)]

    def _subagents(
        self,
        path: Path | str,
        own: Identity,
        has_folder: bool,
        siblings: dict[str, list[Path]],
        refused: dict[str, int] | None = None,
    ) -> list[tuple[Path, Identity]]:
        """The subagent files of main file ``path`` with their identities: those in
        ``<stem>/subagents/`` (looked for when ``has_folder``) and its ``siblings``; what is
        not a regular file in a real folder is left out (counted in ``refused``)."""
        out: list[tuple[Path, Identity]] = []
        if has_folder:
            names = [n for n in subagent_names(path, refused) if _agent_file(n)]
            folder = Path(path).with_suffix("") / "subagents"
            for n in names:
                ident = file_ident(folder / n, refused)
                if ident is not None:
                    out.append((folder / n, ident))
        if siblings:
            sid = self._session_id(Path(path), own)
            for sub in siblings.get(sid or "", []):
                ident = file_ident(sub)
                if ident is not None:
                    out.append((sub, ident))
        return out

    def _sibling_map(
        self,
        folder: Path | str,
        names: list[str] | None = None,
        refused: dict[str, int] | None = None,
    ) -> dict[str, list[Path]]:
        """Older builds' ``agent-*.jsonl`` files of ``folder`` (``names``: those files, when
        known) by parent session id; their first lines are read again only when the folder's
        agent files changed. Links and special files are left out (counted in ``refused``)."""
        if names is None:
            names = self._agent_names(folder)
        if not names:
            return {}
        folder = Path(folder)
        listing = tuple((n, i) for n in names if (i := file_ident(folder / n, refused)) is not None)
        key = str(folder)
        cached = self._siblings.get(key)
        if cached is not None and cached[0] == listing:
            return cached[1]
        found = sibling_subagents(folder)
        self._siblings[key] = (listing, found)
        return found

    def _agent_names(self, folder: Path | str) -> list[str]:
        """The ``agent-*.jsonl`` names of ``folder``, listed again only when its entries
        changed (its mtime; a search checks every hit's identity, so never a listing of a
        big project folder for each)."""
        try:
            st = os.stat(folder)
        except OSError:
            return []
        key, stamp = str(folder), (st.st_ino, st.st_mtime_ns)
        cached = self._agents.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            names = sorted(n for n in os.listdir(folder) if _agent_file(n))
        except OSError:
            return []
        self._agents[key] = (stamp, names)
        return names

    def _session_id(self, path: Path, own: Identity) -> str | None:
        """The session id a main file's lines carry (for matching older subagent files)."""
        key = str(path)
        cached = self._sids.get(key)
        if cached is not None and cached[0] == own:
            return cached[1]
        sid = first_session_id(path)
        self._sids[key] = (own, sid)
        return sid

    def _folder_summaries(self, folder: Path) -> dict[str, str]:
        """``leafUuid -> summary`` over the main files of ``folder`` (as the last
        :meth:`list_files` found them, else as they are now); each file's summary lines are
        read again only when it changed."""
        listed = self._listed.get(str(folder))
        if listed is not None:
            merged = self._merged.get(str(folder))
            if merged is not None and merged[0] is listed:
                return merged[1]
        else:
            try:
                names = sorted(n for n in os.listdir(folder) if _is_main(n))
            except OSError:
                return {}
            listed = [(folder / n, i) for n in names if (i := file_ident(folder / n)) is not None]
        out: dict[str, str] = {}
        for path, ident in listed:
            cached = self._summaries.get(str(path))
            if cached is None or cached[0] != ident:
                cached = (ident, claude_summaries([path]))
                self._summaries[str(path)] = cached
                self._learned.add(str(path))
            out.update(cached[1])
        if str(folder) in self._listed:
            self._merged[str(folder)] = (listed, out)
        return out

    # ------------------------------------------------------------------ reading

    def _read(
        self, name: str, prior: ClaudeParseState | None, include_hidden: bool = False
    ) -> ClaudeSession | Skip:
        path = self.root / name
        own = file_ident(path)
        if own is None:
            return Skip("unreadable: not a regular file")
        siblings = self._listed_siblings.get(str(path.parent))
        if siblings is None:
            siblings = self._sibling_map(path.parent)
        mine = siblings.get(self._session_id(path, own) or "", []) if siblings else []
        try:
            session = read_claude_session(
                path, sibling_agents=mine, prior=prior, include_hidden=include_hidden
            )
            titles = session.state.titles
            if {"custom-title", "ai-title"} & titles.keys():
                return session  # titled: the folder's summary lines cannot change it
            # Untitled: a summary line anywhere in the folder may name one of its turns.
            folder = self._folder_summaries(path.parent)
            if "summary" not in titles and not (
                folder and any(u in folder for u in session.state.uuids)
            ):
                return session  # none does, and it has none of its own: the same title
            # Assembled again from the state just read (nothing read twice but subagents).
            again = read_claude_session(
                path,
                summaries=folder,
                sibling_agents=mine,
                prior=session.state,
                include_hidden=include_hidden,
            )
            again.resumed = session.resumed
            if again.end_offset == session.end_offset:  # nothing appended since: the same bytes
                again.raw = session.raw
            return again
        except OSError as exc:
            return Skip(f"unreadable: {exc.strerror or exc}")
        except (ValueError, RecursionError) as exc:  # pragma: no cover - defensive
            return Skip(f"unusable Claude Code transcript: {exc}")

    def named_files(self, session_id: str, names: set[str]) -> list[str]:
        want = f"{session_id}.jsonl"
        return [n for n in self.file_order(names) if n.rsplit("/", 1)[-1] == want]


def first_session_id(path: Path, lines: int = 64) -> str | None:
    """The ``sessionId`` of the first conversation line among the first ``lines`` lines of
    a main transcript (the id its lines carry; the reader takes the same one)."""
    try:
        with open_regular(path) as fh:
            for _ in range(lines):
                raw = fh.readline(FIRST_LINE_LIMIT)
                if not raw:
                    break
                try:
                    obj = loads(raw)
                except (ValueError, RecursionError):
                    continue
                if isinstance(obj, dict) and record_kind(obj) in CONVERSATION_TYPES:
                    sid = obj.get("sessionId")
                    if isinstance(sid, str) and sid:
                        return sid
    except OSError:
        return None
    return None


def empty_reason(skipped_lines: int, unknown: dict[str, int]) -> str:
    """Why a transcript with no turn is no session."""
    if skipped_lines and not unknown:
        return f"no conversation: {skipped_lines} line(s) are not JSON records"
    parts = [f"{count} {kind}" for kind, count in sorted(unknown.items())]
    extra = f" ({', '.join(parts)} record(s) of unknown types)" if parts else ""
    bad = f", {skipped_lines} unreadable line(s)" if skipped_lines else ""
    return f"no conversation (no prompt or answer){extra}{bad}"


def claude_retention() -> Retention:
    """Claude Code deletes transcripts older than ``cleanupPeriodDays`` at start-up."""
    days, path, set_here = claude_cleanup_days()
    where = f"cleanupPeriodDays in {path}" if set_here else f"the default; {path} does not set it"
    return Retention(f"Claude Code deletes transcripts older than {days} days ({where})", True)


KIND = agent_kind(
    CLAUDE_SOURCE, ClaudeSource, default_claude_dir, "Claude Code transcripts dir", claude_retention
)
