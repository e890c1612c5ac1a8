"""Coding agents keep their transcripts in trees of directories (Claude Code: a folder per
project, subagent runs in ``<session>/subagents/``; Codex: a folder per day; Pi: a folder per
working directory). One inotify watch follows the whole tree, so a reconcile after the first
stats only what changed, and what it finds is what a full build finds."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from session_browser.core.index import DirWatch, SqliteSessionStore
from session_browser.core.open import index_store
from session_browser.core.sources import SOURCES
from tests.core.test_claude import Transcript, text
from tests.core.test_codex import Rollout, rollout_path
from tests.core.test_index_fresh import rows, watches_tried


def tree_watch(root: Path, skip: tuple[str, ...] = ()) -> DirWatch:
    watch = DirWatch.create(root, tree=True, skip=skip)
    if watch is None:
        pytest.skip("no inotify here")
    return watch


def test_a_tree_watch_names_files_in_every_folder_and_follows_new_ones(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "tool-results").mkdir()
    (root / "top.jsonl").write_text("x\n")
    watch = tree_watch(root, skip=("tool-results",))
    try:
        assert watch.watched == 3  # the root, a, a/b (not the skipped folder)
        assert watch.drain() == set()
        (root / "a" / "b" / "deep.jsonl").write_text("y\n")
        with open(root / "top.jsonl", "a") as fh:
            fh.write("more\n")
        (root / "a" / "tool-results" / "out.txt").write_text("ignored\n")
        assert watch.drain() == {"a/b/deep.jsonl", "top.jsonl"}
        # A folder made later (with a folder and a file in it before the watch saw it) is
        # watched from then on, and what it already held is named.
        (root / "c" / "d").mkdir(parents=True)
        (root / "c" / "d" / "early.jsonl").write_text("z\n")
        assert watch.drain() == {"c/d/early.jsonl"}
        assert watch.watched == 5
        (root / "c" / "d" / "later.jsonl").write_text("w\n")
        (root / "c" / "d" / "early.jsonl").unlink()
        assert watch.drain() == {"c/d/later.jsonl", "c/d/early.jsonl"}
        # A symlinked folder is never followed.
        outside = tmp_path / "outside"
        outside.mkdir()
        (root / "link").symlink_to(outside, target_is_directory=True)
        assert watch.drain() == {"link"}
        (outside / "there.jsonl").write_text("v\n")
        assert watch.drain() == set()
        # A folder that goes takes files with it that the watch cannot name: a full pass.
        shutil.rmtree(root / "a" / "b")
        assert watch.drain() is None
        assert not watch.alive
    finally:
        watch.close()


def test_a_tree_too_big_to_watch_is_not_watched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "tree"
    for i in range(5):
        (root / f"d{i}").mkdir(parents=True)
    monkeypatch.setattr(DirWatch, "MAX_DIRS", 4)
    assert DirWatch.create(root, tree=True) is None
    watch = tree_watch(root / "d0")
    try:
        for i in range(4):
            (root / "d0" / f"n{i}").mkdir()
        assert watch.drain() is None  # the fifth folder would pass the bound
    finally:
        watch.close()


def append(path: Path, lines: list[dict[str, Any]]) -> None:
    with open(path, "ab") as fh:
        fh.write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))


def session(sid: str, prefix: str, words: str) -> Transcript:
    t = Transcript(sid, prefix=prefix)
    t.prompt(f"tell me about {words}")
    t.answer(f"m-{prefix}", text(f"Here is what I know about {words}."))
    return t


def watched(kind: str, root: Path, db_path: Path) -> SqliteSessionStore:
    tree_watch(root).close()  # (skips where inotify is not to be had)
    store = index_store(SOURCES[kind], root, "none", db_path=db_path)
    store.watch_min_files = 0
    first = store.reconcile()
    assert first.scope == "full"
    assert store._watch is None  # (a process's first pass builds no watch)
    assert store.reconcile().scope == "unchanged"  # the second builds it
    assert store._watch is not None and store._watch.watched >= 2
    return store


def titles(db_path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db_path) as db:
        return db.execute("SELECT session_id, title FROM sessions ORDER BY session_id").fetchall()


def fresh(kind: str, root: Path, db_path: Path) -> tuple[Any, ...]:
    with index_store(SOURCES[kind], root, "sync", db_path=db_path):
        pass
    return rows(db_path), titles(db_path)


def test_claude_code_changes_anywhere_in_the_tree_are_seen_by_the_watch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSION_BROWSER_VAULT", "off")  # the index as the files are, alone
    root = tmp_path / "projects"
    sids = [f"{c * 8}-0000-0000-0000-00000000000{i}" for i, c in enumerate("abc")]
    a = session(sids[0], "a", "the aviary")
    a.raw({"type": "summary", "summary": "Aviary, first", "leafUuid": "a0001"})
    path_a = a.write(root / "proj" / f"{sids[0]}.jsonl")
    session(sids[1], "b", "the bakery").write(root / "proj" / f"{sids[1]}.jsonl")
    db_path = tmp_path / "w.sqlite3"
    store = watched("claude", root, db_path)
    try:
        # A transcript grows (with a summary line that renames its turn).
        n = len(a.lines)
        a.prompt("and the heron in the aviary")
        a.raw({"type": "summary", "summary": "Aviary, second", "leafUuid": "a0001"})
        append(path_a, a.lines[n:])
        report = store.reconcile()
        assert (report.scope, report.updated, report.added) == ("changes", 1, 0)
        assert [h.session_id for h in store.search("heron")] == [sids[0]]
        n = len(a.lines)
        a.prompt("and the egret")
        a.raw({"type": "summary", "summary": "Aviary, renamed", "leafUuid": "a0001"})
        append(path_a, a.lines[n:])
        assert store.reconcile().updated == 1
        assert dict(titles(db_path))[sids[0]] == "Aviary, renamed"  # the last summary line
        # A session's first subagent run: a new folder, watched as it appears.
        sub = Transcript(sids[1], prefix="s", agentId="x1", isSidechain=True)
        sub.prompt("check the ovens")
        sub.answer("ms", text("The ovens are hot."))
        sub.write(root / "proj" / sids[1] / "subagents" / "agent-x1.jsonl")
        report = store.reconcile()
        assert (report.scope, report.updated, report.added) == ("changes", 1, 0)
        # ... which then grows.
        append(root / "proj" / sids[1] / "subagents" / "agent-x1.jsonl", sub.lines[-1:])
        assert store.reconcile().updated == 1
        # A new project folder with its first session; a file that is no transcript.
        session(sids[2], "c", "the canal").write(root / "other" / f"{sids[2]}.jsonl")
        (root / "proj" / "notes.txt").write_text("not a transcript\n")
        report = store.reconcile()
        assert (report.scope, report.added, report.updated) == ("changes", 1, 0)
        assert [h.session_id for h in store.search("canal")] == [sids[2]]
        # An older build's subagent file beside its parent: which parent, a full pass reads.
        old = Transcript(sids[0], prefix="o", agentId="y1", isSidechain=True)
        old.prompt("an older subagent")
        old.write(root / "proj" / "agent-y1.jsonl")
        report = store.reconcile()
        assert (report.scope, report.updated) == ("full", 1)
        # A transcript deleted.
        (root / "other" / f"{sids[2]}.jsonl").unlink()
        report = store.reconcile()
        assert (report.scope, report.removed) == ("changes", 1)
    finally:
        store.close()
    assert (rows(db_path), titles(db_path)) == fresh("claude", root, tmp_path / "fresh.sqlite3")
    assert dict(titles(db_path))[sids[0]] == "Aviary, renamed"


def test_codex_rollouts_of_a_new_day_are_seen_by_the_watch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSION_BROWSER_VAULT", "off")
    root = tmp_path / "codex" / "sessions"
    first = Rollout("019e1625-789d-76c0-80ab-3724b5ddb799")
    first.prompt("where is the lighthouse")
    first.answer("On the point.")
    first.write(rollout_path(root, "019e1625-789d-76c0-80ab-3724b5ddb799"))
    db_path = tmp_path / "c.sqlite3"
    store = watched("codex", root, db_path)
    try:
        later = Rollout("019e1625-789d-76c0-80ab-3724b5ddb7aa")
        later.prompt("and the harbour")
        later.answer("Below it.")
        path = root / "2026" / "05" / "12" / "rollout-2026-05-12T09-00-00-later.jsonl"
        path = path.with_name(
            "rollout-2026-05-12T09-00-00-019e1625-789d-76c0-80ab-3724b5ddb7aa.jsonl"
        )
        later.write(path)
        report = store.reconcile()
        assert (report.scope, report.added) == ("changes", 1)
        assert len(store.search("harbour")) == 1
    finally:
        store.close()
    assert rows(db_path) == fresh("codex", root, tmp_path / "fresh.sqlite3")[0]


def test_pi_sessions_of_a_new_working_dir_are_seen_by_the_watch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.core.test_pi import assistant, header, user, write_lines

    monkeypatch.setenv("SESSION_BROWSER_VAULT", "off")
    root = tmp_path / "pi" / "sessions"
    write_lines(
        root / "--work-one--" / "a.jsonl", [header("s1"), user("the quarry"), assistant("ok")]
    )
    db_path = tmp_path / "p.sqlite3"
    store = watched("pi", root, db_path)
    try:
        path = write_lines(
            root / "--work-two--" / "b.jsonl", [header("s2"), user("the orchard"), assistant("ok")]
        )
        report = store.reconcile()
        assert (report.scope, report.added) == ("changes", 1)
        with open(path, "ab") as fh:
            fh.write(json.dumps(user("and the pears", ts="2025-01-02T03:07:00.000Z")).encode())
            fh.write(b"\n")
        report = store.reconcile()
        assert (report.scope, report.updated) == ("changes", 1)
        assert [h.session_id for h in store.search("pears")] == ["s2"]
    finally:
        store.close()
    assert rows(db_path) == fresh("pi", root, tmp_path / "fresh.sqlite3")[0]


def test_a_watch_that_lost_nothing_lives_through_the_periodic_full_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSION_BROWSER_VAULT", "off")
    root = tmp_path / "projects"
    session("d" * 8 + "-0000-0000-0000-000000000001", "d", "the dunes").write(
        root / "proj" / "d.jsonl"
    )
    store = watched("claude", root, tmp_path / "d.sqlite3")
    try:
        watch = store._watch
        store.reconciler._full_at = None  # as when the interval has passed
        assert store.reconcile().scope in ("full", "unchanged")
        assert store._watch is watch and watch is not None and watch.alive
        os.utime(root / "proj" / "d.jsonl")
        assert store.reconcile().scope == "changes"
    finally:
        store.close()


def test_an_unreadable_folder_is_left_out_and_a_full_watch_limit_gives_the_watch_up(
    tmp_path: Path,
) -> None:
    """A folder the kernel will not watch because it may not be read (no listing reads it
    either) is skipped; the kernel's watch limit reached gives the whole watch up (a full
    pass then, as without a watch). Simulated: the tests may run as root, who reads all."""
    import ctypes
    import errno

    root = tmp_path / "tree"
    root.mkdir()
    watch = tree_watch(root)
    real = watch._add_watch

    def refusing(fd: int, path: bytes, mask: int) -> int:
        for name, code in ((b"locked", errno.EACCES), (b"full", errno.ENOSPC)):
            if path.endswith(name):
                ctypes.set_errno(code)
                return -1
        return real(fd, path, mask)

    watch._add_watch = refusing
    try:
        for name in ("locked", "open"):
            (root / name).mkdir()
            (root / name / "a.jsonl").write_text("x\n")
        assert watch.drain() == {"open/a.jsonl"}
        assert watch.alive and watch.watched == 2  # the root and open/
        (root / "full").mkdir()
        assert watch.drain() is None
        assert not watch.alive
    finally:
        watch.close()


def test_a_tree_too_big_to_watch_is_not_walked_again_on_every_reconcile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Trying a watch walks the whole tree; when it cannot be had (more folders than the
    bound), each reconcile is a full pass, and the watch is tried again only after the
    periodic full-pass interval, not on every reconcile."""
    from session_browser.core.index import reconcile

    monkeypatch.setenv("SESSION_BROWSER_VAULT", "off")
    tree_watch(tmp_path).close()  # (skips where inotify is not to be had)
    root = tmp_path / "projects"
    for i in range(4):
        session(f"{i:08d}-0000-0000-0000-000000000000", f"p{i}-", f"topic {i}").write(
            root / f"proj{i}" / f"s{i}.jsonl"
        )
    monkeypatch.setattr(DirWatch, "MAX_DIRS", 3)  # the root and four project folders: five
    tries = watches_tried(monkeypatch)
    store = index_store(SOURCES["claude"], root, "none", db_path=tmp_path / "b.sqlite3")
    try:
        store.watch_min_files = 0
        for _ in range(3):
            assert store.reconcile().scope in ("full", "unchanged")
            assert store._watch is None
        assert len(tries) == 1
        store.reconciler._watch_again_at -= reconcile.FULL_PASS_INTERVAL  # the interval passed
        store.reconcile()
        assert len(tries) == 2
    finally:
        store.close()
