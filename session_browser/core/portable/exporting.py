"""Export: the sessions an export from a group of stores holds, and the file it writes
(JSON payload, md, html). One store's payload is :mod:`..payload`'s."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..actions.rescue import writer_of
from ..compat import CompatReads
from ..model import (
    JSONDict,
    dumps_json,
)
from ..payload import (
    PORTABLE_VERSION,
    SessionNotFound,
    export_sessions,
    read_for_backup,
    session_files,
    short_id,
)
from ..text import safe_json
from ..vault.reading import kept_session
from .errors import (
    ExportSource,
    UnexportableSession,
    redact_payload,
)
from .human import render_sessions

# --------------------------------------------------------------------------- export


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
    return list(
        iter_sessions(
            group,
            session_ids,
            all_sessions=all_sessions,
            include_lineage=include_lineage,
            skip_unreadable=skip_unreadable,
            skipped=skipped,
            progress=progress,
            cancelled=cancelled,
        )
    )


def iter_sessions(
    group: ExportSource,
    session_ids: Sequence[str] = (),
    *,
    all_sessions: bool = False,
    include_lineage: bool = True,
    skip_unreadable: bool = False,
    skipped: list[str] | None = None,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> Iterator[JSONDict]:
    """The sessions of :func:`collect_sessions`, one at a time, each read only when the one
    before it is done with (so an export holds one at a time); when ``cancelled()`` turns
    true the iteration ends."""
    seen: set[str] = set()

    def fresh(data: JSONDict) -> bool:
        sid = str(data.get("session_id") or "")
        if sid in seen:
            return False
        seen.add(sid)
        return True

    def step(done: int, total: int) -> bool:
        if progress is not None and (done == total or done % max(1, total // 100) == 0):
            progress(done, total)
        return cancelled is not None and cancelled()

    if all_sessions:
        files = [
            path
            for writer in map(writer_of, group.stores)
            if writer is not None
            for path in session_files(writer)
        ]
        if step(0, len(files)):
            return
        for n, path in enumerate(files, 1):
            data = read_for_backup(path, skip_unreadable, skipped)
            if data is not None and fresh(data):
                yield data
            del data
            if step(n, len(files)):
                return
        return
    if step(0, len(session_ids)):
        return
    for n, sid in enumerate(session_ids, 1):
        store = group.store_of(sid)
        if store is None:
            kept = kept_session(sid)  # deleted from its dir: the vault's copy
            if kept is None:
                raise SessionNotFound(sid)
            found = [kept]
        elif isinstance(store, CompatReads):  # the JSON store's reads (an index's too)
            found = export_sessions(store, [sid], include_lineage=include_lineage)["sessions"]
        else:
            found = [store.get_session(sid).to_dict()]
        for data in found:
            if fresh(data):
                yield data
        del found
        if step(n, len(session_ids)):
            return


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
    return unexportable_error([str(s.get("session_id")) for s in sessions if not _exportable(s)])


def unexportable_error(bad: Sequence[str]) -> UnexportableSession:
    """The error naming the sessions ``bad`` that are nested too deeply to export."""
    names = ", ".join(short_id(b) for b in bad[:3]) or "a session"
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
