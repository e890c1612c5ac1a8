"""``in:tools``: a phrase that only a tool call, a tool result or reasoning holds finds nothing
by default and is found with the opt-in, anchored at the turn it belongs to; the index and the
scan (``--no-index``) agree, on generated transcripts and on the real ones."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from session_browser.core import recall
from session_browser.core.hidden import HIDDEN_ITEM_CHARS, as_written
from session_browser.core.model import SessionHit
from session_browser.core.open import index_store, scan_store
from session_browser.core.query import parse_query
from session_browser.core.sources import SOURCES
from tests.core.test_claude import Transcript, text, tool_use
from tests.core.test_codex import Rollout, rollout_path
from tests.core.test_pi import V3_ID, v3_entries, write_lines

SID = "11111111-2222-3333-4444-555555555555"
TID = "019e1625-789d-76c0-80ab-3724b5ddb799"
SPOTTER = "spotter/tool_heavy.jsonl"
CODEMIE = (
    "codemie-code/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
)


def hits(store: Any, query: str) -> list[SessionHit]:
    """What a search shows: the index ranks by relevance, a scan (``--no-index``) reads the
    query language as the app and the CLI do."""
    if hasattr(store, "relevance_candidates"):
        return list(store.search(query, limit=5))
    return recall.rank(store.search_candidates(query, window=5, language=True), 5)


def stores(kind: str, root: Path) -> list[Any]:
    row = SOURCES[kind]
    return [scan_store(row, root), index_store(row, root)]


def close(store: Any) -> None:
    closer = getattr(store, "close", None)
    if closer is not None:
        closer()


def check(kind: str, root: Path, sid: str, phrase: str, role: str = "tool") -> None:
    """``phrase`` is found only with ``in:tools``, in session ``sid`` at a turn of ``role``,
    by the index and by the scan alike (and the prose still finds what it found)."""
    seen: list[list[tuple[str, int]]] = []
    for store in stores(kind, root):
        try:
            assert hits(store, phrase) == [], (kind, type(store).__name__)
            found = hits(store, f"{phrase} in:tools")
            assert [h.session_id for h in found] == [sid], (kind, type(store).__name__)
            hit = found[0]
            at = hit.anchor_index
            turn = next(m for m in hit.messages if m.get("index", at) == at)
            assert turn["role"] == role, (kind, type(store).__name__, turn)
            words = parse_query(phrase).all_tokens
            assert all(w in hit.snippet.lower() for w in words), hit.snippet
            seen.append([(h.session_id, h.anchor_index) for h in found])
        finally:
            close(store)
    assert seen[0] == seen[1], f"{kind}: the scan and the index disagree"


def test_a_tool_result_is_found_only_with_in_tools(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    t = Transcript(SID)
    t.prompt("list the files")
    t.answer("m1", tool_use("toolu_ls", "Bash", command="ls -la quetzalcoatl"))
    t.result("toolu_ls", "zanzibarquux.txt 4096 bytes")
    t.answer("m2", {"type": "thinking", "thinking": "the ocelotplan is simple"}, text("One file."))
    t.write(root / "proj" / f"{SID}.jsonl")
    check("claude", root, SID, '"zanzibarquux txt"')
    check("claude", root, SID, "quetzalcoatl", role="assistant")  # a tool call's arguments
    check("claude", root, SID, "ocelotplan", role="assistant")  # reasoning

    home = tmp_path / "codex" / "sessions"
    r = Rollout(TID)
    r.prompt("run it")
    r.item("function_call", name="shell", arguments='{"cmd": "make"}', call_id="c1")
    r.item("function_call_output", call_id="c1", output="marmalizer.log written")
    r.answer("Done.")
    r.write(rollout_path(home))
    check("codex", home, TID, '"marmalizer log"')

    pi = tmp_path / "pi" / "--home-u-zephyr--"
    write_lines(pi / "2025-03-04T10-00-00-000Z_v3.jsonl", v3_entries())
    check("pi", tmp_path / "pi", V3_ID, "tooloutputsecret")


def test_words_after_an_escape_in_a_tool_calls_arguments_are_words(tmp_path: Path) -> None:
    # A tool call's arguments are searched as JSON text, where a newline in a string is the
    # two characters backslash and n: "set -e\\ntrap" was the words "set", "e", "ntrap".
    root = tmp_path / "projects"
    t = Transcript(SID)
    t.prompt("write the hook")
    script = 'set -euo pipefail\ntrapdoorword \'exit 0\' ERR\n\tindentedword "quotedword"'
    t.answer("m1", tool_use("toolu_w", "Write", file_path="/h.sh", content=script))
    t.result("toolu_w", "File created")
    t.answer("m2", text("Written."))
    t.write(root / "proj" / f"{SID}.jsonl")
    for word in ("trapdoorword", "indentedword", "quotedword"):
        check("claude", root, SID, word, role="assistant")
    for store in stores("claude", root):
        try:
            assert hits(store, "ntrapdoorword in:tools") == []
        finally:
            close(store)


def test_as_written_undoes_json_escapes_only() -> None:
    assert as_written('{"c": "a\\nb \\"q\\" \\\\n \\u00e9 \\u0007 \\ud83d"}') == (
        '{"c": "a\nb "q" \\n é    "}'
    )
    assert as_written("plain \\n text") == "plain \\n text"  # no JSON: as it is
    as_written('["\\udc00"]').encode("utf-8")  # (no lone surrogate comes out)


def test_a_long_tool_result_is_searched_up_to_the_cap(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    t = Transcript(SID)
    t.prompt("read the log")
    t.answer("m1", tool_use("toolu_cat", "Bash", command="cat big.log"))
    filler = "lorem " * (HIDDEN_ITEM_CHARS // 6 + 10)
    t.result("toolu_cat", f"headword {filler} tailword")
    t.answer("m2", text("Read it."))
    t.write(root / "proj" / f"{SID}.jsonl")
    for store in stores("claude", root):
        try:
            assert [h.session_id for h in hits(store, "headword in:tools")] == [SID]
            assert hits(store, "tailword in:tools") == []  # past the cap: not searched
        finally:
            close(store)


def test_the_filters_still_apply_with_in_tools(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    t = Transcript(SID)
    t.prompt("list the files")
    t.answer("m1", tool_use("toolu_ls", "Bash", command="ls"))
    t.result("toolu_ls", "zanzibarquux.txt")
    t.answer("m2", text("One file."))
    t.write(root / "proj" / f"{SID}.jsonl")
    for store in stores("claude", root):
        try:
            assert len(hits(store, "zanzibarquux in:tools role:tool")) == 1
            assert hits(store, "zanzibarquux in:tools role:user") == []
            assert hits(store, "zanzibarquux in:tools archived:yes") == []
        finally:
            close(store)


@pytest.mark.parametrize(
    ("kind", "name", "sid", "phrase"),
    [
        ("claude", SPOTTER, None, '"Socket.V2.JSONSerializer"'),
        ("codex", CODEMIE, TID, "providerregistry"),
    ],
)
def test_real_transcripts(
    shared_data: Path, tmp_path: Path, kind: str, name: str, sid: str | None, phrase: str
) -> None:
    root = tmp_path / kind
    (root / name).parent.mkdir(parents=True)
    shutil.copy2(shared_data / kind / name, root / name)
    source = SOURCES[kind].source(root)
    data = source.load(name)
    assert data is not None
    check(kind, root, sid or str(data["session_id"]), phrase)


def test_codex_forks_and_subagents_fold_into_their_parent(tmp_path: Path) -> None:
    home = tmp_path / "sessions"
    parent = Rollout(TID)
    parent.prompt("plan the pelican rollout")
    parent.answer("The pelican rollout has three steps.")
    parent.write(rollout_path(home))
    fork_id = "019e1625-789d-76c0-80ab-000000000002"
    fork = Rollout(fork_id, forked_from_id=TID)
    fork.prompt("plan the pelican rollout again, faster")
    fork.answer("A faster pelican rollout.")
    fork.write(home / "2026" / "05" / "11" / f"rollout-2026-05-11T08-30-00-{fork_id}.jsonl")
    sub_id = "019e1625-789d-76c0-80ab-000000000003"
    spawn = {"parent_thread_id": TID, "depth": 1}
    sub = Rollout(sub_id, source={"subagent": {"thread_spawn": spawn}})
    sub.prompt("check the pelican rollout steps")
    sub.answer("The pelican steps check out.")
    sub.write(home / "2026" / "05" / "11" / f"rollout-2026-05-11T08-40-00-{sub_id}.jsonl")
    other = Rollout("019e1625-789d-76c0-80ab-000000000004")
    other.prompt("the pelican mascot colours")
    other.answer("Pelican white.")
    other.write(home / "2026" / "05" / "11" / "rollout-2026-05-11T09-00-00-other.jsonl")
    for store in stores("codex", home):
        try:
            ids = [h.session_id for h in hits(store, "pelican")]
            # One hit for the thread with its fork and subagent, one for the other thread.
            assert len(ids) == 2, (type(store).__name__, ids)
            assert "019e1625-789d-76c0-80ab-000000000004" in ids
        finally:
            close(store)
