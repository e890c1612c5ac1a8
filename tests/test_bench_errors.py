"""A benchmark never passes a target on answers it did not get: an error or an empty answer
is counted, shown in the text report, left out of the latencies, and fails the target."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from session_browser.bench.config import MISSING_WORD, OURS, STORE_LABELS
from session_browser.bench.corpus import build_corpus
from session_browser.bench.harness import Harness
from session_browser.bench.metrics import machine_info
from session_browser.bench.phases import phase_search
from session_browser.bench.queries import Query, make_queries
from session_browser.bench.report import format_report
from session_browser.bench.targets import check_targets


def _report(tmp_path: Path, extra: list[Query], common: list[str]) -> dict[str, Any]:
    """Our index answers real known-item queries plus ``extra``, in this process."""
    info = build_corpus(tmp_path / "home", sessions=40, seed=7, include_sgd=False,
                          include_chitchat=False)
    items = make_queries(info, n=5, seed=7)
    queries = [Query(i.query, sorted(i.relevant), i.slice, i.target_id, n) for n, i in
               enumerate(items)]
    queries += [Query(q.query, q.relevant, q.slice, n=len(queries) + k)
                for k, q in enumerate(extra)]
    data = phase_search({
        "kind": OURS,
        "session_dir": str(info.sessions_dir),
        "db_path": str(tmp_path / "ours.db"),
        "queries": [q.to_json() for q in queries],
        "common": common,
        "warmup": 1,
        "recent_repeats": 2,
    })
    search = Harness._search_summary(data)
    report: dict[str, Any] = {
        "machine": machine_info(),
        "options": {"seed": 7},
        "corpus": {"source": "built", "stats": {
            "sessions": 40, "files": 40, "unreadable": 0, "messages": info.message_count,
            "archived_messages": 0, "json_bytes": info.json_bytes}},
        "queries": {"known_item": len(queries), "common": common,
                    "slices": {"rare": len(queries)}},
        "stores": {OURS: {"label": STORE_LABELS[OURS], "status": "ok", "search": search}},
    }
    report["targets"] = check_targets(report)
    return report


def test_errors_and_empty_answers_fail_the_targets_and_are_shown(tmp_path: Path) -> None:
    bad = [Query("since:someday", ["x"], "rare"), Query(MISSING_WORD, ["x"], "rare")]
    report = _report(tmp_path, bad, ["the", "since:someday"])
    search = report["stores"][OURS]["search"]
    known = search["known"]
    assert (known["errors"], known["no_hits"], known["asked"]) == (1, 1, 7)
    assert known["n"] == 5  # only the answers with hits are timed
    assert search["common"]["errors"] == 1 and search["common"]["n"] == 1
    targets = {t["name"]: t for t in report["targets"]}
    assert targets["p95_known"]["pass"] is False  # fast, but two queries got no answer
    assert targets["p95_known"]["value"] < 0.5
    assert targets["p95_common"]["pass"] is False
    assert targets["rank1"]["pass"] is False  # an error is never a measured miss
    assert targets["p95_known:rare"]["pass"] is False
    text = format_report(report)
    assert "1 error, 1 without hits, not timed" in text
    assert "  errors / without hits" in text and "1 / 1 of 7" in text
    assert "error (ours (indexed)): " in text and "since" in text
    assert "FAIL  search p95 (known-item): " in text


def test_clean_answers_are_judged_on_their_values(tmp_path: Path) -> None:
    report = _report(tmp_path, [], ["the"])
    targets = {t["name"]: t for t in report["targets"]}
    known = report["stores"][OURS]["search"]["known"]
    assert (known["errors"], known["no_hits"], known["n"]) == (0, 0, 5)
    assert targets["p95_known"]["pass"] is (targets["p95_known"]["value"] < 0.010)
    assert "not timed" not in format_report(report)
