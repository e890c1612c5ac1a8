"""A Claude Code summary line may title a session of another file of its project folder, so
an untitled session is titled from the summary lines of the whole folder. The index keeps
each file's summary lines by its identity: a new process that re-indexes one grown
transcript reads that file again, not the whole folder; and a forget reaches those rows."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from session_browser.core.forget.deny import deny_text
from session_browser.core.index import forget, learned
from session_browser.core.open import index_store
from session_browser.core.sources import SOURCES
from session_browser.core.sources.claude import source as claude_source
from tests.core.test_claude import Transcript, text

TABLE = "claude_learned_state"


def sid(i: int) -> str:
    return f"{i:08d}-0000-0000-0000-000000000000"


def plant(root: Path, count: int) -> list[Path]:
    """``count`` untitled sessions in one folder; the first file's summary line names a
    turn of the second."""
    paths = []
    for i in range(count):
        t = Transcript(sid(i), prefix=f"p{i}-")
        if i == 0:
            t.raw({"type": "summary", "summary": "About the second", "leafUuid": "p1-0001"})
        t.prompt(f"question number {i} about the weir")
        t.answer(f"m{i}", text(f"Answer number {i}."))
        paths.append(t.write(root / "proj" / f"{sid(i)}.jsonl"))
    return paths


def titles(db_path: Path) -> dict[str, str]:
    with sqlite3.connect(db_path) as db:
        return dict(db.execute("SELECT session_id, title FROM sessions").fetchall())


def rows(db_path: Path) -> dict[str, Any]:
    with sqlite3.connect(db_path) as db:
        return {f: json.loads(s) for f, s in db.execute(f"SELECT file, state FROM {TABLE}")}


def test_a_new_process_reads_only_the_grown_transcript_for_summary_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSION_BROWSER_VAULT", "off")
    root = tmp_path / "projects"
    paths = plant(root, 6)
    db_path = tmp_path / "c.sqlite3"
    with index_store(SOURCES["claude"], root, "sync", db_path=db_path):
        pass
    kept = rows(db_path)
    assert sorted(kept) == [f"proj/{sid(i)}.jsonl" for i in range(6)]
    assert kept[f"proj/{sid(0)}.jsonl"][3] == {"p1-0001": "About the second"}
    assert titles(db_path)[sid(1)] == "About the second"

    read: list[str] = []
    real = claude_source.claude_summaries

    def counted(paths: Any) -> dict[str, str]:
        paths = list(paths)
        read.extend(str(p) for p in paths)
        return real(paths)

    monkeypatch.setattr(claude_source, "claude_summaries", counted)
    with open(paths[2], "ab") as fh:
        line = {"type": "summary", "summary": "The third, renamed", "leafUuid": "p2-0001"}
        fh.write(json.dumps(line).encode() + b"\n")
    # A new store over the same index: a new source, as in a new process.
    with index_store(SOURCES["claude"], root, "sync", db_path=db_path) as store:
        assert store.last_report is not None and store.last_report.updated == 1
    assert read == [str(paths[2])]  # not the five unchanged files
    assert titles(db_path)[sid(2)] == "The third, renamed"
    assert titles(db_path)[sid(1)] == "About the second"  # from a file not read again
    assert rows(db_path)[f"proj/{sid(2)}.jsonl"][3] == {"p2-0001": "The third, renamed"}
    # A row that is not what we write is left out: the file is read again.
    with sqlite3.connect(db_path) as db:
        db.execute(f"UPDATE {TABLE} SET state = '[1, 2]' WHERE file = ?", (f"proj/{sid(3)}.jsonl",))
    assert f"proj/{sid(3)}.jsonl" not in learned.load(sqlite3.connect(db_path), TABLE)


def test_forget_drops_the_learned_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SESSION_BROWSER_VAULT", "off")
    root = tmp_path / "projects"
    plant(root, 3)
    db_path = tmp_path / "c.sqlite3"
    with index_store(SOURCES["claude"], root, "sync", db_path=db_path):
        pass
    db = sqlite3.connect(db_path, isolation_level=None)
    try:
        forget.delete_files(db, [f"proj/{sid(1)}.jsonl"])
        assert sorted(rows(db_path)) == [f"proj/{sid(0)}.jsonl", f"proj/{sid(2)}.jsonl"]
        # A text forgotten may be in any file's summary lines: all of them go.
        forget.redact_text(db, ["About the second"], "[gone]", [f"proj/{sid(0)}.jsonl"])
        assert rows(db_path) == {}
    finally:
        db.close()


def test_a_denied_text_is_never_kept_in_the_learned_rows(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "l.sqlite3", isolation_level=None)
    db.execute(f"CREATE TABLE {TABLE}(file TEXT PRIMARY KEY, state TEXT NOT NULL)")
    deny_text("the vault combination", redact=True)
    learned.save(
        db,
        TABLE,
        {
            "a.jsonl": ((1, 2, 3), {"leaf-a": "about the vault combination, again"}),
            "b.jsonl": ((4, 5, 6), {"leaf-b": "about the \ud800 weir"}),
        },
    )
    kept = learned.load(db, TABLE)
    assert kept == {"b.jsonl": ((4, 5, 6), {"leaf-b": "about the \ud800 weir"})}
    db.close()
