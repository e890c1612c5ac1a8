"""The quarantine workbench: corrupt session files and spill files, listed, salvaged, put back.

- :func:`list_items` finds every ``<id>.json.corrupt-<ms>`` in the session dirs and every
  spill file in the spill dirs, with size, age, owning session id, whether that session
  is live, and the parse error with its line, column and byte offset.
- :func:`salvage` recovers what the bytes still hold: invalid UTF-8 is replaced (its byte
  ranges reported), the longest valid prefix is closed into a document, and every complete
  message object of ``messages`` and ``archived_messages`` is kept (also past a damaged
  region in the middle). What was lost is reported: the partial message at the cut, the
  bytes after it, the non-object entries skipped.
- Actions (:func:`restore`, :func:`merge`, :func:`fold`, :func:`discard`) each take a dry
  run, back up every file they touch into our journal (``data_dir()/journal``) first, and
  write one journal entry listing each file's bytes before and state after, so
  :func:`undo` puts everything back byte-identical (mode and mtime included) and removes
  what the action created; it refuses when a file changed since. Session files are
  written under the session's lock with an atomic write and without the retention
  window. Discarded files go to ``data_dir()/trash``; nothing is ever deleted.
  Lock files (``<id>.json.lock``) are the cross-process protocol shared with PraisonAI
  and stay in place, as PraisonAI leaves them.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import recall
from .files import (
    CORRUPT_RE,
    MAX_SESSION_BYTES,
    SPILL_RE,
    SessionFileError,
    atomic_write_bytes,
    dumps_session,
    fsync_dir,
    loads,
    read_file_bytes,
    read_json_file,
    session_id_from_bytes,
    session_lock,
    spill_belongs_to,
)
from .model import JSONDict, epoch_seconds, is_summary_message, message_key, utc_now_iso
from .paths import data_dir, ensure_private_dir, safe_id
from .store import DefaultSessionStore

KIND_CORRUPT = "corrupt"
KIND_SPILL = "spill"
# A session's own ``<id>.json`` that is damaged (truncated, empty, bad UTF-8, not an object):
# listed so it can be salvaged and restored in place; a healthy live file is never listed.
KIND_LIVE = "live"
LISTS = ("messages", "archived_messages")
# A quarantined or spill file bigger than this is listed but never read whole (salvage
# refuses it): one huge file must not exhaust memory.
MAX_SALVAGE_BYTES = MAX_SESSION_BYTES


class QuarantineError(Exception):
    """An action that cannot be done (unknown item, changed files, nothing to undo...)."""


# --------------------------------------------------------------------------- diagnosis


@dataclass
class ParseProblem:
    """Why a file is not a usable session, and where (1-based line/column, byte offset)."""

    message: str
    line: int | None = None
    column: int | None = None
    offset: int | None = None

    def as_dict(self) -> JSONDict:
        return {
            "message": self.message,
            "line": self.line,
            "column": self.column,
            "offset": self.offset,
        }

    def __str__(self) -> str:
        if self.line is None:
            return self.message
        return f"{self.message} (line {self.line}, column {self.column}, byte {self.offset})"


def _byte_position(raw: bytes, offset: int) -> tuple[int, int]:
    line_start = raw.rfind(b"\n", 0, offset) + 1
    line = raw.count(b"\n", 0, offset) + 1
    column = len(raw[line_start:offset].decode("utf-8", "replace")) + 1
    return line, column


def _problem_at_char(message: str, text: str, pos: int) -> ParseProblem:
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    offset = len(text[:pos].encode("utf-8", "surrogateescape"))
    return ParseProblem(message, line, column, offset)


def diagnose(raw: bytes) -> ParseProblem | None:
    """The first reason ``raw`` is not a session object, or None when it is one."""
    return _parse(raw)[0]


def _parse(raw: bytes) -> tuple[ParseProblem | None, JSONDict | None]:
    """:func:`diagnose` plus the parsed object when ``raw`` is one (parsed once)."""
    if not raw.strip():
        return ParseProblem("empty file" if not raw else "only whitespace", 1, 1, 0), None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _byte_position(raw, exc.start)
        return ParseProblem(f"invalid UTF-8: {exc.reason}", line, column, exc.start), None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return _problem_at_char(exc.msg, text, exc.pos), None
    except RecursionError:
        return ParseProblem("nested too deeply to parse"), None
    if not isinstance(data, dict):
        pos = len(text) - len(text.lstrip())
        problem = _problem_at_char(f"root is {type(data).__name__}, not an object", text, pos)
        return problem, None
    return None, data


# --------------------------------------------------------------------------- listing


@dataclass
class QuarantineItem:
    """A corrupt session file or a spill file."""

    kind: str
    path: Path
    session_dir: Path
    spill_dir: Path
    size: int
    mtime: float
    at_ms: int | None
    session_id: str | None
    id_source: str
    live_exists: bool
    problem: ParseProblem | None
    message_count: int | None = None
    # The id written inside the file when it differs from ``session_id`` (taken from the
    # file name): merge/restore act on the id inside, so both are shown.
    inner_id: str | None = None
    # Why no action can use this item (an id too long for a file name...), else None.
    unusable: str | None = None
    # What was already done with it (from the journal): "restored as X", "merged into X...".
    status: str | None = None
    history: list[JSONDict] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.name

    def age_seconds(self, now: float | None = None) -> float:
        reference = self.at_ms / 1000.0 if self.at_ms is not None else self.mtime
        return max(0.0, (time.time() if now is None else now) - reference)

    def as_dict(self) -> JSONDict:
        return {
            "kind": self.kind,
            "name": self.name,
            "path": str(self.path),
            "session_dir": str(self.session_dir),
            "size": self.size,
            "mtime": self.mtime,
            "at": _iso_ms(self.at_ms) if self.at_ms is not None else None,
            "age_seconds": round(self.age_seconds(), 3),
            "session_id": self.session_id,
            "id_source": self.id_source,
            "live_exists": self.live_exists,
            "error": self.problem.as_dict() if self.problem else None,
            "message_count": self.message_count,
            "inner_session_id": self.inner_id,
            "unusable": self.unusable,
            "status": self.status,
            "history": list(self.history),
        }


def _iso_ms(ms: int) -> str:
    try:
        return datetime.fromtimestamp(ms / 1000.0, UTC).isoformat()
    except (OverflowError, OSError, ValueError):
        return str(ms)


def id_from_bytes(raw: bytes) -> str | None:
    """The ``session_id`` written near the start of a (possibly broken) session file."""
    return session_id_from_bytes(raw)


def _live_exists(store: DefaultSessionStore, session_id: str | None) -> bool:
    """Whether ``session_id`` has a live file; ``ValueError``/``OSError`` for an unusable id."""
    if not session_id:
        return False
    path = store.session_path(session_id)
    if not path.is_file():
        return False
    try:
        return store.read_raw(session_id) is not None
    except (OSError, SessionFileError):
        return True  # a file is there, even if it is itself unreadable


def _read_bytes(path: Path) -> bytes:
    return read_file_bytes(path)  # never blocks on a FIFO


def _read_capped(path: Path) -> bytes:
    """The bytes of a quarantined/spill file; ``OSError`` (EFBIG) past the salvage cap."""
    return read_file_bytes(path, max_bytes=MAX_SALVAGE_BYTES)


def _item(
    kind: str, path: Path, st: os.stat_result, store: DefaultSessionStore, stem: str, ms: str
) -> QuarantineItem:
    payload: JSONDict | None = None
    try:
        raw = _read_capped(path)
    except OSError as exc:
        raw = b""
        problem: ParseProblem | None = ParseProblem(f"unreadable: {exc.strerror or exc}")
    else:
        problem, payload = _parse(raw)
    sid: str | None = None
    source = "unknown"
    count: int | None = None
    if kind == KIND_SPILL and payload is not None:
        if isinstance(payload.get("session_id"), str) and payload["session_id"]:
            sid, source = payload["session_id"], "payload"
        msgs = payload.get("messages")
        count = sum(1 for m in msgs if isinstance(m, dict)) if isinstance(msgs, list) else 0
    found = id_from_bytes(raw)
    if sid is None:
        if found is not None and safe_id(found) == stem:
            sid, source = found, "bytes"
        elif stem:
            sid, source = stem, "name"
        elif found is not None:
            sid, source = found, "bytes"
    if isinstance(payload, dict) and isinstance(payload.get("session_id"), str):
        found = payload["session_id"] or found
    inner = found if found is not None and found != sid else None
    unusable: str | None = None
    try:
        live = _live_exists(store, sid)
    except (OSError, ValueError) as exc:
        live = False
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        unusable = f"its session id cannot name a session file ({reason})"
    return QuarantineItem(
        kind=kind,
        path=path,
        session_dir=store.session_dir.path,
        spill_dir=store.spill_dir,
        size=st.st_size,
        mtime=st.st_mtime,
        at_ms=int(ms) if ms.isdigit() else None,
        session_id=sid,
        id_source=source,
        live_exists=live,
        problem=problem,
        message_count=count,
        inner_id=inner,
        unusable=unusable,
    )


def _entries(directory: Path) -> Iterator[tuple[Path, os.stat_result]]:
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return
    for name in names:
        path = directory / name
        try:
            st = path.stat()
        except OSError:
            continue
        if path.is_file():
            yield path, st


def list_items(stores: Sequence[DefaultSessionStore]) -> list[QuarantineItem]:
    """Every quarantined, spilled and damaged live session file of ``stores``, oldest first.

    Each item's ``status`` says what the journal records was done with it already.
    """
    items: list[QuarantineItem] = []
    seen_dirs: set[Path] = set()
    for store in stores:
        for directory, kind, pattern in (
            (store.session_dir.path, KIND_CORRUPT, CORRUPT_RE),
            (store.spill_dir, KIND_SPILL, SPILL_RE),
        ):
            key = directory.expanduser().absolute()
            first = key not in seen_dirs
            if not first and kind != KIND_SPILL:
                continue
            seen_dirs.add(key)
            known = _index_skipped(store) if kind == KIND_CORRUPT else frozenset()
            for path, st in _entries(directory):
                m = pattern.match(path.name)
                if m and (kind != KIND_SPILL or _spill_offered(path, store, first=first)):
                    items.append(_item(kind, path, st, store, m.group("stem"), m.group("ms")))
                elif kind == KIND_CORRUPT and _is_session_name(path.name):
                    live = _damaged_live(store, path, st, known)
                    if live is not None:
                        items.append(live)
    items.sort(key=lambda it: (it.at_ms if it.at_ms is not None else it.mtime * 1000, it.name))
    _add_status(items, stores)
    return items


# A live file is first looked at through its first and last bytes only (listing stays
# cheap with thousands of sessions); only a file that fails that look is read whole.
_PROBE_BYTES = 4096
_JSON_WS = b" \t\n\r"


def _utf8_ok(chunk: bytes, *, cut_start: bool, cut_end: bool) -> bool:
    """Whether ``chunk`` is valid UTF-8, a character cut at a chunk edge aside."""
    if cut_start:
        n = 0
        while n < 3 and n < len(chunk) and 0x80 <= chunk[n] <= 0xBF:
            n += 1
        chunk = chunk[n:]
    try:
        chunk.decode("utf-8")
    except UnicodeDecodeError as exc:
        return cut_end and exc.reason == "unexpected end of data" and exc.start >= len(chunk) - 3
    return True


def looks_damaged(path: Path, size: int) -> bool:
    """A bounded look at a live session file: True when it may not be a session object.

    A file up to twice :data:`_PROBE_BYTES` is parsed whole; a bigger one passes when it
    starts with ``{`` and ends with ``}`` (JSON whitespace aside) and both ends are valid
    UTF-8. Catches truncation, NUL padding, an empty file and a list root; damage only in
    the middle of a big file shows when the file is read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False  # unreadable is not "damaged": nothing to salvage
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        if size <= 2 * _PROBE_BYTES:
            raw = os.pread(fd, 2 * _PROBE_BYTES + 1, 0)
            try:
                return not isinstance(loads(raw), dict)
            except (ValueError, RecursionError):
                return True
        head = os.pread(fd, _PROBE_BYTES, 0)
        tail = os.pread(fd, _PROBE_BYTES, size - _PROBE_BYTES)
    except OSError:
        return False
    finally:
        os.close(fd)
    start, end = head.lstrip(_JSON_WS), tail.rstrip(_JSON_WS)
    if not start or not end:
        return True  # only whitespace at one end: read it whole
    return not (
        start[:1] == b"{"
        and end[-1:] == b"}"
        and _utf8_ok(head, cut_start=False, cut_end=True)
        and _utf8_ok(tail, cut_start=True, cut_end=False)
    )


def _is_session_name(name: str) -> bool:
    """A live session file's name, as the store lists them (``iter_session_files``)."""
    return name.endswith(".json") and not name.startswith(".")


def _index_skipped(store: DefaultSessionStore) -> frozenset[str]:
    """The names of the files the store's index (when it has one) could not read: each is
    read whole, whatever its first and last bytes look like."""
    names = getattr(store, "skipped_names", None)
    if not callable(names):
        return frozenset()
    try:
        return frozenset(str(n) for n in names())
    except Exception:  # an index problem never stops the listing
        return frozenset()


def _damaged_live(
    store: DefaultSessionStore, path: Path, st: os.stat_result, known: frozenset[str]
) -> QuarantineItem | None:
    """An item for the live file ``path`` when the store's reading path cannot read it as a
    session (looked at cheaply first unless the index already ``known`` it), else None."""
    if path.name not in known and not looks_damaged(path, st.st_size):
        return None
    try:
        read_json_file(path)  # the store's reading path decides
    except SessionFileError:
        return _item(KIND_LIVE, path, st, store, path.name[: -len(".json")], "")
    except OSError:
        return None  # unreadable or over the size cap: nothing to salvage from here
    return None


def item_history(entries: Sequence[JSONDict], item_path: Path) -> list[JSONDict]:
    """The done journal entries that acted on the file at ``item_path`` (newest first):
    those naming it as their item, and an in-place restore that moved it aside to there."""
    wanted = str(item_path)
    out: list[JSONDict] = []
    for e in entries:
        if e.get("status") != "done":
            continue
        aside = any(
            f.get("role") == "quarantine" and f.get("path") == wanted
            for f in e.get("files") or []
        )
        if e.get("item") == wanted or aside:
            out.append(
                {
                    "action": e.get("action"),
                    "session_id": e.get("session_id"),
                    "action_id": e.get("id"),
                    "in_place": aside or e.get("in_place") is True,
                }
            )
    return out


def _add_status(items: Sequence[QuarantineItem], stores: Sequence[DefaultSessionStore]) -> None:
    """Fill each item's ``history`` and ``status`` from the journal (read once)."""
    entries = journal_entries()
    if not entries:
        return
    for it in items:
        if it.kind == KIND_LIVE:
            continue  # a live file damaged again is new damage, whatever was done before
        it.history = item_history(entries, it.path)
        it.status = _status_text(it, stores)


def _status_text(item: QuarantineItem, stores: Sequence[DefaultSessionStore]) -> str | None:
    for h in item.history:
        sid = str(h.get("session_id") or "?")
        if h.get("action") == "restore":
            return f"restored in place as {sid}" if h.get("in_place") else f"restored as {sid}"
        if h.get("action") == "merge":
            store = next((s for s in stores if s.session_dir == item.session_dir), None)
            try:
                left = (
                    len(_missing(_live(store, sid), salvage(item))) if store is not None else -1
                )
            except (OSError, QuarantineError):
                left = -1
            if left == 0:
                return f"fully merged into {sid}, can be discarded"
            if left > 0:
                return f"merged into {sid}; {left} message(s) still missing"
            return f"merged into {sid}"
    return None


def unavailable(item: QuarantineItem, action: str) -> str | None:
    """Why ``action`` (restore, merge, fold, discard) does not apply to ``item``, else None."""
    if action == "fold" and item.kind != KIND_SPILL:
        if item.kind == KIND_LIVE:
            return f"fold is for spill files; {item.name} is a damaged live file (use restore)"
        return f"fold is for spill files; {item.name} is a corrupt copy (use restore or merge)"
    if action == "merge":
        if item.kind == KIND_LIVE:
            return (
                f"{item.name} is the live file itself: restore it in place (r) instead of "
                "merging into it"
            )
        if item.kind == KIND_SPILL:
            return f"{item.name} is a spill file: fold it (f) into its session instead"
        if not item.live_exists:
            return f"session {item.session_id or '?'} has no live file to merge into (use restore)"
    if action != "discard" and item.unusable:
        return f"{item.name}: {item.unusable}"
    return None


def _spill_offered(path: Path, store: DefaultSessionStore, *, first: bool) -> bool:
    """A spill is offered only with the store it belongs to (``spill_belongs_to``); one
    whose payload cannot be read is offered once, with the first store of its dir."""
    try:
        payload = loads(_read_capped(path))
    except (OSError, ValueError, RecursionError):
        return first
    if not isinstance(payload, dict):
        return first
    return spill_belongs_to(payload, Path(store.session_dir), path.parent)


def find_item(stores: Sequence[DefaultSessionStore], ref: str) -> QuarantineItem:
    """The item named by ``ref``: a path, a file name, or a unique prefix of one."""
    if not ref.strip():
        raise QuarantineError("no item given: name a file from 'quarantine list'")
    items = list_items(stores)
    wanted = Path(ref).expanduser()
    for it in items:
        if it.path == wanted or it.path.absolute() == wanted.absolute():
            return it
    exact = [it for it in items if it.name == ref]
    if len(exact) == 1:
        return exact[0]
    if len(exact) > 1:
        raise QuarantineError(f"{ref!r} names {len(exact)} files; give the full path")
    prefixed = [it for it in items if it.name.startswith(ref)]
    if len(prefixed) == 1:
        return prefixed[0]
    if len(prefixed) > 1:
        raise QuarantineError(f"{ref!r} matches {len(prefixed)} files; be more specific")
    raise QuarantineError(f"no quarantined, spill or damaged live file matches {ref!r}")


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
    if item.session_id and (not result.session_id or item.id_source == "payload"):
        result.session_id = item.session_id
    return result


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


# --------------------------------------------------------------------------- journal


PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
_CHUNK = 1 << 20


def journal_dir() -> Path:
    return data_dir() / "journal"


def trash_dir() -> Path:
    return data_dir() / "trash"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _open_regular(path: Path) -> int:
    """A read fd on ``path`` itself (never through a symlink, never blocking on a FIFO)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return fd


def _sha_file(path: Path) -> tuple[str, int]:
    """sha256 and size of a regular file, read in chunks (memory stays bounded)."""
    digest = hashlib.sha256()
    size = 0
    fd = _open_regular(path)
    try:
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return digest.hexdigest(), size


def _copy_sparse(src: Path, dst: Path, *, mode: int = PRIVATE_FILE_MODE) -> None:
    """Copy a regular file to a new ``dst`` in chunks; runs of zeros become holes.

    Memory stays at one chunk whatever the size, and a sparse file stays sparse.
    ``dst`` must not exist; it is fsynced.
    """
    fd_in = _open_regular(src)
    try:
        fd_out = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
        try:
            os.fchmod(fd_out, mode)
            size = 0
            while chunk := os.read(fd_in, _CHUNK):
                size += len(chunk)
                if chunk.count(0) == len(chunk):
                    os.lseek(fd_out, len(chunk), os.SEEK_CUR)
                    continue
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd_out, view) :]
            os.ftruncate(fd_out, size)
            os.fsync(fd_out)
        finally:
            os.close(fd_out)
    finally:
        os.close(fd_in)


def _state(path: Path) -> JSONDict:
    """What ``path`` itself is (a symlink is described, never followed)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return {"exists": False}
    base: JSONDict = {"exists": True, "mode": st.st_mode & 0o7777, "mtime_ns": st.st_mtime_ns}
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(path)
        raw = os.fsencode(target)
        return {**base, "link": target, "sha256": _sha(raw), "size": len(raw)}
    digest, size = _sha_file(path)
    return {**base, "sha256": digest, "size": size}


def _put_back(path: Path, copy: Path | None, before: JSONDict) -> None:
    """Make ``path`` what ``before`` describes again, atomically (a link as a link)."""
    tmp = path.parent / f".{path.name[:200]}.{os.getpid()}.{os.urandom(4).hex()}.undo.tmp"
    try:
        if "link" in before:
            os.symlink(str(before["link"]), tmp)
        else:
            assert copy is not None
            _copy_sparse(copy, tmp, mode=int(before.get("mode", PRIVATE_FILE_MODE)))
            mtime = before.get("mtime_ns")
            if isinstance(mtime, int):
                os.utime(tmp, ns=(mtime, mtime))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


@dataclass
class _FileChange:
    path: Path
    role: str  # session | quarantine | spill | trash
    change: str  # create | modify | remove | move-in


@dataclass
class ActionResult:
    """What an action did (or, in a dry run, would do)."""

    action: str
    dry_run: bool
    item: str
    session_id: str | None
    files: list[JSONDict]
    added: int = 0
    action_id: str | None = None
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> JSONDict:
        return {
            "action": self.action,
            "action_id": self.action_id,
            "dry_run": self.dry_run,
            "item": self.item,
            "session_id": self.session_id,
            "added_messages": self.added,
            "files": self.files,
            "notes": list(self.notes),
        }


class _Journal:
    """One journal entry: an intent (backups and expected results) first, then the result.

    The entry is saved ``pending`` with every file's backup and what the action will make
    of it *before* anything changes; ``done`` after. A process killed in between leaves a
    pending entry that :func:`recover_pending` finishes (when every file is either as before
    or as intended) so :func:`undo` can put it back, or drops (when nothing changed).
    """

    def __init__(self, action: str, item: QuarantineItem, session_id: str | None) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        self.id = f"{stamp}-{action}-{os.urandom(3).hex()}"
        self.dir = journal_dir() / self.id
        self.entry: JSONDict = {
            "id": self.id,
            "action": action,
            "at": utc_now_iso(),
            "item": str(item.path),
            "session_id": session_id,
            "status": "pending",
            "pid": os.getpid(),
            "files": [],
        }

    def backup(
        self, changes: Sequence[_FileChange], intended: dict[Path, JSONDict] | None = None
    ) -> None:
        """Copy every touched file into the entry and save it as an intent."""
        ensure_private_dir(journal_dir())
        self.dir.mkdir(mode=PRIVATE_DIR_MODE)
        os.chmod(self.dir, PRIVATE_DIR_MODE)
        for n, ch in enumerate(changes):
            before = _state(ch.path)
            if before["exists"] and "link" not in before:
                copy = f"before-{n}"
                _copy_sparse(ch.path, self.dir / copy)
                if _sha_file(self.dir / copy)[0] != before["sha256"]:
                    raise QuarantineError(f"{ch.path} changed while it was backed up")
                before["copy"] = copy
            record: JSONDict = {
                "path": str(ch.path),
                "role": ch.role,
                "change": ch.change,
                "before": before,
            }
            if intended is not None and ch.path in intended:
                record["intended"] = intended[ch.path]
            elif ch.change == "remove":
                record["intended"] = {"exists": False}
            self.entry["files"].append(record)
        fsync_dir(self.dir)
        self._save()

    def finish(self) -> None:
        for f in self.entry["files"]:
            f["after"] = _state(Path(f["path"]))
        self.entry["status"] = "done"
        self._save()

    def _save(self) -> None:
        atomic_write_bytes(
            self.dir / "entry.json", json.dumps(self.entry, indent=2).encode("utf-8")
        )


def _matches(state: JSONDict, wanted: JSONDict | None) -> bool:
    if wanted is None:
        return False
    if not wanted.get("exists"):
        return not state.get("exists")
    return bool(state.get("exists")) and state.get("sha256") == wanted.get("sha256")


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover_pending(lock_timeout: float = 5.0) -> list[JSONDict]:
    """Finish or drop journal entries left ``pending`` by a process that died mid-action.

    For each such entry (its process gone), under the session locks: when every file is as
    before, nothing happened and the entry is removed; when every file is as before or as
    intended, the entry is finished (``done``, ``recovered``) so :func:`undo` can put it
    back from its backups. Otherwise it stays pending (listed, never guessed at).
    Returns what was done, one dict per entry.
    """
    report: list[JSONDict] = []
    try:
        names = sorted(os.listdir(journal_dir()))
    except OSError:
        return report
    for name in names:
        entry_dir = journal_dir() / name
        try:
            entry = json.loads(_read_bytes(entry_dir / "entry.json"))
        except (OSError, ValueError):
            continue
        if not isinstance(entry, dict) or entry.get("status") != "pending":
            continue
        if _alive(entry.get("pid")):
            continue
        files = entry.get("files") or []
        with contextlib.ExitStack() as locks:
            for f in files:
                if f.get("role") == "session":
                    locks.enter_context(session_lock(Path(f["path"]), lock_timeout))
            states = [_state(Path(f["path"])) for f in files]
            if all(_matches(st, f.get("before")) for st, f in zip(states, files, strict=True)):
                shutil.rmtree(entry_dir, ignore_errors=True)
                report.append({"id": name, "recovered": "dropped (nothing had changed)"})
                continue
            if all(
                _matches(st, f.get("before")) or _matches(st, f.get("intended"))
                for st, f in zip(states, files, strict=True)
            ):
                for st, f in zip(states, files, strict=True):
                    f["after"] = st
                entry["status"] = "done"
                entry["recovered"] = True
                atomic_write_bytes(
                    entry_dir / "entry.json", json.dumps(entry, indent=2).encode("utf-8")
                )
                report.append({"id": name, "recovered": "finished (undo puts it back)"})
    return report


def journal_entries() -> list[JSONDict]:
    """Every journal entry, newest first."""
    out: list[JSONDict] = []
    try:
        names = sorted(os.listdir(journal_dir()), reverse=True)
    except OSError:
        return out
    for name in names:
        try:
            entry = json.loads(_read_bytes(journal_dir() / name / "entry.json"))
        except (OSError, ValueError):
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out


def _changes_result(
    action: str, item: QuarantineItem, sid: str | None, changes: Sequence[_FileChange]
) -> ActionResult:
    return ActionResult(
        action=action,
        dry_run=True,
        item=str(item.path),
        session_id=sid,
        files=[{"path": str(c.path), "role": c.role, "change": c.change} for c in changes],
    )


def _write_session_bytes(
    store: DefaultSessionStore,
    session_id: str,
    journal: _Journal,
    changes: Sequence[_FileChange],
    build: Callable[[JSONDict | None], JSONDict],
    *,
    must_not_exist: bool,
) -> tuple[JSONDict, list[str]]:
    """Under the session lock: check, back up every touched file, write, finish the entry.

    ``build`` gets what the session's own file holds, read fresh under the lock (None when
    there is none); a file that is corrupt or holds another session is never replaced.
    Returns the written dict and notes (a removal that could not be done).
    """
    path = store.session_path(session_id)
    store.session_dir.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    with session_lock(path, store.lock_timeout):
        if must_not_exist and path.exists():
            raise QuarantineError(f"{path.name} already exists")
        current = None if must_not_exist else _target(store, session_id)
        data: JSONDict = build(current)
        payload = dumps_session(data)
        journal.backup(changes, {path: {"exists": True, "sha256": _sha(payload)}})
        try:
            atomic_write_bytes(path, payload)
        except BaseException:
            shutil.rmtree(journal.dir, ignore_errors=True)  # nothing changed
            raise
        try:
            for ch in changes:
                if ch.change != "remove":
                    continue
                try:
                    ch.path.unlink(missing_ok=True)  # a writer may have consumed it already
                except OSError as exc:
                    notes.append(f"could not remove {ch.path.name}: {exc.strerror or exc}")
                fsync_dir(ch.path.parent)
        finally:
            journal.finish()  # always: the session file changed, so undo must work
    store._notify(session_id, path, data)  # the store's after-write hook (an index)
    return data, notes


# --------------------------------------------------------------------------- actions


def _free_id(store: DefaultSessionStore, base: str) -> str:
    n = 1
    while True:
        candidate = f"{base}-restored" + ("" if n == 1 else f"-{n}")
        if not store.session_path(candidate).exists():
            return candidate
        n += 1


class AlreadyRestored(QuarantineError):
    """The item was restored before (its journal entry still there): a second copy is only
    made when asked for (``again``) or under a chosen id."""


def restore(
    store: DefaultSessionStore,
    item: QuarantineItem,
    *,
    new_session_id: str | None = None,
    dry_run: bool = False,
    again: bool = False,
) -> ActionResult:
    """Write what the item holds as a new session (default id: ``<id>-restored``).

    A damaged live file is restored in place (unless another id is given): its damaged
    bytes move aside to ``<id>.json.corrupt-<ms>`` and the salvage takes its place, in one
    journal entry that :func:`undo` puts back byte-identical. An item restored before
    raises :class:`AlreadyRestored` unless ``again`` or ``new_session_id`` is given.
    """
    _usable(item)
    result = salvage(item)
    if not result.recovered and not result.envelope:
        raise QuarantineError(f"{item.name}: nothing recoverable to restore")
    if new_session_id is None and not again and item.kind != KIND_LIVE:
        done = [h for h in item_history(journal_entries(), item.path) if h["action"] == "restore"]
        if done:
            raise AlreadyRestored(
                f"{item.name} was already restored as {done[0]['session_id']} "
                f"(undo {done[0]['action_id']} to take that back); restore again only to "
                "make another copy"
            )
    if item.kind == KIND_LIVE and new_session_id in (None, item.session_id):
        return _restore_in_place(store, item, result, dry_run=dry_run)
    base = result.session_id or item.session_id or "salvaged"
    sid = new_session_id or _free_id(store, base)
    if not sid.strip():
        raise QuarantineError("the new session id is empty")
    path = store.session_path(sid)
    if path.exists():
        raise QuarantineError(f"session file {path.name} already exists; choose another id")
    changes = [_FileChange(path, "session", "create")]
    if dry_run:
        res = _changes_result("restore", item, sid, changes)
        res.added = result.recovered
        return res

    def build(_current: JSONDict | None) -> JSONDict:
        data = result.session_dict(sid)
        meta = dict(data.get("metadata") or {})
        meta["restored_from"] = item.name
        data["metadata"] = meta
        for name in ("gateway_session_id", "agent_id"):
            data[name] = None
        return data

    journal = _Journal("restore", item, sid)
    _write_session_bytes(store, sid, journal, changes, build, must_not_exist=True)
    res = _changes_result("restore", item, sid, changes)
    res.dry_run, res.action_id, res.added = False, journal.id, result.recovered
    return res


def _aside_path(path: Path) -> Path:
    """Where a damaged live file's bytes go: ``<file>.corrupt-<ms>`` (``-n`` on collision).

    ``<ms>`` is the file's own mtime (when it was last written, likely when it broke), so
    the dry run names the same file the action then writes.
    """
    try:
        ms = os.stat(path).st_mtime_ns // 1_000_000
    except OSError:
        ms = int(time.time() * 1000)
    base = Path(f"{path}.corrupt-{ms}")
    target, n = base, 1
    while os.path.lexists(target):
        target, n = Path(f"{base}-{n}"), n + 1
    return target


def _restore_in_place(
    store: DefaultSessionStore, item: QuarantineItem, result: Salvage, *, dry_run: bool
) -> ActionResult:
    """Move a damaged live file's bytes aside and write its salvage in its place.

    Under the session lock the file is read again and must still be damaged (and be what is
    backed up); the aside copy is written first, then the salvage replaces the live file
    atomically, so the session's path never goes missing.
    """
    sid = item.session_id
    path = item.path
    if not sid or store.session_path(sid) != path:
        raise QuarantineError(
            f"{item.name} is not the own file of session {sid or '?'}; restore it under "
            "another id instead"
        )
    aside = _aside_path(path)
    changes = [_FileChange(path, "session", "modify"), _FileChange(aside, "quarantine", "create")]
    if dry_run:
        res = _changes_result("restore", item, sid, changes)
        res.added = result.recovered
        res.notes.append(
            f"the damaged bytes are kept as {aside.name}; undo puts them back in {path.name}"
        )
        return res
    journal = _Journal("restore", item, sid)
    journal.entry["in_place"] = True
    with session_lock(path, store.lock_timeout):
        raw = _read_capped(path)
        if diagnose(raw) is None:
            raise QuarantineError(f"{item.name} parses now; nothing changed")
        fresh = _salvage_item_bytes(item, raw)
        data = fresh.session_dict(sid)
        meta = dict(data.get("metadata") or {})
        meta["restored_from"] = aside.name
        data["metadata"] = meta
        payload = dumps_session(data)
        aside = _aside_path(path)
        changes = [
            _FileChange(path, "session", "modify"),
            _FileChange(aside, "quarantine", "create"),
        ]
        intended = {
            path: {"exists": True, "sha256": _sha(payload)},
            aside: {"exists": True, "sha256": _sha(raw)},
        }
        try:
            journal.backup(changes, intended)
            if journal.entry["files"][0]["before"].get("sha256") != _sha(raw):
                raise QuarantineError(f"{item.name} changed while it was read; nothing changed")
            atomic_write_bytes(aside, raw, mode=PRIVATE_FILE_MODE)
        except BaseException:
            with contextlib.suppress(OSError):
                if _state(aside).get("sha256") == _sha(raw):
                    aside.unlink()
            shutil.rmtree(journal.dir, ignore_errors=True)  # nothing changed
            raise
        try:
            atomic_write_bytes(path, payload)
        except BaseException:
            if not _matches(_state(path), {"exists": True, "sha256": _sha(raw)}):
                journal.finish()  # the live file did change: undo must be able to put it back
                raise
            with contextlib.suppress(OSError):
                aside.unlink()
            shutil.rmtree(journal.dir, ignore_errors=True)  # nothing changed
            raise
        journal.finish()
    store._notify(sid, path, data)  # the store's after-write hook (an index)
    res = _changes_result("restore", item, sid, changes)
    res.dry_run, res.action_id, res.added = False, journal.id, fresh.recovered
    res.notes.append(f"the damaged bytes are kept as {aside.name}")
    return res


def _ts(msg: Any) -> float | None:
    if not isinstance(msg, dict):
        return None
    ts = msg.get("timestamp")
    if isinstance(ts, bool) or not isinstance(ts, (int, float)):
        return None
    return epoch_seconds(ts)


def merge_in_time_order(existing: list[Any], new: Sequence[JSONDict]) -> tuple[list[Any], int]:
    """``new`` merged into ``existing`` by timestamp, existing order kept.

    Returns the merged list and how many new messages landed before the first
    existing entry (for shifting a compaction anchor). A compaction summary and entries
    without a timestamp are never overtaken; untimed new messages go last.
    """
    timed = sorted((m for m in new if _ts(m) is not None), key=lambda m: _ts(m) or 0.0)
    untimed = [m for m in new if _ts(m) is None]
    out: list[Any] = []
    k = 0
    inserted_before: list[int] = []
    for entry in existing:
        ets = _ts(entry)
        if ets is not None and not (isinstance(entry, dict) and is_summary_message(entry)):
            while k < len(timed) and (_ts(timed[k]) or 0.0) < ets:
                out.append(timed[k])
                k += 1
        inserted_before.append(k)
        out.append(entry)
    out.extend(timed[k:])
    out.extend(untimed)
    return out, 0 if not inserted_before else inserted_before[0]


def _merge_into(live: JSONDict, missing: Sequence[tuple[str, JSONDict]]) -> JSONDict:
    data = dict(live)
    for name in LISTS:
        new = [m for n, m in missing if n == name]
        if not new:
            continue
        current = data.get(name)
        current = list(current) if isinstance(current, list) else []
        merged, _ = merge_in_time_order(current, new)
        if name == "messages":
            cp = data.get("last_compaction")
            if isinstance(cp, dict) and isinstance(cp.get("message_index"), int):
                old_index = cp["message_index"]
                anchor = current[old_index] if 0 <= old_index < len(current) else None
                if anchor is not None:
                    cp = dict(cp)
                    cp["message_index"] = next(i for i, e in enumerate(merged) if e is anchor)
                    data["last_compaction"] = cp
        data[name] = merged
    data["updated_at"] = utc_now_iso()
    return data


def merge(
    store: DefaultSessionStore, item: QuarantineItem, *, dry_run: bool = False
) -> ActionResult:
    """Merge the salvaged messages the live session lacks into it (time order kept)."""
    if item.kind == KIND_LIVE:
        raise QuarantineError(str(unavailable(item, "merge")))
    _usable(item)
    result = salvage(item)
    sid = result.session_id
    if not sid:
        raise QuarantineError(f"{item.name}: no session id found to merge into")
    path = store.session_path(sid)
    live = _target(store, sid)  # the file that would change, checked to hold this session
    if live is None:
        raise _no_own_file(store, sid) or QuarantineError(
            f"{item.name}: no live session {sid!r} to merge into (use restore instead)"
        )
    changes = [_FileChange(path, "session", "modify")]
    missing = _missing(live, result)
    if dry_run:
        res = _changes_result("merge", item, sid, changes if missing else [])
        res.added = len(missing)
        return res
    if not missing:
        res = _changes_result("merge", item, sid, [])
        res.dry_run = False
        res.notes.append("the live session already has every salvaged message")
        return res
    added = 0

    def build(current: JSONDict | None) -> JSONDict:
        nonlocal added
        if current is None:  # read fresh from the file itself, under the lock
            raise QuarantineError(f"live session {sid!r} vanished; nothing changed")
        fresh = _missing(current, result)
        added = len(fresh)
        return _merge_into(current, fresh)

    journal = _Journal("merge", item, sid)
    _, notes = _write_session_bytes(store, sid, journal, changes, build, must_not_exist=False)
    res = _changes_result("merge", item, sid, changes)
    res.dry_run, res.action_id, res.added = False, journal.id, added
    res.notes.extend(notes)
    return res


def fold(
    store: DefaultSessionStore, item: QuarantineItem, *, dry_run: bool = False
) -> ActionResult:
    """Fold a spill file's turns into its session (created if missing); the spill is removed.

    The spill's bytes stay in the journal, so :func:`undo` brings it back.
    """
    if item.kind != KIND_SPILL:
        raise QuarantineError(f"{item.name} is not a spill file (use merge or restore)")
    _usable(item)
    result = salvage(item)
    sid = result.session_id
    if not sid:
        raise QuarantineError(f"{item.name}: the spill names no session")
    path = store.session_path(sid)
    live = _target(store, sid)  # the file that would change, checked to hold this session
    if live is None:
        elsewhere = _no_own_file(store, sid)
        if elsewhere is not None:
            raise elsewhere
    changes = [
        _FileChange(path, "session", "modify" if live is not None else "create"),
        _FileChange(item.path, "spill", "remove"),
    ]
    if dry_run:
        res = _changes_result("fold", item, sid, changes)
        res.added = len(_missing(live, result))
        return res
    added = 0

    def build(current: JSONDict | None) -> JSONDict:
        nonlocal added
        fresh = _missing(current, result)  # against the file itself, read under the lock
        added = len(fresh)
        if current is None:
            return result.session_dict(sid)
        return _merge_into(current, fresh)

    journal = _Journal("fold", item, sid)
    _, notes = _write_session_bytes(store, sid, journal, changes, build, must_not_exist=False)
    res = _changes_result("fold", item, sid, changes)
    res.dry_run, res.action_id, res.added = False, journal.id, added
    res.notes.extend(notes)
    return res


def discard(item: QuarantineItem, *, dry_run: bool = False) -> ActionResult:
    """Move the item into our trash (``data_dir()/trash``); it is never deleted.

    The file is copied in chunks (a sparse file stays sparse, memory stays bounded); a
    symlink is moved as the link itself, never followed.
    """
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = trash_dir() / f"{stamp}-{os.urandom(3).hex()}" / item.name
    changes = [
        _FileChange(item.path, item.kind, "remove"),
        _FileChange(target, "trash", "create"),
    ]
    if dry_run:
        return _changes_result("discard", item, item.session_id, changes)
    journal = _Journal("discard", item, item.session_id)
    before = _state(item.path)
    if not before.get("exists"):
        raise QuarantineError(f"{item.path} is gone; nothing discarded")
    journal.backup(changes, {target: before})
    ensure_private_dir(target.parent)
    if "link" in before:
        os.symlink(str(before["link"]), target)
    else:
        _copy_sparse(item.path, target, mode=PRIVATE_FILE_MODE)
    if _state(target).get("sha256") != journal.entry["files"][0]["before"].get("sha256"):
        target.unlink()
        raise QuarantineError(f"{item.path} changed while it was moved; nothing discarded")
    fsync_dir(target.parent)
    item.path.unlink()
    fsync_dir(item.path.parent)
    journal.finish()
    res = _changes_result("discard", item, item.session_id, changes)
    res.dry_run, res.action_id = False, journal.id
    return res


# --------------------------------------------------------------------------- undo


def _same(state: JSONDict, expected: JSONDict) -> bool:
    if not expected.get("exists"):
        return not state.get("exists")
    return bool(state.get("exists")) and state.get("sha256") == expected.get("sha256")


def _notify_undone(
    stores: Sequence[DefaultSessionStore], path: Path, before: JSONDict, fallback: Any
) -> None:
    """Tell the store owning ``path`` that undo wrote (or removed) that session file."""
    parent = path.parent.absolute()
    owner = next((s for s in stores if s.session_dir.absolute() == parent), None)
    if owner is None:
        return
    data: JSONDict | None = None
    if before.get("exists"):
        try:
            data = read_json_file(path)
        except (OSError, SessionFileError):
            data = None
    sid = data.get("session_id") if data is not None else None
    if not isinstance(sid, str) or not sid:
        sid = fallback if isinstance(fallback, str) and fallback else path.stem
    owner._notify(sid, path, data)


def undo(
    action_id: str | None = None,
    *,
    dry_run: bool = False,
    lock_timeout: float = 5.0,
    stores: Sequence[DefaultSessionStore] = (),
) -> JSONDict:
    """Put back every file of an action (the last one by default), byte-identical.

    Refuses (:class:`QuarantineError`) when any file changed since the action. On success
    the journal entry is removed, along with anything the action created. Each session file
    put back or removed is reported to the after-write hook (an index) of the store in
    ``stores`` whose session dir holds it.
    """
    # An action killed mid-way is finished (or dropped) first; this writes only our own
    # journal, never a session file, so a dry run does it too.
    recover_pending(lock_timeout)
    entries = [e for e in journal_entries() if e.get("status") == "done"]
    if action_id is None:
        if not entries:
            raise QuarantineError("nothing to undo")
        entry = entries[0]
    else:
        matches = [e for e in entries if str(e.get("id", "")).startswith(action_id)]
        if not matches:
            raise QuarantineError(f"no journal entry {action_id!r}")
        if len(matches) > 1:
            raise QuarantineError(f"{action_id!r} matches {len(matches)} journal entries")
        entry = matches[0]
    entry_dir = journal_dir() / str(entry["id"])
    files = entry.get("files") or []
    locks = contextlib.ExitStack()
    with locks:
        for f in files:
            if f.get("role") == "session":
                locks.enter_context(session_lock(Path(f["path"]), lock_timeout))
        for f in files:
            path = Path(f["path"])
            if not _same(_state(path), f.get("after") or {}):
                raise QuarantineError(f"{path} changed since action {entry['id']}; not undone")
            before = f.get("before") or {}
            if before.get("exists") and "link" not in before:
                copy = entry_dir / str(before.get("copy"))
                try:
                    ok = _sha_file(copy)[0] == before.get("sha256")
                except OSError:
                    ok = False
                if not ok:
                    raise QuarantineError(f"the journal backup of {path} is missing or damaged")
        result = {
            "action_id": entry["id"],
            "action": entry.get("action"),
            "dry_run": dry_run,
            "files": [
                {
                    "path": f["path"],
                    "restore": "remove" if not f["before"].get("exists") else "write",
                }
                for f in files
            ],
        }
        if dry_run:
            return result
        for f in files:
            path = Path(f["path"])
            before = f["before"]
            if before.get("exists"):
                path.parent.mkdir(parents=True, exist_ok=True)
                backup = entry_dir / str(before["copy"]) if "copy" in before else None
                _put_back(path, backup, before)
            else:
                path.unlink(missing_ok=True)
                fsync_dir(path.parent)
                if f.get("role") == "trash":
                    with contextlib.suppress(OSError):
                        path.parent.rmdir()
            if f.get("role") == "session":
                _notify_undone(stores, path, before, entry.get("session_id"))
    shutil.rmtree(entry_dir)
    for d in (journal_dir(), trash_dir()):
        with contextlib.suppress(OSError):
            d.rmdir()  # only when empty
    return result


# --------------------------------------------------------------------------- journaled writes


class _SourceJournal(_Journal):
    """A journal entry for an action whose source is a file, not a quarantine item (import)."""

    def __init__(self, action: str, source: str, session_id: str | None) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        self.id = f"{stamp}-{action}-{os.urandom(3).hex()}"
        self.dir = journal_dir() / self.id
        self.entry = {
            "id": self.id,
            "action": action,
            "at": utc_now_iso(),
            "item": source,
            "session_id": session_id,
            "status": "pending",
            "pid": os.getpid(),
            "files": [],
        }


@dataclass
class SessionWrite:
    """One whole session file to put in place: ``build()`` gives the dict to write, whose
    serialised bytes have ``sha256`` (decided when it was planned)."""

    session_id: str
    sha256: str
    build: Callable[[], JSONDict]


@dataclass
class JournaledWrites:
    """What :func:`write_sessions_journaled` did; ``action_id`` is None when nothing changed."""

    action_id: str | None = None
    created: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)


def sha256_of(data: bytes) -> str:
    """The digest the journal records for a file's bytes."""
    return _sha(data)


def write_sessions_journaled(
    store: DefaultSessionStore,
    action: str,
    source: str,
    writes: Sequence[SessionWrite],
    *,
    overwrite: bool,
    exists_reason: str,
    failed_reason: str,
) -> JournaledWrites:
    """Write whole session files as one journal entry, so :func:`undo` puts them all back.

    Every file that exists is copied into the entry, saved ``pending`` with what each file
    will hold, before any file is written (a crash leaves an entry :func:`recover_pending`
    finishes or drops). Then each file is written under its session lock with an atomic
    write, only when it is still what was backed up: a file that appeared (without
    ``overwrite``), changed meanwhile, is corrupt or holds another session is skipped with
    the reason (``exists_reason``, or ``failed_reason: why``), and so is a failed write.
    The entry then lists only the files written: undo puts a replaced file back
    byte-identical and removes a created one, refusing when any changed since.
    """
    result = JournaledWrites()
    if not writes:
        return result
    ensure_private_dir(store.session_dir.path)
    paths = [store.session_path(w.session_id) for w in writes]
    changes = [
        _FileChange(p, "session", "modify" if os.path.lexists(p) else "create") for p in paths
    ]
    intended = {p: {"exists": True, "sha256": w.sha256} for p, w in zip(paths, writes, strict=True)}
    journal = _SourceJournal(action, source, writes[0].session_id if len(writes) == 1 else None)
    try:
        journal.backup(changes, intended)
    except BaseException:
        shutil.rmtree(journal.dir, ignore_errors=True)
        raise
    records = list(journal.entry["files"])
    kept: list[JSONDict] = []

    def drop(record: JSONDict) -> None:
        copy = (record.get("before") or {}).get("copy")
        if copy:
            with contextlib.suppress(OSError):
                (journal.dir / str(copy)).unlink()
        journal.entry["files"] = [f for f in journal.entry["files"] if f is not record]
        journal._save()

    try:
        for w, path, record in zip(writes, paths, records, strict=True):
            reason = ""
            try:
                with session_lock(path, store.lock_timeout):
                    now = _state(path)
                    if now.get("exists") and not overwrite:
                        reason = exists_reason
                    elif not _matches(now, record["before"]):
                        reason = f"{failed_reason}: {path.name} changed while importing"
                    else:
                        if now.get("exists"):
                            store._check_replaceable(w.session_id, path)
                        data = w.build()
                        payload = dumps_session(data)
                        if _sha(payload) != w.sha256:
                            raise ValueError("the session changed since it was checked")
                        atomic_write_bytes(path, payload)
                        kept.append(record)
                        done = result.replaced if now.get("exists") else result.created
                        done.append(w.session_id)
                        store._notify(w.session_id, path, data)
            except (OSError, ValueError, TypeError, RecursionError) as exc:
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                reason = f"{failed_reason}: {why}"
            if reason:
                result.skipped.append({"session_id": w.session_id, "reason": reason})
                drop(record)
    finally:
        journal.entry["files"] = kept
        if kept:
            journal.finish()
            result.action_id = journal.id
        else:
            shutil.rmtree(journal.dir, ignore_errors=True)
            with contextlib.suppress(OSError):
                journal_dir().rmdir()  # only when empty
    return result
