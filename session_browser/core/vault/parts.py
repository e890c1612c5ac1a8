"""The part files of a session file: Claude Code's subagent runs, which the index reads with
their main transcript (``<stem>/subagents/agent-*.jsonl``, older builds' ``agent-*.jsonl``
beside it) and which its agent deletes with it.

Each part file is kept as a file of its own (its versions stored as any file's: an appended
one costs what was appended), its ``files`` row naming the main file's (``part_of``), and the
``parts`` table names the versions of them that go with each version of the main file. A
version of the main file is thus its bytes and its parts as they were then: when only a part
changed, the main file gets a new version of the same bytes (no byte stored again). A part is
placed relative to its main file: read back, restored, beside it where it was.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import VaultError
from .format import Version

if TYPE_CHECKING:
    from .store import Vault

log = logging.getLogger("session_browser.vault")


def keep_parts(
    vault: Vault,
    source: str,
    path: str | os.PathLike[str],
    session_id: str,
    files: Sequence[Path],
    *,
    added: Version | None,
    messages: int | None = None,
    now: float | None = None,
) -> Version | None:
    """Keep ``files``, the part files of the session file at ``path`` as they are now, with
    the version of it just kept (``added``, what keeping it added: None when its latest
    version already held its bytes). The version of the main file they go with when one was
    added (``added``, or a new version of the same bytes when only the parts changed); None
    when nothing changed. A part file that cannot be read is left out (logged)."""
    when = time.time() if now is None else now
    text_path = os.fspath(path)
    with vault.batch():
        db = vault._db
        row = db.execute(
            "SELECT fid FROM files WHERE source = ? AND path = ?", (source, text_path)
        ).fetchone()
        main = added or vault.latest_of(source, text_path)
        if row is None or main is None:
            return added
        vids: set[int] = set()
        for part in files:
            try:
                kept = vault.keep_file(source, part, session_id, now=when)
            except OSError as exc:
                log.warning("vault: %s not kept: %s", part, exc)
                continue
            db.execute(
                "UPDATE files SET part_of = ? WHERE source = ? AND path = ?",
                (row[0], source, os.fspath(part)),
            )
            kept = kept or vault.latest_of(source, part)  # None: the bytes kept last
            if kept is not None:
                vids.add(kept.vid)
        if added is None:
            had = {
                int(r[0]) for r in db.execute("SELECT part FROM parts WHERE vid = ?", (main.vid,))
            }
            if vids == had:
                return None
            count = main.messages if messages is None else messages
            added = vault._add_version(
                int(row[0]), when, main.size, main.sha256, list(main.chunks), count
            )
        db.executemany(
            "INSERT OR IGNORE INTO parts (vid, part) VALUES (?, ?)",
            [(added.vid, vid) for vid in sorted(vids)],
        )
        if vids:
            vault._describe(vault._parts_record(added, [vault.version(v) for v in sorted(vids)]))
        return added


def parts_of(vault: Vault, version: Version) -> list[tuple[Version, str]]:
    """The versions of the part files that go with ``version``, each with its path relative
    to the main file's dir (:class:`VaultError` for a part kept outside that dir)."""
    rows = vault._db.execute(
        f"{vault._SELECT} JOIN parts p ON p.part = v.vid WHERE p.vid = ? ORDER BY f.path",
        (version.vid,),
    ).fetchall()
    base = os.path.dirname(version.path)
    out: list[tuple[Version, str]] = []
    for r in rows:
        part = vault._version(r)
        rel = os.path.relpath(part.path, base)
        if os.path.isabs(rel) or rel == os.curdir or rel.split(os.sep)[0] == os.pardir:
            raise VaultError(f"part {part.path} of {version.path} is outside its dir")
        out.append((part, rel))
    return out


def parts_size(vault: Vault, version: Version) -> tuple[int, int]:
    """How many part files go with ``version`` and their bytes."""
    count, size = vault._db.execute(
        "SELECT count(*), coalesce(sum(v.size), 0) FROM parts p JOIN versions v ON v.vid = p.part"
        " WHERE p.vid = ?",
        (version.vid,),
    ).fetchone()
    return int(count), int(size)


def drop_unused(vault: Vault, vid: int) -> None:
    """Main version ``vid`` was dropped (inside a batch): so are the versions of part files
    no kept version names any more."""
    db = vault._db
    db.execute("DELETE FROM parts WHERE vid = ?", (vid,))
    db.execute(
        "DELETE FROM versions WHERE vid IN (SELECT v.vid FROM versions v"
        " JOIN files f ON f.fid = v.fid WHERE f.part_of IS NOT NULL"
        " AND v.vid NOT IN (SELECT part FROM parts))"
    )
