"""The harness: every store through its phases in fresh processes, and the report assembled
(see :mod:`session_browser.bench`)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

import orjson

from session_browser.bench.config import (
    AGENT_KINDS,
    AGENT_OF,
    FORMAT_KINDS,
    GROUP,
    INDEXED_KINDS,
    MISSING_WORD,
    OUR_INDEXES,
    OUR_RECENT_REPEATS,
    OURS,
    PEERS,
    PI,
    PI_KINDS,
    PRAISON_JSON,
    PRAISON_SQLITE,
    READ_ONLY_KINDS,
    SCAN,
    SCAN_KINDS,
    SCAN_RECENT_REPEATS,
    SCHEMA,
    SEARCH_LIMIT,
    STORE_LABELS,
    UPDATE_REPEATS,
    WARMUP_QUERIES,
    BenchError,
    BenchOptions,
    Progress,
)
from session_browser.bench.heavy import busy_cores, measure_big, measure_contention
from session_browser.bench.layout import CorpusStats, corpus_stats, harness_queries, prepare
from session_browser.bench.metrics import (
    answered_latency,
    latency_stats,
    machine_info,
    quality_stats,
    share,
    source_stats,
)
from session_browser.bench.queries import (
    Query,
    common_queries,
    peer_common_subset,
    peer_subset,
)
from session_browser.bench.runner import PhaseResult, child_env, run_phase
from session_browser.bench.sessions import JSONDict
from session_browser.bench.stores import store_available
from session_browser.bench.targets import check_targets


def _copy_store(src_sessions: Path, src_spill: Path | None, dest_home: Path) -> Path:
    """Copy a session dir (and its spill dir) into ``dest_home`` in PraisonAI's layout."""
    ignore = shutil.ignore_patterns("*.lock", "sessions_index.db*", ".*.tmp", "*.bench-tmp")
    dest_sessions = dest_home / "sessions"
    shutil.copytree(src_sessions, dest_sessions, ignore=ignore, symlinks=False)
    if src_spill is not None and src_spill.is_dir():
        shutil.copytree(src_spill, dest_home / "state" / "session_spill", ignore=ignore)
    return dest_sessions


def _set_aside_non_objects(sessions: Path, dest: Path) -> list[str]:
    """Move session files whose JSON root is not an object out of ``sessions``.

    PraisonAI 1.7.17's ``search`` raises ``AttributeError`` on such a file (a list root) instead
    of skipping it, so its stores are measured without them (and the report says so).
    """
    moved: list[str] = []
    for path in sorted(sessions.glob("*.json")):
        try:
            data = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue
        if not isinstance(data, dict):
            dest.mkdir(parents=True, exist_ok=True)
            os.replace(path, dest / path.name)
            moved.append(path.name)
    return moved


def _extrapolate_praison(db_path: Path, seconds: float, stats: CorpusStats) -> JSONDict:
    """How far PraisonAI's index build got before it was stopped, and the implied rate."""
    try:
        con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=5)
        try:
            done = int(con.execute("SELECT count(*) FROM session_meta").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return {}
    if not done or not stats.sessions:
        return {"sessions_indexed": done}
    part = done / stats.sessions
    rate = stats.messages * part / seconds
    return {
        "sessions_indexed": done,
        "share": part,
        "messages_per_s": rate,
        "full_build_estimate_s": stats.messages / rate if rate else None,
    }


class Harness:
    """Runs the phases of every store and assembles the report."""

    def __init__(self, options: BenchOptions, progress: Progress | None = None) -> None:
        self.opt = options
        self.say: Progress = progress or (lambda _msg: None)
        self.notes: list[str] = []

    # -- one store

    @staticmethod
    def _vault_cost(
        seconds: float, with_vault: JSONDict, without: list[PhaseResult], stats: CorpusStats
    ) -> JSONDict:
        """What keeping every file read in the vault costs a cold build: the same build with
        the vault off (``without``, each run just before one with it; their median)."""
        vault_bytes = int(with_vault.get("vault_bytes") or 0)
        out: JSONDict = {
            "seconds_with": seconds,
            "vault_bytes": vault_bytes,
            "vault_ratio": vault_bytes / stats.json_bytes if stats.json_bytes else None,
            "bytes_per_gb": vault_bytes * 1e9 / stats.json_bytes if stats.json_bytes else None,
        }
        failed = next((w for w in without if not w.ok), None)
        if failed is None and without:
            runs = [float(w.data["seconds"]) for w in without]
            base = statistics.median(runs)
            if len(runs) > 1:
                out["runs_without"] = runs
            out["seconds_without"] = base
            out["extra_seconds"] = seconds - base
            out["extra_ratio"] = (seconds - base) / base if base > 0 else None
            out["messages_per_s_without"] = stats.messages / base if base > 0 else None
        else:
            out["error"] = failed.error if failed is not None else "not run"
        return out

    def _measure_store(
        self,
        kind: str,
        sessions: Path,
        db_path: Path,
        env: dict[str, str],
        work: Path,
        queries: list[Query],
        common: list[str],
        stats: CorpusStats,
        pi_dir: Path | None = None,
    ) -> JSONDict:
        opt = self.opt
        is_peer = kind in PEERS
        timeout = opt.peer_timeout if is_peer else None
        # the slow stores answer a round-robin subset
        capped = is_peer or kind in SCAN_KINDS
        result: JSONDict = {"label": STORE_LABELS[kind], "status": "ok", "capped": capped}
        indexed = kind in INDEXED_KINDS

        def phase(
            name: str, args: JSONDict, extra_env: dict[str, str] | None = None
        ) -> PhaseResult:
            self.say(f"{STORE_LABELS[kind]}: {name}")
            base = {"kind": kind, "session_dir": str(sessions), "db_path": str(db_path)}
            if pi_dir is not None:
                base["pi_dir"] = str(pi_dir)
            res = run_phase(
                name, base | args, workdir=work, env=env | (extra_env or {}), timeout=timeout
            )
            if res.timed_out:
                self.say(f"{STORE_LABELS[kind]}: {name} stopped after {timeout:.0f} s")
            elif not res.ok:
                self.say(f"{STORE_LABELS[kind]}: {name} failed: {res.error}")
            return res

        if indexed:
            # Ours: the same build with the vault off first, for the vault's cost; the build
            # with it then leaves the index every later phase reads (a vault-fed one: an
            # index built without the vault hands every file to it on its next open).
            # With --builds N, N of each in turn, the median reported; the last build (with
            # the vault) leaves the index.
            without: list[PhaseResult] = []
            builds: list[PhaseResult] = []
            for _ in range(opt.builds if kind in OUR_INDEXES else 1):
                if kind in OUR_INDEXES:
                    without.append(phase("build", {}, {"SESSION_BROWSER_VAULT": "off"}))
                builds.append(phase("build", {}))
                if not builds[-1].ok:
                    break
            build = builds[-1]
            if build.timed_out:
                result["build"] = {
                    "timed_out": True,
                    "seconds": build.seconds,
                    "estimate": _extrapolate_praison(db_path, build.seconds, stats)
                    if kind == PRAISON_SQLITE
                    else {},
                }
                result["status"] = "build stopped"
                self.notes.append(
                    f"{STORE_LABELS[kind]}: index build stopped after {build.seconds:.0f} s "
                    f"(--peer-timeout); its rate is extrapolated and its other phases skipped"
                )
                return result
            if not build.ok:
                result["status"] = f"error: {build.error}"
                return result
            runs = [float(b.data["seconds"]) for b in builds]
            seconds = statistics.median(runs)
            result["build"] = {
                "seconds": seconds,
                "messages_per_s": stats.messages / seconds if seconds > 0 else None,
                "rss_mb": build.data.get("rss_mb"),
                "index_bytes": build.data.get("index_bytes"),
                "size_ratio": (build.data.get("index_bytes") or 0) / stats.json_bytes
                if stats.json_bytes
                else None,
                "reconcile": build.data.get("reconcile", {}),
            }
            if len(runs) > 1:
                result["build"]["runs"] = runs
            if kind in OUR_INDEXES:
                result["build"]["vault"] = self._vault_cost(seconds, build.data, without, stats)
            reopen = phase("reopen", {"probe": common[0] if common else MISSING_WORD})
            result["reopen"] = (
                {
                    "seconds": reopen.data["seconds"],
                    "first_search_seconds": reopen.data.get("first_search_seconds"),
                    "reconcile": reopen.data.get("reconcile", {}),
                }
                if reopen.ok
                else {"timed_out": reopen.timed_out, "error": reopen.error}
            )
        chosen = peer_subset(queries, opt.peer_queries) if capped else queries
        chosen_common = peer_common_subset(common, opt.peer_queries) if capped else common
        scan_like = kind in (*SCAN_KINDS, PRAISON_JSON)
        search_args = {
            "queries": [q.to_json() for q in chosen],
            "common": chosen_common,
            "warmup": 1 if (is_peer or scan_like) else WARMUP_QUERIES,
            "recent_repeats": SCAN_RECENT_REPEATS
            if (is_peer or scan_like)
            else OUR_RECENT_REPEATS,
        }
        search = phase("search", search_args)
        if opt.busy and kind in OUR_INDEXES and search.ok:
            # The same queries again, with every core kept busy by another process.
            with busy_cores() as burners:
                busy = phase("search", search_args)
            result["search_busy"] = (
                self._search_summary(busy.data) | {"burners": burners}
                if busy.ok
                else {"timed_out": busy.timed_out, "error": busy.error}
            )
        if search.ok:
            result["search"] = self._search_summary(search.data)
            if capped or (opt.peers and opt.format == "json"):
                subset = {q.n for q in peer_subset(queries, opt.peer_queries)}
                result["search"]["quality_peer_subset"] = quality_stats(
                    [k["rank"] for k in search.data["known"] if k["n"] in subset]
                )
        else:
            result["search"] = {"timed_out": search.timed_out, "error": search.error}
        if kind in OUR_INDEXES:
            both = phase(
                "build_search", {"queries": [q.to_json() for q in queries], "common": common}
            )
            result["build_search"] = (
                both.data if both.ok else {"timed_out": both.timed_out, "error": both.error}
            )
        update = phase("update", {"repeats": 1 if is_peer else UPDATE_REPEATS})
        if update.ok:
            d = update.data
            resumed = d.get("resumed") or []
            result["update"] = {
                "outside": latency_stats(d["outside"]) if indexed else None,
                "outside_found": share(d["outside_found"]),
                "outside_pi": sum(1 for x in d.get("outside_pi") or [] if x),
                "outside_resumed": {"resumed": sum(1 for r in resumed if r), "of": len(resumed)}
                if resumed
                else None,
                "write": latency_stats(d["write"]) if kind not in READ_ONLY_KINDS else None,
                "write_found": share(d["write_found"]),
            }
        else:
            result["update"] = {"timed_out": update.timed_out, "error": update.error}
        return result

    @staticmethod
    def _search_summary(data: JSONDict) -> JSONDict:
        known = data["known"]
        slices: dict[str, list[JSONDict]] = {}
        for k in known:
            slices.setdefault(k["slice"], []).append(k)
        return {
            "known": answered_latency(known),
            "common": answered_latency(data["common"]),
            "recent": latency_stats(data["recent"]),
            "recent_count": data.get("recent_count"),
            "quality": quality_stats([k["rank"] for k in known]),
            "errors": [k["error"] for k in [*known, *data["common"]] if k.get("error")][:5],
            "slices": {
                name: quality_stats([k["rank"] for k in items])
                for name, items in sorted(slices.items())
            },
            "slice_latency": {
                name: answered_latency(items) for name, items in sorted(slices.items())
            },
            "slowest_common": sorted(data["common"], key=lambda c: -c["seconds"])[:3],
            "sources": source_stats(known),
            "rss_mb": data.get("rss_mb"),
        }

    # -- everything

    def run(self) -> JSONDict:
        opt = self.opt
        started = time.time()
        work = Path(tempfile.mkdtemp(prefix="session-browser-bench-", dir=opt.workdir))
        try:
            report = self._run(work)
        finally:
            if not opt.keep:
                shutil.rmtree(work, ignore_errors=True)
        report["workdir"] = str(work) if opt.keep else None
        report["total_seconds"] = time.time() - started
        return report

    def _run(self, work: Path) -> JSONDict:
        opt = self.opt
        fits = FORMAT_KINDS[opt.format]
        kinds = [k for k in opt.stores if k in fits]
        if not opt.peers:
            kinds = [k for k in kinds if k not in PEERS]
        if not kinds:
            raise BenchError(
                f"none of the stores asked for (--only) reads a {opt.format} store; "
                f"those that do: {', '.join(fits)}"
            )
        layout = prepare(opt, work, self.say)
        self.say("counting messages and words")
        agent = (layout.format, layout.agent) if layout.agent is not None else None
        stats = corpus_stats(layout.sessions, pi_dir=layout.pi, agent=agent)
        where = ", ".join(
            str(p) for p in (layout.sessions, layout.pi, layout.agent) if p is not None
        )
        if not stats.sessions:
            raise BenchError(f"no readable session in {where}")
        self.say(f"generating {opt.queries} known-item queries (seed {opt.seed})")
        queries, notes = harness_queries(layout, opt.queries, opt.seed)
        self.notes += notes
        if not queries:
            raise BenchError(f"could not generate queries from {where}")
        common = common_queries(stats.top_words)
        slices = Counter(q.slice for q in queries)

        if layout.format != "json":
            self.notes.append(
                "PraisonAI's own stores and our JSON-only stores do not read "
                f"{'Pi' if layout.format in ('pi', 'mixed') else layout.format} files: "
                "not measured on this corpus"
            )
        stores: JSONDict = {}
        copies: dict[str, tuple[Path, Path, Path | None]] = {}
        for kind in kinds:
            why = store_available(kind)
            if why is not None:
                stores[kind] = {"label": STORE_LABELS[kind], "status": "unavailable"}
                self.notes.append(f"{STORE_LABELS[kind]}: not measured ({why})")
                continue
            group = (
                "ours"
                if kind in (OURS, SCAN)
                else PI
                if kind in PI_KINDS
                else AGENT_OF.get(kind, kind)
            )
            if group not in copies:
                if group not in AGENT_KINDS:
                    self.say(f"copying the store for {group}")
                home = work / f"copy-{group}"
                if group in AGENT_KINDS:  # already the run's own copy (see agent_copy)
                    assert layout.agent is not None
                    copies[group] = (layout.agent.parent, layout.agent, None)
                elif group == PI:
                    assert layout.pi is not None
                    shutil.copytree(layout.pi, home / "pi", symlinks=False)
                    copies[group] = (home, home / "pi", None)
                elif group == GROUP:
                    assert layout.sessions is not None and layout.pi is not None
                    json_copy = _copy_store(layout.sessions, layout.spill, home)
                    shutil.copytree(layout.pi, home / "pi", symlinks=False)
                    copies[group] = (home, json_copy, home / "pi")
                else:
                    assert layout.sessions is not None
                    copies[group] = (home, _copy_store(layout.sessions, layout.spill, home), None)
                if kind in PEERS:
                    moved = _set_aside_non_objects(copies[group][1], home / "set-aside")
                    if moved:
                        self.notes.append(
                            f"{STORE_LABELS[kind]}: {len(moved)} session file(s) whose JSON root "
                            "is not an object were removed from its copy (PraisonAI 1.7.17's "
                            "search raises AttributeError on them)"
                        )
            home, sessions, pi_dir = copies[group]
            env = child_env(home, work)
            db_path = work / f"{kind}.db"
            stores[kind] = self._measure_store(
                kind, sessions, db_path, env, work, queries, common, stats, pi_dir
            )
        corpus = layout.info | {"format": layout.format}
        slow = [
            STORE_LABELS[k] for k in kinds if k in SCAN_KINDS or (opt.peers and k in PEERS)
        ]
        if slow:
            n_common = len(peer_common_subset(common, opt.peer_queries))
            self.notes.append(
                f"{' and '.join(slow)} answered {min(opt.peer_queries, len(queries))} of the "
                f"{len(queries)} known-item queries (round-robin over the slices) and "
                f"{n_common} of the common-word queries (--peer-queries)"
            )
        if opt.peers and any(k in PEERS for k in kinds):
            self.notes.append(
                f"each phase of PraisonAI's stores is stopped after {opt.peer_timeout:.0f} s "
                "(--peer-timeout)"
            )
        report: JSONDict = {
            "schema": SCHEMA,
            "machine": machine_info(),
            "options": {
                "seed": opt.seed,
                "sessions": opt.sessions,
                "queries": opt.queries,
                "peers": opt.peers,
                "peer_queries": opt.peer_queries,
                "peer_timeout": opt.peer_timeout,
                "search_limit": SEARCH_LIMIT,
                "format": layout.format,
            },
            "corpus": corpus | {"stats": stats.to_json()},
            "queries": {
                "known_item": len(queries),
                "slices": dict(sorted(slices.items())),
                "common": common,
                "items": [q.to_json() for q in queries],
            },
            "stores": stores,
        }
        if opt.big_message:
            report["big_message"], report["show_big"] = measure_big(opt, self.say, work)
        if opt.contention:
            report["contention"] = measure_contention(opt, self.say, work)
        report["targets"] = check_targets(report)
        report["notes"] = self.notes
        return report


def run_benchmark(options: BenchOptions, progress: Progress | None = None) -> JSONDict:
    """Run the whole benchmark and return the report (see :func:`format_report`)."""
    return Harness(options, progress).run()

