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
from typing import Any

import pytest

from session_browser.core.vault import Vault, VaultDamaged, VaultError
from session_browser.core.vault.format import _HEADER, MAGIC, scan_pack

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


def chunk_bytes_on_disk(root: Path) -> int:
    """The bytes of the chunks in the packs (not of the descriptions beside them)."""
    total = 0
    for path in (root / "packs").glob("*.pack"):
        with open(path, "rb") as fh:
            total += sum(
                _HEADER.size + length
                for _o, magic, _f, _d, length in scan_pack(fh)
                if magic == MAGIC
            )
    return total


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
        assert stats.stored_bytes == chunk_bytes_on_disk(tmp_path / "vault")


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


def test_a_batch_of_files_kept_at_once_reads_back_as_kept_one_by_one(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    one, two, grown = jsonl(40, 10), jsonl(40, 11), jsonl(40, 12)
    with Vault(root) as vault:
        old = vault.keep("praisonai", "/s/old.json", "old", grown[:2000])
        added = vault.keep_many(
            "praisonai",
            [
                ("/s/a.json", "a", one, 40),
                ("/s/same.json", "same", one, 40),  # the same bytes as a.json: stored once
                ("/s/b.json", "b", two, 40),
                ("/s/old.json", "old", grown, 40),  # seen before, only grew: an append
                ("/s/keep.json", "keep", b"", None),
            ],
        )
        assert added == 5
        latest = {v.path: v for v in vault.latest()}
        assert vault.read(latest["/s/a.json"]) == vault.read(latest["/s/same.json"]) == one
        assert vault.read(latest["/s/b.json"]) == two
        assert latest["/s/a.json"].messages == 40 and latest["/s/keep.json"].messages is None
        assert old is not None and latest["/s/old.json"].chunks[:-1] == old.chunks
        assert vault.read(latest["/s/old.json"]) == grown
        assert objects(root) == 5  # old's start, its append, one, two, the empty file
        # Kept again as they are: nothing new; the same path twice in a batch: one version.
        assert vault.keep_many("praisonai", [("/s/a.json", "a", one, 40)]) == 0
        assert vault.keep_many("praisonai", [("/s/c.json", "c", one, 1)] * 2) == 1
        assert vault.check() == []


def test_a_batch_that_fails_leaves_nothing_named_and_its_bytes_are_cut(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    with Vault(root) as vault:
        vault.keep("praisonai", "/s/first.json", "first", jsonl(30, 20))
        end = stored_on_disk(root)
        with pytest.raises(RuntimeError), vault.batch():
            vault.keep_many("praisonai", [("/s/x.json", "x", jsonl(30, 21), 30)])
            raise RuntimeError("crash before the commit")
        assert stored_on_disk(root) > end  # its bytes were written, never named
        assert [v.path for v in vault.latest()] == ["/s/first.json"]
    with Vault(root) as vault:
        later = vault.keep_many("praisonai", [("/s/y.json", "y", jsonl(30, 22), 30)])
        assert later == 1 and vault.check() == []
        assert {v.path for v in vault.latest()} == {"/s/first.json", "/s/y.json"}
        with sqlite3.connect(root / "catalog.sqlite") as db:
            (pack_end,) = db.execute("SELECT end FROM packs").fetchone()
        assert stored_on_disk(root) == pack_end


def test_an_older_vault_is_upgraded_and_a_newer_one_refused(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    with Vault(root) as vault:
        vault.keep("claude", "/p/a.jsonl", "a", b'{"a": 1}\n', messages=1)
    catalog = root / "catalog.sqlite"
    with sqlite3.connect(catalog) as db:  # as a build before subagent parts left it
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema'")
    with Vault(root) as vault:
        assert [v.size for v in vault.versions("a")] == [9]
    with sqlite3.connect(catalog) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == ("5",)
        db.execute("UPDATE meta SET value = '6' WHERE key = 'schema'")
    with pytest.raises(VaultError, match="has schema 6, this version reads 5"):
        Vault(root)


def test_a_vault_of_schema_4_keeps_its_plain_descriptions_readable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from session_browser.core.vault import store as vault_store
    from session_browser.core.vault.format import DESCRIBED, DESCRIBED_Z, RECORD, scan_pack
    from session_browser.core.vault.rebuild import rebuild

    def plain(record: dict[str, Any]) -> tuple[int, bytes]:  # as schema 4 wrote them
        return DESCRIBED, json.dumps(record, separators=(",", ":")).encode()

    root = tmp_path / "vault"
    deflated = vault_store.encode_description
    monkeypatch.setattr(vault_store, "encode_description", plain)
    with Vault(root) as vault:
        vault.keep("claude", "/p/a.jsonl", "a", b'{"a": 1}\n', messages=1)
    monkeypatch.setattr(vault_store, "encode_description", deflated)  # (not undo(): the data dir)
    catalog = root / "catalog.sqlite"
    with sqlite3.connect(catalog) as db:
        db.execute("UPDATE meta SET value = '4' WHERE key = 'schema'")
    with Vault(root) as vault:  # upgraded in place: what it describes now is deflated
        vault.keep("claude", "/p/b.jsonl", "b", b'{"b": 2}\n', messages=1)
    with sqlite3.connect(catalog) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == ("5",)
    with open(root / "packs" / "000001.pack", "rb") as fh:
        flags = [flag for _o, magic, flag, _d, _n in scan_pack(fh) if magic == RECORD]
    assert flags == [DESCRIBED, DESCRIBED_Z]
    catalog.unlink()
    rebuilt = rebuild(root)
    assert (rebuilt.versions, rebuilt.problems) == (2, [])
    with Vault(root) as vault:
        assert vault.read(vault.versions("a")[0]) == b'{"a": 1}\n'
        assert vault.read(vault.versions("b")[0]) == b'{"b": 2}\n'


def test_a_description_that_cannot_be_read_is_one_value_error() -> None:
    from session_browser.core.vault.format import (
        DESCRIPTION_DICT,
        MAX_DESCRIPTION,
        decode_description,
        encode_description,
    )

    record = {"version": {"source": "claude", "path": "/p/a.jsonl", "session_id": "a"}}
    flag, payload = encode_description(record)
    assert decode_description(flag, payload) == record
    assert len(payload) < len(str(record))
    deflate = zlib.compressobj(9, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY, DESCRIPTION_DICT)
    bomb = deflate.compress(b" " * (MAX_DESCRIPTION + 1)) + deflate.flush()
    for bad_flag, bad in ((flag, payload[:-3]), (flag, b"not deflated"), (flag, bomb), (9, b"{}")):
        with pytest.raises(ValueError):
            decode_description(bad_flag, bad)
