"""Finding the items of the open stores, and what the journal says was done with each."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..files import (
    CORRUPT_RE,
    SPILL_RE,
    loads,
    spill_belongs_to,
)
from ..model import JSONDict
from ..store import DefaultSessionStore
from .items import (
    KIND_CORRUPT,
    KIND_LIVE,
    KIND_SPILL,
    QuarantineError,
    QuarantineItem,
    _item,
    _read_capped,
)
from .journal import journal_entries
from .live import HealthyFiles
from .salvage import _live, _missing, salvage


def _entries(directory: Path) -> Iterator[tuple[Path, os.stat_result]]:
    """The regular files of ``directory`` (symbolic links followed), with their stat, in
    the order the directory lists them (the caller sorts what it keeps): one entry at a
    time, so a dir of 30,000 sessions is never held as 30,000 entries and stats at once."""
    try:
        it = os.scandir(directory)
    except OSError:
        return
    with it:
        while True:
            try:
                entry = next(it, None)
            except OSError:
                return
            if entry is None:
                return
            try:
                st = entry.stat()
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                yield directory / entry.name, st


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
            healthy = HealthyFiles(directory) if kind == KIND_CORRUPT else None
            for path, st in _entries(directory):
                m = pattern.match(path.name)
                if m and (kind != KIND_SPILL or _spill_offered(path, store, first=first)):
                    items.append(_item(kind, path, st, store, m.group("stem"), m.group("ms")))
                elif healthy is not None and _is_session_name(path.name):
                    live = _damaged_live(store, path, st, known, healthy)
                    if live is not None:
                        items.append(live)
            if healthy is not None:
                healthy.save()
    items.sort(key=lambda it: (it.at_ms if it.at_ms is not None else it.mtime * 1000, it.name))
    _add_status(items, stores)
    return items


def _is_session_name(name: str) -> bool:
    """A live session file's name, as the store lists them (``iter_session_files``)."""
    return name.endswith(".json") and not name.startswith(".")


def _index_skipped(store: DefaultSessionStore) -> frozenset[str]:
    """The names of the files the store's index (when it has one) could not read: each is
    read whole, whatever its first and last bytes look like."""
    try:
        return frozenset(str(n) for n in store.skipped_names())
    except Exception:  # an index problem never stops the listing
        return frozenset()


def _damaged_live(
    store: DefaultSessionStore,
    path: Path,
    st: os.stat_result,
    known: frozenset[str],
    healthy: HealthyFiles,
) -> QuarantineItem | None:
    """An item for the live file ``path`` when the store's reading path cannot read it as a
    session, else None (a file the index could not read, ``known``, is always read)."""
    if not healthy.is_damaged(path, st, recheck=path.name in known):
        return None
    return _item(KIND_LIVE, path, st, store, path.name[: -len(".json")], "")


def item_history(entries: Sequence[JSONDict], item_path: Path) -> list[JSONDict]:
    """The done journal entries that acted on the file at ``item_path`` (newest first):
    those naming it as their item, and an in-place restore that moved it aside to there."""
    wanted = str(item_path)
    out: list[JSONDict] = []
    for e in entries:
        if e.get("status") != "done":
            continue
        aside = any(
            f.get("role") == "quarantine" and f.get("path") == wanted for f in e.get("files") or []
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
                left = len(_missing(_live(store, sid), salvage(item))) if store is not None else -1
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
