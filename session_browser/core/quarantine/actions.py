"""The rescue actions (restore, merge, fold, discard) and undo, each journaled."""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..files import (
    SessionFileError,
    atomic_write_bytes,
    dumps_session,
    fsync_dir,
    read_json_file,
    session_lock,
)
from ..forget.deny import denied_file
from ..model import JSONDict, epoch_seconds, is_summary_message, utc_now_iso
from ..paths import ensure_private_dir
from ..store import DefaultSessionStore
from .items import (
    KIND_LIVE,
    KIND_SPILL,
    LISTS,
    QuarantineError,
    QuarantineItem,
    _read_capped,
    diagnose,
)
from .journal import (
    PRIVATE_FILE_MODE,
    ActionResult,
    _copy_sparse,
    _FileChange,
    _Journal,
    _matches,
    _put_back,
    _sha,
    _sha_file,
    _state,
    journal_dir,
    journal_entries,
    recover_pending,
    trash_dir,
)
from .listing import item_history, unavailable
from .salvage import (
    Salvage,
    _missing,
    _no_own_file,
    _salvage_item_bytes,
    _target,
    _usable,
    claim_note,
    salvage,
)


def _changes_result(
    action: str, item: QuarantineItem, sid: str | None, changes: Sequence[_FileChange]
) -> ActionResult:
    result = ActionResult(
        action=action,
        dry_run=True,
        item=str(item.path),
        session_id=sid,
        files=[{"path": str(c.path), "role": c.role, "change": c.change} for c in changes],
    )
    if item.inner_id is not None and item.session_id:
        result.notes.append(claim_note(item.session_id, item.inner_id))
    return result


def _write_session_bytes(
    store: DefaultSessionStore,
    session_id: str,
    journal: _Journal,
    changes: Sequence[_FileChange],
    build: Callable[[JSONDict | None], JSONDict],
    *,
    must_not_exist: bool,
) -> tuple[JSONDict, list[str]]:
    """Under the session lock: check, back up every touched file, write, finish the entry.

    ``build`` gets what the session's own file holds, read fresh under the lock (None when
    there is none); a file that is corrupt or holds another session is never replaced.
    Returns the written dict and notes (a removal that could not be done).
    """
    path = store.session_path(session_id)
    store.session_dir.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    with session_lock(path, store.lock_timeout):
        if must_not_exist and path.exists():
            raise QuarantineError(f"{path.name} already exists")
        current = None if must_not_exist else _target(store, session_id)
        data: JSONDict = build(current)
        payload = dumps_session(data)
        journal.backup(changes, {path: {"exists": True, "sha256": _sha(payload)}})
        try:
            atomic_write_bytes(path, payload)
        except BaseException:
            shutil.rmtree(journal.dir, ignore_errors=True)  # nothing changed
            raise
        try:
            for ch in changes:
                if ch.change != "remove":
                    continue
                try:
                    ch.path.unlink(missing_ok=True)  # a writer may have consumed it already
                except OSError as exc:
                    notes.append(f"could not remove {ch.path.name}: {exc.strerror or exc}")
                fsync_dir(ch.path.parent)
        finally:
            journal.finish()  # always: the session file changed, so undo must work
    store._notify(session_id, path, data)  # the store's after-write hook (an index)
    return data, notes


# --------------------------------------------------------------------------- actions


def _refuse_forgotten(item: QuarantineItem, done: str) -> None:
    """Refuse to bring back what the denylist keeps out (its bytes would go into the store
    and into our undo journal)."""
    if denied_file(item.path, item.session_id):
        raise QuarantineError(
            f"{item.name} holds a forgotten session or text, so it is not {done} "
            "(forget --undo-deny ID lets it back; discard takes it out of the store)"
        )


def _free_id(store: DefaultSessionStore, base: str) -> str:
    n = 1
    while True:
        candidate = f"{base}-restored" + ("" if n == 1 else f"-{n}")
        if not store.session_path(candidate).exists():
            return candidate
        n += 1


class AlreadyRestored(QuarantineError):
    """The item was restored before (its journal entry still there): a second copy is only
    made when asked for (``again``) or under a chosen id."""


def restore(
    store: DefaultSessionStore,
    item: QuarantineItem,
    *,
    new_session_id: str | None = None,
    dry_run: bool = False,
    again: bool = False,
) -> ActionResult:
    """Write what the item holds as a new session (default id: ``<id>-restored``).

    A damaged live file is restored in place (unless another id is given): its damaged
    bytes move aside to ``<id>.json.corrupt-<ms>`` and the salvage takes its place, in one
    journal entry that :func:`undo` puts back byte-identical. An item restored before
    raises :class:`AlreadyRestored` unless ``again`` or ``new_session_id`` is given.
    """
    _usable(item)
    _refuse_forgotten(item, "restored")
    result = salvage(item)
    if not result.recovered and not result.envelope:
        raise QuarantineError(f"{item.name}: nothing recoverable to restore")
    if new_session_id is None and not again and item.kind != KIND_LIVE:
        done = [h for h in item_history(journal_entries(), item.path) if h["action"] == "restore"]
        if done:
            raise AlreadyRestored(
                f"{item.name} was already restored as {done[0]['session_id']} "
                f"(undo {done[0]['action_id']} to take that back); restore again only to "
                "make another copy"
            )
    if item.kind == KIND_LIVE and new_session_id in (None, item.session_id):
        return _restore_in_place(store, item, result, dry_run=dry_run)
    base = result.session_id or item.session_id or "salvaged"
    sid = new_session_id or _free_id(store, base)
    if not sid.strip():
        raise QuarantineError("the new session id is empty")
    path = store.session_path(sid)
    if path.exists():
        raise QuarantineError(f"session file {path.name} already exists; choose another id")
    changes = [_FileChange(path, "session", "create")]
    if dry_run:
        res = _changes_result("restore", item, sid, changes)
        res.added = result.recovered
        return res

    def build(_current: JSONDict | None) -> JSONDict:
        data = result.session_dict(sid)
        meta = dict(data.get("metadata") or {})
        meta["restored_from"] = item.name
        data["metadata"] = meta
        for name in ("gateway_session_id", "agent_id"):
            data[name] = None
        return data

    journal = _Journal("restore", item, sid)
    _write_session_bytes(store, sid, journal, changes, build, must_not_exist=True)
    res = _changes_result("restore", item, sid, changes)
    res.dry_run, res.action_id, res.added = False, journal.id, result.recovered
    return res


def _aside_path(path: Path) -> Path:
    """Where a damaged live file's bytes go: ``<file>.corrupt-<ms>`` (``-n`` on collision).

    ``<ms>`` is the file's own mtime (when it was last written, likely when it broke), so
    the dry run names the same file the action then writes.
    """
    try:
        ms = os.stat(path).st_mtime_ns // 1_000_000
    except OSError:
        ms = int(time.time() * 1000)
    base = Path(f"{path}.corrupt-{ms}")
    target, n = base, 1
    while os.path.lexists(target):
        target, n = Path(f"{base}-{n}"), n + 1
    return target


def _restore_in_place(
    store: DefaultSessionStore, item: QuarantineItem, result: Salvage, *, dry_run: bool
) -> ActionResult:
    """Move a damaged live file's bytes aside and write its salvage in its place.

    Under the session lock the file is read again and must still be damaged (and be what is
    backed up); the aside copy is written first, then the salvage replaces the live file
    atomically, so the session's path never goes missing.
    """
    sid = item.session_id
    path = item.path
    if not sid or store.session_path(sid) != path:
        raise QuarantineError(
            f"{item.name} is not the own file of session {sid or '?'}; restore it under "
            "another id instead"
        )
    aside = _aside_path(path)
    changes = [_FileChange(path, "session", "modify"), _FileChange(aside, "quarantine", "create")]
    if dry_run:
        res = _changes_result("restore", item, sid, changes)
        res.added = result.recovered
        res.notes.append(
            f"the damaged bytes are kept as {aside.name}; undo puts them back in {path.name}"
        )
        return res
    journal = _Journal("restore", item, sid)
    journal.entry["in_place"] = True
    with session_lock(path, store.lock_timeout):
        raw = _read_capped(path)
        if diagnose(raw) is None:
            raise QuarantineError(f"{item.name} parses now; nothing changed")
        fresh = _salvage_item_bytes(item, raw)
        data = fresh.session_dict(sid)
        meta = dict(data.get("metadata") or {})
        meta["restored_from"] = aside.name
        data["metadata"] = meta
        payload = dumps_session(data)
        aside = _aside_path(path)
        changes = [
            _FileChange(path, "session", "modify"),
            _FileChange(aside, "quarantine", "create"),
        ]
        intended = {
            path: {"exists": True, "sha256": _sha(payload)},
            aside: {"exists": True, "sha256": _sha(raw)},
        }
        try:
            journal.backup(changes, intended)
            if journal.entry["files"][0]["before"].get("sha256") != _sha(raw):
                raise QuarantineError(f"{item.name} changed while it was read; nothing changed")
            atomic_write_bytes(aside, raw, mode=PRIVATE_FILE_MODE)
        except BaseException:
            with contextlib.suppress(OSError):
                if _state(aside).get("sha256") == _sha(raw):
                    aside.unlink()
            shutil.rmtree(journal.dir, ignore_errors=True)  # nothing changed
            raise
        try:
            atomic_write_bytes(path, payload)
        except BaseException:
            if not _matches(_state(path), {"exists": True, "sha256": _sha(raw)}):
                journal.finish()  # the live file did change: undo must be able to put it back
                raise
            with contextlib.suppress(OSError):
                aside.unlink()
            shutil.rmtree(journal.dir, ignore_errors=True)  # nothing changed
            raise
        journal.finish()
    store._notify(sid, path, data)  # the store's after-write hook (an index)
    res = _changes_result("restore", item, sid, changes)
    res.dry_run, res.action_id, res.added = False, journal.id, fresh.recovered
    res.notes.append(f"the damaged bytes are kept as {aside.name}")
    return res


def _ts(msg: Any) -> float | None:
    if not isinstance(msg, dict):
        return None
    ts = msg.get("timestamp")
    if isinstance(ts, bool) or not isinstance(ts, (int, float)):
        return None
    return epoch_seconds(ts)


def merge_in_time_order(existing: list[Any], new: Sequence[JSONDict]) -> tuple[list[Any], int]:
    """``new`` merged into ``existing`` by timestamp, existing order kept.

    Returns the merged list and how many new messages landed before the first
    existing entry (for shifting a compaction anchor). A compaction summary and entries
    without a timestamp are never overtaken; untimed new messages go last.
    """
    timed = sorted((m for m in new if _ts(m) is not None), key=lambda m: _ts(m) or 0.0)
    untimed = [m for m in new if _ts(m) is None]
    out: list[Any] = []
    k = 0
    inserted_before: list[int] = []
    for entry in existing:
        ets = _ts(entry)
        if ets is not None and not (isinstance(entry, dict) and is_summary_message(entry)):
            while k < len(timed) and (_ts(timed[k]) or 0.0) < ets:
                out.append(timed[k])
                k += 1
        inserted_before.append(k)
        out.append(entry)
    out.extend(timed[k:])
    out.extend(untimed)
    return out, 0 if not inserted_before else inserted_before[0]


def _merge_into(live: JSONDict, missing: Sequence[tuple[str, JSONDict]]) -> JSONDict:
    data = dict(live)
    for name in LISTS:
        new = [m for n, m in missing if n == name]
        if not new:
            continue
        current = data.get(name)
        current = list(current) if isinstance(current, list) else []
        merged, _ = merge_in_time_order(current, new)
        if name == "messages":
            cp = data.get("last_compaction")
            if isinstance(cp, dict) and isinstance(cp.get("message_index"), int):
                old_index = cp["message_index"]
                anchor = current[old_index] if 0 <= old_index < len(current) else None
                if anchor is not None:
                    cp = dict(cp)
                    cp["message_index"] = next(i for i, e in enumerate(merged) if e is anchor)
                    data["last_compaction"] = cp
        data[name] = merged
    data["updated_at"] = utc_now_iso()
    return data


def _salvaged_for(
    store: DefaultSessionStore, item: QuarantineItem, no_id: str
) -> tuple[Salvage, str, Path, JSONDict | None]:
    """``item`` checked and salvaged, the session it names (``no_id``: the error when it names
    none), that session's file, and the live session the file holds (checked to be it)."""
    _usable(item)
    result = salvage(item)
    sid = result.session_id
    if not sid:
        raise QuarantineError(f"{item.name}: {no_id}")
    return result, sid, store.session_path(sid), _target(store, sid)


def _journaled_write(
    store: DefaultSessionStore,
    action: str,
    item: QuarantineItem,
    sid: str,
    changes: Sequence[_FileChange],
    build: Callable[[JSONDict | None], JSONDict],
) -> ActionResult:
    """Write session ``sid`` as ``build`` makes it from the file read under the lock, with
    the journal entry of ``action`` on ``item`` that lets :func:`undo` take it back."""
    journal = _Journal(action, item, sid)
    _, notes = _write_session_bytes(store, sid, journal, changes, build, must_not_exist=False)
    res = _changes_result(action, item, sid, changes)
    res.dry_run, res.action_id = False, journal.id
    res.notes.extend(notes)
    return res


def merge(
    store: DefaultSessionStore, item: QuarantineItem, *, dry_run: bool = False
) -> ActionResult:
    """Merge the salvaged messages the live session lacks into it (time order kept)."""
    if item.kind == KIND_LIVE:
        raise QuarantineError(str(unavailable(item, "merge")))
    _refuse_forgotten(item, "merged")
    result, sid, path, live = _salvaged_for(store, item, "no session id found to merge into")
    if live is None:
        raise _no_own_file(store, sid) or QuarantineError(
            f"{item.name}: no live session {sid!r} to merge into (use restore instead)"
        )
    changes = [_FileChange(path, "session", "modify")]
    missing = _missing(live, result)
    if dry_run:
        res = _changes_result("merge", item, sid, changes if missing else [])
        res.added = len(missing)
        return res
    if not missing:
        res = _changes_result("merge", item, sid, [])
        res.dry_run = False
        res.notes.append("the live session already has every salvaged message")
        return res
    added = 0

    def build(current: JSONDict | None) -> JSONDict:
        nonlocal added
        if current is None:  # read fresh from the file itself, under the lock
            raise QuarantineError(f"live session {sid!r} vanished; nothing changed")
        fresh = _missing(current, result)
        added = len(fresh)
        return _merge_into(current, fresh)

    res = _journaled_write(store, "merge", item, sid, changes, build)
    res.added = added
    return res


def fold(
    store: DefaultSessionStore, item: QuarantineItem, *, dry_run: bool = False
) -> ActionResult:
    """Fold a spill file's turns into its session (created if missing); the spill is removed.

    The spill's bytes stay in the journal, so :func:`undo` brings it back.
    """
    if item.kind != KIND_SPILL:
        raise QuarantineError(f"{item.name} is not a spill file (use merge or restore)")
    _refuse_forgotten(item, "folded")
    result, sid, path, live = _salvaged_for(store, item, "the spill names no session")
    if live is None:
        elsewhere = _no_own_file(store, sid)
        if elsewhere is not None:
            raise elsewhere
    changes = [
        _FileChange(path, "session", "modify" if live is not None else "create"),
        _FileChange(item.path, "spill", "remove"),
    ]
    if dry_run:
        res = _changes_result("fold", item, sid, changes)
        res.added = len(_missing(live, result))
        return res
    added = 0

    def build(current: JSONDict | None) -> JSONDict:
        nonlocal added
        fresh = _missing(current, result)  # against the file itself, read under the lock
        added = len(fresh)
        if current is None:
            return result.session_dict(sid)
        return _merge_into(current, fresh)

    res = _journaled_write(store, "fold", item, sid, changes, build)
    res.added = added
    return res


#: The trash path a preview of discarding a file named (by the file's path): the discard
#: that follows moves it there, so what the confirmation said is what happens.
_PLANNED_TRASH: dict[Path, Path] = {}


def _trash_target(item: QuarantineItem, *, dry_run: bool) -> Path:
    """Where discarding ``item`` moves it: the place its last preview named (while that is
    still free and in the trash), else a new folder of the trash. A preview remembers it."""
    planned = _PLANNED_TRASH.pop(item.path, None) if not dry_run else None
    if planned is not None and planned.parent.parent == trash_dir() and not planned.parent.exists():
        return planned
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = trash_dir() / f"{stamp}-{os.urandom(3).hex()}" / item.name
    if dry_run:
        _PLANNED_TRASH[item.path] = target
    return target


def discard(item: QuarantineItem, *, dry_run: bool = False) -> ActionResult:
    """Move the item into our trash (``data_dir()/trash``); it is never deleted.

    The file is copied in chunks (a sparse file stays sparse, memory stays bounded); a
    symlink is moved as the link itself, never followed. The trash folder is the one a
    preview (``dry_run``) of the same file named, so a confirmation names the real place.
    """
    if denied_file(item.path, item.session_id):
        return _discard_forgotten(item, dry_run=dry_run)
    target = _trash_target(item, dry_run=dry_run)
    changes = [
        _FileChange(item.path, item.kind, "remove"),
        _FileChange(target, "trash", "create"),
    ]
    if dry_run:
        return _changes_result("discard", item, item.session_id, changes)
    journal = _Journal("discard", item, item.session_id)
    before = _state(item.path)
    if not before.get("exists"):
        raise QuarantineError(f"{item.path} is gone; nothing discarded")
    journal.backup(changes, {target: before})
    ensure_private_dir(target.parent)
    if "link" in before:
        os.symlink(str(before["link"]), target)
    else:
        _copy_sparse(item.path, target, mode=PRIVATE_FILE_MODE)
    if _state(target).get("sha256") != journal.entry["files"][0]["before"].get("sha256"):
        target.unlink()
        raise QuarantineError(f"{item.path} changed while it was moved; nothing discarded")
    fsync_dir(target.parent)
    item.path.unlink()
    fsync_dir(item.path.parent)
    journal.finish()
    res = _changes_result("discard", item, item.session_id, changes)
    res.dry_run, res.action_id = False, journal.id
    return res


FORGOTTEN_NOTE = (
    "not kept in the trash: it holds a forgotten session or text (forget --list), so no "
    "copy of it is made and this discard cannot be undone"
)


def _discard_forgotten(item: QuarantineItem, *, dry_run: bool) -> ActionResult:
    """Discard a file the denylist keeps out of our dirs: it leaves the store, and neither
    the trash nor the undo journal gets a copy (that copy would bring the forgotten bytes
    back), so there is nothing to undo."""
    res = _changes_result(
        "discard", item, item.session_id, [_FileChange(item.path, item.kind, "remove")]
    )
    res.notes.append(FORGOTTEN_NOTE)
    if dry_run:
        return res
    if not _state(item.path).get("exists"):
        raise QuarantineError(f"{item.path} is gone; nothing discarded")
    item.path.unlink()
    fsync_dir(item.path.parent)
    res.dry_run = False
    return res


# --------------------------------------------------------------------------- undo


def _same(state: JSONDict, expected: JSONDict) -> bool:
    if not expected.get("exists"):
        return not state.get("exists")
    return bool(state.get("exists")) and state.get("sha256") == expected.get("sha256")


def _notify_undone(
    stores: Sequence[DefaultSessionStore], path: Path, before: JSONDict, fallback: Any
) -> None:
    """Tell the store owning ``path`` that undo wrote (or removed) that session file."""
    parent = path.parent.absolute()
    owner = next((s for s in stores if s.session_dir.absolute() == parent), None)
    if owner is None:
        return
    data: JSONDict | None = None
    if before.get("exists"):
        try:
            data = read_json_file(path)
        except (OSError, SessionFileError):
            data = None
    sid = data.get("session_id") if data is not None else None
    if not isinstance(sid, str) or not sid:
        sid = fallback if isinstance(fallback, str) and fallback else path.stem
    owner._notify(sid, path, data)


def undo(
    action_id: str | None = None,
    *,
    dry_run: bool = False,
    lock_timeout: float = 5.0,
    stores: Sequence[DefaultSessionStore] = (),
) -> JSONDict:
    """Put back every file of an action (the last one by default), byte-identical.

    Refuses (:class:`QuarantineError`) when any file changed since the action. On success
    the journal entry is removed, along with anything the action created. Each session file
    put back or removed is reported to the after-write hook (an index) of the store in
    ``stores`` whose session dir holds it.
    """
    # An action killed mid-way is finished (or dropped) first; this writes only our own
    # journal, never a session file, so a dry run does it too.
    recover_pending(lock_timeout)
    entries = [e for e in journal_entries() if e.get("status") == "done"]
    if action_id is None:
        if not entries:
            raise QuarantineError("nothing to undo")
        entry = entries[0]
    else:
        matches = [e for e in entries if str(e.get("id", "")).startswith(action_id)]
        if not matches:
            raise QuarantineError(f"no journal entry {action_id!r}")
        if len(matches) > 1:
            raise QuarantineError(f"{action_id!r} matches {len(matches)} journal entries")
        entry = matches[0]
    entry_dir = journal_dir() / str(entry["id"])
    files = entry.get("files") or []
    locks = contextlib.ExitStack()
    with locks:
        for f in files:
            if f.get("role") == "session":
                locks.enter_context(session_lock(Path(f["path"]), lock_timeout))
        for f in files:
            path = Path(f["path"])
            if not _same(_state(path), f.get("after") or {}):
                raise QuarantineError(f"{path} changed since action {entry['id']}; not undone")
            before = f.get("before") or {}
            if before.get("exists") and "link" not in before:
                copy = entry_dir / str(before.get("copy"))
                try:
                    ok = _sha_file(copy)[0] == before.get("sha256")
                except OSError:
                    ok = False
                if not ok:
                    raise QuarantineError(f"the journal backup of {path} is missing or damaged")
        result = {
            "action_id": entry["id"],
            "action": entry.get("action"),
            "dry_run": dry_run,
            "files": [
                {
                    "path": f["path"],
                    "restore": "remove" if not f["before"].get("exists") else "write",
                }
                for f in files
            ],
        }
        if dry_run:
            return result
        for f in files:
            path = Path(f["path"])
            before = f["before"]
            if before.get("exists"):
                path.parent.mkdir(parents=True, exist_ok=True)
                backup = entry_dir / str(before["copy"]) if "copy" in before else None
                _put_back(path, backup, before)
            else:
                path.unlink(missing_ok=True)
                fsync_dir(path.parent)
                if f.get("role") == "trash":
                    with contextlib.suppress(OSError):
                        path.parent.rmdir()
            if f.get("role") == "session":
                _notify_undone(stores, path, before, entry.get("session_id"))
    shutil.rmtree(entry_dir)
    for d in (journal_dir(), trash_dir()):
        with contextlib.suppress(OSError):
            d.rmdir()  # only when empty
    return result
