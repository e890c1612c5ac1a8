"""Restore: a kept version written back where it was (or into a dir of your choice),
byte-identical, with its part files, never over a file and never through a symlink."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ..files import FILE_MODE, fsync_dir
from .errors import VaultError
from .format import Version
from .parts import parts_of
from .safety import no_link_above
from .whole import HEAD, export_name

if TYPE_CHECKING:
    from .store import Vault


def restore(vault: Vault, version: Version, *, to: Path | None = None) -> Path:
    """Write ``version`` back where it was (or into dir ``to``, made 0700 with its
    parents when missing), byte-identical, 0600, with the versions of its part files
    that go with it, placed relative to it as they were (their missing dirs made, 0700).

    Never over a file that exists: when one of them does, nothing is written
    (:class:`VaultError`). Every file's bytes are checked before any is put in place.

    A session that was no file of its own (a row of a database, a launch inside a
    history file) is kept as a portable export (:mod:`.whole`): it is never written
    back among the agent's files, only into dir ``to``, as ``<session id>.json`` for
    ``session-browser import``.
    """

    original = Path(version.path)
    target = (Path(to) / original.name) if to is not None else original
    if vault.head(version, len(HEAD)) == HEAD:
        if to is None:
            raise VaultError(
                f"{version.path} is a session inside another file, kept as a portable "
                "export: restore it with --to DIR, then 'session-browser import' it"
            )
        target = Path(to) / export_name(version.session_id)
    # Dir ``to`` is made (0700, with its missing parents) when it does not exist yet;
    # where the file was must still be a dir.
    missing_ok = to is not None and not os.path.lexists(to)
    if not (missing_ok or target.parent.is_dir()):
        raise VaultError(f"cannot restore to {target}: {target.parent} is not a directory")
    todo = [(version, target)]
    todo += [(part, target.parent / rel) for part, rel in parts_of(vault, version)]
    for _v, path in todo:
        no_link_above(path)
        if os.path.lexists(path):
            raise VaultError(f"{path} exists: restore never writes over a file")
    made: list[Path] = []  # dirs made, then temp files written, then files put in place
    temps: list[str] = []
    placed: list[Path] = []
    try:
        for v, path in todo:
            for parent in reversed([path.parent, *path.parent.parents]):
                if not parent.exists():
                    parent.mkdir(mode=0o700)
                    made.append(parent)
            temps.append(_restore_temp(vault, v, path))
        for tmp, (_v, path) in zip(temps, todo, strict=True):
            no_link_above(path)  # none put there since it was looked at
            try:
                os.link(tmp, path)  # fails when the target appeared meanwhile
            except FileExistsError:
                raise VaultError(f"{path} exists: restore never writes over a file") from None
            placed.append(path)
    except BaseException:
        for path in placed:
            with contextlib.suppress(OSError):
                path.unlink()
        for tmp in temps:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        for parent in reversed(made):
            with contextlib.suppress(OSError):
                parent.rmdir()
        raise
    for tmp in temps:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    for parent in {path.parent for path in placed} | {d.parent for d in made}:
        fsync_dir(parent)
    return target

def _restore_temp(vault: Vault, version: Version, target: Path) -> str:
    """The bytes of ``version`` (checked) written to a temp file beside ``target``."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            for block in vault.iter_read(version):  # checked before it is put in place
                fh.write(block)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, FILE_MODE)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp
