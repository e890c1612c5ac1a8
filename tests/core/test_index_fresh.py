"""Keeping the index fresh cheaply: the directory watch (a reconcile after the first one looks
only at what changed), the scan fingerprint (reopening an unchanged store compares nothing),
the batched writes of a first build, the kept counts of frequent words, and ranking of long
messages. Every fast path is checked against the result of a plain full pass."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from session_browser.core import paths
from session_browser.core.index import DirWatch, SqliteSessionStore

T0 = 1_760_000_000.0
HOUR = 3600.0


def put(
    d: Path,
    sid: str,
    texts: list[str],
    *,
    updated: str = "2026-01-01T00:00:00+00:00",
    gap: float = HOUR,
) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    roles = ["user", "assistant"]
    data: dict[str, Any] = {
        "session_id": sid,
        "messages": [
            {"role": roles[i % 2], "content": t, "timestamp": T0 + i * gap, "metadata": {}}
            for i, t in enumerate(texts)
        ],
        "created_at": "2025-12-01T00:00:00+00:00",
        "updated_at": updated,
        "agent_name": None,
        "user_id": None,
        "metadata": {},
        "archived_messages": [],
    }
    path = d / f"{paths.safe_id(sid)}.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def rows(db_path: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[str]]:
    """What an index holds, independent of row ids: files with identities, messages, skips."""
    with sqlite3.connect(db_path) as db:
        sessions = db.execute(
            "SELECT file, size, mtime_ns, inode, session_id, nmsg FROM sessions ORDER BY file"
        ).fetchall()
        messages = db.execute(
            "SELECT s.file, m.idx, m.text FROM messages m JOIN sessions s ON s.sid = m.sid "
            "ORDER BY s.file, m.idx"
        ).fetchall()
        skipped = [r[0] for r in db.execute("SELECT file FROM skipped ORDER BY file")]
    return sessions, messages, skipped


def fresh_build(d: Path, db_path: Path) -> tuple[Any, ...]:
    with SqliteSessionStore(d, db_path=db_path, reconcile="sync") as store:
        store.watch_min_files = -1
    return rows(db_path)


@pytest.fixture
def d(tmp_path: Path) -> Path:
    d = tmp_path / "sessions"
    for i in range(12):
        put(d, f"s{i}", [f"note number {i} about apples", f"reply {i} about pears"])
    return d


def watching(store: SqliteSessionStore, d: Path) -> None:
    """The store's second reconcile, the one that builds its watch (a process's first pass
    builds none); skips where inotify is not to be had."""
    probe = DirWatch.create(d)
    if probe is None:
        pytest.skip("no inotify here")
    probe.close()
    assert store._watch is None
    store.reconcile()
    assert store._watch is not None


def test_dir_watch_names_changed_entries(tmp_path: Path) -> None:
    watch = DirWatch.create(tmp_path)
    if watch is None:
        pytest.skip("no inotify here")
    try:
        assert watch.drain() == set()
        (tmp_path / "a.json").write_text("{}")
        (tmp_path / "b.json").write_text("{}")
        os.replace(tmp_path / "b.json", tmp_path / "c.json")
        assert watch.drain() == {"a.json", "b.json", "c.json"}
        assert watch.drain() == set()
        os.utime(tmp_path / "a.json", ns=(1, 1))
        assert watch.drain() == {"a.json"}
    finally:
        watch.close()
    assert watch.drain() is None  # closed: the caller falls back to a full pass


def test_dir_watch_lost_when_the_dir_goes(tmp_path: Path) -> None:
    sub = tmp_path / "gone"
    sub.mkdir()
    watch = DirWatch.create(sub)
    if watch is None:
        pytest.skip("no inotify here")
    sub.rmdir()
    assert watch.drain() is None
    assert not watch.alive


@pytest.mark.parametrize("watch", [True, False], ids=["watched", "full-pass"])
def test_every_kind_of_outside_change_is_seen(
    d: Path, tmp_path: Path, watch: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSION_BROWSER_VAULT", "off")  # the index as the files are, alone
    db_path = tmp_path / "w.sqlite3"
    with SqliteSessionStore(d, db_path=db_path, reconcile="none") as store:
        store.watch_min_files = 0 if watch else -1
        first = store.reconcile()
        assert (first.added, first.scope) == (12, "full")
        if watch:
            watching(store, d)
        # added, replaced, rewritten in place, touched, renamed, deleted, corrupted
        put(d, "new", ["a walrus arrives"])
        staged = put(tmp_path / "staging", "s1", ["the walrus replaced this one"])
        os.replace(staged, d / "s1.json")
        with open(d / "s2.json", "r+", encoding="utf-8") as fh:
            text = fh.read().replace("apples", "walrus")
            fh.seek(0)
            fh.write(text)
            fh.truncate()
        os.utime(d / "s3.json", ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
        os.replace(d / "s4.json", d / "s4-moved.json")
        os.unlink(d / "s5.json")
        (d / "s6.json").write_bytes(b'{"session_id": "s6", "messages": [')
        report = store.reconcile()
        assert report.scope == ("changes" if watch else "full")
        assert report.added == 2  # new.json, s4-moved.json
        assert report.updated == 3  # s1 (replaced), s2 (in place), s3 (touched)
        assert report.removed == 2  # s4.json (moved away), s5.json
        assert [f for f, _ in report.skipped] == ["s6.json"]  # out of the index, kept as is
        assert report.unchanged == 6  # s0, s7 .. s11
        assert {h.session_id for h in store.search("walrus", limit=20)} == {"new", "s1", "s2"}
        again = store.reconcile()
        assert (again.added, again.updated, again.removed) == (0, 0, 0)
        assert [f for f, _ in again.skipped] == ["s6.json"]
        assert again.unchanged == 11
    assert rows(db_path) == fresh_build(d, tmp_path / "fresh.sqlite3")


def test_watched_reconciles_match_a_full_build(
    d: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSION_BROWSER_VAULT", "off")  # a full build knows no deleted file
    db_path = tmp_path / "w.sqlite3"
    with SqliteSessionStore(d, db_path=db_path, reconcile="none") as store:
        store.watch_min_files = 0
        store.reconcile()
        watching(store, d)
        for step in range(6):
            put(d, f"s{step}", [f"changed {step} zebra"] * (step + 1))
            put(d, f"extra{step}", ["zebra crossing"])
            if step % 2:
                os.unlink(d / f"extra{step - 1}.json")
            report = store.reconcile()
            assert report.scope == "changes"
            assert store.reconcile().scope == "changes"
    assert rows(db_path) == fresh_build(d, tmp_path / "fresh.sqlite3")


def watches_tried(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The dirs a :class:`DirWatch` is tried on from now on (each ``DirWatch.create``)."""
    tries: list[Path] = []
    make = DirWatch.create.__func__  # type: ignore[attr-defined]

    def counted(cls: type[DirWatch], path: Path, **kw: Any) -> DirWatch | None:
        tries.append(path)
        return make(cls, path, **kw)  # type: ignore[no-any-return]

    monkeypatch.setattr(DirWatch, "create", classmethod(counted))
    return tries


def test_a_process_builds_its_watch_on_its_second_pass(
    d: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A watch serves only the reconciles after the one that builds it: a command that
    # reconciles once (``search``, ``index update``) never walks the tree to build one.
    tries = watches_tried(monkeypatch)
    with SqliteSessionStore(d, db_path=tmp_path / "p.sqlite3", reconcile="none") as store:
        store.watch_min_files = 0
        assert store.reconcile().scope == "full"
        assert tries == []
        assert store.reconcile().scope == "unchanged"
        assert tries == [d]
        if store._watch is None:
            pytest.skip("no inotify here")
        put(d, "s3", ["a heron"])
        assert store.reconcile().scope == "changes"
        assert tries == [d]
        assert [h.session_id for h in store.search("heron")] == ["s3"]


def test_a_small_dir_keeps_no_watch(d: Path, tmp_path: Path) -> None:
    with SqliteSessionStore(d, db_path=tmp_path / "s.sqlite3") as store:
        assert store._watch is None  # 12 files: a full pass costs nothing
        put(d, "later", ["an ibis"])
        assert store.reconcile().scope == "full"
        assert [h.session_id for h in store.search("ibis")] == ["later"]


def test_reopen_of_an_unchanged_dir_compares_nothing(d: Path, tmp_path: Path) -> None:
    db_path = tmp_path / "r.sqlite3"
    bad = d / "bad.json"
    bad.write_bytes(b"[1, 2]")
    with SqliteSessionStore(d, db_path=db_path) as store:
        assert store.last_report is not None and store.last_report.scope == "full"
    with SqliteSessionStore(d, db_path=db_path) as store:
        report = store.last_report
        assert report is not None and report.scope == "unchanged"
        assert report.unchanged == 12 and [f for f, _ in report.skipped] == ["bad.json"]
        assert len(store.search("apples", limit=20)) == 12
    # Any change to the dir, even one that keeps the size, means a full comparison.
    path = d / "s3.json"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    with SqliteSessionStore(d, db_path=db_path) as store:
        report = store.last_report
        assert report is not None and (report.scope, report.updated) == ("full", 1)
    with SqliteSessionStore(d, db_path=db_path) as store:
        assert store.last_report is not None and store.last_report.scope == "unchanged"


def test_a_write_elsewhere_forgets_the_fingerprint(d: Path, tmp_path: Path) -> None:
    db_path = tmp_path / "r.sqlite3"
    SqliteSessionStore(d, db_path=db_path).close()
    with SqliteSessionStore(d, db_path=db_path, reconcile="none") as writer:
        writer.add_user_message("s7", "a heron flew by")
    with SqliteSessionStore(d, db_path=db_path) as store:
        report = store.last_report
        assert report is not None and report.scope == "full"
        assert (report.added, report.updated) == (0, 0)  # the write kept the index in step
        assert [h.session_id for h in store.search("heron")] == ["s7"]


def test_no_fingerprint_when_another_connection_wrote_during_the_pass(
    d: Path, tmp_path: Path
) -> None:
    db_path = tmp_path / "r.sqlite3"
    SqliteSessionStore(d, db_path=db_path).close()
    put(d, "s0", ["changed so the next open has work to do"])
    other = SqliteSessionStore(d, db_path=db_path, reconcile="none")

    def meanwhile(done: int, total: int) -> None:
        if done == 0:
            other.add_user_message("s9", "an egret, written while the pass runs")

    try:
        with SqliteSessionStore(d, db_path=db_path, reconcile="none") as store:
            assert store.reconcile(progress=meanwhile).updated == 1
        with sqlite3.connect(db_path) as db:
            assert db.execute("SELECT value FROM meta WHERE key='scan_fp'").fetchone() is None
        with SqliteSessionStore(d, db_path=db_path) as store:
            assert store.last_report is not None and store.last_report.scope == "full"
            assert [h.session_id for h in store.search("egret")] == ["s9"]
    finally:
        other.close()


def test_first_build_in_batches_keeps_frequent_word_counts(tmp_path: Path) -> None:
    d = tmp_path / "many"
    for i in range(620):  # more than one batch: the bulk path
        put(d, f"m{i:04d}", [f"hello there number{i}", "hello again"] if i % 2 else [f"x{i}"])
    put(d, "target", ["hello there, the rare okapi", "hello"])
    db_path = tmp_path / "many.sqlite3"
    with SqliteSessionStore(d, db_path=db_path) as store:
        report = store.last_report
        assert report is not None and report.added == 621
        with sqlite3.connect(db_path) as db:
            kept = dict(db.execute("SELECT term, doc FROM common_terms").fetchall())
            truth = db.execute("SELECT doc FROM fts_vocab WHERE term='hello'").fetchone()[0]
            segments = db.execute("SELECT count(*) FROM fts_data").fetchone()[0]
        assert kept["hello"] == truth == 310 * 2 + 2
        assert "okapi" not in kept
        assert segments < 50  # merged into one segment at the end, not hundreds
        hits = store.search("hello okapi")
        assert hits[0].session_id == "target"
        assert hits[0].explain["all_terms"] is True
        assert len(store.search("hello", limit=50)) == 50
    assert rows(db_path) == fresh_build(d, tmp_path / "again.sqlite3")


def test_a_long_message_with_every_word_beats_short_ones_with_one(tmp_path: Path) -> None:
    d = tmp_path / "long"
    filler = " ".join(f"word{i}" for i in range(600))
    put(
        d,
        "target",
        [f"Hello. {filler} my vet said the puppers are fine. {filler}"],
        updated="2025-01-01T00:00:00+00:00",
    )
    for i in range(12):
        put(d, f"vet{i}", [f"the vet visit {i}"], updated="2026-01-01T00:00:00+00:00")
        put(d, f"pup{i}", [f"cute puppers {i}"], updated="2026-01-01T00:00:00+00:00")
    with SqliteSessionStore(d, db_path=tmp_path / "l.sqlite3") as store:
        for query in ("vet puppers", "Vet Puppers", "PUPPERS VET"):
            assert store.search(query, limit=10)[0].session_id == "target"


def test_a_database_rebuilt_elsewhere_gets_a_full_pass(d: Path, tmp_path: Path) -> None:
    db_path = tmp_path / "r.sqlite3"
    with SqliteSessionStore(d, db_path=db_path, reconcile="none") as store:
        store.watch_min_files = 0
        store.reconcile()
        watching(store, d)
        with SqliteSessionStore(d, db_path=db_path, reconcile="none") as other:
            other.rebuild(cancel=_set_event())  # a new, empty database file
        put(d, "s0", ["a kingfisher"])
        report = store.reconcile()
        assert report.scope == "full"
        assert report.added == 12
        assert [h.session_id for h in store.search("kingfisher")] == ["s0"]


def _set_event() -> threading.Event:
    event = threading.Event()
    event.set()
    return event


def test_hits_come_from_the_current_file_and_are_the_callers_own(tmp_path: Path) -> None:
    d = tmp_path / "hits"
    path = put(d, "parts", ["a plain ocelot message"])
    data = json.loads(path.read_text(encoding="utf-8"))
    data["messages"].append(
        {"role": "assistant", "content": [{"type": "text", "text": "ocelot facts"}]}
    )
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    with SqliteSessionStore(d, db_path=tmp_path / "h.sqlite3", vault=True) as store:
        first = store.search("ocelot")[0]
        listed = next(m for m in first.messages if isinstance(m["content"], list))
        listed["content"].append({"type": "text", "text": "changed by the caller"})
        again = store.search("ocelot")[0]
        assert [m["content"] for m in again.messages][1] == [
            {"type": "text", "text": "ocelot facts"}
        ]
        put(d, "parts", ["the ocelot moved on", "nothing else"])
        store.reconcile()
        # The dropped turns are found too, from the vault's copy, in one hit with the
        # current file (folded: one session, two versions); the current file's own hit:
        (both,) = store.search("ocelot")
        assert both.kept is not None and both.folded == ["parts"]
        (fresh,) = store.search("ocelot moved")
        assert fresh.kept is None
        assert [m["content"] for m in fresh.messages] == ["the ocelot moved on", "nothing else"]


def test_a_write_during_a_reconcile_is_not_replaced_by_its_older_parse(tmp_path: Path) -> None:
    d = tmp_path / "s"
    path = put(d, "a", ["old alpha"])
    wrote: list[bool] = []
    db = tmp_path / "w.sqlite3"
    with SqliteSessionStore(d, db_path=db):
        pass
    put(d, "a", ["middle beta"])
    os.utime(path, ns=(1, 1))  # changed for the survey (size and mtime)
    with SqliteSessionStore(d, db_path=db, reconcile="none") as store:
        parse = store.reconciler._parse_file

        def write_while_parsing(name: str, ident: tuple[int, int, int], *, folded: bool) -> Any:
            """A write through the store lands after this pass parsed the file."""
            item = parse(name, ident, folded=folded)
            if not wrote:
                wrote.append(True)
                store.add_user_message("a", "newest gamma")
            return item

        store.reconciler._parse_file = write_while_parsing  # type: ignore[method-assign]
        store.reconcile()
        assert wrote
        assert [h.session_id for h in store.search("gamma")] == ["a"]
        assert [h.session_id for h in store.search("beta")] == ["a"]
        assert store.search("alpha") == []
        store.reconcile()
        assert [h.session_id for h in store.search("gamma")] == ["a"]
    _, messages, _ = rows(db)
    assert [m[2] for m in messages] == ["middle beta", "newest gamma"]
