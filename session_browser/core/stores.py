"""Which stores a command or the app reads, and opening them.

By default: the project store ``./.praisonai/sessions`` (when present) plus the global store
(``$PRAISONAI_HOME/sessions`` or ``~/.praisonai/sessions``), plus Pi's session dir
(:func:`~session_browser.core.sources.pi.default_pi_dir`) when it exists, de-duplicated by
session id. ``--store DIR`` (repeatable) replaces the default; ``pi:DIR`` names a Pi session
dir (read-only), and a bare ``pi:`` the default Pi dir.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .multi import RecallStore, StoreGroup
from .paths import default_session_dir, project_session_dir, spill_dir_for
from .sources.pi import PI_SOURCE, PiStore, default_pi_dir
from .store import DefaultSessionStore

if TYPE_CHECKING:
    from .pi_index import PiIndexStore

PI_PREFIX = f"{PI_SOURCE}:"


class StoreNotFound(Exception):
    """A store dir that was asked for does not exist (or is not a directory)."""


@dataclass(frozen=True)
class StoreSpec:
    """One store to open: its kind (``praisonai`` or ``pi``) and its directory."""

    kind: str
    path: Path

    @property
    def text(self) -> str:
        """How to name this store on the command line (``DIR`` or ``pi:DIR``)."""
        return f"{PI_PREFIX}{self.path}" if self.kind == PI_SOURCE else str(self.path)


def parse_store_spec(value: str | os.PathLike[str]) -> StoreSpec:
    """``DIR`` -> a PraisonAI store, ``pi:DIR`` -> a Pi store (``pi:`` alone: the default)."""
    text = os.fspath(value)
    if text.startswith(PI_PREFIX):
        rest = text[len(PI_PREFIX) :].strip()
        return StoreSpec(PI_SOURCE, Path(rest).expanduser() if rest else default_pi_dir())
    return StoreSpec("praisonai", Path(text).expanduser())


def default_store_specs(cwd: Path | None = None) -> list[StoreSpec]:
    """The default stores: :func:`default_store_dirs`, then the Pi dir when it exists."""
    specs = [StoreSpec("praisonai", d) for d in default_store_dirs(cwd)]
    pi_dir = default_pi_dir()
    if pi_dir.is_dir():
        specs.append(StoreSpec(PI_SOURCE, pi_dir))
    return specs


def store_specs(dirs: Sequence[str | os.PathLike[str]] | None = None) -> list[StoreSpec]:
    """The stores named by ``dirs`` (or the defaults), checked and without duplicates.

    Explicitly named dirs must exist (:class:`StoreNotFound` otherwise).
    """
    if dirs:
        specs = [parse_store_spec(d) for d in dirs]
        for spec in specs:
            if not spec.path.is_dir():
                what = "Pi session dir" if spec.kind == PI_SOURCE else "store"
                raise StoreNotFound(f"{what} not found: {spec.path} is not a directory")
    else:
        specs = default_store_specs()
    unique: list[StoreSpec] = []
    for spec in specs:
        if not any(spec.kind == u.kind and _same(spec.path, u.path) for u in unique):
            unique.append(spec)
    return unique


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


def open_pi_store(
    path: Path | None = None, *, indexed: bool = False, reconcile: str = "sync"
) -> PiStore | PiIndexStore:
    """A read-only store over a Pi session dir (the default one when ``path`` is None).

    With ``indexed`` it is a :class:`~session_browser.core.pi_index.PiIndexStore` (its index
    in our cache dir, reconciled on open per ``reconcile``); else a scanning
    :class:`~session_browser.core.sources.pi.PiStore`.
    """
    if indexed:
        from .pi_index import PiIndexStore

        return PiIndexStore(path, reconcile=reconcile)
    return PiStore(path)


def open_spec(spec: StoreSpec, *, indexed: bool = False, reconcile: str = "sync") -> RecallStore:
    """Open one :class:`StoreSpec`."""
    if spec.kind == PI_SOURCE:
        return open_pi_store(spec.path, indexed=indexed, reconcile=reconcile)
    return open_store(spec.path, indexed=indexed, reconcile=reconcile)


def open_stores(
    dirs: Sequence[str | os.PathLike[str]] | None = None,
    *,
    indexed: bool = False,
    reconcile: str = "sync",
) -> StoreGroup:
    """Open the given stores (``DIR`` or ``pi:DIR``; or the defaults) as one group.

    Explicitly named dirs must exist (:class:`StoreNotFound` otherwise); default dirs
    that do not exist are simply empty (the default Pi dir is used only when it exists).
    ``indexed`` opens each as an indexed store.
    """
    specs = store_specs(dirs)
    stores: list[RecallStore] = []
    try:
        for spec in specs:
            stores.append(open_spec(spec, indexed=indexed, reconcile=reconcile))
    except BaseException:
        # Those already open are closed (their index connections, background threads).
        for store in reversed(stores):
            close = getattr(store, "close", None)
            if callable(close):
                with contextlib.suppress(Exception):
                    close()
        raise
    return StoreGroup(stores)
