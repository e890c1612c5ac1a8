"""Print the ranked hits of the benchmark's queries as JSON, to compare two versions of the code.

    .venv/bin/python scripts/rank_snapshot.py CORPUS_HOME [SESSIONS] > before.json
    ... change the code ...
    .venv/bin/python scripts/rank_snapshot.py CORPUS_HOME [SESSIONS] > after.json
    cmp before.json after.json

Builds the benchmark corpus under ``CORPUS_HOME`` once (``SESSIONS`` session files, default
3000; reused when it is there), its Pi copy beside it, then fresh indexes in a temporary cache
dir, and prints, for every query (the known-item slices, the common words, and a few with
filters, exclusions, prefixes and typos), the top-10 hits of: the PraisonAI index (FTS5), the
same without FTS5 (LIKE), the Pi index, the two as one group, and the classic ranking. Each hit
is its session id, score, anchor and explanation (scores of filter-only queries, which follow
the clock, are left out).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from session_browser.bench.corpus import build_corpus
from session_browser.bench.layout import corpus_stats, write_pi_corpus
from session_browser.bench.queries import common_queries, make_queries


def _hits(result: Any) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for hit in result.hits[:10]:
        explain = hit.explain or {}
        recency = explain.get("order") == "recency"
        rows.append(
            {
                "id": hit.session_id,
                "source": hit.source,
                "score": None if recency else hit.score,
                "anchor": hit.anchor_index,
                "explain": {k: v for k, v in explain.items() if k != "recency"},
            }
        )
    return {
        "hits": rows,
        "matched": result.matched_sessions,
        "exact": result.matched_exact,
        "mode": result.mode,
        "fuzzy": result.fuzzy,
        "warnings": [w for w in result.warnings if not w.startswith("indexing:")],
        "error": result.error,
    }


def main(argv: list[str]) -> int:
    home = Path(argv[1])
    sessions = int(argv[2]) if len(argv) > 2 else 3000
    sessions_dir = home / "sessions"
    pi_dir = home / "pi"
    if not sessions_dir.is_dir():
        build_corpus(home, sessions=sessions, seed=7)
        write_pi_corpus(sessions_dir, home / "state" / "session_spill", pi_dir)
    items = make_queries(home, n=120)
    words = corpus_stats(sessions_dir, top=10).top_words
    queries: list[tuple[str, str]] = [(i.slice, i.query) for i in items]
    queries += [("common", q) for q in common_queries(words)]
    extra: list[str] = []
    for item in items[:40:4]:
        first = item.query.strip('"').split()[0]
        extra += [
            f"role:assistant {item.query}",
            f"role:user {first}",
            f"archived:yes {first}",
            f"{item.query} -{words[0]}",
            f"{first[:4]}*",
            f"{first}x" if len(first) > 3 else first,
            f"since:2025-06-01 until:2026-01-01 {first}",
        ]
    extra += ["role:user since:2025-06-01", "archived:yes", "source:pi role:assistant"]
    queries += [("filters", q) for q in extra]

    from session_browser.core.index import SqliteSessionStore
    from session_browser.core.stores import open_spec, open_stores, parse_store_spec

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as cache:
        os.environ["SESSION_BROWSER_CACHE_DIR"] = cache
        fts = SqliteSessionStore(sessions_dir, db_path=Path(cache) / "fts.sqlite3")
        like = SqliteSessionStore(sessions_dir, db_path=Path(cache) / "like.sqlite3", fts=False)
        pi = open_spec(parse_store_spec(f"pi:{pi_dir}"), indexed=True)
        group = open_stores([str(sessions_dir), f"pi:{pi_dir}"], indexed=True)
        try:
            for slice_, query in queries:
                entry: dict[str, Any] = {"slice": slice_}
                entry["fts"] = _hits(fts.search_ex(query, limit=10))
                entry["like"] = _hits(like.search_ex(query, limit=10))
                entry["pi"] = _hits(pi.search_ex(query, limit=10))  # type: ignore[union-attr]
                entry["group"] = _hits(group.search_ex(query, limit=10))
                entry["classic"] = _hits(fts.search_ex(query, limit=10, ranking="classic"))
                out[query] = entry
        finally:
            for store in (fts, like, pi, group):
                store.close()  # type: ignore[union-attr]
    json.dump(out, sys.stdout, indent=1, sort_keys=True, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
