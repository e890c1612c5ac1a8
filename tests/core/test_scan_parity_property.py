"""One query semantics, as a property: for generated stores and queries drawn from the query
language's table (words, phrases, prefixes, excluded words and phrases, every filter), the
index and the file scan match the same set of sessions and count them the same."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from session_browser.core import paths
from session_browser.core.index import SqliteSessionStore
from session_browser.core.multi import StoreGroup
from session_browser.core.store import DefaultSessionStore

DAY = 86400.0
T0 = 1_760_000_000.0  # 2025-10-09
# A small vocabulary, so words meet in sessions: stopwords, accents and case, a word that
# is in most messages of the big store (common by frequency), prefixes shared by words.
WORDS = (
    *("billing", "migration", "migrate", "migrating", "report", "café", "Cafe", "naïve"),
    *("zebra", "kraken", "the", "and", "of", "what", "deploy", "deployment", "restaurant"),
    *("italian", "x"),
)
ROLES = ("user", "assistant", "system")
AGENTS = ("Planner", "coder", None)
SOURCES = ("cli", "cron", None)
PROJECTS = ("/home/u/app", "/home/u/app/sub", "/home/u/other", None)
SEEDS = (1, 2, 3)  # small stores; the last one big enough for the frequency rule


def _text(rng: random.Random, common: bool) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, 6))]
    if common:
        words.append("deploy")  # in most messages of the big store: a common word there
        if rng.random() < 0.05:
            words.append("quokka")  # ... and a rare one
    sep = rng.choice([" ", " ", ", ", ". ", "-", "_"])
    return sep.join(words)


def _session(rng: random.Random, n: int, big: bool) -> dict[str, Any]:
    start = T0 + rng.randint(-60, 60) * DAY
    msgs: list[dict[str, Any]] = []
    count = rng.randint(1, 8 if big else 5)
    for i in range(count):
        m: dict[str, Any] = {
            "role": rng.choice(ROLES) if i % 3 == 2 else ("user", "assistant")[i % 2],
            "content": _text(rng, big and rng.random() < 0.6),
            "metadata": {},
        }
        if rng.random() < 0.8:  # else the session's time counts
            m["timestamp"] = start + i * 3600.0
        msgs.append(m)
    cut = rng.randint(0, len(msgs) - 1) if rng.random() < 0.3 else 0
    meta: dict[str, Any] = {}
    project = rng.choice(PROJECTS)
    if project is not None:
        meta["cwd"] = project
    data: dict[str, Any] = {
        "session_id": f"s{n}",
        "messages": msgs[cut:],
        "archived_messages": msgs[:cut],
        "created_at": "2025-06-01T00:00:00+00:00",
        "updated_at": f"2025-{rng.randint(7, 12):02d}-{rng.randint(1, 28):02d}T00:00:00+00:00",
        "agent_name": rng.choice(AGENTS),
        "metadata": meta,
    }
    source = rng.choice(SOURCES)
    if source is not None:
        data["source"] = source
    return data


def _write_store(d: Path, seed: int) -> list[str]:
    rng = random.Random(seed)
    big = seed == SEEDS[-1]
    d.mkdir(parents=True)
    ids = []
    for n in range(30 if big else rng.randint(4, 10)):
        data = _session(rng, n, big)
        ids.append(data["session_id"])
        path = d / f"{paths.safe_id(data['session_id'])}.json"
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    return ids


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[int, tuple[Path, Any]]]:
    root = tmp_path_factory.mktemp("parity_prop")
    out: dict[int, tuple[Path, Any]] = {}
    opened: list[SqliteSessionStore] = []
    for seed in SEEDS:
        d = root / f"store{seed}" / "sessions"
        _write_store(d, seed)
        index = SqliteSessionStore(d, db_path=root / f"i{seed}.sqlite3")
        opened.append(index)
        out[seed] = (d, index)
    yield out
    for index in opened:
        index.close()


def _word(draw: st.DrawFn) -> str:
    word = draw(st.sampled_from((*WORDS, "quokka")))
    return word.upper() if draw(st.booleans()) and draw(st.booleans()) else word


@st.composite
def parts(draw: st.DrawFn) -> str:
    kind = draw(
        st.sampled_from(
            ["word", "word", "word", "phrase", "prefix", "not", "notphrase", "filter", "filter"]
        )
    )
    if kind == "word":
        return _word(draw)
    if kind == "phrase":
        return f'"{_word(draw)} {_word(draw)}"'
    if kind == "prefix":
        return draw(st.sampled_from(["mig*", "dep*", "caf*", "rest*", "bil*", "ka*"]))
    if kind == "not":
        return "-" + _word(draw)
    if kind == "notphrase":
        return f'-"{_word(draw)} {_word(draw)}"'
    return draw(
        st.sampled_from(
            [
                "role:user",
                "role:assistant",
                "role:system",
                "archived:yes",
                "archived:no",
                "since:2025-10-01",
                "until:2025-10-20",
                "since:2025-09-01T12:00:00",
                "session:s3",
                "agent:planner",
                "agent:Coder",
                "source:cli",
                "source:cron",
                "source:praisonai",
                "project:/home/u/app",
                'project:"/home/u/other"',
            ]
        )
    )


queries = st.lists(parts(), min_size=1, max_size=4).map(" ".join)


def _sessions(group: StoreGroup, query: str, ranking: str) -> tuple[set[str], int, bool]:
    res = group.search_ex(query, limit=1000, ranking=ranking)
    assert res.error is None, res.error
    ids = {h.session_id for h in res.hits} | {f for h in res.hits for f in h.folded}
    return ids, res.matched_sessions, res.matched_exact


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed=st.sampled_from(SEEDS), query=queries)
# found here: more sessions than refine looks at, most dropped by the excluded word
@example(seed=3, query="dep* -billing")
def test_index_and_scan_match_the_same_sessions(
    stores: dict[int, tuple[Path, Any]], seed: int, query: str
) -> None:
    d, index = stores[seed]
    scanned, scan_count, scan_exact = _sessions(
        StoreGroup([DefaultSessionStore(d)]), query, "classic"
    )
    indexed, index_count, index_exact = _sessions(StoreGroup([index]), query, "relevance")
    through, through_count, _ = _sessions(StoreGroup([index]), query, "classic")
    assert indexed == scanned, (query, sorted(indexed ^ scanned))
    assert through == scanned, (query, sorted(through ^ scanned))
    assert index_exact and scan_exact
    assert index_count == scan_count == through_count == len(scanned), query


def test_the_big_store_has_a_common_word(stores: dict[int, tuple[Path, Any]]) -> None:
    # The frequency rule is exercised: in the big store "deploy" is common, so a session
    # holding it but not "quokka" is no hit for "deploy quokka", on both paths.
    d, index = stores[SEEDS[-1]]
    query = "deploy quokka"
    scanned, count, _ = _sessions(StoreGroup([DefaultSessionStore(d)]), query, "classic")
    indexed, _, _ = _sessions(StoreGroup([index]), query, "relevance")
    deploy, _, _ = _sessions(StoreGroup([DefaultSessionStore(d)]), "deploy", "classic")
    assert scanned == indexed and 0 < count < len(deploy)
