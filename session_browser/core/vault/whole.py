"""Sessions that are no file of their own (rows of OpenCode's or Goose's database, a launch
inside Aider's chat history, a Kimi session spread over a folder of logs): what the vault
keeps of them is the session as its source reads it, hidden parts included, written as a
portable export (``{"kept_export": {...}, "version": 1, "sessions": [<session>]}``; the
first key says what it is, and ``session-browser import`` reads the rest).

A version of such a session is one of these exports, named by the session's name under its
store's dir (``<dir>/opencode.db/<session id>``, ``<dir>/.aider.chat.history.md#<launch>``),
kept again when its content changes. Nothing is ever written where the agent keeps its
sessions: the export is made from what the source read.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from ..files import loads
from ..model import JSONDict
from ..payload import PORTABLE_VERSION
from ..text import safe_json

#: The first key of a kept export: {"source": <kind>, "name": <session name under its dir>}.
MARK = "kept_export"
#: How a kept export starts (no session file of any source starts so).
HEAD = b'{"' + MARK.encode() + b'"'


def export_bytes(kind: str, name: str, data: JSONDict) -> bytes:
    """The bytes the vault keeps of session ``name`` of source ``kind`` read as ``data``
    (the same data always gives the same bytes: an unchanged session adds no version)."""
    payload = {
        MARK: {"source": kind, "name": name},
        "version": PORTABLE_VERSION,
        "sessions": [data],
    }
    try:
        return orjson.dumps(payload)
    except (TypeError, orjson.JSONEncodeError):  # lone surrogates, deep nesting, NaN
        return safe_json(payload, indent=None).encode("utf-8")


def export_name(session_id: str) -> str:
    """The file name a kept export is restored under: ``<session id>.json``, its characters
    other than letters, digits, ``.``, ``-`` and ``_`` replaced by ``_`` (never a hidden
    file, never a path)."""
    name = re.sub(r"[^\w.-]", "_", session_id, flags=re.ASCII).lstrip(".")
    return f"{name or 'session'}.json"


def read_export(raw: bytes, *, hidden: bool = False) -> JSONDict | None:
    """The session of a kept export (None: not one); without ``hidden``, the parts a reader
    does not see by default (``metadata.hidden`` of each message) are left out, as a source's
    own read leaves them out."""
    try:
        payload: Any = loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(payload, dict) or not isinstance(payload.get(MARK), dict):
        return None
    sessions = payload.get("sessions")
    if not isinstance(sessions, list) or len(sessions) != 1 or not isinstance(sessions[0], dict):
        return None
    data: JSONDict = sessions[0]
    if not hidden:
        for key in ("messages", "archived_messages"):
            for msg in data.get(key) or []:
                meta = msg.get("metadata") if isinstance(msg, dict) else None
                if isinstance(meta, dict):
                    meta.pop("hidden", None)
    return data
