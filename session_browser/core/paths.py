"""Where things live.

Everything is resolved when asked (never at import), so an environment variable set after
import still counts.

- PraisonAI's session store: ``$PRAISONAI_HOME/sessions`` else ``~/.praisonai/sessions``.
- PraisonAI's spill dir: ``$PRAISONAI_HOME/state/session_spill`` else
  ``~/.praisonai/state/session_spill``.
- Our own derived state (index databases) lives in the user cache dir
  (``$SESSION_BROWSER_CACHE_DIR`` overrides); our own durable state (undo journal, trash)
  in the user data dir (``$SESSION_BROWSER_DATA_HOME`` overrides). Neither is ever inside a
  session dir.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from pathlib import Path

import platformdirs

APP_NAME = "session-browser"

# Every dir we create is private (PraisonAI's session files are 0600; so are ours).
DIR_MODE = 0o700

_SAFE_CHARS = frozenset("-_")


def ensure_private_dir(path: str | os.PathLike[str]) -> Path:
    """Create ``path`` and its missing parents as 0700 dirs (whatever the umask); return it.

    Dirs that already exist are left as they are (a user's own ``~/.praisonai`` keeps its
    mode). Raises ``OSError`` when a dir cannot be made (or ``path`` is not a dir).
    """
    target = Path(path).expanduser()
    missing: list[Path] = []
    current = target
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=DIR_MODE)
        except FileExistsError:
            if not directory.is_dir():
                raise
            continue  # made meanwhile by another process: its business
        os.chmod(directory, DIR_MODE)
    return target


def safe_id(session_id: str) -> str:
    """The file-name stem PraisonAI uses for ``session_id``.

    Every character other than a letter, a digit, ``-`` or ``_`` becomes ``_``, so a
    hostile id such as ``../x`` cannot leave the session dir.
    """
    return "".join(c if c.isalnum() or c in _SAFE_CHARS else "_" for c in session_id)


def check_id(session_id: str) -> None:
    """``ValueError`` unless ``session_id`` is a non-empty string whose file name (and its
    lock's) the file system can hold."""
    if not isinstance(session_id, str) or not session_id:
        raise ValueError(f"session_id must be a non-empty string, got {session_id!r}")
    if len(f"{safe_id(session_id)}.json.lock".encode("utf-8", "surrogatepass")) > 255:
        raise ValueError("session_id is too long for a file name")


def session_file_name(session_id: str) -> str:
    """The name of ``session_id``'s file in a PraisonAI session dir: ``<safe_id>.json``."""
    return f"{safe_id(session_id)}.json"


def praisonai_home() -> Path:
    """``$PRAISONAI_HOME`` if set, else ``~/.praisonai``."""
    env = os.environ.get("PRAISONAI_HOME")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".praisonai"


def default_session_dir() -> Path:
    """The global PraisonAI session dir."""
    return praisonai_home() / "sessions"


def default_spill_dir() -> Path:
    """The global PraisonAI spill dir (turns a failed write could not persist)."""
    return praisonai_home() / "state" / "session_spill"


def spill_dir_for(session_dir: Path) -> Path:
    """The spill dir that belongs with ``session_dir``.

    For a store laid out as ``<home>/sessions`` the spill dir is ``<home>/state/session_spill``
    (PraisonAI's layout). A session dir under the default home uses the default spill dir.
    """
    session_dir = Path(session_dir)
    if session_dir.name == "sessions":
        return session_dir.parent / "state" / "session_spill"
    return default_spill_dir()


def project_session_dir(cwd: Path | None = None) -> Path:
    """The project store, ``./.praisonai/sessions`` of the working dir."""
    return (cwd or Path.cwd()) / ".praisonai" / "sessions"


#: What the user dirs depend on: they are found again when one of these changes (every
#: session file a build screens asks where the denylist and the settings are).
_USER_ENV = (
    "HOME",
    "XDG_DATA_HOME",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "APPDATA",
    "LOCALAPPDATA",
    "USERPROFILE",
)


def _env_key() -> tuple[str | None, ...]:
    get = os.environ.get
    return tuple(get(name) for name in _USER_ENV)


@functools.lru_cache(maxsize=32)
def _user_dir(kind: str, _env: tuple[str | None, ...]) -> Path:
    """The platform's user ``kind`` dir of this app, as the environment ``_env`` gives it."""
    if kind == "cache":
        return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))
    if kind == "config":
        return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def cache_dir() -> Path:
    """Our cache dir (derived data such as the search index)."""
    env = os.environ.get("SESSION_BROWSER_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    return _user_dir("cache", _env_key())


def config_dir() -> Path:
    """Our config dir (keymap, remembered settings)."""
    env = os.environ.get("SESSION_BROWSER_CONFIG_DIR")
    if env:
        return Path(env).expanduser()
    return _user_dir("config", _env_key())


def data_dir() -> Path:
    """Our data dir (undo journal, trash): durable, never inside a session dir."""
    env = os.environ.get("SESSION_BROWSER_DATA_HOME")
    if env:
        return Path(env).expanduser()
    return _user_dir("data", _env_key())


def dir_key(path: Path) -> str:
    """A short stable key for a resolved directory (names one index database per store)."""
    resolved = str(Path(path).expanduser().resolve())
    digest = hashlib.sha256(resolved.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    stem = safe_id(Path(resolved).parent.name + "-" + Path(resolved).name)[-40:]
    return f"{stem}-{digest}"


def same_dir(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name the same directory (by inode when both exist)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a.expanduser().absolute() == b.expanduser().absolute()


def package_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's environment) with this package's folder first on
    ``PYTHONPATH``: a ``python -m session_browser...`` child runs the very code its parent
    runs, wherever that was imported from."""
    out = dict(os.environ if env is None else env)
    root = str(Path(__file__).resolve().parents[2])
    out["PYTHONPATH"] = os.pathsep.join(p for p in (root, out.get("PYTHONPATH", "")) if p)
    return out


def lock_file(path: Path) -> int:
    """An open descriptor of the 0600 lock file ``path`` (created when missing)."""
    ensure_private_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    with contextlib.suppress(OSError):
        os.fchmod(fd, 0o600)
    return fd
