"""Running a phase in a fresh interpreter (``python -m session_browser.bench --phase ...``) and
reading its result back."""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

from session_browser.bench.sessions import JSONDict
from session_browser.core.paths import package_env


@dataclass
class PhaseResult:
    """What a phase run gave back: its JSON result, or why there is none."""

    ok: bool
    data: JSONDict
    seconds: float
    timed_out: bool = False
    error: str | None = None


def phase_command(phase: str, args: JSONDict, workdir: Path) -> tuple[list[str], Path, Path]:
    """The command line of a phase run, and where its result and log go."""
    tag = str(args.get("tag") or f"{args.get('kind', 'x')}-{phase}")
    args_path = workdir / f"{tag}.args.json"
    out_path = workdir / f"{tag}.out.json"
    log_path = workdir / f"{tag}.log"
    args_path.write_bytes(orjson.dumps(args))
    out_path.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "session_browser.bench", "--phase", phase]
    return [*cmd, "--args", str(args_path), "--out", str(out_path)], out_path, log_path


def run_phase(
    phase: str,
    args: JSONDict,
    *,
    workdir: Path,
    env: dict[str, str],
    timeout: float | None,
) -> PhaseResult:
    """Run one phase in a fresh interpreter; its result comes back through a JSON file."""
    cmd, out_path, log_path = phase_command(phase, args, workdir)
    t0 = time.perf_counter()
    with open(log_path, "wb") as log:
        try:
            proc = subprocess.run(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return PhaseResult(False, {}, time.perf_counter() - t0, timed_out=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0 or not out_path.exists():
        tail = log_path.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
        return PhaseResult(False, {}, elapsed, error=f"exit {proc.returncode}: {tail[0]}")
    return PhaseResult(True, orjson.loads(out_path.read_bytes()), elapsed)



def child_env(home: Path, workdir: Path) -> dict[str, str]:
    """The environment of a phase process: its PraisonAI home, its own cache and data dirs, and
    this package first on the path."""
    env = package_env()
    env["DO_NOT_TRACK"] = "1"
    env["PRAISONAI_HOME"] = str(home)
    env["SESSION_BROWSER_CACHE_DIR"] = str(workdir / "cache")
    env["SESSION_BROWSER_DATA_HOME"] = str(workdir / "data")
    env.pop("PRAISONAI_SESSION_RETENTION", None)
    env.pop("PRAISONAI_SESSION_ACTIVE_WINDOW", None)
    return env


def wait_for(path: Path, limit: float = 120.0) -> None:
    """Wait until ``path`` exists (a process says it is ready, or that it may go)."""
    deadline = time.time() + limit
    while not path.exists():
        if time.time() > deadline:
            raise TimeoutError(f"{path.name} never appeared")
        time.sleep(0.001)
