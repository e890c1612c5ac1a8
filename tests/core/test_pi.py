"""Pi coding-agent sessions as a read-only source: the reader, the store and mixing stores."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from session_browser.core import recall
from session_browser.core.model import SUMMARY_PREFIX, SessionData, SessionMessage
from session_browser.core.multi import StoreGroup
from session_browser.core.sources.pi import (
    PiStore,
    cwd_matches,
    default_pi_dir,
    pi_is_automated,
    read_pi_branch,
    read_pi_session,
)
from session_browser.core.store import DefaultSessionStore
from session_browser.core.text import strip_markdown

BEFORE = "before-compaction.jsonl"
LARGE = "large-session.jsonl"
PI_CWD = "/Users/badlogic/workspaces/pi-mono"
PROJECT_DIR = "--Users-badlogic-workspaces-pi-mono--"
WORD = re.compile(r"[a-z][a-z0-9_]{7,}")


# ---------------------------------------------------------------------- helpers


def raw_entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def block_texts(content: Any, kind: str = "text", key: str = "text") -> list[str]:
    if isinstance(content, str):
        return [content] if kind == "text" else []
    return [
        b[key]
        for b in content or []
        if isinstance(b, dict) and b.get("type") == kind and isinstance(b.get(key), str)
    ]


def visible_and_hidden(path: Path) -> tuple[str, str]:
    """(visible prose, hidden text) of a Pi file, computed from the raw JSON."""
    visible: list[str] = []
    hidden: list[str] = []
    for entry in raw_entries(path):
        if entry.get("type") == "compaction":
            visible.append(entry["summary"])
        if entry.get("type") != "message":
            continue
        msg = entry["message"]
        role = msg.get("role")
        if role in ("user", "assistant"):
            visible.extend(block_texts(msg.get("content")))
            hidden.extend(block_texts(msg.get("content"), "thinking", "thinking"))
            for block in msg.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    hidden.append(json.dumps(block.get("arguments")))
        elif role == "toolResult":
            hidden.extend(block_texts(msg.get("content")))
        elif role == "bashExecution":
            hidden.extend([msg.get("command") or "", msg.get("output") or ""])
    return "\n".join(visible).lower(), "\n".join(hidden).lower()


def hidden_only_words(path: Path) -> list[str]:
    """Words in tool output, bash or thinking that no user/assistant text (or summary) holds."""
    visible, hidden = visible_and_hidden(path)
    return sorted({w for w in WORD.findall(hidden) if w not in visible})


def visible_words(path: Path, role: str) -> list[str]:
    words: set[str] = set()
    for entry in raw_entries(path):
        if entry.get("type") == "message" and entry["message"].get("role") == role:
            for text in block_texts(entry["message"].get("content")):
                words.update(WORD.findall(text.lower()))
    return sorted(words)


def spread(items: list[str], count: int) -> list[str]:
    if len(items) <= count:
        return items
    step = len(items) / count
    return [items[int(i * step)] for i in range(count)]


def snapshot(root: Path) -> dict[str, tuple[Any, ...]]:
    """Every path under ``root`` with inode, mode, size, mtime and (for files) a hash."""
    out: dict[str, tuple[Any, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else ""
            out[str(p.relative_to(root))] = (
                st.st_ino,
                st.st_mode,
                st.st_size,
                st.st_mtime_ns,
                digest,
            )
    return out


def write_lines(path: Path, objs: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    return path


@pytest.fixture
def pi_root(tmp_path: Path, shared_data: Path) -> Path:
    """A Pi session dir laid out as Pi lays it out, holding the two real fixtures."""
    root = tmp_path / "pi-sessions"
    project = root / PROJECT_DIR
    project.mkdir(parents=True)
    for name in (BEFORE, LARGE):
        src = shared_data / "pi" / name
        header = json.loads(src.open(encoding="utf-8").readline())
        stamp = header["timestamp"].replace(":", "-").replace(".", "-")
        shutil.copyfile(src, project / f"{stamp}_{header['id']}.jsonl")
    return root


def fixture_path(root: Path, name: str, shared_data: Path) -> Path:
    header = json.loads((shared_data / "pi" / name).open(encoding="utf-8").readline())
    return next((root / PROJECT_DIR).glob(f"*_{header['id']}.jsonl"))


# ---------------------------------------------------------------------- the real fixtures


def test_before_compaction_counts_and_archive(shared_data: Path) -> None:
    path = shared_data / "pi" / BEFORE
    raw = raw_entries(path)
    header = raw[0]
    compactions = [i for i, e in enumerate(raw) if e["type"] == "compaction"]
    assert len(compactions) == 2
    last = raw[compactions[-1]]
    first_kept = last["firstKeptEntryIndex"]
    n_messages = sum(1 for e in raw if e["type"] == "message")
    archived_turns = sum(1 for e in raw[:first_kept] if e["type"] == "message")

    session = read_pi_session(path)
    data = session.data
    assert session.session_id == header["id"]
    assert session.skipped_lines == 0 and not session.partial_tail
    assert session.end_offset == path.stat().st_size
    assert data["metadata"]["cwd"] == PI_CWD == data["metadata"]["project"]
    assert data["metadata"]["source"] == "pi"
    assert data["agent_name"] is None

    archived = data["archived_messages"]
    active = data["messages"]
    # The earlier compaction sits in the archive as a superseded summary marker.
    markers = [m for m in archived if m["metadata"].get("compaction")]
    assert len(markers) == 1 and markers[0]["metadata"]["superseded"] is True
    assert len(archived) - len(markers) == archived_turns
    summary = active[0]
    assert summary["role"] == "system"
    assert summary["content"] == f"{SUMMARY_PREFIX}\n{last['summary']}"
    assert summary["metadata"]["compaction"] is True
    assert summary["metadata"]["pi"] is True
    assert summary["metadata"]["compacted_count"] == archived_turns
    assert summary["metadata"]["tokens_before"] == last["tokensBefore"]
    # The first kept turn is the entry firstKeptEntryIndex names (the header counts as 0).
    kept = raw[first_kept]["message"]
    assert active[1]["role"] == kept["role"]
    assert active[1]["content"] == "\n".join(block_texts(kept["content"]))
    assert active[1]["timestamp"] == pytest.approx(kept["timestamp"] / 1000)
    assert archived_turns + len(active) - 1 == n_messages

    projection = recall.project(data)
    assert all(m["archived"] for m in projection[: len(archived)])
    assert not any(m.get("archived") for m in projection[len(archived) :])
    roles = [m["role"] for m in projection if not m["metadata"].get("compaction")]
    raw_roles = [e["message"]["role"] for e in raw if e["type"] == "message"]
    mapped = {"toolResult": "tool", "bashExecution": "tool"}
    assert roles == [mapped.get(r, r) for r in raw_roles]
    assert all(m["content"] == "" for m in projection if m["role"] == "tool")

    # A hit in an archived turn says so, and opens at that turn.
    opening = archived[0]["content"]
    cand = recall.classic_candidate(data, recall.ClassicQuery.parse(opening), window=1)
    assert cand is not None and cand.hit.archived is True and cand.hit.anchor_index == 0

    first_user = next(
        e["message"] for e in raw if e["type"] == "message" and e["message"]["role"] == "user"
    )
    words = " ".join(strip_markdown(block_texts(first_user["content"])[0]).split())
    summ = recall.summary_of(data, source="pi")
    # The first user message's start, cut after a whole word.
    assert len(words) > recall.TITLE_CHARS and summ.title.endswith("…")
    assert words.startswith(summ.title[:-1] + " ")
    assert recall.TITLE_CHARS // 2 < len(summ.title) <= recall.TITLE_CHARS
    assert summ.archived_count == len(archived)
    assert summ.message_count == len(active)


def test_large_session_counts(shared_data: Path) -> None:
    path = shared_data / "pi" / LARGE
    raw = raw_entries(path)
    session = read_pi_session(path)
    assert session.session_id == raw[0]["id"]
    assert session.data["archived_messages"] == []
    messages = session.data["messages"]
    assert len(messages) == sum(1 for e in raw if e["type"] == "message")
    assert sum(1 for m in messages if m["role"] == "user") == 88
    assert sum(1 for m in messages if m["role"] == "tool") == 373
    levels = [e["thinkingLevel"] for e in raw if e["type"] == "thinking_level_change"]
    assert len(levels) == 103
    assert session.data["metadata"]["thinking_level"] == levels[-1]
    # One branch only: a legacy file is a chain.
    assert len(session.branches) == 1 and session.branches[0].active
    assert session.data["created_at"] <= session.data["updated_at"]


def test_hidden_mode_keeps_the_same_coordinates(shared_data: Path) -> None:
    path = shared_data / "pi" / BEFORE
    plain = recall.project(read_pi_session(path).data)
    full = recall.project(read_pi_session(path, include_hidden=True).data)
    assert [(m["role"], m["content"]) for m in plain] == [(m["role"], m["content"]) for m in full]
    assert not any("hidden" in m["metadata"] for m in plain)
    tool = [m for m in full if m["metadata"].get("pi_role") == "toolResult"]
    assert tool and all(m["metadata"]["hidden"][0]["type"] == "toolResult" for m in tool)
    bash = [m for m in full if m["metadata"].get("pi_role") == "bashExecution"]
    assert len(bash) == 3 and bash[0]["metadata"]["hidden"][0]["command"] == "ls"
    thinking = [h for m in full for h in m["metadata"].get("hidden", []) if h["type"] == "thinking"]
    assert len(thinking) == 49


def test_fixtures_are_searchable_by_prose_only(pi_root: Path, shared_data: Path) -> None:
    store = PiStore(pi_root)
    for name in (BEFORE, LARGE):
        path = shared_data / "pi" / name
        sid = raw_entries(path)[0]["id"]
        for role in ("user", "assistant"):
            words = spread(visible_words(path, role), 12)
            assert len(words) >= 10
            for word in words:
                hits = [h for h in store.search(word, limit=10) if h.session_id == sid]
                assert hits, f"{word!r} ({role}) not found in {name}"
                hit = hits[0]
                assert hit.source == "pi" and hit.store == store.label
                anchor = next(m for m in hit.messages if m["index"] == hit.anchor_index)
                assert word in anchor["content"].lower()
        hidden = hidden_only_words(path)
        assert len(hidden) >= 50, "the fixture has words only tools and thinking used"
        sample = spread(hidden, 30)
        for word in sample:
            assert not [h for h in store.search(word, limit=10) if h.session_id == sid], word
        # ... yet the viewer can show them.
        shown = json.dumps(store.projection(sid, include_hidden=True)).lower()
        assert all(word in shown for word in sample[:10])


def test_interactive_sessions_are_not_demoted(pi_root: Path, shared_data: Path) -> None:
    store = PiStore(pi_root)
    for summary in store.summaries():
        data = store.read(summary.session_id)
        assert data is not None
        # The shared all-messages rule would call a coding session automated ...
        assert recall.is_automated(data.data, recall.project(data.data))
        # ... the user's pace says otherwise.
        assert summary.automated is False
        assert summary.source == "pi" and summary.project == PI_CWD
    word = visible_words(shared_data / "pi" / LARGE, "user")[0]
    hit = store.search(word)[0]
    assert hit.automated is False
    assert hit.explain["demotion"] == 1.0
    assert hit.score == hit.explain["raw_score"]


def test_fast_user_turns_are_automated() -> None:
    base = 1_700_000_000.0
    data = {
        "session_id": "x",
        "metadata": {"source": "pi"},
        "messages": [
            {"role": "user", "content": f"t{i}", "timestamp": base + i * 10} for i in range(8)
        ],
    }
    assert pi_is_automated(data)
    data["messages"] = [
        {"role": "user", "content": "t", "timestamp": base + i * 600} for i in range(8)
    ]
    assert not pi_is_automated(data)


# ---------------------------------------------------------------------- tolerance and resuming


def header(sid: str = "s1", version: int | None = None, cwd: str = "/work/proj") -> dict[str, Any]:
    obj: dict[str, Any] = {
        "type": "session",
        "id": sid,
        "timestamp": "2025-01-02T03:04:05.000Z",
        "cwd": cwd,
    }
    if version is not None:
        obj["version"] = version
    return obj


def user(text: str, ts: str = "2025-01-02T03:05:00.000Z", **extra: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "timestamp": ts,
        "message": {"role": "user", "content": text},
        **extra,
    }


def assistant(text: str, ts: str = "2025-01-02T03:06:00.000Z", **extra: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "timestamp": ts,
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
        **extra,
    }


def test_malformed_and_partial_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    good = [header(), user("first question about otters"), assistant("an answer about otters")]
    body = "".join(json.dumps(o) + "\n" for o in good)
    body += "{not json at all\n" + "42\n" + "\n" + json.dumps(user("second question")) + "\n"
    complete = len(body.encode())
    body += '{"type": "message", "timestamp": "2025-01-02T03:0'
    path = tmp_path / "s.jsonl"
    path.write_text(body, encoding="utf-8")

    session = read_pi_session(path)
    assert session.skipped_lines == 3
    assert session.partial_tail is True
    assert session.end_offset == complete
    assert [m["content"] for m in session.data["messages"]] == [
        "first question about otters",
        "an answer about otters",
        "second question",
    ]
    # The writer finishes its line: resuming reads only the new bytes.
    with path.open("a", encoding="utf-8") as fh:
        fh.write('5:00.000Z", "message": {"role": "assistant", "content": "done"}}\n')
    resumed = read_pi_session(path, prior=session.state)
    assert resumed.resumed is True and resumed.new_entries == 1
    assert resumed.skipped_lines == 2 and not resumed.partial_tail
    assert resumed.data == read_pi_session(path).data
    assert resumed.data["messages"][-1]["content"] == "done"


def test_complete_last_line_without_newline_is_used_but_not_consumed(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    text = json.dumps(header()) + "\n" + json.dumps(user("no newline here"))
    path.write_text(text, encoding="utf-8")
    session = read_pi_session(path)
    assert [m["content"] for m in session.data["messages"]] == ["no newline here"]
    assert session.skipped_lines == 0 and not session.partial_tail
    assert session.end_offset == len(json.dumps(header())) + 1
    with path.open("a", encoding="utf-8") as fh:
        fh.write("\n" + json.dumps(assistant("reply")) + "\n")
    again = read_pi_session(path, prior=session.state)
    assert again.resumed
    assert [m["content"] for m in again.data["messages"]] == ["no newline here", "reply"]


def test_incremental_read_matches_full_read(tmp_path: Path, shared_data: Path) -> None:
    src = (shared_data / "pi" / BEFORE).read_bytes()
    lines = src.splitlines(keepends=True)
    path = tmp_path / "grow.jsonl"
    # Stop mid-way through a line, before the second compaction.
    cut = sum(len(line) for line in lines[:400]) + len(lines[400]) // 2
    path.write_bytes(src[:cut])
    first = read_pi_session(path)
    assert first.partial_tail and first.end_offset == sum(len(line) for line in lines[:400])
    assert len(first.data["messages"]) < 500
    with path.open("ab") as fh:
        fh.write(src[cut:])
    grown = read_pi_session(path, start_offset=first.end_offset, prior=first.state)
    full = read_pi_session(path)
    assert grown.resumed is True
    assert grown.new_entries == len(lines) - 400
    assert grown.data == full.data
    assert grown.end_offset == full.end_offset == len(src)
    assert [b.to_json() for b in grown.branches] == [b.to_json() for b in full.branches]
    # The earlier read is untouched by the resumed one.
    assert first.state.end_offset < grown.state.end_offset
    assert len(first.state.entries) == 399


def test_rewritten_file_is_read_again_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_lines(path, [header(), user("alpha question"), user("beta question")])
    first = read_pi_session(path)
    write_lines(path, [header(), user("gamma question"), user("delta question"), user("more")])
    again = read_pi_session(path, prior=first.state)
    assert again.resumed is False
    assert [m["content"] for m in again.data["messages"]] == [
        "gamma question",
        "delta question",
        "more",
    ]
    with pytest.raises(ValueError):
        read_pi_session(path, start_offset=3, prior=first.state)


# ---------------------------------------------------------------------- v3 trees


V3_ID = "0192-v3-session"


def v3_entries() -> list[dict[str, Any]]:
    """A v3 session: a side branch, a branch summary, a compaction, labels, customs, images."""

    def e(eid: str, parent: str | None, ts: str, **rest: Any) -> dict[str, Any]:
        return {"id": eid, "parentId": parent, "timestamp": f"2025-03-04T{ts}.000Z", **rest}

    def msg(eid: str, parent: str | None, ts: str, message: dict[str, Any]) -> dict[str, Any]:
        return e(eid, parent, ts, type="message", message=message)

    return [
        header(V3_ID, version=3, cwd="/home/u/zephyr"),
        e("i0", None, "10:00:00", type="session_info", name="First name"),
        msg("a1", "i0", "10:00:01", {"role": "user", "content": "plan the zephyr migration"}),
        msg(
            "a2",
            "a1",
            "10:01:00",
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "secretthoughtword"},
                    {"type": "text", "text": "we will use quokka adapters"},
                    {
                        "type": "toolCall",
                        "id": "t1",
                        "name": "read",
                        "arguments": {"path": "argsecretpath"},
                    },
                ],
            },
        ),
        msg(
            "a3",
            "a2",
            "10:02:00",
            {
                "role": "toolResult",
                "toolCallId": "t1",
                "toolName": "read",
                "content": [{"type": "text", "text": "tooloutputsecret contents"}],
                "isError": False,
            },
        ),
        # A side branch off a3, later abandoned.
        msg("b1", "a3", "10:03:00", {"role": "user", "content": "alternative walrus plan"}),
        msg(
            "b2",
            "b1",
            "10:04:00",
            {"role": "assistant", "content": [{"type": "text", "text": "walrus reply"}]},
        ),
        e(
            "c0",
            "a3",
            "10:05:00",
            type="branch_summary",
            fromId="b2",
            summary="tried the walrus path",
        ),
        e("m0", "c0", "10:05:30", type="model_change", provider="openai", modelId="gpt-9"),
        msg(
            "a5",
            "m0",
            "10:06:00",
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "here is the heron diagram"},
                    {"type": "image", "data": "aW1hZ2VkYXRhc2VjcmV0", "mimeType": "image/png"},
                ],
            },
        ),
        msg(
            "a6",
            "a5",
            "10:07:00",
            {"role": "assistant", "content": [{"type": "text", "text": "the heron looks fine"}]},
        ),
        e(
            "k1",
            "a6",
            "10:08:00",
            type="compaction",
            summary="we planned the zephyr migration",
            firstKeptEntryId="a5",
            tokensBefore=12345,
        ),
        e("l1", "k1", "10:08:10", type="label", targetId="a5", label="bookmark"),
        e("i1", "l1", "10:08:20", type="session_info", name="Zephyr migration"),
        e("i2", "i1", "10:08:25", type="session_info", color=3),
        e("x1", "i2", "10:08:30", type="custom", customType="ext", data={"k": "customdatasecret"}),
        e(
            "cm",
            "x1",
            "10:08:40",
            type="custom_message",
            customType="ext",
            content="visible pelican note",
            display=True,
        ),
        e(
            "ch",
            "cm",
            "10:08:50",
            type="custom_message",
            customType="ext",
            content="hidden ibis note",
            display=False,
        ),
        msg("a7", "ch", "10:09:00", {"role": "user", "content": "after the compaction, lemur"}),
        e("f1", "a7", "10:09:30", type="future_entry_kind", payload="whatever"),
        msg(
            "a8",
            "f1",
            "10:10:00",
            {"role": "assistant", "content": [{"type": "text", "text": "lemur answer"}]},
        ),
        msg(
            "a9",
            "a8",
            "10:11:00",
            {
                "role": "bashExecution",
                "command": "echo bashcommandsecret",
                "output": "bashoutputsecret",
                "exitCode": 0,
            },
        ),
    ]


def test_v3_tree_active_branch_and_compaction(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "v3.jsonl", v3_entries())
    session = read_pi_session(path)
    data = session.data
    assert session.session_id == V3_ID
    assert session.unknown_entries == 1
    assert data["metadata"]["title"] == "Zephyr migration"
    assert data["metadata"]["pi_version"] == 3
    assert data["metadata"]["model"] == "gpt-9" and data["metadata"]["provider"] == "openai"
    assert session.leaf_id == session.active_leaf_id == "a9"

    archived = data["archived_messages"]
    assert [(m["role"], m["content"], m["metadata"]["pi_id"]) for m in archived] == [
        ("user", "plan the zephyr migration", "a1"),
        ("assistant", "we will use quokka adapters", "a2"),
        ("tool", "", "a3"),
        ("system", "tried the walrus path", "c0"),
    ]
    assert archived[2]["tool_call_id"] == "t1" and archived[2]["metadata"]["name"] == "read"
    active = data["messages"]
    assert recall.project(data)[0]["archived"] is True
    assert active[0]["content"] == f"{SUMMARY_PREFIX}\nwe planned the zephyr migration"
    assert active[0]["metadata"]["compacted_count"] == 4
    assert [(m["role"], m["content"], m["metadata"]["pi_id"]) for m in active[1:]] == [
        ("user", "here is the heron diagram", "a5"),
        ("assistant", "the heron looks fine", "a6"),
        ("system", "visible pelican note", "cm"),
        ("system", "", "ch"),
        ("user", "after the compaction, lemur", "a7"),
        ("assistant", "lemur answer", "a8"),
        ("tool", "", "a9"),
    ]
    assert active[1]["metadata"]["label"] == "bookmark"
    assert active[1]["metadata"]["images"] == 1
    assert active[1]["timestamp"] == pytest.approx(1741082760.0)  # 2025-03-04T10:06:00Z
    assert data["created_at"] == "2025-01-02T03:04:05+00:00"
    assert data["updated_at"].startswith("2025-03-04T10:10:00")

    hidden = read_pi_session(path, include_hidden=True)
    blob = json.dumps(hidden.data)
    for word in (
        "secretthoughtword",
        "argsecretpath",
        "tooloutputsecret",
        "bashcommandsecret",
        "bashoutputsecret",
        "hidden ibis note",
        "image/png",
    ):
        assert word in blob
        assert word not in json.dumps(data)
    assert "aW1hZ2VkYXRhc2VjcmV0" not in blob  # image bytes are never held


def test_v3_other_branch_is_reachable(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "v3.jsonl", v3_entries())
    session = read_pi_session(path)
    assert [(b.leaf_id, b.active) for b in session.branches] == [("a9", True), ("b2", False)]
    side = session.branches[1]
    assert side.fork_id == "a3"
    assert side.message_count == 2
    assert side.entry_count == 6  # i0 a1 a2 a3 + b1 b2
    assert side.preview == "alternative walrus plan"

    branch = read_pi_branch(path, "b2")
    assert branch.session_id == V3_ID
    assert branch.data["metadata"]["pi_active_branch"] is False
    assert branch.data["archived_messages"] == []
    assert [m["content"] for m in branch.data["messages"]] == [
        "plan the zephyr migration",
        "we will use quokka adapters",
        "",
        "alternative walrus plan",
        "walrus reply",
    ]
    with pytest.raises(KeyError):
        read_pi_branch(path, "no-such-entry")

    root = tmp_path / "pi"
    shutil.copytree(tmp_path, root, ignore=shutil.ignore_patterns("pi"))
    store = PiStore(root)
    assert store.search("zephyr")[0].session_id == V3_ID
    assert store.search("alternative") == []  # only on the side branch
    assert store.search("walrus")[0].snippet == "tried the walrus path"  # the branch summary
    assert [b.leaf_id for b in store.branches(V3_ID)] == ["a9", "b2"]
    side_view = store.projection(V3_ID, leaf_id="b2")
    assert side_view[-1]["content"] == "walrus reply"
    for word in (
        "secretthoughtword",
        "argsecretpath",
        "tooloutputsecret",
        "bashoutputsecret",
        "ibis",
        "customdatasecret",
        "aW1hZ2VkYXRhc2VjcmV0",
    ):
        assert store.search(word) == [], word
    full = store.projection(V3_ID, include_hidden=True)
    plain = store.projection(V3_ID)
    assert [(m["index"], m["content"]) for m in full] == [(m["index"], m["content"]) for m in plain]
    assert any(h.get("type") == "bash" for m in full for h in m["metadata"].get("hidden", []))


def test_v3_compaction_without_a_kept_entry_archives_everything_before_it(tmp_path: Path) -> None:
    entries = [
        header("v3b", version=3),
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "2025-03-04T10:00:00Z",
            "message": {"role": "user", "content": "old question"},
        },
        {
            "type": "compaction",
            "id": "k",
            "parentId": "u1",
            "timestamp": "2025-03-04T10:01:00Z",
            "summary": "summary text",
            "firstKeptEntryId": "gone",
            "tokensBefore": 5,
        },
        {
            "type": "message",
            "id": "u2",
            "parentId": "k",
            "timestamp": "2025-03-04T10:02:00Z",
            "message": {"role": "user", "content": "new question"},
        },
    ]
    data = read_pi_session(write_lines(tmp_path / "b.jsonl", entries)).data
    assert [m["content"] for m in data["archived_messages"]] == ["old question"]
    assert [m["content"] for m in data["messages"]] == [
        f"{SUMMARY_PREFIX}\nsummary text",
        "new question",
    ]
    assert recall.summary_of(data).archived_count == 1


def test_branching_appends_switch_the_active_branch_on_resume(tmp_path: Path) -> None:
    entries = v3_entries()
    path = write_lines(tmp_path / "v3.jsonl", entries)
    first = read_pi_session(path)
    # The user goes back to b2 and continues there: the last entry decides the active branch.
    more = {
        "type": "message",
        "id": "b3",
        "parentId": "b2",
        "timestamp": "2025-03-04T11:00:00Z",
        "message": {"role": "user", "content": "back on the walrus branch"},
    }
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(more) + "\n")
    grown = read_pi_session(path, prior=first.state)
    assert grown.resumed and grown.leaf_id == "b3"
    assert grown.data == read_pi_session(path).data
    assert grown.data["messages"][-1]["content"] == "back on the walrus branch"
    assert [b.leaf_id for b in grown.branches] == ["b3", "a9"]


# ---------------------------------------------------------------------- the store


def test_store_browse_filters_and_ids(pi_root: Path, shared_data: Path, tmp_path: Path) -> None:
    write_lines(pi_root / "--home-u-zephyr--" / "2025-03-04T10-00-00-000Z_x.jsonl", v3_entries())
    # A duplicate id (a copied file) and files that are not Pi sessions.
    shutil.copyfile(fixture_path(pi_root, LARGE, shared_data), pi_root / "--zz-copy--.jsonl")
    (pi_root / "notes.jsonl").write_text('{"kind": "not a session"}\n', encoding="utf-8")
    (pi_root / "empty.jsonl").write_text("", encoding="utf-8")
    (pi_root / "readme.txt").write_text("hello", encoding="utf-8")
    store = PiStore(pi_root)
    assert store.label == f"pi:{pi_root}"
    ids = sorted(s.session_id for s in store.summaries())
    expected = sorted(
        [raw_entries(shared_data / "pi" / n)[0]["id"] for n in (BEFORE, LARGE)] + [V3_ID]
    )
    assert ids == expected
    assert {s.source for s in store.summaries()} == {"pi"}
    assert [s.session_id for s in store.summaries(project="/home/u/zephyr")] == [V3_ID]
    assert len(store.summaries(project="/Users/badlogic")) == 2
    assert store.summaries(project="/Users/badlogic/workspaces/pi") == []
    assert store.projects() == [(PI_CWD, 2), ("/home/u/zephyr", 1)]
    recent = store.recent(limit=2)
    assert [s.session_id for s in recent] == [
        raw_entries(shared_data / "pi" / name)[0]["id"] for name in (BEFORE, LARGE)
    ]
    assert store.recent(limit=5, project=PI_CWD)[0].project == PI_CWD
    hits = store.search("zephyr", project=PI_CWD)
    assert hits == []

    assert store.session_exists(V3_ID)
    assert not store.session_exists("missing") and not store.session_exists("../../etc/passwd")
    got = store.get_session(V3_ID)
    assert isinstance(got, SessionData) and got.source_kind == "pi"
    assert got.metadata["title"] == "Zephyr migration"
    assert got.archived_messages[0].content == "plan the zephyr migration"
    assert store.get_session("missing").messages == []
    win = store.window(V3_ID, "5", window=1)
    assert [m["index"] for m in win] == [4, 5, 6]
    assert win[1]["content"] == "here is the heron diagram"
    with pytest.raises(KeyError):
        store.projection("missing")
    with pytest.raises(KeyError):
        store.branches("missing")
    # A file that grows is picked up (from where the cached read stopped).
    v3 = pi_root / "--home-u-zephyr--" / "2025-03-04T10-00-00-000Z_x.jsonl"
    with v3.open("a", encoding="utf-8") as fh:
        fh.write(
            json.dumps(
                {
                    "type": "message",
                    "id": "z1",
                    "parentId": "a9",
                    "timestamp": "2025-03-05T09:00:00Z",
                    "message": {"role": "user", "content": "one more capybara"},
                }
            )
            + "\n"
        )
    assert store.search("capybara")[0].session_id == V3_ID
    session = store.read(V3_ID)
    assert session is not None and session.resumed


def test_browsing_writes_nothing(pi_root: Path, shared_data: Path, isolated_home: Path) -> None:
    write_lines(pi_root / "--home-u-zephyr--" / "s.jsonl", v3_entries())
    before_pi = snapshot(pi_root)
    before_home = snapshot(isolated_home)
    store = PiStore(pi_root)
    for _ in range(2):
        for summary in store.recent(limit=50):
            sid = summary.session_id
            store.projection(sid)
            store.projection(sid, include_hidden=True)
            store.window(sid, 0)
            store.get_session(sid)
            for branch in store.branches(sid):
                store.projection(sid, leaf_id=branch.leaf_id)
        for query in ("agent session", "zephyr", "nothing-matches-this", "walrus"):
            store.search(query, limit=10)
        store.projects()
        store.session_exists("missing")
        for path in pi_root.rglob("*.jsonl"):
            read_pi_session(path, include_hidden=True)
    assert snapshot(pi_root) == before_pi
    assert snapshot(isolated_home) == before_home


def test_default_pi_dir(
    monkeypatch: pytest.MonkeyPatch, isolated_home: Path, tmp_path: Path
) -> None:
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    assert default_pi_dir() == isolated_home / ".pi" / "agent" / "sessions"
    assert PiStore().root == isolated_home / ".pi" / "agent" / "sessions"
    assert PiStore().summaries() == []  # a missing root is an empty store
    assert not (isolated_home / ".pi").exists()
    agent = tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    assert default_pi_dir() == agent / "sessions"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"sessionDir": str(tmp_path / "elsewhere")}))
    assert default_pi_dir() == tmp_path / "elsewhere"
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(tmp_path / "env"))
    assert default_pi_dir() == tmp_path / "env"


def test_cwd_matches() -> None:
    assert cwd_matches("/a/b", "/a/b")
    assert cwd_matches("/a/b/c", "/a/b")
    assert cwd_matches("/a/b/", "/a/b")
    assert not cwd_matches("/a/bc", "/a/b")
    assert not cwd_matches("/a/b/c", "/a/b", subdirs=False)
    assert not cwd_matches(None, "/a")
    assert cwd_matches("/x/y", "/")


# ---------------------------------------------------------------------- mixing stores


def test_one_query_over_praisonai_and_pi_ranks_together(
    pi_root: Path, shared_data: Path, tmp_path: Path
) -> None:
    pi = PiStore(pi_root)
    large = read_pi_session(fixture_path(pi_root, LARGE, shared_data))
    before = read_pi_session(fixture_path(pi_root, BEFORE, shared_data))
    contents = [m["content"].lower() for m in recall.project(large.data)]
    other = "\n".join(m["content"].lower() for m in recall.project(before.data))
    # A word two messages of one Pi session hold, and the other session does not.
    word = next(
        w
        for w in visible_words(shared_data / "pi" / LARGE, "user")
        if w not in other and sum(w in c for c in contents) == 2
    )
    pi_hits = pi.search(word)
    assert [h.session_id for h in pi_hits] == [large.session_id]
    assert pi_hits[0].score == 6.0

    praison = DefaultSessionStore(tmp_path / "praisonai-sessions")
    day = 86_400.0
    base = 1_750_000_000.0

    def session(sid: str, texts: list[str]) -> SessionData:
        return SessionData(
            session_id=sid,
            messages=[
                SessionMessage(
                    role="user" if i % 2 == 0 else "assistant", content=t, timestamp=base + i * day
                )
                for i, t in enumerate(texts)
            ],
            created_at="2025-06-15T00:00:00+00:00",
            updated_at="2025-06-20T00:00:00+00:00",
        )

    praison.write_session(
        session("high", [f"{word} one", f"{word} two", f"{word} three", "filler"])
    )
    praison.write_session(session("low", [f"just one {word}", "filler", "more filler"]))
    praison.write_session(session("none", ["nothing relevant here"]))

    group = StoreGroup([praison, pi])
    hits = group.search(word, limit=10)
    assert [(h.session_id, h.source) for h in hits] == [
        ("high", "praisonai"),
        (large.session_id, "pi"),
        ("low", "praisonai"),
    ]
    assert [h.score for h in hits] == [9.0, 6.0, 3.0]
    assert hits[1].store == pi.label and hits[0].store == praison.label
    assert group.session_exists(large.session_id)
    assert group.get_session(large.session_id).source_kind == "pi"
    around = group.window(large.session_id, hits[1].anchor_index, window=0)
    assert word in around[0]["content"].lower()
    assert {s.source for s in group.summaries()} == {"praisonai", "pi"}
    assert len(group.recent(limit=10)) == 5
