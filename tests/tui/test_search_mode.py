"""The app's search-mode key: Ctrl+B switches between hybrid search (words and meaning) and
lexical search and searches the query again. A real index, vectors built by a deterministic
embedder (tests/core/test_hybrid.py's)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from session_browser.core.embed import register
from session_browser.core.index import SqliteSessionStore
from session_browser.core.index.vectors import build_vectors
from session_browser.core.search import hybrid
from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.search.hits import HitList

from ..core.test_hybrid import FILLER, QUESTION, T0, TARGET, SynonymEmbedder, put
from .conftest import settle, until
from .stores import NOW

SIZE = (120, 36)


@pytest.fixture
def clean_mode(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(hybrid.ENV, raising=False)
    yield
    monkeypatch.delenv(hybrid.ENV, raising=False)  # (the key set it in this process)


async def test_ctrl_b_switches_the_search_mode_and_searches_again(
    tmp_path: Path, clean_mode: None
) -> None:
    store = tmp_path / "sessions"
    for i, texts in enumerate(FILLER):
        put(store, f"filler-{i}", texts, T0 + i * 3600)
    put(store, "target", TARGET, T0)
    embedder = SynonymEmbedder()
    register(embedder)
    backend = Backend([store], indexed=True, vault=False)
    index = backend.group.stores[0]
    assert isinstance(index, SqliteSessionStore)
    index.reconcile()
    app = SessionBrowserApp(backend, now=NOW, store_labels=["test-store"], animate=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press(*QUESTION)
        await settle(pilot, app)
        hits = app.screen.query_one(HitList)
        assert "target" not in [h.session_id for h in hits.hits]  # no vectors: lexical
        build_vectors(index.db_path, embedder)
        await pilot.press("ctrl+b")  # hybrid
        await until(pilot, lambda: "target" in [h.session_id for h in hits.hits], 10)
        assert any("Search mode: hybrid" in str(n.message) for n in app._notifications)
        await pilot.press("ctrl+b")  # lexical again
        await until(pilot, lambda: "target" not in [h.session_id for h in hits.hits], 10)
        assert any("Search mode: lexical" in str(n.message) for n in app._notifications)
    assert json.dumps(hybrid.requested_mode()) == '"lexical"'
