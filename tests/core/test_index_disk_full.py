"""A full disk under an index write: one line that says so, exit 1, nothing half-written.

SQLite is made to run out of room with ``PRAGMA max_page_count`` on the index's own
connections: the write then fails with ``SQLITE_FULL`` (``database or disk is full``), the
very error (and the same automatic rollback) a full file system gives.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.index import default_db_path
from session_browser.core.index.schema import IndexDatabase


def _write(session_dir: Path, sid: str) -> None:
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"{sid} turn {i} " * 400}
        for i in range(6)
    ]
    (session_dir / f"{sid}.json").write_text(json.dumps({"session_id": sid, "messages": messages}))


def _sessions_in(db_path: Path) -> tuple[str, int]:
    db = sqlite3.connect(db_path)
    try:
        check = db.execute("PRAGMA integrity_check").fetchone()[0]
        return str(check), int(db.execute("SELECT count(*) FROM sessions").fetchone()[0])
    finally:
        db.close()


@pytest.fixture
def no_room(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Each index connection opened while the list holds a page count may grow the
    database to that many pages and no further."""
    limit: list[int] = []
    connect = IndexDatabase._connect

    def limited(self: IndexDatabase) -> sqlite3.Connection:
        db = connect(self)
        if limit:
            db.execute(f"PRAGMA max_page_count={limit[0]}")
        return db

    monkeypatch.setattr(IndexDatabase, "_connect", limited)
    yield limit


def test_index_update_on_a_full_disk_says_so_and_writes_nothing_half(
    tmp_path: Path, no_room: list[int]
) -> None:
    session_dir = tmp_path / "sessions"
    session_dir.mkdir()
    _write(session_dir, "first")
    args = ["index", "update", "--store", str(session_dir)]
    assert CliRunner().invoke(main, args).exit_code == 0
    db_path = default_db_path(session_dir)
    check, before = _sessions_in(db_path)
    assert (check, before) == ("ok", 1)
    for i in range(40):
        _write(session_dir, f"more{i}")
    db = sqlite3.connect(db_path)
    no_room.append(int(db.execute("PRAGMA page_count").fetchone()[0]) + 4)
    db.close()

    res = CliRunner().invoke(main, args)
    assert res.exit_code == 1, res.output
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and "disk is full" in lines[0], res.stderr
    assert "rollback" not in res.stderr and "Traceback" not in res.stderr
    assert res.stdout == ""  # no counts of a pass that failed
    assert _sessions_in(db_path) == ("ok", 1)  # the failed batch left nothing behind

    no_room.clear()  # space again: the next update indexes everything
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    assert _sessions_in(db_path) == ("ok", 41)
