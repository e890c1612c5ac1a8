"""A lost or damaged catalog rebuilt from the packs alone.

Every pack record is read in order: each chunk is checked against its hash and named in a
new catalog; each description (a version, the parts that go with a version, a file found
gone) gives back the catalog's rows. The catalog there was is moved aside, never deleted
(``catalog.sqlite.before-rebuild-<time>``), and no pack is written to, cut or removed: the
vault writes on in a new pack. A version whose chunks are not all in the packs is left out
(counted); so is a description that cannot be read (said why).

Packs written before they described themselves (schema 3 and older) hold chunks only: the
first open of such a vault by this version describes what its catalog holds, so from then
on it can be rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .errors import VaultError
from .format import _HEADER, BLOCK, MAGIC, _chunk_text, decode_description, pack_id, scan_pack
from .safety import private_tree
from .store import Vault, default_vault_dir
from .zdict import ZDICT

Key = tuple[str, str, float, str]  # source, path, seen, sha256: a version in the descriptions


@dataclass
class Rebuilt:
    """What a rebuild found."""

    packs: int = 0
    chunks: int = 0
    files: int = 0
    versions: int = 0
    missing: int = 0  # versions described whose chunks are not all in the packs
    problems: list[str] = field(default_factory=list)  # what could not be read, one line each
    old_catalog: Path | None = None  # where the catalog there was is now


@dataclass
class _Found:
    objects: dict[str, tuple[int, int, int | None, int | None]] = field(default_factory=dict)
    versions: dict[Key, dict[str, Any]] = field(default_factory=dict)
    parts: list[tuple[Key, list[Key]]] = field(default_factory=list)
    gone: dict[tuple[str, str], float] = field(default_factory=dict)
    packs: list[tuple[int, int]] = field(default_factory=list)  # id, size


def rebuild(root: Path | None = None) -> Rebuilt:
    """Rebuild the catalog of the vault in ``root`` from its packs (see the module)."""
    root = Path(root) if root is not None else default_vault_dir()
    private_tree(root)
    out = Rebuilt()
    found = _Found()
    for path in sorted((root / "packs").iterdir()):
        pid = pack_id(path)
        if pid is not None:
            _read_pack(path, pid, found, out)
    _read_loose(root / "objects", found, out)
    out.old_catalog = _move_aside(root)
    with Vault(root) as vault, vault.batch():
        _fill(vault, found, out)
        vault._open_pack(fresh=True)  # what is kept next goes to a new pack
    return out


def _move_aside(root: Path) -> Path | None:
    catalog = root / "catalog.sqlite"
    if not os.path.lexists(catalog):
        return None
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    n = 0
    while True:
        old = root / f"catalog.sqlite.before-rebuild-{stamp}{f'.{n}' if n else ''}"
        if not os.path.lexists(old):
            break
        n += 1
    os.rename(catalog, old)
    for suffix in ("-wal", "-shm"):  # with its journal, the old catalog stays whole
        if os.path.lexists(f"{catalog}{suffix}"):
            os.rename(f"{catalog}{suffix}", f"{old}{suffix}")
    return old


def _open_regular(path: Path) -> IO[bytes] | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return os.fdopen(fd, "rb")


def _read_pack(path: Path, pid: int, found: _Found, out: Rebuilt) -> None:
    fh = _open_regular(path)
    if fh is None:
        out.problems.append(f"{path} is not a regular file that can be read: left out")
        return
    with fh:
        size = os.fstat(fh.fileno()).st_size
        end = 0
        for offset, magic, flag, digest, length in scan_pack(fh):
            end = offset + _HEADER.size + length
            if magic == MAGIC:
                got = _chunk_size(fh, flag, digest, length)
                if got is None:
                    out.problems.append(f"{path}: the chunk at {offset} does not match its hash")
                elif digest.hex() not in found.objects:
                    found.objects[digest.hex()] = (got, _HEADER.size + length, pid, offset)
                continue
            payload = fh.read(length)
            if hashlib.sha256(payload).digest() != digest:
                out.problems.append(f"{path}: the description at {offset} is damaged")
                continue
            try:
                _take(decode_description(flag, payload), found)
            except (ValueError, TypeError, KeyError):
                out.problems.append(f"{path}: the description at {offset} cannot be read")
        if end < size:
            out.problems.append(
                f"{path}: {size - end:,} bytes after offset {end:,} cannot be read"
                " (left as they are)"
            )
    found.packs.append((pid, size))
    out.packs += 1


def _chunk_size(fh: IO[bytes], flag: int, digest: bytes, length: int) -> int | None:
    """The size of the chunk whose data follows (None: not what its hash says)."""
    if flag not in (0, 1):
        return None
    dec = zlib.decompressobj(zdict=ZDICT) if flag else zlib.decompressobj()
    hasher = hashlib.sha256()
    size = 0
    left = length
    try:
        while left > 0:
            part = fh.read(min(BLOCK, left))
            if not part:
                return None
            left -= len(part)
            data = dec.decompress(part)
            hasher.update(data)
            size += len(data)
        data = dec.flush()
    except zlib.error:
        return None
    hasher.update(data)
    size += len(data)
    return size if dec.eof and hasher.digest() == digest else None


def _key(value: Any) -> Key:
    source, path, seen, sha = value
    return (str(source), str(path), float(seen), str(sha))


def _take(record: Any, found: _Found) -> None:
    if "version" in record:
        v = record["version"]
        key = _key([v["source"], v["path"], v["seen"], v["sha256"]])
        chunks = [str(c) for c in v["chunks"]]
        messages = v.get("messages")
        after = v.get("after")
        found.versions.setdefault(
            key,
            {
                "session_id": str(v["session_id"]),
                "size": int(v["size"]),
                "chunks": chunks,
                "after": None if after is None else str(after),
                "messages": None if messages is None else int(messages),
            },
        )
    elif "parts" in record:
        p = record["parts"]
        found.parts.append((_key(p["of"]), [_key(k) for k in p["with"]]))
    elif "gone" in record:
        g = record["gone"]
        where = (str(g["source"]), str(g["path"]))
        found.gone[where] = max(float(g["at"]), found.gone.get(where, float("-inf")))


def _read_loose(objects: Path, found: _Found, out: Rebuilt) -> None:
    """The chunks of a vault of schema 1 (one file each)."""
    if not objects.is_dir() or objects.is_symlink():
        return
    for path in sorted(objects.glob("*/*.z")):
        digest = path.name[:-2]
        fh = _open_regular(path)
        if fh is None or digest in found.objects:
            continue
        with fh:
            raw = fh.read()
        try:
            data = zlib.decompress(raw)
        except zlib.error:
            data = b""
        if hashlib.sha256(data).hexdigest() != digest:
            out.problems.append(f"{path} does not match its hash")
            continue
        found.objects[digest] = (len(data), len(raw), None, None)


def _resolve(versions: dict[Key, dict[str, Any]]) -> None:
    """Give each version described after another (a file that grew: its new chunks only)
    the chunks of the one it grew from, named by hash (any version with those bytes will
    do: the same bytes, whatever their chunks). One that cannot be resolved keeps its
    ``after`` (and is left out)."""
    whole: dict[str, list[str]] = {}
    pending = []
    for key, v in versions.items():
        if v["after"] is None:
            whole.setdefault(key[3], v["chunks"])
        else:
            pending.append((key, v))
    while pending:
        left = []
        for key, v in pending:
            before = whole.get(v["after"])
            if before is None:
                left.append((key, v))
                continue
            v["chunks"] = [*before, *v["chunks"]]
            v["after"] = None
            whole.setdefault(key[3], v["chunks"])
        if len(left) == len(pending):
            return
        pending = left


def _fill(vault: Vault, found: _Found, out: Rebuilt) -> None:
    db = vault._db
    if db.execute("SELECT count(*) FROM files").fetchone()[0]:
        raise VaultError(f"{vault.catalog} is not empty: a rebuild starts a new catalog")
    db.executemany(
        "INSERT INTO packs (id, end) VALUES (?, ?)", sorted(found.packs)
    )  # their ends as they are: nothing of a pack is ever cut by a rebuild
    db.executemany(
        "INSERT INTO objects (hash, size, stored, pack, offset) VALUES (?, ?, ?, ?, ?)",
        [(h, *row) for h, row in found.objects.items()],
    )
    out.chunks = len(found.objects)
    _resolve(found.versions)
    kept = {
        key: v
        for key, v in found.versions.items()
        if v["after"] is None and all(chunk in found.objects for chunk in v["chunks"])
    }
    out.missing = len(found.versions) - len(kept)
    fids: dict[tuple[str, str], int] = {}
    vids: dict[Key, int] = {}
    order = sorted(kept, key=lambda k: (k[2], k[0], k[1]))
    for key in order:
        v = kept[key]
        source, path, seen, sha = key
        fid = fids.get((source, path))
        if fid is None:
            cur = db.execute(
                "INSERT INTO files (source, path, session_id, first_seen, last_seen)"
                " VALUES (?, ?, ?, ?, ?)",
                (source, path, v["session_id"], seen, seen),
            )
            assert cur.lastrowid is not None
            fid = fids[(source, path)] = int(cur.lastrowid)
        else:
            db.execute(
                "UPDATE files SET last_seen = ?, session_id = ? WHERE fid = ?",
                (seen, v["session_id"], fid),
            )
        cur = db.execute(
            "INSERT INTO versions (fid, seen, size, sha256, chunks, messages)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (fid, seen, v["size"], sha, _chunk_text(v["chunks"], sha), v["messages"]),
        )
        assert cur.lastrowid is not None
        vids[key] = int(cur.lastrowid)
    for (source, path), at in found.gone.items():
        fid = fids.get((source, path))
        if fid is not None:  # gone since its last version was kept
            db.execute(
                "UPDATE files SET gone_at = ? WHERE fid = ? AND last_seen <= ?", (at, fid, at)
            )
    for main, parts in found.parts:
        if main not in vids:
            continue
        for part in parts:
            if part in vids:
                db.execute(
                    "INSERT OR IGNORE INTO parts (vid, part) VALUES (?, ?)",
                    (vids[main], vids[part]),
                )
                db.execute(
                    "UPDATE files SET part_of = ? WHERE fid = ?",
                    (fids[main[:2]], fids[part[:2]]),
                )
    out.files = len(fids)
    out.versions = len(vids)
