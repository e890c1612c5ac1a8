"""One bad file never takes the index down (issue 9): every hostile kind beside good
sessions, through SqliteSessionStore (over PraisonAI and Pi files) and the CLI, plus generated
values."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_browser.cli import main
from session_browser.core.index import SqliteSessionStore
from session_browser.core.open import pi_index_store
from tests import hostile

GOOD = {"good-0", "good-1", "good-2"}


def _store_dir(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    d = tmp_path / "sessions"
    bad = hostile.write_all(d)
    hostile.write_good(d)
    return d, bad


def _snapshot(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_hostile_files_never_take_the_index_down(tmp_path: Path) -> None:
    d, bad = _store_dir(tmp_path)
    before = _snapshot(d)
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        report = store.last_report
        assert report is not None and store.broken is None
        status = store.status()
        indexed = {sid for sid, _file in store.iter_index_sessions()}
        skipped = {row["file"] for row in status["skipped"]}
        # Every file is either indexed or named with a reason; the good ones are indexed.
        assert len(indexed) + len(skipped) == status["files"] == len(bad) + len(GOOD)
        assert indexed >= GOOD
        assert all(row["reason"] for row in status["skipped"])
        # Every hostile kind that has usable text is indexed (values it cannot use are
        # treated as absent, not the whole session).
        assert set(bad.values()) <= indexed
        assert {h.session_id for h in store.search("billing", limit=20)} == GOOD
        assert {s.session_id for s in store.recent(limit=50)} >= GOOD
        assert {h.session_id for h in store.search(hostile.SHARED_WORD, limit=50)} >= GOOD
        assert store.search_ex(hostile.SHARED_WORD, limit=50).error is None
        # The lone surrogates are replaced in the indexed copy only: its other words are found.
        assert [h.session_id for h in store.search("emoji", limit=5)] == ["hostile-surrogate"]
        for query in ("billing", "marmalade", '"a reply"', "since:2026-01-01", "nested"):
            assert store.search_ex(query, limit=50, ranking="classic").error is None
            assert store.search_ex(query, limit=50).error is None
    assert _snapshot(d) == before  # the files are never changed


def test_text_with_lone_surrogates_is_indexed_with_replacement_chars(tmp_path: Path) -> None:
    d, _bad = _store_dir(tmp_path)
    db = tmp_path / "i.sqlite3"
    with SqliteSessionStore(d, db_path=db):
        pass
    with sqlite3.connect(db) as check:
        (text,) = check.execute(
            "SELECT m.text FROM messages m JOIN sessions s ON s.sid = m.sid "
            "WHERE s.session_id = 'hostile-surrogate' AND m.idx = 0"
        ).fetchone()
    assert text == f"{hostile.SHARED_WORD} cut emoji \ufffd and \ufffd too"


def test_a_write_with_hostile_values_keeps_the_index(tmp_path: Path) -> None:
    d = tmp_path / "sessions"
    hostile.write_good(d)
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        store.add_user_message("fresh", "plain words about zebras")
        store.reconciler.after_write(  # what a write of an odd dict would index
            "odd",
            d / "good-0.json",
            {
                "session_id": "good-0",
                "messages": [{"role": "user", "content": "a \ud800 b", "timestamp": 10**400}],
                "updated_at": hostile.EARLY_DATE,
            },
        )
        assert store.broken is None
        assert [h.session_id for h in store.search("zebras")] == ["fresh"]


def _pi_good(pi_dir: Path) -> set[str]:
    folder = pi_dir / "--work-proj--"
    folder.mkdir(parents=True, exist_ok=True)
    ids = set()
    for n in range(2):
        kind = f"good{n}"
        lines = hostile.pi_lines(kind)
        (folder / f"2026-01-02T00-00-0{n}-000Z_pi-{kind}.jsonl").write_text(
            "\n".join(lines) + "\n", encoding="utf-8"
        )
        ids.add(f"pi-{kind}")
    return ids


def test_hostile_pi_files_never_take_the_pi_index_down(tmp_path: Path) -> None:
    pi_dir = tmp_path / "pi"
    bad = hostile.write_pi_all(pi_dir)
    good = _pi_good(pi_dir)
    before = _snapshot(pi_dir)
    with pi_index_store(pi_dir, db_path=tmp_path / "pi.sqlite3") as store:
        assert store.broken is None
        status = store.status()
        indexed = {sid for sid, _file in store.iter_index_sessions()}
        skipped = {row["file"] for row in status["skipped"]}
        assert len(indexed) + len(skipped) == len(bad) + len(good)
        assert good <= indexed
        assert all(row["reason"] for row in status["skipped"])
        found = {h.session_id for h in store.search(hostile.SHARED_WORD, limit=50)}
        assert good <= found
        assert good <= {s.session_id for s in store.recent(limit=50)}
        assert "pi-lone_surrogate" in {h.session_id for h in store.search("emoji", limit=5)}
    assert _snapshot(pi_dir) == before


def test_cli_search_recent_and_status_on_a_hostile_store(tmp_path: Path) -> None:
    d, _bad = _store_dir(tmp_path)
    pi_dir = tmp_path / "pi"
    hostile.write_pi_all(pi_dir)
    pi_good = _pi_good(pi_dir)
    stores = ["--store", str(d), "--store", f"pi:{pi_dir}"]
    runner = CliRunner()
    res = runner.invoke(main, ["search", "billing", "--json", "--limit", "20", *stores])
    assert res.exit_code == 0, res.output
    assert {r["session_id"] for r in json.loads(res.stdout)["results"]} == GOOD
    for n in range(2):
        res = runner.invoke(main, ["search", f"good{n}", "--json", *stores])
        assert res.exit_code == 0, res.output
        assert [r["session_id"] for r in json.loads(res.stdout)["results"]] == [f"pi-good{n}"]
    res = runner.invoke(main, ["recent", "--json", "--limit", "50", *stores])
    assert res.exit_code == 0, res.output
    assert GOOD | pi_good <= {r["session_id"] for r in json.loads(res.stdout)["results"]}
    res = runner.invoke(main, ["index", "status", "--json", *stores])
    assert res.exit_code == 0, res.output
    for entry in json.loads(res.stdout)["stores"]:
        assert entry["sessions"] + len(entry["skipped"]) == entry["files"]
        assert all(set(row) == {"file", "reason"} and row["reason"] for row in entry["skipped"])
    res = runner.invoke(main, ["index", "status", *stores])
    assert res.exit_code == 0, res.output


# --------------------------------------------------------------------------- generated

_LONE = st.sampled_from(["\ud800", "\udfff", "\ud83d", "\udc00"])
_TEXT = st.lists(
    st.one_of(st.text(max_size=8), _LONE, st.sampled_from(["marmalade", "word"])), max_size=6
).map(" ".join)
_HUGE = st.integers(min_value=10**300, max_value=10**400) | st.integers(max_value=-(10**300))
_DATE = st.sampled_from(
    [
        hostile.EARLY_DATE,
        hostile.LATE_DATE,
        "0001-01-01T00:00:00",
        "9999-12-31T23:59:59+14:00",
        "not a date",
        "",
    ]
)
_NUM = st.one_of(_HUGE, st.floats(allow_nan=True, allow_infinity=True), st.integers())


def _nest(depth: int, leaf: Any) -> Any:
    for _ in range(depth):
        leaf = [leaf]
    return leaf


_CONTENT = st.one_of(
    _TEXT,
    st.integers(min_value=200, max_value=1200).map(
        lambda n: [{"type": "text", "text": "marmalade deep", "deep": _nest(n, "x")}]
    ),
    _NUM,
    st.none(),
)
_VALUE = st.one_of(_TEXT, _DATE, _NUM, st.none())


@st.composite
def _session(draw: st.DrawFn, n: int) -> dict[str, Any]:
    msgs = [
        {
            "role": draw(st.one_of(st.sampled_from(["user", "assistant"]), _TEXT, _NUM)),
            "content": draw(_CONTENT),
            "timestamp": draw(st.one_of(_NUM, _DATE)),
        }
        for _ in range(draw(st.integers(0, 3)))
    ]
    return {
        "session_id": draw(st.one_of(st.just(f"gen{n}"), _TEXT.map(lambda t: f"gen{n}{t}"))),
        "messages": msgs,
        "created_at": draw(_VALUE),
        "updated_at": draw(_VALUE),
        "agent_name": draw(_VALUE),
        "metadata": {"title": draw(_VALUE), "cwd": draw(_VALUE), "source": draw(_VALUE)},
    }


def _dump(data: dict[str, Any]) -> bytes:
    # Lone surrogates as JSON escapes (what another program writes), huge ints verbatim.
    return json.dumps(data, ensure_ascii=True, allow_nan=True).encode("ascii")


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(sessions=st.lists(st.integers(0, 10**6).flatmap(_session), min_size=1, max_size=4))
def test_generated_hostile_values_never_escape(tmp_path: Path, sessions: list[Any]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory(dir=tmp_path) as tmp:
        d = Path(tmp) / "sessions"
        hostile.write_good(d, count=2)
        for n, data in enumerate(sessions):
            (d / f"gen{n}.json").write_bytes(_dump(data))
        with SqliteSessionStore(d, db_path=Path(tmp) / "i.sqlite3") as store:
            assert store.broken is None
            status = store.status()
            assert status["sessions"] + len(status["skipped"]) == status["files"]
            assert {h.session_id for h in store.search("billing", limit=20)} == {
                "good-0",
                "good-1",
            }
            store.search_ex("marmalade word", limit=20)
            store.search_ex("marmalade", limit=20, ranking="classic")
            store.search_ex("since:2026-01-01", limit=20)
            assert {"good-0", "good-1"} <= {s.session_id for s in store.recent(limit=50)}
            store.reconcile()
