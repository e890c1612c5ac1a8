"""Our own copies outside the index and the vault: the quarantine's trash and undo journal,
the query history and the saved searches."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..files import atomic_write_bytes, fsync_dir, session_id_from_bytes
from ..history import history_path, load_history
from ..paths import safe_id
from ..quarantine.journal import journal_dir, trash_dir
from ..saved_searches import SavedSearchesError, load_saved, saved_path

MAX_SCAN = 256 << 20  # a file bigger than this in the trash or journal is read in blocks
_BLOCK = 1 << 20


@dataclass(frozen=True)
class Needles:
    """What names a session or a text to forget: session ids, and texts (as bytes in every
    form a file may hold them)."""

    session_ids: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()

    def raw(self) -> list[bytes]:
        out: list[bytes] = []
        for t in self.texts:
            out += [v.encode("utf-8", "surrogatepass") for v in _variants(t)]
        return list(dict.fromkeys(out))

    def in_text(self, text: str) -> bool:
        """Whether ``text`` (a query, a saved search) names one of the sessions (as a whole
        word: ``s1`` is not named by ``class1``) or holds one of the texts."""
        if any(t in text for t in self.texts):
            return True
        return any(re.search(rf"(?<![\w-]){re.escape(s)}(?![\w-])", text) for s in self.session_ids)


def _variants(text: str) -> list[str]:
    from .deny import variants

    return variants(text)


def _holds(path: Path, needles: Sequence[bytes]) -> bool:
    if not needles:
        return False
    longest = max(len(n) for n in needles)
    tail = b""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as fh:
        while block := fh.read(_BLOCK):
            window = tail + block
            if any(n in window for n in needles):
                return True
            tail = window[-(longest - 1) :] if longest > 1 else b""
    return False


def _names_session(path: Path, session_ids: Sequence[str]) -> bool:
    """Whether the file at ``path`` is a copy of one of ``session_ids``: by its name (a
    session file's stem, a corrupt or spill copy's first part) or by the id it starts with
    (a broken copy included); a file that only mentions an id somewhere is not one."""
    if not session_ids:
        return False
    stems = {safe_id(s) for s in session_ids}
    if path.stem in stems or path.name.split(".")[0] in stems:
        return True
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as fh:
        head = fh.read(_BLOCK)
    return session_id_from_bytes(head) in session_ids


def _dir_holds(folder: Path, needles: Sequence[bytes], session_ids: Sequence[str]) -> bool:
    for path in folder.rglob("*"):
        if path.is_symlink() or not path.is_file():
            continue
        if _names_session(path, session_ids) or _holds(path, needles):
            return True
    return False


def shred(path: Path) -> None:
    """Overwrite a regular file with zeros, fsync, and unlink it (a link: unlinked)."""
    with contextlib.suppress(OSError):
        if path.is_file() and not path.is_symlink():
            size = path.stat().st_size
            fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                left = size
                zeros = bytes(min(_BLOCK, max(size, 1)))
                while left > 0:
                    left -= os.write(fd, zeros[: min(left, len(zeros))])
                os.fsync(fd)
            finally:
                os.close(fd)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def shred_tree(folder: Path) -> None:
    for path in sorted(folder.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if path.is_dir() and not path.is_symlink():
            with contextlib.suppress(OSError):
                path.rmdir()
        else:
            shred(path)
    shutil.rmtree(folder, ignore_errors=True)
    with contextlib.suppress(OSError):
        fsync_dir(folder.parent)


def _entry_session(folder: Path) -> str | None:
    try:
        entry = json.loads((folder / "entry.json").read_bytes())
    except (OSError, ValueError):
        return None
    value = entry.get("session_id") if isinstance(entry, dict) else None
    return value if isinstance(value, str) else None


def copies(needles: Needles) -> list[Path]:
    """The journal entries and trash folders holding a copy of what ``needles`` name."""
    raw = needles.raw()
    found: list[Path] = []
    for base in (journal_dir(), trash_dir()):
        try:
            folders = sorted(p for p in base.iterdir() if p.is_dir() and not p.is_symlink())
        except OSError:
            continue
        for folder in folders:
            if _entry_session(folder) in needles.session_ids or _dir_holds(
                folder, raw, needles.session_ids
            ):
                found.append(folder)
    return found


def history_hits(needles: Needles) -> list[str]:
    return [q for q in load_history() if needles.in_text(q)]


def saved_hits(needles: Needles) -> list[str]:
    try:
        return [s.name for s in load_saved() if needles.in_text(s.name + "\n" + s.query)]
    except SavedSearchesError:
        return []


def forget_history(needles: Needles) -> int:
    """Drop the remembered queries naming what ``needles`` name; how many."""
    entries = load_history()
    kept = [q for q in entries if not needles.in_text(q)]
    if len(kept) != len(entries):
        payload = json.dumps({"queries": kept}, ensure_ascii=False, indent=0).encode("utf-8")
        atomic_write_bytes(history_path(), payload)
    return len(entries) - len(kept)


def forget_saved(needles: Needles) -> int:
    """Drop the saved searches naming what ``needles`` name; how many."""
    try:
        entries = load_saved()
    except SavedSearchesError:
        return 0
    kept = [s for s in entries if not needles.in_text(s.name + "\n" + s.query)]
    if len(kept) != len(entries):
        payload = {"searches": [{"name": e.name, "query": e.query} for e in kept]}
        atomic_write_bytes(
            saved_path(), json.dumps(payload, ensure_ascii=False, indent=1).encode("utf-8")
        )
    return len(entries) - len(kept)
