"""Saved searches: named queries the app runs again from a list (F9) or its palette.

One JSON file in our data dir, next to the query history (``saved-searches.json``, 0600 in
a 0700 dir), in the order they were saved, written atomically. A file that cannot be read
is told (:class:`SavedSearchesError`) and left as it is: the app says so and goes on, and
saving refuses to write over it (it may be the user's only copy of their searches).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .files import atomic_write_bytes
from .paths import data_dir, ensure_private_dir

MAX_FILE_BYTES = 1024 * 1024
MAX_NAME_CHARS = 80
MAX_QUERY_CHARS = 1000
MAX_SEARCHES = 500


class SavedSearchesError(Exception):
    """The saved-searches file exists but cannot be read as one."""


@dataclass(frozen=True)
class SavedSearch:
    name: str
    query: str


def saved_path() -> Path:
    return data_dir() / "saved-searches.json"


def load_saved(path: Path | None = None) -> list[SavedSearch]:
    """The saved searches ([] when there is no file); raises :class:`SavedSearchesError`
    when the file is there but is not a list of ``{"name", "query"}`` (entries that are not
    are skipped, a file that is not JSON or too big is an error)."""
    path = path or saved_path()
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise SavedSearchesError(f"{path} is bigger than {MAX_FILE_BYTES // 1024} KiB")
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise SavedSearchesError(f"cannot read {path}: {exc}") from exc
    items = data.get("searches") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise SavedSearchesError(f'{path} has no "searches" list')
    out: dict[str, SavedSearch] = {}
    for item in items:
        if not isinstance(item, dict):
            continue
        name, query = item.get("name"), item.get("query")
        if isinstance(name, str) and isinstance(query, str) and name.strip() and query.strip():
            out[name.strip()] = SavedSearch(name.strip(), query)
    return list(out.values())


def _write(entries: list[SavedSearch], path: Path) -> None:
    ensure_private_dir(path.parent)
    payload = {"searches": [{"name": e.name, "query": e.query} for e in entries]}
    atomic_write_bytes(path, json.dumps(payload, ensure_ascii=False, indent=1).encode("utf-8"))


def save_search(name: str, query: str, path: Path | None = None) -> list[SavedSearch]:
    """Save ``query`` as ``name`` (a search of that name is replaced) and return them all.

    Raises ``ValueError`` for a blank or over-long name or query, :class:`SavedSearchesError`
    when the file there cannot be read (it is not written over), ``OSError`` when it cannot
    be written (the old file then stays as it was)."""
    path = path or saved_path()
    name, text = name.strip(), query.strip()
    if not name or not text:
        raise ValueError("a saved search needs a name and a query")
    if len(name) > MAX_NAME_CHARS or "\n" in name:
        raise ValueError(f"a name is one line of at most {MAX_NAME_CHARS} characters")
    if len(text) > MAX_QUERY_CHARS:
        raise ValueError(f"a query of more than {MAX_QUERY_CHARS} characters is not saved")
    entries = [e for e in load_saved(path) if e.name != name]
    if len(entries) >= MAX_SEARCHES:
        raise ValueError(f"at most {MAX_SEARCHES} searches are kept: delete one first")
    entries.append(SavedSearch(name, text))
    _write(entries, path)
    return entries


def delete_search(name: str, path: Path | None = None) -> list[SavedSearch]:
    """Forget the search called ``name`` and return the others (same errors as saving)."""
    path = path or saved_path()
    entries = load_saved(path)
    kept = [e for e in entries if e.name != name]
    if len(kept) != len(entries):
        _write(kept, path)
    return kept
