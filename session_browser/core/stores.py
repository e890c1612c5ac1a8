"""Which stores a command or the app reads, and opening them.

By default: the project store ``./.praisonai/sessions`` (when present) plus the global store
(``$PRAISONAI_HOME/sessions`` or ``~/.praisonai/sessions``), de-duplicated by session id.
``--store DIR`` (repeatable) replaces the default.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from .multi import StoreGroup
from .paths import default_session_dir, project_session_dir, spill_dir_for
from .store import DefaultSessionStore


class StoreNotFound(Exception):
    """A store dir that was asked for does not exist (or is not a directory)."""


def default_store_dirs(cwd: Path | None = None) -> list[Path]:
    """The project store (if it exists) then the global store, without duplicates."""
    dirs: list[Path] = []
    project = project_session_dir(cwd)
    if project.is_dir():
        dirs.append(project)
    glob = default_session_dir()
    if not any(_same(glob, d) for d in dirs):
        dirs.append(glob)
    return dirs


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a.expanduser().absolute() == b.expanduser().absolute()


def open_store(
    path: Path, *, indexed: bool = False, reconcile: str = "sync"
) -> DefaultSessionStore:
    """A store over one dir; its spill dir follows PraisonAI's ``<home>/state`` layout.

    With ``indexed`` it is a :class:`~session_browser.core.index.SqliteSessionStore` (its
    index in our cache dir, reconciled on open per ``reconcile``: sync, background or none).
    """
    if indexed:
        from .index import SqliteSessionStore

        return SqliteSessionStore(path, spill_dir=spill_dir_for(path), reconcile=reconcile)
    return DefaultSessionStore(path, spill_dir=spill_dir_for(path))


def open_stores(
    dirs: Sequence[str | os.PathLike[str]] | None = None,
    *,
    indexed: bool = False,
    reconcile: str = "sync",
) -> StoreGroup:
    """Open the given store dirs (or the defaults) as one group.

    Explicitly named dirs must exist (:class:`StoreNotFound` otherwise); default dirs
    that do not exist are simply empty. ``indexed`` opens each as an indexed store.
    """
    if dirs:
        paths = [Path(d).expanduser() for d in dirs]
        for p in paths:
            if not p.is_dir():
                raise StoreNotFound(f"store not found: {p} is not a directory")
    else:
        paths = default_store_dirs()
    unique: list[Path] = []
    for p in paths:
        if not any(_same(p, q) for q in unique):
            unique.append(p)
    return StoreGroup([open_store(p, indexed=indexed, reconcile=reconcile) for p in unique])
