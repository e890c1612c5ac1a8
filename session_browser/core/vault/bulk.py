"""Many files kept at once: what a batch of the index costs the vault.

A file the vault has never seen (every file of a first build) is written with the batch's
others: one look-up of the batch's paths and one of its hashes, one write to the pack, and
one ``executemany`` per table, instead of half a dozen statements of its own. The rows are
the same as :meth:`Vault.keep` writes, in the same batch (one ``fsync``, one commit).
"""

from __future__ import annotations

import os
import time
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .format import _HEADER, COMPRESS_LEVEL, MAGIC, SMALL, Again, Version, _sha
from .zdict import ZDICT

if TYPE_CHECKING:
    from .store import Vault

IN_CHUNK = 500  # names per "IN (...)" look-up (under SQLite's variable limit)


def _packed(data: bytes) -> bytes:
    comp = zlib.compressobj(COMPRESS_LEVEL, zdict=ZDICT)
    return comp.compress(data) + comp.flush()


def keep_many(
    vault: Vault,
    source: str,
    items: Sequence[tuple[str | os.PathLike[str], str, bytes, int | None]],
    *,
    now: float | None = None,
    again: Again | None = None,
) -> int:
    """Keep the bytes of many files ``(path, session_id, data, messages)`` at once, as
    :meth:`Vault.keep` keeps each (in one batch); the versions added.

    A file the vault has never seen (every file of a first build) costs a few rows
    written together with the batch's others, not several statements of its own; a
    file seen before goes through ``again`` (default :meth:`Vault.keep`: it may only have
    grown)."""
    when = time.time() if now is None else now
    if again is None:

        def again(path: str, sid: str, data: bytes, n: int | None) -> bool:
            return vault.keep(source, path, sid, data, messages=n, now=when) is not None

    paths = [os.fspath(item[0]) for item in items]
    if len(set(paths)) != len(paths):  # the same file twice: one after the other
        return sum(
            again(p, sid, data, n) for p, (_p, sid, data, n) in zip(paths, items, strict=True)
        )
    added = 0
    with vault.batch():
        seen: set[str] = set()
        for start in range(0, len(paths), IN_CHUNK):
            part = paths[start : start + IN_CHUNK]
            marks = ",".join("?" * len(part))
            seen.update(
                str(r[0])
                for r in vault._db.execute(
                    f"SELECT path FROM files WHERE source = ? AND path IN ({marks})",
                    (source, *part),
                )
            )
        new: list[tuple[str, str, bytes, int | None, str]] = []
        blobs: list[tuple[bytes, str]] = []
        for text_path, (_p, sid, data, n) in zip(paths, items, strict=True):
            if text_path in seen:
                added += again(text_path, sid, data, n)
            else:
                digest = _sha(data)
                new.append((text_path, sid, data, n, digest))
                blobs.append((data, digest))
        if not new:
            return added
        put_many(vault, blobs)
        (top,) = vault._db.execute("SELECT coalesce(max(fid), 0) FROM files").fetchone()
        fids = range(int(top) + 1, int(top) + 1 + len(new))
        (top_vid,) = vault._db.execute("SELECT coalesce(max(vid), 0) FROM versions").fetchone()
        vids = range(int(top_vid) + 1, int(top_vid) + 1 + len(new))
        vault._db.executemany(
            "INSERT INTO files (fid, source, path, session_id, first_seen, last_seen)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [
                (fid, source, p, sid, when, when)
                for fid, (p, sid, *_r) in zip(fids, new, strict=True)
            ],
        )
        vault._db.executemany(
            "INSERT INTO versions (vid, fid, seen, size, sha256, chunks, messages)"
            " VALUES (?, ?, ?, ?, ?, '', ?)",
            [
                (vid, fid, when, len(data), digest, n)
                for vid, fid, (_p, _s, data, n, digest) in zip(vids, fids, new, strict=True)
            ],
        )
        vault._describe(
            *(
                vault._version_record(
                    Version(vid, source, p, sid, when, len(data), digest, (digest,), n, None)
                )
                for vid, (p, sid, data, n, digest) in zip(vids, new, strict=True)
            )
        )
    return added + len(new)


def put_many(vault: Vault, blobs: Sequence[tuple[bytes, str]]) -> None:
    """Store each ``(data, its hash)`` as one chunk (inside a batch), as :meth:`Vault._put`
    does, with one look-up and one insert for them all."""
    todo: dict[str, bytes] = {}
    for data, digest in blobs:
        if len(data) > SMALL:
            vault._put(data)
        else:
            todo.setdefault(digest, data)
    hashes = list(todo)
    for start in range(0, len(hashes), IN_CHUNK):
        part = hashes[start : start + IN_CHUNK]
        marks = ",".join("?" * len(part))
        for digest, pid, offset in vault._db.execute(
            f"SELECT hash, pack, offset FROM objects WHERE hash IN ({marks})", part
        ).fetchall():
            if vault._readable(digest, (pid, offset)):
                del todo[digest]
    if not todo:
        return
    pack = vault._open_pack()
    rows = []
    out = []
    end = pack.end
    for digest, data in todo.items():
        packed = _packed(data)
        out.append(_HEADER.pack(MAGIC, 1, bytes.fromhex(digest), len(packed)))
        out.append(packed)
        rows.append((digest, len(data), len(packed) + _HEADER.size, pack.pid, end))
        end += _HEADER.size + len(packed)
    pack.fh.seek(pack.end)
    pack.fh.write(b"".join(out))
    pack.end = end
    pack.dirty = True
    vault._db.executemany(
        "INSERT OR REPLACE INTO objects (hash, size, stored, pack, offset) VALUES (?, ?, ?, ?, ?)",
        rows,
    )
