"""A Claude Code session's subagent files are kept with its main file: once Claude Code
deletes the session (the main file and its folder), its subagent turns are still found,
shown and exported; restore brings every file back byte-identical (never over a file);
an appended subagent file costs what was appended; a damaged subagent copy is reported."""

from __future__ import annotations

import json
import shutil
import sqlite3
import zlib
from pathlib import Path

import pytest

from session_browser.core.open import index_store
from session_browser.core.sources import SOURCES
from session_browser.core.vault import Vault, VaultDamaged, VaultError, default_vault_dir
from session_browser.core.vault.parts import parts_of, parts_size
from session_browser.core.vault.reading import kept_session, load_session
from tests.core.test_claude import Transcript, text
from tests.core.test_claude_source import append
from tests.core.test_vault import chunk_bytes_on_disk, damage_entry

SID = "11111111-2222-3333-4444-555555555555"


def session_dir(root: Path) -> tuple[Path, Path, Path, Transcript]:
    """A session with a subagent run in its folder (newer builds) and one beside it (older
    builds): the cormorant is named only in the first, the grebe only in the second."""
    t = Transcript(SID)
    t.prompt("survey the estuary birds")
    t.answer("m1", text("I sent two helpers to count them."))
    main = t.write(root / "proj" / f"{SID}.jsonl")
    sub = Transcript(SID, prefix="s", agentId="a1", isSidechain=True)
    sub.prompt("count the birds on the north bank")
    sub.answer("s1", text("Eleven cormorant nests on the north bank."))
    folder_sub = sub.write(root / "proj" / SID / "subagents" / "agent-a1.jsonl")
    old = Transcript(SID, prefix="o", agentId="b2", isSidechain=True)
    old.prompt("count the birds on the south bank")
    old.answer("o1", text("Four grebe pairs on the south bank."))
    sibling = old.write(root / "proj" / "agent-b2.jsonl")
    return main, folder_sub, sibling, sub


def contents(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def delete_session(main: Path, sibling: Path) -> None:
    main.unlink()
    shutil.rmtree(main.with_suffix(""))
    sibling.unlink()


def said(data: object) -> str:
    return json.dumps(data)


def test_a_deleted_session_keeps_its_subagent_turns_and_comes_back_whole(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    main, _folder_sub, sibling, _sub = session_dir(root)
    original = contents(root / "proj")
    store = index_store(SOURCES["claude"], root, vault=True)
    try:
        assert [h.session_id for h in store.search("cormorant")] == [SID]  # live
        delete_session(main, sibling)
        assert store.reconcile().removed == 1
        for word in ("cormorant", "grebe"):
            [hit] = store.search(word, limit=5)
            assert hit.session_id == SID and hit.kept is not None
            assert hit.kept.startswith(f"deleted from {main} on ")
            assert word in hit.snippet  # the hit is built from the vault's copy
        store.rebuild()  # a new index: indexed again from the vault, subagents included
        [hit] = store.search("cormorant", limit=5)
        assert hit.session_id == SID and hit.kept is not None
    finally:
        store.close()
    data, version, n = load_session(SID)  # show ID, the viewer
    assert n == 1 and "cormorant" in said(data) and "grebe" in said(data)
    exported = kept_session(SID)  # export of a session no store has
    assert exported is not None and "cormorant" in said(exported) and "grebe" in said(exported)
    with Vault() as vault:
        assert [v.vid for v in vault.versions(SID)] == [version.vid]  # parts are no versions
        assert sorted(rel for _p, rel in parts_of(vault, version)) == [
            f"{SID}/subagents/agent-a1.jsonl",
            "agent-b2.jsonl",
        ]
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        vault.restore(version, to=elsewhere)
        assert contents(elsewhere) == original  # the same layout, relative to the main file
        vault.restore(version)
    assert contents(root / "proj") == original  # byte-identical, where they were


def test_restore_writes_nothing_when_one_file_exists(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    main, folder_sub, sibling, _sub = session_dir(root)
    store = index_store(SOURCES["claude"], root, vault=True)
    store.close()
    delete_session(main, sibling)
    folder_sub.parent.mkdir(parents=True)
    folder_sub.write_bytes(b"a newer run")
    with Vault() as vault:
        [version] = vault.versions(SID)
        with pytest.raises(VaultError, match="never writes over a file"):
            vault.restore(version)
    assert contents(root) == {f"proj/{SID}/subagents/agent-a1.jsonl": b"a newer run"}


def test_an_appended_subagent_file_stores_only_what_was_appended(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    main, folder_sub, sibling, sub = session_dir(root)
    for i in range(300):
        sub.prompt(f"check nest {i} on the north bank and its ledger")
        sub.answer(f"n{i}", text(f"nest {i}: cormorant chicks counted in step {i * 7}"))
    sub.write(folder_sub)
    store = index_store(SOURCES["claude"], root, vault=True)
    try:
        packs = default_vault_dir() / "packs"
        first = chunk_bytes_on_disk(packs.parent)
        n = len(sub.lines)
        sub.prompt("and the kingfisher?")
        sub.answer("last", text("One kingfisher on the bank."))
        append(folder_sub, sub.lines[n:])
        store.reconcile()
        grown = chunk_bytes_on_disk(packs.parent) - first
        assert [h.session_id for h in store.search("kingfisher")] == [SID]
    finally:
        store.close()
    appended = sum(len(json.dumps(x)) + 1 for x in sub.lines[n:])
    assert 0 < grown < appended + 100, (grown, appended)  # a header and the appended bytes
    assert grown * 20 < first, (grown, first)
    with Vault() as vault:
        old, new = vault.versions(SID)
        assert new.chunks == old.chunks  # the main file did not change: no byte stored again
        [(part, _rel)] = [p for p in parts_of(vault, new) if p[1].endswith("agent-a1.jsonl")]
        assert len(part.chunks) == 2 and vault.read(part) == folder_sub.read_bytes()
        count, size = parts_size(vault, new)
        assert count == 2 and size == folder_sub.stat().st_size + sibling.stat().st_size
        assert new.size == main.stat().st_size
        [(before, _r)] = [p for p in parts_of(vault, old) if p[1].endswith("agent-a1.jsonl")]
        assert vault.read(before) == folder_sub.read_bytes()[: before.size]
        # The older version goes, and the part version only it named (their bytes stay:
        # the newer versions hold them).
        assert vault.prune(0) == 0
        assert vault.versions(SID) == [new] and vault.check() == []
        assert [vault.read(p) for p, _r in parts_of(vault, new)] == [
            folder_sub.read_bytes(),
            sibling.read_bytes(),
        ]
        with sqlite3.connect(default_vault_dir() / "catalog.sqlite") as db:
            assert db.execute("SELECT count(*) FROM versions").fetchone() == (3,)


def test_a_damaged_subagent_copy_is_reported_never_served(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    main, _folder_sub, sibling, _sub = session_dir(root)
    index_store(SOURCES["claude"], root, vault=True).close()
    vault_dir = default_vault_dir()
    with Vault() as vault:
        [version] = vault.versions(SID)
        [(part, _rel)] = [p for p in parts_of(vault, version) if p[1].endswith("agent-a1.jsonl")]
    damage_entry(vault_dir, zlib.compress(b"other bytes"), part.chunks[0])
    delete_session(main, sibling)
    with Vault() as vault:
        assert len(vault.check()) == 1
        with pytest.raises(VaultDamaged):
            vault.restore(version)
    assert not root.joinpath("proj").exists() or contents(root) == {}  # nothing written
    with pytest.raises(VaultDamaged):
        load_session(SID)
    assert kept_session(SID) is None
    with sqlite3.connect(vault_dir / "catalog.sqlite") as db:
        assert db.execute("SELECT count(*) FROM files WHERE part_of IS NOT NULL").fetchone() == (2,)


def test_vault_log_and_restore_count_the_subagent_files(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from session_browser.cli import main as cli

    root = tmp_path / "projects"
    main, folder_sub, sibling, _sub = session_dir(root)
    sizes = main.stat().st_size, folder_sub.stat().st_size + sibling.stat().st_size
    index_store(SOURCES["claude"], root, vault=True).close()
    delete_session(main, sibling)
    res = CliRunner().invoke(cli, ["vault", "log", SID, "--json"])
    [row] = json.loads(res.stdout)["versions"]
    assert (row["size"], row["subagent_files"], row["subagent_bytes"]) == (sum(sizes), 2, sizes[1])
    res = CliRunner().invoke(cli, ["vault", "log", SID])
    assert f"{sum(sizes):,} bytes (with 2 subagent files)" in res.stdout
    res = CliRunner().invoke(cli, ["vault", "restore", SID])
    assert res.exit_code == 0 and "and 2 subagent files" in res.stdout
    assert main.is_file() and folder_sub.is_file() and sibling.is_file()


def test_a_real_claude_code_session_with_subagents_survives_its_deletion(
    tmp_path: Path, shared_data: Path
) -> None:
    real = shared_data / "claude" / "spotter"
    sid = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
    root = tmp_path / "projects"
    shutil.copytree(real / sid, root / "proj" / sid)
    shutil.copy(real / f"{sid}.jsonl", root / "proj")
    original = contents(root / "proj")
    store = index_store(SOURCES["claude"], root, vault=True)
    try:
        assert [h.session_id for h in store.search("erlang")] == [sid]  # a subagent's word
        shutil.rmtree(root / "proj")  # Claude Code's cleanup: the main file and its folder
        (root / "proj").mkdir()
        assert store.reconcile().removed == 1
        [hit] = store.search("erlang", limit=5)
        assert hit.session_id == sid and hit.kept is not None
        assert hit.kept.startswith("deleted from ")
    finally:
        store.close()
    data, version, _n = load_session(sid)
    assert "erlang" in said(data).lower()
    with Vault() as vault:
        assert parts_size(vault, version)[0] == 2  # the subagent and the compaction run
        vault.restore(version)
    assert contents(root / "proj") == original


def test_an_index_fed_before_subagents_were_kept_keeps_them_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from session_browser.core.sources.claude.source import ClaudeSource

    root = tmp_path / "projects"
    main, _folder_sub, sibling, _sub = session_dir(root)
    original = contents(root / "proj")
    with monkeypatch.context() as m:
        # a vault that kept main files only
        m.setattr(ClaudeSource, "part_files", property(lambda _self: None))
        index_store(SOURCES["claude"], root, vault=True).close()
    with Vault() as vault:
        [version] = vault.versions(SID)
        assert parts_size(vault, version) == (0, 0)
    # nothing changed: the index only settles
    store = index_store(SOURCES["claude"], root, vault=True)
    store.close()
    delete_session(main, sibling)
    data, version, n = load_session(SID)
    assert n == 2 and "cormorant" in said(data) and "grebe" in said(data)
    with Vault() as vault:
        first, second = vault.versions(SID)
        assert second.chunks == first.chunks  # the same main bytes, now with its parts
        vault.restore(second)
    assert contents(root / "proj") == original
