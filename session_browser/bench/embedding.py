"""``python -m session_browser.bench.embedding DB [WORKERS]``: embed the vectors of the index
at ``DB`` with the local model (:func:`session_browser.core.index.vectors.build_vectors`, in
WORKERS processes, 2 by default) in a process of its own, and print what it cost as JSON:
seconds, sessions, windows, the vectors' bytes, and the peak resident memory of this process
and of its largest worker (each holds the model). ``bench --questions --mode hybrid`` runs
it."""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path


def peak_rss_bytes() -> int:
    """This process's peak resident memory (``VmHWM``), 0 where /proc does not say."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def main(argv: list[str]) -> int:
    from session_browser.core.embed import EmbedderUnavailable, embedder_named
    from session_browser.core.index.vectors import build_vectors, size_of, vectors_path

    if len(argv) not in (1, 2) or (len(argv) == 2 and not argv[1].isdigit()):
        print("usage: python -m session_browser.bench.embedding DB [WORKERS]", file=sys.stderr)
        return 2
    db = argv[0]
    workers = int(argv[1]) if len(argv) == 2 else 2
    started = time.perf_counter()
    try:
        model = embedder_named("all-MiniLM-L6-v2")
    except EmbedderUnavailable as exc:
        print(f"embedding: {exc}", file=sys.stderr)
        return 2
    loaded = time.perf_counter() - started
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.perf_counter()
        if now - last[0] >= 10 or done >= total:
            last[0] = now
            print(f"embedding: {done}/{total} sessions", file=sys.stderr, flush=True)

    report = build_vectors(db, model, progress=progress, workers=workers)
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # (KiB on Linux)
    print(
        json.dumps(
            {
                "model": model.name,
                "load_seconds": loaded,
                "seconds": report.seconds,
                "sessions": report.sessions,
                "windows": report.windows,
                "windows_embedded": report.embedded,  # (the others repeat an embedded text)
                "bytes": size_of(vectors_path(db)),
                "workers": workers,
                "peak_rss_bytes": max(peak_rss_bytes(), children),
                "peak_rss_parent_bytes": peak_rss_bytes(),
                "peak_rss_worker_bytes": children,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
