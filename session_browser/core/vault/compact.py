"""Forgetting on purpose in the vault: every version of a session's files (and of their part
files) dropped from the catalog, and the packs that held them rewritten so their bytes are
gone, not only unreferenced.

Crash-safe, as a prune's repack: in one catalog transaction the chunks still used and the
descriptions of what is still kept are copied from each pack that held something forgotten
into a new pack, which is fsynced before the catalog names it; only after the catalog
commits are the old packs deleted (a crash before leaves them, named by nothing; the next
forget, or ``vault check``, finds them). The catalog is written with ``secure_delete`` on,
then its WAL is checkpointed and truncated and it is vacuumed.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from .format import _HEADER, MAGIC, RECORD, Version, decode_description, scan_pack
from .store import Vault


@dataclass
class Dropped:
    """What :func:`forget_files` removed."""

    files: int = 0
    versions: int = 0
    packs_rewritten: int = 0
    packs: list[str] = field(default_factory=list)


def files_of_sessions(vault: Vault, session_ids: Iterable[str]) -> list[int]:
    """The file rows of ``session_ids`` and of their part files."""
    fids: set[int] = set()
    for sid in dict.fromkeys(session_ids):
        for (fid,) in vault._db.execute("SELECT fid FROM files WHERE session_id = ?", (sid,)):
            fids.add(int(fid))
    frontier = set(fids)
    while frontier:
        marks = ",".join("?" * len(frontier))
        parts = {
            int(r[0])
            for r in vault._db.execute(
                f"SELECT fid FROM files WHERE part_of IN ({marks})", sorted(frontier)
            )
        }
        frontier = parts - fids
        fids |= parts
    return sorted(fids)


def versions_holding(vault: Vault, needles: Sequence[bytes]) -> list[Version]:
    """Every kept version (part files too) whose bytes hold one of ``needles``."""
    rows = vault._db.execute(f"{vault._SELECT} ORDER BY v.vid").fetchall()
    out: list[Version] = []
    longest = max((len(n) for n in needles), default=1)
    for row in rows:
        version = vault._version(row)
        tail = b""
        for block in vault.iter_read(version):
            window = tail + block
            if any(n in window for n in needles):
                out.append(version)
                break
            tail = window[-(longest - 1) :] if longest > 1 else b""
    return out


def session_of(vault: Vault, version: Version) -> str:
    """The session a version belongs to (a part file's: its main file's)."""
    row = vault._db.execute(
        "SELECT m.session_id FROM files f JOIN files m ON m.fid = f.part_of"
        " WHERE f.source = ? AND f.path = ?",
        (version.source, version.path),
    ).fetchone()
    return str(row[0]) if row is not None else version.session_id


def redact_versions(
    vault: Vault, versions: Sequence[Version], pairs: Sequence[tuple[bytes, bytes]]
) -> Dropped:
    """Rewrite ``versions`` (main or part files) with each ``old`` of ``pairs`` replaced by
    its ``new``: each keeps its place (id, time) with the new bytes; the chunks of the old
    bytes and the descriptions of those files are dropped and the packs rewritten as
    :func:`forget_files` does, then those files are described again."""
    out = Dropped()
    if not versions:
        return out
    db = vault._db
    db.execute("PRAGMA secure_delete=ON")
    with _all_or_nothing(vault), vault.batch():
        keys: set[tuple[str, str]] = set()
        for version in versions:
            data = vault.read(version)
            for old, new in pairs:
                data = data.replace(old, new)
            digest = vault._put(data)
            db.execute(
                "UPDATE versions SET size = ?, sha256 = ?, chunks = '' WHERE vid = ?",
                (len(data), digest, version.vid),
            )
            keys.add((version.source, version.path))
        out.versions = len(versions)
        out.files = len(keys)
        vault._collect()
        emptied = _rewrite(vault, keys)
        _describe_files(vault, keys)
    _drop_packs(vault, emptied, out)
    _scrub(vault)
    return out


def _describe_files(vault: Vault, keys: set[tuple[str, str]]) -> None:
    """Describe again (in the packs) every version, set of parts and gone mark of the files
    ``keys`` (inside a batch)."""
    db = vault._db
    records: list[dict[str, object]] = []
    mains: list[Version] = []
    for source, path in sorted(keys):
        rows = db.execute(
            f"{vault._SELECT} WHERE f.source = ? AND f.path = ? ORDER BY v.vid", (source, path)
        ).fetchall()
        for row in rows:
            version = vault._version(row)
            records.append(vault._version_record(version))
            mains.append(version)
        gone = db.execute(
            "SELECT gone_at FROM files WHERE source = ? AND path = ? AND gone_at IS NOT NULL",
            (source, path),
        ).fetchone()
        if gone is not None:
            records.append({"gone": {"source": source, "path": path, "at": gone[0]}})
    for version in mains:  # the sets of parts naming any of them
        for (main_vid,) in db.execute(
            "SELECT DISTINCT vid FROM parts WHERE vid = ? OR part = ?", (version.vid, version.vid)
        ).fetchall():
            main = vault.version(int(main_vid))
            parts = [
                vault.version(int(r[0]))
                for r in db.execute(
                    "SELECT part FROM parts WHERE vid = ? ORDER BY part", (main.vid,)
                )
            ]
            records.append(vault._parts_record(main, parts))
    unique = {json.dumps(r, sort_keys=True): r for r in records}
    vault._describe(*unique.values())


@contextlib.contextmanager
def _all_or_nothing(vault: Vault) -> Iterator[None]:
    """Around a batch: when it fails (its catalog changes rolled back), the pack files it
    started are deleted too, so no pack the catalog does not name is left behind."""
    before = set(vault._pack_ids())
    try:
        yield
    except BaseException:
        named = {int(r[0]) for r in vault._db.execute("SELECT id FROM packs")}
        for pid in set(vault._pack_ids()) - before - named:
            with contextlib.suppress(OSError):
                vault._pack_path(pid).unlink()
        raise


def _drop_packs(vault: Vault, emptied: Sequence[int], out: Dropped) -> None:
    for pid in emptied:
        with contextlib.suppress(FileNotFoundError):
            path = vault._pack_path(pid)
            out.packs.append(path.name)
            path.unlink()
    out.packs_rewritten = len(emptied)


def _scrub(vault: Vault) -> None:
    db = vault._db
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("VACUUM")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def forget_files(vault: Vault, fids: Sequence[int]) -> Dropped:
    """Drop files ``fids`` with every version of them and rewrite the packs (module doc)."""
    out = Dropped()
    if not fids:
        return out
    db = vault._db
    db.execute("PRAGMA secure_delete=ON")
    emptied: list[int] = []
    with _all_or_nothing(vault), vault.batch():
        marks = ",".join("?" * len(fids))
        keys = {
            (str(s), str(p))
            for s, p in db.execute(f"SELECT source, path FROM files WHERE fid IN ({marks})", fids)
        }
        vids = [
            int(r[0]) for r in db.execute(f"SELECT vid FROM versions WHERE fid IN ({marks})", fids)
        ]
        for start in range(0, len(vids), 500):
            chunk = vids[start : start + 500]
            vm = ",".join("?" * len(chunk))
            db.execute(f"DELETE FROM parts WHERE vid IN ({vm}) OR part IN ({vm})", chunk + chunk)
        db.execute(f"DELETE FROM versions WHERE fid IN ({marks})", fids)
        db.execute(f"DELETE FROM files WHERE fid IN ({marks})", fids)
        out.files, out.versions = len(fids), len(vids)
        vault._collect()
        emptied = _rewrite(vault, keys)  # (a set of parts is dropped with its main file)
    _drop_packs(vault, emptied, out)
    _scrub(vault)
    return out


def _names(record: dict[str, object]) -> set[tuple[str, str]]:
    """The (source, path) of the files a pack description is about."""
    out: set[tuple[str, str]] = set()
    for kind in ("version", "gone"):
        body = record.get(kind)
        if isinstance(body, dict):
            out.add((str(body.get("source")), str(body.get("path"))))
    parts = record.get("parts")
    if isinstance(parts, dict):
        for key in [parts.get("of"), *(parts.get("with") or [])]:
            if isinstance(key, list) and len(key) >= 2:
                out.add((str(key[0]), str(key[1])))
    return out


def _rewrite(vault: Vault, forgotten: set[tuple[str, str]]) -> list[int]:
    """Copy what is still kept of every pack holding something else into a new pack (inside
    the batch); the packs to delete once it commits."""
    db = vault._db
    vault._seal()  # what this batch wrote is in the pack's recorded end before it is read
    live = {
        (int(p), int(o)): str(h)
        for h, p, o in db.execute("SELECT hash, pack, offset FROM objects WHERE pack IS NOT NULL")
    }
    todo: list[tuple[int, list[tuple[int, int]]]] = []  # pack, (offset, record length) kept
    for pid, end in db.execute("SELECT id, end FROM packs ORDER BY id").fetchall():
        keep: list[tuple[int, int]] = []
        dirty = False
        try:
            fh = open(vault._pack_path(int(pid)), "rb")  # noqa: SIM115
        except FileNotFoundError:
            continue
        with fh:
            for offset, magic, flag, _digest, length in scan_pack(fh, int(end)):
                size = _HEADER.size + length
                if magic == MAGIC:
                    if (int(pid), offset) in live:
                        keep.append((offset, size))
                    else:
                        dirty = True
                elif magic == RECORD:
                    fh.seek(offset + _HEADER.size)
                    try:
                        record = decode_description(flag, fh.read(length))
                    except ValueError:
                        record = {}
                    if isinstance(record, dict) and _names(record) & forgotten:
                        dirty = True
                    else:
                        keep.append((offset, size))
        if dirty:
            todo.append((int(pid), keep))
    if not todo:
        return []
    current = vault._open_pack(fresh=True)
    for pid, keep in todo:
        with open(vault._pack_path(pid), "rb") as fh:
            for offset, size in keep:
                fh.seek(offset)
                record = fh.read(size)
                start = current.end
                current.fh.seek(start)
                current.fh.write(record)
                current.end = start + len(record)
                current.dirty = True
                digest = live.get((pid, offset))
                if digest is not None:
                    db.execute(
                        "UPDATE objects SET pack = ?, offset = ? WHERE hash = ?",
                        (current.pid, start, digest),
                    )
        db.execute("DELETE FROM packs WHERE id = ?", (pid,))
    return [pid for pid, _keep in todo]


def pack_paths(vault: Vault) -> list[str]:
    return sorted(
        os.fspath(vault._pack_path(int(r[0]))) for r in vault._db.execute("SELECT id FROM packs")
    )
