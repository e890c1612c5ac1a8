"""The vault's storage: every version of every session file read, kept in our data dir.

Agents delete and rewrite history (a cleanup period, a ``truncate`` retention, a crash that a
later write replaces). The vault keeps every version of a session file that was read, so a
conversation stays readable and restorable after its file is gone or shortened.

Layout (``<data dir>/vault``, 0700; every file 0600, as it holds conversation content)::

    catalog.sqlite          which file, which versions, which chunks, where each chunk is
    packs/000001.pack       records appended one after another, each a 48-byte header
                            (magic, kind, SHA-256, length) then its data: a chunk (zlib
                            data) or a description (JSON, deflated with a preset
                            dictionary since schema 5: a version, its parts, a file
                            found gone)

A version is the list of its chunks. The same bytes are stored once (content-addressed), and a
version of an append-only file (JSONL) whose start is the previous version is that version's
chunks plus one chunk of what was appended: growing transcripts cost what they grew by.
A session file may come with part files (Claude Code's subagent runs): each is kept as a file
of its own (``files.part_of`` names the main file's row) and ``parts`` names the versions of
them that go with each version of the main file (:mod:`.parts`).

Writes come in batches (:meth:`Vault.batch`: one catalog transaction, one ``fsync`` of the
pack before the catalog names what was written). A crash mid-batch leaves bytes past the
pack's recorded end that nothing names: the next writer cuts them off. Files are streamed a
block at a time, never held whole. Every chunk is checked against its hash when it is read
and every version against the hash of its whole bytes: a damaged entry raises
:class:`VaultDamaged` and is never served. The catalog serialises writers across processes
(``BEGIN IMMEDIATE``), so a prune never removes a chunk a concurrent keep is using.

The packs describe themselves: every version, every set of parts and every file found gone
is written to the pack as a description beside the chunks, so a lost or damaged catalog is
rebuilt from the packs alone (:mod:`.rebuild`). A pack the catalog does not name is never
written to, cut or reused: a new catalog starts a new pack, and ``check`` reports the packs
it does not know until a rebuild takes them back.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import stat
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from ..files import FILE_MODE, fsync_dir
from ..paths import data_dir
from .errors import (
    VaultDamaged,
    VaultError,
    catalog_guard,
)
from .format import (
    _HEADER,
    BLOCK,
    COMPRESS_LEVEL,
    MAGIC,
    RECORD,
    SMALL,
    Again,
    VaultStats,
    Version,
    _blocks,
    _chunk_list,
    _chunk_text,
    _sha,
    encode_description,
    pack_id,
    scan_pack,
)
from .safety import open_regular, private_tree, tighten
from .zdict import ZDICT

SCHEMA_VERSION = 5  # 2: packs; 3: subagent files as parts; 4: packs describe themselves;
# 5: descriptions deflated (a vault of 4 is read as it is: its packs hold both kinds)
PACK_MAX = 256 << 20  # a pack this big is closed and the next one started

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
    part_of INTEGER,
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
CREATE TABLE IF NOT EXISTS objects (
    hash TEXT PRIMARY KEY, size INTEGER, stored INTEGER, pack INTEGER, offset INTEGER
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS packs (id INTEGER PRIMARY KEY, end INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS parts (vid INTEGER NOT NULL, part INTEGER NOT NULL,
    PRIMARY KEY (vid, part)) WITHOUT ROWID;
"""


def default_vault_dir() -> Path:
    """``<data dir>/vault`` (``SESSION_BROWSER_DATA_HOME`` moves the data dir)."""
    return data_dir() / "vault"


class _Pack:
    """The pack being appended to during one batch."""

    def __init__(self, pid: int, fh: IO[bytes], end: int) -> None:
        self.pid = pid
        self.fh = fh
        self.end = end
        self.dirty = False


class Vault:
    """The vault in ``root`` (created 0700 on first use)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_vault_dir()
        self.catalog = self.root / "catalog.sqlite"
        private_tree(self.root)
        self._pack: _Pack | None = None
        self._depth = 0
        with catalog_guard(self.catalog):
            self._db = sqlite3.connect(
                self.catalog, timeout=30.0, isolation_level=None, check_same_thread=False
            )
            try:
                self._setup()
            except BaseException:
                self._db.close()
                raise
        for name in ("catalog.sqlite", "catalog.sqlite-wal", "catalog.sqlite-shm"):
            with contextlib.suppress(OSError):
                tighten(self.root / name, FILE_MODE)

    def _setup(self) -> None:
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        with self.batch():
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self._db.execute(statement)
            cols = {r[1] for r in self._db.execute("PRAGMA table_info(objects)")}
            if "pack" not in cols:  # a vault of schema 1: loose object files, read as such
                self._db.execute("ALTER TABLE objects ADD COLUMN pack INTEGER")
                self._db.execute("ALTER TABLE objects ADD COLUMN offset INTEGER")
            if "part_of" not in {r[1] for r in self._db.execute("PRAGMA table_info(files)")}:
                self._db.execute("ALTER TABLE files ADD COLUMN part_of INTEGER")
            row = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if row is None or row[0] in ("1", "2", "3", "4"):  # upgraded in place above
                if row is not None and row[0] != "4":  # kept before packs described themselves
                    self._describe_all()
                self._db.execute(
                    "INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
                )
            elif row[0] != str(SCHEMA_VERSION):
                raise VaultError(
                    f"vault {self.root} has schema {row[0]}, this version reads {SCHEMA_VERSION}"
                )

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):  # keep the -wal file small between uses
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._db.close()

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """One write transaction (nested calls join it): what is written inside is fsynced
        once, before the catalog commits it; nothing of it counts if it fails."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self._db.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            yield
            self._seal()
        except BaseException:
            self._drop_pack()
            self._db.execute("ROLLBACK")
            raise
        finally:
            self._depth = 0
        self._db.execute("COMMIT")

    _write = batch

    # ------------------------------------------------------------------ packs

    def _pack_path(self, pid: int) -> Path:
        return self.root / "packs" / f"{pid:06d}.pack"

    def _open_pack(self, *, fresh: bool = False) -> _Pack:
        """The pack to append to (inside a batch; ``fresh``: a new one): cut back to its
        recorded end, so the torn tail of a batch that never committed is dropped."""
        if self._pack is not None and not fresh:
            return self._pack
        if fresh:
            self._seal()
        row = self._db.execute("SELECT id, end FROM packs ORDER BY id DESC LIMIT 1").fetchone()
        flags = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC
        if row is None or int(row[1]) >= PACK_MAX or fresh:
            # A new pack: past every pack file there is, named or not (a pack the catalog
            # does not know, after it was lost, is never reused).
            pid = max([0 if row is None else int(row[0]), *self._pack_ids()]) + 1
            while True:
                try:
                    fd = os.open(self._pack_path(pid), flags | os.O_CREAT | os.O_EXCL, FILE_MODE)
                    break
                except FileExistsError:
                    pid += 1
            self._db.execute("INSERT INTO packs (id, end) VALUES (?, 0)", (pid,))
            end = 0
        else:
            pid, end = int(row[0]), int(row[1])
            fd = os.open(self._pack_path(pid), flags | os.O_CREAT, FILE_MODE)
        fh = os.fdopen(fd, "r+b")
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            fh.close()
            raise VaultError(f"{self._pack_path(pid)} is not a regular file")
        os.fchmod(fd, FILE_MODE)
        if os.fstat(fd).st_size > end:
            fh.truncate(end)  # the torn tail of a batch that never committed
        fh.seek(end)
        self._pack = _Pack(pid, fh, end)
        return self._pack

    def _pack_ids(self) -> list[int]:
        """The ids of the pack files there are (named by the catalog or not)."""
        found = (pack_id(path) for path in (self.root / "packs").iterdir())
        return sorted(pid for pid in found if pid is not None)

    def unknown_packs(self) -> list[tuple[Path, int]]:
        """The pack files the catalog does not name, with their sizes (a lost catalog's:
        ``vault rebuild`` takes them back)."""
        known = {int(r[0]) for r in self._db.execute("SELECT id FROM packs")}
        out: list[tuple[Path, int]] = []
        for pid in self._pack_ids():
            if pid not in known:
                path = self._pack_path(pid)
                with contextlib.suppress(OSError):
                    out.append((path, os.lstat(path).st_size))
        return out

    def _describe(self, *records: dict[str, Any]) -> None:
        """Write ``records`` (what the catalog holds of a version, a set of parts, a file
        found gone) to the pack (inside a batch), so a lost catalog can be rebuilt."""
        if not records:
            return
        pack = self._open_pack()
        out = []
        for record in records:
            flag, payload = encode_description(record)
            out.append(_HEADER.pack(RECORD, flag, hashlib.sha256(payload).digest(), len(payload)))
            out.append(payload)
        data = b"".join(out)
        pack.fh.seek(pack.end)
        pack.fh.write(data)
        pack.end += len(data)
        pack.dirty = True

    @staticmethod
    def _version_record(
        v: Version, after: tuple[str, Sequence[str]] | None = None
    ) -> dict[str, Any]:
        """The description of ``v``. ``after``: the hash and chunks of a version whose
        chunks start ``v``'s (a file that grew), named by its hash, so a version costs its
        new chunks, not every chunk of the file again."""
        chunks = list(v.chunks)
        record: dict[str, Any] = {
            "source": v.source,
            "path": v.path,
            "session_id": v.session_id,
            "seen": v.seen,
            "size": v.size,
            "sha256": v.sha256,
            "messages": v.messages,
        }
        if (
            after is not None
            and 0 < len(after[1]) <= len(chunks)
            and (chunks[: len(after[1])] == list(after[1]))
        ):
            record["after"] = after[0]
            chunks = chunks[len(after[1]) :]
        record["chunks"] = chunks
        return {"version": record}

    @staticmethod
    def version_key(v: Version) -> list[Any]:
        """What names a version in the packs' descriptions (its vid is the catalog's)."""
        return [v.source, v.path, v.seen, v.sha256]

    def _parts_record(self, main: Version, parts: Sequence[Version]) -> dict[str, Any]:
        return {
            "parts": {"of": self.version_key(main), "with": [self.version_key(p) for p in parts]}
        }

    def _describe_all(self) -> None:
        """Describe every version, set of parts and file found gone the catalog holds (a
        vault kept before packs described themselves; inside a batch)."""
        rows = self._db.execute(f"{self._SELECT} ORDER BY v.vid").fetchall()
        by_vid = {int(r[0]): self._version(r) for r in rows}
        records = []
        before: dict[tuple[str, str], Version] = {}
        for v in by_vid.values():
            prior = before.get((v.source, v.path))
            after = None if prior is None else (prior.sha256, prior.chunks)
            records.append(self._version_record(v, after))
            before[(v.source, v.path)] = v
        groups: dict[int, list[Version]] = {}
        for vid, part in self._db.execute("SELECT vid, part FROM parts ORDER BY vid, part"):
            if int(vid) in by_vid and int(part) in by_vid:
                groups.setdefault(int(vid), []).append(by_vid[int(part)])
        records += [self._parts_record(by_vid[vid], parts) for vid, parts in groups.items()]
        records += [
            {"gone": {"source": source, "path": path, "at": at}}
            for source, path, at in self._db.execute(
                "SELECT source, path, gone_at FROM files WHERE gone_at IS NOT NULL"
            )
        ]
        for start in range(0, len(records), 1000):
            self._describe(*records[start : start + 1000])

    def _seal(self) -> None:
        """Make the batch's pack bytes durable, then record its end (same transaction)."""
        pack = self._pack
        if pack is None:
            return
        self._pack = None
        try:
            if pack.dirty:
                pack.fh.flush()
                os.fsync(pack.fh.fileno())
                fsync_dir(self.root / "packs")
            self._db.execute("UPDATE packs SET end = ? WHERE id = ?", (pack.end, pack.pid))
        finally:
            pack.fh.close()

    def _drop_pack(self) -> None:
        pack, self._pack = self._pack, None
        if pack is not None:
            with contextlib.suppress(OSError):
                pack.fh.close()

    def _put_stream(self, blocks: Iterable[bytes]) -> tuple[str, int]:
        """Store the bytes of ``blocks`` as one chunk (inside a batch): (hash, size). The same
        bytes already stored (and readable) are not written again."""
        pack = self._open_pack()
        start = pack.end
        fh = pack.fh
        fh.seek(start + _HEADER.size)
        hasher = hashlib.sha256()
        comp = zlib.compressobj(COMPRESS_LEVEL, zdict=ZDICT)
        size = stored = 0
        for block in blocks:
            hasher.update(block)
            size += len(block)
            out = comp.compress(block)
            stored += len(out)
            fh.write(out)
        out = comp.flush()
        stored += len(out)
        fh.write(out)
        digest = hasher.hexdigest()
        known = self._db.execute(
            "SELECT pack, offset FROM objects WHERE hash = ?", (digest,)
        ).fetchone()
        if known is not None and self._readable(digest, known):
            fh.seek(start)
            fh.truncate(start)
            return digest, size
        fh.seek(start)
        fh.write(_HEADER.pack(MAGIC, 1, bytes.fromhex(digest), stored))
        pack.end = start + _HEADER.size + stored
        fh.seek(pack.end)
        pack.dirty = True
        self._db.execute(
            "INSERT OR REPLACE INTO objects (hash, size, stored, pack, offset)"
            " VALUES (?, ?, ?, ?, ?)",
            (digest, size, stored + _HEADER.size, pack.pid, start),
        )
        return digest, size

    def _put(self, data: bytes) -> str:
        """Store ``data`` as one chunk (inside a batch): one compression, one write; bytes
        already stored are neither compressed nor written again."""
        if len(data) > SMALL:
            return self._put_stream(_blocks(data))[0]
        digest = _sha(data)
        known = self._db.execute(
            "SELECT pack, offset FROM objects WHERE hash = ?", (digest,)
        ).fetchone()
        if known is not None and self._readable(digest, known):
            return digest
        comp = zlib.compressobj(COMPRESS_LEVEL, zdict=ZDICT)
        packed = comp.compress(data) + comp.flush()
        pack = self._open_pack()
        start = pack.end
        pack.fh.seek(start)
        pack.fh.write(_HEADER.pack(MAGIC, 1, bytes.fromhex(digest), len(packed)) + packed)
        pack.end = start + _HEADER.size + len(packed)
        pack.dirty = True
        self._db.execute(
            "INSERT OR REPLACE INTO objects (hash, size, stored, pack, offset)"
            " VALUES (?, ?, ?, ?, ?)",
            (digest, len(data), len(packed) + _HEADER.size, pack.pid, start),
        )
        return digest

    def _readable(self, digest: str, where: Sequence[Any]) -> bool:
        if where[0] is None:
            return self._loose_path(digest).is_file()
        return self._pack_path(int(where[0])).is_file()

    def _loose_path(self, digest: str) -> Path:
        return self.root / "objects" / digest[:2] / f"{digest}.z"

    def _iter_object(self, digest: str) -> Iterator[bytes]:
        """The bytes of chunk ``digest`` a block at a time; :class:`VaultDamaged` (after the
        last block at the latest) when they are not what was stored."""
        row = self._db.execute(
            "SELECT pack, offset, stored FROM objects WHERE hash = ?", (digest,)
        ).fetchone()
        if row is None:
            raise VaultDamaged(f"vault entry {digest[:12]} is missing from the catalog")
        hasher = hashlib.sha256()
        try:
            if row[0] is None:
                raw = self._loose_path(digest).read_bytes()
                data = zlib.decompress(raw)
                hasher.update(data)
                chunks: Iterable[bytes] = [data]
            else:
                chunks = self._read_packed(digest, int(row[0]), int(row[1]), hasher)
            yield from chunks
        except (OSError, zlib.error, ValueError) as exc:
            raise VaultDamaged(f"vault entry {digest[:12]} cannot be read: {exc}") from None
        if hasher.hexdigest() != digest:
            raise VaultDamaged(f"vault entry {digest[:12]} does not match its hash")

    def _read_packed(self, digest: str, pid: int, offset: int, hasher: Any) -> Iterator[bytes]:
        with open(self._pack_path(pid), "rb") as fh:
            fh.seek(offset)
            head = fh.read(_HEADER.size)
            if len(head) != _HEADER.size:
                raise ValueError("the pack ends before the entry")
            magic, flag, raw_digest, length = _HEADER.unpack(head)
            if magic != MAGIC or raw_digest.hex() != digest or flag not in (0, 1):
                raise ValueError("the pack holds another entry at its place")
            dec = zlib.decompressobj(zdict=ZDICT) if flag else zlib.decompressobj()
            left = length
            while left > 0:
                part = fh.read(min(BLOCK, left))
                if not part:
                    raise ValueError("the pack ends inside the entry")
                left -= len(part)
                out = dec.decompress(part)
                if out:
                    hasher.update(out)
                    yield out
            out = dec.flush()
            if not dec.eof:
                raise ValueError("the entry's compressed data is cut short")
            if out:
                hasher.update(out)
                yield out

    def _get(self, digest: str) -> bytes:
        return b"".join(self._iter_object(digest))

    # ------------------------------------------------------------------ keep

    def _file_row(
        self, source: str, text_path: str, session_id: str, when: float
    ) -> tuple[int, Sequence[Any] | None]:
        row = self._db.execute(
            "SELECT fid FROM files WHERE source = ? AND path = ?", (source, text_path)
        ).fetchone()
        if row is None:
            fid = self._db.execute(
                "INSERT INTO files (source, path, session_id, first_seen, last_seen)"
                " VALUES (?, ?, ?, ?, ?)",
                (source, text_path, session_id, when, when),
            ).lastrowid
            assert fid is not None
            return int(fid), None
        fid = int(row[0])
        self._db.execute(
            "UPDATE files SET last_seen = ?, gone_at = NULL, session_id = ? WHERE fid = ?",
            (when, session_id, fid),
        )
        last = self._db.execute(
            "SELECT size, sha256, chunks FROM versions WHERE fid = ? ORDER BY vid DESC LIMIT 1",
            (fid,),
        ).fetchone()
        return fid, last

    def _add_version(
        self,
        fid: int,
        when: float,
        size: int,
        digest: str,
        chunks: list[str],
        messages: int | None,
        after: tuple[str, Sequence[str]] | None = None,
    ) -> Version:
        vid = self._db.execute(
            "INSERT INTO versions (fid, seen, size, sha256, chunks, messages)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (fid, when, size, digest, _chunk_text(chunks, digest), messages),
        ).lastrowid
        assert vid is not None
        row = self._db.execute(
            "SELECT source, path, session_id FROM files WHERE fid = ?", (fid,)
        ).fetchone()
        version = Version(
            int(vid), row[0], row[1], row[2], when, size, digest, tuple(chunks), messages, None
        )
        self._describe(self._version_record(version, after))
        return version

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
        digest = _sha(data)
        with self.batch():
            fid, last = self._file_row(source, os.fspath(path), session_id, when)
            if last is not None and last[1] == digest:
                return None
            if last is not None and 0 < last[0] < len(data) and _sha(data[: last[0]]) == last[1]:
                before = _chunk_list(last[2], last[1])
                chunks = [*before, self._put(data[last[0] :])]
                return self._add_version(
                    fid, when, len(data), digest, chunks, messages, (last[1], before)
                )
            return self._add_version(fid, when, len(data), digest, [self._put(data)], messages)

    def keep_many(
        self,
        source: str,
        items: Sequence[tuple[str | os.PathLike[str], str, bytes, int | None]],
        *,
        now: float | None = None,
        again: Again | None = None,
    ) -> int:
        """Keep the bytes of many files ``(path, session_id, data, messages)`` at once, as
        :meth:`keep` keeps each, in one batch; the versions added (see :mod:`.bulk`).
        ``again(path, session_id, data, messages)``: how a file kept before is kept (whether
        it added a version; default :meth:`keep`)."""
        from .bulk import keep_many

        return keep_many(self, source, items, now=now, again=again)

    def keep_file(
        self,
        source: str,
        path: str | os.PathLike[str],
        session_id: str,
        *,
        messages: int | None = None,
        now: float | None = None,
        root: str | os.PathLike[str] | None = None,
    ) -> Version | None:
        """Keep the file at ``path`` as :meth:`keep` keeps bytes, streamed from the file a
        block at a time (``OSError`` when it cannot be read, or is not a regular file
        inside ``root``: see :func:`open_regular`). A file that only grew since its latest
        version is read once: its start is hashed against that version and only the rest
        is stored."""
        when = time.time() if now is None else now
        with open_regular(path, root) as fh, self.batch():
            size = os.fstat(fh.fileno()).st_size
            if size <= SMALL:
                data = fh.read()
                if len(data) <= SMALL:
                    return self.keep(source, path, session_id, data, messages=messages, now=when)
                fh.seek(0)
                size = os.fstat(fh.fileno()).st_size
            fid, last = self._file_row(source, os.fspath(path), session_id, when)
            whole = hashlib.sha256()
            if last is not None and 0 < int(last[0]) <= size:
                left = int(last[0])
                while left > 0:
                    block = fh.read(min(BLOCK, left))
                    if not block:
                        break
                    whole.update(block)
                    left -= len(block)
                if left == 0 and whole.hexdigest() == last[1]:
                    rest = fh.read(BLOCK)
                    if not rest:
                        return None  # the same bytes as the latest version
                    first = rest

                    def tail() -> Iterator[bytes]:
                        block = first
                        while block:
                            whole.update(block)
                            yield block
                            block = fh.read(BLOCK)

                    digest, added = self._put_stream(tail())
                    before = _chunk_list(last[2], last[1])
                    return self._add_version(
                        fid,
                        when,
                        int(last[0]) + added,
                        whole.hexdigest(),
                        [*before, digest],
                        messages,
                        (last[1], before),
                    )
                fh.seek(0)
                whole = hashlib.sha256()

            def everything() -> Iterator[bytes]:
                while block := fh.read(BLOCK):
                    whole.update(block)
                    yield block

            digest, total = self._put_stream(everything())
            if last is not None and last[1] == digest:
                return None
            return self._add_version(fid, when, total, digest, [digest], messages)

    def mark_gone(
        self, source: str, path: str | os.PathLike[str], *, now: float | None = None
    ) -> bool:
        """Record that the file at ``path`` (and those of its part files) no longer exists;
        False if it was never kept."""
        when = time.time() if now is None else now
        with self.batch():
            cur = self._db.execute(
                "UPDATE files SET gone_at = ? WHERE source = ? AND path = ? AND gone_at IS NULL",
                (when, source, os.fspath(path)),
            )
            main_gone = cur.rowcount > 0
            gone = [os.fspath(path)] if main_gone else []
            for fid, part in self._db.execute(
                "SELECT p.fid, p.path FROM files p JOIN files f ON p.part_of = f.fid"
                " WHERE f.source = ? AND f.path = ? AND p.gone_at IS NULL",
                (source, os.fspath(path)),
            ).fetchall():
                if not os.path.lexists(part):
                    self._db.execute("UPDATE files SET gone_at = ? WHERE fid = ?", (when, fid))
                    gone.append(str(part))
            self._describe(*({"gone": {"source": source, "path": p, "at": when}} for p in gone))
        return main_gone

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
            chunks=tuple(_chunk_list(str(chunks), str(sha))),
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
            f"{self._SELECT} WHERE f.session_id = ? AND f.part_of IS NULL ORDER BY v.seen, v.vid",
            (session_id,),
        ).fetchall()
        return [self._version(r) for r in rows]

    def latest_of(self, source: str, path: str | os.PathLike[str]) -> Version | None:
        """The latest version kept of the file at ``path`` (None: never kept)."""
        row = self._db.execute(
            f"{self._SELECT} WHERE f.source = ? AND f.path = ? ORDER BY v.vid DESC LIMIT 1",
            (source, os.fspath(path)),
        ).fetchone()
        return None if row is None else self._version(row)

    def latest(self, *, gone_only: bool = False, parts: bool = False) -> list[Version]:
        """The latest version of every kept session file (only files found gone, with
        ``gone_only``; the part files too, with ``parts``)."""
        where = " WHERE " + " AND ".join(
            (["f.gone_at IS NOT NULL"] if gone_only else [])
            + ([] if parts else ["f.part_of IS NULL"])
            or ["1"]
        )
        rows = self._db.execute(
            f"{self._SELECT} JOIN (SELECT fid, max(vid) AS top FROM versions GROUP BY fid) t"
            f" ON t.top = v.vid{where} ORDER BY v.seen DESC"
        ).fetchall()
        return [self._version(r) for r in rows]

    def iter_read(self, version: Version) -> Iterator[bytes]:
        """The bytes of ``version`` a block at a time, every chunk checked against its hash
        and the whole against the version's (:class:`VaultDamaged` at the latest after the
        last block: a consumer keeps nothing of a read that raised)."""
        whole = hashlib.sha256()
        size = 0
        for digest in version.chunks:
            for block in self._iter_object(digest):
                whole.update(block)
                size += len(block)
                yield block
        if size != version.size or whole.hexdigest() != version.sha256:
            raise VaultDamaged(f"vault version {version.vid} of {version.path} is damaged")

    def head(self, version: Version, size: int) -> bytes:
        """The first ``size`` bytes of ``version`` (fewer when it is shorter), unchecked:
        what it is, before it is read whole."""
        out = b""
        for digest in version.chunks:
            for block in self._iter_object(digest):
                out += block
                if len(out) >= size:
                    return out[:size]
        return out

    def read(self, version: Version) -> bytes:
        """The exact bytes of ``version`` (:class:`VaultDamaged` when they are not)."""
        return b"".join(self.iter_read(version))

    def check(self) -> list[str]:
        """Every damaged entry, as one line each (empty when the vault is sound)."""
        problems = [
            f"{path} ({size:,} bytes) is not in the catalog:"
            " 'session-browser vault rebuild' takes it back"
            for path, size in self.unknown_packs()
        ]
        for (digest,) in self._db.execute("SELECT hash FROM objects ORDER BY hash").fetchall():
            try:
                for _block in self._iter_object(str(digest)):
                    pass
            except VaultDamaged as exc:
                problems.append(str(exc))
        return problems

    # ------------------------------------------------------------------ restore

    def restore(self, version: Version, *, to: Path | None = None) -> Path:
        """Write ``version`` back where it was, or into dir ``to`` (:func:`.restore.restore`)."""
        from .restore import restore

        return restore(self, version, to=to)

    # ------------------------------------------------------------------ size

    def stats(self) -> VaultStats:
        files, gone = self._db.execute("SELECT count(*), count(gone_at) FROM files").fetchone()
        (versions,) = self._db.execute("SELECT count(*) FROM versions").fetchone()
        # Summed by SQLite: listing every latest version took tens of MB on a large vault.
        (kept,) = self._db.execute(
            "SELECT coalesce(sum(v.size), 0) FROM versions v JOIN files f ON f.fid = v.fid"
            " JOIN (SELECT fid, max(vid) AS top FROM versions GROUP BY fid) t ON t.top = v.vid"
        ).fetchone()
        disk = 0
        for path in self.root.rglob("*"):
            with contextlib.suppress(OSError):
                if path.is_file():
                    disk += path.stat().st_size
        return VaultStats(int(files), int(versions), int(gone), self._stored(), int(kept), disk)

    def prune(self, budget: int, *, gone_too: bool = False) -> int:
        """Drop old versions until the stored bytes fit ``budget``; the bytes freed.

        Oldest versions of files that still exist go first; the latest version of a file is
        never dropped, and a file found gone keeps all of its versions unless ``gone_too``
        (then its older versions may go, never its last copy). Packs left mostly unused are
        rewritten with what is still used.
        """
        from .parts import drop_unused

        freed = 0
        with self.batch():
            order = (
                "SELECT v.vid, v.fid FROM versions v JOIN files f ON f.fid = v.fid"
                " WHERE v.vid < (SELECT max(vid) FROM versions w WHERE w.fid = v.fid)"
                " AND f.part_of IS NULL"
                + ("" if gone_too else " AND f.gone_at IS NULL")
                + " ORDER BY (f.gone_at IS NOT NULL), v.seen, v.vid"
            )
            for vid, _fid in self._db.execute(order).fetchall():
                if self._stored() <= budget:
                    break
                self._db.execute("DELETE FROM versions WHERE vid = ?", (vid,))
                drop_unused(self, vid)
                freed += self._collect()
            emptied = self._repack()
        for pid in emptied:
            with contextlib.suppress(FileNotFoundError):
                self._pack_path(pid).unlink()
        return freed

    def _stored(self) -> int:
        (stored,) = self._db.execute("SELECT coalesce(sum(stored), 0) FROM objects").fetchone()
        return int(stored)

    def _collect(self) -> int:
        """Forget the chunks no version names (inside a batch); bytes freed."""
        used: set[str] = set()
        for chunks, sha in self._db.execute("SELECT chunks, sha256 FROM versions"):
            used.update(_chunk_list(chunks, sha))
        freed = 0
        for digest, stored, pack in self._db.execute(
            "SELECT hash, stored, pack FROM objects"
        ).fetchall():
            if digest in used:
                continue
            self._db.execute("DELETE FROM objects WHERE hash = ?", (digest,))
            if pack is None:
                with contextlib.suppress(FileNotFoundError):
                    self._loose_path(digest).unlink()
            freed += int(stored)
        return freed

    def _repack(self) -> list[int]:
        """Copy the used chunks of packs at most half used into the current pack (inside a
        batch); the packs to delete once the batch commits."""
        drop: list[int] = []
        for pid, end in self._db.execute("SELECT id, end FROM packs ORDER BY id").fetchall():
            (used,) = self._db.execute(
                "SELECT coalesce(sum(stored), 0) FROM objects WHERE pack = ?", (pid,)
            ).fetchone()
            if int(end) > 0 and int(used) * 2 <= int(end):
                drop.append(int(pid))
        if not drop:
            return []
        current = self._open_pack(fresh=True)
        for pid in drop:
            for digest, offset, stored in self._db.execute(
                "SELECT hash, offset, stored FROM objects WHERE pack = ?", (pid,)
            ).fetchall():
                with open(self._pack_path(int(pid)), "rb") as fh:
                    fh.seek(int(offset))
                    record = fh.read(int(stored))
                start = current.end
                current.fh.seek(start)
                current.fh.write(record)
                current.end = start + len(record)
                current.dirty = True
                self._db.execute(
                    "UPDATE objects SET pack = ?, offset = ? WHERE hash = ?",
                    (current.pid, start, digest),
                )
            self._copy_descriptions(int(pid), current)
            self._db.execute("DELETE FROM packs WHERE id = ?", (pid,))
        return drop

    def _copy_descriptions(self, pid: int, current: _Pack) -> None:
        """Copy the descriptions in pack ``pid`` to the pack being written (a repack)."""
        (end,) = self._db.execute("SELECT end FROM packs WHERE id = ?", (pid,)).fetchone()
        with open(self._pack_path(pid), "rb") as fh:
            found = [
                (offset, length)
                for offset, magic, _f, _d, length in scan_pack(fh, int(end))
                if magic == RECORD
            ]
            for offset, length in found:
                fh.seek(offset)
                record = fh.read(_HEADER.size + length)
                current.fh.seek(current.end)
                current.fh.write(record)
                current.end += len(record)
                current.dirty = True
