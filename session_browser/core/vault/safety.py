"""Regular files only: the vault keeps, reads and restores through no symlink and never
blocks on a special file; its own dir is private (0700 dirs, 0600 files)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import IO

from ..files import FILE_MODE, rel_below
from ..paths import DIR_MODE, ensure_private_dir
from .errors import VaultError


def private_tree(root: Path) -> None:
    """Make the vault dir private: created 0700, or an existing one (its packs and catalog)
    tightened to 0700 dirs and 0600 files; :class:`VaultError` for a dir or file that is a
    symlink (the vault is never kept, or read, through one)."""
    ensure_private_dir(root.parent)
    for path, mode in ((root, DIR_MODE), (root / "packs", DIR_MODE)):
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            with contextlib.suppress(FileExistsError):  # made meanwhile: checked below
                os.mkdir(path, DIR_MODE)
            info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            raise VaultError(f"{path} is a symlink: the vault is never kept through one")
        if not stat.S_ISDIR(info.st_mode):
            raise VaultError(f"{path} is not a directory")
        if stat.S_IMODE(info.st_mode) != mode:
            tighten(path, mode)
    for path in [root / "catalog.sqlite", *sorted((root / "packs").iterdir())]:
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(info.st_mode):
            raise VaultError(f"{path} is a symlink: the vault is never kept through one")
        if stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) & 0o077:
            tighten(path, FILE_MODE)


def no_link_above(path: Path) -> None:
    """:class:`VaultError` when a dir on the way to ``path`` is a symlink (restore never
    writes through one: a session dir replaced by a link writes nothing elsewhere). A link
    the system made (owned by root, for a user who is not: ``/var`` on macOS) is no one's
    to replace and is followed."""
    current = Path(os.path.abspath(path)).parent
    for step in [current, *current.parents]:
        try:
            info = os.lstat(step)
            if stat.S_ISLNK(info.st_mode) and not (info.st_uid == 0 != os.geteuid()):
                raise VaultError(
                    f"cannot restore to {path}: {step} is a symlink (restore never writes"
                    " through one; restore --to a real dir)"
                )
        except FileNotFoundError:
            continue


class NotRegular(OSError):
    """A file the vault does not keep: a symlink, a special file, or one outside its root."""


def regular_under(
    path: str | os.PathLike[str],
    root: str | os.PathLike[str] | None,
    real_dirs: set[str] | None = None,
) -> None:
    """:class:`NotRegular` unless ``path`` is a regular file reached without a symlink from
    ``root`` (every dir between them a real dir; ``root`` itself may be a link). Without
    ``root``: unless ``path`` itself is a regular file, not a link. ``real_dirs``: dirs
    found real by the calls before (of one batch of files: each folder is looked at once),
    and added to."""
    text = os.path.abspath(path)
    if root is not None:
        base = os.path.abspath(root)
        rel = rel_below(text, base)
        parts = rel.split(os.sep)
        if rel == os.curdir or os.path.isabs(rel) or parts[0] == os.pardir:
            raise NotRegular(errno.EPERM, "outside its store's dir: not kept", text)
        current = base
        for part in parts[:-1]:
            current = os.path.join(current, part)
            if real_dirs is not None and current in real_dirs:
                continue
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                raise NotRegular(errno.ELOOP, "reached through a symlink: not kept", text)
            if real_dirs is not None:
                real_dirs.add(current)
    if not stat.S_ISREG(os.lstat(text).st_mode):
        raise NotRegular(errno.ELOOP, "not a regular file (a symlink or special file)", text)


def open_regular(
    path: str | os.PathLike[str], root: str | os.PathLike[str] | None = None
) -> IO[bytes]:
    """``path`` open for reading when it is a regular file inside ``root`` (see
    :func:`regular_under`), opened without following a link and without blocking on a
    FIFO; :class:`NotRegular` (an ``OSError``) when it is not."""
    regular_under(path, root)
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced since it was looked at
            raise NotRegular(errno.ELOOP, "not a regular file", os.fspath(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def tighten(path: Path, mode: int) -> None:
    """chmod ``path`` to ``mode``, never a symlink's target. Never by opening it: closing a
    descriptor of an SQLite file drops the locks SQLite holds on it in this process."""
    if not stat.S_ISLNK(os.lstat(path).st_mode):
        os.chmod(path, mode)
