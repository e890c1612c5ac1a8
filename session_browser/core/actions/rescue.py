"""Rescue: which of the open stores a quarantined file belongs to."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..quarantine import QuarantineItem
from ..store import DefaultSessionStore


def writer_of(store: Any) -> DefaultSessionStore | None:
    """The JSON session store that makes ``store``'s writes: the store itself, the writer
    an index holds over PraisonAI's files, or None for a read-only store."""
    from ..index import SqliteSessionStore

    if isinstance(store, SqliteSessionStore):  # first: a virtual DefaultSessionStore
        return store.writer
    return store if isinstance(store, DefaultSessionStore) else None


def writable_stores(stores: Iterable[Any]) -> list[DefaultSessionStore]:
    """The JSON session stores among ``stores``, an index's writer for the index (the only
    ones that hold quarantined files and that rescue actions write into)."""
    return [w for w in map(writer_of, stores) if w is not None]


def store_holding(stores: Iterable[Any], item: QuarantineItem) -> DefaultSessionStore:
    """The open store whose session dir holds ``item``; a plain store over that dir (and
    the item's spill dir) when none of ``stores`` does."""
    for store in writable_stores(stores):
        if store.session_dir == item.session_dir:
            return store
    return DefaultSessionStore(item.session_dir, spill_dir=item.spill_dir)
