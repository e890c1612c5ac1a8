"""The team index searches lexically in hybrid mode too (it keeps no vectors): the same hits
as in lexical mode, and a notice saying so. A real PostgreSQL cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from session_browser.core.pgindex import PgIndexStore, push_stores
from session_browser.core.pgindex.engine import TEAM_LEXICAL
from session_browser.core.search.hybrid import ENV
from session_browser.core.sources import SOURCES

from .corpus import write_store


def test_hybrid_mode_on_the_team_index_answers_lexically_and_says_so(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = write_store(tmp_path / "store")
    push_stores(pg_url, [(SOURCES["praisonai"].source(d), "praisonai")])
    team = PgIndexStore(pg_url)
    try:
        monkeypatch.setenv(ENV, "lexical")
        lexical = team.search_ex("billing migration", limit=5)
        assert lexical.hits and TEAM_LEXICAL not in [str(w) for w in lexical.warnings]
        monkeypatch.setenv(ENV, "hybrid")
        hybrid = team.search_ex("billing migration", limit=5)
        assert [h.session_id for h in hybrid.hits] == [h.session_id for h in lexical.hits]
        assert TEAM_LEXICAL in [str(w) for w in hybrid.warnings]
        monkeypatch.setenv(ENV, "nonsense")
        bad = team.search_ex("billing migration", limit=5)
        assert bad.error is not None and "hybrid or lexical" in bad.error
    finally:
        team.close()
