"""A search the next keystroke supersedes stops inside its SQLite statement: the backend
hands the worker's cancel question to the index, and answers "superseded" with no hits."""

from __future__ import annotations

import sys
from pathlib import Path

from session_browser.tui.backend import Backend

from ..core.test_index import put


def test_a_superseded_search_is_interrupted_in_sqlite(tmp_path: Path) -> None:
    d = tmp_path / "sessions"
    for i in range(60):
        put(d, f"s{i}", [f"the billing migration step {j} of {i}" for j in range(10)])
    backend = Backend([d], indexed=True)
    try:
        for store in backend.stores:
            store.reconcile()
        assert len(backend.search("billing migration", limit=5).hits) == 5
        out = backend.search("billing migration", limit=5, is_cancelled=lambda: False)
        assert out.error is None and len(out.hits) == 5
        callers: list[str] = []

        def superseded_while_sqlite_runs() -> bool:
            # False to the backend's and the group's own questions; true as soon as SQLite's
            # progress handler (the index's handler) asks, i.e. while a statement runs.
            callers.append(sys._getframe(1).f_code.co_name)
            return callers[-1] == "handler"

        out = backend.search(
            "billing migration", limit=5, is_cancelled=superseded_while_sqlite_runs
        )
        assert out.error == "superseded" and out.hits == []
        assert "handler" in callers, callers
    finally:
        backend.close()
