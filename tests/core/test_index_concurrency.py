"""Two real processes on one index: a writer through SqliteSessionStore and a reader that
searches and reconciles. The database must stay intact and end up matching the files."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from session_browser.core.index import SqliteSessionStore

WRITER = textwrap.dedent(
    """
    import sys
    from session_browser.core.index import SqliteSessionStore
    from session_browser.core.store import DefaultSessionStore
    d, db, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with SqliteSessionStore(d, db_path=db) as store:
        plain = DefaultSessionStore(d)  # an outside writer too: only a reconcile sees it
        for i in range(n):
            store.add_user_message(f"w{i % 5}", f"writer turn {i} mentions okapi{i}")
            plain.add_user_message(f"p{i % 3}", f"outside turn {i} mentions tapir{i}")
    print("writer done")
    """
)

READER = textwrap.dedent(
    """
    import logging, sys
    logging.basicConfig(level=logging.WARNING)
    from session_browser.core.index import SqliteSessionStore
    d, db, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    found = 0
    with SqliteSessionStore(d, db_path=db) as store:
        for i in range(n):
            found += len(store.search(f"okapi{i} tapir{i}", limit=5))
            store.search_ex("turn mentions")
            if i % 3 == 0:
                store.reconcile()
    print("reader done", found)
    """
)


@pytest.mark.slow
def test_writer_and_reader_processes(tmp_path: Path) -> None:
    d = tmp_path / "sessions"
    d.mkdir()
    db = tmp_path / "index.sqlite3"
    env = {**os.environ, "DO_NOT_TRACK": "1"}
    n = 40
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(d), str(db), str(n)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for script in (WRITER, READER, READER)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "done" in out
        assert "WARNING" not in err, err
    with sqlite3.connect(db) as check:
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        check.execute("INSERT INTO fts(fts, rank) VALUES('integrity-check', 1)")  # raises if bad
        dupes = check.execute(
            "SELECT count(*) FROM (SELECT file FROM sessions GROUP BY file HAVING count(*) > 1)"
        ).fetchone()[0]
        assert dupes == 0
        # Before any further reconcile: every turn written through the store is in the
        # database file on disk (none went into a file that was deleted or replaced).
        written = check.execute(
            "SELECT count(*) FROM messages WHERE text LIKE 'writer turn %'"
        ).fetchone()[0]
        sessions = {r[0] for r in check.execute("SELECT session_id FROM sessions")}
    assert written == n
    assert {f"w{k}" for k in range(5)} <= sessions
    with SqliteSessionStore(d, db_path=db) as store:
        # After one more reconcile every turn of both writers is found, once.
        assert store.count() == 8
        for i in range(n):
            assert [h.session_id for h in store.search(f"okapi{i}")] == [f"w{i % 5}"]
            assert [h.session_id for h in store.search(f"tapir{i}")] == [f"p{i % 3}"]
        total = store.status()["messages"]
    assert total == 2 * n
