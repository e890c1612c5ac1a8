"""The benchmark corpus builder and its known-item queries, at small scale: on the data pip
installs (chitchat-dataset + the demo conversations, always) and on the SGD data (only when
``../shared/data`` is there)."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from session_browser.bench import corpus as C
from session_browser.bench import data as D
from session_browser.bench import queries as Q
from session_browser.bench import sessions as S
from session_browser.core import recall
from session_browser.core.paths import safe_id

SESSIONS = 300
TOP_KEYS = [
    "session_id", "messages", "created_at", "updated_at", "agent_name", "user_id", "metadata",
    "gateway_session_id", "agent_id", "runtime_state", "archived_messages",
]
MESSAGE_KEYS = ["role", "content", "timestamp", "metadata"]
SUMMARY_RE = re.compile(
    r"\A\[Session Summary\]\nPrevious conversation: (\d+) messages\n"
    r"Message breakdown: \{'user': (\d+), 'assistant': (\d+), 'tool': 0, 'system': 0\}\Z"
)
SPILL_RE = re.compile(r"\A(?P<stem>[A-Za-z0-9_-]+)\.\d{13}\.\d+\.[0-9a-f]{8}\.json\Z")


def _sgd_path() -> Path:
    env = os.environ.get("SESSION_BROWSER_DATA_DIR")
    base = Path(env) if env else Path(__file__).resolve().parents[3] / "shared" / "data"
    path = base / D.SGD_FILENAME
    if not path.is_file():
        pytest.skip(f"needs the SGD data (not in the repository): {path} not found")
    return path


def _strict(path: Path) -> Any:
    return json.loads(path.read_bytes().decode("utf-8"))


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _rate(messages: list[dict[str, Any]]) -> float:
    stamps = [float(m["timestamp"]) for m in messages]
    if len(stamps) < 4 or max(stamps) == min(stamps):
        return 0.0
    return len(stamps) / ((max(stamps) - min(stamps)) / 3600.0)


def _tagged(data: dict[str, Any]) -> bool:
    source = data.get("source") or data["metadata"].get("source")
    return source in {"cron", "scheduled"}


@pytest.fixture(scope="module", params=["pip", "sgd"])
def built(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[C.CorpusInfo, C.CorpusInfo]:
    """The same corpus built twice: from chitchat + demo ("pip"), or from SGD + chitchat."""
    kwargs: dict[str, Any] = (
        {"include_sgd": False} if request.param == "pip" else {"sgd_path": _sgd_path()}
    )
    root = tmp_path_factory.mktemp("corpus")
    seen: list[tuple[int, int]] = []
    first = C.build_corpus(root / "a", sessions=SESSIONS, seed=7,
                           progress=lambda done, total: seen.append((done, total)), **kwargs)
    assert seen and seen[-1] == (SESSIONS, SESSIONS)
    second = C.build_corpus(root / "b", sessions=SESSIONS, seed=7, **kwargs)
    return first, second


@pytest.fixture(scope="module")
def info(built: tuple[C.CorpusInfo, C.CorpusInfo]) -> C.CorpusInfo:
    return built[0]


@pytest.fixture(scope="module")
def readable(info: C.CorpusInfo) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(info.sessions_dir.glob("*.json")):
        if path.stem not in info.corrupt_ids:
            data = _strict(path)
            out[data["session_id"]] = data
    return out


@pytest.fixture(scope="module")
def queries(info: C.CorpusInfo) -> list[Q.KnownItem]:
    return Q.make_queries(info, n=60, seed=7)


def test_file_count_and_sources(info: C.CorpusInfo) -> None:
    files = list(info.sessions_dir.glob("*.json"))
    assert len(files) == info.session_count == SESSIONS
    assert sum(info.sources.values()) == SESSIONS
    assert info.sources["chitchat"] > 0  # the test extra installs chitchat-dataset
    if info.conversations["sgd"]:
        assert info.conversations["sgd"] == 17193 and info.sources["sgd"] > 0
        assert info.conversations["demo"] == 0 and C.corpus_sources(info) == "sgd + chitchat"
    else:
        assert info.conversations["demo"] == len(D.load_demo_conversations()) > 10
        assert C.corpus_sources(info) == "chitchat + demo"
        assert info.notes == ["corpus sources: chitchat + demo"]
    assert info.json_bytes == sum(p.stat().st_size for p in files)
    assert info.spill_dir == info.home / "state" / "session_spill"


def test_readable_files_match_the_praisonai_format(
    info: C.CorpusInfo, readable: dict[str, dict[str, Any]]
) -> None:
    assert len(readable) == SESSIONS - len(info.corrupt_ids)
    total = 0
    for sid, data in readable.items():
        path = info.sessions_dir / f"{safe_id(sid)}.json"
        raw = path.read_bytes()
        assert raw == json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8")
        assert list(data)[: len(TOP_KEYS)] == TOP_KEYS
        assert set(data) - set(TOP_KEYS) <= {"source"}
        assert data["gateway_session_id"] is None and data["agent_id"] is None
        assert data["runtime_state"] == {}
        assert data["agent_name"] is None or isinstance(data["agent_name"], str)
        assert data["user_id"] is None or isinstance(data["user_id"], str)
        assert isinstance(data["metadata"], dict)
        messages = [*data["archived_messages"], *data["messages"]]
        assert messages
        for msg in messages:
            assert list(msg) == MESSAGE_KEYS
            assert msg["role"] in ("user", "assistant", "system")
            assert isinstance(msg["content"], str)
            assert isinstance(msg["timestamp"], float)
        stamps = [m["timestamp"] for m in messages]
        assert stamps == sorted(stamps)
        created = datetime.fromisoformat(data["created_at"]).timestamp()
        updated = datetime.fromisoformat(data["updated_at"]).timestamp()
        assert data["created_at"].endswith("+00:00")
        assert created <= stamps[0] and updated >= stamps[-1]
        assert stamps[-1] < C.BASE_EPOCH
        total += len(messages)
    assert total == info.message_count
    assert 0.15 * SESSIONS < info.titled < 0.45 * SESSIONS
    assert 0.25 * SESSIONS < info.with_agent < 0.55 * SESSIONS


def test_corrupt_files_do_not_parse(info: C.CorpusInfo) -> None:
    assert len(info.corrupt_ids) >= 3
    kinds: Counter[str] = Counter()
    for sid in info.corrupt_ids:
        path = info.sessions_dir / f"{sid}.json"
        assert path.is_file()
        assert S.load_session(path) is None
        try:
            data = _strict(path)
        except UnicodeDecodeError:
            kinds["bad_utf8"] += 1
        except json.JSONDecodeError:
            kinds["truncated"] += 1
        else:
            assert isinstance(data, list)
            kinds["list_root"] += 1
    assert set(kinds) == {"bad_utf8", "truncated", "list_root"}


def test_compacted_sessions(info: C.CorpusInfo, readable: dict[str, dict[str, Any]]) -> None:
    assert 0.07 * SESSIONS <= len(info.compacted_ids) <= 0.13 * SESSIONS
    for sid, data in readable.items():
        archived = data["archived_messages"]
        if sid not in info.compacted_ids:
            assert archived == []
            assert all(m["role"] != "system" for m in data["messages"])
            continue
        summary = data["messages"][0]
        match = SUMMARY_RE.match(summary["content"])
        assert summary["role"] == "system" and match is not None
        count = int(match.group(1))
        assert count == len(archived) >= 6
        assert summary["metadata"] == {"compaction": True, "compacted_count": count}
        roles = Counter(m["role"] for m in archived)
        assert (roles["user"], roles["assistant"]) == (int(match.group(2)), int(match.group(3)))
        assert len(data["messages"]) >= 5
        assert archived[-1]["timestamp"] <= summary["timestamp"] <= data["messages"][1]["timestamp"]


def test_automated_sessions_and_interactive_pace(
    info: C.CorpusInfo, readable: dict[str, dict[str, Any]]
) -> None:
    assert len(info.automated_ids) == round(0.03 * SESSIONS)
    kinds: Counter[str] = Counter()
    for sid, data in readable.items():
        full = [*data["archived_messages"], *data["messages"]]
        if sid in info.automated_ids:
            if data["metadata"].get("source") == "cron":
                kinds["metadata"] += 1
            elif data.get("source") == "scheduled":
                kinds["top-level"] += 1
            else:
                assert _rate(full) > recall.AUTOMATED_RATE_THRESHOLD
                kinds["fast"] += 1
            assert S.is_automated(data)
        else:
            assert not _tagged(data)
            assert _rate(full) <= 50.5 and _rate(data["messages"]) <= 50.5
            assert not S.is_automated(data)
    assert set(kinds) == {"metadata", "top-level", "fast"}


def test_lineage_chains(info: C.CorpusInfo, readable: dict[str, dict[str, Any]]) -> None:
    assert info.lineage_groups
    chained = sum(len(ids) for ids in info.lineage_groups.values())
    assert 0.01 * SESSIONS <= chained <= 0.03 * SESSIONS
    for lineage_id, ids in info.lineage_groups.items():
        assert 2 <= len(ids) <= 3
        assert len({S.conversation_key(i) for i in ids}) == 1
        parts = [readable[i] for i in ids]
        assert all(p["metadata"]["lineage_id"] == lineage_id for p in parts)
        parts.sort(key=lambda p: p["messages"][0]["timestamp"])
        assert parts[0]["session_id"] == ids[0]
        for before, after in pairwise(parts):
            assert after["metadata"]["parent_session_id"] == before["session_id"]
            assert after["messages"][0]["timestamp"] > before["messages"][-1]["timestamp"]


def test_spill_files(info: C.CorpusInfo, readable: dict[str, dict[str, Any]]) -> None:
    files = sorted(info.spill_dir.glob("*.json"))
    assert files == info.spill_files and 1 <= len(files) <= 2
    for path in files:
        match = SPILL_RE.match(path.name)
        assert match is not None
        payload = _strict(path)
        assert list(payload) == ["session_id", "spilled_at", "messages"]
        assert match.group("stem") == safe_id(payload["session_id"])
        session = readable[payload["session_id"]]
        assert payload["session_id"] in info.spilled_ids
        assert [list(m) for m in payload["messages"]] == [MESSAGE_KEYS]
        assert payload["messages"][0]["timestamp"] > session["messages"][-1]["timestamp"]


def test_same_seed_same_bytes(built: tuple[C.CorpusInfo, C.CorpusInfo]) -> None:
    first, second = built
    for sub in ("sessions", "state/session_spill"):
        a = {p.name: p.read_bytes() for p in (first.home / sub).glob("*.json")}
        b = {p.name: p.read_bytes() for p in (second.home / sub).glob("*.json")}
        assert a and a == b
    assert first.corrupt_ids == second.corrupt_ids
    assert first.lineage_groups == second.lineage_groups
    assert first.message_count == second.message_count


def test_other_seed_other_sample(tmp_path: Path) -> None:
    info = C.build_corpus(tmp_path / "c", sessions=40, seed=8, include_sgd=False,
                          include_chitchat=False)
    again = C.build_corpus(tmp_path / "d", sessions=40, seed=7, include_sgd=False,
                           include_chitchat=False)
    assert info.session_count == again.session_count == 40
    assert {p.name for p in info.sessions_dir.iterdir()} != {
        p.name for p in again.sessions_dir.iterdir()}
    assert info.notes and "chitchat" in info.notes[0]
    with pytest.raises(FileExistsError):
        C.build_corpus(tmp_path / "c", sessions=5, include_sgd=False, include_chitchat=False)


def test_without_sgd_the_corpus_comes_from_what_pip_installs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No SGD file anywhere: the default build falls back to chitchat + demo and says so."""

    def missing() -> Path:
        raise FileNotFoundError("sgd_dialogues.jsonl.gz not found")

    monkeypatch.setattr(D, "default_sgd_path", missing)
    info = C.build_corpus(tmp_path / "a", sessions=30, seed=7)
    assert C.corpus_sources(info) == "chitchat + demo"
    assert info.session_count == 30 and info.sources["sgd"] == 0
    assert any("sgd_dialogues.jsonl.gz not found" in note for note in info.notes)
    with pytest.raises(FileNotFoundError, match="session-browser\\[bench\\]"):
        C.build_corpus(tmp_path / "b", sessions=5, include_chitchat=False, include_demo=False)
    with pytest.raises(FileNotFoundError, match="not found at"):
        C.build_corpus(tmp_path / "c", sessions=5, sgd_path=tmp_path / "nope.jsonl.gz")


def test_default_sgd_path(monkeypatch: pytest.MonkeyPatch) -> None:
    sgd = _sgd_path()
    monkeypatch.setenv("SESSION_BROWSER_DATA_DIR", str(sgd.parent))
    assert D.default_sgd_path() == sgd
    monkeypatch.delenv("SESSION_BROWSER_DATA_DIR")
    # From the checkout, the walk up finds the data beside it (a ``shared/`` beside an
    # unrelated working directory, say /tmp/shared, must not decide this test).
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    assert D.default_sgd_path().resolve() == sgd.resolve()


def _scan(info: C.CorpusInfo, item: Q.KnownItem) -> set[str]:
    """Brute force: readable sessions with one message holding the query (spills included)."""
    spilled: dict[str, list[dict[str, Any]]] = {}
    for path in info.spill_dir.glob("*.json"):
        payload = _strict(path)
        spilled.setdefault(payload["session_id"], []).extend(payload["messages"])
    phrase = item.slice == "phrase"
    words = _tokens(item.query)
    hits: set[str] = set()
    for path in info.sessions_dir.glob("*.json"):
        data = S.load_session(path)
        if data is None:
            continue
        sid = data["session_id"]
        for msg in [*data["archived_messages"], *data["messages"], *spilled.get(sid, [])]:
            tokens = _tokens(msg["content"])
            if phrase:
                k = len(words)
                found = any(tokens[i:i + k] == words for i in range(len(tokens) - k + 1))
            else:
                found = set(words) <= set(tokens)
            if found:
                hits.add(sid)
                break
    return hits


def test_queries_cover_every_slice(queries: list[Q.KnownItem]) -> None:
    assert len(queries) == 60
    assert Counter(q.slice for q in queries) == {s: 10 for s in Q.SLICES}
    targets = [S.conversation_key(q.target_id) for q in queries]
    assert len(set(targets)) == len(targets)


def test_queries_are_verified_by_scan(
    info: C.CorpusInfo, readable: dict[str, dict[str, Any]], queries: list[Q.KnownItem]
) -> None:
    chain_of = {i: set(ids) for ids in info.lineage_groups.values() for i in ids}
    for item in queries:
        assert item.relevant and item.target_id in item.relevant
        assert not set(item.relevant) & set(info.corrupt_ids)
        hits = _scan(info, item)
        assert item.target_id in hits
        assert hits <= item.relevant
        expanded = set(hits).union(*(chain_of.get(h, set()) for h in hits))
        assert item.relevant == expanded
        assert len({S.conversation_key(i) for i in item.relevant}) <= 5
        target = readable[item.target_id]
        messages = [*target["archived_messages"], *target["messages"]]
        content = messages[item.target_index]["content"]
        assert messages[item.target_index]["role"] in ("user", "assistant")
        assert item.target_id not in info.automated_ids
        assert tuple(_tokens(item.query)) == item.terms
        if item.slice == "phrase":
            assert item.query.startswith('"') and item.query.endswith('"')
            assert item.query[1:-1] in content and 3 <= len(item.terms) <= 5
        else:
            assert set(item.terms) <= set(_tokens(content))
        if item.slice == "archived":
            assert item.target_index < len(target["archived_messages"])
        elif item.slice in ("rare", "mixed", "phrase", "casing", "fragment"):
            assert item.target_index >= len(target["archived_messages"])
        if item.slice in ("rare", "archived"):
            assert 2 <= len(item.terms) <= 3 and item.query == item.query.lower()
        if item.slice == "mixed":
            assert 2 <= len(item.terms) <= 3
        if item.slice == "fragment":  # typed from memory: unquoted, lowercase, consecutive
            assert '"' not in item.query and item.query == item.query.lower()
            assert 4 <= len(item.terms) <= 6 and item.query in content.lower()
        if item.slice == "casing":
            assert item.query != item.query.lower()
            assert item.query in (item.query.upper(), item.query.title())


def test_queries_are_deterministic(info: C.CorpusInfo, queries: list[Q.KnownItem]) -> None:
    assert Q.make_queries(info.sessions_dir, n=60, seed=7) == queries
    other = Q.make_queries(info.home, n=60, seed=8)
    assert [q.query for q in other] != [q.query for q in queries]


def test_copies_when_scaling_up(tmp_path: Path) -> None:
    """The demo's conversations alone, scaled up by copies."""
    info = C.build_corpus(tmp_path / "home", sessions=75, seed=3, include_sgd=False,
                          include_chitchat=False)
    n = len(D.load_demo_conversations())
    assert info.session_count == 75 == len(list(info.sessions_dir.glob("*.json")))
    assert info.conversations == {"sgd": 0, "chitchat": 0, "demo": n}
    stems = [p.stem for p in info.sessions_dir.glob("*.json")]
    assert len({S.conversation_key(s) for s in stems}) == n
    assert any(s.endswith("-copy1") for s in stems) and any(s.endswith("-copy2") for s in stems)
    texts: dict[str, list[str]] = {}
    starts: dict[str, set[float]] = {}
    for stem, data in S.iter_session_dicts(info.sessions_dir):
        if data is None or data["metadata"].get("lineage_id"):
            continue
        msgs = [m for m in S.session_messages(data) if not m["metadata"].get("compaction")]
        key = S.conversation_key(stem)
        if "-copy" not in stem:
            texts[key] = [m["content"] for m in msgs]
        starts.setdefault(key, set()).add(msgs[0]["timestamp"])
    for stem, data in S.iter_session_dicts(info.sessions_dir):
        key = S.conversation_key(stem)
        if data is None or data["metadata"].get("lineage_id") or key not in texts:
            continue
        msgs = [m for m in S.session_messages(data) if not m["metadata"].get("compaction")]
        shorter = min(len(msgs), len(texts[key]))  # a spilled original lacks two turns
        assert [m["content"] for m in msgs][:shorter] == texts[key][:shorter]
    assert any(len(s) > 1 for s in starts.values())  # copies are shifted in time
    items = Q.make_queries(info, n=20, seed=3)
    assert items
    with_copies = [q for q in items if any("-copy" in i for i in q.relevant)]
    assert with_copies
    for item in items:
        assert _scan(info, item) <= item.relevant


def test_json_and_orjson_write_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = C.build_corpus(tmp_path / "fast", sessions=120, seed=5, include_sgd=False)
    monkeypatch.setattr(S, "_HAVE_ORJSON", False)
    slow = C.build_corpus(tmp_path / "slow", sessions=120, seed=5, include_sgd=False)
    assert slow.encoder == "json"
    for path in fast.sessions_dir.glob("*.json"):
        assert path.read_bytes() == (slow.sessions_dir / path.name).read_bytes()
