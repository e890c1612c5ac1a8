"""Quarantined, spilled and damaged live files as items: what each is, its parse problem."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ..files import (
    MAX_SESSION_BYTES,
    SessionFileError,
    read_file_bytes,
    session_id_from_bytes,
)
from ..model import JSONDict
from ..paths import safe_id
from ..store import DefaultSessionStore

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
    # The id written inside the file when it differs from ``session_id``. The file name is
    # the identity (what PraisonAI named it and what the user sees): every action uses
    # ``session_id``; the claim inside is only shown, as a warning.
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


def _identity(
    raw: bytes, payload: JSONDict | None, stem: str, kind: str
) -> tuple[str | None, str, str | None]:
    """(session id, where it came from, the other id the bytes claim) of a listed file.

    The one rule of the workbench, for every kind of item and every action: the file name
    is the identity (what PraisonAI named the file, what the user sees). The id written in
    the file is used only when it names that same file (``safe_id`` of it is the name's
    stem: it is then the exact id, which the name spells lossily); one that names another
    file is shown as a claim and never acted on.
    """
    claimed = payload.get("session_id") if payload is not None else None
    from_payload = isinstance(claimed, str) and bool(claimed)
    if not from_payload:
        claimed = id_from_bytes(raw)
    if isinstance(claimed, str) and claimed and (safe_id(claimed) == stem or not stem):
        return claimed, "payload" if from_payload and kind == KIND_SPILL else "bytes", None
    if stem:
        return stem, "name", claimed if isinstance(claimed, str) and claimed != stem else None
    return None, "unknown", None


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
    count: int | None = None
    if kind == KIND_SPILL and payload is not None:
        msgs = payload.get("messages")
        count = sum(1 for m in msgs if isinstance(m, dict)) if isinstance(msgs, list) else 0
    sid, source, inner = _identity(raw, payload, stem, kind)
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
