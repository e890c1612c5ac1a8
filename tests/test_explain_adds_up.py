"""Explain adds up: the factors ``search --explain`` (and the app's Explain, which prints the
same lines) shows compute the score shown, for every hit of several queries."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from session_browser.cli import main

WORDS = [
    "italian",
    "restaurant",
    "booking",
    "weather",
    "report",
    "pizza",
    "billing",
    "migration",
    "plan",
    "invoice",
    "schema",
    "deploy",
    "rollback",
    "cache",
    "latency",
    "kernel",
    "the",
    "a",
    "of",
    "and",
    "to",
    "is",
]
QUERIES = [
    "italian",
    "italian restaurant",
    '"italian restaurant"',
    "rest*",
    "the italian",
    "billing migration plan",
    "weather report -pizza",
    "cache latency kernel",
]
TOLERANCE = 2e-3  # every factor is shown rounded to 4 digits


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 sessions of words drawn unevenly from a small vocabulary (common words often,
    the others less): sessions with several matching messages, some with part of a query,
    some tagged automated (demoted)."""
    rng = random.Random(25)
    root = tmp_path_factory.mktemp("explain") / "sessions"
    root.mkdir()
    weights = [1 + (i % 5) for i in range(len(WORDS) - 6)] + [12] * 6
    for n in range(60):
        messages = []
        for i in range(rng.randint(3, 14)):
            text = " ".join(rng.choices(WORDS, weights, k=rng.randint(4, 40)))
            role = "user" if i % 2 == 0 else "assistant"
            messages.append({"role": role, "content": text, "timestamp": 1.7e9 + n * 1e4 + i})
        data = {
            "session_id": f"s{n:02d}",
            "messages": messages,
            "metadata": {"automated": True} if n % 7 == 0 else {},
            "updated_at": "2026-01-01T00:00:00+00:00",
        }
        (root / f"s{n:02d}.json").write_text(json.dumps(data), encoding="utf-8")
    return root


def _search(store: Path, query: str, *extra: str) -> str:
    res = CliRunner().invoke(
        main, ["--store", str(store), "search", query, "--limit", "20", *extra]
    )
    assert res.exit_code == 0, res.output
    return res.stdout


def _recompute(factors: dict[str, float]) -> float:
    best = factors["bm25"] * factors["phrase"] * factors["all_terms"]
    assert best == pytest.approx(factors["best_message"], rel=TOLERANCE, abs=TOLERANCE)
    cover = 0.25 + 0.75 * factors["coverage"]
    assert cover == pytest.approx(factors["coverage_factor"], rel=TOLERANCE, abs=TOLERANCE)
    bonus = factors["other_messages"]
    assert 0 <= bonus <= 0.5 * factors["best_message"] + TOLERANCE
    return (factors["best_message"] + bonus) * factors["coverage_factor"] * factors["demotion"]


@pytest.mark.parametrize("query", QUERIES)
def test_the_json_explain_computes_the_score(store: Path, query: str) -> None:
    hits = json.loads(_search(store, query, "--json"))["results"]
    assert hits, query
    for hit in hits:
        e = hit["explain"]
        assert e["ranking"] == "relevance"
        factors = {
            "bm25": e["bm25"],
            "phrase": e["boosts"]["phrase"],
            "all_terms": e["boosts"]["all_terms"],
            "best_message": e["best_message"],
            "other_messages": e["other_messages"],
            "coverage": e["coverage"],
            "coverage_factor": e["coverage_factor"],
            "demotion": e["demotion"],
        }
        assert _recompute(factors) == pytest.approx(hit["score"], rel=TOLERANCE), (query, e)


def _printed_hits(text: str) -> list[dict[str, float]]:
    """The score and factors each hit of ``search --explain`` prints."""
    out: list[dict[str, float]] = []
    for block in re.split(r"\n(?=\d+\. )", text):
        found = dict(re.findall(r"^\s+(\w+): (.+)$", block, flags=re.M))
        if "score" not in found:
            continue
        boosts = json.loads(found["boosts"])
        out.append(
            {
                "score": float(found["score"]),
                "bm25": float(found["bm25"]),
                "phrase": boosts["phrase"],
                "all_terms": boosts["all_terms"],
                **{
                    k: float(found[k])
                    for k in (
                        "best_message",
                        "other_messages",
                        "coverage",
                        "coverage_factor",
                        "demotion",
                    )
                },
            }
        )
    return out


@pytest.mark.parametrize("query", QUERIES)
def test_the_printed_explain_computes_the_printed_score(store: Path, query: str) -> None:
    printed = _printed_hits(_search(store, query, "--explain"))
    assert printed, query
    demoted = 0
    for factors in printed:
        assert _recompute(factors) == pytest.approx(factors["score"], rel=TOLERANCE), factors
        demoted += factors["demotion"] < 1
    if query == "italian":
        assert demoted  # the tagged sessions' demotion is one of the factors shown


def test_the_queries_exercise_every_factor(store: Path) -> None:
    """Not a vacuous check: the hits above include partial coverage, a bonus from other
    messages, a phrase boost and the all-terms boost."""
    seen = {"partial": False, "bonus": False, "phrase": False, "all_terms": False}
    for query in QUERIES:
        for hit in json.loads(_search(store, query, "--json"))["results"]:
            e = hit["explain"]
            seen["partial"] |= e["coverage"] < 1
            seen["bonus"] |= e["other_messages"] > 0
            seen["phrase"] |= e["boosts"]["phrase"] > 1
            seen["all_terms"] |= e["boosts"]["all_terms"] > 1
    assert all(seen.values()), seen
