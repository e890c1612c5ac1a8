"""Import: the dry run and the list of files an import creates or replaces.

The CLI and the app both run an import in two steps through these functions: a dry run
(nothing written) that lists every session to create or replace, then the same import
for real, after a confirmation (a second one before existing sessions are replaced with
the copies of a redacted export).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import portable
from ..model import ImportReport
from ..store import DefaultSessionStore

CREATE = "create"
REPLACE = "replace"


@dataclass(frozen=True)
class ImportRequest:
    """One import as asked for: the file, the destination store (by its position in the
    list of writable stores) and the options."""

    path: str
    store_index: int = 0
    overwrite: bool = False
    keep_live: bool = False
    skip_invalid: bool = False
    max_bytes: int = portable.DEFAULT_MAX_IMPORT_BYTES
    max_sessions: int | None = None


def import_changes(report: ImportReport) -> list[tuple[str, str]]:
    """``("create", id)`` for each session created, then ``("replace", id)`` for each replaced."""
    return [(CREATE, sid) for sid in report.created_ids] + [
        (REPLACE, sid) for sid in report.replaced_ids
    ]


def run_import(
    store: DefaultSessionStore,
    request: ImportRequest,
    *,
    dry_run: bool,
    allow_redacted: bool = False,
) -> tuple[ImportReport, list[tuple[str, str]]]:
    """Run (or dry-run) an import into ``store``; with it, what happens to each file.

    Raises :class:`~session_browser.core.portable.PortableError` (nothing written) and
    :class:`~session_browser.core.portable.RedactedReplaceRefused`.
    """
    report = portable.import_file(
        store,
        Path(request.path).expanduser(),
        max_bytes=request.max_bytes,
        overwrite=request.overwrite,
        allow_redacted=allow_redacted,
        reset_live_fields=not request.keep_live,
        max_sessions=request.max_sessions,
        skip_invalid=request.skip_invalid,
        dry_run=dry_run,
    )
    return report, import_changes(report)
