"""Aider chat histories as a read-only source.

Where they live
    Aider appends to ``.aider.chat.history.md`` in the repo it runs in (its git root, else the
    current dir; ``--chat-history-file`` / ``AIDER_CHAT_HISTORY_FILE`` move it). There is no
    central place: a store of this kind is a repo dir or a dir of repos (``aider:DIR``; the
    history files of the dir and of the dirs up to :data:`DEPTH` levels below it, hidden dirs
    and ``node_modules`` left out), and ``aider:`` alone names the roots ``settings.json``
    lists in ``aider_roots``.

The format (read from aider's ``aider/io.py`` and ``aider/reasoning_tags.py`` at 5dc9490b)
    Each launch appends ``# aider chat started at YYYY-MM-DD HH:MM:SS`` (local time, the only
    time in the file). What the user typed is written as ``#### `` lines (one per line of a
    multi-line prompt; ``<blank>`` for an empty one), aider's own output (banners, warnings,
    errors, y/n questions with their answers, ``Applied edit``, ``Commit``, token counts) as
    ``> `` lines, and the model's reply as plain Markdown, with a reasoning model's thinking
    between ``<thinking-content-<hex>>`` and ``</thinking-content-<hex>>``.

The mapping
    One history file is one session (the index and the vault know a session as one file, so
    each launch cannot be a session of its own): its id is ``aider-<hash of the file's
    path>``, its launches follow one another, each turn stamped with the time its launch
    started (``launch`` in its metadata), and a launch with no prompt (only its banner) adds
    nothing. A run of ``####`` lines is a user turn, the reply after it an assistant turn;
    aider's ``>`` output and the thinking are hidden parts. ``cwd``/``project``: the history
    file's dir. No compaction is written to the file (aider summarises its context in
    memory) and aider has no resume command for a past chat.

Nothing here writes, locks, renames or creates anything: files are read whole (``rb``).
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..files import read_file_bytes, real_dir
from ..model import JSONDict, SessionHit
from ..settings import load_settings
from .base import RAW_KEPT, Identity, LinesSkipped, Retention, SessionDoc, Skip, SourceKind
from .claude.source import file_ident, settle_agent_hit
from .claude.transcript import Turn, short, split_compaction
from .pi.store import pi_is_automated
from .view import session_dict

AIDER_SOURCE = "aider"
AIDER_CONTENT_VERSION = "1"
HISTORY = ".aider.chat.history.md"
#: How many dir levels below a store's dir are searched for history files.
DEPTH = 3
SKIP_DIRS = frozenset({"node_modules", "__pycache__", "venv"})
MAX_FILE_BYTES = 256 << 20
_HEADER = re.compile(rb"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)[ \t]*\r?$", re.M)
_THINK_OPEN = re.compile(r"^\s*<(thinking-content-[0-9a-f]+)>\s*$")


def aider_roots() -> list[Path]:
    """The dirs ``settings.json`` lists in ``aider_roots`` (repos, or dirs of repos)."""
    return [Path(p).expanduser() for p in load_settings().aider_roots]


# ---------------------------------------------------------------------- launches


@dataclass(frozen=True)
class Launch:
    """One launch in a history file: its start time as written ('' for text before the
    first header) and where its bytes are."""

    started: str
    start: int
    end: int


def launches(raw: bytes) -> list[Launch]:
    """The launches of a history file's bytes (text before the first header, as in a file
    whose start was cut, is a launch of its own with no time)."""
    heads = list(_HEADER.finditer(raw))
    out: list[Launch] = []
    if not heads or raw[: heads[0].start()].strip():
        out.append(Launch("", 0, heads[0].start() if heads else len(raw)))
    for i, match in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(raw)
        out.append(Launch(match.group(1).decode(), match.start(), end))
    return out


def _epoch(started: str) -> float | None:
    try:
        return time.mktime(time.strptime(started, "%Y-%m-%d %H:%M:%S"))
    except (ValueError, OverflowError):
        return None


@dataclass
class AiderRead:
    turns: list[Turn] = field(default_factory=list)
    hidden_records: dict[str, int] = field(default_factory=dict)


def read_launch(text: str, stamp: float | None) -> AiderRead:
    """The turns of one launch's text."""
    read = AiderRead()
    pending: list[JSONDict] = []  # hidden parts seen before the first turn
    user: list[str] | None = None  # the prompt being read
    reply: list[str] = []
    think: list[str] | None = None
    think_tag = ""

    def count(key: str) -> None:
        read.hidden_records[key] = read.hidden_records.get(key, 0) + 1

    def hide(part: JSONDict) -> None:
        (read.turns[-1].hidden if read.turns else pending).append(part)

    def add(role: str, text: str) -> None:
        turn = Turn(role, stamp, [text])
        turn.hidden[:0] = pending
        pending.clear()
        read.turns.append(turn)

    def end_reply() -> None:
        body = "\n".join(reply).strip()
        reply.clear()
        if body:
            if read.turns and read.turns[-1].role == "assistant":
                read.turns[-1].texts.append(body)  # a reply resumed after aider's output
            else:
                add("assistant", body)

    def end_prompt() -> None:
        nonlocal user
        prompt = "\n".join(user or []).strip()
        user = None
        if prompt and prompt != "<blank>":
            add("user", prompt)
        else:
            count("prompt/blank")

    for line in text.splitlines():
        bare = line.rstrip()
        if think is not None:
            if bare.strip() == f"</{think_tag}>":
                end_reply()
                hide({"type": "thinking", "text": short("\n".join(think).strip())})
                think = None
            else:
                think.append(bare)
            continue
        if bare.startswith("#### ") or bare == "####":
            if user is None:
                end_reply()
                user = []
            user.append(bare[5:])
            continue
        if user is not None:
            end_prompt()
        if bare.startswith(">"):
            end_reply()
            count("output")
            hide({"type": "custom", "text": short(bare[1:].strip())})
        elif bare.startswith("# aider chat started at "):
            continue
        elif (opened := _THINK_OPEN.match(bare)) is not None:
            end_reply()
            think, think_tag = [], opened.group(1)
        else:
            reply.append(bare)
    if think is not None:
        hide({"type": "thinking", "text": short("\n".join(think).strip())})
    if user is not None:
        end_prompt()
    end_reply()
    return read


def _session_id(path: Path) -> str:
    return "aider-" + hashlib.sha256(os.fsencode(os.path.abspath(path))).hexdigest()[:16]


def read_history(
    path: Path, *, include_hidden: bool = False, raw: bytes | None = None
) -> tuple[JSONDict, AiderRead]:
    """The session of the history file ``path`` (``raw``: its bytes, when read already).
    Raises ``OSError`` when it cannot be read."""
    if raw is None:
        raw = read_file_bytes(path, max_bytes=MAX_FILE_BYTES, follow_links=False)
    read = AiderRead()
    for launch in launches(raw):
        stamp = _epoch(launch.started)
        one = read_launch(raw[launch.start : launch.end].decode("utf-8", "replace"), stamp)
        for turn in one.turns:
            if launch.started:
                turn.meta["launch"] = launch.started
        read.turns.extend(one.turns)
        for key, n in one.hidden_records.items():
            read.hidden_records[key] = read.hidden_records.get(key, 0) + n
    if not include_hidden:
        for turn in read.turns:
            turn.hidden = []
    archived, active, last = split_compaction(read.turns, include_hidden, "aider_compaction")
    cwd = os.path.dirname(os.path.abspath(path))
    info: JSONDict = {
        "source": AIDER_SOURCE,
        "cwd": cwd,
        "project": cwd,
        "hidden_records": dict(read.hidden_records),
    }
    stamps = [t.timestamp for t in read.turns if t.timestamp is not None]
    data = session_dict(
        _session_id(path),
        active=active,
        archived=archived,
        created=min(stamps) if stamps else None,
        updated=max(stamps) if stamps else None,
        meta=info,
        last_compaction=last,
    )
    return data, read


# ---------------------------------------------------------------------- source


class AiderSource:
    """The Aider chat histories under one root (see the module doc)."""

    kind = AIDER_SOURCE
    read_only = True
    watchable = False
    index_prefix = f"{AIDER_SOURCE}-"
    state_table: str | None = None
    content_version: str | None = AIDER_CONTENT_VERSION

    def __init__(self, root: Path) -> None:
        self.root = root
        self.refused: dict[str, int] = {}

    def list_files(self) -> dict[str, Identity]:
        out: dict[str, Identity] = {}
        if not self.root.is_dir():
            return out
        base = str(self.root)
        refused: dict[str, int] = {}
        for dirpath, dirnames, filenames in os.walk(base):
            rel = os.path.relpath(dirpath, base)
            depth = 0 if rel == "." else rel.count(os.sep) + 1
            dirnames[:] = (
                []
                if depth >= DEPTH
                else sorted(
                    d
                    for d in dirnames
                    if not d.startswith(".")
                    and d not in SKIP_DIRS
                    and real_dir(os.path.join(dirpath, d), refused)
                )
            )
            if HISTORY in filenames:
                name = HISTORY if rel == "." else f"{rel}/{HISTORY}".replace(os.sep, "/")
                ident = file_ident(os.path.join(dirpath, HISTORY), refused)
                if ident is not None:
                    out[name] = ident
        self.refused = refused
        return out

    def identities(self, names: Iterable[str]) -> dict[str, Identity | None]:
        return {
            n: file_ident(self.root / n) if n.rsplit("/", 1)[-1] == HISTORY else None for n in names
        }

    def _read(self, name: str, include_hidden: bool) -> tuple[JSONDict, AiderRead, bytes] | Skip:
        path = self.root / name
        try:
            raw = read_file_bytes(path, max_bytes=MAX_FILE_BYTES, follow_links=False)
        except OSError as exc:
            return Skip(f"unreadable: {exc.strerror or exc}")
        data, read = read_history(path, include_hidden=include_hidden, raw=raw)
        return data, read, raw

    def parse(self, name: str, ident: Identity, prior: bytes | None) -> SessionDoc | Skip:
        got = self._read(name, include_hidden=True)
        if isinstance(got, Skip):
            return got
        data, _read, raw = got
        if not data.get("messages"):
            return Skip("no conversation (no prompt in any launch)")
        return SessionDoc(
            data,
            automated=pi_is_automated(data),
            skipped=LinesSkipped(),
            raw=raw if len(raw) <= RAW_KEPT else None,
        )

    def load(self, name: str, *, include_hidden: bool = False) -> JSONDict | None:
        got = self._read(name, include_hidden=include_hidden)
        if isinstance(got, Skip):
            return None
        return got[0] if got[0].get("messages") else None

    def file_order(self, names: set[str]) -> list[str]:
        return sorted(names)

    def automated(self, data: JSONDict) -> bool | None:
        return pi_is_automated(data)

    def settle_hit(self, hit: SessionHit, data: JSONDict) -> None:
        settle_agent_hit(hit, data, self.kind)


def aider_retention() -> Retention:
    return Retention(
        "Aider keeps its chat history until the file is deleted (it only appends to it)", False
    )


KIND = SourceKind(
    name=AIDER_SOURCE,
    prefix=f"{AIDER_SOURCE}:",
    read_only=True,
    default_dirs=lambda _cwd: aider_roots(),
    only_if_present=True,
    source=AiderSource,
    describe="Aider repo dir",
    retention=aider_retention,
)
