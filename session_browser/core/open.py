"""The one place that decides which stores and engines a command or the app opens, and opens
them: the local stores of every source kind (scanning or indexed), and the team index.

Which kinds of store exist, how ``--store`` names them and where they are by default come
from one table, :data:`~session_browser.core.sources.SOURCES`. By default: the project store
``./.praisonai/sessions`` plus the global store (``$PRAISONAI_HOME/sessions`` or
``~/.praisonai/sessions``), plus Pi's session dir
(:func:`~session_browser.core.sources.pi.default_pi_dir`) and the other agents' dirs, each only
when it exists (the global store stays when none does), de-duplicated by session id.
``--store DIR`` (repeatable) replaces the default; ``pi:DIR`` names a Pi session dir
(read-only), and a bare ``pi:`` the default Pi dir. The team index (PostgreSQL) is named
by ``--index URL``, ``SESSION_BROWSER_INDEX_URL`` or the config file
(:func:`team_url`), and read instead of the local stores unless a command names them.

A local store over a dir is PraisonAI's JSON store for the kind that is not read-only (the
only store written), else the kind's own scanning store or a scanning store over its
source; indexed, it is :class:`~session_browser.core.index.SqliteSessionStore` over the
kind's source, reading sessions through what the kind declares (:func:`index_store`).
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
from .sources.base import Locate
from .sources.pi import default_pi_dir
from .sources.praisonai import default_dirs
from .sources.scan import SourceStore
from .store import DefaultSessionStore

if TYPE_CHECKING:
    from .index import SqliteSessionStore
    from .index.api import SessionReader
    from .pgindex.store import PgIndexStore

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


def parse_store_specs(value: str | os.PathLike[str]) -> list[StoreSpec]:
    """``KIND:DIR`` -> a store of that kind (``pi:DIR``; ``pi:`` alone: its default dirs), any
    other ``DIR`` -> a PraisonAI store (:class:`StoreNotFound` for a bare ``KIND:`` whose kind
    has no default dir: Aider's, when the settings list no ``aider_roots``)."""
    text = os.fspath(value)
    for kind in SOURCES.values():
        if kind.prefix and text.startswith(kind.prefix):
            rest = text[len(kind.prefix) :].strip()
            if rest:
                return [StoreSpec(kind.name, Path(rest).expanduser())]
            dirs = kind.default_dirs(None)
            if not dirs:
                raise StoreNotFound(
                    f"'{kind.prefix}' alone names no {kind.describe}: name one ({kind.prefix}DIR) "
                    f"or list them in {kind.name}_roots in settings.json"
                )
            return [StoreSpec(kind.name, d) for d in dirs]
    return [StoreSpec(DEFAULT_KIND, Path(text).expanduser())]


def parse_store_spec(value: str | os.PathLike[str]) -> StoreSpec:
    """The first store :func:`parse_store_specs` names."""
    return parse_store_specs(value)[0]


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
        specs = [spec for d in dirs for spec in parse_store_specs(d)]
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


def scan_store(kind: SourceKind, path: Path) -> RecallStore:
    """The scanning store of ``kind`` over ``path`` (what ``--no-index`` reads)."""
    if not kind.read_only:
        return DefaultSessionStore(path, spill_dir=spill_dir_for(path))
    if kind.open_scan is not None:
        return kind.open_scan(path)
    return SourceStore(kind.source(path))


def index_store(
    kind: SourceKind,
    path: Path,
    reconcile: str = "sync",
    *,
    vault: bool = False,
    db_path: str | os.PathLike[str] | None = None,
    fts: bool = True,
) -> SqliteSessionStore:
    """The indexed store of ``kind`` over ``path`` (its index in our cache dir unless
    ``db_path``), reconciled on open per ``reconcile`` (sync, background or none); with
    ``vault`` it keeps the files it reads in the vault."""
    from .index import SqliteSessionStore

    if not kind.read_only:
        return SqliteSessionStore(
            path,
            db_path,
            spill_dir=spill_dir_for(path),
            reconcile=reconcile,
            fts=fts,
            vault=vault,
        )
    source = kind.source(path)
    read = kind.reader

    def reader(locate: Locate) -> SessionReader:
        return SourceStore(source) if read is None else read(source, locate)

    return SqliteSessionStore(
        source.root,
        db_path,
        reconcile=reconcile,
        fts=fts,
        source=source,
        read_through=reader,
        vault=vault,
    )


def pi_index_store(
    root: str | os.PathLike[str] | None = None,
    *,
    db_path: str | os.PathLike[str] | None = None,
    reconcile: str = "sync",
    fts: bool = True,
    vault: bool = False,
) -> SqliteSessionStore:
    """The searchable, read-only index over a Pi session dir (the default one when ``root``
    is None), as :func:`index_store` opens it."""
    path = Path(root).expanduser() if root is not None else default_pi_dir()
    return index_store(
        SOURCES[PI_SOURCE], path, reconcile, vault=vault, db_path=db_path, fts=fts
    )


def team_url(flag: str | None = None) -> str | None:
    """The team index a command reads: ``flag`` (``--index URL``), else
    ``SESSION_BROWSER_INDEX_URL``, else the config file's; None when none names a
    PostgreSQL URL."""
    from .pgindex.conn import index_url, is_index_url

    url = index_url(flag)
    return url if url is not None and is_index_url(url) else None


def open_team(url: str) -> StoreGroup:
    """The team index at ``url`` as a group of one store (raises
    :class:`~session_browser.core.pgindex.conn.PgIndexError` when it cannot be opened)."""
    from .pgindex.store import PgIndexStore

    store: PgIndexStore = PgIndexStore(url)
    return StoreGroup([store])


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
        return index_store(SOURCES[DEFAULT_KIND], path, reconcile, vault=vault)
    return DefaultSessionStore(path, spill_dir=spill_dir_for(path))


def open_pi_store(
    path: Path | None = None, *, indexed: bool = False, reconcile: str = "sync", vault: bool = False
) -> PiStore | SqliteSessionStore:
    """A read-only store over a Pi session dir (the default one when ``path`` is None).

    With ``indexed`` it is an indexed store (:func:`pi_index_store`: its index in our cache
    dir, reconciled on open per ``reconcile``); else a scanning
    :class:`~session_browser.core.sources.pi.PiStore`.
    """
    if indexed:
        return pi_index_store(path, reconcile=reconcile, vault=vault)
    return PiStore(path)


def open_index(
    spec: StoreSpec, *, reconcile: str = "sync", vault: bool = False
) -> SqliteSessionStore:
    """The indexed store of one :class:`StoreSpec` (with ``vault``, keeping the vault)."""
    return index_store(spec.source, spec.path, reconcile, vault=vault)


def open_spec(
    spec: StoreSpec, *, indexed: bool = False, reconcile: str = "sync", vault: bool = False
) -> RecallStore:
    """Open one :class:`StoreSpec` (with ``indexed``, as :func:`open_index` does)."""
    if indexed:
        return open_index(spec, reconcile=reconcile, vault=vault)
    return scan_store(spec.source, spec.path)


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
            with contextlib.suppress(Exception):
                store.close()
        raise
    return StoreGroup(stores)
