"""PraisonAI session files as the corpus writes and reads them: conversation ids, tokens,
parsing, the automated rule and spilled turns."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from session_browser.core import recall

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is optional
    _HAVE_ORJSON = False
else:
    _HAVE_ORJSON = True

JSONDict = dict[str, Any]

WORD_RE = re.compile(r"\w+")
_SUFFIX_RE = re.compile(r"^(.*?)(?:-copy\d+)?(?:-part\d+)?$")


def conversation_key(session_id: str) -> str:
    """The source conversation of a corpus session id (``-copyN`` / ``-partN`` stripped)."""
    match = _SUFFIX_RE.match(session_id)
    return match.group(1) if match else session_id


def tokenize(text: str) -> list[str]:
    """The corpus tokenizer: lowercase unicode ``\\w+`` words, in order."""
    return WORD_RE.findall(text.lower())


def iso_utc(epoch: float) -> str:
    """``datetime.isoformat()`` of an epoch in UTC, as PraisonAI writes ``created_at``."""
    return datetime.fromtimestamp(epoch, UTC).isoformat()


def loads(data: bytes | str) -> Any:
    if _HAVE_ORJSON:
        return orjson.loads(data)
    return json.loads(data)


def _json_bytes(obj: Any) -> bytes:
    return json.dumps(obj, indent=2, ensure_ascii=False).encode("utf-8")


class Encoder:
    """PraisonAI's JSON bytes; orjson when it is byte-identical (verified on a sample)."""

    def __init__(self, use_orjson: bool) -> None:
        self.use_orjson = use_orjson and _HAVE_ORJSON
        self.count = 0
        self.fallbacks = 0

    def __call__(self, obj: Any) -> bytes:
        self.count += 1
        if not self.use_orjson:
            return _json_bytes(obj)
        try:
            data: bytes = orjson.dumps(obj, option=orjson.OPT_INDENT_2)
        except (TypeError, orjson.JSONEncodeError):
            self.fallbacks += 1
            return _json_bytes(obj)
        if self.count <= 64 or self.count % 256 == 0:
            reference = _json_bytes(obj)
            if reference != data:
                self.use_orjson = False
                self.fallbacks += 1
                return reference
        return data


def load_session(path: Path) -> JSONDict | None:
    """A session file parsed strictly (UTF-8, JSON, dict root with a messages list) or None."""
    try:
        raw = path.read_bytes()
        data = json.loads(raw.decode("utf-8")) if not _HAVE_ORJSON else orjson.loads(raw)
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        return None
    return data


def iter_session_dicts(sessions_dir: Path) -> Iterator[tuple[str, JSONDict | None]]:
    """``(file stem, parsed session or None when unreadable)`` for every ``*.json``, sorted."""
    for path in sorted(Path(sessions_dir).glob("*.json")):
        yield path.stem, load_session(path)


def session_messages(data: JSONDict) -> list[JSONDict]:
    """The archived-plus-active projection: ``archived_messages + messages`` (dicts only)."""
    archived = data.get("archived_messages") or []
    active = data.get("messages") or []
    return [m for m in [*archived, *active] if isinstance(m, dict)]


def is_automated(data: JSONDict, messages: Sequence[JSONDict] | None = None) -> bool:
    """The ranking rule (:func:`session_browser.core.recall.is_automated`: tagged
    cron/scheduled/..., or more than 60 messages an hour), over ``messages`` or else the
    session's archived and active messages."""
    return recall.is_automated(data, session_messages(data) if messages is None else messages)


def read_spills(spill_dir: Path | None) -> dict[str, list[JSONDict]]:
    """The turns of PraisonAI spill files by session id, oldest file first."""
    out: dict[str, list[JSONDict]] = {}
    if spill_dir is None or not Path(spill_dir).is_dir():
        return out
    for path in sorted(Path(spill_dir).glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("messages"), list):
            msgs = [m for m in data["messages"] if isinstance(m, dict)]
            out.setdefault(str(data.get("session_id")), []).extend(msgs)
    return out

