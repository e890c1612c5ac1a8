"""``bench --mcp``: the tool call through a real server beside the in-process search."""

from __future__ import annotations

from pathlib import Path

import pytest

from session_browser.bench.mcp_path import format_mcp
from tests.test_bench import _run_bench


@pytest.mark.slow
def test_bench_measures_the_mcp_path(tmp_path: Path) -> None:
    report, _work = _run_bench(tmp_path, ["--mcp", "--sessions", "40", "--queries", "12"])
    assert report["queries"] == 12
    assert report["cli_ms"]["n"] == report["mcp_ms"]["n"] == 12
    assert report["cli_ms"]["p50"] > 0 and report["mcp_ms"]["p50"] > 0
    assert report["tool_errors"] == 0
    sizes = report["answer_bytes"]
    assert sizes["n"] == 12 and 0 < sizes["p50"] <= sizes["max"] <= 8192
    assert report["quality"]["recall10"] > 0.5  # the known items are found over MCP too
    assert report["p95_gap_ms"] == pytest.approx(
        report["mcp_ms"]["p95"] - report["cli_ms"]["p95"], abs=1e-3
    )
    text = format_mcp(report)
    assert "p95 gap" in text and "answer bytes" in text
