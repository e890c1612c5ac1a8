"""The benchmark end to end on a tiny corpus: report structure and sane quality numbers.

No timing is asserted here: speed is what the benchmark itself reports.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from session_browser.bench.config import (
    GROUP,
    OURS,
    PI,
    PI_SCAN,
    PRAISON_JSON,
    PRAISON_SQLITE,
    SCAN,
    STORE_KINDS,
)
from session_browser.bench.layout import write_pi_corpus
from session_browser.bench.metrics import first_relevant_rank, percentile, quality_stats
from session_browser.bench.queries import (
    Query,
    common_queries,
    peer_common_subset,
    peer_subset,
)
from session_browser.bench.report import format_report
from session_browser.bench.targets import OPTIONAL_TARGETS, RUN_TARGETS, TARGETS, check_targets
from session_browser.cli import main


def _ordered_quality(q: dict[str, Any]) -> None:
    assert q["n"] > 0
    for key in ("rank1", "recall5", "recall10", "mrr"):
        assert 0.0 <= q[key] <= 1.0, (key, q)
    assert q["rank1"] <= q["recall5"] <= q["recall10"]
    assert q["rank1"] <= q["mrr"] <= q["recall10"]


def _target_names(report: dict[str, Any]) -> list[str]:
    """Every fixed target, the known-item p95 of every query slice, then the run's own."""
    slices = sorted(report["queries"]["slices"])
    both = SCAN in report["stores"] and PRAISON_JSON in report["stores"]
    measured = {"scan_vs_praisonai": both, "big_message_rss": "big_message" in report,
                "show_big": "show_big" in report, "writes_intact": "contention" in report}
    run = [t[0] for t in RUN_TARGETS if measured[t[0]]]
    busy = any("search_busy" in s for s in report["stores"].values())  # (only with --busy)
    fixed = [t[0] for t in TARGETS if t[0] not in OPTIONAL_TARGETS or busy]
    return fixed + [f"p95_known:{s}" for s in slices] + run


def _run_bench(root: Path, args: list[str]) -> tuple[dict[str, Any], Path]:
    """``session-browser bench ARGS --workdir W --json --quiet`` in an isolated env. A built
    corpus comes from the pip-installed data only (``--no-sgd``: chitchat + demo), so the
    run is the same with or without ``../shared`` beside the clone."""
    import os

    if "--store" not in args:
        args = [*args, "--no-sgd"]
    work = root / "work"
    work.mkdir()
    env = {
        "HOME": str(root),
        "PRAISONAI_HOME": str(root / ".praisonai"),
        "SESSION_BROWSER_CACHE_DIR": str(root / "cache"),
        "SESSION_BROWSER_DATA_HOME": str(root / "data"),
        "DO_NOT_TRACK": "1",
    }
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        result = CliRunner().invoke(
            main,
            ["bench", *args, "--workdir", str(work), "--json", "--quiet"],
            catch_exceptions=False,
        )
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), work


@pytest.fixture(scope="module")
def tiny_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """One real run: 200 sessions, 25 queries, all four stores (PraisonAI capped at 5), a
    1 MB one-message file, a 0.5 MB show and 3 x 10 parallel writes."""
    args = ["--sessions", "200", "--queries", "25", "--peer-queries", "5", "--big-message-mb",
            "1", "--show-message-mb", "0.5", "--write-messages", "10"]
    return _run_bench(tmp_path_factory.mktemp("bench"), [*args, "--peer-timeout", "120"])


@pytest.fixture(scope="module")
def pi_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The same corpus and queries as ``tiny_report``, written as Pi JSONL files."""
    args = ["--sessions", "200", "--queries", "25", "--peer-queries", "5", "--pi",
            "--no-big-message", "--no-contention"]
    return _run_bench(tmp_path_factory.mktemp("bench-pi"), args)[0]


@pytest.fixture(scope="module")
def mixed_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """150 sessions, half PraisonAI JSON and half Pi JSONL, opened as one group."""
    args = ["--sessions", "150", "--queries", "30", "--mixed", "--no-big-message",
            "--no-contention"]
    return _run_bench(tmp_path_factory.mktemp("bench-mixed"), args)[0]


def test_report_structure(tiny_report: tuple[dict[str, Any], Path]) -> None:
    report, work = tiny_report
    assert report["schema"] == "session-browser-bench/1"
    assert list(report["stores"]) == list(STORE_KINDS)
    m = report["machine"]
    assert m["cpu_count"] >= 1 and m["python"] and m["sqlite"]
    stats = report["corpus"]["stats"]
    assert report["corpus"]["source"] == "built"
    assert report["corpus"]["sources"] == "chitchat + demo"  # what pip installs
    assert stats["files"] == 200
    assert 0 < stats["sessions"] < 200  # the corpus holds a few corrupt files
    assert stats["messages"] > stats["sessions"] and stats["archived_messages"] > 0
    assert report["queries"]["known_item"] == 25
    assert sum(report["queries"]["slices"].values()) == 25
    assert len(report["queries"]["common"]) == 40  # 20 words, then 20 pairs
    assert [t["name"] for t in report["targets"]] == _target_names(report)
    # the work dir (corpus, copies, indexes) is gone without --keep
    assert report["workdir"] is None
    assert list(work.iterdir()) == []


def test_scan_store_quality_and_freshness(tiny_report: tuple[dict[str, Any], Path]) -> None:
    report, _ = tiny_report
    scan = report["stores"][SCAN]
    assert scan["status"] == "ok"
    search = scan["search"]
    _ordered_quality(search["quality"])
    assert scan["capped"] is True  # the scan answers the same subset as PraisonAI's stores
    assert search["quality"]["n"] == 5
    assert sum(s["n"] for s in search["slices"].values()) == 5
    assert len(search["slices"]) == 5  # round-robin: one query of each slice
    for section in ("known", "common", "recent"):
        lat = search[section]
        assert lat["n"] > 0
        assert 0 < lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["max"]
    assert search["recent_count"] == 50
    assert scan["update"]["write_found"] == 1.0
    assert scan["update"]["outside_found"] == 1.0


def test_peers_are_capped_and_measured(tiny_report: tuple[dict[str, Any], Path]) -> None:
    report, _ = tiny_report
    for kind in (PRAISON_JSON, PRAISON_SQLITE):
        peer = report["stores"][kind]
        assert peer["status"] == "ok", peer
        assert peer["capped"] is True
        _ordered_quality(peer["search"]["quality"])
        assert peer["search"]["quality"]["n"] == 5
        assert peer["search"]["common"]["n"] == 5
    build = report["stores"][PRAISON_SQLITE]["build"]
    assert build["messages_per_s"] > 0 and build["index_bytes"] > 0
    assert 0 < build["rss_mb"] < 2000
    assert any("--peer-queries" in note for note in report["notes"])


def test_our_index_when_present(tiny_report: tuple[dict[str, Any], Path]) -> None:
    report, _ = tiny_report
    ours = report["stores"][OURS]
    if ours["status"] == "unavailable":
        pytest.skip("the index is not part of this build")
    assert ours["status"] == "ok", ours
    _ordered_quality(ours["search"]["quality"])
    assert ours["search"]["quality"]["n"] == 25
    _ordered_quality(ours["search"]["quality_peer_subset"])
    assert ours["search"]["quality_peer_subset"]["n"] == 5
    assert ours["build"]["messages_per_s"] > 0
    assert ours["build"]["size_ratio"] > 0
    assert ours["reopen"]["seconds"] > 0
    # a change from outside and a write through the store are both found right away
    assert ours["update"]["outside_found"] == 1.0
    assert ours["update"]["write_found"] == 1.0
    judged = [t for t in report["targets"] if t["value"] is not None]
    assert len(judged) == len(_target_names(report))
    assert all(isinstance(t["pass"], bool) for t in judged)


def test_text_report(tiny_report: tuple[dict[str, Any], Path]) -> None:
    report, _ = tiny_report
    text = format_report(report)
    for label in ("ours (scan)", "PraisonAI JSON", "PraisonAI SQLite", "Rank@1", "Recall@10"):
        assert label in text
    assert "quality per slice" in text
    assert text.count("(target ") == len(_target_names(report))
    assert "search latency per slice" in text and "  errors / without hits" in text
    assert "\x1b" not in text


def test_heavy_cases_and_new_targets(tiny_report: tuple[dict[str, Any], Path]) -> None:
    """The one-message file, the big show, parallel writers, one process that builds and
    answers, the fragment slice and the scan-vs-PraisonAI line, each with its target."""
    report, _ = tiny_report
    targets = {t["name"]: t for t in report["targets"]}
    big = report["big_message"]
    assert big["error"] is None and 0.9e6 < big["file_bytes"] < 1.1e6
    assert [c["argv"][0] for c in big["commands"]] == ["search", "recent", "show"]
    assert all(c["exit"] == 0 and c["seconds"] > 0 for c in big["commands"])
    assert 0 < big["baseline_rss_mb"] <= big["rss_mb"]
    assert targets["big_message_rss"]["value"] == big["rss_mb"] * 2**20 / big["file_bytes"]
    show = report["show_big"]
    assert show["error"] is None and show["exit"] == 0 and show["seconds"] > 0
    assert targets["show_big"]["pass"] is (show["seconds"] < 2.0)
    runs = report["contention"]["runs"]
    assert [r["writers"] for r in runs] == [1, 4, 8]
    for r in runs:
        assert r["error"] is None, r
        assert r["writes"] == 10 * r["writers"] and r["writes_per_s"] > 0
        assert (r["lost"], r["duplicated"], r["unreadable_files"]) == (0, 0, 0)
        assert r["reader_searches"] > 0 and r["reader_errors"] == 0
        assert 0 < r["latency"]["p50"] <= r["latency"]["p95"]
    assert targets["writes_intact"]["value"] == 0 and targets["writes_intact"]["pass"] is True
    both = report["stores"][OURS]["build_search"]
    assert both["errors"] == 0 and both["rss_mb"] > 0
    assert targets["build_search_rss"]["value"] == both["rss_mb"]
    scan = report["stores"][SCAN]["search"]["known"]["p50_answered"]
    peer = report["stores"][PRAISON_JSON]["search"]["known"]["p50_answered"]
    assert targets["scan_vs_praisonai"]["value"] == scan / peer
    fragments = [q for q in report["queries"]["items"] if q["slice"] == "fragment"]
    assert fragments and all('"' not in q["query"] and len(q["query"].split()) >= 4
                             for q in fragments)
    assert targets["p95_known:fragment"]["value"] is not None
    text = format_report(report)
    for line in ("one-message file: 1.0 MB", "show of one 0.5 MB message: ", "parallel writers:",
                 "peak RSS (build + queries)", "search p95 (known-item, fragment): ",
                 "ours (scan) / PraisonAI JSON, search p50 (known-item): ",
                 "messages lost or duplicated by parallel writers: 0 (target <= 0)"):
        assert line in text, line


def test_heavy_case_failures_fail_their_targets() -> None:
    """A lost write, a command that failed and a stopped show each fail their target."""
    report: dict[str, Any] = {
        "stores": {},
        "big_message": {"file_bytes": 50_000_000, "error": None, "rss_mb": 100.0,
                        "baseline_rss_mb": 40.0,
                        "commands": [{"argv": ["show"], "seconds": 1.0, "exit": 1}]},
        "show_big": {"file_bytes": 8_000_000, "error": "stopped after 120 s", "seconds": None,
                     "exit": None},
        "contention": {"runs": [{"writers": 1, "error": None, "lost": 1, "duplicated": 0}]},
    }
    by_name = {t["name"]: t for t in check_targets(report)}
    assert by_name["big_message_rss"]["pass"] is False  # 2.1x, but show failed
    assert by_name["show_big"]["pass"] is False
    assert by_name["writes_intact"]["pass"] is False and by_name["writes_intact"]["value"] == 1
    assert "scan_vs_praisonai" not in by_name  # neither store was measured


def test_bad_store_is_one_clear_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["bench", "--store", str(tmp_path / "nope")])
    assert result.exit_code == 1
    assert result.stderr.strip().count("\n") == 0
    assert "no session dir" in result.stderr


def test_store_and_sessions_conflict(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["bench", "--store", str(tmp_path), "--sessions", "10"])
    assert result.exit_code == 1
    assert "--sessions" in result.stderr


def test_metrics_helpers() -> None:
    assert percentile([], 95) is None
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile(list(map(float, range(1, 101))), 95) == 95.0
    assert percentile([5.0], 99) == 5.0
    assert first_relevant_rank(["a", "b", "c"], {"c", "x"}) == 3
    assert first_relevant_rank(["a"], {"z"}) is None
    q = quality_stats([1, 2, None, 7])
    assert q == {
        "n": 4,
        "rank1": 0.25,
        "recall5": 0.5,
        "recall10": 0.75,
        "mrr": (1 + 0.5 + 1 / 7) / 4,
    }
    assert common_queries(["a", "b", "c"]) == ["a", "b", "c", "a b", "b c", "c a"]
    assert peer_common_subset(["a", "b", "c", "a b", "b c", "c a"], 3) == ["a", "b", "a b"]
    items = [Query(str(i), [str(i)], s, n=i) for i, s in enumerate("aaabbc")]
    assert [q.n for q in peer_subset(items, 4)] == [0, 3, 5, 1]


def test_targets_judge_only_our_index() -> None:
    report: dict[str, Any] = {
        "stores": {
            OURS: {
                "build": {"messages_per_s": 60_000.0, "size_ratio": 1.6, "rss_mb": 100.0},
                "search": {"quality": {"rank1": 0.96, "recall10": 0.98}},
            }
        }
    }
    by_name = {t["name"]: t for t in check_targets(report)}
    assert by_name["build_rate"]["pass"] is True
    assert by_name["size_ratio"]["pass"] is False
    assert by_name["rank1"]["pass"] is True
    assert by_name["recall10"]["pass"] is False
    assert by_name["reopen"]["pass"] is None


def test_pi_corpus_same_queries_and_structure(
    pi_report: dict[str, Any], tiny_report: tuple[dict[str, Any], Path]
) -> None:
    report, json_report = pi_report, tiny_report[0]
    assert report["corpus"]["format"] == "pi" and report["options"]["format"] == "pi"
    assert list(report["stores"]) == [PI, PI_SCAN]  # PraisonAI's stores do not read Pi files
    assert any("do not read Pi files" in note for note in report["notes"])
    stats, json_stats = report["corpus"]["stats"], json_report["corpus"]["stats"]
    # the same conversations: the same files, sessions and messages (the three corrupt files
    # are copied as they are: no session header)
    assert stats["files"] == json_stats["files"] == 200
    assert stats["sessions"] == json_stats["sessions"]
    assert stats["unreadable"] == json_stats["unreadable"] > 0
    assert stats["messages"] == json_stats["messages"] + 2  # the spilled turns are in the file
    assert stats["archived_messages"] == json_stats["archived_messages"] > 0
    # the same queries; relevant sets differ only where Pi has no lineage chain
    items, json_items = report["queries"]["items"], json_report["queries"]["items"]
    assert [q["query"] for q in items] == [q["query"] for q in json_items]
    for q, jq in zip(items, json_items, strict=True):
        assert q["target_id"] in q["relevant"]
        assert set(q["relevant"]) <= set(jq["relevant"])
    assert any("relevant sets were recomputed" in note for note in report["notes"])
    assert [t["name"] for t in report["targets"]] == _target_names(report)
    assert all(t["value"] is not None for t in report["targets"])


def test_pi_index_quality_and_resumed_reads(pi_report: dict[str, Any]) -> None:
    pi = pi_report["stores"][PI]
    assert pi["status"] == "ok", pi
    quality = pi["search"]["quality"]
    _ordered_quality(quality)
    assert quality["n"] == 25
    assert quality["rank1"] >= 0.8 and quality["recall10"] >= 0.9
    assert set(pi["search"]["slices"]) == {
        "archived", "casing", "fragment", "mixed", "phrase", "rare"}
    assert pi["search"]["sources"]["top10"].keys() == {"pi"}
    assert pi["build"]["messages_per_s"] > 0 and pi["build"]["index_bytes"] > 0
    assert pi["reopen"]["reconcile"].get("changed", 0) == 0
    # an appended line is found right away, read from where the index stopped
    update = pi["update"]
    assert update["outside_found"] == 1.0
    assert update["outside_resumed"] == {"resumed": 5, "of": 5}
    assert update["write"] is None  # read-only
    scan = pi_report["stores"][PI_SCAN]
    assert scan["status"] == "ok" and scan["capped"] is True
    _ordered_quality(scan["search"]["quality"])
    assert scan["update"]["outside_found"] == 1.0
    text = format_report(pi_report)
    for label in ("ours (Pi index)", "ours (Pi scan)", "of Pi JSONL", "n/a (read-only)"):
        assert label in text
    assert "Pi reads resumed" in text
    header = next(line for line in text.splitlines() if "ours (Pi index)" in line)
    assert "PraisonAI" not in header


def test_mixed_group_ranks_both_sources(mixed_report: dict[str, Any]) -> None:
    report = mixed_report
    assert report["corpus"]["format"] == "mixed"
    assert report["corpus"]["split"] == {"json_files": 75, "pi_files": 75}
    assert list(report["stores"]) == [GROUP]
    group = report["stores"][GROUP]
    assert group["status"] == "ok", group
    quality = group["search"]["quality"]
    _ordered_quality(quality)
    assert quality["n"] == report["queries"]["known_item"] == 30
    assert quality["rank1"] >= 0.8 and quality["recall10"] >= 0.9
    # hits of both stores come back from one query set, ranked together
    sources = group["search"]["sources"]
    assert sources["top10"].get("praisonai", 0) > 0 and sources["top10"].get("pi", 0) > 0
    assert sources["first_relevant"].get("praisonai", 0) > 0
    assert sources["first_relevant"].get("pi", 0) > 0
    assert sources["queries_with_several"] > 0
    # the build indexes both halves; changes from outside in either are found
    assert group["build"]["reconcile"]["added"] == report["corpus"]["stats"]["files"] - (
        group["build"]["reconcile"].get("skipped", 0)
    )
    update = group["update"]
    assert update["outside_found"] == 1.0 and update["outside_pi"] > 0
    assert update["outside_resumed"]["resumed"] == update["outside_pi"]
    assert update["write_found"] == 1.0
    text = format_report(report)
    assert "ours (JSON + Pi): hits of the 30 known-item queries by source (top 10): pi " in text
    assert "targets (ours (JSON + Pi)):" in text


def test_pi_store_and_flags_are_checked(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["bench", "--store", f"pi:{tmp_path / 'nope'}"])
    assert result.exit_code == 1
    assert "no Pi session dir" in result.stderr
    assert result.stderr.strip().count("\n") == 0
    result = CliRunner().invoke(main, ["bench", "--pi", "--mixed"])
    assert result.exit_code == 1 and "give one of" in result.stderr
    result = CliRunner().invoke(main, ["bench", "--claude", "--codex"])
    assert result.exit_code == 1 and "give one of" in result.stderr
    result = CliRunner().invoke(main, ["bench", "--store", f"codex:{tmp_path / 'nope'}"])
    assert result.exit_code == 1 and "no codex session dir" in result.stderr
    result = CliRunner().invoke(main, ["bench", "--store", str(tmp_path), "--pi"])
    assert result.exit_code == 1 and "--store/--home" in result.stderr
    result = CliRunner().invoke(main, ["bench", "--sessions", "50", "--only", "pi"])
    assert result.exit_code == 1 and "(--only) reads a json store" in result.stderr


def test_existing_pi_store(tmp_path: Path) -> None:
    """``--store pi:DIR`` on an existing Pi session dir (written from the demo conversations):
    queries come from the store itself."""
    from session_browser.bench.corpus import build_corpus

    info = build_corpus(tmp_path / "home", sessions=12, seed=7, include_sgd=False,
                        include_chitchat=False)
    pi_root = tmp_path / "pi"
    assert write_pi_corpus(info.sessions_dir, info.spill_dir, pi_root) == 12
    report, _ = _run_bench(tmp_path, ["--store", f"pi:{pi_root}", "--queries", "4",
                                      "--no-big-message", "--no-contention"])
    assert report["corpus"]["source"] == "store" and report["corpus"]["format"] == "pi"
    assert report["corpus"]["stats"]["sessions"] == 12
    assert report["queries"]["known_item"] >= 1
    pi = report["stores"][PI]
    assert pi["status"] == "ok", pi
    assert pi["search"]["quality"]["recall10"] == 1.0
    assert pi["update"]["outside_found"] == 1.0


def test_writers_stopped_at_the_deadline_are_not_counted_as_losses(tmp_path: Path) -> None:
    """A writer stopped before it finished never said which of its writes went through:
    the run is an error, and only finished writers' acknowledged writes can be lost."""
    from session_browser.bench.config import BenchOptions
    from session_browser.bench.heavy import contention_run

    run = contention_run(BenchOptions(write_messages=400, heavy_timeout=3.0), tmp_path, 2)
    assert run["error"] is not None and "stopped" in run["error"]
    assert run["finished_writers"] < 2
    assert run["lost"] == 0 and run["duplicated"] == 0


def test_bench_modules_are_small_and_free_of_import_cycles() -> None:
    """The benchmark package keeps one concern per module: none over 800 lines, and no module
    imports (at the top or inside a function) one that imports it back."""
    import ast

    import session_browser.bench as package

    folder = Path(package.__file__).parent
    graph: dict[str, set[str]] = {}
    for path in sorted(folder.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert len(text.splitlines()) <= 800, f"{path.name} has grown past 800 lines"
        graph[path.stem] = {
            node.module.split(".")[2]
            for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("session_browser.bench.")
        }
    assert {"corpus", "queries", "harness", "report", "app"} <= set(graph)

    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, "import cycle: " + " -> ".join((*path, name))
        if name not in done:
            for dep in sorted(graph.get(name, ())):
                visit(dep, (*path, name))
            done.add(name)

    for name in graph:
        visit(name, ())


PROSE = ("user", "assistant")


@pytest.mark.parametrize("fmt", ["claude", "codex"])
def test_agent_corpus_reads_back_as_written(tmp_path: Path, fmt: str) -> None:
    """The corpus written as Claude Code transcripts / Codex rollouts reads back, through the
    agent's own reader, with every session, its prose turns and its archived/active split."""
    from session_browser.bench.agents import (
        agent_readback,
        agent_sessions,
        write_agent_corpus,
    )
    from session_browser.bench.corpus import build_corpus
    from session_browser.core import recall

    info = build_corpus(tmp_path / "home", sessions=30, seed=7, include_sgd=False,
                        include_chitchat=False)
    root = tmp_path / fmt
    assert write_agent_corpus(fmt, info.sessions_dir, info.spill_dir, root) == 30
    read = {sid: data for _path, sid, data in agent_sessions(fmt, root)}
    assert len(read) == 30
    archived = 0
    for path in sorted(info.sessions_dir.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        back = read[data["session_id"]]
        for key in ("archived_messages", "messages"):
            want = [(m["role"], m["content"]) for m in data[key] if m["role"] in PROSE]
            got = [(m["role"], m["content"]) for m in back[key] if m["role"] in PROSE]
            assert got[: len(want)] == want, (fmt, key, path.name)
        archived += len(data["archived_messages"])
        assert recall.project(back)
    assert archived > 0  # the compaction boundary was exercised
    assert agent_readback(fmt, root, tmp_path / "back") == 30


@pytest.mark.parametrize("fmt", ["claude", "codex"])
def test_claude_and_codex_corpora_are_measured(tmp_path: Path, fmt: str) -> None:
    """``--claude`` / ``--codex``: the corpus written as that agent's files, the same queries
    (relevant sets recomputed on the text read back), our index and scan of that source,
    judged by the same targets."""
    args = ["--sessions", "60", "--queries", "12", "--peer-queries", "4", f"--{fmt}",
            "--no-big-message", "--no-contention"]
    report, _ = _run_bench(tmp_path, args)
    assert report["corpus"]["format"] == fmt
    assert list(report["stores"]) == [fmt, f"{fmt}-scan"]
    stats = report["corpus"]["stats"]
    assert stats["files"] == 60 and stats["sessions"] > 50 and stats["archived_messages"] > 0
    assert any("text read back" in note for note in report["notes"])
    index = report["stores"][fmt]
    assert index["status"] == "ok", index
    assert index["build"]["messages_per_s"] > 0
    quality = index["search"]["quality"]
    assert quality["n"] == len(report["queries"]["items"]) >= 10
    assert quality["rank1"] >= 0.7 and quality["recall10"] >= 0.9
    assert index["update"]["outside_found"] == 1.0
    assert index["update"]["outside_resumed"]["of"] == 5  # re-reads counted (resumed or whole)
    scan = report["stores"][f"{fmt}-scan"]
    assert scan["status"] == "ok" and scan["search"]["quality"]["recall10"] >= 0.9
    assert {t["name"] for t in report["targets"]} >= {"build_rate", "rank1", "recall10"}
    text = format_report(report)
    assert ("Claude Code JSONL" if fmt == "claude" else "Codex JSONL") in text


def _spinners() -> list[int]:
    """Processes of ours running the burners' loop."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"while True:\n    pass" in cmd:
                out.append(int(entry.name))
    return out


def test_busy_asks_the_queries_again_with_every_core_busy(tmp_path: Path) -> None:
    """``--busy``: our index's queries a second time beside one CPU-bound process per core;
    the burners are gone when the bench ends."""
    import os
    import time

    from session_browser.bench.heavy import busy_cores

    if not Path("/proc/self/cmdline").exists():
        pytest.skip("needs /proc to find the burners")
    with busy_cores() as n:
        assert n == len(os.sched_getaffinity(0))
        deadline = time.monotonic() + 30
        while len(_spinners()) < n and time.monotonic() < deadline:
            time.sleep(0.01)  # (a process just started may show its command line late)
        assert len(_spinners()) == n
    assert _spinners() == []
    args = ["--sessions", "30", "--queries", "8", "--claude", "--only", "claude", "--busy",
            "--no-big-message", "--no-contention"]  # fmt: skip
    report, _ = _run_bench(tmp_path, args)
    index = report["stores"]["claude"]
    busy = index["search_busy"]
    assert busy["burners"] == n
    assert busy["known"]["asked"] == index["search"]["known"]["asked"] > 0
    assert busy["known"]["p95"] > 0 and busy["quality"] == index["search"]["quality"]
    target = next(t for t in report["targets"] if t["name"] == "p95_known_busy")
    assert target["value"] == busy["known"]["p95"]
    assert "every core busy" in format_report(report)
    assert _spinners() == []


def test_builds_are_repeated_and_their_medians_reported(tmp_path: Path) -> None:
    """``--builds 3``: three cold builds of our index with the vault and three without, in
    turn; the medians are what the rate and the vault's cost are computed from, and the text
    report gives their range. The index the later phases read is the last build's."""
    import statistics

    args = ["--sessions", "30", "--queries", "8", "--claude", "--only", "claude", "--builds",
            "3", "--no-big-message", "--no-contention"]  # fmt: skip
    report, _ = _run_bench(tmp_path, args)
    build = report["stores"]["claude"]["build"]
    runs, without = build["runs"], build["vault"]["runs_without"]
    assert len(runs) == len(without) == 3 and all(s > 0 for s in runs + without)
    assert build["seconds"] == statistics.median(runs)
    assert build["vault"]["seconds_without"] == statistics.median(without)
    assert build["messages_per_s"] == pytest.approx(
        report["corpus"]["stats"]["messages"] / statistics.median(runs)
    )
    # (the phases after the builds read the last one's index)
    assert report["stores"]["claude"]["search"]["quality"]["recall10"] >= 0.9
    assert "the medians of 3 builds each" in format_report(report)
