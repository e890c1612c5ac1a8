"""Warnings carry a code beside their text: front ends test the code, never the wording,
and the text (what is printed and what --json writes) is unchanged."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core import notes
from session_browser.core.index import SqliteSessionStore
from session_browser.core.multi import StoreGroup
from session_browser.core.notes import Note, code_of

from .test_index import put


def _store(tmp_path: Path, name: str, texts: list[str]) -> SqliteSessionStore:
    d = tmp_path / name
    for i, text in enumerate(texts):
        put(d, f"{name}{i}", [text, "fine"])
    return SqliteSessionStore(d, db_path=tmp_path / f"{name}.sqlite3")


def test_a_note_is_its_text_with_a_code() -> None:
    note = Note(notes.FUZZY, "no exact match; showing close spellings: a → b")
    assert note == "no exact match; showing close spellings: a → b" and code_of(note) == "fuzzy"
    assert json.dumps([note]) == json.dumps(["no exact match; showing close spellings: a → b"])
    again = pickle.loads(pickle.dumps(note))
    assert again == note and code_of(again) == notes.FUZZY
    assert code_of("a plain warning") is None


def test_codes_reach_the_group_and_the_group_filters_by_code(tmp_path: Path) -> None:
    migration = _store(tmp_path, "a", ["the billing migration plan", "other words"])
    other = _store(tmp_path, "b", ["a reconciliation report"])
    with migration, other:
        group = StoreGroup([migration, other])
        typo = group.search_ex("biling", limit=5)
        assert typo.fuzzy and notes.FUZZY in {code_of(w) for w in typo.warnings}
        # One store matches exactly: the other's close spellings do not compete, and the
        # group drops that store's fuzzy note by its code.
        exact = group.search_ex("reconciliation", limit=5)
        assert not exact.fuzzy and notes.FUZZY not in {code_of(w) for w in exact.warnings}
        nothing = group.search_ex('"', limit=5)
        assert notes.NOTHING_SEARCHABLE in {code_of(w) for w in nothing.warnings}
        emptied = group.search_ex("billing -plan", limit=5)
        assert [code_of(w) for w in emptied.warnings if code_of(w)] == [notes.WHY_EMPTY]


def test_the_cli_prints_the_text(tmp_path: Path) -> None:
    store = _store(tmp_path, "s", ["the billing migration plan"])
    store.close()
    res = CliRunner().invoke(main, ["--store", str(tmp_path / "s"), "search", "biling", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["fuzzy"] is True
    assert "no exact match; showing close spellings: biling → billing" in res.stderr
