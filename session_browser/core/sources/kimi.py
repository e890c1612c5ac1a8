"""Kimi Code CLI sessions as a read-only source.

Where they live
    ``$KIMI_SHARE_DIR`` (else ``~/.kimi``) ``/sessions/<work dir id>/<session id>/``, the work
    dir id being the MD5 of the work dir (``~/.kimi/kimi.json`` lists the work dirs). A
    session's wire log is ``wire.jsonl`` in that folder (kimi-cli's Python releases) or
    ``agents/main/wire.jsonl`` (newer releases, one folder per agent). A subagent's own log
    (``subagents/<agent id>/wire.jsonl``, or ``agents/<agent id>/wire.jsonl``) is no session
    of its own: its turns are folded into its parent's, after the tool call that ran it (its
    file's identity folded into the parent's, and kept with it by the vault: as a file
    beside a Python release's log, in the session as read for a newer release's). The
    session id is the session folder's name; the title is ``custom_title`` of the session's
    ``state.json``, else the first prompt.

The format (not a stable contract)
    Newer releases (wire protocol 1.4, seen in real files): one event a line, ``{type, ...,
    time (epoch ms)}``: ``turn.prompt`` / ``turn.steer`` (``input`` parts) are what the user
    typed; ``context.append_loop_event`` carries the model's ``content.part`` (``text``,
    ``think``), ``tool.call`` and ``tool.result``; ``context.append_message`` with an
    ``injection`` origin is text the CLI put in; ``context.apply_compaction`` (``summary``)
    is a compaction; ``profile.bind`` names the cwd (``environmentDisclosure.cwd``; else a
    tool call's ``display.cwd``).
    kimi-cli's Python releases (read from its ``wire/types.py`` at 4a550eff): ``{timestamp
    (s), message: {type, payload}}`` records: ``TurnBegin`` / ``SteerInput``
    (``user_input``), ``TextPart`` / ``ThinkPart``, ``ToolCall`` / ``ToolResult``,
    ``CompactionBegin``.

The mapping
    A prompt is a user turn; everything the model wrote until the next prompt is one
    assistant turn (its thinking, tool calls and their results are hidden parts). A
    compaction is the archived/active boundary. Every other record (usage, config,
    permissions, plan mode...) is counted, not shown.

Nothing here writes, locks, renames or creates anything: files are read whole (``rb``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..files import loads, read_file_bytes, real_dir, walk_real
from ..model import JSONDict
from .agent import AgentRead, WholeReadSource
from .base import Identity, LinesSkipped, Retention, Skip
from .claude.source import empty_reason, file_ident, fold
from .claude.transcript import Turn, short, split_compaction
from .named import agent_kind
from .view import session_dict

KIMI_SOURCE = "kimi"
KIMI_CONTENT_VERSION = "2"  # 2: a newer release's session kept whole by the vault
WIRE = "wire.jsonl"
MAIN_AGENT = "main"
MAX_FILE_BYTES = 512 << 20
#: How a subagent's result names it (``agent_id: agent-0``).
_AGENT_ID = re.compile(r"^agent_id:\s*(\S+)", re.MULTILINE)


def kimi_home() -> Path:
    """Kimi Code CLI's share dir: ``$KIMI_SHARE_DIR``, else ``~/.kimi``."""
    env = os.environ.get("KIMI_SHARE_DIR", "").strip()
    return Path(env).expanduser() if env else Path.home() / ".kimi"


def default_kimi_dir() -> Path:
    """Where the sessions are: ``<share dir>/sessions``."""
    return kimi_home() / "sessions"


def work_dirs(share_dir: Path) -> dict[str, str]:
    """Work dir id (the MD5 of its path) -> work dir, from ``kimi.json`` in ``share_dir``."""
    try:
        data = json.loads(read_file_bytes(share_dir / "kimi.json", max_bytes=16 << 20))
    except (OSError, ValueError):
        return {}
    out: dict[str, str] = {}
    entries = data.get("work_dirs") if isinstance(data, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        path = entry.get("path") if isinstance(entry, dict) else None
        if isinstance(path, str) and path:
            digest = hashlib.md5(path.encode()).hexdigest()
            kaos = entry.get("kaos")
            out[digest if kaos in (None, "local") else f"{kaos}_{digest}"] = path
    return out


# ---------------------------------------------------------------------- names


def session_dir_of(name: str) -> tuple[str, ...] | None:
    """The session folder (path parts relative to the root) of the main wire log ``name``;
    None when ``name`` is no main wire log (a subagent's, or another file)."""
    parts = tuple(name.split("/"))
    if not parts or parts[-1] != WIRE:
        return None
    if len(parts) >= 3 and parts[-3] == "agents":
        return parts[:-3] if parts[-2] == MAIN_AGENT else None
    if len(parts) >= 3 and parts[-3] == "subagents":
        return None
    return parts[:-1]


# ---------------------------------------------------------------------- reading


@dataclass
class KimiRead:
    """What reading one wire log found."""

    turns: list[Turn] = field(default_factory=list)
    cwd: str | None = None
    skipped_lines: int = 0
    hidden_records: dict[str, int] = field(default_factory=dict)
    #: The assistant turn of each tool call that ran a subagent, by the subagent's id.
    agents: dict[str, Turn] = field(default_factory=dict)


def _input_text(value: Any) -> str:
    """The text of a string or of a list of ``text`` parts, one per line."""
    if isinstance(value, str):
        return value
    parts = value if isinstance(value, list) else []
    return "\n".join(
        p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
    )


class _Builder:
    def __init__(self, read: KimiRead, subagent: str | None) -> None:
        self.read = read
        self.subagent = subagent
        self.answer: Turn | None = None
        self.pending: list[JSONDict] = []
        self.calls: dict[str, Turn] = {}

    def count(self, key: str) -> None:
        self.read.hidden_records[key] = self.read.hidden_records.get(key, 0) + 1

    def _turn(self, role: str, stamp: float | None, text: str) -> Turn:
        turn = Turn(role, stamp, [text] if text else [])
        if self.subagent is not None:
            turn.meta["subagent"] = self.subagent
        if self.pending:
            turn.hidden[:0] = self.pending
            self.pending = []
        self.read.turns.append(turn)
        return turn

    def prompt(self, stamp: float | None, value: Any) -> None:
        text = _input_text(value).strip()
        if not text:
            self.count("prompt/empty")
            return
        self._turn("user", stamp, text)
        self.answer = None

    def _answer(self, stamp: float | None) -> Turn:
        if self.answer is None:
            self.answer = self._turn("assistant", stamp, "")
        return self.answer

    def text(self, stamp: float | None, text: str) -> None:
        if text:
            self._answer(stamp).texts.append(text)

    def hide(self, stamp: float | None, part: JSONDict) -> None:
        self._answer(stamp).hidden.append(part)

    def note(self, text: str) -> None:
        target = next((t for t in reversed(self.read.turns) if t.role is not None), None)
        part = {"type": "custom", "text": short(text)}
        if target is None:
            self.pending.append(part)
        else:
            target.hidden.append(part)

    def call(self, stamp: float | None, call_id: Any, name: Any, args: Any) -> None:
        label = name if isinstance(name, str) else "?"
        self.hide(stamp, {"type": "toolCall", "name": label, "arguments": short(args or {})})
        if isinstance(call_id, str) and self.answer is not None:
            self.calls[call_id] = self.answer

    def result(self, stamp: float | None, call_id: Any, output: Any, error: bool) -> None:
        text = output if isinstance(output, str) else _input_text(output) or short(output)
        self.hide(stamp, {"type": "toolResult", "text": short(text), "is_error": error})
        found = _AGENT_ID.search(text) if isinstance(text, str) else None
        caller = self.calls.get(call_id) if isinstance(call_id, str) else None
        if found is not None:
            self.read.agents[found.group(1)] = caller or self._answer(stamp)

    def compaction(self, stamp: float | None, summary: Any) -> None:
        text = summary if isinstance(summary, str) and summary else "Conversation compacted"
        self.read.turns.append(Turn(None, stamp, [text]))
        self.answer = None


def _ms(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return value / 1000.0 if ok else None


def _secs(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if ok else None


def _event(b: _Builder, obj: JSONDict) -> None:
    """One record of the newer (protocol 1.x event) wire log."""
    kind = obj.get("type")
    stamp = _ms(obj.get("time"))
    if kind in ("turn.prompt", "turn.steer"):
        b.prompt(stamp, obj.get("input"))
    elif kind == "context.append_loop_event" and isinstance(obj.get("event"), dict):
        event = obj["event"]
        etype = event.get("type")
        part = event.get("part") if isinstance(event.get("part"), dict) else {}
        if etype == "content.part" and isinstance(part.get("text"), str):
            b.text(stamp, part["text"])
        elif etype == "content.part" and isinstance(part.get("think"), str):
            b.hide(stamp, {"type": "thinking", "text": short(part["think"])})
        elif etype == "tool.call":
            display = event.get("display")
            cwd = display.get("cwd") if isinstance(display, dict) else None
            if isinstance(cwd, str) and cwd and b.read.cwd is None and b.subagent is None:
                b.read.cwd = cwd  # where a tool ran, when no profile.bind named it
            b.call(stamp, event.get("toolCallId"), event.get("name"), event.get("args"))
        elif etype == "tool.result":
            res = event.get("result") if isinstance(event.get("result"), dict) else {}
            b.result(stamp, event.get("toolCallId"), res.get("output"), bool(res.get("isError")))
        else:
            b.count(f"loop/{etype}" if isinstance(etype, str) else "loop/untyped")
    elif kind == "context.append_message" and isinstance(obj.get("message"), dict):
        message = obj["message"]
        origin = message.get("origin") if isinstance(message.get("origin"), dict) else {}
        if origin.get("kind") not in (None, "user"):
            b.count("message/injected")
            b.note(_input_text(message.get("content")))
        else:
            b.count("message/context")  # the prompt again, as the model's context holds it
    elif kind == "context.apply_compaction":
        b.compaction(stamp, obj.get("summary"))
    elif kind == "turn.cancel":
        b.count(kind)
        b.note("cancelled")
    elif kind == "profile.bind":
        b.count(kind)
        env = obj.get("environmentDisclosure")
        cwd = env.get("cwd") if isinstance(env, dict) else None
        if isinstance(cwd, str) and cwd and b.read.cwd is None:
            b.read.cwd = cwd
    else:
        b.count(kind if isinstance(kind, str) else "untyped")


def _legacy(b: _Builder, obj: JSONDict) -> None:
    """One record of kimi-cli's Python wire log (``{timestamp, message: {type, payload}}``)."""
    message = obj["message"]
    kind = message.get("type")
    payload = message.get("payload") if isinstance(message.get("payload"), dict) else {}
    stamp = _secs(obj.get("timestamp"))
    if kind in ("TurnBegin", "SteerInput"):
        b.prompt(stamp, payload.get("user_input"))
    elif kind == "TextPart" and isinstance(payload.get("text"), str):
        b.text(stamp, payload["text"])
    elif kind == "ThinkPart" and isinstance(payload.get("think"), str):
        b.hide(stamp, {"type": "thinking", "text": short(payload["think"])})
    elif kind == "ToolCall":
        function = payload.get("function")
        function = function if isinstance(function, dict) else {}
        b.call(stamp, payload.get("id"), function.get("name"), function.get("arguments"))
    elif kind == "ToolResult":
        value = payload.get("return_value")
        value = value if isinstance(value, dict) else {}
        b.result(
            stamp, payload.get("tool_call_id"), value.get("output"), bool(value.get("is_error"))
        )
    elif kind == "CompactionBegin":
        b.compaction(stamp, None)
    else:
        b.count(f"wire/{kind}" if isinstance(kind, str) else "wire/untyped")


def read_wire(raw: bytes, read: KimiRead, subagent: str | None = None) -> None:
    """The turns of one wire log's bytes, added to ``read``."""
    b = _Builder(read, subagent)
    for line in raw.splitlines():
        if not line.strip():
            continue
        try:
            obj = loads(line)
        except (ValueError, RecursionError):
            read.skipped_lines += 1
            continue
        if not isinstance(obj, dict):
            read.skipped_lines += 1
        elif isinstance(obj.get("message"), dict) and "timestamp" in obj:
            _legacy(b, obj)
        else:
            _event(b, obj)


def _state_title(session_dir: Path) -> str | None:
    try:
        data = json.loads(read_file_bytes(session_dir / "state.json", max_bytes=16 << 20))
    except (OSError, ValueError):
        return None
    title = data.get("custom_title") if isinstance(data, dict) else None
    return title.strip() if isinstance(title, str) and title.strip() else None


def subagent_wires(session_dir: Path) -> list[tuple[str, Path]]:
    """(agent id, wire log) of each subagent of the session in ``session_dir``."""
    return [(agent, Path(wire)) for agent, wire, _ident in _subagent_wires(str(session_dir))]


def _subagent_wires(
    session_dir: str, present: Collection[str] | None = None
) -> list[tuple[str, str, Identity]]:
    """(agent id, wire log, its identity) of each subagent of the session in
    ``session_dir`` (paths as strings: a listing asks this of every session). ``present``:
    the real folders ``session_dir`` holds, when its listing was just read."""
    out: list[tuple[str, str, Identity]] = []
    for folder in ("subagents", "agents"):
        if present is not None and folder not in present:
            continue
        base = os.path.join(session_dir, folder)
        try:
            # listed first: most sessions have neither folder, and the failed listing is the
            # one look needed; a symlinked folder is listed, then refused below
            with os.scandir(base) as it:
                agents = sorted(
                    e.name for e in it if e.name != MAIN_AGENT and e.is_dir(follow_symlinks=False)
                )
        except OSError:
            continue
        if present is None and not real_dir(base):
            continue
        for agent in agents:
            wire = os.path.join(base, agent, WIRE)
            ident = file_ident(wire)
            if ident is not None:
                out.append((agent, wire, ident))
    return out


def read_kimi_session(
    path: Path,
    session_id: str,
    *,
    session_dir: Path | None = None,
    cwd: str | None = None,
    include_hidden: bool = False,
    raw: bytes | None = None,
) -> tuple[JSONDict, KimiRead]:
    """The session of one main wire log (its subagents' logs folded in when
    ``session_dir`` is given). Raises ``OSError`` when it cannot be read."""
    if raw is None:
        raw = read_file_bytes(path, max_bytes=MAX_FILE_BYTES, follow_links=False)
    read = KimiRead()
    read_wire(raw, read)
    turns = read.turns
    title = None
    if session_dir is not None:
        title = _state_title(session_dir)
        if title is None and path.parent != session_dir:
            title = _state_title(path.parent)  # beside an agent's log (newer releases)
        after: dict[int, list[Turn]] = {}
        tail: list[Turn] = []
        for agent, wire in subagent_wires(session_dir):
            try:
                sub_raw = read_file_bytes(wire, max_bytes=MAX_FILE_BYTES, follow_links=False)
            except OSError:
                continue
            sub = KimiRead()
            read_wire(sub_raw, sub, subagent=agent)
            read.skipped_lines += sub.skipped_lines
            mine = [t for t in sub.turns if t.role is not None]
            caller = read.agents.get(agent)
            (after.setdefault(id(caller), []) if caller is not None else tail).extend(mine)
        if after or tail:
            merged: list[Turn] = []
            for turn in turns:
                merged.append(turn)
                merged.extend(after.get(id(turn), ()))
            turns = [*merged, *tail]
    turns = [t for t in turns if t.role is None or t.text or (include_hidden and t.hidden)]
    if not include_hidden:
        for turn in turns:
            turn.hidden = []
    archived, active, last = split_compaction(turns, include_hidden, "kimi_compaction")
    info: JSONDict = {"source": KIMI_SOURCE, "hidden_records": dict(read.hidden_records)}
    if title:
        info["title"] = title
    where = cwd or read.cwd
    if where:
        info["cwd"] = where
        info["project"] = where
    stamps = [t.timestamp for t in turns if t.role and t.timestamp is not None]
    data = session_dict(
        session_id,
        active=active,
        archived=archived,
        created=min(stamps) if stamps else None,
        updated=max(stamps) if stamps else None,
        meta=info,
        last_compaction=last,
    )
    return data, read


# ---------------------------------------------------------------------- source


class KimiSource(WholeReadSource):
    """The Kimi Code CLI sessions under one root (see the module doc)."""

    kind = KIMI_SOURCE
    index_prefix = f"{KIMI_SOURCE}-"
    content_version: str | None = KIMI_CONTENT_VERSION
    # A tree of work dir and session folders, all watched (every folder but ``subagents``
    # is walked for logs, and ``subagents`` holds parts of sessions): a reconcile after the
    # first stats what changed (see :meth:`changed_names`).
    watchable = True
    watch_tree = True

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self._dirs: tuple[Identity | None, dict[str, str]] | None = None

    def _session_dir(self, name: str) -> Path | None:
        parts = session_dir_of(name)
        return None if parts is None else self.root.joinpath(*parts)

    def _ident(
        self,
        name: str,
        refused: dict[str, int] | None = None,
        listed: tuple[Collection[str], Collection[str]] | None = None,
    ) -> Identity | None:
        """The identity of main log ``name``, its subagents' logs and titles folded in.
        ``listed``: the real folders and the files of its session folder, when a listing
        just read them (nothing absent from them is looked for)."""
        parts = session_dir_of(name)
        if parts is None:
            return None
        path = os.path.join(self.root, name)
        ident = file_ident(path, refused)
        if ident is None:
            return None
        folder = os.path.join(self.root, *parts)
        dirs, files = listed if listed is not None else (None, None)
        folded = [i for _a, _w, i in _subagent_wires(folder, dirs)]
        own = os.path.join(folder, "state.json")  # the title: in the session's folder,
        beside = os.path.join(os.path.dirname(path), "state.json")  # or by a newer log
        titles = [] if files is not None and "state.json" not in files else [own]
        if beside != own:
            titles.append(beside)
        for title in titles:
            if (i := file_ident(title)) is not None:
                folded.append(i)
        return fold(ident, folded)

    def list_files(self) -> dict[str, Identity]:
        out: dict[str, Identity] = {}
        if not self.root.is_dir():
            return out
        base = str(self.root)
        refused: dict[str, int] = {}
        for dirpath, dirnames, filenames in walk_real(base, refused):
            # An agents folder holds one folder an agent: only the main one's log is a
            # session's, looked at without walking it (a session keeps three folders).
            listed = (set(dirnames), set(filenames))
            dirnames[:] = sorted(d for d in dirnames if d not in ("subagents", "agents"))
            logs = [WIRE] if WIRE in filenames else []
            if "agents" in listed[0] and real_dir(
                os.path.join(dirpath, "agents", MAIN_AGENT), refused
            ):
                logs.append(f"agents/{MAIN_AGENT}/{WIRE}")
            rel_dir = dirpath[len(base) :].lstrip(os.sep).replace(os.sep, "/")
            for log in logs:
                name = f"{rel_dir}/{log}" if rel_dir else log
                ident = self._ident(name, refused, listed)
                if ident is not None:
                    out[name] = ident
        self.refused = refused
        return out

    def _walked(self, dirs: list[str]) -> bool:
        """Whether :meth:`list_files` looks into the folder ``dirs`` (parts relative to the
        root): none of them is named ``subagents`` or is a symlink, and an ``agents`` folder
        only as the main agent's (``.../agents/main``)."""
        here = str(self.root)
        for at, part in enumerate(dirs):
            here = os.path.join(here, part)
            if part == "subagents" or (part == "agents" and dirs[at + 1 :] != [MAIN_AGENT]):
                return False
            if not real_dir(here):
                return False
        return True

    def changed_names(self, paths: Iterable[str]) -> set[str] | None:
        """The main logs a change to ``paths`` touched: a main log itself, those of the
        session folder whose ``subagents/<id>/`` or ``agents/<id>/`` holds a changed log,
        and those beside or below a changed ``state.json`` (the title)."""
        out: set[str] = set()
        for path in paths:
            parts = path.split("/")
            dirs, leaf = parts[:-1], parts[-1]
            if leaf == WIRE:
                if len(dirs) >= 2 and dirs[-2] in ("agents", "subagents"):
                    dirs = dirs[:-2]  # a subagent's log: its session's main logs
                    out.add("/".join([*dirs, WIRE]))
                    out.add("/".join([*dirs, "agents", MAIN_AGENT, WIRE]))
                if session_dir_of(path) is not None:
                    out.add(path)
            elif leaf == "state.json":
                out.add("/".join([*dirs, WIRE]))
                out.add("/".join([*dirs, "agents", MAIN_AGENT, WIRE]))
        return out

    def identity(self, name: str) -> Identity | None:
        """The identity of main log ``name`` as :meth:`list_files` gives it (its subagents'
        logs and titles folded in); None when it lists no such log now."""
        return self._ident(name) if self._walked(name.split("/")[:-1]) else None

    def identities(self, names: Iterable[str]) -> dict[str, Identity | None]:
        return {name: self.identity(name) for name in names}

    @property
    def part_files(self) -> Callable[[str], list[Path]] | None:
        return self.subagent_logs

    def kept_whole(self, name: str) -> bool:
        """A newer release's session is a folder of logs (``agents/main/wire.jsonl`` and its
        subagents' ``agents/<id>/wire.jsonl`` beside it): the vault keeps it whole. A Python
        release's log is kept as its file, with its subagents' logs."""
        return name == f"agents/{MAIN_AGENT}/{WIRE}" or name.endswith(
            f"/agents/{MAIN_AGENT}/{WIRE}"
        )

    def subagent_logs(self, name: str) -> list[Path]:
        """The subagents' logs inside the session folder of ``name``, kept by the vault with
        it (a newer release's session is kept whole: see :meth:`kept_whole`)."""
        folder = self._session_dir(name)
        if folder is None:
            return []
        main_dir = (self.root / name).parent
        return [w for _a, w in subagent_wires(folder) if main_dir in w.parents]

    def _cwd(self, folder: Path) -> str | None:
        share = folder.parent.parent.parent
        ident = file_ident(share / "kimi.json")
        if self._dirs is None or self._dirs[0] != ident:
            self._dirs = (ident, work_dirs(share) if ident is not None else {})
        return self._dirs[1].get(folder.parent.name)

    def read_session(self, name: str, include_hidden: bool) -> AgentRead | Skip:
        folder = self._session_dir(name)
        if folder is None:
            return Skip("not a Kimi Code CLI session log")
        path = self.root / name
        try:
            raw = read_file_bytes(path, max_bytes=MAX_FILE_BYTES, follow_links=False)
            data, read = read_kimi_session(
                path,
                folder.name,
                session_dir=folder,
                cwd=self._cwd(folder),
                include_hidden=include_hidden,
                raw=raw,
            )
        except OSError as exc:
            return Skip(f"unreadable: {exc.strerror or exc}")
        empty = empty_reason(read.skipped_lines, {})
        return AgentRead(data, LinesSkipped(bad=read.skipped_lines), raw, empty)

    def named_files(self, session_id: str, names: set[str]) -> list[str]:
        """The log of the session folder named ``session_id``."""
        return [
            n for n in self.file_order(names) if (session_dir_of(n) or ("",))[-1:] == (session_id,)
        ]


def kimi_retention() -> Retention:
    """Kimi Code CLI deletes a session only when asked to (``/delete``, the web UI)."""
    return Retention("Kimi Code CLI keeps sessions until they are deleted in it", False)


KIND = agent_kind(
    KIMI_SOURCE, KimiSource, default_kimi_dir, "Kimi Code CLI sessions dir", kimi_retention
)
