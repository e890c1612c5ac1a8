"""Index edge cases: a word deep in a long message, private files, queries with nothing
searchable, a word both wanted and excluded."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.index import SqliteSessionStore, default_db_path
from session_browser.core.query import NOTHING_SEARCHABLE, parse_query
from tests.core.test_index import put


@pytest.fixture
def d(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


def _pasted_table(rows: int) -> str:
    """A pasted CSV-like table of ordinary cells, about 40 characters a row."""
    return "\n".join(f"{n},alpha{n % 7},beta{n % 11},gamma,delta,{n * 3}" for n in range(rows))


def test_a_word_anywhere_in_a_long_message_is_found(d: Path, tmp_path: Path) -> None:
    table = _pasted_table(11_500)
    assert len(table) > 380_000
    middle = len(table) * 2 // 3  # about 270k in
    text = f"{table[:middle]} zanzibarite {table[middle:]} quetzalcoatlus end"
    assert len(text) > 400_000 and text.index("quetzalcoatlus") > 390_000
    put(d, "paste", ["here is the table", text, "thanks"])
    put(d, "other", ["a short chat about gamma rays and zanzibar"])
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        for word in ("zanzibarite", "quetzalcoatlus"):
            hits = store.search(word)
            assert [h.session_id for h in hits] == ["paste"], word
            assert hits[0].anchor_index == 1
        assert [h.session_id for h in store.search("zanzibarite quetzalcoatlus")] == ["paste"]
        # An excluded word deep in the message excludes it too.
        assert [h.session_id for h in store.search("gamma -quetzalcoatlus")] == ["other"]


def test_index_files_and_dirs_are_private(d: Path, tmp_path: Path) -> None:
    put(d, "a", ["hello private world"])
    old = os.umask(0o022)
    try:
        with SqliteSessionStore(d) as store:  # the default place: our cache dir
            store.add_user_message("b", "another turn")  # the -wal exists while open
            db = Path(store.db_path)
            assert db == default_db_path(d)
            for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm"), Path(f"{db}.lock")):
                assert path.exists(), path
                assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
            for folder in (db.parent, db.parent.parent):  # .../cache/index and .../cache
                assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    finally:
        os.umask(old)


def test_an_older_wide_index_file_is_made_private(d: Path, tmp_path: Path) -> None:
    put(d, "a", ["hello"])
    db = tmp_path / "wide.sqlite3"
    with SqliteSessionStore(d, db_path=db):
        pass
    os.chmod(db, 0o644)
    with SqliteSessionStore(d, db_path=db):
        assert stat.S_IMODE(db.stat().st_mode) == 0o600


@pytest.mark.parametrize("query", ['"', "*", "(", "\U0001f600", '" * ( -', "--", "-*"])
def test_a_query_with_nothing_searchable_finds_nothing(d: Path, tmp_path: Path, query: str) -> None:
    put(d, "a", ["hello there"])
    put(d, "b", ["another chat"])
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        res = store.search_ex(query)
        assert res.hits == [] and res.matched_sessions == 0 and res.error is None
        assert NOTHING_SEARCHABLE in res.warnings
        assert store.search(query) == []
        rel = store.relevance_candidates(parse_query(query))
        assert rel.candidates == [] and rel.matched == 0 and rel.warnings == [NOTHING_SEARCHABLE]
        # Blank text says nothing (the app's empty search box) and finds nothing.
        assert store.search_ex("  ").warnings == [] and store.search("  ") == []


@pytest.mark.parametrize("query", ["\U0001f600", '"', "(", "*"])
def test_cli_says_nothing_searchable(d: Path, query: str) -> None:
    put(d, "a", ["hello there"])
    put(d, "b", ["another chat"])
    res = CliRunner().invoke(main, ["search", query, "--store", str(d), "--json"])
    assert res.exit_code == 1, res.output  # no session matches
    assert json.loads(res.stdout)["results"] == []
    assert res.stderr == f"session-browser: {NOTHING_SEARCHABLE}\n"
    res = CliRunner().invoke(main, ["search", query, "--store", str(d)])
    assert "a" not in res.stdout.split() and NOTHING_SEARCHABLE in res.stderr


def test_a_word_both_wanted_and_excluded_finds_nothing(d: Path, tmp_path: Path) -> None:
    put(d, "a", ["the billing migration plan"])
    put(d, "b", ["billing again"])
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        res = store.search_ex("billing -billing")
        assert res.hits == [] and res.matched_sessions == 0 and res.error is None
        assert [h.session_id for h in store.search("billing -migration")] == ["b"]
