"""Opening the app from the command line (``session-browser`` with no sub-command)."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from session_browser.core.stores import StoreNotFound, parse_store_spec
from session_browser.core.text import printable

if TYPE_CHECKING:
    from session_browser.tui.backend import Backend


def _error(message: str) -> int:
    print(f"session-browser: {printable(message, one_line=True)}", file=sys.stderr)
    return 1


def open_backend(stores: list[str]) -> tuple[Backend, list[str] | None, list[str]]:
    """The backend on ``stores`` (the defaults when empty), its labels, the stores missing.

    A named store that does not exist does not stop the app: it opens on the ones that do
    and its empty state (or a toast) names the missing ones.
    """
    from session_browser.tui.backend import Backend

    try:
        return Backend(stores or None), None, []
    except StoreNotFound:
        found = [s for s in stores if parse_store_spec(s).path.is_dir()]
        missing = [s for s in stores if s not in found]
        backend = Backend(found)
        return backend, [*backend.store_paths(), *(f"{m} (not found)" for m in missing)], missing


def run_app(stores: list[str], *, demo: bool) -> int:
    """Run the app on ``stores`` (or the defaults); with ``demo``, on a fresh demo store."""
    from session_browser.tui.app import SessionBrowserApp

    tmp: Path | None = None
    labels: list[str] | None = None
    try:
        if demo:
            if stores:
                return _error("--demo and --store cannot be used together")
            try:
                from session_browser.demo import build_demo_store
            except ImportError:
                return _error("the demo store is not available in this build")
            tmp = Path(tempfile.mkdtemp(prefix="session-browser-demo-"))
            build_demo_store(tmp)
            stores = [str(tmp / "sessions")]
            labels = ["demo store (temporary, deleted on exit)"]
        try:
            backend, found_labels, missing = open_backend(stores)
        except StoreNotFound as exc:
            return _error(str(exc))
        labels = labels or found_labels
        try:
            app = SessionBrowserApp(backend, store_labels=labels, missing_stores=missing)
            result = app.run()
            return int(result or 0) if app.return_code is None else int(app.return_code)
        finally:
            backend.close()  # the app closes it on exit; this covers a failed start
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
