"""``bench --redact-kept``: the cost of keeping only redacted copies, measured."""

from __future__ import annotations

from pathlib import Path

from session_browser.bench.redact_cost import format_redact_kept
from tests.test_bench import _run_bench


def test_bench_measures_redact_kept(tmp_path: Path) -> None:
    report, _work = _run_bench(tmp_path, ["--redact-kept", "--sessions", "30"])
    assert report["corpus"]["sessions"] == 30
    plain, redacted = report["plain"], report["redact_kept"]
    assert plain["redact_kept"] is False and redacted["redact_kept"] is True
    for run in (plain, redacted):
        assert run["seconds"] > 0
        assert run["cache_bytes"] > 0 and run["data_bytes"] > 0  # an index and a vault
    assert report["ratio"] == round(redacted["seconds"] / plain["seconds"], 3)
    text = format_redact_kept(report)
    assert "without redact_kept" in text and "with redact_kept" in text and "ratio" in text
