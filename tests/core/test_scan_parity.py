"""One query semantics: the file scan (``--no-index``, an unusable index) and the index give
the same sessions for every filter of the query language."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.index import SqliteSessionStore
from session_browser.core.multi import StoreGroup
from session_browser.core.search.rank import COVERAGE_CHECK
from session_browser.core.store import DefaultSessionStore

from .test_index import put

NEW = 1_780_000_000.0  # 2026-05-28
OLD = 1_700_000_000.0  # 2023-11-14


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("parity") / "sessions"
    put(d, "user_lorem", ["lorem ipsum", "fine thanks"])
    put(d, "asst_lorem", ["hello", "lorem dolor"])
    put(d, "arch", ["new talk"], archived=["lorem archived words", "ok"])
    put(d, "old_budget", ["budget planning"], start=OLD)
    put(d, "new_budget", ["budget review"], start=NEW)
    put(d, "agent_budget", ["budget agenda"], agent_name="Planner")
    put(d, "cron_budget", ["budget nightly"], source="cron")
    put(d, "proj", ["lorem budget"], meta={"cwd": "/home/u/proj"})
    put(d, "phrase", ["billing migration plan"])
    put(d, "words", ["migration of billing"])
    put(d, "prefix", ["migrating servers"])
    put(d, "cafe", ["Café au lait"])
    put(d, "substring", ["concatenate loremipsum"])
    return d


QUERIES = {
    "lorem": {"user_lorem", "asst_lorem", "arch", "proj"},
    "role:assistant lorem": {"asst_lorem"},
    "role:user lorem": {"user_lorem", "arch", "proj"},
    "archived:yes lorem": {"arch"},
    "archived:no lorem": {"user_lorem", "asst_lorem", "proj"},
    "since:2026-01-01 budget": {"new_budget"},
    "until:2024-01-01 budget": {"old_budget"},
    "session:new_budget budget": {"new_budget"},
    "agent:planner budget": {"agent_budget"},
    "source:cron budget": {"cron_budget"},
    "project:/home/u/proj lorem": {"proj"},
    '"billing migration"': {"phrase"},
    "billing migration": {"phrase", "words"},
    "lorem -dolor": {"user_lorem", "arch", "proj"},
    "lorem -lorem": set(),  # a word and its exclusion: nothing, on every path
    "budget -review -nightly": {"old_budget", "agent_budget", "proj"},
    "migrat*": {"phrase", "words", "prefix"},
    "cafe": {"cafe"},
    "CAFÉ": {"cafe"},
    "role:assistant archived:yes": {"arch"},
    "source:cron": {"cron_budget"},
    # excluded words alone: every session holding none of them (filters alone list too)
    '-"lorem"': {"old_budget", "new_budget", "agent_budget", "cron_budget", "phrase", "words",
                 "prefix", "cafe", "substring"},
    "-lorem -budget -migration -migrating": {"cafe", "substring"},
    # a stopword never makes a hit on its own when the query has a rarer word
    "the lorem": {"user_lorem", "asst_lorem", "arch", "proj"},
}


def _ids(group: StoreGroup, query: str, ranking: str) -> set[str]:
    res = group.search_ex(query, limit=50, ranking=ranking)
    assert res.error is None, res.error
    return {h.session_id for h in res.hits}


@pytest.mark.parametrize("query", sorted(QUERIES))
def test_scan_and_index_give_the_same_sessions(store_dir: Path, tmp_path: Path, query: str) -> None:
    expected = QUERIES[query]
    with SqliteSessionStore(store_dir, db_path=tmp_path / "i.sqlite3") as indexed:
        assert _ids(StoreGroup([indexed]), query, "relevance") == expected
        # classic ranking through the index (it only narrows the files to read)
        assert _ids(StoreGroup([indexed]), query, "classic") == expected
    assert _ids(StoreGroup([DefaultSessionStore(store_dir)]), query, "classic") == expected


def test_a_bad_filter_value_is_an_error_on_every_path(store_dir: Path, tmp_path: Path) -> None:
    for group in (
        StoreGroup([DefaultSessionStore(store_dir)]),
        StoreGroup([SqliteSessionStore(store_dir, db_path=tmp_path / "i.sqlite3")]),
    ):
        for ranking in ("classic", "relevance"):
            if ranking == "relevance" and not group.indexed:
                continue
            res = group.search_ex("since:someday budget", ranking=ranking)
            assert res.error is not None and "since" in res.error


def test_the_library_search_stays_literal(store_dir: Path) -> None:
    # PraisonAI's own API: substrings, no query language.
    store = DefaultSessionStore(store_dir)
    assert {h.session_id for h in store.search("role:assistant", limit=50)} == set()
    assert "substring" in {h.session_id for h in store.search("catenate", limit=50)}


def test_cli_no_index_honours_filters(store_dir: Path) -> None:
    run = CliRunner().invoke(
        main,
        [
            "search",
            "role:assistant lorem",
            "--no-index",
            "--store",
            str(store_dir),
            "--json",
            "--limit",
            "50",
        ],
    )
    assert run.exit_code == 0, run.output
    assert '"asst_lorem"' in run.output and '"user_lorem"' not in run.output
    bad = CliRunner().invoke(
        main, ["search", "since:someday lorem", "--no-index", "--store", str(store_dir)]
    )
    assert bad.exit_code != 0 and "since" in bad.output


@pytest.mark.parametrize("query", ['lorem session:abc"', 'agent:q"q', 'lorem -dolor agent:q"q'])
def test_a_quote_inside_a_filter_value_is_one_line_and_a_failure(
    store_dir: Path, query: str
) -> None:
    for extra in ([], ["--no-index"]):
        run = CliRunner().invoke(main, ["search", query, "--store", str(store_dir), *extra])
        assert run.exit_code != 0, run.output
        lines = run.output.strip().splitlines()
        assert len(lines) == 1 and "must be quoted whole" in lines[0], run.output


def test_an_excluded_word_drops_sessions_beyond_the_refined_ones(tmp_path: Path) -> None:
    # More sessions hold the word than refine looks at (COVERAGE_CHECK); most of them hold
    # the excluded word in another message. Once refine has dropped those among the best,
    # fewer than COVERAGE_CHECK are left, but the ones it never looked at still hold it:
    # they are no hits either.
    d = tmp_path / "sessions"
    for n in range(COVERAGE_CHECK + 5):
        put(d, f"billed{n}", ["billing deployment", "deploy"], start=NEW - n * 3600.0)
    for n in range(3):
        put(d, f"clean{n}", ["deploy notes"], start=OLD + n * 3600.0)
    clean = {f"clean{n}" for n in range(3)}
    for query in ("dep* -billing", "deploy -billing"):
        with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as indexed:
            res = StoreGroup([indexed]).search_ex(query, limit=50, ranking="relevance")
            assert {h.session_id for h in res.hits} == clean, query
            assert (res.matched_sessions, res.matched_exact) == (3, True), query
        assert _ids(StoreGroup([DefaultSessionStore(d)]), query, "classic") == clean, query
