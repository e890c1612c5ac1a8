"""The indexed Pi store: read-only, incremental, filters, and ranking together with PraisonAI."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from session_browser.core.index import SqliteSessionStore, default_db_path
from session_browser.core.model import SessionData, SessionMessage
from session_browser.core.open import pi_index_store
from session_browser.core.query import parse_query
from session_browser.core.sources.pi import PiStore, pi_jsonl, read_pi_session
from session_browser.core.sources.pi.source import PiSource
from session_browser.core.sources.readonly import ReadOnlyStore
from session_browser.core.store import DefaultSessionStore
from session_browser.core.stores import StoreNotFound, open_stores
from tests.core.test_pi import (
    BEFORE,
    LARGE,
    PI_CWD,
    V3_ID,
    assistant,
    header,
    hidden_only_words,
    raw_entries,
    snapshot,
    spread,
    user,
    v3_entries,
    visible_words,
    write_lines,
)

PROJECT = "--home-user-proj--"


def _name(src: Path) -> str:
    head = json.loads(src.open(encoding="utf-8").readline())
    stamp = head["timestamp"].replace(":", "-").replace(".", "-")
    return f"{stamp}_{head['id']}.jsonl"


@pytest.fixture
def pi_dir(tmp_path: Path, shared_data: Path) -> Path:
    """The two real fixtures in Pi's layout: ``--home-user-proj--/<ts>_<uuid>.jsonl``."""
    root = tmp_path / "pi"
    (root / PROJECT).mkdir(parents=True)
    for name in (BEFORE, LARGE):
        src = shared_data / "pi" / name
        shutil.copyfile(src, root / PROJECT / _name(src))
    return root


def sid_of(shared_data: Path, name: str) -> str:
    return str(raw_entries(shared_data / "pi" / name)[0]["id"])


def indexed_texts(store: SqliteSessionStore, session_id: str) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(store.db_path)
    try:
        return db.execute(
            "SELECT m.idx, m.role, m.archived, m.text FROM messages m "
            "JOIN sessions s ON s.sid = m.sid WHERE s.session_id = ? ORDER BY m.idx",
            (session_id,),
        ).fetchall()
    finally:
        db.close()


# ---------------------------------------------------------------------- the real fixtures


def test_fixtures_searchable_by_prose_not_by_tools_or_thinking(
    pi_dir: Path, shared_data: Path
) -> None:
    with pi_index_store(pi_dir) as store:
        assert store.last_report is not None and store.last_report.added == 2
        for name in (BEFORE, LARGE):
            path = shared_data / "pi" / name
            sid = sid_of(shared_data, name)
            for role in ("user", "assistant"):
                for word in spread(visible_words(path, role), 8):
                    for ranking in ("relevance", "classic"):
                        hits = [
                            h
                            for h in store.search(word, limit=10, ranking=ranking)
                            if h.session_id == sid
                        ]
                        assert hits, f"{word!r} ({role}, {ranking}) not found in {name}"
                        assert hits[0].source == "pi" and hits[0].project == PI_CWD
                        anchor = next(
                            m for m in hits[0].messages if m["index"] == hits[0].anchor_index
                        )
                        assert word in anchor["content"].lower()
            texts = "\n".join(t[3] for t in indexed_texts(store, sid)).lower()
            for word in spread(hidden_only_words(path), 25):
                assert word not in texts, word
                result = store.search_ex(word, limit=10)
                exact = [h for h in result.hits if h.session_id == sid and not result.fuzzy]
                assert not exact, word
        # Interactive coding sessions are neither flagged nor demoted.
        assert all(not s.automated and s.source == "pi" for s in store.recent(limit=10))


def test_branches_and_hidden_blocks_through_the_index(tmp_path: Path) -> None:
    root = tmp_path / "pi"
    write_lines(root / "--home-u-zephyr--" / "2025_v3.jsonl", v3_entries())
    with pi_index_store(root) as store:
        assert [h.session_id for h in store.search("lemur")] == [V3_ID]
        assert store.search("reply") == []  # only on the abandoned branch
        assert store.search("secretthoughtword") == []
        assert store.search("tooloutputsecret") == []
        assert [h.session_id for h in store.search("quokka archived:yes")] == [V3_ID]
        branches = store.reader.branches(V3_ID)
        assert branches[0].active and len(branches) == 2
        side = store.reader.projection(V3_ID, leaf_id=branches[1].leaf_id)
        assert any("walrus reply" in m["content"] for m in side)
        full = json.dumps(store.projection(V3_ID, include_hidden=True))
        assert "secretthoughtword" in full and "tooloutputsecret" in full
        assert len(store.projection(V3_ID)) == len(store.projection(V3_ID, include_hidden=True))
        assert store.get_session(V3_ID).source_kind == "pi"
        assert store.session_exists(V3_ID) and not store.session_exists("nope")


# ---------------------------------------------------------------------- incremental reads


def test_growth_is_read_from_where_it_stopped(
    tmp_path: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSION_BROWSER_VAULT", "off")  # rows of the file as it is, alone
    src = shared_data / "pi" / LARGE
    lines = src.read_bytes().splitlines(keepends=True)
    sid = sid_of(shared_data, LARGE)
    root = tmp_path / "pi"
    path = root / PROJECT / _name(src)
    path.parent.mkdir(parents=True)
    half = len(lines) // 2
    path.write_bytes(b"".join(lines[:half]))
    inode = path.stat().st_ino

    with pi_index_store(root) as store:
        assert store.last_reads == {"resumed": 0, "full": 1}
        before = indexed_texts(store, sid)
    late = [w for w in visible_words(src, "user") if w not in "\n".join(t[3] for t in before)]
    assert late, "the second half says something new"

    with path.open("ab") as fh:  # Pi appends
        fh.write(b"".join(lines[half:]))
    assert path.stat().st_ino == inode
    # A new store object (a later run): the parse state comes from the database.
    with pi_index_store(root) as store:
        report = store.last_report
        assert report is not None and report.updated == 1 and report.added == 0
        assert store.last_reads == {"resumed": 1, "full": 0}
        assert any(h.session_id == sid for h in store.search(late[0], limit=10))
        grown = indexed_texts(store, sid)
        store.rebuild()
        assert store.last_reads == {"resumed": 0, "full": 1}
        assert indexed_texts(store, sid) == grown  # the resumed read equals a full one
        assert len(grown) > len(before)

        # Rewritten in place (same inode, changed prefix): read again from the start.
        path.write_bytes(b"".join(lines[:3]) + b"".join(lines[half:]))
        store.reconcile()
        assert store.last_reads == {"resumed": 0, "full": 1}
        assert len(indexed_texts(store, sid)) < len(grown)


def test_appended_compaction_reindexes_earlier_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSION_BROWSER_VAULT", "off")  # rows of the file as it is, alone
    root = tmp_path / "pi"
    path = write_lines(
        root / "--w--" / "s.jsonl",
        [
            header("grow", cwd="/w"),
            user("the narwhal question", "2025-01-02T03:05:00.000Z"),
            assistant("a narwhal answer", "2025-01-02T03:06:00.000Z"),
            user("second topic okapi", "2025-01-02T04:05:00.000Z"),
            assistant("okapi answer", "2025-01-02T04:06:00.000Z"),
        ],
    )
    with pi_index_store(root) as store:
        assert [h.session_id for h in store.search("narwhal archived:no")] == ["grow"]
        with path.open("a", encoding="utf-8") as fh:
            fh.write(
                json.dumps(
                    {
                        "type": "compaction",
                        "timestamp": "2025-01-02T05:00:00.000Z",
                        "summary": "talked about a capybara",
                        "firstKeptEntryIndex": 3,
                    }
                )
                + "\n"
            )
        store.reconcile()
        assert store.last_reads == {"resumed": 1, "full": 0}
        assert store.search("narwhal archived:no") == []
        assert [h.session_id for h in store.search("narwhal archived:yes")] == ["grow"]
        assert [h.session_id for h in store.search("capybara")] == ["grow"]
        assert store.recent(limit=1)[0].archived_count == 2

        path.unlink()
        store.reconcile()
        assert store.search("okapi") == [] and store.recent() == []
        db = sqlite3.connect(store.db_path)
        assert db.execute("SELECT count(*) FROM pi_state").fetchone()[0] == 0
        db.close()


def test_partial_last_line_is_picked_up_once_complete(tmp_path: Path) -> None:
    root = tmp_path / "pi"
    path = write_lines(root / "--w--" / "s.jsonl", [header("part", cwd="/w"), user("first gecko")])
    line = json.dumps(assistant("the wombat reply", "2025-01-02T03:07:00.000Z"))
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line[:20])  # Pi is mid-write
    with pi_index_store(root) as store:
        assert store.search("wombat") == []
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line[20:] + "\n")
        store.reconcile()
        assert store.last_reads == {"resumed": 1, "full": 0}
        assert [h.session_id for h in store.search("wombat")] == ["part"]


# ---------------------------------------------------------------------- read-only


def test_nothing_is_written_beside_the_pi_files(
    pi_dir: Path, shared_data: Path, isolated_home: Path
) -> None:
    write_lines(pi_dir / "--home-u-zephyr--" / "2025_v3.jsonl", v3_entries())
    before = snapshot(pi_dir)
    sid = sid_of(shared_data, BEFORE)
    store = pi_index_store(pi_dir, reconcile="background")
    assert store._thread is not None
    store._thread.join()
    try:
        for query in ("refactor", "source:pi selector", "zephyr", '"tui renderer"', "nothing-x"):
            store.search(query, limit=5)
            store.search(query, limit=5, ranking="classic")
        store.recent(limit=5)
        store.browse(limit=5, sort="size")
        store.count()
        store.status()
        store.projection(sid, include_hidden=True)
        store.window(sid, 3)
        for branch in store.reader.branches(V3_ID):
            store.reader.projection(V3_ID, leaf_id=branch.leaf_id)
        store.rebuild()
        writes: list[Callable[[], object]] = [
            lambda: store.add_message(sid, "user", "x"),
            lambda: store.add_user_message(sid, "x"),
            lambda: store.rename_session(sid, "x"),
            lambda: store.delete_session(sid),
            lambda: store.clear_session(sid),
            lambda: store.write_session(SessionData(session_id="new"), overwrite=True),
            lambda: store.set_chat_history(sid, []),
            lambda: store.update_session_metadata(sid, title="x"),
            lambda: PiStore(pi_dir).add_message(sid, "user", "x"),
        ]
        for write in writes:
            with pytest.raises(ReadOnlyStore, match="read-only"):
                write()
        assert issubclass(ReadOnlyStore, PermissionError)
    finally:
        store.close()
    assert snapshot(pi_dir) == before
    db = Path(store.db_path)
    assert db == default_db_path(pi_dir, PiSource.index_prefix)
    assert db.is_relative_to(isolated_home / "cache")
    assert store.writer is None and not hasattr(store, "spill_dir")  # nothing to spill into
    assert not (isolated_home / ".praisonai").exists()


# ---------------------------------------------------------------------- stores and groups


def test_open_stores_understands_pi_specs(
    pi_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    praison = tmp_path / "sessions"
    praison.mkdir()
    plain = open_stores([f"pi:{pi_dir}", str(praison)])
    assert isinstance(plain.stores[0], PiStore) and plain.stores[0].label == f"pi:{pi_dir}"
    assert isinstance(plain.stores[1], DefaultSessionStore)
    with open_stores([f"pi:{pi_dir}", str(praison)], indexed=True) as group:
        first = group.stores[0]
        assert isinstance(first, SqliteSessionStore) and first.source_kind == "pi"
        assert type(group.stores[1]) is SqliteSessionStore
        assert group.indexed and group.default_ranking() == "relevance"
    with pytest.raises(StoreNotFound, match=r"Pi session dir not found: .*missing"):
        open_stores([f"pi:{tmp_path / 'missing'}"])
    # Defaults: Pi's dir joins only when it exists.
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(tmp_path / "nowhere"))
    assert [type(s) for s in open_stores().stores] == [DefaultSessionStore]
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(pi_dir))
    kinds = [getattr(s, "source_kind", None) for s in open_stores().stores]
    assert kinds == ["pi"]  # the global PraisonAI store does not exist: not listed
    (isolated_home / ".praisonai" / "sessions").mkdir(parents=True)
    kinds = [getattr(s, "source_kind", None) for s in open_stores().stores]
    assert kinds == ["praisonai", "pi"]
    bare = open_stores(["pi:"]).stores[0]
    assert isinstance(bare, PiStore) and bare.root == pi_dir


def _praison_session(sid: str, texts: list[str], *, cwd: str | None = None) -> SessionData:
    base = 1_750_000_000.0
    session = SessionData(
        session_id=sid,
        messages=[
            SessionMessage(
                role="user" if i % 2 == 0 else "assistant", content=t, timestamp=base + i * 3600
            )
            for i, t in enumerate(texts)
        ],
        created_at="2025-06-15T00:00:00+00:00",
        updated_at="2025-06-20T00:00:00+00:00",
    )
    if cwd is not None:
        session.metadata["cwd"] = cwd
    return session


def test_one_query_ranks_both_sources_on_one_scale(tmp_path: Path) -> None:
    """The same conversation in a small Pi store and in a big PraisonAI store scores the same."""
    turns = ["how do we tune the pelican scheduler", "the pelican scheduler wants two workers"]
    root = tmp_path / "pi"
    write_lines(
        root / "--w--" / "s.jsonl",
        [
            header("pi-twin", cwd="/srv/app"),
            user(turns[0], "2025-06-15T00:00:00.000Z"),
            assistant(turns[1], "2025-06-15T01:00:00.000Z"),
        ],
    )
    praison_dir = tmp_path / "sessions"
    writer = DefaultSessionStore(praison_dir)
    writer.write_session(_praison_session("pr-twin", turns))
    writer.write_session(_praison_session("pr-weak", ["a pelican once", "nothing else"]))
    for i in range(40):  # a bigger corpus than the Pi store's
        writer.write_session(
            _praison_session(f"filler-{i}", [f"filler talk {i} about the weather", "ok"])
        )

    with open_stores([str(praison_dir), f"pi:{root}"], indexed=True) as group:
        hits = group.search("pelican scheduler", limit=10)
        assert {h.source for h in hits} == {"praisonai", "pi"}
        assert [h.session_id for h in hits][:2] in (["pr-twin", "pi-twin"], ["pi-twin", "pr-twin"])
        assert hits[0].score == pytest.approx(hits[1].score, rel=1e-3)
        assert hits[2].session_id == "pr-weak" and hits[2].score < hits[1].score
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        pi_store = group.stores[1]
        assert isinstance(pi_store, SqliteSessionStore) and pi_store.source_kind == "pi"
        pi_alone = pi_store.search("pelican scheduler")[0].score
        assert pi_alone != pytest.approx(hits[0].score, rel=1e-3)  # own stats differ

        # source: and project: filters, over both stores.
        assert [h.session_id for h in group.search("source:pi pelican", limit=10)] == ["pi-twin"]
        assert {h.source for h in group.search("source:praisonai pelican", limit=10)} == {
            "praisonai"
        }
        by_project = group.search("project:/srv pelican", limit=10)
        assert [(h.session_id, h.project) for h in by_project] == [("pi-twin", "/srv/app")]
        assert group.search("project:/srv/other pelican", limit=10) == []
        with pytest.raises(ValueError, match="project: needs a value"):
            group.search("project: pelican")

    # The same filters under the classic heuristic (plain stores, as the CLI opens them).
    plain = open_stores([str(praison_dir), f"pi:{root}"])
    assert plain.default_ranking() == "classic"
    classic = plain.search("pelican scheduler", limit=10)
    assert {h.source for h in classic} == {"praisonai", "pi"}
    assert [h.session_id for h in plain.search("source:pi pelican", limit=10)] == ["pi-twin"]
    assert "pi-twin" not in {h.session_id for h in plain.search("source:praisonai pelican")}
    assert [h.session_id for h in plain.search("project:/srv/app pelican")] == ["pi-twin"]


def test_project_filter_and_recent_by_project(tmp_path: Path) -> None:
    root = tmp_path / "pi"
    for n, cwd in enumerate(("/home/u/alpha", "/home/u/alpha/sub", "/home/u/beta")):
        write_lines(
            root / f"--{n}--" / f"s{n}.jsonl",
            [header(f"p{n}", cwd=cwd), user(f"shared dingo words {n}")],
        )
    praison_dir = tmp_path / "sessions"
    DefaultSessionStore(praison_dir).write_session(
        _praison_session("pr", ["dingo in praisonai"], cwd="/home/u/alpha")
    )
    with open_stores([f"pi:{root}", str(praison_dir)], indexed=True) as group:
        ids = {h.session_id for h in group.search("dingo project:/home/u/alpha", limit=10)}
        assert ids == {"p0", "p1", "pr"}
        assert {h.session_id for h in group.search("dingo project:/home/u/beta")} == {"p2"}
        assert {s.session_id for s in group.recent(limit=10, project="/home/u/alpha")} == {
            "p0",
            "p1",
            "pr",
        }
        pi = group.stores[0]
        assert isinstance(pi, SqliteSessionStore) and pi.source_kind == "pi"
        assert {s.session_id for s in pi.recent(project="/home/u/alpha/sub")} == {"p1"}
        assert [s.session_id for s in pi.browse(project="/home/u/beta")] == ["p2"]
    assert parse_query("project:~/x").project == str(Path.home() / "x")


def test_fuzzy_hits_do_not_outrank_exact_ones_elsewhere(tmp_path: Path) -> None:
    root = tmp_path / "pi"
    write_lines(root / "--w--" / "s.jsonl", [header("pi1", cwd="/w"), user("the quokka plan")])
    praison_dir = tmp_path / "sessions"
    DefaultSessionStore(praison_dir).write_session(_praison_session("pr", ["a quokkas tale"]))
    with open_stores([str(praison_dir), f"pi:{root}"], indexed=True) as group:
        result = group.search_ex("quokkas", limit=10)
        assert [h.session_id for h in result.hits] == ["pr"] and not result.fuzzy
        typo = group.search_ex("quokkka", limit=10)
        assert typo.fuzzy and {h.session_id for h in typo.hits} >= {"pi1"}


def test_resumed_state_survives_a_mismatched_state_blob(tmp_path: Path) -> None:
    root = tmp_path / "pi"
    path = write_lines(root / "--w--" / "s.jsonl", [header("st", cwd="/w"), user("first ferret")])
    with pi_index_store(root) as store:
        db = sqlite3.connect(store.db_path)
        db.execute("UPDATE pi_state SET state = x'00ff'")
        db.commit()
        db.close()
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(assistant("second marmot")) + "\n")
        store.reconcile()
        assert store.last_reads == {"resumed": 0, "full": 1}  # unusable state: a full read
        assert [h.session_id for h in store.search("marmot ferret")] == ["st"]
    session = read_pi_session(path)
    assert session.state.dump() and len(session.state.entries) == 2


def test_pi_jsonl_round_trips_a_praisonai_session(tmp_path: Path) -> None:
    """The bench/test helper builds Pi files that read back as the same conversation."""
    base = 1_750_000_000.0
    data: dict[str, Any] = {
        "session_id": "rt-1",
        "created_at": "2025-06-15T00:00:00+00:00",
        "metadata": {"title": "Round trip"},
        "archived_messages": [
            {"role": "user", "content": "old gannet question", "timestamp": base},
            {"role": "assistant", "content": "old gannet answer", "timestamp": base + 60},
        ],
        "messages": [
            {"role": "system", "content": "[Session Summary]\nx", "timestamp": base + 61},
            {"role": "user", "content": "new puffin question", "timestamp": base + 3600},
            {"role": "assistant", "content": "new puffin answer", "timestamp": base + 3660},
        ],
    }
    root = tmp_path / "pi"
    path = root / "--work--" / "rt.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(pi_jsonl(data, cwd="/srv/rt"))
    session = read_pi_session(path)
    assert session.skipped_lines == 0 and session.title == "Round trip"
    turns = [(m["role"], m["content"], bool(m.get("archived"))) for m in session.projection()]
    assert turns == [
        ("user", "old gannet question", True),
        ("assistant", "old gannet answer", True),
        ("system", "[Session Summary]\n2 earlier turns", False),
        ("user", "new puffin question", False),
        ("assistant", "new puffin answer", False),
    ]
    with pi_index_store(root) as store:
        hit = store.search("gannet")[0]
        assert hit.session_id == "rt-1" and hit.archived and hit.project == "/srv/rt"


def test_an_oversized_pi_file_is_skipped_not_read(pi_dir: Path) -> None:
    from session_browser.core.files import MAX_SESSION_BYTES

    huge = pi_dir / PROJECT / "2026-01-01T00-00-00-000Z_huge.jsonl"
    with open(huge, "wb") as fh:  # sparse: one "line" over the limit, no disk used
        fh.truncate(MAX_SESSION_BYTES + 1)
    with pi_index_store(pi_dir) as store:
        report = store.reconcile()
        assert [name.rsplit("/", 1)[-1] for name, _ in report.skipped] == [huge.name]
        assert "limit" in report.skipped[0][1]
        assert store.count() == 2
