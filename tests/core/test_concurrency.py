"""Several real processes writing one session at once lose nothing."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
import threading
from pathlib import Path

from session_browser.core.store import DefaultSessionStore

PROCS = 4
PER_PROC = 25


def _ours(session_dir: str, spill_dir: str, worker: int, count: int) -> None:
    store = DefaultSessionStore(session_dir, spill_dir=spill_dir, lock_timeout=60)
    for i in range(count):
        if not store.add_message("shared", "user", f"w{worker}-m{i}"):
            raise SystemExit(3)


def _theirs(session_dir: str, worker: int, count: int) -> None:
    os.environ["DO_NOT_TRACK"] = "1"
    from praisonaiagents.session.store import DefaultSessionStore as PStore

    store = PStore(session_dir=session_dir, lock_timeout=60, retention="keep_all")
    for i in range(count):
        if not store.add_message("shared", "assistant", f"p{worker}-m{i}"):
            raise SystemExit(3)


def _run(procs: list[multiprocessing.process.BaseProcess]) -> None:
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0


def _contents(path: Path) -> list[str]:
    data = json.loads(path.read_text())
    return [
        m["content"] for m in data["archived_messages"] + data["messages"] if m["role"] != "system"
    ]


def test_four_processes_lose_nothing(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    sessions, spill = str(tmp_path / "s"), str(tmp_path / "spill")
    _run([ctx.Process(target=_ours, args=(sessions, spill, w, PER_PROC)) for w in range(PROCS)])
    path = Path(sessions) / "shared.json"
    contents = _contents(path)
    expected = {f"w{w}-m{i}" for w in range(PROCS) for i in range(PER_PROC)}
    assert sorted(contents) == sorted(expected)
    # each writer's own turns stay in order
    for w in range(PROCS):
        mine = [c for c in contents if c.startswith(f"w{w}-")]
        assert mine == [f"w{w}-m{i}" for i in range(PER_PROC)]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in Path(sessions).iterdir()) == ["shared.json", "shared.json.lock"]
    assert not Path(spill).exists()


def test_mixed_with_praisonai_writer(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    sessions, spill = str(tmp_path / "s"), str(tmp_path / "spill")
    procs = [ctx.Process(target=_ours, args=(sessions, spill, w, 20)) for w in range(2)]
    procs += [ctx.Process(target=_theirs, args=(sessions, w, 20)) for w in range(2)]
    _run(procs)
    contents = _contents(Path(sessions) / "shared.json")
    expected = {f"w{w}-m{i}" for w in range(2) for i in range(20)}
    expected |= {f"p{w}-m{i}" for w in range(2) for i in range(20)}
    assert sorted(contents) == sorted(expected)


def test_threads_in_one_process(tmp_path: Path) -> None:
    store = DefaultSessionStore(tmp_path / "s", spill_dir=tmp_path / "spill", lock_timeout=60)
    errors: list[str] = []

    def work(n: int) -> None:
        for i in range(10):
            if not store.add_user_message("t", f"t{n}-{i}"):
                errors.append(f"t{n}-{i}")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(_contents(store.session_path("t"))) == 40


def test_readers_never_see_partial_files(tmp_path: Path) -> None:
    """Lock-free reads during writes always parse (atomic replace)."""
    ctx = multiprocessing.get_context("fork")
    sessions, spill = str(tmp_path / "s"), str(tmp_path / "spill")
    store = DefaultSessionStore(sessions, spill_dir=spill)
    store.add_user_message("shared", "seed " * 2000)
    writer = ctx.Process(target=_ours, args=(sessions, spill, 0, 30))
    writer.start()
    counts: list[int] = []
    while writer.is_alive() or not counts:
        data = store.read_raw("shared")
        assert data is not None and data["session_id"] == "shared"
        counts.append(len(data["messages"]))
    writer.join()
    assert writer.exitcode == 0
    assert len(store.get_session("shared").messages) == 31
    # every read saw a whole file of the sequence of writes: 1..31 turns, never fewer
    # than an earlier read (appends only, well inside the active window)
    assert all(1 <= n <= 31 for n in counts)
    assert counts == sorted(counts)
    seen = max(counts)
    assert 1 <= seen <= 31
