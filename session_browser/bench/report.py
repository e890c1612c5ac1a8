"""The report as plain text: fixed-width tables, no markup."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from session_browser.bench.config import AGENT_KINDS, GROUP, OURS, PRAISON_SQLITE, UPDATE_REPEATS
from session_browser.bench.sessions import JSONDict
from session_browser.bench.targets import get_path, target_kind

LEGEND = (
    "cold index build: no index file, open the store and index every session (PraisonAI: its "
    "first search builds its index); messages/s counts archived+active messages.",
    "reopen: a fresh process opens the up-to-date index and checks every file's identity "
    "(PraisonAI: a new store's first search).",
    "outside change -> fresh: another process rewrites one session file; ours: reconcile(); "
    "PraisonAI SQLite: a new store's first search (it has no reconcile); median of "
    f"{UPDATE_REPEATS} (1 for PraisonAI). write through store: add_message(), median.",
    "search: warm, limit=10; known-item queries and the 20 most frequent words alone and in "
    "pairs. Rank@1 / Recall@k: share of queries with a relevant session first / in the top k; "
    "MRR: mean 1/rank.",
)


PI_LEGEND = (
    "Pi: an outside change appends one user turn to the session's JSONL file, as Pi does; "
    "Pi reads resumed: re-reads that started at the byte offset where the index stopped.",
    "JSON + Pi: a PraisonAI JSON store and a Pi store opened as one group; outside changes "
    "alternate between them, writes go through the JSON store; hits are ranked together.",
)

AGENT_LEGEND = (
    "Coding agents: an outside change adds one user turn to the session's file as the agent "
    "does (Claude Code, Codex, Copilot CLI, Kimi: one JSON line appended; Aider: one prompt "
    "line appended; Gemini CLI, Cline: the file written again; OpenCode, Goose: a message "
    "row added to the database); reads resumed: re-reads that "
    "started where the index stopped (a Claude Code or Codex file is read on only by the "
    "process that read it last, as the app does with the transcripts being written; this "
    "phase's fresh process reads each changed file whole the first time; the other agents' "
    "files are read whole)."
)


def _secs(value: Any) -> str:
    if value is None:
        return "-"
    if value < 1:
        return f"{value * 1000:.1f} ms"
    return f"{value:.2f} s"


def _num(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _mb(value: Any) -> str:
    return "-" if value is None else f"{value / 1e6:.1f} MB"


def _rate(value: Any) -> str:
    return "-" if value is None else f"{value:,.0f}/s"


def _fmt_target(value: Any, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "s":
        return _secs(value)
    if unit == "msgs/s":
        return f"{value:,.0f} msgs/s"
    if unit == "MB":
        return f"{value:.0f} MB"
    if unit == "x":
        return f"{value:.2f}x"
    if unit == "n":
        return f"{value:.0f}"
    return f"{value:.3f}"


def _problem_text(errors: int, no_hits: int) -> str:
    parts = []
    if errors:
        parts.append(f"{errors} error{'s' if errors != 1 else ''}")
    if no_hits:
        parts.append(f"{no_hits} without hits")
    return ", ".join(parts)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(
            str(c).ljust(w) if i == 0 else str(c).rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()
        for r in [header, *rows]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def format_report(report: JSONDict) -> str:
    """The report as plain text (fixed-width tables, no markup)."""
    m = report["machine"]
    c = report["corpus"]
    st = c["stats"]
    q = report["queries"]
    fmt = c.get("format", "json")
    data_word = {
        "json": "JSON",
        "pi": "Pi JSONL",
        "mixed": "JSON + Pi JSONL",
        "claude": "Claude Code JSONL",
        "codex": "Codex JSONL",
        "gemini": "Gemini CLI chat JSON",
        "copilot": "Copilot CLI events JSONL",
        "kimi": "Kimi CLI wire JSONL",
        "cline": "Cline ui_messages JSON",
        "aider": "Aider chat history Markdown",
        "opencode": "OpenCode SQLite database",
        "goose": "Goose SQLite database",
    }.get(fmt, "JSON")
    size_word = {
        "pi": "JSONL",
        "mixed": "data",
        "claude": "JSONL",
        "codex": "JSONL",
        "copilot": "JSONL",
        "kimi": "JSONL",
        "aider": "Markdown",
        "opencode": "SQLite",
        "goose": "SQLite",
    }.get(fmt, "JSON")
    lines = [
        "session-browser bench",
        f"machine: {m['cpu_count']} x {m['cpu_model']}, {m.get('memory_gb')} GB, "
        f"Python {m['python']}, SQLite {m['sqlite']} (FTS5 {'yes' if m['fts5'] else 'no'}), "
        f"praisonaiagents {m.get('praisonaiagents') or 'not installed'}",
        f"corpus: {c['source']} (seed {report['options']['seed']}"
        + (f"; {c['sources']}" if c.get("sources") else "")
        + f"): {st['sessions']:,} sessions "
        f"in {st['files']:,} files ({st['unreadable']} unreadable), {st['messages']:,} messages "
        f"({st['archived_messages']:,} archived), {_mb(st['json_bytes'])} of {data_word}",
        f"queries: {q['known_item']} known-item ("
        + ", ".join(f"{k} {v}" for k, v in q["slices"].items())
        + f"), {len(q['common'])} common-word ({' '.join(q['common'][:8])} ...)",
        "",
    ]
    stores: JSONDict = report["stores"]
    kinds = list(stores)
    header = ["", *[stores[k]["label"] for k in kinds]]

    def row(label: str, fn: Callable[[JSONDict], str]) -> list[str]:
        cells = [label]
        for k in kinds:
            s = stores[k]
            try:
                cells.append(fn(s))
            except (KeyError, TypeError):
                cells.append("-")
        return cells

    def build_cell(s: JSONDict) -> str:
        b = s.get("build")
        if b is None:
            return "n/a"
        if b.get("timed_out"):
            return f">{b['seconds']:.0f} s (stopped)"
        return _secs(b["seconds"])

    def rate_cell(s: JSONDict) -> str:
        b = s.get("build")
        if b is None:
            return "n/a"
        if b.get("timed_out"):
            est = (b.get("estimate") or {}).get("messages_per_s")
            return f"~{est:,.0f}/s (est.)" if est else "-"
        return _rate(b.get("messages_per_s"))

    def lat(section: str, key: str) -> Callable[[JSONDict], str]:
        def cell(s: JSONDict) -> str:
            v = get_path(s, "search", section)
            if v is None:
                return "n/a"
            if "p50" not in v:
                return "stopped" if v.get("timed_out") else "error"
            return _secs(v[key]) + (
                ""
                if section != "known" or not s.get("capped")
                else f" (n={v['n']})"
                if key == "p50"
                else ""
            )

        return cell

    def busy_lat(section: str) -> Callable[[JSONDict], str]:
        def cell(s: JSONDict) -> str:
            v = get_path(s, "search_busy", section)
            if v is None:
                return "n/a"
            if "p50" not in v:
                return "stopped" if get_path(s, "search_busy", "timed_out") else "error"
            return f"{_secs(v['p50'])} / {_secs(v['p95'])}"

        return cell

    def problems(section: str) -> Callable[[JSONDict], str]:
        def cell(s: JSONDict) -> str:
            v = get_path(s, "search", section)
            if v is None or "asked" not in v:
                return "n/a"
            return f"{v['errors']} / {v['no_hits']} of {v['asked']}"

        return cell

    def qual(key: str) -> Callable[[JSONDict], str]:
        def cell(s: JSONDict) -> str:
            v = get_path(s, "search", "quality")
            if v is None:
                return "n/a"
            return _num(v[key])

        return cell

    def upd(key: str) -> Callable[[JSONDict], str]:
        def cell(s: JSONDict) -> str:
            u = s.get("update")
            if u is None:
                return "n/a"
            if "write" not in u:
                return "stopped" if u.get("timed_out") else "error"
            if key == "outside":
                if u["outside"] is None:
                    return "n/a (reads files)"
                found = u.get("outside_found")
                suffix = "" if found == 1.0 else " (not picked up)" if not found else " (partly)"
                return _secs(u["outside"]["p50"]) + suffix
            if key == "resumed":
                r = u.get("outside_resumed")
                return "n/a" if not r else f"{r['resumed']} of {r['of']}"
            if u["write"] is None:
                return "n/a (read-only)"
            found = u.get("write_found")
            return _secs(u["write"]["p50"]) + ("" if found == 1.0 else " (not found)")

        return cell

    rows = [
        row("status", lambda s: s["status"]),
        row("cold index build", build_cell),
        row("  messages/s", rate_cell),
        row(
            "  peak RSS (build)",
            lambda s: (
                f"{s['build']['rss_mb']:.0f} MB"
                if s.get("build") and not s["build"].get("timed_out")
                else "n/a"
            ),
        ),
        row(
            "  index size",
            lambda s: (
                _mb(s["build"]["index_bytes"]) + f" ({s['build']['size_ratio']:.2f}x {size_word})"
                if s.get("build") and not s["build"].get("timed_out")
                else "n/a"
            ),
        ),
        row(
            "reopen (up to date)",
            lambda s: (
                _secs(s["reopen"]["seconds"])
                if s.get("reopen") and "seconds" in s["reopen"]
                else "n/a"
            ),
        ),
        row("outside change -> fresh", upd("outside")),
        *(
            [row("  Pi reads resumed", upd("resumed"))]
            if any(get_path(stores[k], "update", "outside_resumed") for k in kinds)
            else []
        ),
        row("write through store", upd("write")),
        row("search p50 (known-item)", lat("known", "p50")),
        row("search p95", lat("known", "p95")),
        row("search p99", lat("known", "p99")),
        row("  errors / without hits", problems("known")),
        row("search p50 (common words)", lat("common", "p50")),
        row("search p95", lat("common", "p95")),
        row("search p99", lat("common", "p99")),
        row("  errors / without hits", problems("common")),
        *(
            [
                row("search p50 / p95, every core busy", busy_lat("known")),
                row("  (common words)", busy_lat("common")),
            ]
            if any(stores[k].get("search_busy") for k in kinds)
            else []
        ),
        row("recent(50) p50", lat("recent", "p50")),
        row("recent(50) p95", lat("recent", "p95")),
        row("peak RSS (search)", lambda s: f"{s['search']['rss_mb']:.0f} MB"),
        row(
            "peak RSS (build + queries)",
            lambda s: (
                f"{s['build_search']['rss_mb']:.0f} MB" if "rss_mb" in s["build_search"] else
                "stopped" if s["build_search"].get("timed_out") else "error"
            ) if s.get("build_search") else "n/a",
        ),
        row("Rank@1", qual("rank1")),
        row("Recall@5", qual("recall5")),
        row("Recall@10", qual("recall10")),
        row("MRR", qual("mrr")),
        row("queries judged", lambda s: str(get_path(s, "search", "quality", "n") or "-")),
    ]
    if any(get_path(stores[k], "search", "quality_peer_subset") for k in kinds):

        def subset(key: str) -> Callable[[JSONDict], str]:
            def cell(s: JSONDict) -> str:
                v = get_path(s, "search", "quality_peer_subset") or get_path(s, "search", "quality")
                return _num(v[key])

            return cell

        rows += [
            row("Rank@1 (shared subset)", subset("rank1")),
            row("Recall@10 (shared subset)", subset("recall10")),
        ]
    lines += _table(header, rows)

    slice_names = sorted(q["slices"])

    def per_slice(section: str, fmt: Callable[[JSONDict], str]) -> list[list[str]]:
        def cell(name: str) -> Callable[[JSONDict], str]:
            def text(s: JSONDict) -> str:
                v = get_path(s, "search", section, name)
                return fmt(v) if v else "-"

            return text

        return [row(name, cell(name)) for name in slice_names]

    def quality(v: JSONDict) -> str:
        return f"{v['rank1']:.2f} / {v['recall10']:.2f} / {v['mrr']:.2f}, {v['n']}"

    def latency(v: JSONDict) -> str:
        answered = v["asked"] - v["errors"] - v["no_hits"]
        return f"{_secs(v['p50'])} / {_secs(v['p95'])}, {answered} of {v['asked']}"

    if slice_names:
        lines += ["", "quality per slice (Rank@1 / Recall@10 / MRR, n)"]
        lines += _table(header, per_slice("slices", quality))
        lines += ["", "search latency per slice (p50 / p95; answered with hits of asked)"]
        lines += _table(header, per_slice("slice_latency", latency))

    ours = stores.get(OURS) or {}
    peer = stores.get(PRAISON_SQLITE) or {}
    ours_rate = get_path(ours, "build", "messages_per_s")
    peer_rate = get_path(peer, "build", "messages_per_s") or get_path(
        peer, "build", "estimate", "messages_per_s"
    )
    for k in kinds:
        src = get_path(stores[k], "search", "sources")
        if k != GROUP or not src:
            continue
        lines += [
            "",
            f"{stores[k]['label']}: hits of the {src['queries']} known-item queries by source "
            "(top 10): " + ", ".join(f"{name} {n:,}" for name, n in src["top10"].items()),
            f"  queries with hits from both sources in their top 10: "
            f"{src['queries_with_several']} of {src['queries']}; with relevant hits from both: "
            f"{src.get('relevant_from_several', 0)}; first relevant hit from: "
            + ", ".join(f"{name} {n}" for name, n in src["first_relevant"].items()),
        ]
    for k in kinds:
        vault = get_path(stores[k], "build", "vault")
        if vault:
            runs = get_path(stores[k], "build", "runs")
            lines.append(_vault_line(stores[k]["label"], vault, runs))
    lines += _heavy_lines(report)
    legend = list(LEGEND)
    if fmt in ("pi", "mixed"):
        legend.append(PI_LEGEND[0])
    if fmt in AGENT_KINDS:
        legend.append(AGENT_LEGEND)
    if fmt == "mixed":
        legend.append(PI_LEGEND[1])
    lines += ["", *legend, ""]
    if ours_rate and peer_rate:
        lines.append(
            f"cold build: ours is {ours_rate / peer_rate:.0f}x PraisonAI SQLite's rate "
            "(target: at least 40x)"
        )
    judged = stores.get(target_kind(report)) or {}
    lines.append(f"targets ({judged.get('label', 'ours (indexed)')}):")
    for t in report["targets"]:
        mark = "n/a " if t["pass"] is None else "PASS" if t["pass"] else "FAIL"
        thr = _fmt_target(t["threshold"], t["unit"])
        problem = _problem_text(t.get("errors", 0), t.get("no_hits", 0))
        lines.append(
            f"  {mark}  {t['what']}: {_fmt_target(t['value'], t['unit'])} (target {t['op']} {thr}"
            + (f"; {problem}, not timed" if problem else "")
            + ")"
        )
    for k in kinds:
        for error in get_path(stores[k], "search", "errors") or ():
            lines.append(f"error ({stores[k]['label']}): {error}")
    for note in report.get("notes", []):
        lines.append(f"note: {note}")
    lines.append(f"total time: {report.get('total_seconds', 0):.0f} s")
    return "\n".join(lines)


def _vault_line(label: str, vault: JSONDict, runs: list[float] | None = None) -> str:
    """What the vault added to one store's cold build, and what it keeps per GB (with
    ``runs``, the builds' seconds with it: the median of each is told, and their range)."""
    text = f"{label}: vault {_mb(vault['vault_bytes'])}"
    if vault.get("vault_ratio") is not None:
        text += f" ({vault['vault_ratio']:.2f}x the JSON, {vault['bytes_per_gb'] / 1e6:,.0f} MB/GB)"
    if vault.get("extra_seconds") is not None:
        text += (
            f"; build {_secs(vault['seconds_with'])} with it, {_secs(vault['seconds_without'])}"
            f" without (+{_secs(vault['extra_seconds'])}, +{vault['extra_ratio'] * 100:.0f}%;"
            f" {_rate(vault.get('messages_per_s_without'))} without)"
        )
        if runs and len(runs) > 1:
            without = vault.get("runs_without") or []
            text += (
                f"; the medians of {len(runs)} builds each ({_secs(min(runs))}-"
                f"{_secs(max(runs))} with it, {_secs(min(without))}-{_secs(max(without))} without)"
                if without
                else f"; the median of {len(runs)} builds ({_secs(min(runs))}-{_secs(max(runs))})"
            )
    elif vault.get("error"):
        text += f"; build without it failed: {vault['error']}"
    return text


def _heavy_lines(report: JSONDict) -> list[str]:
    """The one-message file, the big show and the parallel writers, when measured."""
    lines: list[str] = []
    big = report.get("big_message")
    if big:
        lines += ["", f"one-message file: {big['file_bytes'] / 1e6:.1f} MB of \"ab ab ab ...\" "
                  "in one session, search + recent + show in one fresh process"]
        if big.get("error"):
            lines.append(f"  not measured: {big['error']}")
        else:
            lines.append(
                "  " + ", ".join(
                    f"{c['argv'][0]} {_secs(c['seconds'])}"
                    + ("" if c["exit"] == 0 else f" (exit {c['exit']})")
                    for c in big["commands"]
                )
                + f"; peak RSS {big['rss_mb']:.0f} MB (after imports {big['baseline_rss_mb']:.0f}"
                f" MB) = {big['rss_mb'] * 2**20 / big['file_bytes']:.1f}x the file"
            )
    show = report.get("show_big")
    if show:
        state = show.get("error") or (
            _secs(show["seconds"]) + ("" if show["exit"] == 0 else f" (exit {show['exit']})")
        )
        lines.append(f"show of one {show['file_bytes'] / 1e6:.1f} MB message: {state}")
    writes = report.get("contention")
    if writes:
        lines += [
            "",
            f"parallel writers: each process add_message x {writes['per_writer']} into "
            f"{writes['sessions']} sessions while {writes['readers']} processes search",
        ]
        rows = []
        for r in writes["runs"]:
            if "writes" not in r:
                rows.append([str(r["writers"]), r.get("error") or "-", *["-"] * 7])
                continue
            rows.append([
                str(r["writers"]),
                f"{r['writes']:,}",
                "-" if r["writes_per_s"] is None else f"{r['writes_per_s']:,.0f}/s",
                _secs(r["latency"]["p50"]),
                _secs(r["latency"]["p95"]),
                str(r["lost"]),
                str(r["duplicated"]),
                str(r["spilled"]),
                f"{r['reader_searches']:,}" + (f" ({r['reader_errors']} failed)"
                                               if r["reader_errors"] else ""),
            ])
        lines += _table(["writers", "writes", "writes/s", "p50", "p95", "lost", "duplicated",
                         "spilled", "reader searches"], rows)
        for r in writes["runs"]:
            if r.get("error"):
                lines.append(f"  {r['writers']} writer(s): {r['error']}")
    return lines

