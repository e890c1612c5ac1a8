"""The query history: earlier searches, recalled with Up / Ctrl+R in the app.

The app keeps every query whose hits stayed on screen a moment (as a shell keeps every
command run), and at once one a session was opened from; never one that found nothing.

One JSON file in our data dir (``query-history.json``, 0600, in a 0700 dir), oldest first,
each query once (asking one again moves it to the end), at most :data:`MAX_ENTRIES`,
written atomically. A file that cannot be read is an empty history (and is replaced on
the next write), never an error that stops a search.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .files import atomic_write_bytes
from .paths import data_dir, ensure_private_dir

MAX_ENTRIES = 500
MAX_QUERY_CHARS = 1000  # a pasted transcript is not a query worth remembering
MAX_FILE_BYTES = 2 * 1024 * 1024


def history_path() -> Path:
    """Where the query history lives (our data dir)."""
    return data_dir() / "query-history.json"


def load_history(path: Path | None = None) -> list[str]:
    """The remembered queries, oldest first ([] when there are none or the file is bad)."""
    path = path or history_path()
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return []
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return []
    items = data.get("queries") if isinstance(data, dict) else data
    if not isinstance(items, list):
        return []
    out: list[str] = []
    seen: set[str] = set()
    for item in reversed(items):  # the newest copy of a repeat wins
        if isinstance(item, str) and item.strip() and item not in seen:
            seen.add(item)
            out.append(item)
    out.reverse()
    return out[-MAX_ENTRIES:]


def remember(query: str, path: Path | None = None, *, limit: int = MAX_ENTRIES) -> list[str]:
    """Add ``query`` as the newest entry (once) and save; returns the history.

    Blank and over-long queries are not kept. Raises ``OSError`` when the file cannot be
    written (the old file is then left as it was)."""
    path = path or history_path()
    entries = load_history(path)
    text = query.strip()
    if not text or len(text) > MAX_QUERY_CHARS or "\n" in text:
        return entries
    entries = [e for e in entries if e != text]
    entries.append(text)
    entries = entries[-max(1, limit) :]
    ensure_private_dir(path.parent)
    payload = json.dumps({"queries": entries}, ensure_ascii=False, indent=0).encode("utf-8")
    atomic_write_bytes(path, payload)
    return entries


@dataclass
class HistoryWalk:
    """Stepping back through the history from what is typed (like a shell's Up).

    The typed text narrows the walk to the entries that contain it (case-insensitive);
    :meth:`older` and :meth:`newer` give the next entry or None at either end (:meth:`newer`
    past the newest gives the typed text back)."""

    entries: list[str]
    typed: str = ""
    _matches: list[str] = field(default_factory=list)
    _pos: int = -1  # index into _matches, newest first; -1: the typed text

    def __post_init__(self) -> None:
        needle = self.typed.strip().casefold()
        newest_first = list(reversed(self.entries))
        self._matches = [
            e for e in newest_first if needle in e.casefold() and e.strip() != self.typed.strip()
        ]

    @property
    def active(self) -> bool:
        """True while an entry (not the typed text) is shown."""
        return self._pos >= 0

    def older(self) -> str | None:
        if self._pos + 1 >= len(self._matches):
            return None
        self._pos += 1
        return self._matches[self._pos]

    def newer(self) -> str | None:
        if self._pos < 0:
            return None
        self._pos -= 1
        return self._matches[self._pos] if self._pos >= 0 else self.typed
