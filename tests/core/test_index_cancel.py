"""Cancelling a search stops its running SQLite statement (a progress handler interrupts it),
the result says ``cancelled``, and the index stays usable: never a fallback scan, never
marked broken."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from session_browser.core.index import SearchCancelled, SqliteSessionStore
from session_browser.core.multi import StoreGroup
from session_browser.core.query import parse_query

from .test_index import put


@pytest.fixture
def store(tmp_path: Path) -> SqliteSessionStore:
    d = tmp_path / "sessions"
    for i in range(120):
        put(
            d,
            f"s{i}",
            [f"the billing migration step {j} of session {i}" for j in range(20)],
            updated=f"2026-01-{1 + i % 28:02d}T00:00:00+00:00",
        )
    return SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3")


class Flip:
    """Not cancelled for the first ``after`` questions, cancelled from then on; counts the
    questions SQLite's progress handler asked (through the index's handler) while a
    statement ran."""

    def __init__(self, after: int) -> None:
        self.after = after
        self.asked = 0
        self.by_sqlite = 0

    def __call__(self) -> bool:
        self.asked += 1
        if sys._getframe(1).f_code.co_name == "handler":
            self.by_sqlite += 1
        return self.asked > self.after


def test_a_cancelled_search_stops_inside_its_statement_and_the_index_stays_usable(
    store: SqliteSessionStore,
) -> None:
    with store:
        before = store.search_ex("billing migration", limit=10)
        assert len(before.hits) == 10 and not before.cancelled
        # Cancelled at the first question: SQLite asks first, so the statement in hand is
        # the one interrupted, not a step between two.
        flip = Flip(after=0)
        res = store.search_ex("billing migration", limit=10, cancelled=flip)
        assert res.cancelled and res.hits == [] and flip.by_sqlite == 1
        assert store.broken is None
        with pytest.raises(SearchCancelled):
            store.relevance_candidates(parse_query("billing"), cancelled=lambda: True)
        after = store.search_ex("billing migration", limit=10)
        assert [h.session_id for h in after.hits] == [h.session_id for h in before.hits]
        never = Flip(after=10**9)
        res = store.search_ex("billing migration", limit=10, cancelled=never)
        assert [h.session_id for h in res.hits] == [h.session_id for h in before.hits]
        assert never.by_sqlite > 0 and never.asked > never.by_sqlite  # and between steps


def test_a_group_search_cancelled_says_so(store: SqliteSessionStore) -> None:
    with store:
        group = StoreGroup([store])
        res = group.search_ex("billing", limit=5, cancelled=lambda: True)
        assert res.cancelled and res.hits == [] and res.error is None
        assert len(group.search_ex("billing", limit=5).hits) == 5
