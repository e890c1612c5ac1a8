"""``bench --mcp``: the tool call through a real server beside the in-process search, and
where a call's time goes (the server's own timeline)."""

from __future__ import annotations

from pathlib import Path

import pytest

from session_browser.bench.mcp_path import PARTS, ROUNDS, format_mcp
from tests.test_bench import _run_bench


@pytest.mark.slow
def test_bench_measures_the_mcp_path(tmp_path: Path) -> None:
    report, _work = _run_bench(tmp_path, ["--mcp", "--sessions", "40", "--queries", "12"])
    calls = 12 * ROUNDS
    assert report["queries"] == 12 and report["rounds"] == ROUNDS
    assert report["cli_ms"]["n"] == report["mcp_ms"]["n"] == calls
    assert report["cli_ms"]["p50"] > 0 and report["mcp_ms"]["p50"] > 0
    assert report["tool_errors"] == 0
    sizes = report["answer_bytes"]
    assert sizes["n"] == calls and 0 < sizes["p50"] <= sizes["max"] <= 8192
    assert report["quality"]["n"] == 12  # ranks from the first round
    assert report["quality"]["recall10"] > 0.5  # the known items are found over MCP too
    gap = report["mcp_ms"]["p95"] - report["cli_ms"]["p95"]
    assert report["p95_gap_ms"] == pytest.approx(gap, abs=1e-3)
    assert report["verdict"] == ("PASS" if gap <= report["gap_target_ms"] else "FAIL")
    # the server's timeline: one entry per call; the parts of each call add up to it
    split = report["split_ms"]
    assert all(split[name]["n"] == calls for name in PARTS)
    assert split["tool"]["p50"] > 0 and split["server_before_tool"]["p50"] > 0
    assert sum(split[name]["mean"] for name in PARTS) == pytest.approx(
        report["mcp_ms"]["mean"], rel=1e-6
    )
    assert 0 < report["answer_building_ms"]["p50"] < split["tool"]["max"]
    text = format_mcp(report)
    assert report["verdict"] in text and "answer bytes" in text
    assert "before its tool" in text and "outside the server" in text
