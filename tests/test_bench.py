"""The benchmark end to end on a tiny corpus: report structure and sane quality numbers.

No timing is asserted here: speed is what the benchmark itself reports.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from session_browser.bench import (
    OURS,
    PRAISON_JSON,
    PRAISON_SQLITE,
    SCAN,
    STORE_KINDS,
    TARGETS,
    Query,
    check_targets,
    common_queries,
    first_relevant_rank,
    format_report,
    peer_common_subset,
    peer_subset,
    percentile,
    quality_stats,
)
from session_browser.cli import main


def _ordered_quality(q: dict[str, Any]) -> None:
    assert q["n"] > 0
    for key in ("rank1", "recall5", "recall10", "mrr"):
        assert 0.0 <= q[key] <= 1.0, (key, q)
    assert q["rank1"] <= q["recall5"] <= q["recall10"]
    assert q["rank1"] <= q["mrr"] <= q["recall10"]


@pytest.fixture(scope="module")
def tiny_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """One real run: 200 sessions, 25 queries, all four stores (PraisonAI capped at 5)."""
    import os

    shared = Path(__file__).resolve().parents[2] / "shared" / "data"
    if not (shared / "sgd_dialogues.jsonl.gz").is_file():
        pytest.skip("real data not found")
    root = tmp_path_factory.mktemp("bench")
    work = root / "work"
    work.mkdir()
    env = {
        "HOME": str(root),
        "PRAISONAI_HOME": str(root / ".praisonai"),
        "SESSION_BROWSER_CACHE_DIR": str(root / "cache"),
        "SESSION_BROWSER_DATA_HOME": str(root / "data"),
        "SESSION_BROWSER_DATA_DIR": str(shared),
        "DO_NOT_TRACK": "1",
    }
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        result = CliRunner().invoke(
            main,
            [
                "bench",
                "--sessions",
                "200",
                "--queries",
                "25",
                "--peer-queries",
                "5",
                "--peer-timeout",
                "120",
                "--workdir",
                str(work),
                "--json",
                "--quiet",
            ],
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


def test_report_structure(tiny_report: tuple[dict[str, Any], Path]) -> None:
    report, work = tiny_report
    assert report["schema"] == "session-browser-bench/1"
    assert list(report["stores"]) == list(STORE_KINDS)
    m = report["machine"]
    assert m["cpu_count"] >= 1 and m["python"] and m["sqlite"]
    stats = report["corpus"]["stats"]
    assert report["corpus"]["source"] == "built"
    assert stats["files"] == 200
    assert 0 < stats["sessions"] < 200  # the corpus holds a few corrupt files
    assert stats["messages"] > stats["sessions"] and stats["archived_messages"] > 0
    assert report["queries"]["known_item"] == 25
    assert sum(report["queries"]["slices"].values()) == 25
    assert len(report["queries"]["common"]) == 40  # 20 words, then 20 pairs
    assert [t["name"] for t in report["targets"]] == [t[0] for t in TARGETS]
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
    assert len(judged) == len(TARGETS)
    assert all(isinstance(t["pass"], bool) for t in judged)


def test_text_report(tiny_report: tuple[dict[str, Any], Path]) -> None:
    report, _ = tiny_report
    text = format_report(report)
    for label in ("ours (scan)", "PraisonAI JSON", "PraisonAI SQLite", "Rank@1", "Recall@10"):
        assert label in text
    assert "quality per slice" in text
    assert text.count("(target ") == len(TARGETS)
    assert "\x1b" not in text


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
