"""PraisonAI's portable payload over one store: its sessions out, a payload's sessions in.

``{"version": 1, "sessions": [<session dict as stored>, ...]}`` is ``praisonaiagents``
1.7.17's format both ways. This module reads a payload out of a store's own reads
(``read_raw``, ``iter_sessions``, its session files) and plans and writes one into a store
through its own ``write_session``; it knows no other part of the core. That is all the store
API's ``export_session`` / ``export_all`` / ``import_sessions`` need. The journaled import
(undone by the quarantine workbench), an export from a group of stores and the human formats
compose it from above, in :mod:`.portable`, which hands :func:`import_payload` the writes
it journals.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from . import recall
from .files import (
    SessionFileError,
    dumps_session,
    iter_session_files,
    read_json_file,
    sha256_of,
    stored_id,
)
from .model import REASON_WRITE_FAILED, ImportReport, JSONDict, SessionData
from .paths import check_id
from .redact import has_placeholder

PORTABLE_VERSION = 1
LIVE_FIELDS = ("gateway_session_id", "agent_id")

REASON_EXISTS = "already exists (use overwrite)"
REASON_DUPLICATE = "duplicate in payload"
REASON_LIMIT = "over the limit"
REDACTED_KEY = "redacted"


class PortableError(ValueError):
    """A payload, file or request that cannot be honoured; nothing was written."""


class RedactedReplaceRefused(PortableError):
    """An import would replace existing sessions with redacted copies; ``ids`` names them."""

    def __init__(self, message: str, ids: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.ids = list(ids)


class UnreadableSession(PortableError):
    """A whole-store export met a file it cannot read (``skip_unreadable`` skips it)."""


class SessionNotFound(KeyError):
    """No session with that id in the store."""

    def __str__(self) -> str:
        return f"unknown session id: {self.args[0]!r}"


def is_marked_redacted(payload: Any) -> bool:
    """Whether a payload says it was redacted (the ``redacted`` marker)."""
    return isinstance(payload, dict) and bool(payload.get(REDACTED_KEY))


def short_id(session_id: str, width: int = 80) -> str:
    """A session id for a message: quoted, a huge one cut short (marked)."""
    if len(session_id) <= width:
        return repr(session_id)
    return repr(session_id[:width]) + f"... [{len(session_id) - width} more characters]"


class SessionReads(Protocol):
    """What an export of named sessions reads: a store's own raw reads."""

    def read_raw(self, session_id: str) -> JSONDict | None: ...

    def iter_sessions(self) -> Iterator[tuple[Path, os.stat_result, JSONDict]]: ...


class SessionFiles(Protocol):
    """What a whole-store export and an import need: the dir of a store's session files,
    the file of an id, and the store's own write of a session (locked, atomic)."""

    @property
    def session_dir(self) -> str: ...

    def session_path(self, session_id: str) -> Path: ...

    def write_session(self, session: SessionData, *, overwrite: bool = False) -> bool: ...


# --------------------------------------------------------------------------- export


def _read(store: SessionReads, session_id: str) -> JSONDict:
    try:
        data = store.read_raw(session_id)
    except SessionFileError as exc:
        raise PortableError(f"cannot read session {session_id!r}: {exc.reason}") from exc
    except OSError as exc:
        raise PortableError(f"cannot read session {session_id!r}: {exc.strerror or exc}") from exc
    if data is None:
        raise SessionNotFound(session_id)
    if data.get("session_id") in (None, ""):
        data["session_id"] = session_id
    return data


def _lineage_members(store: SessionReads, data: JSONDict, *, exclude: set[str]) -> list[JSONDict]:
    key = recall.lineage_key(data)
    if not key:
        return []
    out = [
        other
        for _path, _st, other in store.iter_sessions()
        if other["session_id"] not in exclude and recall.lineage_key(other) == key
    ]
    out.sort(key=lambda d: str(d.get("created_at") or ""))
    return out


def export_session(
    store: SessionReads, session_id: str, *, include_lineage: bool = True
) -> JSONDict:
    """The portable payload of one session (plus its lineage members when asked).

    Raises :class:`SessionNotFound` for an unknown id and :class:`PortableError` for an
    unreadable file.
    """
    return export_sessions(store, [session_id], include_lineage=include_lineage)


def export_sessions(
    store: SessionReads, session_ids: Iterable[str], *, include_lineage: bool = False
) -> JSONDict:
    """The portable payload of several sessions, each once, in the order asked."""
    sessions: list[JSONDict] = []
    seen: set[str] = set()
    for sid in session_ids:
        if sid in seen:
            continue
        data = _read(store, sid)
        seen.add(sid)
        sessions.append(data)
        if include_lineage:
            for member in _lineage_members(store, data, exclude=seen):
                seen.add(member["session_id"])
                sessions.append(member)
    return {"version": PORTABLE_VERSION, "sessions": sessions}


def session_files(store: SessionFiles) -> list[Path]:
    """The session files of a store's dir, sorted by name."""
    return sorted(path for path, _st in iter_session_files(Path(store.session_dir)))


def read_for_backup(
    path: Path, skip_unreadable: bool, skipped: list[str] | None
) -> JSONDict | None:
    """One file of a whole-store export; its stem is the id when it stores none."""
    try:
        data = read_json_file(path)
    except (OSError, SessionFileError) as exc:
        if not skip_unreadable:
            why = exc.reason if isinstance(exc, SessionFileError) else (exc.strerror or exc)
            raise UnreadableSession(f"incomplete export: cannot read {path} ({why})") from exc
        if skipped is not None:
            skipped.append(str(path))
        return None
    data["session_id"] = stored_id(data, path)
    return data


def export_all(
    store: SessionFiles,
    *,
    skip_unreadable: bool = False,
    skipped: list[str] | None = None,
) -> JSONDict:
    """Every session of the store, sorted by file name.

    An unreadable or corrupt file makes the backup incomplete, so it raises
    :class:`PortableError` unless ``skip_unreadable`` (then its path goes to ``skipped``).
    A file that stores no ``session_id`` is exported under its file stem, the id the
    store reads it as, so the payload imports again.
    """
    sessions: list[JSONDict] = []
    for path in session_files(store):
        data = read_for_backup(path, skip_unreadable, skipped)
        if data is not None:
            sessions.append(data)
    return {"version": PORTABLE_VERSION, "sessions": sessions}


# --------------------------------------------------------------------------- import


@dataclass
class PlannedSession:
    """One session an import will write."""

    index: int
    session_id: str
    session: SessionData
    size: int
    sha256: str = ""
    replace: bool = False  # its file exists (an overwrite)
    redacted: bool = False  # a redacted copy (marked payload, or placeholders in it)


@dataclass
class ImportPlan:
    """What an import would do, decided before anything is written."""

    planned: list[PlannedSession] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    redacted: bool = False  # the payload, or a session planned from it, is redacted

    @property
    def redacted_replacements(self) -> list[str]:
        """The ids of existing sessions this import would replace with redacted copies."""
        return [p.session_id for p in self.planned if p.replace and p.redacted]


def why(exc: BaseException) -> str:
    """An error's reason for a report line (an ``OSError``'s text without its errno)."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)


def _entry_session(raw: Any, index: int, reset_live_fields: bool) -> tuple[str, SessionData, bytes]:
    """Validate one payload entry; ``PortableError`` says why it is unusable."""
    if not isinstance(raw, dict):
        raise PortableError(f"entry {index} is {type(raw).__name__}, not an object")
    sid = raw.get("session_id")
    if not isinstance(sid, str) or not sid.strip():
        raise PortableError(f"entry {index} has no usable session_id")
    try:
        check_id(sid)
    except ValueError as exc:
        raise PortableError(
            f"entry {index} ({short_id(sid)}): {exc} ({len(sid)} characters)"
        ) from exc
    data = dict(raw)
    if reset_live_fields:
        for name in LIVE_FIELDS:
            data.pop(name, None)
        meta = data.get("metadata")
        if isinstance(meta, dict):
            meta = dict(meta)
            for name in LIVE_FIELDS:
                meta.pop(name, None)
            data["metadata"] = meta
    try:
        session = SessionData.from_dict(data)
        session.session_id = sid
        blob = dumps_session(session.to_dict())
    except RecursionError as exc:
        raise PortableError(f"entry {index} ({short_id(sid)}) is nested too deeply") from exc
    except (TypeError, ValueError, AttributeError) as exc:
        raise PortableError(f"entry {index} ({short_id(sid)}) cannot be stored: {exc}") from exc
    return sid, session, blob


def plan_import(
    store: SessionFiles,
    payload: Any,
    *,
    overwrite: bool = False,
    reset_live_fields: bool = True,
    max_sessions: int | None = None,
    skip_invalid: bool = False,
) -> ImportPlan:
    """Validate a payload against a store; raises :class:`PortableError` for hostile input."""
    if not isinstance(payload, dict):
        raise PortableError(f"payload is {type(payload).__name__}, not an object")
    version = payload.get("version")
    if version is not None and (not isinstance(version, int) or isinstance(version, bool)):
        raise PortableError(f"payload version {version!r} is not an integer")
    if isinstance(version, int) and version > PORTABLE_VERSION:
        raise PortableError(
            f"unsupported payload version {version} (supported <= {PORTABLE_VERSION})"
        )
    raw_sessions = payload.get("sessions")
    if not isinstance(raw_sessions, list):
        raise PortableError("payload has no 'sessions' list")
    if max_sessions is not None and max_sessions < 0:
        raise PortableError("max_sessions must not be negative")
    marked = is_marked_redacted(payload)
    plan = ImportPlan(redacted=marked)
    seen_ids: set[str] = set()
    names: dict[str, str] = {}  # file name -> session id planned for it
    for index, raw in enumerate(raw_sessions):
        try:
            sid, session, blob = _entry_session(raw, index, reset_live_fields)
        except PortableError as exc:
            if not skip_invalid:
                raise PortableError(f"{exc}; nothing was imported") from exc
            bad_id = raw.get("session_id") if isinstance(raw, dict) else None
            plan.skipped.append(
                {
                    "session_id": bad_id if isinstance(bad_id, str) else "",
                    "reason": f"invalid: {exc}",
                }
            )
            continue
        if sid in seen_ids:
            plan.skipped.append({"session_id": sid, "reason": REASON_DUPLICATE})
            continue
        seen_ids.add(sid)
        path = store.session_path(sid)
        if path.name in names:
            plan.skipped.append(
                {
                    "session_id": sid,
                    "reason": f"file name {path.name} is already used by session "
                    f"{names[path.name]!r} in this payload",
                }
            )
            continue
        try:
            exists = os.path.lexists(path)
        except OSError as exc:  # pragma: no cover - lexists swallows most
            plan.skipped.append({"session_id": sid, "reason": f"invalid: {why(exc)}"})
            continue
        if exists:
            try:
                existing = read_json_file(path)
            except (OSError, SessionFileError) as exc:
                plan.skipped.append(
                    {
                        "session_id": sid,
                        "reason": f"existing file {path.name} is unreadable ({exc}); "
                        "not overwritten",
                    }
                )
                continue
            stored = existing.get("session_id")
            if stored not in (None, "") and str(stored) != sid:
                plan.skipped.append(
                    {
                        "session_id": sid,
                        "reason": f"file {path.name} holds another session ({stored!r})",
                    }
                )
                continue
            if not overwrite:
                plan.skipped.append({"session_id": sid, "reason": REASON_EXISTS})
                continue
        if max_sessions is not None and len(plan.planned) >= max_sessions:
            plan.skipped.append(
                {"session_id": sid, "reason": f"{REASON_LIMIT} (max_sessions={max_sessions})"}
            )
            continue
        names[path.name] = sid
        redacted = marked or has_placeholder(blob)
        plan.redacted = plan.redacted or redacted
        sha = sha256_of(blob)
        plan.planned.append(PlannedSession(index, sid, session, len(blob), sha, exists, redacted))
    return plan


def redacted_refusal(
    ids: Sequence[str],
    *,
    dry_run: bool = False,
    hint: str = "allow redacted replacements to do it anyway",
) -> str:
    """Why an import that would replace ``ids`` with redacted copies is refused."""
    first = short_id(ids[0]) if ids else "?"
    outcome = "the import would be refused" if dry_run else "nothing was imported"
    return (
        f"refused: the file is a redacted export and would replace {len(ids)} existing "
        f"session(s) (first: {first}) with copies whose secrets are placeholders; "
        f"{outcome} ({hint})"
    )


WritePlan = Callable[[ImportPlan, ImportReport], None]
"""Writes the sessions of a plan and records each in the report (imported, or skipped with
its reason): how an import that is not a dry run writes."""


def _count(report: ImportReport, session_id: str, replaced: bool) -> None:
    report.imported += 1
    report.imported_ids.append(session_id)
    (report.replaced_ids if replaced else report.created_ids).append(session_id)


def write_plainly(store: SessionFiles, *, overwrite: bool) -> WritePlan:
    """Each planned session through the store's own write, one at a time (no journal)."""

    def write(plan: ImportPlan, report: ImportReport) -> None:
        for item in plan.planned:
            try:
                store.write_session(item.session, overwrite=overwrite)
            except FileExistsError:
                report.skipped.append({"session_id": item.session_id, "reason": REASON_EXISTS})
                continue
            except (OSError, ValueError, TypeError, RecursionError) as exc:
                report.skipped.append(
                    {"session_id": item.session_id, "reason": f"{REASON_WRITE_FAILED}: {why(exc)}"}
                )
                continue
            _count(report, item.session_id, item.replace)

    return write


def import_payload(
    store: SessionFiles,
    payload: Any,
    *,
    overwrite: bool = False,
    allow_redacted: bool = False,
    reset_live_fields: bool = True,
    max_sessions: int | None = None,
    dry_run: bool = False,
    skip_invalid: bool = False,
    write: WritePlan | None = None,
) -> ImportReport:
    """Import a portable payload into ``store`` (the rules: :mod:`.portable`).

    The payload is planned whole first (:func:`plan_import`). Raises
    :class:`RedactedReplaceRefused` (nothing written) when the import would replace existing
    sessions with redacted copies and ``allow_redacted`` is false; a dry run reports it in
    :attr:`ImportReport.refused` instead and writes nothing. ``write`` makes the writes
    (:func:`write_plainly` by default).
    """
    plan = plan_import(
        store,
        payload,
        overwrite=overwrite,
        reset_live_fields=reset_live_fields,
        max_sessions=max_sessions,
        skip_invalid=skip_invalid,
    )
    report = ImportReport(version=PORTABLE_VERSION, dry_run=dry_run, redacted=plan.redacted)
    report.skipped.extend(plan.skipped)
    refused = plan.redacted_replacements
    if refused and not allow_redacted:
        if not dry_run:
            raise RedactedReplaceRefused(redacted_refusal(refused), refused)
        report.refused = list(refused)
    if dry_run:
        for item in plan.planned:
            _count(report, item.session_id, item.replace)
        return report
    (write or write_plainly(store, overwrite=overwrite))(plan, report)
    return report


def count_written(
    report: ImportReport, plan: ImportPlan, created: set[str], replaced: set[str]
) -> None:
    """Record the sessions of ``plan`` a journaled write created or replaced, in the
    payload's order."""
    for item in plan.planned:
        sid = item.session_id
        if sid in created or sid in replaced:
            _count(report, sid, sid in replaced)
