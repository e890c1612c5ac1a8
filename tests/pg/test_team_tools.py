"""``in:tools`` on the team index: the hidden parts pushed with ``--include-hidden`` are searched
as the SQLite index searches them (the same sessions, at the same turns); without them the
search says so; a version 2 index is migrated in place, its prose still found."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg

from session_browser.core.open import index_store
from session_browser.core.pgindex import SCHEMA_VERSION, PgIndexStore, push_stores
from session_browser.core.pgindex.engine import NO_HIDDEN
from session_browser.core.sources import SOURCES
from tests.core.test_claude import Transcript, text, tool_use

from .corpus import write_store

IDS = [f"{n}1111111-2222-3333-4444-555555555555" for n in (1, 2, 3)]


def _claude_store(root: Path) -> Path:
    """Three Claude Code sessions: two whose tool results (only) hold ``zanzibarquux``, one
    whose reasoning holds ``ocelotplan``; all talk about listing files."""
    for n, sid in enumerate(IDS):
        t = Transcript(sid, prefix=f"u{n}")
        t.prompt(f"list the files of project {n}")
        t.answer("m1", tool_use("toolu_ls", "Bash", command=f"ls -la dir{n}"))
        found = f"zanzibarquux.txt 4096 bytes owner{n}@example.com"
        t.result("toolu_ls", found if n < 2 else "empty")
        t.answer(
            "m2",
            {"type": "thinking", "thinking": "the ocelotplan" if n == 2 else "simple"},
            text(f"Found the files of project {n}."),
        )
        t.write(root / "proj" / f"{sid}.jsonl")
    return root


def _push(root: Path, url: str, hidden: bool) -> Any:
    return push_stores(url, [(SOURCES["claude"].source(root), "claude")], hidden=hidden)


def _found(store: Any, query: str) -> tuple[list[tuple[str, int, float]], list[str]]:
    """(session, anchor turn, score) of each hit, and the warnings."""
    res = store.search_ex(query, limit=10)
    assert res.error is None, res.error
    hits = [(h.session_id, h.anchor_index, round(h.score, 4)) for h in res.hits]
    return hits, [str(w) for w in res.warnings]


def _hidden_rows(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM sb_hidden").fetchone()
    assert row is not None
    return int(row[0])


def test_in_tools_finds_the_same_sessions_on_both_engines(tmp_path: Path, pg_url: str) -> None:
    root = _claude_store(tmp_path / "projects")
    _push(root, pg_url, hidden=True)
    local = index_store(SOURCES["claude"], root)
    team = PgIndexStore(pg_url)
    try:
        for query in (
            "zanzibarquux in:tools",
            '"zanzibarquux txt" in:tools',
            "ocelotplan in:tools",
            "files zanzibarquux in:tools",
            "role:assistant dir1 in:tools",
        ):
            want, _ = _found(local, query)
            got, warnings = _found(team, query)
            assert want, query
            assert got == want, query
            assert NO_HIDDEN not in warnings
        assert {h[0] for h in _found(team, "zanzibarquux in:tools")[0]} == set(IDS[:2])
        assert _found(team, "ocelotplan in:tools")[0][0][0] == IDS[2]
        # without in:tools the hidden parts are not searched, on either engine
        assert _found(team, "zanzibarquux")[0] == [] == _found(local, "zanzibarquux")[0]
        hit = team.search("zanzibarquux in:tools", limit=1)[0]
        assert "zanzibarquux" in hit.snippet.lower()  # cut from the tool result
    finally:
        team.close()
        local.close()


def test_without_include_hidden_nothing_is_sent_and_the_search_says_so(
    tmp_path: Path, pg_url: str
) -> None:
    root = _claude_store(tmp_path / "projects")
    _push(root, pg_url, hidden=False)
    assert _hidden_rows(pg_url) == 0
    with PgIndexStore(pg_url) as team:
        hits, warnings = _found(team, "zanzibarquux in:tools")
        assert hits == [] and NO_HIDDEN in warnings
        assert len(_found(team, "files in:tools")[0]) == 3  # the prose still found
        assert _push(root, pg_url, hidden=True).sent == 3
        assert _hidden_rows(pg_url) > 0
        assert len(_found(team, "zanzibarquux in:tools")[0]) == 2
        # pushed again without them: the sessions' hidden rows go
        assert _push(root, pg_url, hidden=False).sent == 3
        assert _hidden_rows(pg_url) == 0
        hits, warnings = _found(team, "zanzibarquux in:tools")
        assert hits == [] and NO_HIDDEN in warnings
    # redacted, the hidden parts are sent redacted too
    source = SOURCES["claude"].source(root)
    push_stores(pg_url, [(source, "claude")], hidden=True, redact=True)
    with psycopg.connect(pg_url) as conn:
        texts = " ".join(r[0] for r in conn.execute("SELECT text FROM sb_hidden").fetchall())
    assert "zanzibarquux" in texts and "[REDACTED:email]" in texts and "example.com" not in texts


def test_a_version_2_index_is_migrated_in_place(tmp_path: Path, pg_url: str) -> None:
    root = _claude_store(tmp_path / "projects")
    prose = write_store(tmp_path / "store", only=["cafe", "billing"])
    push_stores(pg_url, [(SOURCES["praisonai"].source(prose), "praisonai")])
    _push(root, pg_url, hidden=True)
    with psycopg.connect(pg_url, autocommit=True) as conn:  # as version 2 left it
        conn.execute("DROP TABLE sb_hidden")
        conn.execute("UPDATE sb_schema SET version = 2")
    with PgIndexStore(pg_url) as team:
        assert team.status()["schema_version"] == SCHEMA_VERSION
        assert _hidden_rows(pg_url) == 0
        assert [h[0] for h in _found(team, "billing")[0]] == ["billing"]
        assert len(_found(team, "files")[0]) == 3
        hits, warnings = _found(team, "zanzibarquux in:tools")
        assert hits == [] and NO_HIDDEN in warnings
        # the next push sends again only the sessions pushed with their hidden parts
        again = push_stores(pg_url, [(SOURCES["praisonai"].source(prose), "praisonai")])
        assert (again.sent, again.unchanged) == (0, 2)
        assert _push(root, pg_url, hidden=True).sent == 3
        assert len(_found(team, "zanzibarquux in:tools")[0]) == 2


def test_a_version_6_index_sends_the_hidden_parts_again_as_written(
    tmp_path: Path, pg_url: str
) -> None:
    root = tmp_path / "projects"
    t = Transcript(IDS[0], prefix="w")
    t.prompt("write the hook")
    t.answer("m1", tool_use("toolu_w", "Write", file_path="/h.sh", content="set -e\ntrapdoorword"))
    t.result("toolu_w", "File created")
    t.answer("m2", text("Written."))
    t.write(root / "proj" / f"{IDS[0]}.jsonl")
    prose = write_store(tmp_path / "store", only=["cafe"])
    push_stores(pg_url, [(SOURCES["praisonai"].source(prose), "praisonai")])
    _push(root, pg_url, hidden=True)
    with psycopg.connect(pg_url, autocommit=True) as conn:  # as version 6 left it
        conn.execute("UPDATE sb_hidden SET text = replace(text, 'trapdoorword', 'ntrapdoorword')")
        conn.execute("UPDATE sb_hidden SET tsv = to_tsvector('simple', text)")
        conn.execute("UPDATE sb_schema SET version = 6")
    with PgIndexStore(pg_url) as team:
        assert team.status()["schema_version"] == SCHEMA_VERSION == 7
        assert _found(team, "trapdoorword in:tools")[0] == []  # (its rows as they were)
        # the next push sends again only the session pushed with its hidden parts
        again = push_stores(pg_url, [(SOURCES["praisonai"].source(prose), "praisonai")])
        assert again.sent == 0
        assert _push(root, pg_url, hidden=True).sent == 1
        assert [h[0] for h in _found(team, "trapdoorword in:tools")[0]] == [IDS[0]]
        assert _found(team, "ntrapdoorword in:tools")[0] == []
