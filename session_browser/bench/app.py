"""``session-browser bench-app``: the app's own targets, measured headlessly.

On a store (a copy of ``--store DIR``, or a generated corpus of ``--sessions N``) with a warm
index and one added session of 20,000 messages, the real app
(:class:`~session_browser.tui.app.SessionBrowserApp` under ``App.run_test``, driven by a
Pilot) runs in three fresh Python processes: one for the first paint, one for a whole
session of work (the searches, the 20,000-message session opened, paged and closed, the
quarantine workbench, an export of every session, in that order, each timed there), and
one on the store without an index:

- **first paint**: from the moment the process is spawned (interpreter start and every
  import included, as a user pressing Enter on ``session-browser`` waits for them) to
  Textual's ``Ready`` event, sent once the first frame of the main screen (search input,
  header, status line with the store) has been rendered. Also reported: from app
  construction, and until the session count is shown.
- **results after the last keystroke**: a known-item query typed key by key at a fast
  typist's pace (``--key-delay``, 80 ms by default, so earlier keystrokes start searches
  that the later ones cancel); the clock runs from sending the last key to the first line of
  the hit list rendered with that query's results (debounce included). p50/p95 over the
  queries.
- **opening a 20,000-message session**: its unique word is searched, then Enter on the hit;
  the clock runs from sending Enter to the first rendered line of the loaded transcript.
  Paging through it (PageDown) is timed as well.
- **peak RSS** of each app process (``VmHWM``); the largest (the whole session of work's,
  as a rule) is compared to the target.
- **RSS after a close and after an export** (the process's current ``VmRSS``, not its
  peak): before the Enter that opens the 20,000-message session and one second after Esc
  closed it; before Ctrl+S on the Export screen (F6, every session, JSON) and one second
  after the export finished. Each is
  compared with the RSS before: memory a closed viewer or a finished export still holds
  is what the targets catch.
- **first answer on a cold store**: the same store with no index at all (a fresh cache dir),
  as on a first run: the first known-item query is typed as soon as the first frame is
  painted (keys sent as a terminal sends them), and the clock runs from its last key to
  the hit list (or "no hits") painted for it, while the index builds in the background.
  Then F3: the time until the Recent list shows its first rows, and how far the build was
  at each point.

The store given with ``--store`` is copied first and never changed; the index lives in a
temporary cache dir. Timings are wall-clock on this machine: the report says which.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from session_browser.bench.metrics import machine_info, max_rss_mb

TARGETS: dict[str, tuple[float, str, str]] = {
    # key -> (limit, unit, label)
    "first_paint_s": (1.0, "s", "first paint (process start -> first frame)"),
    "search_p95_ms": (100.0, "ms", "results on screen after last keystroke (p95)"),
    "open_big_s": (0.5, "s", "open 20k-message session -> first paint"),
    # the largest of every measuring process's peak, the whole session of work among them
    "peak_rss_mb": (250.0, "MB", "peak RSS of the app (a whole session of work)"),
    # RSS now (VmRSS) less RSS before: what a closed viewer or a finished export kept.
    "close_kept_mb": (25.0, "MB", "RSS kept after closing the 20k session"),
    "export_kept_mb": (50.0, "MB", "RSS kept after exporting every session"),
    "cold_answer_s": (2.0, "s", "cold store (no index): first answer"),
}
BIG_ID = "bench-app-twenty-thousand"
BIG_WORD = "zephyrquartzite"
SIZE = (120, 36)
#: The ceiling of one wait for the app (a wait names what it waits for: on a timeout the
#: report says which wait it was); ``--wait-limit`` lowers every wait's ceiling.
WAIT_LIMIT = 300.0
#: The ceiling of one measuring process as a whole (a process that hangs outside a wait is
#: killed: the report says which phase, and what the phases before it measured).
CHILD_TIMEOUT = 1200.0
SETTLE_S = 1.0  # after a close or an export, before RSS is read again


def current_rss_mb() -> float:
    """This process's resident set now (``VmRSS``) in MB; its peak where that is unknown."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return max_rss_mb()


class BenchAppError(Exception):
    """The benchmark cannot run (bad store, a child process failed)."""


class WaitTimedOut(Exception):
    """A wait for the app passed its ceiling (in a measuring process)."""

    def __init__(self, what: str, limit: float) -> None:
        super().__init__(f"waiting for {what}: not within {limit:g} s")
        self.what = what
        self.limit = limit


class BenchAppIncomplete(BenchAppError):
    """A phase did not finish: a wait passed its ceiling, or its process hung. Holds what
    the phases before it measured (``finished``: phase -> its results) and the wait."""

    def __init__(
        self,
        phase: str,
        wait: str,
        limit: float,
        finished: dict[str, dict[str, Any]],
        partial: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(f"the {phase} phase timed out waiting for {wait} ({limit:g} s)")
        self.phase = phase
        self.wait = wait
        self.limit = limit
        self.finished = dict(finished)
        self.partial = partial or {}  # what the phase that timed out measured before

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": False,
            "timed_out": {"phase": self.phase, "wait": self.wait, "limit_s": self.limit},
            "finished": self.finished,
            "partial": self.partial,
        }


@dataclass
class BenchAppOptions:
    store: Path | None = None
    sessions: int = 30000
    queries: int = 20
    big_messages: int = 20000
    key_delay: float = 0.08
    seed: int = 7
    extra_queries: tuple[str, ...] = ()  # typed after the known-item queries
    sgd: bool = True  # False: corpus from pip-installable data only (chitchat + demo)
    wait_limit: float | None = None  # the ceiling of every wait (None: each its own)


# ---------------------------------------------------------------------- machine


def machine() -> dict[str, Any]:
    """The machine (:func:`~session_browser.bench.metrics.machine_info`) and Textual's version."""
    info = machine_info()
    try:
        from importlib.metadata import version

        textual = version("textual")
    except Exception:  # pragma: no cover - textual is a dependency
        textual = "?"
    return {
        "cores": info["cpu_count"] or 0,
        "cpu": info["cpu_model"],
        "python": info["python"],
        "sqlite": info["sqlite"],
        "textual": textual,
        "platform": info["platform"],
    }


# ---------------------------------------------------------------------- the store


def big_session(messages: int, *, start: float = 1.7e9) -> dict[str, Any]:
    """A PraisonAI session of ``messages`` turns (a tenth archived before a compaction),
    with :data:`BIG_WORD` in the middle turn."""
    archived_n = messages // 10
    total = messages
    rows: list[dict[str, Any]] = []
    for i in range(total):
        role = "user" if i % 2 == 0 else "assistant"
        text = (
            f"Turn {i}: notes on shard {i % 97} and replica {i % 13}; "
            "the migration keeps the old schema readable while the backfill runs.\n"
            "Second line of the turn, long enough to wrap on a narrow terminal window."
        )
        if i == total // 2:
            text += f" The {BIG_WORD} marker sits here."
        row: dict[str, Any] = {
            "role": role,
            "content": text,
            "timestamp": start + i * 7200.0,
            "metadata": {},
        }
        if i < archived_n:
            row["archived"] = True
        rows.append(row)
    summary = {
        "role": "system",
        "content": f"[Session Summary] {archived_n} turns about the shard migration.",
        "timestamp": start + archived_n * 7200.0 - 1.0,
        "metadata": {"compaction": True},
    }
    active = [summary, *rows[archived_n:]]
    iso = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(start))
    iso_end = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(start + total * 7200.0))
    return {
        "session_id": BIG_ID,
        "messages": active,
        "created_at": iso,
        "updated_at": iso_end,
        "agent_name": None,
        "user_id": None,
        "metadata": {"title": "Twenty thousand messages (bench-app)"},
        "gateway_session_id": None,
        "agent_id": None,
        "runtime_state": {},
        "archived_messages": rows[:archived_n],
    }


def prepare(
    opts: BenchAppOptions, work: Path, say: Callable[[str], None]
) -> tuple[Path, dict[str, Any], list[str]]:
    """The sessions dir to measure (a copy or a new corpus, plus the big session), its warm
    index, and the queries."""
    from session_browser.bench.corpus import build_corpus, corpus_sources
    from session_browser.bench.queries import make_queries
    from session_browser.core.index import SqliteSessionStore

    home = work / "home"
    sessions = home / "sessions"
    info: dict[str, Any] = {}
    if opts.store is not None:
        src = Path(opts.store).expanduser()
        if not src.is_dir():
            raise BenchAppError(f"store not found: {src} is not a directory")
        say(f"copying {src} (it is never changed)")
        started = time.perf_counter()
        shutil.copytree(src, sessions, symlinks=True)
        spill = src.parent / "state" / "session_spill"
        if spill.is_dir():
            shutil.copytree(spill, home / "state" / "session_spill", symlinks=True)
        info["source"] = str(src)
        info["copy_s"] = round(time.perf_counter() - started, 2)
    else:
        say(f"generating a corpus of {opts.sessions:,} sessions")
        started = time.perf_counter()
        corpus = build_corpus(home, sessions=opts.sessions, seed=opts.seed, include_sgd=opts.sgd)
        info["source"] = (
            f"generated corpus ({corpus.session_count:,} sessions, seed {opts.seed}; "
            f"{corpus_sources(corpus)})"
        )
        info["build_s"] = round(time.perf_counter() - started, 2)
    say(f"choosing {opts.queries} known-item queries")
    queries = [item.query for item in make_queries(home, n=opts.queries, seed=opts.seed)]
    queries += [q for q in opts.extra_queries if q.strip()]
    if not queries:
        raise BenchAppError("no known-item queries could be made from this store")
    say(f"adding a session of {opts.big_messages:,} messages")
    data = big_session(opts.big_messages)
    (sessions / f"{BIG_ID}.json").write_text(
        json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8"
    )
    say("building the index (warm index for the measurements)")
    started = time.perf_counter()
    with SqliteSessionStore(sessions, reconcile="none") as store:
        report = store.reconcile()
        info["index_s"] = round(time.perf_counter() - started, 2)
        info["sessions"] = store.count()
        info["messages_indexed"] = report.messages
    info["big_session"] = {"id": BIG_ID, "messages": opts.big_messages}
    return sessions, info, queries


# ---------------------------------------------------------------------- children


def run_child(kind: str, args: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """Run one measurement in a fresh interpreter; its JSON result."""
    with tempfile.NamedTemporaryFile("r", suffix=".json", delete=False) as fh:
        out = Path(fh.name)
    try:
        payload = json.dumps({"kind": kind, "out": str(out), **args})
        spawned = time.time()
        proc = subprocess.run(
            [sys.executable, "-m", "session_browser.bench.app_child", payload, str(spawned)],
            env=env,
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT,
            check=False,
        )
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
            raise BenchAppError(f"the {kind} run failed: " + " | ".join(tail))
        result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        return result
    except subprocess.TimeoutExpired as exc:
        raise WaitTimedOut("its process to finish (killed)", CHILD_TIMEOUT) from exc
    finally:
        out.unlink(missing_ok=True)


# ---------------------------------------------------------------------- the run


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))
    return ordered[k]


def search_times(samples: list[dict[str, Any]]) -> list[float]:
    """The times of the answers that came back with hits: an error or an empty list is
    quick to paint and says nothing about the search."""
    return [float(s["ms"]) for s in samples if not s.get("error") and s["hits"]]


def judge(
    values: dict[str, float | None], missing: dict[str, tuple[int, int]]
) -> list[dict[str, Any]]:
    """Each target of :data:`TARGETS` with its value and PASS/FAIL; ``missing``: per target,
    (errors, answers without hits) among what it was to measure. A target measured on
    answers the app did not get cannot pass, however fast the others were."""
    targets = []
    for key, (limit, unit, label) in TARGETS.items():
        value = values.get(key)
        n_errors, n_empty = missing.get(key, (0, 0))
        targets.append(
            {
                "name": key,
                "label": label,
                "value": value,
                "target": limit,
                "unit": unit,
                "errors": n_errors,
                "no_hits": n_empty,
                "pass": value is not None and value < limit and not (n_errors or n_empty),
            }
        )
    return targets


def run_bench_app(
    opts: BenchAppOptions, *, say: Callable[[str], None] = lambda _m: None
) -> dict[str, Any]:
    """Prepare the store, run every measurement in its own process, and report."""
    with tempfile.TemporaryDirectory(prefix="session-browser-bench-app-") as tmp:
        work = Path(tmp)
        env = dict(os.environ)
        env["SESSION_BROWSER_CACHE_DIR"] = str(work / "cache")
        env["SESSION_BROWSER_CONFIG_DIR"] = str(work / "config")
        env["SESSION_BROWSER_DATA_HOME"] = str(work / "data")
        env.setdefault("DO_NOT_TRACK", "1")
        saved = {k: os.environ.get(k) for k in ("SESSION_BROWSER_CACHE_DIR",)}
        os.environ["SESSION_BROWSER_CACHE_DIR"] = env["SESSION_BROWSER_CACHE_DIR"]
        try:
            sessions, store_info, queries = prepare(opts, work, say)
        finally:
            for key, before in saved.items():
                if before is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = before
        common = {
            "store": str(sessions),
            "key_delay": opts.key_delay,
            "wait_limit": opts.wait_limit,
        }
        finished: dict[str, dict[str, Any]] = {}

        def phase(
            kind: str, what: str, args: dict[str, Any], run_env: dict[str, str] = env
        ) -> dict[str, Any]:
            """Run one measuring process; a wait of it that times out ends the run with
            what the phases before measured (:class:`BenchAppIncomplete`)."""
            say(f"measuring {what}")
            try:
                result = run_child(kind, args, run_env)
            except WaitTimedOut as exc:
                raise BenchAppIncomplete(kind, exc.what, exc.limit, finished) from exc
            timed_out = result.pop("timed_out", None)
            if timed_out:
                raise BenchAppIncomplete(
                    kind, str(timed_out["wait"]), float(timed_out["limit_s"]), finished, result
                )
            finished[kind] = result
            return result

        paint = phase("paint", "first paint", common)
        # The searches, the big session, the workbench and the export in one process (as a
        # user works): each is timed there, and its peak RSS is the app's through all of it.
        whole = phase(
            "session",
            "a whole session of work (searches, the 20k session, the workbench, an export)",
            {**common, "queries": queries, "export_to": str(work / "export.json")},
        )
        cold_env = {**env, "SESSION_BROWSER_CACHE_DIR": str(work / "cold-cache")}
        cold = phase(
            "cold",
            "the first answer on the same store without an index",
            {**common, "queries": queries},
            cold_env,
        )
    search = opened = exported = whole
    samples = search["samples"]
    search_errors = [s for s in samples if s.get("error")]
    no_hits = [s for s in samples if not s.get("error") and not s["hits"]]
    times = search_times(samples)
    rss = {
        "paint": paint["peak_rss_mb"],
        "session": whole["peak_rss_mb"],
        "cold": cold["peak_rss_mb"],
    }
    values: dict[str, float | None] = {
        "first_paint_s": float(paint["first_paint_s"]),
        "search_p95_ms": _pct(times, 0.95) if times else None,
        "open_big_s": float(opened["open_big_s"]),
        "peak_rss_mb": max(rss.values()),
        "close_kept_mb": float(opened["rss_after_close_mb"]) - float(opened["rss_before_open_mb"]),
        "export_kept_mb": float(exported["rss_after_export_mb"])
        - float(exported["rss_before_export_mb"]),
        "cold_answer_s": float(cold["cold_answer_s"]),
    }
    targets = judge(values, {"search_p95_ms": (len(search_errors), len(no_hits))})
    return {
        "machine": machine(),
        "store": store_info,
        "first_paint": {
            "from_process_start_s": paint["first_paint_s"],
            "from_app_construction_s": paint["from_construction_s"],
            "imports_s": paint["imports_s"],
            "session_count_shown_s": paint["counts_shown_s"],
        },
        "search": {
            "queries": len(samples),
            "answered": len(times),
            "errors": len(search_errors),
            "no_hits": len(no_hits),
            "key_delay_s": opts.key_delay,
            "p50_ms": _pct(times, 0.5),
            "p95_ms": _pct(times, 0.95),
            "max_ms": max(times) if times else 0.0,
            "samples": search["samples"],
        },
        "open_big": {
            "messages": opened["opened_messages"],
            "opened_at_index": opened["opened_at"],
            "first_paint_s": opened["open_big_s"],
            "page_down_ms_p50": opened["page_ms_p50"],
            "page_down_ms_max": opened["page_ms_max"],
            "jump_to_end_ms": opened["jump_end_ms"],
            "rss_before_open_mb": opened["rss_before_open_mb"],
            "rss_open_mb": opened["rss_open_mb"],
            "rss_after_close_mb": opened["rss_after_close_mb"],
        },
        "export": {
            "sessions": exported["exported_sessions"],
            "bytes": exported["export_bytes"],
            "seconds": exported["export_s"],
            "rss_before_mb": exported["rss_before_export_mb"],
            "rss_after_mb": exported["rss_after_export_mb"],
        },
        "cold": {
            "query": cold["query"],
            "hits": cold["hits"],
            "error": cold["error"],
            "answer_after_last_key_s": cold["cold_answer_s"],
            "answer_from_process_start_s": cold["answer_from_start_s"],
            "first_paint_s": cold["first_paint_s"],
            "index_at_answer": cold["building_at_answer"],
            "first_hits_after_last_key_s": cold["hits_s"],
            "index_at_first_hits": cold["building_at_hits"],
            "recent_after_f3_s": cold["recent_s"],
            "recent_rows": cold["recent_rows"],
            "index_at_recent": cold["building_at_recent"],
            "status_line": cold["status"],
        },
        "session": {
            "queries": len(whole["samples"]),
            "messages_opened": whole["opened_messages"],
            "exported_sessions": whole["exported_sessions"],
            "rss_after_close_mb": whole["rss_after_close_mb"],
            "rss_workbench_mb": whole["rss_workbench_mb"],
            "rss_after_export_mb": whole["rss_after_export_mb"],
            "peak_rss_mb": whole["peak_rss_mb"],
        },
        "rss_mb": rss,
        "targets": targets,
        "passed": all(t["pass"] for t in targets),
    }


def _scalars(result: dict[str, Any]) -> str:
    return ", ".join(
        f"{key} {value}"
        for key, value in result.items()
        if key != "kind" and isinstance(value, (int, float, str)) and not isinstance(value, bool)
    )


def format_incomplete(stopped: BenchAppIncomplete) -> str:
    """The report of a run a wait stopped: which phase and wait, then what the phases that
    finished (and the one stopped, up to the wait) measured."""
    lines = [
        f"bench-app did not finish: the {stopped.phase} phase timed out waiting for "
        f"{stopped.wait} (ceiling {stopped.limit:g} s)",
        "finished phases: " + (", ".join(stopped.finished) or "none"),
    ]
    for name, result in stopped.finished.items():
        lines.append(f"  {name}: {_scalars(result)}")
    if stopped.partial:
        lines.append(f"  {stopped.phase} (until the timeout): {_scalars(stopped.partial)}")
    return "\n".join(lines)


def format_report(report: dict[str, Any]) -> str:
    m = report["machine"]
    s = report["store"]
    lines = [
        f"machine: {m['cores']} cores · {m['cpu']} · python {m['python']} · "
        f"sqlite {m['sqlite']} · textual {m['textual']}",
        f"store: {s['sessions']:,} sessions ({s['source']}), warm index "
        f"(built in {s['index_s']:.1f} s); plus a {s['big_session']['messages']:,}-message session",
        "",
        f"{'measure':<48} {'value':>10} {'target':>10}  result",
        "-" * 78,
    ]
    for t in report["targets"]:
        digits = 3 if t["unit"] == "s" else 1
        value = "n/a" if t["value"] is None else f"{t['value']:.{digits}f} {t['unit']}"
        target = f"< {t['target']:g} {t['unit']}"
        missing = []
        if t.get("errors"):
            missing.append(f"{t['errors']} error{'s' if t['errors'] != 1 else ''}")
        if t.get("no_hits"):
            missing.append(f"{t['no_hits']} without hits")
        lines.append(
            f"{t['label']:<48} {value:>10} {target:>10}  {'PASS' if t['pass'] else 'FAIL'}"
            + (f" ({', '.join(missing)}, not timed)" if missing else "")
        )
    fp = report["first_paint"]
    se = report["search"]
    ob = report["open_big"]
    ex = report["export"]
    lines += [
        "",
        f"first paint: {fp['from_process_start_s']:.3f} s from process start "
        f"({fp['imports_s']:.3f} s of it importing the app, "
        f"{fp['from_app_construction_s']:.3f} s from app construction); "
        f"session count shown at {fp['session_count_shown_s']:.3f} s",
        f"search: {se['queries']} queries typed at {se['key_delay_s'] * 1000:.0f} ms a key: "
        f"p50 {se['p50_ms']:.1f} ms, p95 {se['p95_ms']:.1f} ms, max {se['max_ms']:.1f} ms "
        "(last key -> hit list painted, debounce included); "
        f"{se['answered']} of {se['queries']} answered with hits, {se['errors']} errors, "
        f"{se['no_hits']} without hits (not timed)",
        f"20k session: {ob['messages']:,} messages opened at #{ob['opened_at_index']} in "
        f"{ob['first_paint_s']:.3f} s; PageDown p50 {ob['page_down_ms_p50']:.1f} ms "
        f"(max {ob['page_down_ms_max']:.1f} ms); G to the end {ob['jump_to_end_ms']:.1f} ms",
        f"RSS now (VmRSS): {ob['rss_before_open_mb']:.0f} MB before opening the 20k session, "
        f"{ob['rss_open_mb']:.0f} MB open, {ob['rss_after_close_mb']:.0f} MB "
        f"{SETTLE_S:g} s after Esc closed it",
        f"export: {ex['sessions']:,} sessions as JSON ({ex['bytes'] / 1e6:.1f} MB) in "
        f"{ex['seconds']:.1f} s; RSS now {ex['rss_before_mb']:.0f} MB before Ctrl+S, "
        f"{ex['rss_after_mb']:.0f} MB {SETTLE_S:g} s after it finished",
        f"whole session of work in one process ({report['session']['queries']} searches, "
        f"the {report['session']['messages_opened']:,}-message session opened and closed, the "
        f"workbench, an export of {report['session']['exported_sessions']:,} sessions): "
        f"peak RSS {report['session']['peak_rss_mb']:.0f} MB; RSS now "
        f"{report['session']['rss_after_close_mb']:.0f} MB after the close, "
        f"{report['session']['rss_workbench_mb']:.0f} MB on the workbench, "
        f"{report['session']['rss_after_export_mb']:.0f} MB after the export",
        "peak RSS: " + ", ".join(f"{k} {v:.0f} MB" for k, v in report["rss_mb"].items()),
    ]
    cold = report["cold"]

    def building(at: list[int]) -> str:
        return f"index {at[0]:,} of {at[1]:,} files" if at else "index not building"

    hits = cold["hits"]
    lines += [
        f"cold store (no index): {cold['query']!r} answered "
        f"{cold['answer_after_last_key_s']:.3f} s after its last key "
        f"({cold['answer_from_process_start_s']:.3f} s from process start) with "
        f"{hits} hit{'s' if hits != 1 else ''} ({building(cold['index_at_answer'])}); "
        + (
            "no hits at all"
            if cold["first_hits_after_last_key_s"] is None
            else f"first hits {cold['first_hits_after_last_key_s']:.3f} s after the last key "
            f"({building(cold['index_at_first_hits'])})"
        ),
        f"cold store: Recent showed {cold['recent_rows']:,} rows "
        f"{cold['recent_after_f3_s']:.3f} s after F3 ({building(cold['index_at_recent'])}); "
        f"status line then: {cold['status_line']}",
    ]
    for sample in se["samples"]:
        if sample.get("error"):
            lines.append(f"search error: {sample['query']!r}: {sample['error']}")
        elif not sample["hits"]:
            lines.append(f"search without hits: {sample['query']!r}")
    return "\n".join(lines)
