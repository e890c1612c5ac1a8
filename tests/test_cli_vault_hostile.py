"""``session-browser vault`` on a damaged data dir and hostile kept paths: a damaged catalog is
one line naming it and the rebuild (exit 1), a lost one is reported and rebuilt, a symlinked
vault is refused, and no kept path steers the terminal."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from session_browser.core.vault import Vault, default_vault_dir
from tests.test_cli_vault import fill, run


def damage(catalog: Path, how: str) -> None:
    data = catalog.read_bytes()
    if how == "garbage":
        catalog.write_bytes(b"\x5a" * len(data))
    elif how == "half":
        catalog.write_bytes(data[: len(data) // 2])
    else:  # every page but the first flipped
        page = int.from_bytes(data[16:18], "big")
        catalog.write_bytes(data[:page] + bytes(b ^ 0xFF for b in data[page:]))


def checkpointed(n: int = 40) -> Path:
    """A vault keeping session s1 (its file gone) and enough more for a catalog of many
    pages, all in the catalog file (no journal beside it)."""
    path, _versions = fill(Path.cwd() / "sessions")
    with Vault(default_vault_dir()) as vault:
        for i in range(n):
            vault.keep("praisonai", f"/gone/x{i}.json", f"x{i}", b'{"x": %d}' % i * 50)
        vault.mark_gone("praisonai", path)
    catalog = default_vault_dir() / "catalog.sqlite"
    assert not (default_vault_dir() / "catalog.sqlite-wal").exists() or not os.path.getsize(
        default_vault_dir() / "catalog.sqlite-wal"
    )
    return catalog


@pytest.mark.parametrize("how", ["garbage", "half", "flipped"])
def test_a_damaged_catalog_is_one_line_naming_it_and_the_rebuild(how: str) -> None:
    catalog = checkpointed()
    code, out, err = run("show", "s1")
    assert code == 0 and "version 3, kept" in out, err  # read from the vault while it is sound
    damage(catalog, how)
    for args in (["vault", "check"], ["vault", "status"], ["show", "s1"], ["vault", "log", "s1"]):
        code, out, err = run(*args)
        assert code == 1, (args, code, out, err)
        assert err.count("\n") == 1 and "internal error" not in err, (args, err)
        assert str(catalog) in err and "damaged" in err and "vault rebuild" in err, (args, err)
    code, out, err = run("doctor", "--json")  # says so too, never fails on it
    assert code == 0 and "damaged" in json.loads(out)["vault"]["error"], (out, err)


def test_a_lost_catalog_is_reported_and_rebuilt_from_the_packs(tmp_path: Path) -> None:
    path, versions = fill(tmp_path / "sessions")
    packs = default_vault_dir() / "packs"
    size = (packs / "000001.pack").stat().st_size
    (default_vault_dir() / "catalog.sqlite").unlink()
    code, out, _err = run("vault", "check")
    assert code == 1 and f"000001.pack ({size:,} bytes) is not in the catalog" in out, out
    code, out, _err = run("vault", "status")
    assert "1 packs" in out and "not in the catalog" in out, out
    code, out, err = run("vault", "rebuild")
    assert code == 0 and "1 files, 3 versions" in out, (out, err)
    assert "kept as" in out
    code, out, _err = run("vault", "check")
    assert code == 0 and "the vault is sound" in out
    code, _out, err = run("vault", "restore", "s1", "--version", "2")
    assert code == 0 and path.read_bytes() == versions[1], err


def test_a_symlinked_vault_is_refused_in_one_line(tmp_path: Path) -> None:
    real = tmp_path / "real-vault"
    Vault(real).close()
    default_vault_dir().parent.mkdir(parents=True, exist_ok=True)
    default_vault_dir().symlink_to(real, target_is_directory=True)
    for args in (["vault", "status"], ["vault", "rebuild"]):
        code, _out, err = run(*args)
        assert code == 1 and err.count("\n") == 1 and "is a symlink" in err, (args, err)


HOSTILE = "/tmp/evil\x1b]52;c;aGVsbG8=\x07\x1b]0;title\x07\u202egpj.jsonl"


def test_kept_paths_never_steer_the_terminal() -> None:
    with Vault(default_vault_dir()) as vault:
        vault.keep("claude", HOSTILE, "h1", b'{"type":"user"}\n', messages=1)
        vault.mark_gone("claude", HOSTILE)
    for args in (["vault", "log", "h1"], ["vault", "log", "h1", "--json"], ["vault", "status"]):
        code, out, err = run(*args)
        assert code == 0, (args, err)
        for bad in ("\x1b", "\x07", "\u202e"):
            assert bad not in out and bad not in err, (args, out)
    code, out, _err = run("vault", "log", "h1")
    assert "evil" in out and "gpj.jsonl" in out
    code, out, _err = run("vault", "log", "h1", "--json")
    assert json.loads(out)["versions"][0]["path"] == HOSTILE  # the data itself is unchanged
    elsewhere = Path.cwd() / "into"
    elsewhere.mkdir()
    code, out, err = run("vault", "restore", "h1", "--to", str(elsewhere))
    assert code == 0, err
    assert all(bad not in out for bad in ("\x1b", "\x07", "\u202e")), out
