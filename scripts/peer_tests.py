"""Run PraisonAI's own session-store tests on session-browser's store classes.

    python scripts/peer_tests.py CHECKOUT [--min N] [--json FILE]

``CHECKOUT`` is a PraisonAI source tree (its public repository, MervinPraison/PraisonAI, at
commit 52e3e37, MIT): the tests are read from ``CHECKOUT/src/praisonai-agents/tests``. They
run twice in fresh pytest processes with the installed ``praisonaiagents`` (1.7.17): once as
they are, once with its ``DefaultSessionStore`` and ``SqliteSessionStore`` re-bound to ours
(``scripts/peer_rebind.py``, loaded before collection).

The counted set (``STORE_FILES``): every test of the files in ``tests/unit/session/``,
``tests/managed/`` and ``tests/unit/compaction/`` that construct or import a session store
class, which passes on praisonaiagents itself. Tests that fail there (written for a later
praisonaiagents than 1.7.17) say nothing about ours and are listed apart. Prints the counts
and each counted test that fails on ours; exit 1 when fewer than ``--min`` pass. Tooling,
not part of the test suite: the tests are fetched, not kept in this repository.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
DIRS = ("tests/unit/session", "tests/managed", "tests/unit/compaction")
# The files of DIRS that name a session store class (DefaultSessionStore,
# SqliteSessionStore, get_default_session_store, HierarchicalSessionStore, the store module).
STORE_FILES = (
    "tests/managed/test_managed_persistence.py",
    "tests/managed/test_managed_persistence_all_dbs.py",
    "tests/managed/test_managed_persistence_e2e.py",
    "tests/unit/compaction/test_compaction.py",
    "tests/unit/session/test_bot_session_persistence.py",
    "tests/unit/session/test_hierarchy.py",
    "tests/unit/session/test_session_agent_key_collision.py",
    "tests/unit/session/test_session_docs_examples.py",
    "tests/unit/session/test_session_mirror.py",
    "tests/unit/session/test_session_protocol.py",
    "tests/unit/session/test_session_store.py",
    "tests/unit/session/test_session_store_dir_resolution.py",
    "tests/unit/session/test_sqlite_store.py",
    "tests/unit/session/test_sqlite_transcript_store.py",
    "tests/unit/session/test_team_session_resume.py",
    "tests/unit/session/test_tool_turn_persistence.py",
)


def run(tests: Path, rebind: bool, files: list[str]) -> dict[str, str]:
    """{test id: passed|failed|skipped} of one pytest run over ``files``."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.xml"
        env = dict(os.environ, DO_NOT_TRACK="1", PRAISONAI_HOME=str(Path(tmp) / "home"))
        # our cache (indexes), settings and vault: the run's own, never the user's
        for name in ("CACHE_DIR", "CONFIG_DIR", "DATA_HOME"):
            env[f"SESSION_BROWSER_{name}"] = str(Path(tmp) / name.lower())
        path = [str(ROOT)] + ([str(HERE)] if rebind else [])
        env["PYTHONPATH"] = os.pathsep.join([*path, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        cmd += ["-p", "peer_rebind"] if rebind else []
        cmd += ["--continue-on-collection-errors", f"--junitxml={report}", *files]
        subprocess.run(cmd, cwd=tests.parent, env=env, stdout=subprocess.DEVNULL, check=False)
        out: dict[str, str] = {}
        for case in ET.parse(report).getroot().iter("testcase"):
            name = f"{case.get('classname')}::{case.get('name')}"
            kinds = {child.tag for child in case}
            if kinds & {"failure", "error"}:
                out[name] = "failed"
            elif "skipped" in kinds:
                out[name] = "skipped"
            else:
                out[name] = "passed"
        return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path, help="a PraisonAI source tree (commit 52e3e37)")
    parser.add_argument("--min", type=int, default=0, help="exit 1 when fewer pass")
    parser.add_argument("--json", type=Path, help="write every result to this file")
    args = parser.parse_args(argv)
    tests = args.checkout / "src" / "praisonai-agents" / "tests"
    if not all((tests.parent / f).is_file() for f in STORE_FILES):
        print(f"error: {tests} does not hold PraisonAI's store tests", file=sys.stderr)
        return 2
    files = list(STORE_FILES)
    peer = run(tests, False, files)
    ours = run(tests, True, files)
    counted = sorted(t for t, r in peer.items() if r == "passed")
    passed = [t for t in counted if ours.get(t) == "passed"]
    failed = [t for t in counted if ours.get(t) != "passed"]
    print(f"store tests collected: {len(peer)}; passing on praisonaiagents itself: {len(counted)}")
    print(f"on session-browser's classes: {len(passed)} passed, {len(failed)} failed")
    for t in failed:
        print(f"  FAILED {t}")
    if args.json:
        args.json.write_text(
            json.dumps({"peer": peer, "ours": ours, "counted": counted, "failed": failed}, indent=1)
        )
    return 1 if len(passed) < args.min else 0


if __name__ == "__main__":
    sys.exit(main())
