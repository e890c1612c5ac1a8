"""One store of hostile files beside good ones: every read path works for the good ones.

The hostile kinds (tests/hostile.py) each broke a reader once: a lone surrogate, a 400-digit
integer, dates at the ends of the range, 800/980-deep nesting, terminal escapes and bidi
marks, NaN and 1e308. Search, recent, show, export, the index, the agent tool and the
generated-value fuzz below must answer for the good sessions, never with a traceback, and
leave every file as it was.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_browser.cli import main
from session_browser.core.index import SqliteSessionStore
from session_browser.core.model import dumps_json
from session_browser.core.tool import session_search

from . import hostile

GOOD = ["good-0", "good-1", "good-2"]


def snapshot(root: Path) -> dict[str, tuple[bytes, int, int]]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            st_ = p.stat()
            out[str(p.relative_to(root))] = (p.read_bytes(), st_.st_ino, st_.st_mode)
    return out


@pytest.fixture
def stores(tmp_path: Path) -> tuple[Path, Path]:
    json_dir = tmp_path / "sessions"
    pi_dir = tmp_path / "pi"
    hostile.write_good(json_dir)
    hostile.write_all(json_dir)
    hostile.write_pi_all(pi_dir)
    return json_dir, pi_dir


def loads(text: str) -> Any:
    """Parse CLI JSON output, which may hold content nested almost 1,000 levels deep."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        return json.loads(text)
    finally:
        sys.setrecursionlimit(limit)


def cli(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, list(args))
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise AssertionError(f"{args}: exception {res.exception!r}\n{res.output}")
    return res.exit_code, res.stdout, res.stderr


def test_cli_read_paths_answer_for_the_good_sessions(stores: tuple[Path, Path]) -> None:
    json_dir, pi_dir = stores
    opts = ["--store", str(json_dir), "--store", f"pi:{pi_dir}"]
    before = snapshot(json_dir.parent)
    for index_flag in ([], ["--no-index"]):
        code, out, err = cli("search", hostile.SHARED_WORD, "--json", "--limit", "50", *index_flag,
                             *opts)
        assert code == 0, err
        found = {h["session_id"] for h in loads(out)["results"]}
        assert set(GOOD) <= found, (index_flag, found)
        code, out, err = cli("recent", "--json", "--limit", "50", *index_flag, *opts)
        assert code == 0, err
        listed = {s["session_id"] for s in loads(out)["results"]}
        assert set(GOOD) <= listed, (index_flag, listed)
        assert "internal error" not in err
    for sid in GOOD:
        code, out, err = cli("show", sid, *opts)
        assert code == 0 and sid in out, (sid, err)
    # Every hostile session that is listed can be shown: one clear answer, never a traceback.
    code, out, _err = cli("recent", "--json", "--limit", "100", *opts)
    for s in loads(out)["results"]:
        code, shown, err = cli("show", s["session_id"], *opts)
        assert code == 0, (s["session_id"], err)
        assert "\x1b" not in shown and "\u202e" not in shown and "\u2028" not in shown
    assert snapshot(json_dir.parent) == before


def test_export_skips_or_keeps_each_hostile_session(
    stores: tuple[Path, Path], tmp_path: Path
) -> None:
    json_dir, _pi_dir = stores
    out_file = tmp_path / "out" / "all.json"
    out_file.parent.mkdir()
    code, _out, err = cli("export", "--all", "--skip-unreadable", "-o", str(out_file),
                          "--store", str(json_dir))
    assert code == 0, err
    payload = loads(out_file.read_text(encoding="utf-8"))
    ids = {s["session_id"] for s in payload["sessions"]}
    assert set(GOOD) <= ids
    for fmt in ("md", "html"):
        target = tmp_path / "out" / f"all.{fmt}"
        code, _out, err = cli("export", "--all", "--skip-unreadable", "--format", fmt,
                              "-o", str(target), "--store", str(json_dir))
        assert code == 0, (fmt, err)
        text = target.read_text(encoding="utf-8")
        assert "good session 0" in text
        assert "\x1b" not in text


def test_index_names_every_file_it_could_not_index(stores: tuple[Path, Path]) -> None:
    json_dir, _pi_dir = stores
    code, out, err = cli("index", "update", "--store", str(json_dir))
    assert code == 0, err
    code, out, err = cli("index", "status", "--json", "--store", str(json_dir))
    assert code == 0, err
    status = loads(out)
    rows = status["stores"]
    indexed = sum(int(r["sessions"]) for r in rows)
    files = len(list(json_dir.glob("*.json")))
    skipped = [s for r in rows for s in r["skipped"]]
    # Every file is either in the index or named, with a reason, as skipped.
    assert indexed + len(skipped) == files, (indexed, skipped, files)
    for item in skipped:
        assert item.get("reason"), item


def test_library_and_tool_answer_for_the_good_sessions(stores: tuple[Path, Path]) -> None:
    json_dir, _pi_dir = stores
    with SqliteSessionStore(json_dir) as store:
        hits = store.search(hostile.SHARED_WORD, limit=50)
        assert set(GOOD) <= {h.session_id for h in hits}
        assert set(GOOD) <= {s.session_id for s in store.recent(limit=50)}
        for hit in hits:
            store.window(hit.session_id, hit.anchor_index, window=2)
            dumps_json(hit.to_json())
        reply = loads(session_search(query=hostile.SHARED_WORD, store=store, limit=20))
        assert reply["success"] is True


# --------------------------------------------------------------------- generated values

ugly_strings = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["\ud83d", "\udc00x", "a\ud800b", hostile.NASTY_TEXT, "\u2028", ""]),
)
ugly_numbers = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.just(10**400),
    st.just(-(10**400)),
    st.floats(allow_nan=True, allow_infinity=True),
)
ugly_dates = st.one_of(
    st.sampled_from([hostile.EARLY_DATE, hostile.LATE_DATE, "0001-01-01", "9999-12-31T23:59:59",
                     "2026-13-45", "not a date", "+275760-09-13T00:00:00Z"]),
    ugly_numbers,
)


def nested_value(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


ugly_content = st.one_of(
    ugly_strings.map(lambda s: f"{hostile.SHARED_WORD} {s}"),
    st.integers(min_value=1, max_value=900).map(
        lambda d: [{"type": "text", "text": hostile.SHARED_WORD, "deep": nested_value(d)}]
    ),
    ugly_numbers,
)
ugly_session = st.fixed_dictionaries(
    {
        "session_id": st.just("ugly"),
        "messages": st.lists(
            st.fixed_dictionaries(
                {"role": st.sampled_from(["user", "assistant"]), "content": ugly_content},
                optional={"timestamp": st.one_of(ugly_numbers, ugly_dates),
                          "metadata": st.fixed_dictionaries({}, optional={"title": ugly_strings})},
            ),
            min_size=1,
            max_size=3,
        ),
    },
    optional={
        "created_at": ugly_dates,
        "updated_at": ugly_dates,
        "agent_name": ugly_strings,
        "metadata": st.fixed_dictionaries({}, optional={"title": ugly_strings}),
    },
)


def raw_json(value: Any) -> bytes:
    """JSON text as another program would write it: lone surrogates as escapes."""
    return json.dumps(value, indent=2, ensure_ascii=True, allow_nan=True).encode("ascii")


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(ugly_session)
def test_generated_hostile_values_never_break_other_sessions(data: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "sessions"
        hostile.write_good(d)
        try:
            raw = raw_json(data)
        except (RecursionError, ValueError):
            return
        (d / "ugly.json").write_bytes(raw)
        before = snapshot(d)
        opts = ["--store", str(d)]
        for args in (["search", hostile.SHARED_WORD, "--json", "--limit", "20"],
                     ["search", hostile.SHARED_WORD, "--json", "--no-index"],
                     ["recent", "--json"], ["recent", "--json", "--no-index"]):
            code, out, err = cli(*args, *opts)
            assert code == 0, (args, err)
            body = loads(out)
            ids = {h["session_id"] for h in body["results"]}
            assert set(GOOD) <= ids, (args, ids)
        for sid in ("ugly", "good-0"):
            code, out, err = cli("show", sid, *opts)
            assert code == 0 or (sid == "ugly" and err.count("\n") == 1), (sid, err)
        out_file = Path(tmp) / "export.json"
        code, _out, err = cli("export", "--all", "--skip-unreadable", "-o", str(out_file), *opts)
        assert code == 0, err
        assert snapshot(d) == before
