"""What a damaged file still holds, and how it compares with the live session."""

from __future__ import annotations

import errno
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import recall
from ..files import (
    SessionFileError,
    read_json_file,
)
from ..model import JSONDict, message_key, utc_now_iso
from ..store import DefaultSessionStore
from .items import (
    KIND_CORRUPT,
    KIND_SPILL,
    LISTS,
    MAX_SALVAGE_BYTES,
    ParseProblem,
    QuarantineError,
    QuarantineItem,
    _parse,
    _read_capped,
    id_from_bytes,
)

# --------------------------------------------------------------------------- salvage

_SURROGATES = re.compile("[\udc80-\udcff]+")


def decode_replacing(raw: bytes) -> tuple[str, list[tuple[int, int]]]:
    """``raw`` as text with each run of invalid UTF-8 replaced by U+FFFD, and the byte ranges."""
    try:
        return raw.decode("utf-8"), []
    except UnicodeDecodeError:
        pass
    text = raw.decode("utf-8", "surrogateescape")
    ranges: list[tuple[int, int]] = []
    byte_pos = 0
    prev = 0
    for m in _SURROGATES.finditer(text):
        byte_pos += len(text[prev : m.start()].encode("utf-8", "surrogateescape"))
        run = len(m.group())
        ranges.append((byte_pos, byte_pos + run))
        byte_pos += run
        prev = m.end()
    return _SURROGATES.sub("\ufffd", text), ranges


_WS = re.compile(r"[ \t\n\r]*")
_STR_REST = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_SCALAR = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|NaN|-?Infinity")


@dataclass
class _Cut:
    """Where a valid JSON prefix can be cut and closed."""

    pos: int = 0
    closers: str = ""
    partial_list: str | None = None  # the root list whose last element was cut
    partial_start: int = -1


def _scan_prefix(text: str) -> _Cut:
    """The last point of a *valid* JSON prefix after which every open structure can close.

    A tolerant scanner: it tracks strings (with escapes) and a stack of open ``{``/``[``,
    and remembers the last position right after a complete value or an opening bracket.
    """
    n = len(text)
    i = 0
    stack: list[str] = []
    expect_key: list[bool] = []
    root_key: str | None = None
    safe_pos, safe_depth = 0, 0
    elem_start, elem_list = -1, None

    def value_start(at: int) -> None:
        nonlocal elem_start, elem_list
        if len(stack) == 2 and stack[0] == "{" and stack[1] == "[":
            elem_start, elem_list = at, root_key

    while True:
        i = _WS.match(text, i).end()  # type: ignore[union-attr]
        if i >= n:
            break
        c = text[i]
        done_at = -1
        if c == '"':
            m = _STR_REST.match(text, i + 1)
            if m is None:
                break
            end = m.end()
            if stack and stack[-1] == "{" and expect_key[-1]:
                expect_key[-1] = False
                if len(stack) == 1:
                    try:
                        root_key = json.loads(text[i:end], strict=False)
                    except ValueError:
                        root_key = None
                i = end
                continue
            value_start(i)
            done_at = end
        elif c in "{[":
            value_start(i)
            stack.append(c)
            expect_key.append(c == "{")
            i += 1
            safe_pos, safe_depth = i, len(stack)
            continue
        elif c in "}]":
            if not stack:
                break
            stack.pop()
            expect_key.pop()
            done_at = i + 1
        elif c == ",":
            if stack and stack[-1] == "{":
                expect_key[-1] = True
            i += 1
            continue
        elif c == ":":
            i += 1
            continue
        else:
            m = _SCALAR.match(text, i)
            if m is None or m.end() >= n:
                break  # a number cut at the end may itself be truncated
            value_start(i)
            done_at = m.end()
        i = done_at
        safe_pos, safe_depth = i, len(stack)
        if not stack:
            break
    cut = _Cut(pos=safe_pos)
    cut.closers = "".join("}" if c == "{" else "]" for c in reversed(stack[:safe_depth]))
    if (
        safe_depth >= 3
        and stack[0] == "{"
        and stack[1] == "["
        and elem_list in LISTS
        and elem_start >= 0
    ):
        cut.partial_list, cut.partial_start = elem_list, elem_start
    return cut


_MSG_START = re.compile(r'\{\s*"role"\s*:')
_LIST_KEY = re.compile(r'(?<!\\)"(archived_messages|messages)"\s*:\s*\[')


def _scan_messages(text: str, start: int) -> list[tuple[str, int, JSONDict]]:
    """Every complete ``{"role": ...}`` object from ``start`` on: (list, offset, message).

    Used past a damaged region (or when the prefix cannot be rebuilt): each candidate is
    decoded on its own, and the list it belongs to is the nearest preceding list key.
    """
    keys = [(m.start(), m.group(1)) for m in _LIST_KEY.finditer(text)]
    decoder = json.JSONDecoder(strict=False)
    out: list[tuple[str, int, JSONDict]] = []
    pos = start
    k = 0
    current = "messages"
    while True:
        m = _MSG_START.search(text, pos)
        if m is None:
            break
        at = m.start()
        try:
            obj, end = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            pos = at + 1
            continue
        while k < len(keys) and keys[k][0] < at:
            current = keys[k][1]
            k += 1
        if isinstance(obj, dict):
            out.append((current, at, obj))
        pos = end
    return out


@dataclass
class Salvage:
    """What a quarantined or spill file still holds, and what it lost."""

    path: Path
    kind: str
    session_id: str | None
    total_bytes: int
    method: str  # intact | prefix | scan | list-root | none
    problem: ParseProblem | None
    envelope: JSONDict
    messages: list[JSONDict]
    archived_messages: list[JSONDict]
    kept_bytes: int
    invalid_utf8: list[tuple[int, int]] = field(default_factory=list)
    skipped_entries: list[str] = field(default_factory=list)
    partial: JSONDict | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def lost_bytes(self) -> int:
        return max(0, self.total_bytes - self.kept_bytes)

    @property
    def recovered(self) -> int:
        return len(self.messages) + len(self.archived_messages)

    def all_messages(self) -> list[tuple[str, JSONDict]]:
        return [("archived_messages", m) for m in self.archived_messages] + [
            ("messages", m) for m in self.messages
        ]

    def session_dict(self, session_id: str | None = None) -> JSONDict:
        """The recovered session as a stored dict (envelope + recovered lists)."""
        data = dict(self.envelope)
        sid = session_id or self.session_id or str(data.get("session_id") or "")
        data["session_id"] = sid
        data["messages"] = list(self.messages)
        data.setdefault("archived_messages", [])
        data["archived_messages"] = list(self.archived_messages)
        if not isinstance(data.get("metadata"), dict):
            data["metadata"] = {}
        for key in ("created_at", "updated_at"):
            if not isinstance(data.get(key), str):
                data[key] = utc_now_iso()
        ordered: JSONDict = {"session_id": sid, "messages": data.pop("messages")}
        ordered.update(data)
        return ordered

    def as_dict(self, *, with_messages: bool = False) -> JSONDict:
        out: JSONDict = {
            "path": str(self.path),
            "kind": self.kind,
            "session_id": self.session_id,
            "method": self.method,
            "error": self.problem.as_dict() if self.problem else None,
            "total_bytes": self.total_bytes,
            "kept_bytes": self.kept_bytes,
            "lost_bytes": self.lost_bytes,
            "recovered_messages": len(self.messages),
            "recovered_archived": len(self.archived_messages),
            "invalid_utf8": [list(r) for r in self.invalid_utf8],
            "skipped_entries": list(self.skipped_entries),
            "partial": self.partial,
            "notes": list(self.notes),
            "recovered_fields": sorted(k for k in self.envelope if k not in LISTS),
        }
        if with_messages:
            out["messages"] = self.messages
            out["archived_messages"] = self.archived_messages
        return out


def _take_lists(data: JSONDict, salvage: Salvage) -> None:
    for name in LISTS:
        value = data.get(name)
        target = salvage.messages if name == "messages" else salvage.archived_messages
        if value is None:
            continue
        if not isinstance(value, list):
            salvage.skipped_entries.append(f"{name} is {type(value).__name__}, not a list")
            continue
        for i, entry in enumerate(value):
            if isinstance(entry, dict):
                target.append(entry)
            else:
                salvage.skipped_entries.append(f"{name}[{i}] is {_kind(entry)}")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return type(value).__name__


def _dedup(salvage: Salvage) -> None:
    seen: set[tuple[str, str, str]] = set()
    for name in LISTS:
        target = salvage.messages if name == "messages" else salvage.archived_messages
        kept = []
        for m in target:
            key = message_key(m)
            if key in seen:
                continue
            seen.add(key)
            kept.append(m)
        target[:] = kept


def salvage_bytes(raw: bytes, *, path: Path, kind: str = KIND_CORRUPT) -> Salvage:
    """Recover every complete message and as much of the envelope as the bytes hold."""
    text, bad = decode_replacing(raw)
    problem, parsed = _parse(raw)
    sid = id_from_bytes(raw)
    result = Salvage(
        path=path,
        kind=kind,
        session_id=sid,
        total_bytes=len(raw),
        method="none",
        problem=problem,
        envelope={},
        messages=[],
        archived_messages=[],
        kept_bytes=0,
        invalid_utf8=bad,
    )
    if bad:
        result.notes.append(
            f"{sum(e - s for s, e in bad)} invalid UTF-8 byte(s) in {len(bad)} run(s) "
            "replaced by U+FFFD"
        )
    if not text.strip():
        result.notes.append("the file is empty: nothing to recover")
        return result
    error_pos: int | None = None
    data: Any = parsed
    if parsed is None:
        try:
            data = json.loads(text, strict=False)
        except json.JSONDecodeError as exc:
            error_pos = exc.pos
        except RecursionError:
            result.notes.append("nested too deeply to parse whole; scanning for messages")
            data = None
            error_pos = -1
    if error_pos is None:
        result.kept_bytes = len(raw)
        if isinstance(data, dict):
            result.method = "intact"
            result.envelope = {k: v for k, v in data.items() if k not in LISTS}
            _take_lists(data, result)
        elif isinstance(data, list):
            result.method = "list-root"
            result.notes.append("the root is a list: its message objects are kept")
            for i, entry in enumerate(data):
                if isinstance(entry, dict) and "role" in entry:
                    result.messages.append(entry)
                else:
                    result.skipped_entries.append(f"[{i}] is {_kind(entry)}")
        else:
            result.notes.append(f"the root is {_kind(data)}: there is no session in it")
        if isinstance(result.envelope.get("session_id"), str):
            result.session_id = result.envelope["session_id"] or result.session_id
        _dedup(result)
        return result
    scan_from = 0
    if error_pos >= 0:
        cut = _scan_prefix(text[:error_pos])
        rebuilt: Any = None
        try:
            rebuilt = json.loads(text[: cut.pos] + cut.closers, strict=False)
        except (ValueError, RecursionError) as exc:
            result.notes.append(f"the valid prefix could not be rebuilt ({type(exc).__name__})")
        if isinstance(rebuilt, dict):
            result.method = "prefix"
            if cut.partial_list is not None:
                lst = rebuilt.get(cut.partial_list)
                if isinstance(lst, list) and lst:
                    lst.pop()
                fragment = text[cut.partial_start :]
                role_m = re.search(r'"role"\s*:\s*"((?:[^"\\]|\\.)*)"', fragment[:2000])
                result.partial = {
                    "list": cut.partial_list,
                    "offset": len(text[: cut.partial_start].encode("utf-8", "surrogateescape")),
                    "role": role_m.group(1) if role_m else None,
                    "chars": len(fragment),
                    "fragment": fragment[:2000],
                }
            result.envelope = {k: v for k, v in rebuilt.items() if k not in LISTS}
            _take_lists(rebuilt, result)
            result.kept_bytes = len(text[: cut.pos].encode("utf-8", "surrogateescape"))
            scan_from = error_pos
        elif isinstance(rebuilt, list):
            result.method = "list-root"
            for i, entry in enumerate(rebuilt):
                if isinstance(entry, dict) and "role" in entry:
                    result.messages.append(entry)
                else:
                    result.skipped_entries.append(f"[{i}] is {_kind(entry)}")
            result.kept_bytes = len(text[: cut.pos].encode("utf-8", "surrogateescape"))
            scan_from = error_pos
    extra = _scan_messages(text, scan_from) if scan_from < len(text) else []
    if result.method == "prefix":
        # Past the damage only: the prefix part is already exact.
        extra = [e for e in extra if e[1] >= scan_from]
    if extra:
        if result.method == "none":
            result.method = "scan"
        for name, _at, msg in extra:
            (result.messages if name == "messages" else result.archived_messages).append(msg)
        if scan_from:
            result.notes.append(f"{len(extra)} complete message(s) found past the damage")
    if isinstance(result.envelope.get("session_id"), str) and result.envelope["session_id"]:
        result.session_id = result.envelope["session_id"]
    _dedup(result)
    return result


def salvage(item: QuarantineItem) -> Salvage:
    """Salvage a listed item (a spill file's payload is taken as it is).

    Raises :class:`QuarantineError` for a file over :data:`MAX_SALVAGE_BYTES` and
    ``OSError`` when it cannot be read.
    """
    try:
        size = item.path.stat().st_size
    except OSError:
        size = 0
    if size > MAX_SALVAGE_BYTES:
        raise QuarantineError(
            f"{item.name} is {size} bytes, over the {MAX_SALVAGE_BYTES}-byte salvage limit; "
            "it is left as it is"
        )
    try:
        raw = _read_capped(item.path)
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            raise QuarantineError(f"{item.name}: {exc.strerror}; it is left as it is") from exc
        raise
    return _salvage_item_bytes(item, raw)


def _salvage_item_bytes(item: QuarantineItem, raw: bytes) -> Salvage:
    result = salvage_bytes(raw, path=item.path, kind=item.kind)
    if item.kind == KIND_SPILL:
        # A spill payload is {"session_id", "spilled_at", "messages"}: its turns are active.
        spilled_at = result.envelope.get("spilled_at")
        if isinstance(spilled_at, str):
            result.notes.append(f"spilled at {spilled_at}")
        result.archived_messages = []
        result.envelope = {}
    if item.session_id:  # the one rule: the session the listing shows is the one acted on
        claimed = result.session_id
        result.session_id = item.session_id
        if claimed and claimed != item.session_id:
            result.notes.append(claim_note(item.session_id, claimed))
    return result


def claim_note(session_id: str, claimed: str) -> str:
    """What is said of a file whose bytes claim another session than the one it is taken as."""
    return (
        f"its bytes claim session {claimed!r}; it is taken as session {session_id!r}, the one "
        "its file name gives"
    )


# --------------------------------------------------------------------------- compare


@dataclass
class Comparison:
    """Salvaged messages against the live session of the same id."""

    session_id: str | None
    live_exists: bool
    live_messages: int
    missing: list[tuple[str, JSONDict]]
    present: int

    def as_dict(self, *, with_messages: bool = False) -> JSONDict:
        out: JSONDict = {
            "session_id": self.session_id,
            "live_exists": self.live_exists,
            "live_messages": self.live_messages,
            "missing_from_live": len(self.missing),
            "already_in_live": self.present,
        }
        if with_messages:
            out["missing"] = [{"list": name, "message": m} for name, m in self.missing]
        return out


def _live(store: DefaultSessionStore, session_id: str | None) -> JSONDict | None:
    if not session_id:
        return None
    try:
        return store.read_raw(session_id)
    except (OSError, SessionFileError, ValueError):
        return None


def _usable(item: QuarantineItem) -> None:
    """Refuse an action that would name a session file after an unusable id."""
    if item.unusable:
        raise QuarantineError(f"{item.name}: {item.unusable}; discard it or edit it by hand")


def _missing(live: JSONDict | None, result: Salvage) -> list[tuple[str, JSONDict]]:
    """The salvaged messages ``live`` lacks (all of them when there is no live dict)."""
    live_keys = {message_key(m) for m in recall.project(live)} if live else set()
    return [(n, m) for n, m in result.all_messages() if message_key(m) not in live_keys]


def _elsewhere(store: DefaultSessionStore, session_id: str) -> Path | None:
    """The file holding ``session_id`` when it is not the session's own file."""
    other = store._misplaced().get(session_id)
    return None if other is None or other == store.session_path(session_id) else other


def _target(store: DefaultSessionStore, session_id: str) -> JSONDict | None:
    """What ``session_id``'s own file holds (None when missing), read from that very file.

    Raises :class:`QuarantineError` when the file is unreadable, corrupt or holds another
    session: an action never writes over a file it does not know to be this session's.
    """
    path = store.session_path(session_id)
    try:
        data = read_json_file(path)
    except FileNotFoundError:
        return None
    except SessionFileError as exc:
        raise QuarantineError(f"{path.name} is corrupt ({exc.reason}); nothing changed") from exc
    except OSError as exc:
        raise QuarantineError(
            f"{path.name} cannot be read ({exc.strerror or exc}); nothing changed"
        ) from exc
    stored = data.get("session_id")
    if stored not in (None, "") and str(stored) != session_id:
        where = _elsewhere(store, session_id)
        hint = f" (session {session_id!r} lives in {where.name})" if where else ""
        raise QuarantineError(
            f"{path.name} holds session {stored!r}, not {session_id!r}{hint}; nothing changed"
        )
    return data


def _no_own_file(store: DefaultSessionStore, session_id: str) -> QuarantineError | None:
    """An error when ``session_id`` lives only under another file name (else None)."""
    where = _elsewhere(store, session_id)
    if where is None:
        return None
    return QuarantineError(
        f"session {session_id!r} lives in {where.name}, not in its own file "
        f"{store.session_path(session_id).name}; move it back first (nothing changed)"
    )


def compare(store: DefaultSessionStore, result: Salvage) -> Comparison:
    """Which salvaged messages the live session lacks (key: role, content, timestamp)."""
    live = _live(store, result.session_id)
    live_keys = {message_key(m) for m in recall.project(live)} if live else set()
    missing = [(n, m) for n, m in result.all_messages() if message_key(m) not in live_keys]
    return Comparison(
        session_id=result.session_id,
        live_exists=live is not None,
        live_messages=len(recall.project(live)) if live else 0,
        missing=missing,
        present=result.recovered - len(missing),
    )
