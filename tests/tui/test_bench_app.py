"""``session-browser bench-app`` on a tiny store: the report has every part (no timings
are checked here; the benchmark itself is where speed is judged)."""

from __future__ import annotations

import json
import os

from click.testing import CliRunner

from session_browser.cli import main


def test_bench_app_report_structure() -> None:
    os.environ["DO_NOT_TRACK"] = "1"
    result = CliRunner().invoke(
        main,
        [
            "bench-app", "--sessions", "50", "--queries", "3", "--big-messages", "300",
            "--no-sgd", "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert {"cores", "cpu", "python", "sqlite"} <= set(report["machine"])
    assert report["store"]["sessions"] >= 50
    assert "chitchat + demo" in report["store"]["source"]  # pip-installable data only
    assert [t["name"] for t in report["targets"]] == [
        "first_paint_s",
        "search_p95_ms",
        "open_big_s",
        "peak_rss_mb",
    ]
    for target in report["targets"]:
        assert target["value"] > 0
        assert isinstance(target["pass"], bool)
    assert report["passed"] == all(t["pass"] for t in report["targets"])
    assert len(report["search"]["samples"]) == report["search"]["queries"] == 3
    assert all(s["hits"] >= 1 for s in report["search"]["samples"])  # known items are found
    assert report["open_big"]["messages"] == 301  # 300 turns + the compaction summary
    assert report["open_big"]["opened_at_index"] == 151  # the hit: the marked middle turn
    assert set(report["rss_mb"]) == {"paint", "search", "open"}


def test_bench_app_rejects_a_missing_store(tmp_path: object) -> None:
    result = CliRunner().invoke(main, ["bench-app", "--store", "/nonexistent/sessions"])
    assert result.exit_code != 0
    assert "not a directory" in result.output
