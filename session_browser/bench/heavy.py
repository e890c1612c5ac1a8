"""Beside the stores, independent of the corpus: a session of one huge message (peak RSS of
search + recent + show, and the time of show), and writers in parallel processes (writes/s,
write latency, nothing lost or duplicated)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from session_browser.bench.config import SEARCH_LIMIT, BenchOptions, Progress
from session_browser.bench.metrics import latency_stats, max_rss_mb
from session_browser.bench.runner import child_env, phase_command, run_phase, wait_for
from session_browser.bench.sessions import JSONDict

# -- the one-message file: memory and time bounded by the input

BIG_SESSION_ID = "bench-one-message"
BIG_WORD = "ab"


def write_one_message_session(path: Path, session_id: str, size: int) -> int:
    """A PraisonAI session file holding one user message of ``"ab ab ab ..."``, about
    ``size`` bytes, streamed to disk (never whole in memory). Returns the file size."""
    placeholder = "@@bench-content@@"
    stamp = "2025-06-01T00:00:00+00:00"
    doc: JSONDict = {
        "session_id": session_id,
        "messages": [
            {"role": "user", "content": placeholder, "timestamp": 1748736000.0, "metadata": {}}
        ],
        "created_at": stamp,
        "updated_at": stamp,
        "agent_name": None,
        "user_id": None,
        "metadata": {},
        "gateway_session_id": None,
        "agent_id": None,
        "runtime_state": {},
        "archived_messages": [],
    }
    head, tail = json.dumps(doc, indent=2).split(placeholder)
    chunk = b"ab " * (1 << 16)
    left = max(3, size - len(head) - len(tail))
    with open(path, "wb") as fh:
        fh.write(head.encode())
        while left > 0:
            part = chunk[: min(len(chunk), left)]
            fh.write(part.rstrip(b" ") if len(part) == left else part)
            left -= len(part)
        fh.write(tail.encode())
    os.chmod(path, 0o600)
    return path.stat().st_size


def phase_cli(args: JSONDict) -> JSONDict:
    """Run ``session-browser`` commands in this fresh process (output discarded): the time of
    each, and the process's peak RSS with the baseline after imports."""
    from session_browser.cli import main as cli

    base = max_rss_mb()
    out: JSONDict = {"baseline_rss_mb": base, "commands": []}
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        for argv in args["commands"]:
            t0 = time.perf_counter()
            code: Any = 0
            try:
                cli.main(args=list(argv), prog_name="session-browser", standalone_mode=False)
            except SystemExit as exc:
                code = exc.code
            except Exception as exc:
                code = f"{type(exc).__name__}: {exc}"
            out["commands"].append(
                {"argv": argv, "seconds": time.perf_counter() - t0, "exit": code}
            )
    out["rss_mb"] = max_rss_mb()
    return out


def _cli_run(
    opt: BenchOptions, say: Progress, work: Path, tag: str, mb: float, commands: list[list[str]]
) -> JSONDict:
    """Write a store holding one message of about ``mb`` MB, run CLI ``commands`` on it
    in one fresh process; the file is removed afterwards."""
    home = work / tag
    sessions = home / "sessions"
    sessions.mkdir(parents=True)
    path = sessions / f"{BIG_SESSION_ID}.json"
    size = write_one_message_session(path, BIG_SESSION_ID, int(mb * 1e6))
    argv = [[*c, "--store", str(sessions)] for c in commands]
    say(f"{tag}: {' / '.join(c[0] for c in commands)} on a {size / 1e6:.1f} MB message")
    res = run_phase(
        "cli",
        {"tag": tag, "commands": argv},
        workdir=work,
        env=child_env(home, home),
        timeout=opt.heavy_timeout,
    )
    shutil.rmtree(home, ignore_errors=True)
    out: JSONDict = {"file_bytes": size, "error": None, "commands": []}
    if res.timed_out:
        out["error"] = f"stopped after {res.seconds:.0f} s"
    elif not res.ok:
        out["error"] = res.error
    else:
        out |= res.data
    return out

def measure_big(opt: BenchOptions, say: Progress, work: Path) -> tuple[JSONDict, JSONDict]:
    """The one-message file (search + recent + show) and the show of one big message."""
    big = _cli_run(
        opt,
        say,
        work,
        "one-message",
        opt.big_message_mb,
        [["search", BIG_WORD], ["recent"], ["show", BIG_SESSION_ID]],
    )
    show = _cli_run(opt, say, work, "show-big", opt.show_message_mb, [["show", BIG_SESSION_ID]])
    cmd = (show.get("commands") or [{}])[0]
    show |= {"seconds": cmd.get("seconds"), "exit": cmd.get("exit")}
    return big, show

# -- writers and readers in parallel processes

WRITE_SESSIONS = 4
WRITE_READERS = 2
_WRITE_MARK = re.compile(r"\bbenchw(\d+)n(\d+)\b")


def phase_writer(args: JSONDict) -> JSONDict:
    """``add_message`` ``count`` times, round-robin over the sessions, once ``go`` exists."""
    from session_browser.core.index import SqliteSessionStore

    store = SqliteSessionStore(
        Path(args["session_dir"]), db_path=Path(args["db_path"]), reconcile="none"
    )
    Path(args["ready"]).touch()
    wait_for(Path(args["go"]))
    writer, latencies, failed = int(args["writer"]), [], 0
    started = time.time()
    for i in range(int(args["count"])):
        t0 = time.perf_counter()
        ok = store.add_message(
            f"contention-{i % WRITE_SESSIONS}", "user", f"benchw{writer}n{i} contention probe"
        )
        latencies.append(time.perf_counter() - t0)
        failed += not ok
    ended = time.time()
    store.close()
    return {"started": started, "ended": ended, "latencies": latencies, "failed": failed}


def phase_reader(args: JSONDict) -> JSONDict:
    """Search the sessions being written until ``stop`` exists."""
    from session_browser.core.index import SqliteSessionStore

    store = SqliteSessionStore(
        Path(args["session_dir"]), db_path=Path(args["db_path"]), reconcile="none"
    )
    Path(args["ready"]).touch()
    wait_for(Path(args["go"]))
    searches = errors = 0
    first: str | None = None
    stop = Path(args["stop"])
    while not stop.exists():
        try:
            store.search("contention probe", limit=SEARCH_LIMIT)
        except Exception as exc:
            errors += 1
            first = first or f"{type(exc).__name__}: {exc}"[:300]
        searches += 1
    store.close()
    return {"searches": searches, "errors": errors, "first_error": first}


def count_written(session_dir: Path) -> tuple[Counter[tuple[int, int]], int]:
    """Every ``benchw<W>n<I>`` message in the session files (archived turns included), and
    the files that could not be read."""
    seen: Counter[tuple[int, int]] = Counter()
    unreadable = 0
    for path in sorted(session_dir.glob("*.json")):
        try:
            data = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            unreadable += 1
            continue
        for msg in [*(data.get("archived_messages") or []), *(data.get("messages") or [])]:
            match = _WRITE_MARK.search(str(msg.get("content") or "")) if isinstance(
                msg, dict) else None
            if match:
                seen[(int(match.group(1)), int(match.group(2)))] += 1
    return seen, unreadable


def contention_run(opt: BenchOptions, work: Path, writers: int) -> JSONDict:
    """``writers`` processes each ``add_message`` ``opt.write_messages`` times into
    :data:`WRITE_SESSIONS` sessions while :data:`WRITE_READERS` processes search: writes/s,
    latency, and every message counted back from the files."""
    home = work / f"contention-{writers}"
    sessions = home / "sessions"
    sessions.mkdir(parents=True)
    env = child_env(home, home)
    base = {
        "session_dir": str(sessions),
        "db_path": str(home / "index.db"),
        "go": str(home / "go"),
        "stop": str(home / "stop"),
    }
    procs: list[tuple[str, subprocess.Popen[bytes], Path]] = []
    specs = [("reader", {"n": r}) for r in range(WRITE_READERS)]
    specs += [("writer", {"writer": w, "count": opt.write_messages}) for w in range(writers)]
    for i, (phase, extra) in enumerate(specs):
        tag = f"contention-{writers}-{phase}-{i}"
        args = base | extra | {"tag": tag, "ready": str(home / f"ready-{i}")}
        cmd, out_path, log_path = phase_command(phase, args, work)
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env
            )
        procs.append((phase, proc, out_path))
    result: JSONDict = {"writers": writers, "error": None}
    try:
        for i in range(len(specs)):
            wait_for(home / f"ready-{i}", opt.heavy_timeout)
        (home / "go").touch()
        deadline = time.time() + opt.heavy_timeout
        for phase, proc, _ in procs:
            if phase == "writer":
                proc.wait(timeout=max(1.0, deadline - time.time()))
        (home / "stop").touch()
        for _, proc, _ in procs:
            proc.wait(timeout=60)
    except (TimeoutError, subprocess.TimeoutExpired) as exc:
        result["error"] = f"stopped: {exc}"
    finally:
        (home / "stop").touch()
        for _, proc, _ in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    outs: list[tuple[str, JSONDict]] = []
    finished: set[int] = set()  # writers that ran to the end (their writes were all acked)
    for (phase, proc, out_path), (_phase, extra) in zip(procs, specs, strict=True):
        if proc.returncode != 0 or not out_path.exists():
            result["error"] = result["error"] or f"a {phase} process exited {proc.returncode}"
            continue
        outs.append((phase, orjson.loads(out_path.read_bytes())))
        if phase == "writer":
            finished.add(int(extra["writer"]))
    wrote = [d for p, d in outs if p == "writer"]
    read = [d for p, d in outs if p == "reader"]
    latencies = [x for d in wrote for x in d["latencies"]]
    seen, unreadable = count_written(sessions)
    # Lost: a write a finished writer was told succeeded and the files do not hold. A
    # writer stopped at the deadline never said which of its writes went through.
    expected = {(w, i) for w in finished for i in range(opt.write_messages)}
    span = (max(d["ended"] for d in wrote) - min(d["started"] for d in wrote)) if wrote else 0
    result |= {
        "writes": len(latencies),
        "seconds": span,
        "writes_per_s": len(latencies) / span if span > 0 else None,
        "latency": latency_stats(latencies),
        "spilled": sum(d["failed"] for d in wrote),
        "lost": len(expected - set(seen)),
        "duplicated": sum(n - 1 for n in seen.values() if n > 1),
        "finished_writers": len(finished),
        "unreadable_files": unreadable,
        "reader_searches": sum(d["searches"] for d in read),
        "reader_errors": sum(d["errors"] for d in read),
    }
    if result["reader_errors"] and result["error"] is None:
        why = next((d["first_error"] for d in read if d.get("first_error")), None)
        result["error"] = f"{result['reader_errors']} reader search(es) failed" + (
            f" (first: {why})" if why else ""
        )
    shutil.rmtree(home, ignore_errors=True)
    return result

def measure_contention(opt: BenchOptions, say: Progress, work: Path) -> JSONDict:
    """1, 4 and 8 writer processes adding messages while readers search."""
    runs = []
    for writers in (1, 4, 8):
        say(
            f"contention: {writers} writer(s) x {opt.write_messages} add_message into "
            f"{WRITE_SESSIONS} sessions, {WRITE_READERS} readers searching"
        )
        runs.append(contention_run(opt, work, writers))
    return {
        "sessions": WRITE_SESSIONS,
        "readers": WRITE_READERS,
        "per_writer": opt.write_messages,
        "runs": runs,
    }


@contextlib.contextmanager
def busy_cores() -> Iterator[int]:
    """One CPU-bound process per core this process may run on (at its priority) until the
    block ends: how many."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # (not on Linux)
        cores = os.cpu_count() or 1
    spin = "while True:\n    pass"
    burners = [
        subprocess.Popen(
            [sys.executable, "-c", spin],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(cores)
    ]
    try:
        yield cores
    finally:
        for proc in burners:
            proc.kill()
        for proc in burners:
            proc.wait()
