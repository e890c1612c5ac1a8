"""The index file's guards: a damaged index another store holds open is never deleted under
it, and a store whose database file was replaced or deleted from outside writes into the
file now at its path, never into the old inode nobody reads."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from session_browser.core.index import SqliteSessionStore


def _put(d: Path, sid: str, text: str) -> None:
    d.mkdir(parents=True, exist_ok=True)
    data = {
        "session_id": sid,
        "messages": [{"role": "user", "content": text, "timestamp": 1.7e9}],
        "updated_at": "2026-01-01T00:00:00+00:00",
    }
    (d / f"{sid}.json").write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    d = tmp_path / "sessions"
    _put(d, "quokka", "the quokka of rottnest")
    _put(d, "pelican", "a pelican on the pier")
    return d


def test_a_damaged_index_another_store_holds_is_not_deleted(sessions: Path, tmp_path: Path) -> None:
    db = tmp_path / "index.sqlite3"
    with SqliteSessionStore(sessions, db_path=db) as first:
        assert [h.session_id for h in first.search("quokka")] == ["quokka"]
        held = {s: os.stat(f"{db}{s}").st_ino for s in ("", "-wal", "-shm")}
        for suffix in ("", "-wal"):  # damaged in place: the same files, not a database
            path = f"{db}{suffix}"
            size = os.stat(path).st_size
            with open(path, "r+b") as fh:
                fh.write((b"no longer an SQLite database " * (size // 29 + 1))[:size])
        with SqliteSessionStore(sessions, db_path=db) as second:
            # It cannot use the file and must not delete it: the scan answers.
            assert second.broken and "in use" in second.broken
            assert [h.session_id for h in second.search("quokka")] == ["quokka"]
        for suffix, ino in held.items():  # the files the first store holds are all there
            assert os.stat(f"{db}{suffix}").st_ino == ino, suffix
    # Once no store holds it, the next one may discard it and build a sound index.
    with SqliteSessionStore(sessions, db_path=db) as third:
        assert third.broken is None
        assert [h.session_id for h in third.search("pelican")] == ["pelican"]


@pytest.mark.parametrize("how", ["replaced", "deleted"])
def test_a_write_after_the_db_file_changed_goes_into_the_file_at_its_path(
    sessions: Path, tmp_path: Path, how: str
) -> None:
    db = tmp_path / "index.sqlite3"
    with SqliteSessionStore(sessions, db_path=db) as store:
        assert [h.session_id for h in store.search("quokka")] == ["quokka"]
        old = os.stat(db).st_ino
        if how == "replaced":  # another index of the same dir moved over it
            other = tmp_path / "other.sqlite3"
            with SqliteSessionStore(sessions, db_path=other):
                pass
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(f"{other}{suffix}"):
                    shutil.move(f"{other}{suffix}", f"{db}{suffix}")
                else:
                    Path(f"{db}{suffix}").unlink(missing_ok=True)
        else:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
        assert not db.exists() or os.stat(db).st_ino != old
        store.add_user_message("wombat", "a wombat in the garden")
    # What reads the path (without looking at the files) finds the write.
    with SqliteSessionStore(sessions, db_path=db, reconcile="none") as reader:
        assert [h.session_id for h in reader.search("wombat")] == ["wombat"]
