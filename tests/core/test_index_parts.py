"""A huge message is stored as parts and a huge file parsed with two copies at most: the
same answers as for small ones."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from session_browser.core import files
from session_browser.core.index import SqliteSessionStore
from session_browser.core.search import rank
from session_browser.core.search import rows as index_rows

from .test_index import put


@pytest.fixture
def d(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


def test_a_long_message_is_stored_in_parts_and_found_whole(
    d: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_rows, "PART_CHARS", 1_000)
    words = " ".join(f"w{i:05d}" for i in range(2_000))  # ~14,000 characters
    long_text = f"opening zebrafish {words} closing narwhal tail"
    put(d, "big", ["short hello", long_text, "after"])
    put(d, "other", ["nothing here", "zebrafish once"])
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        rows = store._rows(
            "SELECT idx, length(text) FROM messages m JOIN sessions s "
            "ON s.sid = m.sid WHERE s.session_id = 'big' ORDER BY m.id"
        )
        parts = [n for idx, n in rows if idx == 1]
        assert len(parts) > 10 and sum(parts) == len(long_text)
        assert all(n <= 1_000 + rank.SCORE_CUT_SEARCH for n in parts)
        # the parts add up to the message: no word is cut, none lost
        texts = store._rows(
            "SELECT text FROM messages m JOIN sessions s ON s.sid = m.sid "
            "WHERE s.session_id = 'big' AND idx = 1 ORDER BY m.id"
        )
        assert "".join(t for (t,) in texts) == long_text
        assert store.status()["messages"] == 5  # messages, not parts
        for query in ["narwhal", '"closing narwhal tail"', "w01999", "zebrafish narwhal"]:
            hits = store.search(query, limit=5)
            assert hits and hits[0].session_id == "big", query
            assert hits[0].anchor_index == 1
        # sessions and messages counted once, whatever the parts
        assert store.search_ex("narwhal").matched_sessions == 1
        total, _avg = store._corpus_stats(store._conn())
        assert total == 5


@pytest.mark.parametrize(
    "payload",
    [
        {"session_id": "a", "messages": [{"role": "user", "content": "x" * 3000}]},
        {"session_id": "a", "n": float("nan"), "big": 10**40, "s": "cut \ud83d"},
        [1, 2, 3],
    ],
)
def test_a_large_file_parses_as_a_small_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, payload: object
) -> None:
    path = tmp_path / "f.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    small = files.read_json(path)
    monkeypatch.setattr(files, "LARGE_JSON_BYTES", 10)
    large = files.read_json(path)
    if isinstance(payload, dict) and "n" in payload:
        assert math.isnan(small["n"]) and math.isnan(large["n"])
        small.pop("n"), large.pop("n")
    assert small == large


def test_a_large_file_that_is_not_json_or_not_utf8_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "LARGE_JSON_BYTES", 10)
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"session_id": "a", "messages": [')
    with pytest.raises(ValueError):
        files.read_json(bad)
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"session_id": "caf\xe9 au lait"}')
    with pytest.raises(ValueError):
        files.read_json(latin)
    with pytest.raises(files.SessionFileError):
        files.read_json_file(latin)
