"""Hits built from the index's rows are the hits built from the session files: the same title,
snippet, window and bookends, value for value and type for type, whatever the messages hold
(archived turns, parts of a long message, turns without text, content that is not a string,
odd timestamps, lineage, Pi sessions). Sessions the rows cannot give read their file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from session_browser.core.index import SqliteSessionStore
from session_browser.core.index import hits as index_hits
from session_browser.core.index.engine import SqliteEngine
from session_browser.core.open import pi_index_store
from session_browser.core.query import parse_query
from session_browser.core.search import procedure
from session_browser.core.search import rows as index_rows
from session_browser.core.search.rank import order
from tests.core.test_pi import V3_ID, v3_entries, write_lines

T0 = 1_760_000_000.0
LONG_WORDS = " ".join(f"w{i:05d}" for i in range(9_000))  # ~63,000 characters


def _write(d: Path, sid: str, data: dict[str, Any]) -> None:
    d.mkdir(parents=True, exist_ok=True)
    data.setdefault("session_id", sid)
    data.setdefault("updated_at", "2026-01-01T00:00:00+00:00")
    (d / f"{sid}.json").write_text(json.dumps(data, indent=2), encoding="utf-8")


def _m(role: Any, content: Any, ts: Any = None, **rest: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"role": role, "content": content, **rest}
    if ts is not None:
        out["timestamp"] = ts
    return out


def _store_dir(d: Path) -> None:
    # archived turns, a tool turn without text, list content, an int and a string timestamp
    _write(
        d,
        "arch",
        {
            "archived_messages": [
                _m("user", "how do I rotate the kestrel keys", T0),
                _m("assistant", "rotate kestrel keys with the vault cli", T0 + 5),
                _m("assistant", None, T0 + 6, tool_calls=[{"id": "c1"}]),
                _m("tool", "kestrel rotated", T0 + 7),
            ],
            "messages": [
                _m("user", [{"type": "text", "text": "and the kestrel backups?"}], 1760000100),
                _m("assistant", "backups of kestrel live in the bucket", "2025-10-09T10:00:00Z"),
                _m("user", "thanks", float("inf")),
                _m("assistant", ""),
                _m("assistant", {"odd": ["kestrel", 1, None]}, T0 + 200),
            ],
            "metadata": {"title": "Kestrel keys", "cwd": "/srv/kestrel"},
        },
    )
    # a long message (over the scorer's 50,000-character pieces, and stored in parts)
    long_text = f"opening heron {LONG_WORDS} closing heron kestrel tail"
    _write(
        d,
        "long",
        {
            "messages": [
                _m("system", "be brief", T0),
                # far from both ends: neither bookend read reaches its parts
                *[_m(("user", "assistant")[i % 2], f"before {i}", T0 - 100 + i) for i in range(20)],
                _m("user", "paste of the heron log", T0 + 1),
                _m("assistant", long_text, T0 + 2),
                *[
                    _m(("user", "assistant")[i % 2], f"turn {i} heron", T0 + 3 + i)
                    for i in range(12)
                ],
            ],
            "agent_name": "loggy",
        },
    )
    # a lineage: two continuations of one conversation
    for n in range(2):
        _write(
            d,
            f"lin{n}",
            {
                "messages": [
                    _m("user", f"part {n} of the osprey migration", T0 + 1000 * n),
                    _m("assistant", "osprey migrated", T0 + 1000 * n + 1),
                    _m("user", "and kestrel?", T0 + 1000 * n + 2),
                ],
                "metadata": {"lineage_id": "chain-1"},
                "updated_at": f"2026-01-0{n + 1}T00:00:00+00:00",
            },
        )
    # short sessions: one or two turns, user-only (no bookends), a system prompt first
    _write(d, "one", {"messages": [_m("user", "osprey kestrel heron once", T0)]})
    _write(
        d,
        "sys",
        {
            "messages": [
                _m("system", "osprey system prompt", T0),
                _m("user", "osprey question", T0 + 1),
                _m("assistant", "osprey answer", T0 + 2),
                _m(7, "osprey odd role", T0 + 3),
            ]
        },
    )


QUERIES = [
    "kestrel",
    "heron",
    "osprey",
    "kestrel backups",
    '"closing heron"',
    "w08999",
    "osprey -migration",
    "role:assistant kestrel",
    "archived:yes kestrel",
    "role:user",
    "turn heron",
    "zephyr",
    "quokka",
    "lemur",
]


def _compare(store: SqliteSessionStore, queries: list[str]) -> int:
    """Every hit of every query, from the rows and from the file: the same JSON. Returns
    how many hits the rows gave."""
    from_rows = 0
    exact = {f for f, flag in store._rows("SELECT file, hit_rows FROM sessions") if flag}
    for query in queries:
        pq = parse_query(query)
        engine = SqliteEngine(store)
        with engine.reading():
            scored = procedure.score(engine, pq, None, 10).scored
        for s in order(scored, pq):
            for window in (0, 1, 5, 40):
                want = store._hit_from_file(s, pq, window)
                if s.info.file not in exact:
                    with pytest.raises(index_hits._FromFile):
                        store._hit_from_rows(s, pq, window)
                    continue
                got = store._hit_from_rows(s, pq, window)
                from_rows += 1
                assert want is not None and got is not None, (query, s.info.file)
                assert json.dumps(got.to_json()) == json.dumps(want.to_json()), (query, window)
    return from_rows


@pytest.mark.parametrize("whole_rows", [index_hits.WHOLE_ROWS, 0])
def test_hits_from_rows_equal_hits_from_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, whole_rows: int
) -> None:
    # whole_rows 0: every session read row range by row range, as long ones are
    monkeypatch.setattr(index_hits, "WHOLE_ROWS", whole_rows)
    d = tmp_path / "sessions"
    _store_dir(d)
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        stored = dict(store._rows("SELECT session_id, hit_rows FROM sessions"))
        # 1 + the entries the rows do not give as they are (kept in ``verbatim``)
        assert stored == {"arch": 7, "long": 1, "lin0": 1, "lin1": 1, "one": 1, "sys": 1}
        n = _compare(store, QUERIES)
        assert n > 50
        # the whole search: folded continuations and all, from the rows
        hits = store.search("osprey", limit=10, window=2)
        assert [h.session_id for h in hits][:1] and any(h.folded for h in hits)


@pytest.mark.parametrize("whole_chars", [0, 10**9])
def test_parts_of_a_long_message_are_joined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, whole_chars: int
) -> None:
    monkeypatch.setattr(index_rows, "PART_CHARS", 5_000)
    monkeypatch.setattr(index_hits, "WHOLE_CHARS", whole_chars)
    d = tmp_path / "sessions"
    _store_dir(d)
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        parts = store._rows("SELECT count(*) FROM messages GROUP BY sid, idx ORDER BY 1 DESC")
        assert parts[0][0] > 10
        assert _compare(store, QUERIES) > 50


def test_pi_hits_from_rows_equal_hits_from_files(tmp_path: Path) -> None:
    root = tmp_path / "pi"
    write_lines(root / "--home-u-zephyr--" / "2025_v3.jsonl", v3_entries())
    with pi_index_store(root) as store:
        ((flag,),) = store._rows("SELECT hit_rows FROM sessions")
        assert flag >= 1
        assert _compare(store, QUERIES) > 5
        assert [h.session_id for h in store.search("quokka")] == [V3_ID]


def test_sessions_the_rows_cannot_give_read_their_file(tmp_path: Path) -> None:
    d = tmp_path / "sessions"
    _write(d, "cut", {"messages": [_m("user", "cut emoji \ud83d pelican", T0)]})
    _write(d, "noid", {"session_id": "", "messages": [_m("user", "pelican without id", T0)]})
    _write(d, "fine", {"messages": [_m("user", "pelican fine", T0)]})
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        flags = dict(store._rows("SELECT file, min(hit_rows, 1) FROM sessions"))
        assert flags == {"cut.json": 0, "noid.json": 0, "fine.json": 1}
        hits = {h.session_id: h for h in store.search("pelican", limit=10)}
        assert set(hits) == {"cut", "", "fine"}
        assert hits["cut"].messages[0]["content"] == "cut emoji \ud83d pelican"
        # a file changed since it was indexed: its hit says what the file says now
        path = d / "fine.json"
        data = json.loads(path.read_text())
        data["metadata"] = {"title": "Renamed"}
        path.write_text(json.dumps(data))
        os.utime(path, ns=(1, 1))
        pq = parse_query("pelican")
        engine = SqliteEngine(store)
        with engine.reading():
            scored = procedure.score(engine, pq, None, 10).scored
        fine = next(s for s in scored if s.info.file == "fine.json")
        with pytest.raises(index_hits._FromFile):
            store._hit_from_rows(fine, pq, 5)
        hit = store._full_hit(fine, pq, 5)
        assert hit is not None and hit.title == "Renamed"


def test_hits_of_the_folded_index_read_their_file(tmp_path: Path) -> None:
    d = tmp_path / "sessions"
    _store_dir(d)
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3", fts=False) as store:
        assert {f for (f,) in store._rows("SELECT hit_rows FROM sessions")} == {0}
        hits = store.search("kestrel backups", limit=3)
        assert hits and hits[0].session_id == "arch" and hits[0].title == "Kestrel keys"


def test_a_message_too_long_for_rows_hits_reads_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Joining a huge message's parts would hold it several times over: such a session's
    # hits come from its file (bounded reads), with the same content.
    monkeypatch.setattr(index_rows, "PART_CHARS", 5_000)
    monkeypatch.setattr(index_rows, "ROWS_HIT_MAX_CHARS", 20_000)
    d = tmp_path / "sessions"
    _store_dir(d)
    with SqliteSessionStore(d, db_path=tmp_path / "i.sqlite3") as store:
        flags = dict(store._rows("SELECT session_id, hit_rows FROM sessions"))
        assert flags["long"] == 0 and flags["arch"] >= 1
        assert _compare(store, QUERIES) > 50
