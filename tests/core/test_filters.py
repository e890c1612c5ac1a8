"""The filter table: each row's SQL clause and Python predicate keep the same rows, and
the parser, the highlighter and ``ParsedQuery`` all follow the table."""

from __future__ import annotations

import dataclasses
import itertools
import sqlite3
from typing import Any

import pytest

from session_browser.core.query import (
    FILTERS,
    MessageFacts,
    ParsedQuery,
    SessionFacts,
    highlight_terms,
    local_machine,
    local_user,
    parse_query,
    sql_where,
)

NOW = 1_780_000_000.0
DAY = 86400.0

SESSIONS = [
    SessionFacts("s1", "s1.json", "praisonai", "", "/home/a/app", "Planner"),
    SessionFacts("s2", "s2.json", "praisonai", "cli", "/home/a/app/sub", None),
    SessionFacts("../x", "x.json", "praisonai", "scheduled", "/home/a/apple", "planner"),
    SessionFacts("s4", "s4.json", "pi", "", None, "coder"),
]
MESSAGES = [
    MessageFacts(role, archived, when)
    for role, archived, when in itertools.product(
        ("user", "assistant", "tool"), (False, True), (None, NOW - 3 * DAY, NOW - 0.5 * DAY)
    )
]
SESSION_TIME = NOW - 10 * DAY  # a message without a time takes its session's

QUERIES = [
    "role:user",
    "role:assistant",
    "archived:yes",
    "archived:no",
    "since:2d",
    "until:2d",
    "since:7d until:1d",
    "session:s1",
    "session:../x",
    "source:praisonai",
    "source:pi",
    "source:cli",
    "agent:PLANNER",
    "agent:coder",
    "project:/home/a/app",
    "project:/home/a",
    f"machine:{local_machine()}",
    f"user:{local_user()}",
    "in:tools",  # widens what is searched: no clause, keeps every row
]


def _db() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE TABLE s (sid INTEGER PRIMARY KEY, session_id TEXT, file TEXT, source TEXT,"
        " project TEXT, agent TEXT, updated_ts REAL)"
    )
    db.execute("CREATE TABLE m (id INTEGER PRIMARY KEY, sid INT, role TEXT, archived INT, ts REAL)")
    for sid, s in enumerate(SESSIONS):
        db.execute(
            "INSERT INTO s VALUES (?,?,?,?,?,?,?)",
            (sid, s.session_id, s.file_name, s.source, s.project, s.agent, SESSION_TIME),
        )
        for m in MESSAGES:
            db.execute(
                "INSERT INTO m (sid, role, archived, ts) VALUES (?,?,?,?)",
                (sid, m.role, int(m.archived), m.when),
            )
    return db


@pytest.mark.parametrize("query", QUERIES)
def test_sql_and_predicate_keep_the_same_rows(query: str) -> None:
    pq = parse_query(query, now=NOW)
    assert (pq.has_filters or pq.tools) and not pq.terms
    db = _db()
    kept_any = False
    for kind in ("praisonai", "pi"):
        where, params = sql_where(pq.filter_values, kind)
        by_sql = set(
            db.execute(
                f"SELECT s.sid, m.id FROM m JOIN s ON s.sid = m.sid WHERE 1 = 1{where}", params
            ).fetchall()
        )
        by_python = set()
        row = 0
        for sid, s in enumerate(SESSIONS):
            facts = dataclasses.replace(s, store_kind=kind)
            for m in MESSAGES:
                row += 1
                when = m.when if m.when is not None else SESSION_TIME
                kept = all(f.keeps(v, facts) for f, v in pq.session_filters) and all(
                    f.keeps(v, dataclasses.replace(m, when=when)) for f, v in pq.message_filters
                )
                if kept:
                    by_python.add((sid, row))
        assert by_sql == by_python, (query, kind)
        kept_any = kept_any or bool(by_python)
    assert kept_any, f"{query} keeps nothing: the comparison would prove little"


def test_every_filter_is_compared() -> None:
    assert {f.key for f in FILTERS} == {q.split(":")[0] for q in QUERIES}


def test_every_filter_is_a_query_field_parses_its_example_and_is_never_highlighted() -> None:
    fields = {f.name for f in dataclasses.fields(ParsedQuery)}
    for f in FILTERS:
        assert f.name in fields
        pq = parse_query(f"{f.example} word", now=NOW)
        value: Any = getattr(pq, f.name)
        assert value is not None, f.key
        assert [k for k, v in pq.filter_values.items() if v is not None] == [f.key]
        assert highlight_terms(f"{f.example} word") == ["word"]
