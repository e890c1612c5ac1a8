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
    Each launch holding a prompt is one session (a launch with none, only its banner, is
    not). Its id is ``aider-<hash of the file's path>-<launch time>`` (``.2``, ``.3``... for
    launches written in the same second), stable as the file grows; text before the first
    header (a file whose start was cut) is the launch ``start``. Its name in the store is
    ``<history file>#<launch time>``, its identity that of its own bytes (size, CRC-32, the
    file's inode): a launch appended later leaves the earlier ones as they were. A run of
    ``####`` lines is a user turn, the reply after it an assistant turn; aider's ``>`` output
    and the thinking are hidden parts. ``cwd``/``project``: the history file's dir. No
    compaction is written to the file (aider summarises its context in memory) and aider has
    no resume command for a past launch. A launch is no file of its own: the vault keeps it
    as this source reads it (see :meth:`AiderSource.kept_whole`).

Nothing here writes, locks, renames or creates anything: files are read whole (``rb``).
"""

from __future__ import annotations

import hashlib
import os
import re
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..files import open_regular, read_file_bytes, real_dir, rel_below
from ..model import JSONDict
from ..settings import load_settings
from .agent import AgentRead, WholeReadSource
from .base import Identity, Retention, Skip, SourceKind
from .claude.source import file_ident
from .claude.transcript import Turn, short, split_compaction
from .named import NamedScanStore, named_reader
from .scan import SourceStore
from .view import session_dict

AIDER_SOURCE = "aider"
AIDER_CONTENT_VERSION = "2"  # 2: every launch kept by the vault
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
    """One launch in a history file: its key in the store (its start time, ``.2``... for a
    repeated second; ``start`` for text before the first header), its start time as written
    ('' for that text) and where its bytes are."""

    key: str
    started: str
    start: int
    end: int


def launches(raw: bytes) -> list[Launch]:
    """The launches of a history file's bytes."""
    heads = list(_HEADER.finditer(raw))
    out: list[Launch] = []
    if not heads or raw[: heads[0].start()].strip():
        out.append(Launch("start", "", 0, heads[0].start() if heads else len(raw)))
    seen: dict[str, int] = {}
    for i, match in enumerate(heads):
        started = match.group(1).decode()
        stamp = started.replace(" ", "T")
        seen[stamp] = seen.get(stamp, 0) + 1
        key = stamp if seen[stamp] == 1 else f"{stamp}.{seen[stamp]}"
        end = heads[i + 1].start() if i + 1 < len(heads) else len(raw)
        out.append(Launch(key, started, match.start(), end))
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
    output: list[str] = []  # a run of aider's own ``>`` lines, one hidden part

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

    def end_output() -> None:
        if output:
            hide({"type": "custom", "text": short("\n".join(output))})
            output.clear()

    for line in text.splitlines():
        bare = line.rstrip()
        if output and not bare.startswith(">"):
            end_output()
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
            output.append(bare[1:].strip())
        elif bare.startswith("# aider chat started at "):
            continue
        elif (opened := _THINK_OPEN.match(bare)) is not None:
            end_reply()
            think, think_tag = [], opened.group(1)
        else:
            reply.append(bare)
    end_output()
    if think is not None:
        hide({"type": "thinking", "text": short("\n".join(think).strip())})
    if user is not None:
        end_prompt()
    end_reply()
    return read


def _session_id(path: Path, key: str) -> str:
    digest = hashlib.sha256(os.fsencode(os.path.abspath(path))).hexdigest()[:8]
    return f"aider-{digest}-{key}"


def launch_session(
    path: Path, launch: Launch, raw: bytes, *, include_hidden: bool = False
) -> tuple[JSONDict, AiderRead]:
    """The session of one launch of the history file ``path`` (``raw``: the file's bytes)."""
    stamp = _epoch(launch.started)
    read = read_launch(raw[launch.start : launch.end].decode("utf-8", "replace"), stamp)
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
    if launch.started:
        info["launched"] = launch.started
    data = session_dict(
        _session_id(path, launch.key),
        active=active,
        archived=archived,
        created=stamp,
        updated=stamp,
        meta=info,
        last_compaction=last,
    )
    return data, read


def read_history(path: Path, *, include_hidden: bool = False) -> list[tuple[JSONDict, AiderRead]]:
    """The sessions of the history file ``path``, one per launch with a prompt. Raises
    ``OSError`` when it cannot be read."""
    raw = read_file_bytes(path, max_bytes=MAX_FILE_BYTES, follow_links=False)
    out = [launch_session(path, x, raw, include_hidden=include_hidden) for x in launches(raw)]
    return [(data, read) for data, read in out if data["messages"]]


# ---------------------------------------------------------------------- source


def split_name(name: str) -> tuple[str, str]:
    """``<history file>#<key>`` -> (history file, key); ('', '') for another name."""
    file, sep, key = name.rpartition("#")
    if not sep or file.rsplit("/", 1)[-1] != HISTORY or not key:
        return "", ""
    return file, key


class AiderSource(WholeReadSource):
    """The Aider launches in the history files under one root (see the module doc)."""

    kind = AIDER_SOURCE
    index_prefix = f"{AIDER_SOURCE}-"
    content_version: str | None = AIDER_CONTENT_VERSION

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self._refusing: dict[str, int] = {}  # what the listing in progress refuses
        # history file -> (its identity, each launch with a prompt: its identity by name, and
        # the launch by key): a launch is then read alone, not its whole file
        self._cache: dict[str, tuple[Identity, dict[str, Identity], dict[str, Launch]]] = {}

    def history_files(self) -> list[str]:
        """The history files under the root (relative names)."""
        out: list[str] = []
        if not self.root.is_dir():
            return out
        base = str(self.root)
        for dirpath, dirnames, filenames in os.walk(base):
            rel = rel_below(dirpath, base)
            depth = 0 if rel == "." else rel.count(os.sep) + 1
            dirnames[:] = (
                []
                if depth >= DEPTH
                else sorted(
                    d
                    for d in dirnames
                    if not d.startswith(".")
                    and d not in SKIP_DIRS
                    and real_dir(os.path.join(dirpath, d), self._refusing)
                )
            )
            if HISTORY in filenames:
                out.append(HISTORY if rel == "." else f"{rel}/{HISTORY}".replace(os.sep, "/"))
        return out

    def _table(self, file: str) -> tuple[dict[str, Identity], dict[str, Launch]]:
        """Each launch with a prompt of history file ``file``: its identity by name, and the
        launch by key; the file is read again only when it changed."""
        path = self.root / file
        ident = file_ident(path, self._refusing)
        if ident is None:
            self._cache.pop(file, None)
            return {}, {}
        cached = self._cache.get(file)
        if cached is not None and cached[0] == ident:
            return cached[1], cached[2]
        try:
            raw = read_file_bytes(path, max_bytes=MAX_FILE_BYTES, follow_links=False)
        except OSError:
            return {}, {}
        names: dict[str, Identity] = {}
        by_key: dict[str, Launch] = {}
        for launch in launches(raw):
            body = raw[launch.start : launch.end]
            if b"\n#### " in b"\n" + body:
                names[f"{file}#{launch.key}"] = (len(body), zlib.crc32(body), ident[2])
                by_key[launch.key] = launch
        self._cache[file] = (ident, names, by_key)
        return names, by_key

    def _launches(self, file: str) -> dict[str, Identity]:
        return self._table(file)[0]

    def _segment(self, file: str, key: str) -> tuple[Launch, bytes] | None:
        """Launch ``key`` of history file ``file`` and its bytes, read alone (None: no such
        launch with a prompt). Raises ``OSError``."""
        for _attempt in range(2):
            names, by_key = self._table(file)
            launch = by_key.get(key)
            if launch is None:
                return None
            with open_regular(self.root / file) as fh:
                fh.seek(launch.start)
                body = fh.read(launch.end - launch.start)
            if names.get(f"{file}#{key}", (0, -1, 0))[1] == zlib.crc32(body):
                return launch, body
            self._cache.pop(file, None)  # written since it was listed: list it again
        return None

    def list_files(self) -> dict[str, Identity]:
        self._refusing = {}
        out: dict[str, Identity] = {}
        files = self.history_files()
        for file in files:
            out.update(self._launches(file))
        for gone in set(self._cache) - set(files):
            del self._cache[gone]
        self.refused = self._refusing
        return out

    def kept_whole(self, name: str) -> bool:
        """A launch is part of its history file: the vault keeps it whole."""
        return True

    def identity(self, name: str) -> Identity | None:
        """A launch is no file of its own: its identity is its own bytes' (length, CRC-32)
        and its history file's inode, so a launch appended later leaves it as it was."""
        file, _key = split_name(name)
        return self._launches(file).get(name) if file else None

    def identities(self, names: Iterable[str]) -> dict[str, Identity | None]:
        return {name: self.identity(name) for name in names}

    def read_session(self, name: str, include_hidden: bool) -> AgentRead | Skip:
        file, key = split_name(name)
        if not file:
            return Skip("not an Aider launch")
        try:
            got = self._segment(file, key)
        except OSError as exc:
            return Skip(f"unreadable: {exc.strerror or exc}")
        if got is None:
            return Skip("no such launch in the chat history")
        launch, body = got
        alone = Launch(launch.key, launch.started, 0, len(body))
        data = launch_session(self.root / file, alone, body, include_hidden=include_hidden)[0]
        return AgentRead(data, empty="no conversation (a launch without a prompt)")

    def named_files(self, session_id: str, names: set[str]) -> list[str]:
        """The launch whose key the id ends with (``aider-<hash>-<key>``)."""
        parts = session_id.split("-", 2)
        key = parts[2] if len(parts) == 3 and parts[0] == AIDER_SOURCE else ""
        return [n for n in self.file_order(names) if key and n.endswith(f"#{key}")]


def _open_scan(path: Path) -> SourceStore:
    return NamedScanStore(AiderSource(path))


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
    open_scan=_open_scan,
    reader=named_reader,
    describe="Aider repo dir",
    retention=aider_retention,
)
