"""A first build of many files parsed by a worker process: the same rows and the same vault
as when this process parses them; a worker that dies mid-build leaves the rest to this
process; a build killed with SIGKILL takes its worker with it and leaves an index that the
next reconcile completes."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from session_browser.core.index import SqliteSessionStore, parsing
from session_browser.core.vault import Vault, default_vault_dir
from session_browser.core.vault.reading import load_version

FILES = 700  # two batches of a first build (more than one batch: a bulk build)


def corpus(d: Path, n: int = FILES) -> None:
    d.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        data = {
            "session_id": f"s{i:04d}",
            "messages": [
                {
                    "role": "user",
                    "content": f"question {i} about wombat{i % 7}",
                    "timestamp": 1.7e9 + i,
                },
                {"role": "assistant", "content": [{"type": "text", "text": f"answer {i}"}]},
            ],
            "archived_messages": [{"role": "user", "content": f"older {i}", "timestamp": 1.6e9}],
            "created_at": "2025-12-01T00:00:00+00:00",
            "updated_at": "2026-01-01T00:00:00+00:00",
            "metadata": {"title": f"t{i}"} if i % 3 else {},
        }
        if i == 5:
            (d / f"s{i:04d}.json").write_text("{not json")
            continue
        path = d / f"s{i:04d}.json"
        path.write_text(json.dumps(data, indent=2))
        os.utime(path, ns=(10**18 + i, 10**18 + i))


def dump(db: Path) -> dict[str, Any]:
    with sqlite3.connect(db) as c:
        return {
            t: c.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall()
            for t in ("sessions", "messages", "verbatim", "skipped")
        }


def vault_bytes(d: Path) -> dict[str, bytes]:
    with Vault(default_vault_dir()) as v:
        out = {}
        for version in v.latest():
            data = load_version(v, version)
            assert data is not None
            out[Path(version.path).name] = json.dumps(data, sort_keys=True).encode()
        return out


def build(
    d: Path, db: Path, *, worker: bool, workers: int = 1
) -> tuple[dict[str, Any], dict[str, bytes], Any]:
    with SqliteSessionStore(d, db_path=db, reconcile="none", vault=True) as store:
        store.reconciler.worker_min_files = 0 if worker else 10**9
        store.reconciler.parse_workers = workers
        report = store.reconcile()
    return dump(db), vault_bytes(d), report


def test_a_worker_process_builds_the_same_index_and_vault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = tmp_path / "s"
    corpus(d)
    used: list[int] = []
    start = parsing.Worker.__init__

    def counting(self: parsing.Worker, *args: Any, **kwargs: Any) -> None:
        start(self, *args, **kwargs)
        used.append(self._proc.pid)

    monkeypatch.setattr(parsing.Worker, "__init__", counting)
    monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(tmp_path / "here"))
    here = build(d, tmp_path / "here.sqlite3", worker=False)
    assert used == []
    monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(tmp_path / "there"))
    there = build(d, tmp_path / "there.sqlite3", worker=True)
    assert len(used) == 1
    assert here[0] == there[0]
    assert len(here[0]["sessions"]) == FILES - 1 and len(here[0]["skipped"]) == 1
    assert here[1] == there[1] and len(here[1]) == FILES - 1
    assert here[2].messages == there[2].messages == 3 * (FILES - 1)


def test_a_source_that_cannot_teach_its_copies_still_parses_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a source learns for its workers' copies is an economy: when it fails, the worker
    starts all the same, its copy learns by itself, and the index is the same."""
    from session_browser.core.sources.base import SessionSource
    from tests.core.test_agent_first_build import seen_workers

    d = tmp_path / "s"
    corpus(d)
    monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(tmp_path / "here"))
    here = build(d, tmp_path / "here.sqlite3", worker=False)

    def failing(self: SessionSource) -> None:
        raise RuntimeError("cannot learn")

    monkeypatch.setattr(SessionSource, "learn_for_copies", failing)
    seen = seen_workers(monkeypatch)
    monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(tmp_path / "there"))
    there = build(d, tmp_path / "there.sqlite3", worker=True)
    seen.check_each_did_the_work()
    assert here[0] == there[0] and here[1] == there[1]


def test_three_workers_build_the_same_index_and_vault_and_only_the_first_keeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = tmp_path / "s"
    corpus(d)
    started: list[tuple[bool, bool]] = []  # (keeps in the vault, hands the bytes back)
    start = parsing.Worker.__init__

    def counting(self: parsing.Worker, *args: Any, **kwargs: Any) -> None:
        start(self, *args, **kwargs)
        started.append((kwargs["vault_at"] is not None, kwargs.get("hand_back", False)))

    monkeypatch.setattr(parsing.Worker, "__init__", counting)
    monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(tmp_path / "here"))
    here = build(d, tmp_path / "here.sqlite3", worker=False)
    monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(tmp_path / "there"))
    there = build(d, tmp_path / "there.sqlite3", worker=True, workers=3)
    assert started == [(True, False), (False, True), (False, True)]
    assert here[0] == there[0]
    assert here[1] == there[1] and len(here[1]) == FILES - 1
    assert here[2].messages == there[2].messages == 3 * (FILES - 1)


@pytest.mark.parametrize(("cores", "workers"), [(1, 1), (2, 1), (3, 2), (4, 3), (16, 4)])
def test_one_worker_for_each_core_beyond_the_writer(
    cores: int, workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(cores)), raising=False)
    assert parsing.worker_count() == workers


def test_the_denylist_is_applied_to_what_the_workers_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from session_browser.core.forget.deny import deny_sessions, deny_text

    d = tmp_path / "s"
    corpus(d)
    for sub in ("here", "there"):
        monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(tmp_path / sub))
        deny_sessions(["s0003", "s0650"])
        deny_text("wombat4", redact=True)
    monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(tmp_path / "here"))
    here = build(d, tmp_path / "here.sqlite3", worker=False)
    monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(tmp_path / "there"))
    there = build(d, tmp_path / "there.sqlite3", worker=True, workers=2)
    assert here[0] == there[0] and here[1] == there[1]
    skipped = {row[0]: row[-1] for row in there[0]["skipped"]}
    assert skipped["s0003.json"] == skipped["s0650.json"] == parsing.FORGOTTEN
    texts = [row[-1] for row in there[0]["messages"]]
    assert not any("wombat4" in t for t in texts)
    assert sum("question 4 about" in t for t in texts) == 1  # s0004: the rest of it stays
    assert not any(b"wombat4" in raw for raw in there[1].values())


def test_the_index_process_never_waits_for_a_worker_to_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A worker that takes seconds to start (a busy machine): its settings and the files
    # handed to it to keep wait for it, this process does not (it parses and writes).
    d = tmp_path / "s"
    corpus(d)
    monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(tmp_path / "here"))
    here = build(d, tmp_path / "here.sqlite3", worker=False)
    monkeypatch.setattr(parsing, "_BOOT", "import time\ntime.sleep(4)\n" + parsing._BOOT)
    calls: list[tuple[str, float, bool]] = []  # (what, seconds it took, worker ready then)
    for method in ("__init__", "keep"):
        original = getattr(parsing.Worker, method)

        def timed(self: Any, *args: Any, _f: Any = original, _m: str = method, **kw: Any) -> Any:
            t0 = time.monotonic()
            out = _f(self, *args, **kw)
            calls.append((_m, time.monotonic() - t0, getattr(self, "ready", False)))
            return out

        monkeypatch.setattr(parsing.Worker, method, timed)
    monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(tmp_path / "there"))
    there = build(d, tmp_path / "there.sqlite3", worker=True)
    assert here[0] == there[0] and here[1] == there[1]
    early = [c for c in calls if not c[2]]  # before the worker had started
    assert [c[0] for c in early][:2] == ["__init__", "keep"]
    assert max(seconds for _m, seconds, _r in early) < 2.0, early


def test_a_worker_goes_on_parsing_while_its_results_are_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each batch's rows are more than a pipe holds. The index's process, busy writing,
    # reads none: the worker still parses every batch it was handed (and then keeps their
    # files in the vault, which it does once nothing waits to be parsed).
    d = tmp_path / "s"
    corpus(d, 40)
    for path in sorted(d.glob("*.json"))[:20]:
        data = json.loads(path.read_text()) if path.name != "s0005.json" else None
        if data is not None:
            # 12 KB a file: a batch of ten is twice what a pipe holds (and its files small
            # enough to be kept by the worker that read them)
            data["messages"][0]["content"] += " padding" * 1_500
            path.write_text(json.dumps(data))
    monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(tmp_path / "here"))
    with SqliteSessionStore(
        d, db_path=tmp_path / "i.sqlite3", reconcile="none", vault=True
    ) as store:
        source = store.reconciler.index.source
        feed = store.reconciler.vault_feed()
        assert feed is not None
        files = source.list_files()
        tasks: list[parsing.Task] = [(n, files[n], None) for n in sorted(files)]
        worker = parsing.Worker(
            source, folded=False, vault_at=(store.reconciler.index.source_kind, feed.vault_dir)
        )
        try:
            worker.send(tasks[:10])
            worker.send(tasks[10:20])
            deadline = time.monotonic() + 60
            kept: set[str] = set()
            while len(kept) < 19 and time.monotonic() < deadline:
                with Vault(default_vault_dir()) as v:
                    kept = {Path(version.path).name for version in v.latest()}
                time.sleep(0.05)
            assert len(kept) == 19, kept  # (s0005 is not JSON: nothing to keep)
            assert worker.poll_ready()
            first, second = worker.recv(), worker.recv()
            assert [n for n, *_ in first + second] == [n for n, *_ in tasks[:20]]
        finally:
            worker.close()


def test_a_first_build_leaves_each_search_index_in_one_segment(tmp_path: Path) -> None:
    # Rows are written a batch at a time (a segment each); at the end each full-text index
    # is merged into one: merging it again changes nothing.
    d = tmp_path / "s"
    corpus(d)
    db = tmp_path / "one.sqlite3"
    build(d, db, worker=True)
    with sqlite3.connect(db) as c:
        for table in ("fts", "recall_words", "hidden_fts"):
            structure = f"SELECT block FROM {table}_data WHERE id = 10"
            before = c.execute(structure).fetchone()[0]
            c.execute(f"INSERT INTO {table}({table}) VALUES('optimize')")
            assert c.execute(structure).fetchone()[0] == before, table


@pytest.mark.parametrize("workers", [1, 2])
def test_a_worker_that_dies_leaves_the_rest_to_this_process(
    workers: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = tmp_path / "s"
    corpus(d)
    monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(tmp_path / "here"))
    here = build(d, tmp_path / "here.sqlite3", worker=False)
    recv = parsing.Worker.recv
    killed: list[int] = []

    def dying(self: parsing.Worker) -> Any:
        if not killed:  # before the first batch it parsed comes back
            self._proc.kill()
            self._proc.wait()
            killed.append(self._proc.pid)
        return recv(self)

    monkeypatch.setattr(parsing.Worker, "recv", dying)
    monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(tmp_path / "there"))

    # waits for the worker to start, so it takes a batch (the kill is of a worker at work)
    def waiting(self: parsing.Worker) -> bool:
        if not self.ready and self._results.poll(60):
            self.ready = self._results.recv() == "ready"
        return self.ready

    monkeypatch.setattr(parsing.Worker, "poll_ready", waiting)
    there = build(d, tmp_path / "there.sqlite3", worker=True, workers=workers)
    assert len(killed) == 1  # (with two, the other and this process parse the rest)
    assert here[0] == there[0] and here[1] == there[1]


KILLED = """
import sys, time
from pathlib import Path
from session_browser.core.index import SqliteSessionStore

def progress(done, total):
    if done:
        print("batch", flush=True)
        time.sleep(30)  # killed here, with the worker at work

store = SqliteSessionStore(
    Path(sys.argv[1]), db_path=Path(sys.argv[2]), reconcile="none", vault=True
)
store.reconciler.worker_min_files = 0
store.reconcile(progress=progress)
"""


def children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            if f"\nPPid:\t{pid}\n" in status:
                out.append(int(entry.name))
    return out


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_a_build_killed_takes_its_worker_and_the_next_reconcile_completes(
    tmp_path: Path,
) -> None:
    d = tmp_path / "s"
    corpus(d, 1100)
    db = tmp_path / "k.sqlite3"
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED, str(d), str(db)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "batch"
        workers = children(proc.pid)
        assert len(workers) == 1
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 20
        while Path(f"/proc/{workers[0]}").exists() and time.monotonic() < deadline:
            try:  # a zombie left to init counts as gone
                with open(f"/proc/{workers[0]}/stat") as fh:
                    if fh.read().split(") ")[1].startswith("Z"):
                        break
            except OSError:
                break
            time.sleep(0.05)
        else:
            assert not Path(f"/proc/{workers[0]}").exists(), "the worker outlived its build"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with sqlite3.connect(db) as check:
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        check.execute("INSERT INTO fts(fts, rank) VALUES('integrity-check', 1)")
        assert 0 < check.execute("SELECT count(*) FROM sessions").fetchone()[0] < 1099
    with SqliteSessionStore(d, db_path=db, vault=True) as store:
        assert store.count() == 1099
        assert [h.session_id for h in store.search("question 1034")][:1] == ["s1034"]
    with Vault(default_vault_dir()) as v:
        assert len(list(v.latest())) == 1099  # the files the killed build left out too


@pytest.mark.parametrize("worker", [False, True])
def test_files_a_first_build_could_not_keep_are_handed_to_the_vault_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, worker: bool
) -> None:
    d = tmp_path / "s"
    corpus(d)
    monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(tmp_path / "data"))
    vault_dir = default_vault_dir()
    vault_dir.mkdir(parents=True)
    (vault_dir / "packs").write_bytes(b"")  # not a dir: every batch fails
    db = tmp_path / "b.sqlite3"

    with SqliteSessionStore(d, db_path=db, reconcile="none", vault=True) as store:
        store.reconciler.worker_min_files = 0 if worker else 10**9
        report = store.reconcile()
        feed = store.reconciler.vault_feed()
        assert feed is not None and feed.problems  # said, not silently dropped
    assert report.added == FILES - 1
    with sqlite3.connect(db) as c:  # not taken as fed: the next open hands them over
        assert c.execute("SELECT 1 FROM meta WHERE key='vault_fed'").fetchone() is None
    (vault_dir / "packs").unlink()
    with SqliteSessionStore(d, db_path=db, reconcile="none", vault=True) as store:
        store.reconcile()
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT 1 FROM meta WHERE key='vault_fed'").fetchone() is not None
    kept = vault_bytes(d)
    assert len(kept) == FILES - 1
    on_disk = json.loads((d / "s0003.json").read_bytes())
    assert kept["s0003.json"] == json.dumps(on_disk, sort_keys=True).encode()
