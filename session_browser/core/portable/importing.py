"""Import: a payload checked whole before anything is written (:mod:`..payload`), then
journaled writes that ``quarantine undo`` puts back."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from .. import quarantine
from ..files import loads
from ..model import REASON_WRITE_FAILED, ImportReport
from ..payload import (
    REASON_EXISTS,
    ImportPlan,
    PortableError,
    WritePlan,
    count_written,
    import_payload,
    why,
)
from ..store import DefaultSessionStore
from .errors import DEFAULT_MAX_IMPORT_BYTES, IMPORT_ACTION

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
    write = _journaled(store, overwrite=overwrite, source=source) if journal else None
    return import_payload(
        store,
        payload,
        overwrite=overwrite,
        allow_redacted=allow_redacted,
        reset_live_fields=reset_live_fields,
        max_sessions=max_sessions,
        dry_run=dry_run,
        skip_invalid=skip_invalid,
        write=write,
    )


def _journaled(store: DefaultSessionStore, *, overwrite: bool, source: str) -> WritePlan:
    """The planned sessions written as one journal entry (see :mod:`..quarantine`)."""

    def write(plan: ImportPlan, report: ImportReport) -> None:
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
                f"cannot back up the sessions it would replace ({why(exc)}); nothing was imported"
            ) from exc
        count_written(report, plan, set(done.created), set(done.replaced))
        report.skipped.extend(done.skipped)
        report.action_id = done.action_id

    return write


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
