"""Portable export/import of sessions, and human exports (Markdown, self-contained HTML).

The portable payload is ``praisonaiagents`` 1.7.17's, both ways::

    {"version": 1, "sessions": [<session dict as stored>, ...]}

A redacted export adds one top-level key, ``"redacted": {"total": N, "by_kind": {...}}``,
which PraisonAI's import and our older versions ignore.

Import semantics (:func:`import_sessions`)
    - Everything is validated before anything is written: a payload that is not an object,
      whose ``sessions`` is not a list, whose version is newer than 1, or (unless
      ``skip_invalid``) that holds an entry which is not an object, has no usable string
      ``session_id`` or cannot be serialised (too deeply nested, a non-JSON value) raises
      :class:`PortableError` and writes nothing. A dry run writes nothing either.
    - Ids become file names exactly as the store names them (``safe_id``), so ``../../x``
      and ``a/b`` are legal ids whose files land inside the store and keep their id. Two
      ids of one payload that share a file name (``a/b`` and ``a_b``) are not both written:
      the second is skipped with the reason. A file that holds another session id is never
      overwritten, not even with ``overwrite``.
    - ``gateway_session_id`` and ``agent_id`` (top level and in ``metadata``) are cleared
      unless ``reset_live_fields=False``; archived turns, tool calls, ``metadata.lineage_id``
      and every key we do not know are kept.
    - Unlike PraisonAI's import, ``updated_at`` is kept as exported (an import is a restore:
      the session did not change when it was copied). Sessions are written verbatim under
      the session lock with an atomic write; the destination's retention window is never
      applied.
    - Every import that writes is one journal entry (:mod:`.quarantine`): each file it
      replaces is backed up before it is written, so ``quarantine undo`` puts the old
      bytes back and removes the files the import created (when unchanged since).
    - A redacted copy never silently replaces its original. A session is taken as
      redacted when the payload carries the ``redacted`` marker, or (an export without
      the marker: older versions, other tools) when it holds a ``[REDACTED:<kind>]``
      placeholder anywhere. Replacing an existing session with a redacted one raises
      :class:`RedactedReplaceRefused` unless ``allow_redacted``; creating one is allowed.
      A dry run reports it instead (:attr:`ImportReport.refused`).
"""

from __future__ import annotations

import html
import json
import os
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from . import quarantine, recall
from .files import SessionFileError, dumps_session, iter_session_files, loads, read_json_file
from .model import (
    REASON_WRITE_FAILED,
    ImportReport,
    JSONDict,
    SessionData,
    SessionHit,
    content_text,
    dumps_json,
    is_summary_message,
)
from .paths import safe_id
from .redact import Redactor, has_placeholder
from .store import DefaultSessionStore, _check_id, stored_id
from .text import printable, safe_json

PORTABLE_VERSION = 1
LIVE_FIELDS = ("gateway_session_id", "agent_id")
DEFAULT_MAX_IMPORT_BYTES = 1 << 30  # 1 GiB: far above a real store's export
FORMATS = ("json", "md", "html")

REASON_EXISTS = "already exists (use overwrite)"
REASON_DUPLICATE = "duplicate in payload"
REASON_LIMIT = "over the limit"
REDACTED_KEY = "redacted"
IMPORT_ACTION = "import"


class PortableError(ValueError):
    """A payload, file or request that cannot be honoured; nothing was written."""


class RedactedReplaceRefused(PortableError):
    """An import would replace existing sessions with redacted copies; ``ids`` names them."""

    def __init__(self, message: str, ids: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.ids = list(ids)


class UnreadableSession(PortableError):
    """A whole-store export met a file it cannot read (``skip_unreadable`` skips it)."""


class UnexportableSession(PortableError):
    """A session that cannot be written out (nested too deeply); ``ids`` names them."""

    def __init__(self, message: str, ids: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.ids = list(ids)


class ExportSource(Protocol):
    """A group of stores to export from (a :class:`~session_browser.core.multi.StoreGroup`)."""

    @property
    def stores(self) -> Sequence[Any]: ...

    def store_of(self, session_id: str) -> Any: ...


class SessionNotFound(KeyError):
    """No session with that id in the store."""

    def __str__(self) -> str:
        return f"unknown session id: {self.args[0]!r}"


# --------------------------------------------------------------------------- export


def _read(store: DefaultSessionStore, session_id: str) -> JSONDict:
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


def _lineage_members(
    store: DefaultSessionStore, data: JSONDict, *, exclude: set[str]
) -> list[JSONDict]:
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
    store: DefaultSessionStore, session_id: str, *, include_lineage: bool = True
) -> JSONDict:
    """The portable payload of one session (plus its lineage members when asked).

    Raises :class:`SessionNotFound` for an unknown id and :class:`PortableError` for an
    unreadable file.
    """
    return export_sessions(store, [session_id], include_lineage=include_lineage)


def export_sessions(
    store: DefaultSessionStore, session_ids: Iterable[str], *, include_lineage: bool = False
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


def _session_files(store: DefaultSessionStore) -> list[Path]:
    return sorted(path for path, _st in iter_session_files(store.session_dir.path))


def _read_for_backup(
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
    store: DefaultSessionStore,
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
    for path in _session_files(store):
        data = _read_for_backup(path, skip_unreadable, skipped)
        if data is not None:
            sessions.append(data)
    return {"version": PORTABLE_VERSION, "sessions": sessions}


Progress = Callable[[int, int], None]


def collect_sessions(
    group: ExportSource,
    session_ids: Sequence[str] = (),
    *,
    all_sessions: bool = False,
    include_lineage: bool = True,
    skip_unreadable: bool = False,
    skipped: list[str] | None = None,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> list[JSONDict]:
    """The stored session dicts an export of a group of stores holds, each id once.

    ``all_sessions``: every session of every JSON store (first store wins an id; unreadable
    files as in :func:`export_all`). Otherwise the sessions named, from whichever store holds
    each (a read-only store such as Pi's gives its session in the stored shape), with their
    lineage members when ``include_lineage``. Raises :class:`SessionNotFound` for an unknown
    id. ``progress(done, total)`` is called as files/ids are done; when ``cancelled()`` turns
    true the sessions collected so far are returned.
    """
    sessions: list[JSONDict] = []
    seen: set[str] = set()

    def add(data: JSONDict) -> None:
        sid = str(data.get("session_id") or "")
        if sid not in seen:
            seen.add(sid)
            sessions.append(data)

    def step(done: int, total: int) -> bool:
        if progress is not None and (done == total or done % max(1, total // 100) == 0):
            progress(done, total)
        return cancelled is not None and cancelled()

    if all_sessions:
        files = [
            path
            for store in group.stores
            if isinstance(store, DefaultSessionStore)
            for path in _session_files(store)
        ]
        if step(0, len(files)):
            return sessions
        for n, path in enumerate(files, 1):
            data = _read_for_backup(path, skip_unreadable, skipped)
            if data is not None:
                add(data)
            if step(n, len(files)):
                break
        return sessions
    if step(0, len(session_ids)):
        return sessions
    for n, sid in enumerate(session_ids, 1):
        store = group.store_of(sid)
        if store is None:
            raise SessionNotFound(sid)
        if isinstance(store, DefaultSessionStore):
            payload = export_sessions(store, [sid], include_lineage=include_lineage)
            for data in payload["sessions"]:
                add(data)
        else:
            add(store.get_session(sid).to_dict())
        if step(n, len(session_ids)):
            break
    return sessions


def _exportable(session: Any) -> bool:
    """Whether one session serialises at the depth it has inside a payload."""
    try:
        dumps_json({"sessions": [session]}, indent=2)
        return True
    except (RecursionError, ValueError, TypeError):
        return False


def export_bytes(
    sessions: Sequence[JSONDict],
    fmt: str,
    *,
    redact: bool = False,
    skipped: list[str] | None = None,
) -> tuple[bytes, dict[str, int]]:
    """The file an export writes (``json``, ``md`` or ``html``) and what redaction replaced.

    A session that cannot be written (nested too deeply) raises
    :class:`UnexportableSession` naming it; when ``skipped`` is given it is left out
    instead and its id appended there.
    """
    try:
        return _export_bytes(sessions, fmt, redact=redact)
    except (UnexportableSession, RecursionError) as exc:
        if skipped is None:
            if isinstance(exc, UnexportableSession):
                raise
            raise _unexportable(sessions) from exc
        kept = [s for s in sessions if _exportable(s)]
        skipped.extend(str(s.get("session_id")) for s in sessions if not _exportable(s))
        if len(kept) == len(sessions):
            raise
        return _export_bytes(kept, fmt, redact=redact)


def _unexportable(sessions: Sequence[Any]) -> UnexportableSession:
    bad = [str(s.get("session_id")) for s in sessions if not _exportable(s)]
    names = ", ".join(_short(b) for b in bad[:3]) or "a session"
    more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
    return UnexportableSession(
        f"session {names}{more} is nested too deeply to export "
        "(--skip-unreadable exports the rest)",
        bad,
    )


def _export_bytes(
    sessions: Sequence[JSONDict], fmt: str, *, redact: bool = False
) -> tuple[bytes, dict[str, int]]:
    if fmt == "json":
        payload: JSONDict = {"version": PORTABLE_VERSION, "sessions": list(sessions)}
        redactions: dict[str, int] = {}
        if redact:
            payload, redactions = redact_payload(payload)  # marked as redacted
        return dumps_payload(payload), redactions
    rendered = render_sessions(sessions, fmt, redact=redact)
    return rendered.text.encode("utf-8"), dict(rendered.redactions)


def dumps_payload(payload: JSONDict) -> bytes:
    """A payload as file bytes (``indent=2``, UTF-8, like the session files).

    C1 and bidi controls, U+2028/U+2029 and lone surrogates are written as JSON ``\\u``
    escapes (:func:`~.text.safe_json`): the file parses to exactly the same data and no
    raw control reaches a terminal with ``-o -``.
    """
    try:
        return safe_json(payload).encode("utf-8")
    except RecursionError as exc:
        raise _unexportable(payload.get("sessions") or []) from exc


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


# --------------------------------------------------------------------------- human exports


@dataclass
class Rendered:
    """A human export and what redaction hid in it."""

    text: str
    redactions: dict[str, int] = field(default_factory=dict)

    @property
    def redacted(self) -> int:
        return sum(self.redactions.values())


@dataclass
class _Entry:
    """One rendered message of a transcript."""

    index: int
    role: str
    when: str
    content: str
    archived: bool = False
    summary: bool = False
    anchor: bool = False
    tool: str = ""


@dataclass
class _Block:
    """One session (or one search hit) to render."""

    title: str
    facts: list[tuple[str, str]]
    entries: list[_Entry | str]  # a str is a marker line (the compaction boundary)


def _fmt_ts(ts: Any) -> str:
    if isinstance(ts, bool) or not isinstance(ts, (int, float)):
        return "" if ts is None else str(ts)
    try:
        return datetime.fromtimestamp(float(ts), UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return str(ts)


class _Text:
    """Untrusted text prepared for output: controls made visible, optionally redacted."""

    def __init__(self, redactor: Redactor | None) -> None:
        self.redactor = redactor

    def __call__(self, value: Any, *, one_line: bool = False) -> str:
        text = value if isinstance(value, str) else str(value)
        if self.redactor is not None:
            text = self.redactor.text(text)
        return printable(text, one_line=one_line)


def _tool_text(msg: JSONDict) -> str:
    parts: list[str] = []
    calls = msg.get("tool_calls")
    if calls:
        try:
            parts.append("tool calls: " + json.dumps(calls, ensure_ascii=False, indent=2))
        except (TypeError, ValueError, RecursionError):
            parts.append("tool calls: (unprintable)")
    call_id = msg.get("tool_call_id")
    if call_id is not None:
        parts.append(f"tool call id: {call_id}")
    return "\n".join(parts)


def _entry(msg: JSONDict, index: int, clean: _Text, *, anchor: bool = False) -> _Entry:
    role = msg.get("role", "")
    tool = _tool_text(msg)
    return _Entry(
        index=index,
        role=clean(role if isinstance(role, str) else str(role), one_line=True),
        when=clean(_fmt_ts(msg.get("timestamp")), one_line=True),
        content=clean(content_text(msg.get("content"))),
        archived=bool(msg.get("archived")),
        summary=is_summary_message(msg),
        anchor=anchor,
        tool=clean(tool) if tool else "",
    )


def _boundary(count: int, present: bool) -> str:
    turns = "turn" if count == 1 else "turns"
    where = "above" if present else "not in this export"
    return f"compaction boundary: {count} earlier {turns} archived here ({where})"


def _session_block(data: JSONDict, clean: _Text) -> _Block:
    messages = recall.project(data)
    archived_count = sum(1 for m in messages if m.get("archived"))
    entries: list[_Entry | str] = []
    boundary_done = False
    for i, msg in enumerate(messages):
        if not boundary_done and not msg.get("archived"):
            if archived_count or is_summary_message(msg):
                count = archived_count
                if not count:
                    meta = msg.get("metadata")
                    n = meta.get("compacted_count") if isinstance(meta, dict) else None
                    count = n if isinstance(n, int) and not isinstance(n, bool) else 0
                entries.append(_boundary(count, archived_count > 0))
            boundary_done = True
        entries.append(_entry(msg, i, clean))
    if archived_count and not boundary_done:
        entries.append(_boundary(archived_count, True))
    sid = str(data.get("session_id") or "")
    facts = [
        ("session id", printable(sid, one_line=True)),
        ("created", clean(data.get("created_at") or "", one_line=True)),
        ("updated", clean(data.get("updated_at") or "", one_line=True)),
        ("messages", f"{len(messages) - archived_count} active, {archived_count} archived"),
    ]
    agent = data.get("agent_name")
    if agent:
        facts.append(("agent", clean(agent, one_line=True)))
    lineage = recall.lineage_key(data)
    if lineage:
        facts.append(("lineage", clean(lineage, one_line=True)))
    return _Block(clean(recall.session_title(data), one_line=True), facts, entries)


def _hit_block(hit: SessionHit, clean: _Text) -> _Block:
    entries: list[_Entry | str] = []
    for msg in hit.messages:
        idx = msg.get("index")
        index = idx if isinstance(idx, int) else -1
        entries.append(_entry(msg, index, clean, anchor=index == hit.anchor_index))
    facts = [
        ("session id", printable(hit.session_id, one_line=True)),
        ("when", clean(hit.when or "", one_line=True)),
        ("score", f"{hit.score:g}"),
        ("anchor", f"#{hit.anchor_index}" + (" (archived turn)" if hit.archived else "")),
    ]
    if hit.snippet:
        facts.append(("snippet", clean(hit.snippet, one_line=True)))
    return _Block(clean(hit.title or hit.session_id, one_line=True), facts, entries)


# ---- Markdown


def _md_inline(text: str) -> str:
    """Text safe in a Markdown heading or list item (markup and raw HTML escaped)."""
    out = []
    for ch in text:
        if ch in "\\`*_{}[]#|>~":
            out.append("\\" + ch)
        elif ch == "<":
            out.append("&lt;")
        elif ch == "&":
            out.append("&amp;")
        else:
            out.append(ch)
    return "".join(out)


def _md_fence(text: str) -> str:
    """``text`` in a fenced block whose fence no run of backticks inside can close."""
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def _md_block(block: _Block, level: int) -> list[str]:
    hashes = "#" * level
    lines = [f"{hashes} {_md_inline(block.title)}", ""]
    lines += [f"- **{name}:** {_md_inline(value)}" for name, value in block.facts]
    lines.append("")
    for item in block.entries:
        if isinstance(item, str):
            lines += ["---", "", f"> **{_md_inline(item)}**", "", "---", ""]
            continue
        tags = []
        if item.anchor:
            tags.append("▶ match")
        if item.archived:
            tags.append("archived")
        if item.summary:
            tags.append("compaction summary")
        tag = f" · *{', '.join(tags)}*" if tags else ""
        when = f" · {_md_inline(item.when)}" if item.when else ""
        lines.append(f"{hashes}# #{item.index} {_md_inline(item.role)}{when}{tag}")
        lines += ["", _md_fence(item.content), ""]
        if item.tool:
            lines += [_md_fence(item.tool), ""]
    return lines


def _md_document(title: str, blocks: Sequence[_Block], note: str) -> str:
    lines = [f"# {_md_inline(title)}", ""]
    if note:
        lines += [f"*{_md_inline(note)}*", ""]
    for block in blocks:
        lines += _md_block(block, 2)
    return "\n".join(lines).rstrip("\n") + "\n"


# ---- HTML

_CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f6f7f9;
color:#1d2330}
main{max-width:60rem;margin:0 auto;padding:1.5rem}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2.5rem;border-bottom:2px solid #ccd}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;font-size:.9rem}
dl.facts dt{color:#667}dl.facts dd{margin:0;overflow-wrap:anywhere}
.msg{background:#fff;border:1px solid #dde;border-left:4px solid #89a;border-radius:6px;
margin:.7rem 0;padding:.5rem .8rem}
.msg header{font-size:.85rem;color:#556}.msg header b{color:#1d2330}
.role-user{border-left-color:#3a7bd5}.role-assistant{border-left-color:#2e9e6a}
.role-tool{border-left-color:#c98a1b}.role-system{border-left-color:#8a5cc9}
.archived{background:#eef0f3;opacity:.9}.summary{border-style:dashed}
.anchor{box-shadow:0 0 0 2px #e0a800}
.tag{display:inline-block;font-size:.75rem;padding:0 .4rem;border-radius:4px;background:#dde;
margin-left:.3rem}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:.3rem 0 0;font:13px/1.45 ui-monospace,
SFMono-Regular,Menlo,Consolas,monospace}
.boundary{text-align:center;color:#8a5cc9;font-weight:600;margin:1.2rem 0;
border-top:2px dashed #8a5cc9;padding-top:.4rem}
.note{color:#667;font-style:italic}
"""


def _h(text: str) -> str:
    return html.escape(text, quote=True)


def _html_block(block: _Block) -> list[str]:
    out = [f"<section><h2>{_h(block.title)}</h2>", '<dl class="facts">']
    out += [f"<dt>{_h(name)}</dt><dd>{_h(value)}</dd>" for name, value in block.facts]
    out.append("</dl>")
    for item in block.entries:
        if isinstance(item, str):
            out.append(f'<div class="boundary">{_h(item)}</div>')
            continue
        role_class = "".join(c if c.isalnum() else "-" for c in item.role.lower())[:20]
        classes = ["msg", f"role-{role_class}"]
        tags = []
        if item.archived:
            classes.append("archived")
            tags.append("archived")
        if item.summary:
            classes.append("summary")
            tags.append("compaction summary")
        if item.anchor:
            classes.append("anchor")
            tags.append("match")
        tag_html = "".join(f'<span class="tag">{_h(t)}</span>' for t in tags)
        when = f" · {_h(item.when)}" if item.when else ""
        out.append(
            f'<article class="{" ".join(classes)}"><header>#{item.index} '
            f"<b>{_h(item.role)}</b>{when}{tag_html}</header><pre>{_h(item.content)}</pre>"
        )
        if item.tool:
            out.append(f"<pre>{_h(item.tool)}</pre>")
        out.append("</article>")
    out.append("</section>")
    return out


def _html_document(title: str, blocks: Sequence[_Block], note: str) -> str:
    head = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_h(title)}</title>",
        f"<style>{_CSS}</style></head><body><main>",
        f"<h1>{_h(title)}</h1>",
    ]
    if note:
        head.append(f'<p class="note">{_h(note)}</p>')
    body: list[str] = []
    for block in blocks:
        body += _html_block(block)
    return "\n".join([*head, *body, "</main></body></html>"]) + "\n"


def _render(title: str, blocks: Sequence[_Block], fmt: str, redactor: Redactor | None) -> Rendered:
    note = ""
    if redactor is not None:
        note = f"Redacted: {redactor.total} secret(s) and email address(es) replaced."
    if fmt == "md":
        text = _md_document(title, blocks, note)
    elif fmt == "html":
        text = _html_document(title, blocks, note)
    else:
        raise PortableError(f"unknown format {fmt!r} (expected md or html)")
    return Rendered(text, dict(redactor.counts) if redactor is not None else {})


def render_sessions(
    sessions: Sequence[JSONDict], fmt: str, *, redact: bool = False, title: str | None = None
) -> Rendered:
    """Markdown (``fmt="md"``) or self-contained HTML (``"html"``) of stored session dicts."""
    redactor = Redactor() if redact else None
    clean = _Text(redactor)
    blocks = [_session_block(s, clean) for s in sessions]
    if title is None:
        title = blocks[0].title if len(blocks) == 1 else f"{len(blocks)} sessions"
    return _render(clean(title, one_line=True), blocks, fmt, redactor)


def render_hits(
    hits: Sequence[SessionHit], fmt: str, *, query: str = "", redact: bool = False
) -> Rendered:
    """Markdown or HTML of search hits, each with its window of messages in context."""
    redactor = Redactor() if redact else None
    clean = _Text(redactor)
    blocks = [_hit_block(h, clean) for h in hits]
    title = f"Search: {query}" if query else "Search results"
    return _render(clean(title, one_line=True), blocks, fmt, redactor)


def redact_payload(payload: JSONDict) -> tuple[JSONDict, dict[str, int]]:
    """A copy of a portable payload with every string value redacted (ids/times kept).

    The copy carries the marker ``"redacted": {"total": N, "by_kind": {...}}`` so an
    import knows it holds placeholders, not the originals' values.
    """
    redactor = Redactor()
    out = redactor.value(payload)
    assert isinstance(out, dict)
    out[REDACTED_KEY] = redactor.as_dict()
    return out, dict(redactor.counts)


def is_marked_redacted(payload: Any) -> bool:
    """Whether a payload says it was redacted (the ``redacted`` marker)."""
    return isinstance(payload, dict) and bool(payload.get(REDACTED_KEY))


def file_name_for(session_id: str) -> str:
    """The store's file name for ``session_id`` (for reports)."""
    return f"{safe_id(session_id)}.json"
