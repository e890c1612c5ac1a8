"""Export: collect, render and write, with the one policy of where an export may go.

An export is written atomically to a regular file that is not inside any open store's
session or spill dir (a file there is a live session, or becomes one), never through a
symbolic link, never onto a FIFO or device, and never over an existing file unless the
caller says ``replace``. The CLI and the app both write through :func:`export_file`,
one session at a time into the temp file that is renamed into place at the end.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .. import portable
from ..files import atomic_write_bytes, atomic_writer
from ..protocols import RecallStore
from ..text import shown_id

# Why a target path was refused (``ExportTargetError.code``).
TARGET_EMPTY = "empty"
TARGET_STORE_DIR = "store-dir"
TARGET_SYMLINK = "symlink"
TARGET_DIRECTORY = "directory"
TARGET_NOT_REGULAR = "not-regular"
TARGET_EXISTS = "exists"
TARGET_NO_PARENT = "no-parent"
TARGET_UNREADABLE = "unreadable"

SUFFIX_FORMATS = {"md": "md", "markdown": "md", "html": "html", "htm": "html"}


class ExportTargetError(portable.PortableError):
    """An export may not be written to this path; ``code`` says why (``TARGET_*``)."""

    def __init__(self, code: str, message: str, path: Path) -> None:
        super().__init__(message)
        self.code = code
        self.path = path


def format_for(name: str) -> str:
    """The export format a file name asks for by its suffix (``json`` by default)."""
    return SUFFIX_FORMATS.get(Path(name).suffix.lower().lstrip("."), "json")


def store_dirs(stores: Iterable[RecallStore]) -> list[Path]:
    """The dirs of ``stores`` (resolved) whose files belong to them (sessions, spills):
    nothing but the stores writes into them."""
    found: list[Path] = []
    for store in stores:
        for value in store.owned_dirs():
            if str(value):
                path = Path(value).expanduser().resolve()
                if path not in found:
                    found.append(path)
    return found


def store_dir_holding(stores: Iterable[RecallStore], path: Path) -> Path | None:
    """The session or spill dir of ``stores`` that ``path`` lies in (as named, or once
    resolved: ``..`` and symbolic links do not get around it), if any."""
    candidates = {path.expanduser().absolute()}
    with contextlib.suppress(OSError, RuntimeError):  # a symlink loop: the plain path
        candidates.add(path.expanduser().resolve())
    for directory in store_dirs(stores):
        for target in candidates:
            if target == directory or directory in target.parents:
                return directory
    return None


def check_target(
    name: str | os.PathLike[str], stores: Iterable[RecallStore], *, replace: bool = False
) -> Path:
    """The path to write for ``name``; raises :class:`ExportTargetError` unless an export
    may be written there.

    ``stores``: the open stores, whose session and spill dirs are refused.
    """
    if not str(name).strip():
        raise ExportTargetError(TARGET_EMPTY, "the output file name is empty", Path())
    path = Path(name).expanduser()
    directory = store_dir_holding(stores, path)
    if directory is not None:
        raise ExportTargetError(
            TARGET_STORE_DIR,
            f"{path} is inside the session store {directory}; exports are never written "
            "into a store's session or spill dir: choose another path",
            path,
        )
    try:
        st: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise ExportTargetError(
            TARGET_UNREADABLE, f"cannot write {path}: {exc.strerror or exc}", path
        ) from exc
    if st is not None and stat.S_ISLNK(st.st_mode):
        # Replacing would turn the link into a file; writing through would reach a file
        # the name does not show: name the real file.
        raise ExportTargetError(
            TARGET_SYMLINK, f"{path} is a symbolic link; give the file it points to", path
        )
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise ExportTargetError(TARGET_DIRECTORY, f"{path} is a directory", path)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise ExportTargetError(
            TARGET_NOT_REGULAR, f"{path} is not a regular file (a FIFO, device or socket)", path
        )
    if st is not None and not replace:
        raise ExportTargetError(TARGET_EXISTS, f"{path} exists", path)
    if not path.parent.is_dir():
        raise ExportTargetError(TARGET_NO_PARENT, f"no such directory: {path.parent}", path)
    return path


def write_export(
    name: str | os.PathLike[str],
    data: bytes,
    stores: Iterable[RecallStore],
    *,
    replace: bool = False,
) -> Path:
    """Write ``data`` to ``name`` atomically after :func:`check_target`; the path written.

    Raises :class:`ExportTargetError`, or ``OSError`` when the write fails (``path`` is
    then as it was).
    """
    path = check_target(name, stores, replace=replace)
    atomic_write_bytes(path, data)
    return path


@dataclass
class Built:
    """An export: how many sessions (or hits) it holds, its size, what redaction replaced
    and the files skipped as unreadable (``data``: its bytes, from :func:`build_export`
    only; ``cancelled``: stopped before the end, nothing to keep)."""

    data: bytes
    count: int
    redactions: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    size: int = 0
    cancelled: bool = False


def stream_export(
    group: Any,
    out: IO[bytes],
    session_ids: Sequence[str] = (),
    *,
    all_sessions: bool = False,
    query: str | None = None,
    limit: int = 10,
    fmt: str = "json",
    redact: bool = False,
    lineage: bool = True,
    skip_unreadable: bool = False,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    spool_dir: Path | None = None,
) -> Built:
    """Collect and render one export into ``out``, one session at a time: the sessions
    named, every session, or (``query``) the hits of a search (as hits in ``md``/``html``,
    as their sessions in ``json``). Memory grows with the largest session, not the store.

    ``out`` holds a partial file when this raises or is cancelled: give it a temp file
    (:func:`export_file` does). Raises
    :class:`~session_browser.core.portable.PortableError` (an empty query, an unreadable
    session without ``skip_unreadable``) and
    :class:`~session_browser.core.portable.SessionNotFound`.
    """
    skipped: list[str] = []
    if query is not None:
        if not query.strip():
            raise portable.PortableError("the query is empty")
        hits = group.search(query, limit=limit)
        if fmt != "json":
            rendered = portable.render_hits(hits, fmt, query=query, redact=redact)
            data = rendered.text.encode("utf-8")
            out.write(data)
            return Built(b"", len(hits), dict(rendered.redactions), size=len(data))
        session_ids, lineage = tuple(h.session_id for h in hits), False
    sessions = portable.iter_sessions(
        group,
        session_ids,
        all_sessions=all_sessions,
        include_lineage=lineage,
        skip_unreadable=skip_unreadable,
        skipped=skipped,
        progress=progress,
        cancelled=cancelled,
    )
    streamed = portable.write_sessions(
        sessions, fmt, out, redact=redact, skip_unexportable=skip_unreadable, spool_dir=spool_dir
    )
    if cancelled is not None and cancelled():
        return Built(b"", 0, {}, skipped, cancelled=True)
    skipped.extend(f"session {shown_id(sid)} (nested too deeply)" for sid in streamed.unexportable)
    return Built(b"", streamed.count, streamed.redactions, skipped, size=streamed.size)


def build_export(
    group: Any,
    session_ids: Sequence[str] = (),
    **options: Any,
) -> Built:
    """:func:`stream_export` into memory: the export's bytes in ``Built.data`` (for small
    exports; a file is written with :func:`export_file`, which holds one session at a
    time)."""
    buffer = io.BytesIO()
    built = stream_export(group, buffer, session_ids, **options)
    if not built.cancelled:
        built.data = buffer.getvalue()
    return built


class _Discarded(Exception):
    """Nothing to keep (cancelled, or empty where that is refused): the temp file goes."""


def export_file(
    name: str | os.PathLike[str],
    group: Any,
    session_ids: Sequence[str] = (),
    *,
    replace: bool = False,
    allow_empty: bool = True,
    written: Callable[[int], None] | None = None,
    **options: Any,
) -> tuple[Path, Built]:
    """:func:`stream_export` into ``name``, atomically, after :func:`check_target` (checked
    again just before the rename): the path and what was written.

    The export streams into a temp file beside the target, which is fsynced and renamed
    over it only when every session is written; on an error, a cancel or (unless
    ``allow_empty``) no session at all, the temp file is removed and the target is left as
    it was (``Built.cancelled``, ``Built.count == 0`` say which). ``written(count)`` is
    called when the sessions are written, before the sync. Raises what
    :func:`stream_export` and :func:`write_export` raise.
    """
    path = check_target(name, group.stores, replace=replace)
    stores = group.stores
    built = Built(b"", 0)
    try:
        with atomic_writer(
            path, before_replace=lambda: check_target(path, stores, replace=replace)
        ) as fh:
            built = stream_export(group, fh, session_ids, spool_dir=path.parent, **options)
            if built.cancelled or (built.count == 0 and not allow_empty):
                raise _Discarded
            if written is not None:
                written(built.count)
    except _Discarded:
        pass
    return path, built


# --------------------------------------------------------------------------- a job (the app)


@dataclass
class ExportJob:
    """One export as the app asks for it: its scope, format, options and target."""

    scope: str  # "current" | "selected" | "all"
    session_ids: list[str]
    fmt: str
    redact: bool
    lineage: bool
    path: Path
    replace: bool = False


@dataclass
class ExportOutcome:
    """What one :class:`ExportJob` did (``error``: why nothing was written)."""

    path: Path
    fmt: str
    sessions: int = 0
    size: int = 0
    redactions: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    cancelled: bool = False
    error: str | None = None


def run_export(
    group: Any,
    job: ExportJob,
    *,
    progress: Callable[[int, int, str], None] = lambda done, total, stage: None,
    cancelled: Callable[[], bool] = lambda: False,
) -> ExportOutcome:
    """Collect, render and write one export (unreadable files skipped); never raises for
    bad input or a failed write: the outcome says what happened."""
    out = ExportOutcome(job.path, job.fmt)
    try:
        _path, built = export_file(
            job.path,
            group,
            job.session_ids,
            replace=job.replace,
            allow_empty=False,
            written=lambda count: progress(count, count, "writing"),
            all_sessions=job.scope == "all",
            fmt=job.fmt,
            redact=job.redact,
            lineage=job.lineage,
            skip_unreadable=True,
            progress=lambda done, total: progress(done, total, "reading"),
            cancelled=cancelled,
        )
        out.skipped, out.redactions = built.skipped, built.redactions
        if built.cancelled:
            out.cancelled = True
            return out
        if built.count == 0:
            out.error = "there is no session to export"
            return out
        out.sessions, out.size = built.count, built.size
    except portable.SessionNotFound as exc:
        out.error = str(exc)
    except portable.PortableError as exc:
        out.error = str(exc)
    except OSError as exc:
        out.error = f"cannot write {job.path}: {exc.strerror or exc}"
    except (RecursionError, ValueError, TypeError) as exc:
        out.error = f"{type(exc).__name__}: {exc}"
    return out
