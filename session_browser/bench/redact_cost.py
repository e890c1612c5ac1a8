"""``bench --redact-kept``: the cost of ``{"redact_kept": true}`` on an index build.

The benchmark corpus is built once; then ``session-browser index update`` (which fills the
index and keeps a vault version of every session) runs on it twice, each time in a fresh
process with its own empty cache, data and config dirs: once without the setting and once
with it (every kept copy then passes the export's redaction rules first). The report gives
both wall times, the ratio, and the bytes each build left in our dirs.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from .corpus import build_corpus
from .metrics import machine_info
from .runner import child_env
from .sessions import JSONDict

Progress = Callable[[str], None]


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _build(sessions: Path, home: Path, run_dir: Path, *, redact_kept: bool) -> JSONDict:
    """One timed ``index update`` in a fresh process and fresh dirs."""
    config = run_dir / "config"
    config.mkdir(parents=True)
    if redact_kept:
        (config / "settings.json").write_text('{"redact_kept": true}\n', encoding="utf-8")
    env = child_env(home, run_dir)
    env["SESSION_BROWSER_CONFIG_DIR"] = str(config)
    cmd = [sys.executable, "-m", "session_browser", "index", "update", "--store", str(sessions)]
    log = run_dir / "build.log"
    started = time.perf_counter()
    with open(log, "wb") as out:
        proc = subprocess.run(
            cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env
        )
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"index update failed (exit {proc.returncode}): {tail[0]}")
    return {
        "redact_kept": redact_kept,
        "seconds": round(seconds, 3),
        "cache_bytes": _dir_bytes(run_dir / "cache"),
        "data_bytes": _dir_bytes(run_dir / "data"),
    }


def run_redact_kept_bench(
    *,
    sessions: int | None,
    seed: int,
    workdir: Path | None = None,
    keep: bool = False,
    progress: Progress | None = None,
    include_sgd: bool = True,
) -> JSONDict:
    """The report of ``bench --redact-kept``."""
    say = progress or (lambda _line: None)
    work = Path(tempfile.mkdtemp(prefix="sb-redact-bench-", dir=workdir))
    try:
        say("building the corpus")
        info = build_corpus(work / "home", sessions=sessions, seed=seed, include_sgd=include_sgd)
        for path in info.sessions_dir.iterdir():  # both builds read a warm page cache
            if path.is_file():
                path.read_bytes()
        say("index build without redact_kept")
        plain = _build(info.sessions_dir, info.home, work / "plain", redact_kept=False)
        say("index build with redact_kept")
        redacted = _build(info.sessions_dir, info.home, work / "redacted", redact_kept=True)
        ratio = redacted["seconds"] / plain["seconds"] if plain["seconds"] > 0 else None
        return {
            "machine": machine_info(),
            "corpus": {"sessions": info.session_count, "messages": info.message_count},
            "plain": plain,
            "redact_kept": redacted,
            "ratio": None if ratio is None else round(ratio, 3),
        }
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def format_redact_kept(report: JSONDict) -> str:
    """Both builds side by side and the ratio."""

    def line(label: str, run: JSONDict) -> str:
        return (
            f"  {label} {run['seconds']:.2f} s  (cache dir {run['cache_bytes']:,} bytes, "
            f"data dir {run['data_bytes']:,} bytes)"
        )

    ratio = report["ratio"]
    return "\n".join(
        [
            f"redact_kept cost: index update (index + vault) on {report['corpus']['sessions']:,} "
            f"sessions, {report['corpus']['messages']:,} messages",
            line("without redact_kept:", report["plain"]),
            line("with redact_kept:   ", report["redact_kept"]),
            f"  ratio {'-' if ratio is None else f'{ratio:.2f}x'} (with / without)",
        ]
    )
