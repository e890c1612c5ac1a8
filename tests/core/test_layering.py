"""The core is plain Python: importing any of it never loads textual or rich."""

from __future__ import annotations

import json
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


def test_the_json_store_api_loads_nothing_above_the_store(tmp_path: Path) -> None:
    """PraisonAI's store API, export and import included, runs on the JSON store alone: a
    process that uses it never loads the workbench, ``portable``, the index or the vault."""
    code = (
        "import json, sys\n"
        "from session_browser.core.store import DefaultSessionStore\n"
        "a = DefaultSessionStore(sys.argv[1] + '/a')\n"
        "a.add_message('s1', 'user', 'hello there')\n"
        "payload = a.export_all()\n"
        "one = a.export_session('s1')\n"
        "b = DefaultSessionStore(sys.argv[1] + '/b')\n"
        "report = b.import_sessions(payload)\n"
        "again = b.import_sessions(one)\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('session_browser.core.'))\n"
        "print(json.dumps({'ids': [s['session_id'] for s in payload['sessions']],\n"
        "    'imported': report.imported_ids, 'skipped': [s['reason'] for s in again.skipped],\n"
        "    'read': b.get_chat_history('s1')[0]['content'], 'loaded': loaded}))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"DO_NOT_TRACK": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(TREE)},
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["ids"] == ["s1"] and out["imported"] == ["s1"]
    assert out["skipped"] == ["already exists (use overwrite)"]
    assert out["read"] == "hello there"
    above = ("portable", "quarantine", "actions", "index", "pgindex", "vault", "open")
    loaded = {m.removeprefix("session_browser.core.").split(".")[0] for m in out["loaded"]}
    assert not loaded & set(above), sorted(loaded & set(above))
    assert "payload" in loaded and "store" in loaded
