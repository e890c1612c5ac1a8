"""The vault's pack format: a record's header, reading a pack's records in order, and what
the catalog says of a version (its chunks, its hash)."""

from __future__ import annotations

import hashlib
import json
import os
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

BLOCK = 1 << 20  # bytes read, hashed and compressed at a time
COMPRESS_LEVEL = 1  # JSON compresses about 5x at level 1 already; 6 costs 3x the time for ~10%
SMALL = 4 << 20  # a file up to this size is read, hashed and compressed in one piece
MAGIC = b"SBVP"  # a chunk
RECORD = b"SBVR"  # a description (flag DESCRIBED or DESCRIBED_Z)
DESCRIBED = 2  # a description as JSON (what vaults of schema 4 wrote)
DESCRIBED_Z = 3  # a description as JSON, deflated with DESCRIPTION_DICT (schema 5 on)
#: What descriptions share (their keys, the sources, the usual path parts), the preset
#: dictionary they are deflated with: one of about 400 bytes takes about 190 (a version's
#: own hashes, path and id are most of what is left). Never to change: packs hold them.
DESCRIPTION_DICT = (
    b'{"gone":{"source":"{"parts":{"of":["with":[["after":"praisonai","pi","opencode","goose",'
    b'"aider","copilot","cline","kimi","gemini","codex","claude",/home/.local/share/.config/'
    b"Code/User/globalStorage/saoudrizwan.claude-dev/tasks/ui_messages.json/.kimi/sessions/"
    b"agents/main/wire.jsonl/.copilot/session-state/events.jsonl/.gemini/tmp/chats/session-"
    b'/.codex/sessions/rollout-/.claude/projects/.jsonl","session_id":"","seen":17,"size":'
    b'{"version":{"source":"claude","path":"/home/","messages":"sha256":"","chunks":["'
)
MAX_DESCRIPTION = 16 << 20  # a description inflating to more than this is damaged
_HEADER = struct.Struct(">4sB3x32sQ")  # magic, dictionary flag, pad, sha256, compressed length
#: How :meth:`Vault.keep_many` keeps a file it kept before: (path, session id, bytes,
#: messages) -> whether a version was added.
Again = Callable[[str, str, bytes, "int | None"], bool]


def pack_id(path: Path) -> int | None:
    """The id of pack file ``path`` (``000001.pack``: 1), None for any other name."""
    stem, dot, ext = path.name.partition(".")
    return int(stem) if dot and ext == "pack" and stem.isdigit() else None


def scan_pack(
    fh: IO[bytes], limit: int | None = None
) -> Iterator[tuple[int, bytes, int, bytes, int]]:
    """The records of an open pack in order, up to ``limit`` (its end): (offset, magic, flag,
    digest, length of its data), the file positioned after the header of each. Stops at the
    first header that is not one (a torn tail)."""
    offset = 0
    fh.seek(0, os.SEEK_END)
    end = fh.tell() if limit is None else min(limit, fh.tell())
    while offset + _HEADER.size <= end:
        fh.seek(offset)
        magic, flag, digest, length = _HEADER.unpack(fh.read(_HEADER.size))
        if magic not in (MAGIC, RECORD) or offset + _HEADER.size + length > end:
            return
        yield offset, magic, flag, digest, length
        offset += _HEADER.size + length


def encode_description(record: dict[str, Any]) -> tuple[int, bytes]:
    """The flag and the stored bytes of a pack description."""
    raw = json.dumps(record, separators=(",", ":")).encode()
    # A 2 KiB window and a small hash (the dictionary and a description fit in it): as small
    # as with zlib's defaults (the same total on a bench vault's 5,000), from a compressor of
    # about 10 KiB instead of 384 KiB, which the allocator maps afresh each time (about 170 ->
    # 20 µs a description, measured amid other compression work).
    deflate = zlib.compressobj(9, zlib.DEFLATED, 11, 4, zlib.Z_DEFAULT_STRATEGY, DESCRIPTION_DICT)
    return DESCRIBED_Z, deflate.compress(raw) + deflate.flush()


def decode_description(flag: int, payload: bytes) -> Any:
    """A pack description from its flag and stored bytes (``ValueError`` when it cannot be
    read: an unknown flag, damaged bytes, or more than :data:`MAX_DESCRIPTION` inflated)."""
    if flag == DESCRIBED_Z:
        inflate = zlib.decompressobj(zdict=DESCRIPTION_DICT)
        try:
            payload = inflate.decompress(payload, MAX_DESCRIPTION)
        except zlib.error as exc:
            raise ValueError(f"a damaged description: {exc}") from exc
        if not inflate.eof or inflate.unconsumed_tail:
            raise ValueError("a damaged or oversized description")
    elif flag != DESCRIBED:
        raise ValueError(f"a description of an unknown kind ({flag})")
    return json.loads(payload)


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
    stored_bytes: int  # compressed chunk bytes the catalog names
    kept_bytes: int  # the bytes of every file's latest version, uncompressed
    disk_bytes: int = 0  # what the vault's files take on disk (packs, catalog)


def _chunk_list(text: str, sha: str) -> list[str]:
    """A version's chunks as the catalog holds them: empty for a version that is one chunk
    (its hash is the version's), else a JSON list."""
    return json.loads(text) if text else [sha]


def _chunk_text(chunks: list[str], sha: str) -> str:
    return "" if chunks == [sha] else json.dumps(chunks)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _blocks(data: bytes) -> Iterator[bytes]:
    view = memoryview(data)
    for start in range(0, len(data), BLOCK):
        yield bytes(view[start : start + BLOCK])
