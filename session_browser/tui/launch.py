"""Opening the app from the command line (``session-browser`` with no sub-command)."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from session_browser.core.stores import StoreNotFound
from session_browser.core.text import printable


def _error(message: str) -> int:
    print(f"session-browser: {printable(message, one_line=True)}", file=sys.stderr)
    return 1


def run_app(stores: list[str], *, demo: bool) -> int:
    """Run the app on ``stores`` (or the defaults); with ``demo``, on a fresh demo store."""
    from .app import SessionBrowserApp
    from .backend import Backend

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
            backend = Backend(stores or None)
        except StoreNotFound as exc:
            return _error(str(exc))
        try:
            app = SessionBrowserApp(backend, store_labels=labels)
            result = app.run()
            return int(result or 0) if app.return_code is None else int(app.return_code)
        finally:
            backend.close()  # the app closes it on exit; this covers a failed start
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
