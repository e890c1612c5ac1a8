"""A search over indexed Claude Code transcripts and Codex rollouts builds its hits (title,
snippet, the turns around it) from the index: it never opens the transcripts of the hits it
shows, those with subagent files included. Every file opened while the searches run is seen
through Python's audit hook (``open`` events, whatever opens the file)."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from session_browser.core.open import index_store
from session_browser.core.sources import SOURCES
from tests.core.test_agent_first_build import claude_dir, codex_dir

_watching: list[tuple[str, list[str]]] = []  # (root, the files opened under it)


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and _watching and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(args[0])
        for root, opened in _watching:
            if path.startswith(root):
                opened.append(path)


sys.addaudithook(_hook)


def queries(db: Path) -> list[tuple[str, str]]:
    """(session id, a query that finds it: the rarest word of its user turns) of the real
    transcripts and a few generated ones."""
    words: dict[str, set[str]] = {}
    with sqlite3.connect(db) as c:
        rows = c.execute(
            "SELECT s.session_id, s.file, m.text FROM sessions s JOIN messages m "
            "ON m.id BETWEEN s.row_lo AND s.row_hi WHERE m.role = 'user'"
        ).fetchall()
    for sid, file, text in rows:
        if "gen-" not in file or any(f"gen-{n}" in file for n in ("0007", "0042")):
            for w in text.split():
                w = w.strip(".,:;!?()[]'\"`")
                if w.isalnum() and 3 < len(w) < 30:
                    words.setdefault(sid, set()).add(w.lower())
    df: dict[str, int] = {}
    for found in words.values():
        for w in found:
            df[w] = df.get(w, 0) + 1
    return [(sid, min(found, key=lambda w: (df[w], -len(w), w))) for sid, found in words.items()]


@pytest.mark.parametrize("kind", ["claude", "codex"])
def test_a_search_opens_none_of_its_hits_transcripts(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = (claude_dir if kind == "claude" else codex_dir)(tmp_path / kind)
    monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(tmp_path / "data"))
    db = tmp_path / "index.sqlite3"
    with index_store(SOURCES[kind], root, "sync", vault=True, db_path=db) as store:
        asked = queries(db)
        assert len(asked) >= 4
        opened: list[str] = []
        _watching.append((str(root), opened))
        try:
            found = {q: store.search(q, limit=10, window=2) for _sid, q in asked}
        finally:
            _watching.clear()
        # The same searches with hits read from the files (rows marked unusable for hits):
        # what the rows gave is what the files give.
        with sqlite3.connect(db) as c:
            c.execute("UPDATE sessions SET hit_rows = 0")
        from_files: list[str] = []
        _watching.append((str(root), from_files))
        try:
            read = {q: store.search(q, limit=10, window=2) for _sid, q in asked}
        finally:
            _watching.clear()
    assert opened == []
    assert from_files  # (those hits were read from the files)
    for sid, q in asked:
        hits = found[q]
        assert sid in [h.session_id for h in hits], q
        hit = next(h for h in hits if h.session_id == sid)
        assert hit.messages and hit.snippet and hit.title
        again = next(h for h in read[q] if h.session_id == sid)
        assert (hit.title, hit.snippet, hit.messages, hit.bookends) == (
            again.title,
            again.snippet,
            again.messages,
            again.bookends,
        )
