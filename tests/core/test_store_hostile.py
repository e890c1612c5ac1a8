"""One hostile file never breaks reads or writes of a JSON store (issue 9).

Every kind in ``tests.hostile`` (lone surrogates, 400-digit ints, dates at the edge of the
range, 800/980-deep nesting, NaN/1e308/negative epochs, terminal escapes) sits beside good
sessions; every read path answers for the good ones and a write to each hostile session
lands, leaving a file that PraisonAI's store and ours load to the same values.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_browser.core.files import dumps_session, read_json_file
from session_browser.core.jsonio import (
    MAX_JSON_DEPTH,
    _dumps_iterative,
    copy_json,
    dumps_json,
    json_utf8,
)
from session_browser.core.model import (
    epoch_seconds,
    message_key,
    utc_datetime,
)
from session_browser.core.sources.pi import PiParseState, PiStore
from session_browser.core.store import DefaultSessionStore
from tests import hostile

HOSTILE_KINDS = sorted(hostile.KINDS)


def _store(tmp_path: Path) -> tuple[DefaultSessionStore, dict[str, str], list[str]]:
    d = tmp_path / "sessions"
    kinds = hostile.write_all(d)
    good = hostile.write_good(d)
    return DefaultSessionStore(d, spill_dir=tmp_path / "spill"), kinds, good


def test_every_read_path_answers_beside_hostile_files(tmp_path: Path) -> None:
    store, kinds, good = _store(tmp_path)
    listed = {r["session_id"] for r in store.list_sessions(limit=100)}
    assert set(good) | set(kinds.values()) <= listed
    recent = store.recent(limit=100)
    assert set(good) <= {s.session_id for s in recent}
    for summary in recent:
        dumps_json(summary.to_json())
        assert isinstance(summary.title, str)
    hits = store.search(hostile.SHARED_WORD, limit=50, window=3)
    assert set(good) <= {h.session_id for h in hits}
    for hit in hits:
        dumps_json(hit.to_json())
    for sid in [*kinds.values(), *good]:
        session = store.get_session(sid)
        assert session.session_id == sid and session.messages
        assert store.window(sid, 0, window=2)
        store.projection(sid)


@pytest.mark.parametrize("kind", HOSTILE_KINDS)
def test_write_to_hostile_session_lands_and_round_trips(tmp_path: Path, kind: str) -> None:
    store, kinds, _good = _store(tmp_path)
    sid = kinds[kind]
    path = store.session_path(sid)
    before = read_json_file(path)
    assert store.add_user_message(sid, "a new turn") is True
    assert not (tmp_path / "spill").exists()
    raw = path.read_bytes()
    raw.decode("utf-8")  # valid UTF-8, always
    after = read_json_file(path)
    # (compared as text: deep values are too deep for ``==``, NaN is not equal to itself)
    assert dumps_json(after["messages"][0]) == dumps_json(before["messages"][0])
    assert after["messages"][-1]["content"] == "a new turn"
    assert after["created_at"] == before["created_at"]
    # PraisonAI's own store (another process, as a user would run it) reads the same values
    script = (
        "import json, sys, os\n"
        "os.environ['DO_NOT_TRACK'] = '1'\n"
        "from praisonaiagents.session.store import DefaultSessionStore\n"
        "s = DefaultSessionStore(session_dir=sys.argv[1])\n"
        "sess = s.get_session(sys.argv[2])\n"
        "print(json.dumps([len(sess.messages), sess.messages[-1].content, sess.created_at]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(path.parent), sid],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    count, last, created = json.loads(out.stdout.strip().splitlines()[-1])
    assert count == len(after["messages"]) and last == "a new turn"
    assert created == after["created_at"]


def test_lone_surrogate_written_back_as_its_escape(tmp_path: Path) -> None:
    store, kinds, _good = _store(tmp_path)
    sid = kinds["lone_surrogate"]
    assert store.add_user_message(sid, "more")
    raw = store.session_path(sid).read_bytes()
    assert b"\\ud83d" in raw and b"\\udc00" in raw
    data = json.loads(raw)
    assert data["metadata"]["title"] == "cut emoji \ud83d"
    assert "\ud83d" in data["messages"][0]["content"]


def test_fast_path_is_praisonai_format() -> None:
    data = {"session_id": "s", "messages": [{"role": "user", "content": "héllo ✓"}], "n": 1.5}
    assert dumps_session(data) == json.dumps(data, indent=2, ensure_ascii=False).encode()


json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=10),
)
json_tree = st.recursive(
    json_leaf,
    lambda c: st.one_of(
        st.lists(c, max_size=3), st.dictionaries(st.text(max_size=5), c, max_size=3)
    ),
    max_leaves=15,
)


@settings(max_examples=200, deadline=None)
@given(json_tree, st.sampled_from([None, 2]), st.booleans())
def test_iterative_encoder_is_json_dumps(value: Any, indent: int | None, sort_keys: bool) -> None:
    expected = json.dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=False)
    assert _dumps_iterative(value, indent, sort_keys, None) == expected
    assert copy_json(value) == value or value != value


@pytest.mark.parametrize("depth", [800, 980, 1000, 1001, 100_000])
def test_deep_values_encode_copy_and_key(depth: int) -> None:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    key = message_key({"role": "user", "content": value})[1]
    if depth <= MAX_JSON_DEPTH:
        assert dumps_json(value, indent=2).count("[") == depth
        assert key.count("[") == depth
    else:  # deeper than any parser reads back: refused as json.dumps refuses it
        with pytest.raises(RecursionError):
            dumps_json(value, indent=2)
        assert key == "<list>"
    copied = copy_json(value)
    assert copied is not value


def test_dates_and_epochs_at_the_edges() -> None:
    for bad in (hostile.EARLY_DATE, hostile.LATE_DATE, "garbage", "", "9" * 10_000):
        assert utc_datetime(bad) is None
    for bad_n in (10**400, -(10**400), float("nan"), float("inf"), 1e308, -62135596801, True):
        assert epoch_seconds(bad_n) is None
        assert utc_datetime(bad_n) is None
    when = utc_datetime("2026-01-01T02:00:00+02:00")
    assert when is not None and when.isoformat() == "2026-01-01T00:00:00+00:00"
    assert utc_datetime(0) is not None and epoch_seconds(-1) == -1.0
    assert json_utf8('"a\ud83d"') == b'"a\\ud83d"'


def test_pi_hostile_lines_never_fail_the_file(tmp_path: Path) -> None:
    files = hostile.write_pi_all(tmp_path / "pi")
    store = PiStore(tmp_path / "pi")
    ids = {s.session_id for s in store.recent(limit=100)}
    assert ids == {f"pi-{kind}" for kind in files}
    hits = {h.session_id for h in store.search(hostile.SHARED_WORD, limit=50)}
    assert ids <= hits
    for kind in files:
        sid = f"pi-{kind}"
        messages = store.projection(sid, include_hidden=True)
        assert [m["role"] for m in messages] == ["user", "assistant"]
        session = store.read(sid, include_hidden=True)
        assert session is not None
        again = PiParseState.load(session.state.dump())
        assert again.entry_count == session.state.entry_count
        dumps_json(store.get_session(sid).to_dict())
    bad_times = ("huge_int", "early_date", "late_date")
    for kind in bad_times:
        user = store.projection(f"pi-{kind}")[0]
        # the entry's unusable time is absent; the message's own ms time is used instead
        assert user["timestamp"] == 1767225601.0
    assert os.listdir(tmp_path / "pi" / "--work-proj--") == sorted(
        p.name for p in files.values()
    ) or set(os.listdir(tmp_path / "pi" / "--work-proj--")) == {p.name for p in files.values()}
