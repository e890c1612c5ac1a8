"""The vault: exact copies of the session files we have read, kept in our data dir.

Agents delete and rewrite history (a cleanup period, a ``truncate`` retention, a crash that a
later write replaces). The vault keeps every version of a session file that was read, so a
conversation stays readable and restorable after its file is gone or shortened.

Layout (``<data dir>/vault``, 0700; every file 0600, as it holds conversation content)::

    catalog.sqlite          which file, which versions, which chunks (one transaction a keep)
    objects/ab/<sha256>.z   one chunk: zlib-compressed bytes, named by the SHA-256 of the bytes

A version is the list of its chunks. The same bytes are stored once (content-addressed), and
a version of an append-only file (JSONL) whose start is the previous version is that version's
chunks plus one chunk of what was appended: growing transcripts cost what they grew by.

Every chunk is checked against its hash when it is read, and every version against the hash of
its whole bytes: a damaged entry raises :class:`VaultDamaged` and is never served. Writes are
atomic and fsynced before the catalog names them; the catalog serialises writers across
processes (``BEGIN IMMEDIATE``), so a prune never removes a chunk a concurrent keep is using.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import time
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .files import FILE_MODE, atomic_write_bytes, fsync_dir, synced_temp
from .paths import data_dir, ensure_private_dir

SCHEMA_VERSION = 1
COMPRESS_LEVEL = 6

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    fid INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    path TEXT NOT NULL,
    session_id TEXT NOT NULL,
    first_seen REAL NOT NULL,
    last_seen REAL NOT NULL,
    gone_at REAL,
    UNIQUE (source, path)
);
CREATE INDEX IF NOT EXISTS files_session ON files (session_id);
CREATE TABLE IF NOT EXISTS versions (
    vid INTEGER PRIMARY KEY,
    fid INTEGER NOT NULL REFERENCES files (fid),
    seen REAL NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    chunks TEXT NOT NULL,
    messages INTEGER
);
CREATE INDEX IF NOT EXISTS versions_file ON versions (fid, vid);
CREATE TABLE IF NOT EXISTS objects (hash TEXT PRIMARY KEY, size INTEGER, stored INTEGER);
"""


class VaultError(Exception):
    """The vault cannot do what was asked (the message says why)."""


class VaultDamaged(VaultError):
    """A kept entry does not match its hash (or is missing): it is reported, never served."""


def default_vault_dir() -> Path:
    """``<data dir>/vault`` (``SESSION_BROWSER_DATA_HOME`` moves the data dir)."""
    return data_dir() / "vault"


@dataclass(frozen=True)
class Version:
    """One kept version of one session file."""

    vid: int
    source: str
    path: str
    session_id: str
    seen: float
    size: int
    sha256: str
    chunks: tuple[str, ...]
    messages: int | None
    gone_at: float | None  # when its file was found gone (the file's, not the version's)


@dataclass(frozen=True)
class VaultStats:
    files: int
    versions: int
    gone: int  # files kept whose source file no longer exists
    stored_bytes: int  # compressed chunk bytes on disk
    kept_bytes: int  # the bytes of every file's latest version, uncompressed


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Vault:
    """The vault in ``root`` (created 0700 on first use)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_vault_dir()
        ensure_private_dir(self.root / "objects")
        db_path = self.root / "catalog.sqlite"
        fresh = not db_path.exists()
        self._db = sqlite3.connect(db_path, timeout=30.0, isolation_level=None)
        if fresh:
            os.chmod(db_path, FILE_MODE)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        with self._write():
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self._db.execute(statement)
            row = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if row is None:
                self._db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            elif row[0] != str(SCHEMA_VERSION):
                raise VaultError(
                    f"vault {self.root} has schema {row[0]}, this version reads {SCHEMA_VERSION}"
                )
        for name in ("catalog.sqlite-wal", "catalog.sqlite-shm"):
            with contextlib.suppress(OSError):
                os.chmod(self.root / name, FILE_MODE)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _write(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # ------------------------------------------------------------------ objects

    def _object_path(self, digest: str) -> Path:
        return self.root / "objects" / digest[:2] / f"{digest}.z"

    def _put(self, data: bytes) -> str:
        """Store one chunk (inside a write transaction); its hash."""
        digest = _sha(data)
        known = self._db.execute("SELECT 1 FROM objects WHERE hash = ?", (digest,)).fetchone()
        path = self._object_path(digest)
        if known is None or not path.is_file():
            packed = zlib.compress(data, COMPRESS_LEVEL)
            ensure_private_dir(path.parent)
            atomic_write_bytes(path, packed)
            self._db.execute(
                "INSERT OR REPLACE INTO objects VALUES (?, ?, ?)", (digest, len(data), len(packed))
            )
        return digest

    def _get(self, digest: str) -> bytes:
        path = self._object_path(digest)
        try:
            data = zlib.decompress(path.read_bytes())
        except (OSError, zlib.error) as exc:
            raise VaultDamaged(f"vault entry {digest[:12]} cannot be read: {exc}") from None
        if _sha(data) != digest:
            raise VaultDamaged(f"vault entry {digest[:12]} does not match its hash")
        return data

    # ------------------------------------------------------------------ keep

    def keep(
        self,
        source: str,
        path: str | os.PathLike[str],
        session_id: str,
        data: bytes,
        *,
        messages: int | None = None,
        now: float | None = None,
    ) -> Version | None:
        """Keep ``data`` (the bytes of the session file at ``path``) as a new version.

        None when the latest version already holds these bytes (only its time is updated).
        A file whose start is its previous version stores only what was appended.
        """
        when = time.time() if now is None else now
        text_path = os.fspath(path)
        digest = _sha(data)
        with self._write():
            row = self._db.execute(
                "SELECT fid FROM files WHERE source = ? AND path = ?", (source, text_path)
            ).fetchone()
            if row is None:
                fid = self._db.execute(
                    "INSERT INTO files (source, path, session_id, first_seen, last_seen)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (source, text_path, session_id, when, when),
                ).lastrowid
                last = None
            else:
                fid = row[0]
                self._db.execute(
                    "UPDATE files SET last_seen = ?, gone_at = NULL, session_id = ? WHERE fid = ?",
                    (when, session_id, fid),
                )
                last = self._db.execute(
                    "SELECT size, sha256, chunks FROM versions WHERE fid = ?"
                    " ORDER BY vid DESC LIMIT 1",
                    (fid,),
                ).fetchone()
            if last is not None and last[1] == digest:
                return None
            chunks: list[str]
            if last is not None and 0 < last[0] < len(data) and _sha(data[: last[0]]) == last[1]:
                chunks = [*json.loads(last[2]), self._put(data[last[0] :])]
            else:
                chunks = [self._put(data)]
            vid = self._db.execute(
                "INSERT INTO versions (fid, seen, size, sha256, chunks, messages)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (fid, when, len(data), digest, json.dumps(chunks), messages),
            ).lastrowid
        assert vid is not None
        return self.version(vid)

    def mark_gone(
        self, source: str, path: str | os.PathLike[str], *, now: float | None = None
    ) -> bool:
        """Record that the file at ``path`` no longer exists; False if it was never kept."""
        when = time.time() if now is None else now
        with self._write():
            cur = self._db.execute(
                "UPDATE files SET gone_at = ? WHERE source = ? AND path = ? AND gone_at IS NULL",
                (when, source, os.fspath(path)),
            )
        return cur.rowcount > 0

    # ------------------------------------------------------------------ read

    _SELECT = (
        "SELECT v.vid, f.source, f.path, f.session_id, v.seen, v.size, v.sha256, v.chunks,"
        " v.messages, f.gone_at FROM versions v JOIN files f ON f.fid = v.fid"
    )

    @staticmethod
    def _version(row: Sequence[Any]) -> Version:
        vid, source, path, sid, seen, size, sha, chunks, messages, gone = row
        return Version(
            vid=int(vid),
            source=str(source),
            path=str(path),
            session_id=str(sid),
            seen=float(seen),
            size=int(size),
            sha256=str(sha),
            chunks=tuple(json.loads(str(chunks))),
            messages=None if messages is None else int(messages),
            gone_at=None if gone is None else float(gone),
        )

    def version(self, vid: int) -> Version:
        row = self._db.execute(f"{self._SELECT} WHERE v.vid = ?", (vid,)).fetchone()
        if row is None:
            raise VaultError(f"no version {vid} in the vault")
        return self._version(row)

    def versions(self, session_id: str) -> list[Version]:
        """Every kept version of session ``session_id`` (any file, any source), oldest first."""
        rows = self._db.execute(
            f"{self._SELECT} WHERE f.session_id = ? ORDER BY v.seen, v.vid", (session_id,)
        ).fetchall()
        return [self._version(r) for r in rows]

    def latest(self, *, gone_only: bool = False) -> list[Version]:
        """The latest version of every kept file (only files found gone, with ``gone_only``)."""
        where = " WHERE f.gone_at IS NOT NULL" if gone_only else ""
        rows = self._db.execute(
            f"{self._SELECT} JOIN (SELECT fid, max(vid) AS top FROM versions GROUP BY fid) t"
            f" ON t.top = v.vid{where} ORDER BY v.seen DESC"
        ).fetchall()
        return [self._version(r) for r in rows]

    def read(self, version: Version) -> bytes:
        """The exact bytes of ``version``, every chunk and the whole checked against its hash
        (:class:`VaultDamaged` otherwise)."""
        data = b"".join(self._get(digest) for digest in version.chunks)
        if len(data) != version.size or _sha(data) != version.sha256:
            raise VaultDamaged(f"vault version {version.vid} of {version.path} is damaged")
        return data

    def check(self) -> list[str]:
        """Every damaged entry, as one line each (empty when the vault is sound)."""
        problems: list[str] = []
        for (digest,) in self._db.execute("SELECT hash FROM objects ORDER BY hash").fetchall():
            try:
                self._get(str(digest))
            except VaultDamaged as exc:
                problems.append(str(exc))
        return problems

    # ------------------------------------------------------------------ restore

    def restore(self, version: Version, *, to: Path | None = None) -> Path:
        """Write ``version`` back where it was (or into dir ``to``), byte-identical, 0600.

        Never over a file that exists (:class:`VaultError`); the bytes are checked first.
        """
        data = self.read(version)
        original = Path(version.path)
        target = (Path(to) / original.name) if to is not None else original
        if not target.parent.is_dir():
            raise VaultError(f"cannot restore to {target}: {target.parent} is not a directory")
        if os.path.lexists(target):
            raise VaultError(f"{target} exists: restore never writes over a file")
        tmp = synced_temp(target.parent, target.name, data, FILE_MODE)
        try:
            try:
                os.link(tmp, target)  # fails when the target appeared meanwhile
            except FileExistsError:
                raise VaultError(f"{target} exists: restore never writes over a file") from None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        fsync_dir(target.parent)
        return target

    # ------------------------------------------------------------------ size

    def stats(self) -> VaultStats:
        files, gone = self._db.execute("SELECT count(*), count(gone_at) FROM files").fetchone()
        (versions,) = self._db.execute("SELECT count(*) FROM versions").fetchone()
        (stored,) = self._db.execute("SELECT coalesce(sum(stored), 0) FROM objects").fetchone()
        kept = sum(v.size for v in self.latest())
        return VaultStats(int(files), int(versions), int(gone), int(stored), int(kept))

    def prune(self, budget: int, *, gone_too: bool = False) -> int:
        """Drop old versions until the stored bytes fit ``budget``; the bytes freed.

        Oldest versions of files that still exist go first; the latest version of a file is
        never dropped, and a file found gone keeps all of its versions unless ``gone_too``
        (then its older versions may go, never its last copy).
        """
        freed = 0
        with self._write():
            order = (
                "SELECT v.vid, v.fid FROM versions v JOIN files f ON f.fid = v.fid"
                " WHERE v.vid < (SELECT max(vid) FROM versions w WHERE w.fid = v.fid)"
                + ("" if gone_too else " AND f.gone_at IS NULL")
                + " ORDER BY (f.gone_at IS NOT NULL), v.seen, v.vid"
            )
            for vid, _fid in self._db.execute(order).fetchall():
                if self._stored() <= budget:
                    break
                self._db.execute("DELETE FROM versions WHERE vid = ?", (vid,))
                freed += self._collect()
        return freed

    def _stored(self) -> int:
        (stored,) = self._db.execute("SELECT coalesce(sum(stored), 0) FROM objects").fetchone()
        return int(stored)

    def _collect(self) -> int:
        """Remove the chunks no version names (inside a write transaction); bytes freed."""
        used: set[str] = set()
        for (chunks,) in self._db.execute("SELECT chunks FROM versions"):
            used.update(json.loads(chunks))
        freed = 0
        for digest, stored in self._db.execute("SELECT hash, stored FROM objects").fetchall():
            if digest in used:
                continue
            self._db.execute("DELETE FROM objects WHERE hash = ?", (digest,))
            with contextlib.suppress(FileNotFoundError):
                self._object_path(digest).unlink()
            freed += int(stored)
        return freed
