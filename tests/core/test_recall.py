"""Recall: scoring, demotion, lineage, titles, snippets, windows, bookends, recent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from session_browser.core import recall
from session_browser.core.store import DefaultSessionStore

HOUR = 3600.0


def msg(role: str, content: Any, ts: float | None = None, **extra: Any) -> dict[str, Any]:
    m: dict[str, Any] = {"role": role, "content": content, "metadata": {}}
    if ts is not None:
        m["timestamp"] = ts
    m.update(extra)
    return m


def put(
    d: Path,
    sid: str,
    messages: list[Any],
    *,
    archived: list[Any] | None = None,
    updated: str = "2026-01-01T00:00:00+00:00",
    **top: Any,
) -> None:
    d.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {
        "session_id": sid,
        "messages": messages,
        "created_at": "2025-12-01T00:00:00+00:00",
        "updated_at": updated,
        "agent_name": None,
        "user_id": None,
        "metadata": {},
        "archived_messages": archived or [],
    }
    data.update(top)
    (d / f"{sid.replace('/', '_')}.json").write_text(json.dumps(data, indent=2))


def slow(n: int, start: float = 1_000_000.0) -> list[float]:
    """``n`` timestamps an hour apart (interactive pace)."""
    return [start + i * HOUR for i in range(n)]


@pytest.fixture
def d(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


def store(d: Path) -> DefaultSessionStore:
    return DefaultSessionStore(d)


# ---------------------------------------------------------------- scoring


def test_score_is_documented_sum(d: Path) -> None:
    t = slow(4)
    put(
        d,
        "s",
        [
            msg("user", "Billing only", t[0]),  # +1
            msg("assistant", "the BILLING MIGRATION plan", t[1]),  # +2 +1 +1 = 4
            msg("user", "migration later", t[2]),  # +1
            msg("assistant", "nothing", t[3]),  # 0
        ],
    )
    hit = store(d).search("billing migration")[0]
    assert hit.score == 6.0
    assert hit.anchor_index == 1
    assert hit.explain["anchor_score"] == 4.0


def test_anchor_is_first_best(d: Path) -> None:
    t = slow(3)
    put(
        d,
        "s",
        [msg("user", "x", t[0]), msg("user", "ledger a", t[1]), msg("user", "ledger b", t[2])],
    )
    assert store(d).search("ledger")[0].anchor_index == 1


def test_terms_need_not_be_adjacent_and_query_is_stripped(d: Path) -> None:
    put(d, "s", [msg("user", "migration of the billing", 1.0)])
    hit = store(d).search("  billing   migration ")[0]
    assert hit.score == 2.0  # two terms, no whole-query match


def test_empty_query_or_limit(d: Path) -> None:
    put(d, "s", [msg("user", "anything", 1.0)])
    s = store(d)
    assert s.search("") == [] and s.search("   ") == []
    assert s.search("anything", limit=0) == [] and s.search("anything", limit=-1) == []
    assert s.search("absent") == []


def test_limit_and_order(d: Path) -> None:
    for n in range(1, 6):
        put(d, f"s{n}", [msg("user", "apple", t) for t in slow(n)])
    hits = store(d).search("apple", limit=3)
    assert [h.session_id for h in hits] == ["s5", "s4", "s3"]


def test_ties_by_updated_at_desc(d: Path) -> None:
    put(d, "old", [msg("user", "kiwi", 1.0)], updated="2025-01-01T00:00:00+00:00")
    put(d, "new", [msg("user", "kiwi", 1.0)], updated="2026-05-01T00:00:00+00:00")
    put(d, "mid", [msg("user", "kiwi", 1.0)], updated="2025-06-01T00:00:00+00:00")
    assert [h.session_id for h in store(d).search("kiwi")] == ["new", "mid", "old"]


# ---------------------------------------------------------------- automated demotion


@pytest.mark.parametrize(
    "top",
    [
        {"source": "cron"},
        {"source": "Scheduled"},
        {"metadata": {"source": "batch"}},
        {"metadata": {"source": "system"}},
        {"metadata": {"automated": True}},
        {"source": "automated"},
    ],
)
def test_tagged_automated_demoted(d: Path, top: dict[str, Any]) -> None:
    put(d, "bot", [msg("user", "report", 1.0)], **top)
    hit = store(d).search("report")[0]
    assert hit.automated and hit.score == 3.0 * 0.25


@pytest.mark.parametrize(
    "top", [{"source": "cli"}, {"metadata": {"automated": "yes"}}, {"parent_session_id": "x"}]
)
def test_not_automated(d: Path, top: dict[str, Any]) -> None:
    put(d, "s", [msg("user", "report", 1.0)], **top)
    hit = store(d).search("report")[0]
    assert not hit.automated and hit.score == 3.0


def test_message_rate_demotion(d: Path) -> None:
    fast = [msg("user", f"log {i}", 1000.0 + i) for i in range(4)]  # 4 msgs in 3 s
    put(d, "fast", fast)
    three_fast = [msg("user", f"log {i}", 1000.0 + i) for i in range(3)]
    put(d, "three", three_fast)
    # 61 messages over one hour: above 60/hour
    put(d, "busy", [msg("user", f"log {i}", 1000.0 + i * HOUR / 60) for i in range(61)])
    # 60 messages over just under... 4 messages over 3 hours: interactive
    put(d, "calm", [msg("user", f"log {i}", t) for i, t in enumerate(slow(4))])
    hits = {h.session_id: h for h in store(d).search("log", limit=10)}
    assert hits["fast"].automated and hits["busy"].automated
    assert not hits["three"].automated and not hits["calm"].automated
    assert hits["fast"].score == 4 * 3 * 0.25
    # archived turns count towards the rate too
    put(
        d,
        "arch",
        [msg("user", "log x", 1001.0)],
        archived=[msg("user", "log a", 1000.0), msg("user", "b", 1000.5), msg("user", "c", 1000.7)],
    )
    assert store(d).search("log x", limit=10)[0].automated


def test_demotion_lets_interactive_win(d: Path) -> None:
    put(d, "cron", [msg("user", "deploy", 1.0)] * 2, source="cron")
    put(d, "human", [msg("user", "deploy", 1.0)])
    assert [h.session_id for h in store(d).search("deploy")] == ["human", "cron"]


# ---------------------------------------------------------------- lineage


def test_lineage_dedup(d: Path) -> None:
    put(d, "a1", [msg("user", "zebra", 1.0), msg("user", "zebra", 2.0)], lineage_id="L")
    put(d, "a2", [msg("user", "zebra", 1.0)], metadata={"lineage_id": "L"})
    put(d, "b1", [msg("user", "zebra", 1.0)], root_session_id="R")
    put(d, "b2", [msg("user", "zebra", 1.0)], metadata={"root_session_id": "R"})
    put(d, "c1", [msg("user", "zebra", 1.0)], metadata={"thread_id": "T"})
    put(d, "c2", [msg("user", "zebra", 1.0)], thread_id="T")
    # parent_session_id never folds: siblings are distinct conversations
    put(d, "p1", [msg("user", "zebra", 1.0)], parent_session_id="P")
    put(d, "p2", [msg("user", "zebra", 1.0)], metadata={"parent_session_id": "P"})
    hits = store(d).search("zebra", limit=20)
    ids = [h.session_id for h in hits]
    assert ids[0] == "a1"
    assert len(ids) == 5
    assert {"p1", "p2"} <= set(ids)
    assert len({"b1", "b2"} & set(ids)) == 1 and len({"c1", "c2"} & set(ids)) == 1
    assert hits[0].folded == ["a2"]


def test_lineage_fold_does_not_eat_limit(d: Path) -> None:
    put(d, "a1", [msg("user", "yak", 1.0), msg("user", "yak", 2.0)], lineage_id="L")
    put(d, "a2", [msg("user", "yak", 1.0), msg("user", "yak", 2.0)], lineage_id="L")
    put(d, "b", [msg("user", "yak", 1.0)])
    assert [h.session_id for h in store(d).search("yak", limit=2)][1] == "b"


# ---------------------------------------------------------------- titles


def test_titles(d: Path) -> None:
    long = "  first   user\nmessage " + "x" * 100
    put(d, "t1", [msg("user", "q", 1.0)], metadata={"title": "Named"}, agent_name="Agent")
    put(d, "t2", [msg("user", "q  why\n does it", 1.0)], agent_name="Agent")
    put(d, "t3", [msg("system", "sys q", 1.0), msg("user", long, 2.0)])
    put(d, "t4", [msg("assistant", "q only assistant", 1.0)])
    put(d, "t5", [msg("user", "q", 1.0)], archived=[msg("user", "archived opener", 0.5)])
    put(d, "t6", [msg("assistant", "q from the agent", 1.0)], agent_name="Agent")
    hits = store(d).search("q", limit=10)
    # ``title`` is praisonaiagents' own: explicit, else the agent name, else the first
    # active user message (60 characters, whitespace folded), else the id.
    assert {h.session_id: h.title for h in hits} == {
        "t1": "Named",
        "t2": "Agent",
        "t3": ("first user message " + "x" * 100)[:60],
        "t4": "t4",
        "t5": "q",
        "t6": "Agent",
    }
    # ``display_title`` is what the app and the CLI show.
    titles = {h.session_id: h.display_title for h in hits}
    assert titles["t1"] == "Named"
    # The first user message, not the agent name (which every session with it shares).
    assert titles["t2"] == "q why does it"
    assert titles["t3"] == ("first user message " + "x" * 100)[:59] + "…"
    assert len(titles["t3"]) == 60
    assert titles["t4"] == "t4"
    assert titles["t5"] == "archived opener"
    # No user message: the agent name, then the id.
    assert titles["t6"] == "Agent"
    recent = store(d).recent(limit=10)
    assert {s.session_id: s.display_title for s in recent} == titles
    assert {s.session_id: s.title for s in recent} == {h.session_id: h.title for h in hits}
    # The agent goes beside the title.
    agents = {h.session_id: h.agent for h in hits}
    assert agents == {s.session_id: s.agent for s in recent}
    assert agents["t2"] == agents["t1"] == agents["t6"] == "Agent"
    assert agents["t3"] is None
    assert next(h for h in hits if h.session_id == "t2").to_json()["agent"] == "Agent"


def test_title_of_a_huge_message_reads_its_start_only() -> None:
    huge = "word " * 2_000_000 + "end"
    data = {"session_id": "s", "messages": [msg("user", huge)], "metadata": {}}
    title = recall.session_title(data)
    assert title == ("word " * 12).strip() + "…"  # cut after a whole word


def test_agent_of() -> None:
    assert recall.agent_of({"agent_name": " chit-chat\npartner "}) == "chit-chat partner"
    assert recall.agent_of({"agent_id": "a-1"}) == "a-1"
    assert recall.agent_of({"metadata": {"agent_id": "m-1"}}) == "m-1"
    assert recall.agent_of({"agent_name": "", "agent_id": None, "metadata": {}}) is None
    assert recall.agent_of({"agent_name": ["no"]}) is None


# ---------------------------------------------------------------- snippet


def test_snippet_centred_with_ellipses() -> None:
    text = "a" * 300 + " NEEDLE " + "b" * 300
    snip = recall.make_snippet(text, "needle")
    assert snip.startswith("…") and snip.endswith("…")
    body = snip[1:-1]
    assert len(body) == 120 and "NEEDLE" in body
    centre = body.index("NEEDLE") + 3
    assert abs(centre - 60) <= 4


def test_snippet_edges_and_whitespace() -> None:
    assert recall.make_snippet("short   text\n\nhere", "text") == "short text here"
    start = recall.make_snippet("needle " + "z" * 300, "needle")
    assert start.startswith("needle") and start.endswith("…") and len(start) == 121
    end = recall.make_snippet("z" * 300 + " needle", "needle")
    assert end.startswith("…") and end.endswith("needle") and len(end) == 121
    # no whole-query match: centred on the earliest term
    term = recall.make_snippet("y" * 200 + " alpha " + "y" * 200, "beta alpha", ("beta", "alpha"))
    assert "alpha" in term


def test_hit_snippet_from_anchor(d: Path) -> None:
    put(
        d,
        "s",
        [msg("user", "intro", 1.0), msg("user", "w " * 100 + "the ledger " + "w " * 100, 2.0)],
    )
    hit = store(d).search("ledger")[0]
    assert "ledger" in hit.snippet and hit.snippet.startswith("…") and hit.snippet.endswith("…")


# ---------------------------------------------------------------- context, bookends


def conversation(n: int) -> list[dict[str, Any]]:
    return [
        msg("user" if i % 2 == 0 else "assistant", f"turn {i}", 1000.0 + i * HOUR) for i in range(n)
    ]


def test_hit_messages_window(d: Path) -> None:
    msgs = conversation(20)
    msgs[10]["content"] = "the special turn"
    put(d, "s", msgs)
    hit = store(d).search("special", window=3)[0]
    assert hit.anchor_index == 10
    assert [m["index"] for m in hit.messages] == list(range(7, 14))
    assert set(hit.messages[0]) == {"index", "role", "content", "timestamp", "archived"}
    assert hit.messages[3]["content"] == "the special turn"
    assert hit.messages[3]["timestamp"] == 1000.0 + 10 * HOUR
    edge = store(d).search("turn 0", window=2)[0]
    assert [m["index"] for m in edge.messages] == [0, 1, 2]
    assert [m["index"] for m in store(d).search("special", window=0)[0].messages] == [10]


def test_bookends(d: Path) -> None:
    put(d, "long", [msg("system", "sys", 1.0), *conversation(6)])
    put(
        d,
        "short",
        [msg("user", "bk q", 1.0), msg("assistant", "bk a", 2.0), msg("tool", "bk tool", 3.0)],
    )
    s = store(d)
    hit = s.search("turn 3")[0]
    assert [m["index"] for m in hit.bookends["opening"]] == [1, 2]
    assert [m["index"] for m in hit.bookends["closing"]] == [5, 6]
    assert hit.bookends["opening"][0]["content"] == "turn 0"
    assert "bookends" in hit.as_dict()
    # A short session: its opening turns and no closing ones, as praisonaiagents gives.
    short = s.search("bk")[0]
    assert [m["index"] for m in short.bookends["opening"]] == [0, 1]
    assert short.bookends["closing"] == []
    assert "bookends" in short.as_dict()


def test_projection_skips_non_objects_and_flags_archived(d: Path) -> None:
    put(
        d,
        "s",
        [None, msg("user", "active one", 5.0), 7, "x", msg("assistant", "active two", 6.0)],
        archived=[msg("user", "old one", 1.0), [], msg("assistant", "old two", 2.0)],
    )
    s = store(d)
    view = s.window("s", 0, window=10)
    assert [(m["index"], m["content"], m["archived"]) for m in view] == [
        (0, "old one", True),
        (1, "old two", True),
        (2, "active one", False),
        (3, "active two", False),
    ]
    hit = s.search("two")[0]
    assert hit.anchor_index == 1 and hit.archived
    assert s.search("active two")[0].anchor_index == 3


# ---------------------------------------------------------------- window()


def test_window_clamping(d: Path) -> None:
    put(d, "s", conversation(10))
    s = store(d)
    assert [m["index"] for m in s.window("s")] == [4, 5, 6, 7, 8, 9]  # latest
    assert [m["index"] for m in s.window("s", None, window=1)] == [8, 9]
    assert [m["index"] for m in s.window("s", "3", window=1)] == [2, 3, 4]
    assert [m["index"] for m in s.window("s", 0, window=2)] == [0, 1, 2]
    assert [m["index"] for m in s.window("s", 99, window=1)] == [8, 9]
    assert [m["index"] for m in s.window("s", -4, window=1)] == [0, 1]
    assert [m["index"] for m in s.window("s", "bogus", window=0)] == [9]
    assert [m["index"] for m in s.window("s", 5, window=-3)] == [5]
    assert s.window("unknown") == []
    put(d, "empty", [])
    assert s.window("empty") == []


# ---------------------------------------------------------------- recent()


def test_recent_order_and_counts(d: Path) -> None:
    put(d, "a", conversation(3), updated="2026-01-03T00:00:00+00:00", archived=conversation(2))
    put(d, "b", [None, *conversation(5)], updated="2026-01-05T00:00:00+00:00")
    put(d, "c", [], updated="2026-01-01T00:00:00+00:00")
    s = store(d)
    rows = s.recent()
    assert [r.session_id for r in rows] == ["b", "a", "c"]
    assert [(r.message_count, r.archived_count) for r in rows] == [(5, 0), (3, 2), (0, 0)]
    assert rows[0].when == "2026-01-05T00:00:00+00:00"
    assert rows[1].as_dict() == {
        "session_id": "a",
        "title": "turn 0",
        "when": "2026-01-03T00:00:00+00:00",
        "message_count": 3,
        "archived_count": 2,
    }
    assert [r.session_id for r in s.recent(limit=2)] == ["b", "a"]
    assert s.recent(limit=0) == []


def test_when_falls_back_to_created_at(d: Path) -> None:
    put(d, "s", [msg("user", "hello", 1.0)], updated=None)  # type: ignore[arg-type]
    assert store(d).search("hello")[0].when == "2025-12-01T00:00:00+00:00"


def test_store_search_matches_recall_functions() -> None:
    data = {"session_id": "x", "messages": [msg("user", "find me", 1.0)]}
    cand = recall.classic_candidate(data, recall.ClassicQuery.parse("find"), window=1)
    assert cand is not None and cand.hit.score == 3.0
    assert recall.classic_candidate(data, recall.ClassicQuery.parse("nope"), window=1) is None
    assert recall.summary_of(data).message_count == 1
