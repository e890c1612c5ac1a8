"""The query history: private, bounded, deduplicated, atomic, tolerant of a bad file."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from session_browser.core.history import (
    HistoryWalk,
    history_path,
    load_history,
    remember,
)


def test_remember_dedupes_bounds_and_is_private(tmp_path: Path) -> None:
    path = tmp_path / "data" / "sub" / "query-history.json"
    remember("alpha", path)
    remember("beta", path)
    remember("  alpha  ", path)  # asked again: moves to the end, once
    assert load_history(path) == ["beta", "alpha"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    for i in range(10):
        remember(f"q{i}", path, limit=4)
    assert load_history(path) == ["q6", "q7", "q8", "q9"]
    assert remember("   ", path, limit=4) == ["q6", "q7", "q8", "q9"]
    assert remember("x" * 5000, path, limit=4)[-1] == "q9"
    assert not [p for p in path.parent.iterdir() if p.name != path.name]  # no temp left


def test_bad_file_is_an_empty_history_and_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "query-history.json"
    path.write_bytes(b"\xff{not json")
    assert load_history(path) == []
    remember("gamma", path)
    assert json.loads(path.read_bytes()) == {"queries": ["gamma"]}
    path.write_text(json.dumps({"queries": ["a", 3, None, "", "b", "a"]}))
    assert load_history(path) == ["b", "a"]


def test_history_lives_in_the_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(tmp_path / "d"))
    assert history_path() == tmp_path / "d" / "query-history.json"
    remember("delta")
    assert load_history() == ["delta"]


def test_walk_narrows_to_the_typed_text_newest_first() -> None:
    walk = HistoryWalk(["billing api", "chargefox", "billing retry", "other"], typed="bill")
    assert not walk.active
    assert walk.older() == "billing retry"
    assert walk.active
    assert walk.older() == "billing api"
    assert walk.older() is None  # the oldest match: stays there
    assert walk.newer() == "billing retry"
    assert walk.newer() == "bill"  # back to what was typed
    assert not walk.active
    assert walk.newer() is None
    everything = HistoryWalk(["a", "b"], typed="")
    assert [everything.older(), everything.older(), everything.older()] == ["b", "a", None]
