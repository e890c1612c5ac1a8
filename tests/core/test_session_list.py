"""The session list's filter and orders, shared by every store and the group of plain
stores (one definition in ``recall``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from session_browser.core import recall
from session_browser.core.multi import StoreGroup
from session_browser.core.store import DefaultSessionStore


def _store(root: Path, sessions: dict[str, str]) -> DefaultSessionStore:
    store = DefaultSessionStore(root / "sessions", retention="keep_all")
    for sid, text in sessions.items():
        store.add_user_message(sid, text)
    return store


def test_a_group_of_plain_stores_filters_and_sorts_as_one_list(tmp_path: Path) -> None:
    a = _store(tmp_path / "a", {"Alpha-1": "short", "beta": "x" * 5000})
    b = _store(tmp_path / "b", {"alpha-2": "y" * 900, "gamma": "z"})
    group = StoreGroup([a, b])
    by_size = [s.session_id for s in group.browse(sort="size")]
    assert by_size[:2] == ["beta", "alpha-2"] and sorted(by_size[2:]) == ["Alpha-1", "gamma"]
    sizes = [s.size for s in group.browse(sort="size")]
    assert sizes == sorted(sizes, reverse=True)
    assert {s.session_id for s in group.browse(text="  ALPHA ")} == {"Alpha-1", "alpha-2"}
    assert group.count(text="alpha") == 2 and group.count() == 4
    with pytest.raises(ValueError, match="sort must be one of"):
        group.browse(sort="name")


def test_the_orders_are_one_table() -> None:
    assert recall.SORTS == ("updated", "created", "size")
    assert recall.sort_summaries([], "created") == []
    with pytest.raises(ValueError):
        recall.sort_summaries([], "oldest")
