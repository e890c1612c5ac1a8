"""The vault fed by the index: a deleted Claude Code transcript stays findable, marked, and
comes back byte-identical; an appended transcript costs what was appended; a ``truncate``
write keeps the dropped turns findable; a damaged copy is reported, never served; the source
dir stays as it was."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from session_browser.core.index import SqliteSessionStore
from session_browser.core.multi import StoreGroup
from session_browser.core.open import index_store
from session_browser.core.settings import Settings, save_settings
from session_browser.core.sources import SOURCES
from session_browser.core.vault import Vault, default_vault_dir
from tests.core.test_claude import Transcript, text
from tests.core.test_claude_source import append
from tests.core.test_readonly import snapshot
from tests.core.test_vault import chunk_bytes_on_disk, damage_entry

SID = "11111111-2222-3333-4444-555555555555"
OTHER = "99999999-2222-3333-4444-555555555555"


def claude_dir(root: Path) -> tuple[Path, Transcript]:
    t = Transcript(SID)
    t.prompt("where is the heron config kept")
    t.answer("m1", text("The heron config is in etc, beside the egret notes."))
    path = t.write(root / "proj" / f"{SID}.jsonl")
    o = Transcript(OTHER)
    o.prompt("what about the osprey")
    o.answer("m2", text("The osprey is fine."))
    o.write(root / "proj" / f"{OTHER}.jsonl")
    return path, t


def packs_size() -> int:
    """The chunk bytes in the packs (what a file's bytes cost, not their descriptions)."""
    return chunk_bytes_on_disk(default_vault_dir())


def test_a_deleted_transcript_stays_findable_and_comes_back_identical(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    path, _t = claude_dir(root)
    original = path.read_bytes()
    before = snapshot(root)
    store = index_store(SOURCES["claude"], root, vault=True)
    try:
        assert snapshot(root) == before  # the vault writes only in our data dir
        path.unlink()
        report = store.reconcile()
        assert report.removed == 1
        [hit] = store.search("heron", limit=5)
        assert hit.session_id == SID
        assert hit.kept is not None and hit.kept.startswith(f"deleted from {path} on ")
        assert "heron" in hit.snippet
        assert store.reconcile().removed == 0  # noted once, kept since
        assert [h.session_id for h in store.search("heron")] == [SID]
        store.rebuild()  # a new index (the cache deleted): indexed again from the vault
        [hit] = store.search("heron", limit=5)
        assert hit.session_id == SID and hit.kept is not None
    finally:
        store.close()
    with Vault() as vault:
        [version] = vault.versions(SID)
        assert version.gone_at is not None and version.messages == 2
        vault.restore(version)
    assert path.read_bytes() == original
    again = index_store(SOURCES["claude"], root, vault=True)
    try:
        [hit] = again.search("heron", limit=5)
        assert hit.kept is None  # the file is back: read from it again
    finally:
        again.close()


def test_an_appended_transcript_stores_only_what_was_appended(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    path, t = claude_dir(root)
    for i in range(300):
        t.prompt(f"question {i} about the heron migration and its ledger tables")
        t.answer(f"a{i}", text(f"answer {i}: the heron ledger moves in step {i * 7}"))
    t.write(path)
    store = index_store(SOURCES["claude"], root, vault=True)
    try:
        first = packs_size()
        n = len(t.lines)
        t.prompt("one more about the kingfisher")
        t.answer("last", text("The kingfisher is new."))
        append(path, t.lines[n:])
        store.reconcile()
        grown = packs_size() - first
    finally:
        store.close()
    appended = sum(len(json.dumps(x)) + 1 for x in t.lines[n:])
    assert 0 < grown < appended + 100, (grown, appended)  # a header and the appended bytes
    assert grown * 20 < first, (grown, first)
    with Vault() as vault:
        versions = vault.versions(SID)
        assert len(versions) == 2 and len(versions[1].chunks) == 2
        assert vault.read(versions[1]) == path.read_bytes()
        assert versions[1].size == path.stat().st_size


def test_a_truncate_write_keeps_the_dropped_turns_findable(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    store = SqliteSessionStore(sessions, vault=True, retention="truncate", max_messages=4)
    try:
        store.add_user_message("s1", "the pelican budget is forty")
        store.add_assistant_message("s1", "noted the pelican budget")
        for i in range(4):
            store.add_user_message("s1", f"filler turn {i}")
        data = json.loads((sessions / "s1.json").read_bytes())
        assert "pelican" not in json.dumps(data["messages"])  # dropped from the file
        hits = store.search("pelican", limit=5)
        assert hits and hits[0].session_id == "s1"
        assert hits[0].kept is not None and "turns dropped" in hits[0].kept
        assert "pelican" in hits[0].snippet
    finally:
        store.close()


def test_turns_dropped_by_many_rewrites_are_one_hit_of_their_session(tmp_path: Path) -> None:
    """Every write past the cap drops a turn: the kept turns of all those rewrites and the
    file as it is now fold into one hit (the best), never one hit per rewrite."""
    sessions = tmp_path / "sessions"
    store = SqliteSessionStore(sessions, vault=True, retention="truncate", max_messages=4)
    try:
        store.add_user_message("other", "the pelican went elsewhere")
        for r in range(4):
            store.add_user_message("s1", f"pelican round {r}")
            for i in range(4):
                store.add_user_message("s1", f"filler turn {r} {i}")
        store.add_user_message("s1", "pelican now")
        result = store.search_ex("pelican", limit=10)
        ids = [h.session_id for h in result.hits]
        assert sorted(ids) == ["other", "s1"], ids
        s1 = result.hits[ids.index("s1")]
        assert s1.folded == ["s1"] * 4 and s1.folded_counts() == (0, 4)
        assert s1.folded_note() == "4 other versions match"
        # The folded ones are not "more" sessions: all that matched is shown.
        assert result.matched_sessions - sum(len(h.folded) for h in result.hits) == 2
        # The same through a group of stores (what the app and the CLI search).
        grouped = StoreGroup([store]).search_ex("pelican", limit=10).hits
        assert [(h.session_id, len(h.folded)) for h in grouped] == [
            (h.session_id, len(h.folded)) for h in result.hits
        ]
        # Only dropped turns match: still one hit, from the vault's copy.
        dropped = store.search_ex("round", limit=10).hits
        assert [h.session_id for h in dropped] == ["s1"]
        assert dropped[0].kept is not None and "turns dropped" in dropped[0].kept
        assert len(dropped[0].folded) == 3
    finally:
        store.close()


def test_a_damaged_copy_is_reported_never_served(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    path, _t = claude_dir(root)
    store = index_store(SOURCES["claude"], root, vault=True)
    try:
        path.unlink()
        store.reconcile()
        assert store.search("heron")
        with Vault() as vault:
            [version] = vault.versions(SID)
        damage_entry(default_vault_dir(), b"not zlib at all", version.chunks[0])
        store._hit_cache.clear()
        assert store.search("heron") == []  # never a hit built from damaged bytes
        feed = store.reconciler.vault_feed()
        assert feed is not None and any("cannot be read" in p for p in feed.problems)
    finally:
        store.close()
    with Vault() as vault:
        assert vault.check()


def test_the_vault_is_off_for_a_source_the_settings_name(tmp_path: Path) -> None:
    save_settings(Settings(vault_off=["claude"]))
    root = tmp_path / "projects"
    path, _t = claude_dir(root)
    store = index_store(SOURCES["claude"], root, vault=True)
    try:
        assert store.reconciler.vault_feed() is None
        path.unlink()
        store.reconcile()
        assert [h.session_id for h in store.search("heron")] == []
    finally:
        store.close()
    assert not (default_vault_dir() / "catalog.sqlite").exists()


def test_a_torn_pack_tail_is_ignored_and_cut(tmp_path: Path) -> None:
    with Vault(tmp_path / "v") as vault:
        kept = vault.keep("pi", "/p/a.jsonl", "a", b'{"a": 1}\n' * 100)
    pack = tmp_path / "v" / "packs" / "000001.pack"
    size = pack.stat().st_size
    with open(pack, "ab") as fh:
        fh.write(b"SBVP half a record from a crash")
    with Vault(tmp_path / "v") as vault:
        assert kept is not None and vault.read(kept) == b'{"a": 1}\n' * 100
        later = vault.keep("pi", "/p/b.jsonl", "b", b'{"b": 2}\n' * 100)
        assert later is not None and vault.read(later) == b'{"b": 2}\n' * 100
        assert vault.check() == []
    with sqlite3.connect(tmp_path / "v" / "catalog.sqlite") as db:
        (end,) = db.execute("SELECT end FROM packs").fetchone()
    assert pack.stat().st_size == end > size


def test_an_index_built_before_the_vault_hands_it_every_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "projects"
    path, _t = claude_dir(root)
    monkeypatch.setenv("SESSION_BROWSER_VAULT", "off")
    index_store(SOURCES["claude"], root, vault=True).close()  # built without the vault
    monkeypatch.delenv("SESSION_BROWSER_VAULT")
    # nothing changed, yet every file is kept
    store = index_store(SOURCES["claude"], root, vault=True)
    try:
        with Vault() as vault:
            assert {v.session_id for v in vault.latest()} == {SID, OTHER}
        path.unlink()
        store.reconcile()
        [hit] = store.search("heron")
        assert hit.kept is not None and hit.kept.startswith("deleted from")
    finally:
        store.close()


def test_a_json_build_keeps_the_bytes_it_indexed_one_version_each(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for i in range(30):
        doc = {"session_id": f"s{i}", "messages": [{"role": "user", "content": f"kestrel {i}"}]}
        (sessions / f"s{i}.json").write_text(json.dumps(doc, indent=2))
    big = {"session_id": "s30", "messages": [{"role": "user", "content": "kestrel " * 9000}]}
    (sessions / "s30.json").write_text(json.dumps(big))  # over RAW_KEPT: read by the vault
    before = snapshot(sessions)
    store = SqliteSessionStore(sessions, vault=True)
    try:
        assert len(store.search("kestrel", limit=50)) == 31
        store.reconcile()  # nothing changed: nothing new kept
        with Vault() as vault:
            latest = vault.latest()
            assert len(latest) == 31 and vault.stats().versions == 31
            for version in latest:
                assert version.source == "praisonai" and version.messages == 1
                assert vault.read(version) == Path(version.path).read_bytes()
    finally:
        store.close()
    assert snapshot(sessions) == before


def test_a_json_parse_hands_on_the_bytes_of_a_small_file_only(tmp_path: Path) -> None:
    from session_browser.core.sources.base import RAW_KEPT, SessionDoc
    from session_browser.core.sources.praisonai import PraisonAISource

    small = json.dumps({"session_id": "a", "messages": [{"role": "user", "content": "hi"}]})
    (tmp_path / "a.json").write_text(small)
    big = json.dumps({"session_id": "b", "messages": [{"role": "user", "content": "x" * RAW_KEPT}]})
    (tmp_path / "b.json").write_text(big)
    source = PraisonAISource(tmp_path)
    doc = source.parse("a.json", (len(small), 0, 0), None)
    assert isinstance(doc, SessionDoc) and doc.raw == small.encode()
    # Listed small, grown past the cap before it was read: parsed whole, its bytes not held.
    doc = source.parse("b.json", (10, 0, 0), None)
    assert isinstance(doc, SessionDoc) and doc.raw is None and doc.data["session_id"] == "b"


def test_a_file_without_rows_is_answered_while_a_batch_holds_the_lock(tmp_path: Path) -> None:
    """A build's unreadable file asks whether it had rows to keep; a batch being kept
    behind (its fsyncs included) holds the feed's lock, and the answer must not wait."""
    import threading

    from session_browser.core.vault.feed import VaultFeed

    db = sqlite3.connect(tmp_path / "index.sqlite3", check_same_thread=False)
    db.execute("CREATE TABLE sessions (file TEXT PRIMARY KEY, row_lo INTEGER, row_hi INTEGER)")
    feed = VaultFeed("praisonai", tmp_path / "sessions", tmp_path / "vault")
    held, release = threading.Event(), threading.Event()

    def keeping() -> None:
        with feed.lock:
            held.set()
            release.wait(10)

    keeper = threading.Thread(target=keeping)
    keeper.start()
    try:
        assert held.wait(5)
        answers: list[bool] = []
        asking = threading.Thread(
            target=lambda: answers.append(feed.keep_dropped(db, "bad.json", [], fts=True))
        )
        asking.start()
        asking.join(2)
        assert answers == [False]
    finally:
        release.set()
        keeper.join()
        feed.close()
        db.close()
