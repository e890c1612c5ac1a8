"""The index is not the writer: writes are made by the JSON store it holds, which tells it after
each one; an index over a read-only source has no writer and refuses every write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from session_browser.core.actions.rescue import writable_stores, writer_of
from session_browser.core.index import SqliteSessionStore
from session_browser.core.open import pi_index_store
from session_browser.core.sources.pi import pi_jsonl
from session_browser.core.sources.readonly import ReadOnlyStore
from session_browser.core.store import DefaultSessionStore


def test_writes_through_the_writer_are_indexed(tmp_path: Path) -> None:
    with SqliteSessionStore(tmp_path / "s", db_path=tmp_path / "i.sqlite3") as store:
        # praisonaiagents' class tree (a virtual subclass), composition inside
        assert isinstance(store, DefaultSessionStore)
        assert DefaultSessionStore not in type(store).__mro__
        assert isinstance(store.writer, DefaultSessionStore)
        assert writer_of(store) is store.writer and writable_stores([store]) == [store.writer]
        # a write made by the writer itself (what import and rescue use) is indexed at once
        assert store.writer.add_user_message("s1", "the zeppelin manifest")
        assert [h.session_id for h in store.search("zeppelin")] == ["s1"]
        # and one made through the index's own API goes to the same writer
        assert store.rename_session("s1", "Airships")
        assert store.recent(limit=1)[0].title == "Airships"
        assert store.writer.read_raw("s1")["metadata"]["title"] == "Airships"
        assert store.writer.delete_session("s1")
        assert store.search("zeppelin") == [] and store.count() == 0


def test_read_only_index_has_no_writer(tmp_path: Path) -> None:
    root = tmp_path / "pi" / "--work--"
    root.mkdir(parents=True)
    data = {
        "session_id": "p1",
        "created_at": 1.7e9,
        "messages": [{"role": "user", "content": "gondola", "timestamp": 1.7e9}],
    }
    (root / "p1.jsonl").write_bytes(pi_jsonl(data))
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in root.iterdir()}
    with pi_index_store(tmp_path / "pi", db_path=tmp_path / "pi.sqlite3") as store:
        assert store.writer is None and writer_of(store) is None and writable_stores([store]) == []
        assert [h.session_id for h in store.search("gondola")] == ["p1"]
        assert store.get_working_history("p1")[0]["content"] == "gondola"
        # every write, the PraisonAI compat ones included, is refused before touching a file
        for write in (
            lambda: store.add_user_message("p1", "x"),
            lambda: store.set_runtime_state("p1", "r", "t", {"k": 1}),
            lambda: store.append_compaction_checkpoint("p1", "summary"),
            lambda: store.upsert_partial_assistant_message("p1", "x"),
        ):
            with pytest.raises(ReadOnlyStore, match="is read-only"):
                write()
        assert store.flush_mirror() is True
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in root.iterdir()} == before
    assert sorted(os.listdir(tmp_path / "pi")) == ["--work--"]
