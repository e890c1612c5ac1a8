"""The vault against a damaged data dir and hostile session files: a lost catalog never costs
a pack and is rebuilt from them; the vault keeps regular files only and restores through no
symlink; loose modes are tightened, a symlinked vault refused."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from session_browser.core.open import index_store
from session_browser.core.vault import Vault, VaultError
from session_browser.core.vault.parts import keep_parts
from tests.core.test_vault import jsonl


def rebuild(root: Path) -> Any:
    from session_browser.core.vault.rebuild import rebuild as rebuild_catalog

    return rebuild_catalog(root)


def sessions(root: Path) -> dict[Path, bytes]:
    """Two transcripts, one with a subagent file, one grown by an append."""
    files = {
        root / "proj" / "a.jsonl": jsonl(200, 1),
        root / "proj" / "a" / "subagents" / "agent-1.jsonl": jsonl(50, 2),
        root / "proj" / "b.jsonl": jsonl(100, 3),
    }
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return files


def test_a_lost_catalog_costs_no_pack_and_is_rebuilt_from_the_packs(tmp_path: Path) -> None:
    """The catalog-loss test: keep, delete the sessions, lose the catalog, keep again,
    rebuild: every deleted session comes back byte-identical, with its subagent file."""
    root = tmp_path / "projects"
    files = sessions(root)
    a, sub, b = files
    vroot = tmp_path / "vault"
    with Vault(vroot) as vault:
        v = vault.keep_file("claude", a, "a", now=100.0)
        keep_parts(vault, "claude", a, "a", [sub], added=v, now=100.0)
        vault.keep_file("claude", b, "b", now=100.0)
        b.write_bytes(files[b] + jsonl(10, 4))  # grown: stored as an append
        vault.keep_file("claude", b, "b", now=101.0)
        vault.mark_gone("claude", a, now=102.0)
    grown_b = b.read_bytes()
    for path in files:
        path.unlink()
    pack1 = vroot / "packs" / "000001.pack"
    before = pack1.read_bytes()
    for lost in ("deleted", "empty"):
        catalog = vroot / "catalog.sqlite"
        if lost == "deleted":
            catalog.unlink()
        else:
            catalog.write_bytes(b"")
        other = root / "proj" / f"c-{lost}.jsonl"
        other.write_bytes(jsonl(30, 5))
        with Vault(vroot) as vault:
            assert vault.keep_file("claude", other, f"c-{lost}", now=200.0) is not None
            problems = vault.check()
        assert pack1.read_bytes() == before  # never cut, never written to
        assert any("000001.pack" in p and "not in the catalog" in p for p in problems), problems
    packs = sorted(p.name for p in (vroot / "packs").iterdir())
    assert packs == ["000001.pack", "000002.pack", "000003.pack"]
    done = rebuild(vroot)
    assert done.problems == [] and done.missing == 0
    assert done.old_catalog is not None and done.old_catalog.exists()  # moved aside, kept
    assert pack1.read_bytes() == before
    with Vault(vroot) as vault:
        assert vault.check() == []
        [va] = vault.versions("a")
        assert va.gone_at == 102.0
        assert [x.size for x in vault.versions("b")] == [len(files[b]), len(grown_b)]
        assert {x.session_id for x in vault.latest()} == {"a", "b", "c-deleted", "c-empty"}
        out = vault.restore(va)
        assert out == a and a.read_bytes() == files[a] and sub.read_bytes() == files[sub]
        vault.restore(vault.versions("b")[-1])
        assert b.read_bytes() == grown_b
        # what is kept after a rebuild goes to a new pack, and a second rebuild holds it too
        b.unlink()
        b.write_bytes(jsonl(5, 9))
        vault.keep_file("claude", b, "b", now=300.0)
    assert pack1.read_bytes() == before
    again = rebuild(vroot)
    assert (again.files, again.versions) == (done.files, done.versions + 1)


def test_descriptions_cost_what_a_version_adds_not_the_whole_file(tmp_path: Path) -> None:
    data = b""
    with Vault(tmp_path / "vault") as vault:
        for i in range(300):
            data += jsonl(1, i)
            vault.keep("pi", "/p/s.jsonl", "s", data, now=float(i))
    size = sum(p.stat().st_size for p in (tmp_path / "vault" / "packs").iterdir())
    assert size < 300 * 1000, size  # one small description per version, not 300 chunk lists
    assert rebuild(tmp_path / "vault").versions == 300
    with Vault(tmp_path / "vault") as vault:
        assert vault.read(vault.versions("s")[-1]) == data


def test_an_older_vault_describes_what_it_kept_on_upgrade(tmp_path: Path) -> None:
    import sqlite3

    vroot = tmp_path / "vault"
    with Vault(vroot) as vault:
        vault.keep("claude", "/p/a.jsonl", "a", b'{"a": 1}\n', messages=1)
    pack = vroot / "packs" / "000001.pack"
    from session_browser.core.vault.format import MAGIC, scan_pack

    with open(pack, "r+b") as fh:  # as a build before descriptions wrote it: chunks only
        end = max(o + 48 + n for o, m, _f, _d, n in scan_pack(fh) if m == MAGIC)
        fh.truncate(end)
    with sqlite3.connect(vroot / "catalog.sqlite") as db:
        db.execute("UPDATE meta SET value = '3' WHERE key = 'schema'")
        db.execute("UPDATE packs SET end = ?", (end,))
    Vault(vroot).close()  # the upgrade describes it
    (vroot / "catalog.sqlite").unlink()
    assert rebuild(vroot).versions == 1
    with Vault(vroot) as vault:
        assert vault.read(vault.versions("a")[0]) == b'{"a": 1}\n'


def test_damaged_catalog_is_one_vault_error(tmp_path: Path) -> None:
    vroot = tmp_path / "vault"
    with Vault(vroot) as vault:
        vault.keep("claude", "/p/a.jsonl", "a", jsonl(50, 1))
    (vroot / "catalog.sqlite").write_bytes(os.urandom(5000))
    with pytest.raises(VaultError, match=r"catalog .* is damaged.*vault rebuild"):
        Vault(vroot)


def test_loose_modes_are_tightened_and_a_symlinked_vault_refused(tmp_path: Path) -> None:
    vroot = tmp_path / "vault"
    with Vault(vroot) as vault:
        vault.keep("claude", "/p/a.jsonl", "a", jsonl(50, 1))
    for path in (vroot, vroot / "packs"):
        os.chmod(path, 0o777)
    for path in (vroot / "catalog.sqlite", vroot / "packs" / "000001.pack"):
        os.chmod(path, 0o666)
    Vault(vroot).close()
    for path in [vroot, *vroot.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))
    link = tmp_path / "linked"
    link.symlink_to(vroot)
    with pytest.raises(VaultError, match="is a symlink"):
        Vault(link)
    (vroot / "packs").rename(tmp_path / "packs-real")
    (vroot / "packs").symlink_to(tmp_path / "packs-real")
    with pytest.raises(VaultError, match="is a symlink"):
        Vault(vroot)


def test_symlinks_and_special_files_are_never_kept(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_bytes(b"not a session\n")
    (root / "proj" / "a" / "subagents").mkdir(parents=True)
    main = root / "proj" / "a.jsonl"
    main.write_bytes(jsonl(10, 1))
    linked = root / "proj" / "a" / "subagents" / "agent-x.jsonl"
    linked.symlink_to(secret)
    fifo = root / "proj" / "a" / "subagents" / "agent-f.jsonl"
    os.mkfifo(fifo)
    (root / "elsewhere").symlink_to(secret.parent, target_is_directory=True)
    via_dir = root / "elsewhere" / "secret.txt"
    with Vault(tmp_path / "vault") as vault:
        for path in (linked, fifo):
            with pytest.raises(OSError, match="not a regular file"):
                vault.keep_file("claude", path, "a")
        with pytest.raises(OSError, match="through a symlink"):
            vault.keep_file("claude", via_dir, "a", root=root)
        with pytest.raises(OSError, match="outside"):
            vault.keep_file("claude", secret, "a", root=root)
        added = vault.keep_file("claude", main, "a", root=root)
        kept = keep_parts(vault, "claude", main, "a", [linked, fifo], added=added)
        assert kept is not None
        assert vault.stats().files == 1  # the main file only
        assert all(b"not a session" not in vault.read(v) for v in vault.latest(parts=True))


def test_restore_never_writes_through_a_symlink(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    files = sessions(root)
    a, sub, _b = files
    with Vault(tmp_path / "vault") as vault:
        v = vault.keep_file("claude", a, "a")
        v = keep_parts(vault, "claude", a, "a", [sub], added=v)
        assert v is not None
        for path in files:
            path.unlink()
        target = tmp_path / "target"
        target.mkdir()
        # the session dir replaced by a link to elsewhere
        (root / "proj" / "a" / "subagents").rmdir()
        (root / "proj" / "a").rmdir()
        (root / "proj").rmdir()
        (root / "proj").symlink_to(target, target_is_directory=True)
        with pytest.raises(VaultError, match="symlink"):
            vault.restore(v)
        assert list(target.iterdir()) == []
        # --to a dir holding a link to elsewhere for the subagents dir
        into = tmp_path / "into"
        into.mkdir()
        (into / "a").symlink_to(target, target_is_directory=True)
        with pytest.raises(VaultError, match="symlink"):
            vault.restore(v, to=into)
        assert list(target.iterdir()) == [] and sorted(into.iterdir()) == [into / "a"]
        linked_to = tmp_path / "linked-to"
        linked_to.symlink_to(into, target_is_directory=True)
        with pytest.raises(VaultError, match="symlink"):
            vault.restore(v, to=linked_to)
        (into / "a").unlink()
        out = vault.restore(v, to=into)
        assert out.read_bytes() == files[a]
        assert (into / "a" / "subagents" / "agent-1.jsonl").read_bytes() == files[sub]


def test_the_index_never_hands_the_vault_a_link(tmp_path: Path) -> None:
    """Whatever a source reads, the vault keeps regular files inside its root only: a
    subagent file that links to a file outside the tree, a Codex rollout that is a link."""
    from session_browser.core.sources import SOURCES
    from session_browser.core.vault import default_vault_dir
    from tests.core.test_codex import TID, Rollout, rollout_path
    from tests.core.test_vault_subagents import SID, session_dir

    secret = tmp_path / "outside" / "shadow"
    secret.parent.mkdir()
    secret.write_bytes(b'{"type":"user","message":{"content":"root:secret-hash"}}\n')
    root = tmp_path / "projects"
    main, folder_sub, _sibling, _sub = session_dir(root)
    (folder_sub.parent / "agent-x.jsonl").symlink_to(secret)
    store = index_store(SOURCES["claude"], root, vault=True)
    store.close()
    codex = tmp_path / "codex"
    r = Rollout(TID)
    r.prompt("what does the plover module do")
    real = r.write(tmp_path / "elsewhere" / "rollout.jsonl")
    linked = rollout_path(codex)
    linked.parent.mkdir(parents=True)
    linked.symlink_to(real)
    index_store(SOURCES["codex"], codex, vault=True).close()
    with Vault(default_vault_dir()) as vault:
        kept = {v.path for v in vault.latest(parts=True)}
        assert str(main) in kept and str(folder_sub) in kept  # the regular files are kept
        assert not any("agent-x" in p or "rollout" in p for p in kept), kept
        for v in vault.latest(parts=True):
            assert b"secret-hash" not in vault.read(v)
        assert {v.session_id for v in vault.latest()} == {SID}


def test_a_prune_that_rewrites_packs_keeps_their_descriptions(tmp_path: Path) -> None:
    vroot = tmp_path / "vault"
    with Vault(vroot) as vault:
        for i in range(4):
            vault.keep("praisonai", "/s/live.json", "live", jsonl(300, 10 + i), now=100.0 + i)
        vault.keep("praisonai", "/s/gone.json", "gone", jsonl(300, 20), now=50.0)
        vault.mark_gone("praisonai", "/s/gone.json", now=60.0)
        assert vault.prune(0) > 0
        assert not (vroot / "packs" / "000001.pack").exists()  # rewritten, then removed
        latest = {v.session_id: vault.read(v) for v in vault.latest()}
    (vroot / "catalog.sqlite").unlink()
    done = rebuild(vroot)
    assert done.problems == [] and done.files == 2
    with Vault(vroot) as vault:
        assert vault.check() == []
        assert {v.session_id: vault.read(v) for v in vault.latest()} == latest
        assert vault.versions("gone")[-1].gone_at == 60.0


def test_a_batch_looks_at_each_folder_once_and_never_takes_a_link_for_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files of one batch kept share their folders' look (the first build keeps
    thousands in one folder): a folder found real is not looked at again, a symlinked one
    is refused each time and never taken for real."""
    from session_browser.core.vault import safety

    root = tmp_path / "projects"
    (root / "proj").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / "linked").symlink_to(elsewhere, target_is_directory=True)
    names = [root / "proj" / f"{n}.jsonl" for n in "abc"] + [elsewhere / "d.jsonl"]
    for path in names:
        path.write_bytes(jsonl(3, 1))
    looked: list[str] = []
    real_lstat = os.lstat

    def lstat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        looked.append(os.fspath(path))
        return real_lstat(path, *args, **kwargs)

    monkeypatch.setattr(safety.os, "lstat", lstat)
    real_dirs: set[str] = set()
    for path in names[:3]:
        safety.regular_under(path, root, real_dirs)
    assert looked.count(str(root / "proj")) == 1  # once for the three files
    assert real_dirs == {str(root / "proj")}
    for _ in range(2):
        with pytest.raises(OSError, match="through a symlink"):
            safety.regular_under(root / "linked" / "d.jsonl", root, real_dirs)
    assert looked.count(str(root / "linked")) == 2 and real_dirs == {str(root / "proj")}
    with pytest.raises(OSError, match="outside"):
        safety.regular_under(elsewhere / "d.jsonl", root, real_dirs)
