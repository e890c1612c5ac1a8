"""Hypothesis: garbage files in a session dir never crash a scan, a read or a write."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_browser.cli import main
from session_browser.core.files import loads
from session_browser.core.model import SessionData, dumps_json, json_utf8
from session_browser.core.paths import safe_id
from session_browser.core.store import DefaultSessionStore
from session_browser.core.tool import session_search
from tests import hostile

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.just(10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["user", "assistant", "tool", "system", "cron", "ledger", "[Session Summary]"]),
    # values that have broken readers (issue 9): lone surrogates, huge ints, edge dates
    st.sampled_from(["cut emoji \ud83d", "\udc00", "ledger \udbff end", "a\ud83d\ude00"]),
    st.integers(min_value=10**300, max_value=10**400),
    st.sampled_from([hostile.EARLY_DATE, hostile.LATE_DATE, "0001-01-01T00:00:00", 1e308]),
    st.sampled_from([-62135596801, -1.5, float("nan"), -(10**400)]),
)


def _deep(pair: tuple[int, Any]) -> Any:
    depth, leaf = pair
    for n in range(depth):
        leaf = [leaf] if n % 2 else {"k": leaf}
    return leaf


deep_values = st.tuples(st.integers(min_value=300, max_value=990), scalars).map(_deep)
# The values of the issue 9 faults whose rendering the CLI owns: kept out of the CLI test.
json_values = st.recursive(
    st.one_of(scalars, deep_values),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=8), children, max_size=4),
    ),
    max_leaves=20,
)


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(strategy, json_values)


message_like = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {},
        optional={
            "role": maybe(st.sampled_from(["user", "assistant", "tool", "system"])),
            "content": maybe(st.text(max_size=200)),
            "timestamp": maybe(st.floats(min_value=0, max_value=2e9)),
            "deep": deep_values,
            "metadata": maybe(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "compaction": json_values,
                        "name": json_values,
                        "compacted_count": json_values,
                    },
                )
            ),
            "tool_calls": json_values,
            "tool_call_id": json_values,
        },
    ),
)

session_like = st.fixed_dictionaries(
    {},
    optional={
        "session_id": maybe(st.text(min_size=1, max_size=12)),
        "messages": maybe(st.lists(message_like, max_size=8)),
        "archived_messages": maybe(st.lists(message_like, max_size=8)),
        "created_at": json_values,
        "updated_at": maybe(
            st.sampled_from(
                ["2026-01-01T00:00:00+00:00", "garbage", "", hostile.EARLY_DATE, hostile.LATE_DATE]
            )
        ),
        "agent_name": json_values,
        "metadata": maybe(
            st.fixed_dictionaries(
                {},
                optional={
                    "title": json_values,
                    "source": json_values,
                    "automated": json_values,
                    "lineage_id": json_values,
                    "thread_id": json_values,
                    "model": json_values,
                },
            )
        ),
        "source": json_values,
        "lineage_id": json_values,
        "root_session_id": json_values,
        "runtime_state": json_values,
        "last_compaction": json_values,
        "model": json_values,
    },
)

file_contents = st.one_of(
    st.binary(max_size=200),
    json_values.map(lambda v: json_utf8(dumps_json(v))),
    session_like.map(lambda v: json_utf8(dumps_json(v, indent=2))),
    session_like.map(lambda v: json_utf8(dumps_json(v))[: max(1, len(dumps_json(v)) // 2)]),
)


def populate(d: Path, contents: list[bytes]) -> None:
    d.mkdir(parents=True, exist_ok=True)
    for i, raw in enumerate(contents):
        (d / f"g{i}.json").write_bytes(raw)
    DefaultSessionStore(d, spill_dir=d.parent / "spill").add_user_message("good", "ledger talk")


def every_read(d: Path) -> None:
    store = DefaultSessionStore(d, spill_dir=d.parent / "spill")
    assert any(r["session_id"] == "good" for r in store.list_sessions(limit=1000))
    summaries = store.summaries()
    assert any(s.session_id == "good" for s in summaries)
    for s in summaries:
        assert isinstance(s.title, str) and isinstance(s.session_id, str)
        dumps_json(s.to_json())
    store.recent(limit=100)
    for query in ("ledger", "user", "a", "[session summary]", "none"):
        for hit in store.search(query, limit=50, window=2):
            assert isinstance(hit.snippet, str) and isinstance(hit.title, str)
            dumps_json(hit.to_json())
    assert store.search("ledger talk")[0].session_id == "good"
    for s in summaries:
        store.window(s.session_id)
        store.window(s.session_id, 0, window=1)
        store.get_session(s.session_id)
        store.get_chat_history(s.session_id)
    for name in os.listdir(d):
        if name.endswith(".json"):
            store.get_session(name[:-5]).to_dict()
            store.get_chat_history(name[:-5], max_messages=2)
            store.window(name[:-5], "1")
    for payload in (
        session_search(query="ledger", store=store),
        session_search(store=store),
        session_search(session_id=summaries[0].session_id, store=store),
    ):
        assert json.loads(payload)["success"] is True


@SETTINGS
@given(st.lists(file_contents, min_size=1, max_size=6))
def test_garbage_never_crashes_reads(contents: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "sessions"
        populate(d, contents)
        before = {p.name: p.read_bytes() for p in d.iterdir()}
        every_read(d)
        assert {p.name: p.read_bytes() for p in d.iterdir()} == before


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(file_contents, min_size=1, max_size=3))
def test_garbage_never_crashes_cli(contents: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "sessions"
        populate(d, contents)
        runner = CliRunner()
        for args in (
            ["search", "ledger"],
            ["recent"],
            ["search", "a", "--json"],
            ["recent", "--json"],
            ["show", "good"],
        ):
            res = runner.invoke(main, [*args, "--store", str(d)])
            # search: 1 when no session matches (as grep), never an error
            none = args[0] == "search" and (
                json.loads(res.stdout)["results"] == []
                if "--json" in args
                else "No session matches" in res.stdout
            )
            assert res.exit_code == (1 if none else 0), (args, res.output, res.exception)
            assert "\x1b" not in res.output


@SETTINGS
@given(file_contents)
def test_write_on_garbage_never_loses_bytes(raw: bytes) -> None:
    """A write over any garbage either quarantines it byte-identical or keeps its data."""
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "sessions"
        d.mkdir()
        path = d / "victim.json"
        path.write_bytes(raw)
        store = DefaultSessionStore(d, spill_dir=Path(tmp) / "spill")
        try:
            parsed = loads(raw)
        except (ValueError, RecursionError):
            parsed = None
        stored_id = parsed.get("session_id") if isinstance(parsed, dict) else None
        ok = store.add_user_message("victim", "new turn")
        quarantined = [p for p in d.iterdir() if ".corrupt-" in p.name]
        if ok:
            data = loads(path.read_bytes())
            assert data["messages"][-1]["content"] == "new turn"
            if quarantined:
                assert quarantined[0].read_bytes() == raw
            else:
                assert isinstance(parsed, dict)
                # every key of the old file is still there
                assert set(parsed) - {"messages"} <= set(data) | {"last_compaction"}
        else:
            # refused (a file of another id mapping to the same name): untouched, turn spilled
            assert stored_id not in (None, "", "victim")
            assert path.read_bytes() == raw
            assert len(list((Path(tmp) / "spill").iterdir())) == 1


@SETTINGS
@given(session_like)
def test_model_round_trip_is_stable(data: dict[str, Any]) -> None:
    """from_dict/to_dict never raises and a second round trip changes nothing."""
    once = SessionData.from_dict(data).to_dict()
    twice = SessionData.from_dict(once).to_dict()
    assert dumps_json(twice, sort_keys=True, default=str) == dumps_json(
        once, sort_keys=True, default=str
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(session_like)
def test_write_of_any_session_lands_and_reads_back(data: dict[str, Any]) -> None:
    """Any loadable session (surrogates, huge ints, edge dates, deep nesting...) can be
    written again, and the file reads back to the same values."""
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "sessions"
        d.mkdir()
        original = json_utf8(dumps_json({**data, "session_id": "victim"}, indent=2))
        (d / "victim.json").write_bytes(original)
        data = loads(original)  # what the file holds (a surrogate pair reads as one char)
        store = DefaultSessionStore(d, spill_dir=Path(tmp) / "spill", retention="keep_all")
        assert store.add_user_message("victim", "new turn") is True
        raw = (d / "victim.json").read_bytes()
        raw.decode("utf-8")
        back = loads(raw)
        assert back["messages"][-1]["content"] == "new turn"
        expected = SessionData.from_dict(data).to_dict()  # the model's own read-modify-write
        for key in set(expected) - {"messages", "updated_at", "created_at", "last_compaction"}:
            assert dumps_json(back.get(key)) == dumps_json(expected[key])
        again = SessionData.from_dict(back).to_dict()
        assert dumps_json(again, default=str) == dumps_json(back, default=str)


def test_hostile_file_names_ignored_or_safe(tmp_path: Path) -> None:
    d = tmp_path / "sessions"
    d.mkdir()
    (d / "weird name ✓.json").write_text(
        json.dumps(
            {"session_id": "../../escape", "messages": [{"role": "user", "content": "ledger"}]}
        )
    )
    store = DefaultSessionStore(d)
    hit = store.search("ledger")[0]
    assert hit.session_id == "../../escape"
    assert store.session_path(hit.session_id).parent == d
    assert safe_id(hit.session_id) == "______escape"
