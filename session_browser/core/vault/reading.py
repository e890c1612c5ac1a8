"""A kept version read back as a session: its bytes written to a private temp dir and read
by the reader of its source kind (the vault never parses a format itself)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
from pathlib import Path

from ..files import FILE_MODE
from ..model import JSONDict
from ..paths import cache_dir, ensure_private_dir
from .errors import VaultError, catalog_guard
from .format import Version
from .parts import parts_of
from .store import Vault
from .whole import HEAD, read_export


def load_version(vault: Vault, version: Version, *, hidden: bool = False) -> JSONDict | None:
    """The session dict of ``version``, with the part files that go with it placed beside
    it as they were (:class:`VaultDamaged` when its bytes or theirs are damaged; None when
    its source kind cannot read them); with ``hidden``, tool calls and thinking too, from
    the sources that read them. A kept export (a session that is no file of its own, see
    :mod:`.whole`) is read as the session it holds."""
    from ..sources import SOURCES

    kind = SOURCES.get(version.source)
    if kind is None:
        raise VaultError(f"version {version.vid} is of an unknown source {version.source!r}")
    if vault.head(version, len(HEAD)) == HEAD:
        data = read_export(vault.read(version), hidden=hidden)
    else:
        base = ensure_private_dir(cache_dir() / "vault-read")
        name = os.path.basename(version.path)
        with tempfile.TemporaryDirectory(dir=base) as tmp:
            os.chmod(tmp, 0o700)
            _write(vault, version, Path(tmp) / name)
            for part, rel in parts_of(vault, version):
                target = Path(tmp) / rel
                target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                _write(vault, part, target)
            data = kind.source(Path(tmp)).load(name, include_hidden=hidden)
    if data is not None and version.session_id:
        # A format whose id is its folder's name (Kimi Code CLI) reads none here.
        data["session_id"] = version.session_id
    return data


def version_turns(vault: Vault, version: Version) -> int | None:
    """How many turns ``version`` holds, counted as the viewer counts them
    (:func:`~session_browser.core.recall.turn_count` of the session its source reads from
    the kept bytes); None when it cannot be read (damaged, or of a kind that reads nothing)."""
    from .. import recall

    try:
        data = load_version(vault, version, hidden=True)
    except (VaultError, OSError, ValueError):
        return None
    return None if data is None else recall.turn_count(data)


def _write(vault: Vault, version: Version, target: Path) -> None:
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    with os.fdopen(fd, "wb") as fh:
        try:
            for block in vault.iter_read(version):
                fh.write(block)
        except BaseException:
            fh.close()
            with contextlib.suppress(OSError):
                target.unlink()
            raise


def load_session(
    session_id: str,
    number: int | None = None,
    vault: Vault | None = None,
    *,
    hidden: bool = False,
) -> tuple[JSONDict | None, Version, int]:
    """Version ``number`` (1 = oldest; None: the latest) of session ``session_id`` as a
    session dict, with the version and its number (:class:`VaultError` when none is kept;
    ``hidden``: as :func:`load_version`)."""
    own = vault is None
    v = Vault() if vault is None else vault
    try:
        with catalog_guard(v.catalog):
            versions = v.versions(session_id)
            if not versions:
                raise VaultError(f"the vault keeps no version of session {session_id}")
            if number is not None and not 1 <= number <= len(versions):
                raise VaultError(f"--version must be between 1 and {len(versions)}, not {number}")
            n = len(versions) if number is None else number
            chosen = versions[n - 1]
            return load_version(v, chosen, hidden=hidden), chosen, n
    finally:
        if own:
            v.close()


def kept_versions(session_id: str) -> list[Version]:
    """Every version the vault keeps of session ``session_id``, oldest first ([]: none, no
    vault, or a vault that cannot be read)."""
    from .store import default_vault_dir

    if not (default_vault_dir() / "catalog.sqlite").exists():
        return []
    try:
        with Vault() as vault:
            return vault.versions(session_id)
    except (VaultError, OSError, sqlite3.Error):
        return []


def gone_versions() -> dict[str, Version]:
    """Session id -> the latest version kept of its file, for the files found gone ({}: none,
    no vault, or a vault that cannot be read)."""
    from .store import default_vault_dir

    if not (default_vault_dir() / "catalog.sqlite").exists():
        return {}
    try:
        with Vault() as vault:
            latest = vault.latest(gone_only=True)
    except (VaultError, OSError, sqlite3.Error):
        return {}
    out: dict[str, Version] = {}
    for version in latest:  # newest first: the newest file of an id names it
        out.setdefault(version.session_id, version)
    return out


def kept_session(session_id: str) -> JSONDict | None:
    """The latest version the vault keeps of a session no store has any more (None: the vault
    keeps none, or it cannot be read; a damaged copy is never returned)."""
    from .store import default_vault_dir

    if not (default_vault_dir() / "catalog.sqlite").exists():
        return None
    try:
        data, _version, _n = load_session(session_id)
    except (VaultError, OSError):
        return None
    return data
