"""The vault: exact bytes kept once, appends stored as appends, damage reported, restore
byte-identical and never over a file, prune that never drops a last copy."""

from __future__ import annotations

import multiprocessing
import os
import random
import sqlite3
import stat
import zlib
from pathlib import Path

import pytest

from session_browser.core.vault import Vault, VaultDamaged, VaultError

WORDS = [
    "billing",
    "migration",
    "stripe",
    "ledger",
    "invoice",
    "retry",
    "webhook",
    "cutover",
    "shadow",
    "table",
]


def jsonl(lines: int, seed: int) -> bytes:
    rng = random.Random(seed)
    out = []
    for i in range(lines):
        text = " ".join(rng.choice(WORDS) + str(rng.randrange(10_000)) for _ in range(12))
        out.append(f'{{"type":"user","n":{i},"message":{{"content":"{text}"}}}}\n')
    return "".join(out).encode()


def stored_on_disk(root: Path) -> int:
    return sum(p.stat().st_size for p in (root / "packs").glob("*.pack"))


def objects(root: Path) -> int:
    with sqlite3.connect(root / "catalog.sqlite") as db:
        return int(db.execute("SELECT count(*) FROM objects").fetchone()[0])


def damage_entry(root: Path, payload: bytes, digest: str | None = None) -> None:
    """Put ``payload`` (raw, as the pack stores it) in place of the data of entry ``digest``
    (the first one by default)."""
    with sqlite3.connect(root / "catalog.sqlite") as db:
        pack, offset = db.execute(
            "SELECT pack, offset FROM objects WHERE hash = coalesce(?, hash) LIMIT 1", (digest,)
        ).fetchone()
    path = root / "packs" / f"{pack:06d}.pack"
    with open(path, "r+b") as fh:
        fh.seek(offset)
        head = fh.read(40)
        fh.seek(offset)
        fh.write(head + len(payload).to_bytes(8, "big") + payload)


def test_round_trip_and_the_same_bytes_stored_once(tmp_path: Path) -> None:
    data = jsonl(200, 1)
    with Vault(tmp_path / "vault") as vault:
        first = vault.keep("claude", "/p/a.jsonl", "a", data, messages=200)
        assert first is not None and vault.read(first) == data
        assert vault.keep("claude", "/p/a.jsonl", "a", data) is None  # nothing new
        copy = vault.keep("claude", "/p/copy.jsonl", "a", data)  # another file, same bytes
        assert copy is not None and copy.chunks == first.chunks
        assert objects(tmp_path / "vault") == 1
        assert [v.vid for v in vault.versions("a")] == [first.vid, copy.vid]


def test_an_appended_file_stores_only_what_was_appended(tmp_path: Path) -> None:
    base = jsonl(5000, 2)
    grown = base + jsonl(50, 3)
    with Vault(tmp_path / "vault") as vault:
        v1 = vault.keep("codex", "/s/r.jsonl", "r", base)
        before = stored_on_disk(tmp_path / "vault")
        v2 = vault.keep("codex", "/s/r.jsonl", "r", grown)
        added = stored_on_disk(tmp_path / "vault") - before
        assert v1 is not None and v2 is not None
        assert v2.chunks[:-1] == v1.chunks and len(v2.chunks) == 2
        assert vault.read(v2) == grown and vault.read(v1) == base
        # The appended 50 lines cost about what they weigh compressed, not the whole file.
        assert added < len(grown) - len(base)
        assert added * 20 < before, (added, before)
        # A rewrite (not an append) is stored whole.
        v3 = vault.keep("codex", "/s/r.jsonl", "r", grown[100:])
        assert v3 is not None and len(v3.chunks) == 1


def test_a_damaged_entry_is_reported_never_served(tmp_path: Path) -> None:
    data = jsonl(100, 4)
    with Vault(tmp_path / "vault") as vault:
        version = vault.keep("praisonai", "/s/x.json", "x", data)
        assert version is not None and vault.check() == []
        raw = bytearray(data)
        raw[10] ^= 0x01  # one flipped bit, still valid zlib once compressed
        damage_entry(tmp_path / "vault", zlib.compress(bytes(raw)))
        with pytest.raises(VaultDamaged):
            vault.read(version)
        assert len(vault.check()) == 1
        target = tmp_path / "back"
        target.mkdir()
        with pytest.raises(VaultDamaged):
            vault.restore(version, to=target)
        assert list(target.iterdir()) == []
        damage_entry(tmp_path / "vault", b"not zlib")
        with pytest.raises(VaultDamaged):
            vault.read(version)


def test_restore_is_byte_identical_private_and_never_over_a_file(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    original = sessions / "s1.json"
    data = b'{"session_id": "s1", "messages": []}\n'
    original.write_bytes(data)
    with Vault(tmp_path / "vault") as vault:
        version = vault.keep("praisonai", original, "s1", data)
        assert version is not None
        with pytest.raises(VaultError, match="exists"):
            vault.restore(version)
        assert original.read_bytes() == data
        original.unlink()
        assert vault.mark_gone("praisonai", original)
        [gone] = vault.latest(gone_only=True)
        assert gone.vid == version.vid and gone.gone_at is not None
        back = vault.restore(version)
        assert back == original and back.read_bytes() == data
        assert stat.S_IMODE(back.stat().st_mode) == 0o600
        assert [p.name for p in sessions.iterdir()] == ["s1.json"]  # no temp file left
        other = tmp_path / "elsewhere"
        other.mkdir()
        assert vault.restore(version, to=other).read_bytes() == data
        # Seen again: no longer gone.
        vault.keep("praisonai", original, "s1", data)
        assert vault.latest(gone_only=True) == []


def test_every_file_is_private_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        with Vault(tmp_path / "vault") as vault:
            vault.keep("pi", "/p/s.jsonl", "s", jsonl(10, 5))
    finally:
        os.umask(old)
    root = tmp_path / "vault"
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))


def test_prune_drops_old_versions_of_live_files_first_and_never_a_last_copy(
    tmp_path: Path,
) -> None:
    with Vault(tmp_path / "vault") as vault:
        for i in range(4):  # live file: 4 rewrites
            vault.keep("praisonai", "/s/live.json", "live", jsonl(300, 10 + i), now=100.0 + i)
        for i in range(3):  # a file later found gone: 3 rewrites
            vault.keep("praisonai", "/s/gone.json", "gone", jsonl(300, 20 + i), now=50.0 + i)
        vault.mark_gone("praisonai", "/s/gone.json")
        assert vault.prune(0) > 0  # a budget nothing fits: only what may go goes
        assert len(vault.versions("live")) == 1 and len(vault.versions("gone")) == 3
        assert vault.prune(0, gone_too=True) > 0
        [live] = vault.versions("live")
        [gone] = vault.versions("gone")
        assert vault.read(live) == jsonl(300, 13) and vault.read(gone) == jsonl(300, 22)
        assert vault.check() == []
        stats = vault.stats()
        assert (stats.files, stats.versions, stats.gone) == (2, 2, 1)
        assert stats.stored_bytes == stored_on_disk(tmp_path / "vault")


def _keeper(root: str, name: str, rounds: int) -> None:
    with Vault(Path(root)) as vault:
        data = b""
        for i in range(rounds):
            data += jsonl(20, hash((name, i)) & 0xFFFF)
            vault.keep("pi", f"/p/{name}.jsonl", name, data)
            if i % 5 == 4:
                vault.prune(0)


def test_processes_keeping_and_pruning_at_once_leave_every_latest_version_readable(
    tmp_path: Path,
) -> None:
    root = tmp_path / "vault"
    Vault(root).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_keeper, args=(str(root), f"s{i}", 15)) for i in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    with Vault(root) as vault:
        latest = vault.latest()
        assert sorted(v.session_id for v in latest) == ["s0", "s1", "s2"]
        for version in latest:
            assert len(vault.read(version)) == version.size
        assert vault.check() == []
