"""Which stores a command or the app reads, and opening them.

Which kinds of store exist, how ``--store`` names them and where they are by default come
from one table, :data:`~session_browser.core.sources.SOURCES`. By default: the project store
``./.praisonai/sessions`` plus the global store (``$PRAISONAI_HOME/sessions`` or
``~/.praisonai/sessions``), plus Pi's session dir
(:func:`~session_browser.core.sources.pi.default_pi_dir`) and the other agents' dirs, each only
when it exists (the global store stays when none does), de-duplicated by session id.
``--store DIR`` (repeatable) replaces the default; ``pi:DIR`` names a Pi session dir
(read-only), and a bare ``pi:`` the default Pi dir.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, overload

from .multi import RecallStore, StoreGroup
from .paths import same_dir, spill_dir_for
from .sources import DEFAULT_KIND, PI_SOURCE, SOURCES, PiStore, SourceKind
from .sources.praisonai import default_dirs
from .store import DefaultSessionStore

if TYPE_CHECKING:
    from .index import SqliteSessionStore
    from .pi_index import PiIndexStore

PI_PREFIX = f"{PI_SOURCE}:"


class StoreNotFound(Exception):
    """A store dir that was asked for does not exist (or is not a directory)."""


@dataclass(frozen=True)
class StoreSpec:
    """One store to open: its kind (a key of :data:`~.sources.SOURCES`) and its directory."""

    kind: str
    path: Path

    @property
    def source(self) -> SourceKind:
        return SOURCES[self.kind]

    @property
    def text(self) -> str:
        """How to name this store on the command line (``DIR`` or ``KIND:DIR``)."""
        return self.source.spec_text(self.path)


def parse_store_spec(value: str | os.PathLike[str]) -> StoreSpec:
    """``KIND:DIR`` -> a store of that kind (``pi:DIR``; ``pi:`` alone: its default dir), any
    other ``DIR`` -> a PraisonAI store."""
    text = os.fspath(value)
    for kind in SOURCES.values():
        if kind.prefix and text.startswith(kind.prefix):
            rest = text[len(kind.prefix) :].strip()
            return StoreSpec(
                kind.name, Path(rest).expanduser() if rest else kind.default_dirs(None)[0]
            )
    return StoreSpec(DEFAULT_KIND, Path(text).expanduser())


def _holds_anything(path: Path) -> bool:
    """Whether ``path`` is a dir with at least one entry (one ``readdir``, not a walk)."""
    try:
        with os.scandir(path) as entries:
            return next(entries, None) is not None
    except OSError:
        return False


def default_store_specs(cwd: Path | None = None) -> list[StoreSpec]:
    """The default stores of every source kind, in the table's order: PraisonAI's
    (:func:`default_store_dirs`), then the other agents' dirs.

    A default dir that does not exist is neither listed nor indexed, nor is an empty dir of
    a kind used only when present (an empty Pi dir). When no default dir exists at all, the
    global PraisonAI store stays: it is where new sessions appear, and what an empty state
    names."""
    specs: list[StoreSpec] = []
    first: StoreSpec | None = None
    for kind in SOURCES.values():
        for path in kind.default_dirs(cwd):
            first = first or StoreSpec(kind.name, path)
            if kind.only_if_present and not _holds_anything(path):
                continue
            if path.is_dir():
                specs.append(StoreSpec(kind.name, path))
    if not specs and first is not None:
        specs.append(first)
    return specs


def store_specs(dirs: Sequence[str | os.PathLike[str]] | None = None) -> list[StoreSpec]:
    """The stores named by ``dirs`` (or the defaults), checked and without duplicates.

    Explicitly named dirs must exist (:class:`StoreNotFound` otherwise).
    """
    if dirs:
        specs = [parse_store_spec(d) for d in dirs]
        for spec in specs:
            if not spec.path.is_dir():
                what = spec.source.describe
                raise StoreNotFound(f"{what} not found: {spec.path} is not a directory")
    else:
        specs = default_store_specs()
    unique: list[StoreSpec] = []
    for spec in specs:
        if not any(spec.kind == u.kind and same_dir(spec.path, u.path) for u in unique):
            unique.append(spec)
    return unique


def default_store_dirs(cwd: Path | None = None) -> list[Path]:
    """The project store (if it exists) then the global store, without duplicates."""
    return default_dirs(cwd)


@overload
def open_store(
    path: Path, *, indexed: Literal[False] = False, reconcile: str = "sync", vault: bool = False
) -> DefaultSessionStore: ...


@overload
def open_store(
    path: Path, *, indexed: bool, reconcile: str = "sync", vault: bool = False
) -> DefaultSessionStore | SqliteSessionStore: ...


def open_store(
    path: Path, *, indexed: bool = False, reconcile: str = "sync", vault: bool = False
) -> DefaultSessionStore | SqliteSessionStore:
    """A store over one dir; its spill dir follows PraisonAI's ``<home>/state`` layout.

    With ``indexed`` it is a :class:`~session_browser.core.index.SqliteSessionStore` (its
    index in our cache dir, reconciled on open per ``reconcile``: sync, background or none;
    with ``vault`` it keeps the files it reads in the vault).
    """
    if indexed:
        from .index import SqliteSessionStore

        return SqliteSessionStore(
            path, spill_dir=spill_dir_for(path), reconcile=reconcile, vault=vault
        )
    return DefaultSessionStore(path, spill_dir=spill_dir_for(path))


def open_pi_store(
    path: Path | None = None, *, indexed: bool = False, reconcile: str = "sync", vault: bool = False
) -> PiStore | PiIndexStore:
    """A read-only store over a Pi session dir (the default one when ``path`` is None).

    With ``indexed`` it is a :class:`~session_browser.core.pi_index.PiIndexStore` (its index
    in our cache dir, reconciled on open per ``reconcile``); else a scanning
    :class:`~session_browser.core.sources.pi.PiStore`.
    """
    if indexed:
        from .pi_index import PiIndexStore

        return PiIndexStore(path, reconcile=reconcile, vault=vault)
    return PiStore(path)


def open_index(
    spec: StoreSpec, *, reconcile: str = "sync", vault: bool = False
) -> SqliteSessionStore:
    """The indexed store of one :class:`StoreSpec` (with ``vault``, keeping the vault)."""
    return spec.source.index(spec.path, reconcile, vault=vault)


def open_spec(
    spec: StoreSpec, *, indexed: bool = False, reconcile: str = "sync", vault: bool = False
) -> RecallStore:
    """Open one :class:`StoreSpec` (with ``indexed``, as :func:`open_index` does)."""
    if indexed:
        return open_index(spec, reconcile=reconcile, vault=vault)
    return spec.source.scan(spec.path)


def open_stores(
    dirs: Sequence[str | os.PathLike[str]] | None = None,
    *,
    indexed: bool = False,
    reconcile: str = "sync",
    vault: bool = False,
) -> StoreGroup:
    """Open the given stores (``DIR`` or ``pi:DIR``; or the defaults) as one group.

    Explicitly named dirs must exist (:class:`StoreNotFound` otherwise); default dirs
    that do not exist are simply empty (the default Pi dir is used only when it exists).
    ``indexed`` opens each as an indexed store; with ``vault`` too, each keeps the files it
    reads in the vault (what the CLI and the app do; off for a library caller unless asked).
    """
    specs = store_specs(dirs)
    stores: list[RecallStore] = []
    try:
        for spec in specs:
            stores.append(open_spec(spec, indexed=indexed, reconcile=reconcile, vault=vault))
    except BaseException:
        # Those already open are closed (their index connections, background threads).
        for store in reversed(stores):
            close = getattr(store, "close", None)
            if callable(close):
                with contextlib.suppress(Exception):
                    close()
        raise
    return StoreGroup(stores)
