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
    - Every import that writes is one journal entry (:mod:`..quarantine`): each file it
      replaces is backed up before it is written, so ``quarantine undo`` puts the old
      bytes back and removes the files the import created (when unchanged since).
    - A redacted copy never silently replaces its original. A session is taken as
      redacted when the payload carries the ``redacted`` marker, or (an export without
      the marker: older versions, other tools) when it holds a ``[REDACTED:<kind>]``
      placeholder anywhere. Replacing an existing session with a redacted one raises
      :class:`RedactedReplaceRefused` unless ``allow_redacted``; creating one is allowed.
      A dry run reports it instead (:attr:`ImportReport.refused`).

One store's payload, out and in, is :mod:`..payload` (which the store API's
``export_session`` / ``export_all`` / ``import_sessions`` use); this package composes it with
the quarantine journal, groups of stores and the vault. The package: :mod:`.errors`
(constants, errors), :mod:`.exporting`, :mod:`.importing` (journaled),
:mod:`.human` (Markdown and HTML),
:mod:`.streaming` (an export written one session at a time).
"""

from __future__ import annotations

from ..payload import (
    ImportPlan,
    export_all,
    export_session,
    export_sessions,
    plan_import,
    redacted_refusal,
)
from .errors import (
    DEFAULT_MAX_IMPORT_BYTES,
    FORMATS,
    IMPORT_ACTION,
    LIVE_FIELDS,
    PORTABLE_VERSION,
    REASON_DUPLICATE,
    REASON_EXISTS,
    REASON_LIMIT,
    REDACTED_KEY,
    ExportSource,
    PortableError,
    RedactedReplaceRefused,
    SessionNotFound,
    UnexportableSession,
    UnreadableSession,
    is_marked_redacted,
    redact_payload,
)
from .exporting import (
    Progress,
    collect_sessions,
    dumps_payload,
    export_bytes,
    iter_sessions,
    unexportable_error,
)
from .human import (
    Rendered,
    render_hits,
    render_sessions,
)
from .importing import (
    import_file,
    import_sessions,
    load_payload,
)
from .streaming import Streamed, write_sessions

__all__ = [
    "DEFAULT_MAX_IMPORT_BYTES",
    "FORMATS",
    "IMPORT_ACTION",
    "LIVE_FIELDS",
    "PORTABLE_VERSION",
    "REASON_DUPLICATE",
    "REASON_EXISTS",
    "REASON_LIMIT",
    "REDACTED_KEY",
    "ExportSource",
    "ImportPlan",
    "PortableError",
    "Progress",
    "RedactedReplaceRefused",
    "Rendered",
    "SessionNotFound",
    "Streamed",
    "UnexportableSession",
    "UnreadableSession",
    "collect_sessions",
    "dumps_payload",
    "export_all",
    "export_bytes",
    "export_session",
    "export_sessions",
    "import_file",
    "import_sessions",
    "is_marked_redacted",
    "iter_sessions",
    "load_payload",
    "plan_import",
    "redact_payload",
    "redacted_refusal",
    "render_hits",
    "render_sessions",
    "unexportable_error",
    "write_sessions",
]
