"""A throwaway PostgreSQL for the team-index tests: one cluster for the whole test session.

It is made with the system's binaries (``/usr/lib/postgresql/*/bin``, or ``initdb`` on the
PATH), listens on a Unix socket in a temp dir only (no TCP port), runs as ``nobody`` when the
tests run as root (PostgreSQL refuses root) and is stopped at the end. Each test gets a fresh
database of its own. Where no PostgreSQL can be started at all the tests are skipped, with
the reason.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class Cluster:
    bindir: Path
    datadir: Path
    sockdir: Path
    user: str = "postgres"

    def url(self, db: str = "postgres") -> str:
        return f"postgresql://{self.user}@/{db}?host={self.sockdir}"


def _bindir() -> Path | None:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    return Path(on_path).parent if on_path else None


def _as_owner(cmd: list[str]) -> list[str]:
    """``cmd`` run as ``nobody`` when we are root (PostgreSQL will not run as root)."""
    if os.geteuid() != 0:
        return cmd
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", *cmd]


def _start() -> tuple[Cluster | None, str]:
    bindir = _bindir()
    if bindir is None:
        return None, "no PostgreSQL binaries (/usr/lib/postgresql/*/bin or initdb on PATH)"
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        return None, "running as root and setpriv is missing (PostgreSQL refuses root)"
    root = Path(tempfile.mkdtemp(prefix="sb-pg-"))
    datadir, sockdir = root / "data", root / "sock"
    sockdir.mkdir()
    if os.geteuid() == 0:
        import pwd

        nobody = pwd.getpwnam("nobody")
        for path in (root, sockdir):
            os.chown(path, nobody.pw_uid, nobody.pw_gid)
    env = {**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
    init = _as_owner(
        [
            str(bindir / "initdb"),
            "-D",
            str(datadir),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
        ]
    )
    done = subprocess.run(init, capture_output=True, text=True, env=env, cwd=root)
    if done.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        return None, f"initdb failed: {(done.stderr or done.stdout).strip()[-300:]}"
    opts = (
        f"-c listen_addresses='' -c unix_socket_directories='{sockdir}' -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off -c max_connections=60 "
        "-c shared_buffers=64MB"
    )
    ctl = _as_owner(
        [
            str(bindir / "pg_ctl"),
            "-D",
            str(datadir),
            "-o",
            opts,
            "-l",
            str(root / "log"),
            "-w",
            "-t",
            "30",
            "start",
        ]
    )
    done = subprocess.run(ctl, capture_output=True, text=True, env=env, cwd=root)
    if done.returncode != 0:
        log = (root / "log").read_text(errors="replace") if (root / "log").exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        return None, f"pg_ctl start failed: {(done.stderr + log).strip()[-300:]}"
    return Cluster(bindir, datadir, sockdir), ""


def _stop(cluster: Cluster) -> None:
    stop = _as_owner(
        [
            str(cluster.bindir / "pg_ctl"),
            "-D",
            str(cluster.datadir),
            "-m",
            "immediate",
            "-w",
            "stop",
        ]
    )
    subprocess.run(stop, capture_output=True, cwd=cluster.datadir.parent)
    shutil.rmtree(cluster.datadir.parent, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """The test session's PostgreSQL (skipped, with the reason, when none can start)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (pip install -e '.[pg]')")
    cluster, why = _start()
    if cluster is None:
        print(f"\nPostgreSQL tests skipped: {why}", file=sys.stderr)
        pytest.skip(f"no PostgreSQL could be started: {why}")
    try:
        yield cluster
    finally:
        _stop(cluster)


_numbers = itertools.count()


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> Iterator[str]:
    """The URL of a fresh, empty database of the test cluster (dropped afterwards)."""
    import psycopg

    name = f"t{os.getpid()}_{next(_numbers)}"
    with psycopg.connect(pg_cluster.url(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield pg_cluster.url(name)
    finally:
        with (
            psycopg.connect(pg_cluster.url(), autocommit=True) as conn,
            contextlib.suppress(psycopg.Error),
        ):
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
