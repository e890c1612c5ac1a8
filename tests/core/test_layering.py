"""The core is plain Python: importing any of it never loads textual or rich."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import session_browser.core

TREE = Path(session_browser.core.__file__).parents[2]


def core_modules() -> list[str]:
    return sorted(
        m.name
        for m in pkgutil.walk_packages(session_browser.core.__path__, "session_browser.core.")
    )


def test_core_never_imports_ui() -> None:
    modules = core_modules()
    assert "session_browser.core.store" in modules and "session_browser.core.recall" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "import session_browser.core as c\n"
        "for name in c.__all__:\n"
        "    getattr(c, name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        # the package under test, wherever it is imported from (not an installed copy)
        env={"DO_NOT_TRACK": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(TREE)},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", f"core imported: {proc.stdout.strip()}"


def test_core_sources_do_not_mention_ui_imports() -> None:
    import pathlib

    root = pathlib.Path(session_browser.core.__file__).parent
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for banned in ("import textual", "from textual", "import rich", "from rich"):
            assert banned not in text, f"{path.name}: {banned}"
