"""A Pi file read as one session: the active branch (or another) assembled from its entries."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ... import recall
from ...files import open_regular
from ...model import (
    SUMMARY_PREFIX,
    JSONDict,
)
from ...reading import is_slash_command
from ..view import SessionView, session_dict
from .entries import (
    KNOWN_TYPES,
    PI_SOURCE,
    PREVIEW_CHARS,
    _Entry,
    _epoch,
    _iso,
    _str,
)
from .state import (
    PiParseState,
    _can_resume,
    _consume,
    _Tail,
)

# ---------------------------------------------------------------------- the session


@dataclass
class PiBranch:
    """One leaf of the session tree (the active branch or another one)."""

    leaf_id: str
    active: bool
    fork_id: str | None
    entry_count: int
    message_count: int
    preview: str
    updated_at: str | None

    def to_json(self) -> JSONDict:
        return {
            "leaf_id": self.leaf_id,
            "active": self.active,
            "fork_id": self.fork_id,
            "entry_count": self.entry_count,
            "message_count": self.message_count,
            "preview": self.preview,
            "updated_at": self.updated_at,
        }


@dataclass
class PiSession(SessionView):
    """A Pi file read as one session: ``data`` is the PraisonAI-shaped dict of one branch."""

    KIND = PI_SOURCE

    path: Path
    data: JSONDict
    header: JSONDict | None
    leaf_id: str | None
    active_leaf_id: str | None
    branches: list[PiBranch]
    skipped_lines: int
    partial_tail: bool
    unknown_entries: int
    end_offset: int
    state: PiParseState
    resumed: bool = False
    new_entries: int = 0
    mtime: float = 0.0
    tail: _Tail = field(default_factory=_Tail, repr=False)

    @property
    def is_active_branch(self) -> bool:
        return self.leaf_id == self.active_leaf_id

    def branch(self, leaf_id: str) -> PiSession:
        """The same file read along another branch (``KeyError`` for an unknown entry id)."""
        return _assemble(
            self.path,
            self.state,
            self.tail,
            leaf_id=leaf_id,
            resumed=self.resumed,
            new_entries=self.new_entries,
            mtime=self.mtime,
        )


def read_pi_session(
    path: str | os.PathLike[str],
    *,
    include_hidden: bool = False,
    start_offset: int = 0,
    prior: PiParseState | None = None,
) -> PiSession:
    """Read a Pi session file (or continue reading it) without writing anything.

    With ``prior`` (the ``state`` of an earlier read) only the bytes after
    ``prior.end_offset`` are parsed, provided the file only grew; otherwise (another file at
    that path, a shorter file, changed bytes, a different ``include_hidden``) it is read from
    the start and ``resumed`` is False. ``start_offset`` without ``prior`` reads the lines from
    that offset on (a line boundary) as if they were the whole file. Raises ``OSError`` when
    the file cannot be read and ``ValueError`` when ``start_offset`` contradicts ``prior``.
    """
    if start_offset < 0:
        raise ValueError(f"start_offset must not be negative (got {start_offset})")
    if prior is not None and start_offset not in (0, prior.end_offset):
        raise ValueError(
            f"start_offset {start_offset} does not match the parse state's end_offset "
            f"{prior.end_offset}"
        )
    file_path = Path(path)
    with open_regular(file_path) as fh:
        st = os.fstat(fh.fileno())
        resumed = False
        if prior is not None and _can_resume(prior, fh, st, include_hidden):
            state = replace(prior, entries=list(prior.entries))
            resumed = True
        else:
            state = PiParseState(
                include_hidden=include_hidden,
                end_offset=start_offset if prior is None else 0,
                device=st.st_dev,
                inode=st.st_ino,
            )
        added, tail = _consume(fh, state)
    return _assemble(
        file_path, state, tail, leaf_id=None, resumed=resumed, new_entries=added, mtime=st.st_mtime
    )


def read_pi_branch(
    path: str | os.PathLike[str], leaf_id: str, *, include_hidden: bool = False
) -> PiSession:
    """The transcript of the branch ending at entry ``leaf_id`` (``KeyError`` if unknown)."""
    return read_pi_session(path, include_hidden=include_hidden).branch(leaf_id)


# ---------------------------------------------------------------------- assembling


class _Tree:
    def __init__(self, entries: Sequence[_Entry]) -> None:
        self.by_id: dict[str, _Entry] = {}
        parents: set[str] = set()
        for entry in entries:
            self.by_id[entry.id] = entry
            if entry.parent is not None:
                parents.add(entry.parent)
        seen: set[str] = set()
        leaves: list[_Entry] = []
        for entry in reversed(entries):
            if entry.id not in parents and entry.id not in seen:
                seen.add(entry.id)
                leaves.append(self.by_id[entry.id])
        leaves.reverse()
        self.leaves = leaves

    def path_to(self, leaf_id: str) -> list[_Entry]:
        path: list[_Entry] = []
        seen: set[str] = set()
        current = self.by_id.get(leaf_id)
        while current is not None and current.id not in seen:
            seen.add(current.id)
            path.append(current)
            current = self.by_id.get(current.parent) if current.parent is not None else None
        path.reverse()
        return path


def _first_kept_position(
    path: Sequence[_Entry], comp_pos: int, ids_by_index: dict[int, str]
) -> int:
    """Where the kept turns of the compaction at ``path[comp_pos]`` start (``comp_pos``: none)."""
    comp = path[comp_pos]
    first_id = comp.info.get("first_kept_id")
    if not first_id:
        first_index = comp.info.get("first_kept_index")
        if isinstance(first_index, int):
            first_id = ids_by_index.get(first_index)
    if first_id:
        for pos in range(comp_pos):
            if path[pos].id == first_id:
                return pos
    return comp_pos


def _is_turn(entry: _Entry) -> bool:
    return entry.role is not None


def _message(entry: _Entry, labels: dict[str, str], include_hidden: bool) -> JSONDict:
    meta: JSONDict = {"pi_id": entry.id, "pi_type": entry.type}
    if entry.pi_role:
        meta["pi_role"] = entry.pi_role
    meta.update(entry.meta)
    label = labels.get(entry.id)
    if label:
        meta["label"] = label
    if include_hidden and entry.hidden:
        meta["hidden"] = list(entry.hidden)
    msg: JSONDict = {"role": entry.role, "content": entry.text}
    if entry.timestamp is not None:
        msg["timestamp"] = entry.timestamp
    msg["metadata"] = meta
    if entry.tool_call_id is not None:
        msg["tool_call_id"] = entry.tool_call_id
    return msg


def _summary(entry: _Entry, compacted: int, *, superseded: bool) -> JSONDict:
    meta: JSONDict = {
        "compaction": True,
        "compacted_count": compacted,
        "pi": True,
        "pi_id": entry.id,
        "pi_type": "compaction",
    }
    tokens = entry.info.get("tokens_before")
    if isinstance(tokens, int):
        meta["tokens_before"] = tokens
    if superseded:
        meta["superseded"] = True
    msg: JSONDict = {
        "role": "system",
        "content": f"{SUMMARY_PREFIX}\n{entry.info.get('summary') or ''}",
    }
    if entry.timestamp is not None:
        msg["timestamp"] = entry.timestamp
    msg["metadata"] = meta
    return msg


def _messages(
    entries: Sequence[_Entry],
    path: Sequence[_Entry],
    labels: dict[str, str],
    include_hidden: bool,
    ids_by_index: dict[int, str],
) -> list[JSONDict]:
    out: list[JSONDict] = []
    for entry in entries:
        if entry.type == "compaction":
            pos = next(i for i, e in enumerate(path) if e is entry)
            kept = _first_kept_position(path, pos, ids_by_index)
            count = sum(1 for e in path[:kept] if _is_turn(e))
            out.append(_summary(entry, count, superseded=True))
        elif _is_turn(entry):
            out.append(_message(entry, labels, include_hidden))
    return out


def _labels(entries: Sequence[_Entry]) -> dict[str, str]:
    labels: dict[str, str] = {}
    for entry in entries:
        if entry.type != "label":
            continue
        target = entry.info.get("target_id")
        if not isinstance(target, str):
            continue
        label = entry.info.get("label")
        if isinstance(label, str) and label.strip():
            labels[target] = label.strip()
        else:
            labels.pop(target, None)
    return labels


def _title(entries: Sequence[_Entry]) -> str | None:
    title: str | None = None
    for entry in entries:
        if entry.type == "session_info" and "name" in entry.info:
            title = entry.info["name"] or None
    return title


def _preview(entries: Sequence[_Entry]) -> str:
    for role in ("user", None):
        for entry in entries:
            if entry.role is not None and (role is None or entry.role == role):
                if entry.role == "user" and is_slash_command(entry.text[:PREVIEW_CHARS]):
                    continue  # /model, /mode: not what the session is about
                text = recall.fold_prefix(entry.text, PREVIEW_CHARS)
                if text:
                    return text
    return ""


def _branches(tree: _Tree, active: Sequence[_Entry], active_leaf: str | None) -> list[PiBranch]:
    out: list[PiBranch] = []
    active_ids = {e.id for e in active}
    if active_leaf is not None:
        out.append(
            PiBranch(
                leaf_id=active_leaf,
                active=True,
                fork_id=None,
                entry_count=len(active),
                message_count=sum(1 for e in active if _is_turn(e)),
                preview=_preview(active),
                updated_at=_iso(max((e.timestamp for e in active if e.timestamp), default=None)),
            )
        )
    for leaf in tree.leaves:
        if leaf.id == active_leaf or leaf.id in active_ids:
            continue
        own: list[_Entry] = []
        seen: set[str] = set()
        current: _Entry | None = leaf
        fork: str | None = None
        depth = 0
        while current is not None and current.id not in seen:
            if current.id in active_ids:
                fork = current.id
                break
            seen.add(current.id)
            own.append(current)
            current = tree.by_id.get(current.parent) if current.parent is not None else None
        own.reverse()
        if fork is not None:
            depth = next(i for i, e in enumerate(active) if e.id == fork) + 1
        out.append(
            PiBranch(
                leaf_id=leaf.id,
                active=False,
                fork_id=fork,
                entry_count=depth + len(own),
                message_count=sum(1 for e in own if _is_turn(e)),
                preview=_preview(own),
                updated_at=_iso(max((e.timestamp for e in own if e.timestamp), default=None)),
            )
        )
    return out


def _assemble(
    path: Path,
    state: PiParseState,
    tail: _Tail,
    *,
    leaf_id: str | None,
    resumed: bool,
    new_entries: int,
    mtime: float,
) -> PiSession:
    header = state.header if state.header is not None else tail.header
    entries: list[_Entry] = list(state.entries)
    if tail.entry is not None:
        entries.append(tail.entry)
    tree = _Tree(entries)
    active_leaf = entries[-1].id if entries else None
    if leaf_id is not None and leaf_id not in tree.by_id:
        raise KeyError(leaf_id)
    leaf = leaf_id if leaf_id is not None else active_leaf
    path_entries = tree.path_to(leaf) if leaf is not None else []
    active_path = (
        path_entries
        if leaf == active_leaf
        else (tree.path_to(active_leaf) if active_leaf is not None else [])
    )
    ids_by_index = {e.index: e.id for e in entries}
    labels = _labels(entries)
    hidden = state.include_hidden

    comp_pos = next(
        (i for i in range(len(path_entries) - 1, -1, -1) if path_entries[i].type == "compaction"),
        None,
    )
    last_compaction: JSONDict | None = None
    if comp_pos is None:
        archived: list[JSONDict] = []
        active = _messages(path_entries, path_entries, labels, hidden, ids_by_index)
    else:
        comp = path_entries[comp_pos]
        kept = _first_kept_position(path_entries, comp_pos, ids_by_index)
        archived = _messages(path_entries[:kept], path_entries, labels, hidden, ids_by_index)
        compacted = sum(1 for e in path_entries[:kept] if _is_turn(e))
        active = [
            _summary(comp, compacted, superseded=False),
            *_messages(path_entries[kept:comp_pos], path_entries, labels, hidden, ids_by_index),
            *_messages(path_entries[comp_pos + 1 :], path_entries, labels, hidden, ids_by_index),
        ]
        last_compaction = {
            "summary": comp.info.get("summary") or "",
            "message_index": 0,
            "role": "system",
            "tokens_before": comp.info.get("tokens_before") or 0,
            "tokens_after": 0,
            "timestamp": comp.timestamp or 0.0,
            "metadata": {"pi": True, "pi_id": comp.id, "compacted_count": compacted},
        }

    hdr = header or {}
    raw_id = hdr.get("id")
    session_id = raw_id if isinstance(raw_id, str) and raw_id else path.stem
    cwd = _str(hdr.get("cwd"))
    # The header's time, unless an entry is older (a forked file gets a new header).
    stamps = [t for t in (_epoch(hdr.get("timestamp")), *(e.timestamp for e in entries)) if t]
    created_ts = min(stamps) if stamps else mtime
    activity = [
        e.timestamp for e in entries if e.role in ("user", "assistant") and e.timestamp is not None
    ]
    updated_ts = max(activity) if activity else created_ts

    provider = _str(hdr.get("provider"))
    model = _str(hdr.get("modelId"))
    thinking = _str(hdr.get("thinkingLevel"))
    for entry in path_entries:
        if entry.type == "model_change":
            provider = entry.info.get("provider") or provider
            model = entry.info.get("model") or model
        elif entry.type == "thinking_level_change":
            thinking = entry.info.get("thinking_level") or thinking
        elif entry.role == "assistant" and entry.meta.get("model"):
            model = entry.meta.get("model")
            provider = entry.meta.get("provider") or provider

    version = hdr.get("version")
    meta: JSONDict = {"source": PI_SOURCE}
    title = _title(entries)
    if title:
        meta["title"] = title
    meta["cwd"] = cwd
    meta["project"] = cwd
    meta["pi_version"] = (
        version if isinstance(version, int) and not isinstance(version, bool) else 1
    )
    meta["pi_path"] = str(path)
    meta["pi_leaf_id"] = leaf
    meta["pi_active_leaf_id"] = active_leaf
    meta["pi_active_branch"] = leaf == active_leaf
    meta["pi_branch_count"] = max(1, len(tree.leaves)) if entries else 0
    if model:
        meta["model"] = model
    if provider:
        meta["provider"] = provider
    if thinking:
        meta["thinking_level"] = thinking
    parent = _str(hdr.get("parentSession")) or _str(hdr.get("branchedFrom"))
    if parent:
        meta["parent_session"] = parent

    data = session_dict(
        session_id,
        active=active,
        archived=archived,
        created=created_ts,
        updated=updated_ts,
        meta=meta,
        last_compaction=last_compaction,
    )
    return PiSession(
        path=path,
        data=data,
        header=header,
        leaf_id=leaf,
        active_leaf_id=active_leaf,
        branches=_branches(tree, active_path, active_leaf),
        skipped_lines=state.skipped_lines + (1 if tail.partial else 0),
        partial_tail=tail.partial,
        unknown_entries=state.unknown_entries
        + (1 if tail.entry is not None and tail.entry.type not in KNOWN_TYPES else 0),
        end_offset=state.end_offset,
        state=state,
        resumed=resumed,
        new_entries=new_entries,
        mtime=mtime,
        tail=tail,
    )
