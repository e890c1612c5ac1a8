"""Import: a payload checked whole before anything is written, then journaled writes."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import quarantine
from ..files import SessionFileError, dumps_session, loads, read_json_file
from ..model import (
    REASON_WRITE_FAILED,
    ImportReport,
    SessionData,
)
from ..redact import has_placeholder
from ..store import DefaultSessionStore, _check_id
from .errors import (
    DEFAULT_MAX_IMPORT_BYTES,
    IMPORT_ACTION,
    LIVE_FIELDS,
    PORTABLE_VERSION,
    REASON_DUPLICATE,
    REASON_EXISTS,
    REASON_LIMIT,
    PortableError,
    RedactedReplaceRefused,
    is_marked_redacted,
)

# --------------------------------------------------------------------------- import


def load_payload(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_IMPORT_BYTES) -> Any:
    """Read and parse an export file, refusing files over ``max_bytes``.

    Raises :class:`PortableError` with one clear reason (missing, too big, not UTF-8,
    not JSON, too deeply nested).
    """
    p = Path(path)
    try:
        # O_NONBLOCK: a FIFO is refused at once instead of waiting for a writer.
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO, device or socket"
            raise PortableError(f"{p} is not a regular file ({kind}); nothing was imported")
        with os.fdopen(fd, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > max_bytes:
                raise PortableError(
                    f"{p} is {size} bytes, over the import size cap of {max_bytes} bytes"
                )
            raw = fh.read(max_bytes + 1)
    except PortableError:
        raise
    except OSError as exc:
        raise PortableError(f"cannot read {p}: {exc.strerror or exc}") from exc
    if len(raw) > max_bytes:
        raise PortableError(f"{p} is over the import size cap of {max_bytes} bytes")
    if not raw.strip():
        raise PortableError(f"{p} is empty")
    try:
        return loads(raw)
    except RecursionError as exc:
        raise PortableError(f"{p} is nested too deeply to import") from exc
    except UnicodeDecodeError as exc:
        raise PortableError(f"{p} is not UTF-8 (byte {exc.start})") from exc
    except ValueError as exc:
        raise PortableError(f"{p} is not valid JSON: {exc}") from exc


@dataclass
class _Planned:
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

    planned: list[_Planned] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    redacted: bool = False  # the payload, or a session planned from it, is redacted

    @property
    def redacted_replacements(self) -> list[str]:
        """The ids of existing sessions this import would replace with redacted copies."""
        return [p.session_id for p in self.planned if p.replace and p.redacted]


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)


def _short(session_id: str, width: int = 80) -> str:
    """A session id for a message: quoted, a huge one cut short (marked)."""
    if len(session_id) <= width:
        return repr(session_id)
    return repr(session_id[:width]) + f"... [{len(session_id) - width} more characters]"


def _entry_session(raw: Any, index: int, reset_live_fields: bool) -> tuple[str, SessionData, bytes]:
    """Validate one payload entry; ``PortableError`` says why it is unusable."""
    if not isinstance(raw, dict):
        raise PortableError(f"entry {index} is {type(raw).__name__}, not an object")
    sid = raw.get("session_id")
    if not isinstance(sid, str) or not sid.strip():
        raise PortableError(f"entry {index} has no usable session_id")
    try:
        _check_id(sid)
    except ValueError as exc:
        raise PortableError(
            f"entry {index} ({_short(sid)}): {exc} ({len(sid)} characters)"
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
        raise PortableError(f"entry {index} ({_short(sid)}) is nested too deeply") from exc
    except (TypeError, ValueError, AttributeError) as exc:
        raise PortableError(f"entry {index} ({_short(sid)}) cannot be stored: {exc}") from exc
    return sid, session, blob


def plan_import(
    store: DefaultSessionStore,
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
            plan.skipped.append({"session_id": sid, "reason": f"invalid: {_why(exc)}"})
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
        sha = quarantine.sha256_of(blob)
        plan.planned.append(_Planned(index, sid, session, len(blob), sha, exists, redacted))
    return plan


def redacted_refusal(
    ids: Sequence[str],
    *,
    dry_run: bool = False,
    hint: str = "allow redacted replacements to do it anyway",
) -> str:
    """Why an import that would replace ``ids`` with redacted copies is refused."""
    first = _short(ids[0]) if ids else "?"
    outcome = "the import would be refused" if dry_run else "nothing was imported"
    return (
        f"refused: the file is a redacted export and would replace {len(ids)} existing "
        f"session(s) (first: {first}) with copies whose secrets are placeholders; "
        f"{outcome} ({hint})"
    )


def import_sessions(
    store: DefaultSessionStore,
    payload: Any,
    *,
    overwrite: bool = False,
    allow_redacted: bool = False,
    reset_live_fields: bool = True,
    max_sessions: int | None = None,
    dry_run: bool = False,
    skip_invalid: bool = False,
    source: str = "",
    journal: bool = True,
) -> ImportReport:
    """Import a portable payload into ``store`` (see the module doc for the rules).

    Raises :class:`RedactedReplaceRefused` (nothing written) when the import would replace
    existing sessions with redacted copies and ``allow_redacted`` is false; a dry run
    reports it in :attr:`ImportReport.refused` instead. With ``journal`` (the default) the
    writes are one journal entry, named by :attr:`ImportReport.action_id`, that
    ``quarantine undo`` puts back; ``source`` (the payload's file) names it there.
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
            report.imported += 1
            report.imported_ids.append(item.session_id)
            (report.replaced_ids if item.replace else report.created_ids).append(item.session_id)
        return report
    if journal:
        _import_journaled(store, plan, report, overwrite=overwrite, source=source)
        return report
    for item in plan.planned:
        try:
            store.write_session(item.session, overwrite=overwrite)
        except FileExistsError:
            report.skipped.append({"session_id": item.session_id, "reason": REASON_EXISTS})
            continue
        except (OSError, ValueError, TypeError, RecursionError) as exc:
            report.skipped.append(
                {"session_id": item.session_id, "reason": f"{REASON_WRITE_FAILED}: {_why(exc)}"}
            )
            continue
        report.imported += 1
        report.imported_ids.append(item.session_id)
        (report.replaced_ids if item.replace else report.created_ids).append(item.session_id)
    return report


def _import_journaled(
    store: DefaultSessionStore,
    plan: ImportPlan,
    report: ImportReport,
    *,
    overwrite: bool,
    source: str,
) -> None:
    """Write the planned sessions as one journal entry (see :mod:`.quarantine`)."""
    writes = [
        quarantine.SessionWrite(item.session_id, item.sha256, item.session.to_dict)
        for item in plan.planned
    ]
    try:
        done = quarantine.write_sessions_journaled(
            store,
            IMPORT_ACTION,
            source or "(payload)",
            writes,
            overwrite=overwrite,
            exists_reason=REASON_EXISTS,
            failed_reason=REASON_WRITE_FAILED,
        )
    except (OSError, quarantine.QuarantineError) as exc:
        raise PortableError(
            f"cannot back up the sessions it would replace ({_why(exc)}); nothing was imported"
        ) from exc
    created, replaced = set(done.created), set(done.replaced)
    for item in plan.planned:  # the payload's order
        sid = item.session_id
        if sid in created or sid in replaced:
            report.imported += 1
            report.imported_ids.append(sid)
            (report.replaced_ids if sid in replaced else report.created_ids).append(sid)
    report.skipped.extend(done.skipped)
    report.action_id = done.action_id


def import_file(
    store: DefaultSessionStore,
    path: str | os.PathLike[str],
    *,
    max_bytes: int = DEFAULT_MAX_IMPORT_BYTES,
    overwrite: bool = False,
    allow_redacted: bool = False,
    reset_live_fields: bool = True,
    max_sessions: int | None = None,
    dry_run: bool = False,
    skip_invalid: bool = False,
) -> ImportReport:
    """:func:`load_payload` then :func:`import_sessions` (journaled, named by the file)."""
    payload = load_payload(path, max_bytes=max_bytes)
    return import_sessions(
        store,
        payload,
        overwrite=overwrite,
        allow_redacted=allow_redacted,
        source=str(Path(path).absolute()),
        reset_live_fields=reset_live_fields,
        max_sessions=max_sessions,
        dry_run=dry_run,
        skip_invalid=skip_invalid,
    )
