"""session_search: PraisonAI's documented shapes, bounded output, clear errors."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from session_browser.core.store import DefaultSessionStore
from session_browser.core.tool import MAX_BYTES, MAX_RESULTS, MAX_TEXT, NOTICE, session_search

os.environ.setdefault("DO_NOT_TRACK", "1")
# The test extra installs praisonaiagents: a broken install must fail here, not skip.
import praisonaiagents.session.store as praison_store
import praisonaiagents.tools.session_tools as praison_tools


@pytest.fixture
def d(tmp_path: Path) -> Path:
    d = tmp_path / "sessions"
    store = DefaultSessionStore(d, active_window=3)
    for i in range(6):
        store.add_message("billing", "user" if i % 2 == 0 else "assistant", f"billing step {i}")
    store.add_user_message("misc", "lunch plans")
    return d


def both(d: Path, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    ours = json.loads(session_search(store=DefaultSessionStore(d), **kwargs))
    tools = praison_tools.SessionTools(store=praison_store.DefaultSessionStore(session_dir=str(d)))
    theirs = json.loads(tools.session_search(**kwargs))
    return ours, theirs


def assert_superset(ours: dict[str, Any], theirs: dict[str, Any], extra: set[str]) -> None:
    assert set(theirs) <= set(ours)
    assert set(ours) - set(theirs) <= extra


def test_discovery_shape_matches_praisonai(d: Path) -> None:
    ours, theirs = both(d, query="billing step", limit=5, window=2)
    assert ours["success"] is True and ours["mode"] == "discovery"
    assert_superset(ours, theirs, {"notice"})
    assert ours["notice"] == NOTICE
    assert ours["query"] == "billing step" and ours["total_found"] == 1
    hit, their_hit = ours["results"][0], theirs["results"][0]
    assert set(hit) == set(their_hit)
    assert (hit["session_id"], hit["anchor_index"], hit["score"]) == (
        their_hit["session_id"],
        their_hit["anchor_index"],
        their_hit["score"],
    )
    assert hit["messages"] == their_hit["messages"]
    assert set(hit["messages"][0]) == {"index", "role", "content", "timestamp", "archived"}


def test_scroll_shape_matches_praisonai(d: Path) -> None:
    for anchor in ("", "0", "3", "99"):
        ours, theirs = both(d, session_id="billing", around_message_id=anchor, window=1)
        assert ours["mode"] == "scroll" and ours["success"] is True
        assert_superset(ours, theirs, {"notice"})
        assert ours["messages"] == theirs["messages"], anchor
        assert ours["around_message_id"] == anchor and ours["session_id"] == "billing"


def test_scroll_accepts_int_anchor_zero(d: Path) -> None:
    out = json.loads(
        session_search(
            session_id="billing",
            around_message_id=0,  # type: ignore[arg-type]
            window=0,
            store=DefaultSessionStore(d),
        )
    )
    assert [m["index"] for m in out["messages"]] == [0]


def test_browse_shape_matches_praisonai(d: Path) -> None:
    ours, theirs = both(d)
    assert ours["mode"] == "browse"
    assert_superset(ours, theirs, {"notice"})
    assert ours["total_found"] == 2
    assert {r["session_id"] for r in ours["results"]} == {"billing", "misc"}
    for row, their_row in zip(ours["results"], theirs["results"], strict=False):
        assert_superset(row, their_row, {"archived_count"})


def test_result_count_bounded(tmp_path: Path) -> None:
    store = DefaultSessionStore(tmp_path / "s")
    for i in range(25):
        store.add_user_message(f"s{i}", "common word")
    out = json.loads(session_search(query="common", limit=100, store=store))
    assert out["success"] and len(out["results"]) == MAX_RESULTS == 20
    out = json.loads(session_search(limit=100, store=store))
    assert len(out["results"]) == 20


def test_message_text_and_total_size_bounded(tmp_path: Path) -> None:
    store = DefaultSessionStore(tmp_path / "s", retention="keep_all")
    big = "needle " + "x" * 10_000
    for s in range(8):
        for _ in range(6):
            store.add_user_message(f"s{s}", big)
    store.rename_session("s0", "T" * 5000)
    out_text = session_search(query="needle", limit=20, window=5, store=store)
    assert len(out_text.encode()) <= MAX_BYTES
    out = json.loads(out_text)
    assert out["success"] and out["results"]
    assert out.get("truncated") is True
    for hit in out["results"]:
        assert len(hit["title"]) < 300
        for m in hit["messages"]:
            assert len(m["content"]) <= MAX_TEXT + 60
    one = json.loads(session_search(query="needle", limit=1, window=0, store=store))
    content = one["results"][0]["messages"][0]["content"]
    assert content.startswith("needle x") and "cut: " in content
    assert len(content) <= MAX_TEXT + 60
    scroll_text = session_search(session_id="s1", window=50, store=store)
    assert len(scroll_text.encode()) <= MAX_BYTES
    scroll = json.loads(scroll_text)
    assert scroll["messages"] and scroll["messages"][-1]["index"] == 5  # the anchor survives


@pytest.mark.parametrize(
    "kwargs",
    [
        {"query": "x", "limit": "many"},
        {"query": "x", "limit": 0},
        {"query": "x", "limit": True},
        {"query": "x", "window": -1},
        {"query": "   "},
        {"query": 42},
        {"session_id": "billing", "around_message_id": "abc"},
        {"session_id": "billing", "around_message_id": "-2"},
        {"session_id": "no-such-session"},
        {"session_id": ["x"]},
    ],
)
def test_bad_input_is_an_error(d: Path, kwargs: dict[str, Any]) -> None:
    out = json.loads(session_search(store=DefaultSessionStore(d), **kwargs))
    assert out["success"] is False
    assert isinstance(out["error"], str) and out["error"]


def test_default_store_is_praisonai_home(isolated_home: Path) -> None:
    DefaultSessionStore().add_user_message("home", "found via default store")
    out = json.loads(session_search(query="default store"))
    assert out["results"][0]["session_id"] == "home"


def test_missing_store_is_empty_not_error(tmp_path: Path) -> None:
    out = json.loads(session_search(query="x", store=DefaultSessionStore(tmp_path / "none")))
    assert out["success"] is True and out["results"] == []


def test_default_store_goes_through_the_index_and_stays_fresh(isolated_home: Path) -> None:
    store = DefaultSessionStore()
    store.add_user_message("first", "the canary phrase lives here")
    sessions = store.session_dir
    assert json.loads(session_search(query="canary"))["results"][0]["session_id"] == "first"
    assert list((isolated_home / "cache").rglob("*.sqlite3")), "index built in our cache dir"
    before = sorted(p.name for p in sessions.iterdir())
    # A change made by another writer is seen on the next call.
    DefaultSessionStore().add_user_message("second", "a later flamingo turn")
    found = json.loads(session_search(query="flamingo"))
    assert [r["session_id"] for r in found["results"]] == ["second"]
    assert json.loads(session_search(query="since:someday x"))["success"] is False
    assert sorted(p.name for p in sessions.iterdir()) == sorted(
        [*before, "second.json", "second.json.lock"]
    )
