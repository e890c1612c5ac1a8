"""Opening the app from the command line (``session-browser`` with no sub-command)."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from session_browser.core.stores import StoreNotFound, parse_store_spec
from session_browser.core.text import printable

if TYPE_CHECKING:
    from session_browser.tui.backend import Backend


def _error(message: str) -> int:
    print(f"session-browser: {printable(message, one_line=True)}", file=sys.stderr)
    return 1


#: Our own dirs the demo moves into its temporary dir (index, lock, journal, trash, query
#: history): the demo leaves nothing of its own in the user's cache or data dir.
DEMO_DIRS = {"SESSION_BROWSER_CACHE_DIR": "cache", "SESSION_BROWSER_DATA_HOME": "data"}


@contextlib.contextmanager
def demo_dirs(root: Path) -> Iterator[None]:
    """Our cache and data dirs under ``root`` while the demo runs (then as they were)."""
    before = {name: os.environ.get(name) for name in DEMO_DIRS}
    try:
        for name, sub in DEMO_DIRS.items():
            os.environ[name] = str(root / sub)
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def open_backend(
    stores: list[str], *, vault: bool = True
) -> tuple[Backend, list[str] | None, list[str]]:
    """The backend on ``stores`` (the defaults when empty), its labels, the stores missing.

    A named store that does not exist does not stop the app: it opens on the ones that do
    and its empty state (or a toast) names the missing ones. ``vault``: whether the
    indexes keep what they read in the vault (the user's stores: yes; the demo's: no).
    """
    from session_browser.tui.backend import Backend

    try:
        return Backend(stores or None, vault=vault), None, []
    except StoreNotFound:
        found = [s for s in stores if parse_store_spec(s).path.is_dir()]
        missing = [s for s in stores if s not in found]
        backend = Backend(found, vault=vault)
        return backend, [*backend.store_paths(), *(f"{m} (not found)" for m in missing)], missing


def run_app(stores: list[str], *, demo: bool) -> int:
    """Run the app on ``stores`` (or the defaults); with ``demo``, on a fresh demo store.

    The demo touches nothing of the user's: its store, index, lock, journal, trash and query
    history live in one temporary dir removed at exit, and it keeps no vault."""
    if not demo:
        return _run(stores, labels=None, vault=True)
    if stores:
        return _error("--demo and --store cannot be used together")
    try:
        from session_browser.demo import build_demo_store
    except ImportError:
        return _error("the demo store is not available in this build")
    tmp = Path(tempfile.mkdtemp(prefix="session-browser-demo-"))
    try:
        with demo_dirs(tmp):
            build_demo_store(tmp / "home")
            labels = ["demo store (temporary, deleted on exit)"]
            return _run([str(tmp / "home" / "sessions")], labels=labels, vault=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run(stores: list[str], *, labels: list[str] | None, vault: bool) -> int:
    from session_browser.tui.app import SessionBrowserApp

    try:
        backend, found_labels, missing = open_backend(stores, vault=vault)
    except StoreNotFound as exc:
        return _error(str(exc))
    try:
        app = SessionBrowserApp(
            backend,
            store_labels=labels or found_labels,
            missing_stores=missing,
            # the demo's store is named as such on the status line; others by their kinds
            store_title=labels[0] if labels else None,
        )
        result = app.run()
        return int(result or 0) if app.return_code is None else int(app.return_code)
    finally:
        backend.close()  # the app closes it on exit; this covers a failed start
