"""Rescue: which of the open stores a quarantined file belongs to."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..quarantine import QuarantineItem
from ..store import DefaultSessionStore


def writable_stores(stores: Iterable[Any]) -> list[DefaultSessionStore]:
    """The JSON session stores among ``stores`` (the only ones that hold quarantined files
    and that rescue actions write into)."""
    return [s for s in stores if isinstance(s, DefaultSessionStore)]


def store_holding(stores: Iterable[Any], item: QuarantineItem) -> DefaultSessionStore:
    """The open store whose session dir holds ``item``; a plain store over that dir (and
    the item's spill dir) when none of ``stores`` does."""
    for store in writable_stores(stores):
        if store.session_dir == item.session_dir:
            return store
    return DefaultSessionStore(item.session_dir, spill_dir=item.spill_dir)
