"""Claude Code and Codex sources under the index: a transcript being written is read on from
where the last read stopped while the same store stays open; another process reads it whole;
subagent files and titles reach their parent; files that are no session are skipped with a
reason."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from session_browser.core import recall
from session_browser.core.model import hidden_parts
from session_browser.core.open import index_store, scan_store
from session_browser.core.sources import SOURCES
from session_browser.core.sources.claude import read_claude_session
from session_browser.core.sources.claude.source import ClaudeSource
from session_browser.core.sources.codex import read_codex_session
from session_browser.core.sources.codex_source import CodexSource
from session_browser.core.sources.resume import KEEP_STATES, ResumeStates
from tests.core.test_claude import Transcript, text, tool_use
from tests.core.test_codex import Rollout, rollout_path
from tests.core.test_readonly import snapshot

SID = "11111111-2222-3333-4444-555555555555"
TID = "019e1625-789d-76c0-80ab-3724b5ddb799"


def append(path: Path, lines: list[dict[str, Any]]) -> None:
    with open(path, "ab") as fh:
        fh.write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))


def found(store: Any, query: str) -> list[str]:
    return [h.session_id for h in store.search(query, limit=5)]


def contents(data: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in recall.project(data)]


def test_a_growing_claude_transcript_is_read_on(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    t = Transcript(SID)
    t.prompt("where is the heron config")
    t.answer("m1", text("The heron config is in etc."))
    path = t.write(root / "proj" / f"{SID}.jsonl")
    store = index_store(SOURCES["claude"], root)
    try:
        assert found(store, "heron") == [SID]
        assert store.last_reads == {"resumed": 0, "full": 1}
        n = len(t.lines)
        t.prompt("and the egret config")
        t.answer("m2", text("The egret config sits beside it."))
        append(path, t.lines[n:])
        store.reconcile()
        assert found(store, "egret") == [SID]
        assert store.last_reads == {"resumed": 1, "full": 0}
        # What was read on is what a whole read gives.
        assert contents(store.get_session(SID).to_dict()) == contents(
            read_claude_session(path).data
        )
    finally:
        store.close()
    # Another store (another process) holds no state: the file is read whole.
    n = len(t.lines)
    t.prompt("and the ibis")
    t.answer("m3", text("The ibis config is gone."))
    append(path, t.lines[n:])
    again = index_store(SOURCES["claude"], root)
    try:
        assert found(again, "ibis") == [SID]
        assert again.last_reads == {"resumed": 0, "full": 1}
    finally:
        again.close()


def test_a_growing_codex_rollout_is_read_on(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    r = Rollout(TID)
    r.prompt("what does the plover module do")
    r.answer("The plover module parses feeds.")
    path = r.write(rollout_path(root))
    store = index_store(SOURCES["codex"], root)
    try:
        assert found(store, "plover") == [TID]
        n = len(r.lines)
        r.prompt("and the sandpiper module")
        r.answer("The sandpiper module caches them.")
        append(path, r.lines[n:])
        store.reconcile()
        assert found(store, "sandpiper") == [TID]
        assert store.last_reads == {"resumed": 1, "full": 0}
        assert contents(store.get_session(TID).to_dict()) == contents(read_codex_session(path).data)
    finally:
        store.close()


def test_states_are_given_once_and_only_for_their_token() -> None:
    states: ResumeStates[str] = ResumeStates(keep=2)
    token = states.keep("a", "state-a")
    assert states.take("a", b"other") is None
    token = states.keep("a", "state-a")
    assert states.take("a", token) == "state-a"
    assert states.take("a", token) is None  # used once
    ta = states.keep("a", "1")
    states.keep("b", "2")
    states.keep("c", "3")  # "a" is dropped: two kept at most
    assert states.take("a", ta) is None
    assert ResumeStates[str]().take("a", token) is None  # another instance's token


def test_claude_source_files_ids_and_skips(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    t = Transcript(SID)
    t.prompt("tell me about the kestrel")
    t.answer("m1", text("The kestrel hovers."))
    path = t.write(root / "proj" / "not-its-id.jsonl")
    (root / "proj" / "junk.jsonl").write_bytes(b"\xff\xfe not json\n")
    only_titles = root / "proj" / "titles.jsonl"
    only_titles.write_text(
        json.dumps({"type": "summary", "summary": "old", "leafUuid": "x"}) + "\n",
        encoding="utf-8",
    )
    sub = Transcript(SID, agentId="a1", isSidechain=True)
    sub.prompt("look")
    sub.answer("s1", text("seen"))
    sub_path = sub.write(root / "proj" / "not-its-id" / "subagents" / "agent-a1.jsonl")
    before = snapshot(root)
    source = ClaudeSource(root)
    files = source.list_files()
    assert sorted(files) == ["proj/junk.jsonl", "proj/not-its-id.jsonl", "proj/titles.jsonl"]
    own = path.stat()
    assert files["proj/not-its-id.jsonl"] == (
        own.st_size + sub_path.stat().st_size,
        max(own.st_mtime_ns, sub_path.stat().st_mtime_ns),
        own.st_ino,
    )
    assert source.identities(["proj/not-its-id/subagents/agent-a1.jsonl", "nope.jsonl"]) == {
        "proj/not-its-id/subagents/agent-a1.jsonl": None,
        "nope.jsonl": None,
    }
    doc = source.parse("proj/not-its-id.jsonl", files["proj/not-its-id.jsonl"], None)
    assert not hasattr(doc, "reason") and doc.data["session_id"] == SID  # type: ignore[union-attr]
    junk = source.parse("proj/junk.jsonl", files["proj/junk.jsonl"], None)
    assert getattr(junk, "reason", "").startswith("no conversation: 1 line(s) are not JSON")
    titles = source.parse("proj/titles.jsonl", files["proj/titles.jsonl"], None)
    assert getattr(titles, "reason", "").startswith("no conversation")
    assert snapshot(root) == before


def test_codex_titles_follow_the_session_index(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    r = Rollout(TID)
    r.prompt("first prompt here")
    r.answer("an answer")
    r.write(rollout_path(home / "sessions"))
    source = CodexSource(home / "sessions")
    (name,) = source.list_files()
    assert source.load(name)["metadata"].get("title") is None  # type: ignore[index]
    (home / "session_index.jsonl").write_text(
        json.dumps({"id": TID, "thread_name": "Named thread"}) + "\n", encoding="utf-8"
    )
    assert source.load(name)["metadata"]["title"] == "Named thread"  # type: ignore[index]


def test_summary_lines_title_the_file_whose_turn_they_name(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    named = Transcript("aaaaaaaa-0000-0000-0000-000000000001", prefix="a")
    named.prompt("set up the aviary")
    named.answer("m1", text("The aviary is set up."))
    named.write(root / "proj" / "a.jsonl")
    leaf = named.lines[-1]["uuid"]
    later = Transcript("bbbbbbbb-0000-0000-0000-000000000002", prefix="b")
    later.raw({"type": "summary", "summary": "Aviary setup", "leafUuid": leaf})
    later.prompt("go on with the aviary")
    later.answer("m2", text("Going on."))
    later.write(root / "proj" / "b.jsonl")
    titled = Transcript("cccccccc-0000-0000-0000-000000000003", prefix="c")
    titled.raw({"type": "summary", "summary": "Aviary setup", "leafUuid": "c0000"})
    titled.prompt("a third look")
    titled.answer("m3", text("Looked."))
    titled.raw({"type": "ai-title", "aiTitle": "Third look", "sessionId": titled.session_id})
    titled.write(root / "proj" / "c.jsonl")
    source = ClaudeSource(root)
    files = source.list_files()
    titles = {}
    for name, ident in files.items():
        doc = source.parse(name, ident, None)
        titles[name] = recall.session_title(doc.data)  # type: ignore[union-attr]
    assert titles == {
        "proj/a.jsonl": "Aviary setup",  # named by a summary line of another file
        "proj/b.jsonl": "go on with the aviary",  # its summary line names another file's turn
        "proj/c.jsonl": "Third look",  # an ai-title comes first
    }


def test_a_copy_for_a_worker_reads_no_file_again_for_summary_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first build's worker parses with a copy of the source: the folders' summary lines
    are learned before it is made (each file read for them once, in the index's process),
    so the copy titles every session the same without reading any file for them."""
    import pickle

    from session_browser.core.sources.claude import source as claude_source

    root = tmp_path / "projects"
    named = Transcript("aaaaaaaa-0000-0000-0000-000000000001", prefix="a")
    named.prompt("set up the aviary")
    named.answer("m1", text("The aviary is set up."))
    named.write(root / "proj" / "a.jsonl")
    later = Transcript("bbbbbbbb-0000-0000-0000-000000000002", prefix="b")
    later.raw({"type": "summary", "summary": "Aviary setup", "leafUuid": named.lines[-1]["uuid"]})
    later.prompt("go on with the aviary")
    later.write(root / "proj" / "b.jsonl")
    source = ClaudeSource(root)
    files = source.list_files()
    source.learn_for_copies()
    copy = pickle.loads(pickle.dumps(source))
    read: list[Any] = []
    learn = claude_source.claude_summaries
    monkeypatch.setattr(
        claude_source, "claude_summaries", lambda paths: read.append(paths) or learn(paths)
    )
    titles = {}
    for name, ident in files.items():
        doc = copy.parse(name, ident, None)
        titles[name] = recall.session_title(doc.data)  # type: ignore[union-attr]
    assert titles == {"proj/a.jsonl": "Aviary setup", "proj/b.jsonl": "go on with the aviary"}
    assert read == []


def test_the_viewer_gets_hidden_parts_on_request(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    t = Transcript(SID)
    t.prompt("list the files")
    t.answer("m1", tool_use("toolu_ls", "Bash", command="ls"))
    t.result("toolu_ls", "zanzibarquux.txt")
    t.answer("m2", text("One file."))
    t.write(root / "proj" / f"{SID}.jsonl")
    home = tmp_path / "codex"
    r = Rollout(TID)
    r.prompt("run it")
    r.item("function_call", name="shell", arguments="{}", call_id="c1")
    r.item("function_call_output", call_id="c1", output="marmalizer.log")
    r.answer("Done.")
    r.write(rollout_path(home / "sessions"))
    for kind, root_dir, sid, word in (
        ("claude", root, SID, "zanzibarquux"),
        ("codex", home / "sessions", TID, "marmalizer"),
    ):
        kind_row = SOURCES[kind]
        for store in (scan_store(kind_row, root_dir), index_store(kind_row, root_dir)):
            plain = store.projection(sid)  # type: ignore[attr-defined]
            full = store.projection(sid, include_hidden=True)  # type: ignore[attr-defined]
            assert [m["content"] for m in full] == [m["content"] for m in plain]
            assert not any(hidden_parts(m) for m in plain)
            shown = " ".join(text for m in full for _label, text in hidden_parts(m))
            assert word in shown, (kind, type(store).__name__)
            close = getattr(store, "close", None)
            if close is not None:
                close()


def test_read_on_states_outlive_a_larger_reconcile(tmp_path: Path) -> None:
    """A reconcile that reads more files than states are kept keeps those read last (the
    newest: files are read oldest first); a file whose state went is read whole once, and
    read on from then on. A fresh process has no state: its first read of a file is whole
    (what the benchmark's update phase sees)."""
    root = tmp_path / "projects"
    paths: list[tuple[Transcript, Path]] = []
    for i in range(KEEP_STATES + 4):
        sid = f"11111111-2222-3333-4444-{i:012d}"
        t = Transcript(sid)
        t.prompt(f"question number {i}")
        t.answer(f"m{i}", text(f"answer number {i}"))
        path = t.write(root / "proj" / f"{sid}.jsonl")
        os.utime(path, ns=(10**18 + i * 10**9, 10**18 + i * 10**9))  # oldest first
        paths.append((t, path))
    store = index_store(SOURCES["claude"], root)
    try:
        assert store.last_reads == {"resumed": 0, "full": len(paths)}

        def grow(k: int, word: str) -> dict[str, int]:
            t, path = paths[k]
            n = len(t.lines)
            t.prompt(f"and the {word}")
            append(path, t.lines[n:])
            store.reconcile()
            assert found(store, word) == [t.session_id]
            return dict(store.last_reads)

        assert grow(-1, "kestrel") == {"resumed": 1, "full": 0}  # read last: kept
        assert grow(0, "merlin") == {"resumed": 0, "full": 1}  # read first: its state went
        assert grow(0, "hobby") == {"resumed": 1, "full": 0}  # ... and is kept again
    finally:
        store.close()
