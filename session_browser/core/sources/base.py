"""What every session source offers: :class:`SessionSource`, and :class:`SourceKind`, one row
of the table of source kinds (:data:`session_browser.core.sources.SOURCES`).

A source reads one format from one root directory. It lists its session files with their
identity, parses one file (from a saved parse state when the format allows it) into a
:class:`SessionDoc` or a skip reason, loads one session for reading, says whether it is
read-only, and gives its automation rule and default location. The index
(:class:`~session_browser.core.index.SqliteSessionStore`) calls these and nothing else of a
format, so a new format is one reader module plus one row in the table.

Every session a source returns is a PraisonAI-shaped dict (``session_id``, ``messages``,
``archived_messages``, ``metadata``...), so the shared recall code scores, projects and
summarises it unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from ..model import JSONDict, SessionHit

if TYPE_CHECKING:
    from ..protocols import RecallStore

#: A file's identity: (size, mtime_ns, inode). A file whose identity changed is read again.
Identity = tuple[int, int, int]


@dataclass
class LinesSkipped:
    """What was left out inside a file that is still a session: unreadable lines (not JSON,
    invalid UTF-8, too long), an unfinished last line that does not parse (a line being
    written), and records of types the reader does not know, by type."""

    bad: int = 0
    tail: bool = False
    unknown: dict[str, int] = field(default_factory=dict)

    @property
    def unknown_count(self) -> int:
        return sum(self.unknown.values())

    @property
    def kinds(self) -> str:
        """The unknown record types, comma-separated."""
        return ",".join(sorted(k.replace(",", " ") for k in self.unknown))

    def __bool__(self) -> bool:
        return bool(self.bad or self.tail or self.unknown)


#: A file up to this size hands its bytes to the vault with its parse (so an index batch
#: holds at most its file count times this; a bigger file is streamed from disk by the vault).
RAW_KEPT = 64 << 10


@dataclass
class SessionDoc:
    """One session file parsed.

    ``data``: the PraisonAI-shaped session dict. ``automated``: the source's own automation
    rule applied to it (None: the source has none, and the index's default rules apply: the
    documented message rate and machine pacing). ``state``: what lets the next parse of the
    same file resume where this one stopped (None: the format is read whole every time);
    ``resumed``: whether this parse resumed (None when the source never resumes).
    ``skipped``: what was left out inside the file (``index status`` says it). ``raw``: the
    file's whole bytes as parsed, when the source read them in one piece and they are small
    (:data:`RAW_KEPT`): the vault keeps them instead of reading the file again.
    """

    data: JSONDict
    automated: bool | None = None
    state: bytes | None = None
    resumed: bool | None = None
    skipped: LinesSkipped | None = None
    raw: bytes | None = None


@dataclass
class Skip:
    """Why a file cannot be read as a session (``resumed`` as for :class:`SessionDoc`: a file
    read whole that turned out not to be a session still counts as a read)."""

    reason: str
    resumed: bool | None = None


#: How a source's :attr:`SessionSource.learned_table` is named: ``<kind>_learned_state``.
LEARNED_SUFFIX = "_learned_state"
#: What a source learned of one file (:meth:`SessionSource.learned`): the file's identity
#: when it was read, and texts by key.
Learned = tuple[Identity, dict[str, str]]


class SessionSource(Protocol):
    """The file-level reads of one format under one root directory (see the module doc).

    A source class subclasses it, so it has the optional capabilities' defaults
    (:attr:`parses_apart`, :attr:`part_files`, :meth:`kept_whole`, :meth:`identity`) unless
    it declares them."""

    #: The source kind (``praisonai``, ``pi``, ...): hits and summaries carry it, and the
    #: query's ``source:`` filter names it.
    kind: str
    #: The directory the files are under (file names are relative to it, ``/``-separated).
    root: Path
    #: True when the files belong to another tool and are never written.
    read_only: bool
    #: True when an inotify watch can follow the files (one reconcile after another then
    #: stats only the names the watch reports, see :meth:`changed_names`).
    watchable: bool
    #: What the index file of this source is called: ``<prefix><dir key>.sqlite3``.
    index_prefix: str
    #: Where the index keeps each file's parse state (None: the format keeps none), and the
    #: version of what ``parse`` produces (another value rebuilds the index; None: the
    #: index's schema version says it all).
    state_table: str | None
    content_version: str | None
    #: Optional: True when parsing one file needs nothing kept in this process (no parse
    #: state), so a copy of the source in a worker process parses as this one would (a first
    #: build parses there).
    parses_apart: bool = False
    #: Optional: where the index keeps what the source learned of each file beyond that
    #: file's own parse (a row per file; Claude Code: a transcript's summary lines, which
    #: may title the sessions of other files), so a new process need not read every file
    #: again to learn it (:meth:`learned`, :meth:`relearn`); None: nothing. Its name ends
    #: in :data:`LEARNED_SUFFIX`: forgetting a file drops its rows as it drops parse states,
    #: and forgetting a text drops them all (any of them may hold it).
    learned_table: str | None = None
    #: Optional: True when the files are in a tree of directories, all of them watched (not
    #: only :attr:`root`); the directories named in :attr:`watch_skip` (and what is below
    #: them) are not.
    watch_tree: bool = False
    watch_skip: tuple[str, ...] = ()
    #: Optional: what the last listing of the files did not take, by kind (symlinks, never
    #: followed; FIFOs, devices, sockets); empty for a source that does not count them.
    refused: Mapping[str, int] = MappingProxyType({})

    @property
    def part_files(self) -> Callable[[str], list[Path]] | None:
        """Optional: the part files read and kept with a session file (Claude Code's
        subagent runs), by the session file's name; None: the format has none."""
        return None

    def kept_whole(self, name: str) -> bool:
        """Optional: whether session ``name`` is no file of its own (rows of a database, a
        launch inside a history file, a session spread over a folder), so the vault keeps
        the session as this source reads it (:mod:`~..vault.whole`) rather than a file's
        bytes. False by default: a session is its file."""
        return False

    def identity(self, name: str) -> Identity | None:
        """Optional: the identity of session ``name`` as it is now (None: it is gone), which
        the index checks before it trusts or replaces what it holds of ``name``. By default
        the file ``name`` under :attr:`root` stat'ed; a source whose sessions are no files of
        their own (OpenCode's database) gives theirs."""
        try:
            st = os.stat(self.root / name)
        except (OSError, ValueError):
            return None
        return (st.st_size, st.st_mtime_ns, st.st_ino)

    def learned(self) -> dict[str, Learned]:
        """Optional: what this source learned of files since the last call, by name: each
        file's identity when it was read, and texts by key (for :attr:`learned_table`)."""
        return {}

    def relearn(self, known: Mapping[str, Learned]) -> None:
        """Optional: what :attr:`learned_table` kept (of :meth:`learned`; of files perhaps
        changed or gone since: the source checks their identities)."""
        return None

    def learn_for_copies(self) -> None:
        """Optional: learn once, here, what each copy of this source made for a worker
        process (:attr:`parses_apart`) would otherwise learn again of every listed file
        (Claude Code: its folders' summary lines); called before the copies are made."""
        return None

    def changed_names(self, paths: Iterable[str]) -> set[str] | None:
        """Optional: the sessions a change to the files ``paths`` (relative to :attr:`root`,
        as a watch reports them) may have changed, by name; None when only a full pass can
        tell. By default the paths themselves: a session is its file (:meth:`identities`
        says which of them are sessions)."""
        return set(paths)

    def list_files(self) -> dict[str, Identity]:
        """Every session file now, by name relative to :attr:`root`, with its identity."""
        ...

    def identities(self, names: Iterable[str]) -> dict[str, Identity | None]:
        """The identity of each of ``names`` now (None: not a session file of this source)."""
        ...

    def parse(self, name: str, ident: Identity, prior: bytes | None) -> SessionDoc | Skip:
        """File ``name`` as a session document, or why it cannot be read as one (with its
        hidden parts in ``metadata.hidden``, which the index keeps apart for ``in:tools``).

        ``prior`` is the ``state`` of an earlier parse of the same file (None: none kept);
        a source that resumes reads only what was appended when the file only grew."""
        ...

    def load(self, name: str, *, include_hidden: bool = False) -> JSONDict | None:
        """The session dict of file ``name`` for reading (None when it cannot be read);
        ``include_hidden``: with the parts a reader does not see by default (tool calls and
        results, reasoning) in ``metadata.hidden``, for ``in:tools`` and the viewer."""
        ...

    def file_order(self, names: set[str]) -> list[str]:
        """``names`` in the order the source's scanning store reads them (equal scores then
        tie the same way whether a search used the index or not)."""
        ...

    def automated(self, data: JSONDict) -> bool | None:
        """The source's own automation rule (None: the default rules apply)."""
        ...

    def settle_hit(self, hit: SessionHit, data: JSONDict) -> None:
        """Complete a hit read straight from the file with what the source knows (its
        automation rule, its project)."""
        ...


#: The file of a session id as an index knows it (None: it does not).
Locate = Callable[[str], Path | None]


@dataclass(frozen=True)
class Retention:
    """What deletes a kind's sessions where its agent keeps them: ``text``, one sentence a
    user reads (``doctor`` says it); ``deletes``: whether the agent deletes them by itself."""

    text: str
    deletes: bool


@dataclass(frozen=True)
class SourceKind:
    """One row of the table of source kinds: how the CLI, the app, the tool and the
    benchmark name, find and open stores of one format.

    ``prefix``: how ``--store`` names a dir of this kind (``pi:DIR``; None for the default
    kind, named by a bare ``DIR``). ``default_dirs(cwd)``: the dirs read when no store is
    named; ``only_if_present``: whether those are used only when they exist.
    ``source(root)``: the :class:`SessionSource` over a dir. ``describe``: what a missing
    dir is called in an error. Which stores open over a dir is decided in one place,
    :mod:`session_browser.core.open`; a kind declares what it brings there:
    ``open_scan(root)``, its own scanning store (Pi's viewer with branches; without one, a
    scanning store over the source), and ``reader(source, locate)``, what an index over its
    files reads sessions through (``locate``: the file of a session id as the index knows
    it; without one, the scanning store). A kind that is not ``read_only`` is PraisonAI's
    JSON store, the only one written. ``retention()``: what deletes its sessions, read from
    the agent's settings now (None: nothing known deletes them).
    """

    name: str
    prefix: str | None
    read_only: bool
    default_dirs: Callable[[Path | None], list[Path]]
    only_if_present: bool
    source: Callable[[Path], SessionSource]
    describe: str
    open_scan: Callable[[Path], RecallStore] | None = None
    reader: Callable[[SessionSource, Locate], Any] | None = None
    retention: Callable[[], Retention] | None = None

    def spec_text(self, path: str | os.PathLike[str]) -> str:
        """How to name a dir of this kind on the command line."""
        return f"{self.prefix}{os.fspath(path)}" if self.prefix else os.fspath(path)
