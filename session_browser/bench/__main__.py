"""``python -m session_browser.bench``: the benchmark, or one phase of it in a fresh process."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import orjson

import session_browser.bench
from session_browser.bench.config import BenchError, BenchOptions
from session_browser.bench.phases import PHASES


def _phase_main(phase: str, args_path: Path, out_path: Path) -> int:
    os.environ.setdefault("DO_NOT_TRACK", "1")
    args = orjson.loads(args_path.read_bytes())
    result = PHASES[phase](args)
    tmp = out_path.with_suffix(".tmp")
    tmp.write_bytes(orjson.dumps(result))
    os.replace(tmp, out_path)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m session_browser.bench",
        description=(session_browser.bench.__doc__ or "").split("\n")[0],
    )
    parser.add_argument("--phase", choices=sorted(PHASES), help=argparse.SUPPRESS)
    parser.add_argument("--args", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--store", help="DIR, or pi:DIR for a Pi session dir")
    parser.add_argument("--pi", action="store_true")
    parser.add_argument("--mixed", action="store_true")
    parser.add_argument("--home", type=Path)
    parser.add_argument("--sessions", type=int)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--peer-queries", type=int, default=20)
    parser.add_argument("--peer-timeout", type=float, default=300.0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--no-sgd", action="store_true")
    parser.add_argument("--no-big-message", action="store_true")
    parser.add_argument("--big-message-mb", type=float, default=50.0)
    parser.add_argument("--show-message-mb", type=float, default=8.0)
    parser.add_argument("--no-contention", action="store_true")
    parser.add_argument("--busy", action="store_true")
    parser.add_argument("--write-messages", type=int, default=100)
    ns = parser.parse_args(argv)
    if ns.phase:
        if ns.args is None or ns.out is None:
            parser.error("--phase needs --args and --out")
        return _phase_main(ns.phase, ns.args, ns.out)
    # a phase process imports only what its phase needs
    from session_browser.bench.harness import run_benchmark
    from session_browser.bench.report import format_report

    store: Path | None = None
    pi_store: Path | None = None
    if ns.store is not None:
        if ns.store.startswith("pi:"):
            from session_browser.core.sources.pi import default_pi_dir

            rest = ns.store[3:].strip()
            pi_store = Path(rest).expanduser() if rest else default_pi_dir()
        else:
            store = Path(ns.store).expanduser()
    options = BenchOptions(
        store=store,
        home=ns.home,
        pi_store=pi_store,
        pi=ns.pi,
        mixed=ns.mixed,
        sessions=ns.sessions,
        seed=ns.seed,
        queries=ns.queries,
        peers=not ns.no_peers,
        peer_queries=ns.peer_queries,
        peer_timeout=ns.peer_timeout,
        keep=ns.keep,
        sgd=not ns.no_sgd,
        big_message=not ns.no_big_message,
        big_message_mb=ns.big_message_mb,
        show_message_mb=ns.show_message_mb,
        contention=not ns.no_contention,
        busy=ns.busy,
        write_messages=ns.write_messages,
    )
    try:
        report = run_benchmark(options, lambda msg: print(f"bench: {msg}", file=sys.stderr))
    except BenchError as exc:
        print(f"session-browser bench: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(report, indent=2) if ns.json else format_report(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
