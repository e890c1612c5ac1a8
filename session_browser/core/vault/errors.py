"""What the vault raises, and how a damaged catalog is told apart from other SQLite errors."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path


class VaultError(Exception):
    """The vault cannot do what was asked (the message says why)."""


class VaultDamaged(VaultError):
    """A kept entry does not match its hash (or is missing): it is reported, never served."""


class CatalogDamaged(VaultError):
    """The vault's catalog cannot be read (the packs may be intact: ``vault rebuild``)."""


def catalog_damage(exc: BaseException) -> bool:
    """Whether ``exc`` says an SQLite file is damaged or not a database at all."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return not isinstance(exc, sqlite3.OperationalError)
    return code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


def damaged_text(catalog: Path) -> str:
    return (
        f"the vault catalog {catalog} is damaged: 'session-browser vault rebuild'"
        " rebuilds it from the packs"
    )


@contextlib.contextmanager
def catalog_guard(catalog: Path) -> Iterator[None]:
    """Turn an SQLite error that says the catalog is damaged into :class:`CatalogDamaged`."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        if catalog_damage(exc):
            raise CatalogDamaged(damaged_text(catalog)) from exc
        raise
