"""Many real processes opening one fresh index at the same instant (issue 16).

Each process waits on a barrier (a line on its stdin, sent once every process is ready),
then opens the same not-yet-existing index, writes its own session through the store,
searches and reconciles. No process may see an error, and afterwards the database holds
every session, without a further reconcile: no write went into a deleted file.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from session_browser.core.index import SqliteSessionStore

OPENER = textwrap.dedent(
    """
    import json, logging, sys
    logging.basicConfig(level=logging.WARNING)  # any warning fails the test (stderr)
    from session_browser.core.index import SqliteSessionStore
    d, db, me = sys.argv[1], sys.argv[2], int(sys.argv[3])
    print("ready", flush=True)
    sys.stdin.readline()  # the barrier
    with SqliteSessionStore(d, db_path=db) as store:
        opened = list(store.warnings), store.broken
        store.add_user_message(f"opener{me}", f"process {me} writes quokka{me}")
        own = [h.session_id for h in store.search(f"quokka{me}")]
        seed = [h.session_id for h in store.search("seedword")]
        store.reconcile()
        print(json.dumps({"opened": opened, "own": own, "seed": len(seed),
                          "warnings": store.warnings, "broken": store.broken}))
    """
)

PROCESSES = 6
SEEDS = 12


def _seed(d: Path) -> None:
    d.mkdir()
    for n in range(SEEDS):
        data = {
            "session_id": f"seed{n}",
            "messages": [{"role": "user", "content": f"seedword {n}", "timestamp": 1.0e9 + n}],
            "created_at": "2026-01-01T00:00:00+00:00",
            "updated_at": "2026-01-01T00:00:00+00:00",
            "metadata": {},
        }
        (d / f"seed{n}.json").write_text(json.dumps(data), encoding="utf-8")


def run_openers(tmp: Path, processes: int = PROCESSES) -> None:
    """One round: ``processes`` openers on a fresh index in ``tmp``; asserts everything."""
    d = tmp / "sessions"
    _seed(d)
    db = tmp / "cache" / "index.sqlite3"
    env = {**os.environ, "DO_NOT_TRACK": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER, str(d), str(db), str(me)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for me in range(processes)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
        for proc in procs:  # release them all at once
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
            assert err == "", err
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    for me, res in enumerate(results):
        assert res["opened"] == [[], None], res
        assert res["warnings"] == [] and res["broken"] is None, res
        assert res["own"] == [f"opener{me}"], res
        assert res["seed"] == min(SEEDS, 5), res  # search's default limit
    # Straight from the database, no reconcile: every write landed in the file on disk.
    with sqlite3.connect(db) as check:
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        check.execute("INSERT INTO fts(fts, rank) VALUES('integrity-check', 1)")  # raises if bad
        ids = {r[0] for r in check.execute("SELECT session_id FROM sessions")}
        dupes = check.execute(
            "SELECT count(*) FROM (SELECT file FROM sessions GROUP BY file HAVING count(*) > 1)"
        ).fetchone()[0]
    assert dupes == 0
    assert ids == {f"opener{n}" for n in range(processes)} | {f"seed{n}" for n in range(SEEDS)}
    with SqliteSessionStore(d, db_path=db) as store:
        assert store.count() == processes + SEEDS
        for me in range(processes):
            assert [h.session_id for h in store.search(f"quokka{me}")] == [f"opener{me}"]


def test_many_processes_open_a_fresh_index_at_once(tmp_path: Path) -> None:
    run_openers(tmp_path)


if __name__ == "__main__":  # python tests/core/test_index_openers.py RUNS: the soak loop
    import tempfile

    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    for n in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            run_openers(Path(tmp))
        print(f"run {n + 1}/{runs} ok", flush=True)
