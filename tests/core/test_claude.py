"""Claude Code transcripts as a read-only source: the reader on real and on written files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from session_browser.core import recall
from session_browser.core.model import SUMMARY_PREFIX, hidden_parts
from session_browser.core.sources.claude import (
    claude_session_files,
    claude_summaries,
    default_claude_dir,
    read_claude_session,
    read_json_lines,
    sibling_subagents,
    subagent_files,
)

SPOTTER_ID = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
VIEWER_ID = "fe5e1c67-53e7-4862-81ae-d0e013e3270b"
SID = "11111111-2222-3333-4444-555555555555"
CWD = "/home/someone/project"


# ---------------------------------------------------------------------- writing files


class Transcript:
    """Lines of a Claude Code transcript, written the way Claude Code writes them."""

    def __init__(self, session_id: str = SID, prefix: str = "u", **extra: Any) -> None:
        self.session_id = session_id
        self.prefix = prefix
        self.extra = extra
        self.lines: list[dict[str, Any]] = []
        self.last: str | None = None
        self.clock = 0

    def _env(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.clock += 1
        uuid = f"{self.prefix}{len(self.lines):04d}"
        line = {
            "parentUuid": self.last,
            "isSidechain": False,
            "cwd": CWD,
            "sessionId": self.session_id,
            "version": "2.1.39",
            "gitBranch": "feature-x",
            "type": kind,
            "uuid": uuid,
            "timestamp": f"2026-02-12T14:{self.clock // 60:02d}:{self.clock % 60:02d}.000Z",
            **self.extra,
            **fields,
        }
        self.last = uuid
        self.lines.append(line)
        return line

    def prompt(self, text: Any, **fields: Any) -> None:
        self._env("user", message={"role": "user", "content": text}, **fields)

    def answer(self, mid: str, *blocks: dict[str, Any]) -> None:
        for block in blocks:  # one line per block, as Claude Code writes a response
            message = {"id": mid, "role": "assistant", "model": "m", "content": [block]}
            self._env("assistant", message=message, requestId=f"req-{mid}")

    def result(self, call_id: str, text: str, **fields: Any) -> None:
        block = {"type": "tool_result", "tool_use_id": call_id, "content": text}
        self._env(
            "user",
            message={"role": "user", "content": [block]},
            toolUseResult=fields.pop("toolUseResult", {"stdout": text}),
            **fields,
        )

    def raw(self, line: dict[str, Any]) -> None:
        self.lines.append(line)

    def system(self, subtype: str, **fields: Any) -> None:
        self._env("system", subtype=subtype, **fields)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in self.lines))
        return path


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def tool_use(call_id: str, name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": inp}


def snapshot(path: Path) -> dict[str, tuple[int, int, int, bytes]]:
    """Every file under ``path``: (inode, mode, mtime_ns, bytes)."""
    out: dict[str, tuple[int, int, int, bytes]] = {}
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            p = Path(dirpath) / name
            st = p.stat()
            out[str(p)] = (st.st_ino, st.st_mode, st.st_mtime_ns, p.read_bytes())
    return out


def contents(data: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in recall.project(data)]


def finds(data: dict[str, Any], query: str) -> recall.Candidate | None:
    return recall.classic_candidate(data, recall.ClassicQuery.parse(query), window=1)


# ---------------------------------------------------------------------- written files


def test_one_response_is_one_turn_and_tools_are_hidden(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("please count the zebrafish")
    t.answer(
        "msg_1",
        {"type": "thinking", "thinking": "ponder quetzalcoatl", "signature": ""},
        text("Counting now."),
        tool_use("toolu_1", "Bash", command="ls aquarium"),
        tool_use("toolu_2", "Read", file_path="/x"),
    )
    t.result("toolu_1", "output mentions xylophonist")
    t.result("toolu_2", "file body")
    t.answer("msg_2", text("There are"), text("seven zebrafish."))
    path = t.write(tmp_path / "p" / f"{SID}.jsonl")

    session = read_claude_session(path)
    assert contents(session.data) == [
        ("user", "please count the zebrafish"),
        ("assistant", "Counting now."),
        ("tool", ""),
        ("tool", ""),
        ("assistant", "There are\nseven zebrafish."),
    ]
    tools = [m for m in session.data["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tools] == ["toolu_1", "toolu_2"]
    assert [m["metadata"]["name"] for m in tools] == ["Bash", "Read"]
    assert "hidden" not in session.data["messages"][1]["metadata"]
    # Thinking and tool output are never searched ...
    assert finds(session.data, "xylophonist") is None
    assert finds(session.data, "quetzalcoatl") is None
    assert finds(session.data, "zebrafish") is not None

    # ... and shown on request, on the same coordinates.
    full = read_claude_session(path, include_hidden=True)
    assert contents(full.data) == contents(session.data)
    labels = [label for label, _ in hidden_parts(full.data["messages"][1])]
    assert labels == ["thinking", "tool call: Bash", "tool call: Read"]
    assert hidden_parts(full.data["messages"][2]) == [
        ("tool result: Bash", "output mentions xylophonist")
    ]
    assert session.session_id == SID and session.cwd == CWD
    meta = session.data["metadata"]
    assert meta["source"] == "claude" and meta["project"] == CWD
    assert meta["git_branch"] == "feature-x" and meta["model"] == "m"
    assert "resume_command" not in meta  # the line is built from the kind and the id


def test_bookkeeping_is_hidden_and_counted(tmp_path: Path) -> None:
    t = Transcript()
    t.raw({"type": "file-history-snapshot", "messageId": "x", "snapshot": {}})
    t.raw({"type": "progress", "data": {"type": "hook_progress"}, "uuid": "p1"})
    t.prompt("<local-command-caveat>Caveat: do not respond</local-command-caveat>", isMeta=True)
    t.prompt(
        "<command-name>/compact</command-name>\n<command-message>compact</command-message>\n"
        "<command-args>keep the parsers</command-args>"
    )
    t.prompt("<local-command-stdout>Compacted marmalade</local-command-stdout>")
    t.raw({"type": "queue-operation", "operation": "enqueue", "content": "later please"})
    t.prompt([text("[Request interrupted by user]")])
    t.raw({"type": "attachment", "attachment": {"type": "todo_reminder"}})
    t.system("turn_duration", durationMs=5)
    t.prompt([text("look at this"), {"type": "image", "source": {"media_type": "image/png"}}])
    t.prompt("<bash-input>git status</bash-input>")
    t.prompt("<bash-stdout>nothing to commit, porcupine</bash-stdout><bash-stderr></bash-stderr>")
    path = t.write(tmp_path / f"{SID}.jsonl")

    session = read_claude_session(path)
    assert contents(session.data) == [
        ("user", "/compact keep the parsers"),
        ("user", "look at this"),
        ("user", "!git status"),
    ]
    assert finds(session.data, "porcupine") is None
    assert session.data["messages"][0]["metadata"]["command"] == "/compact"
    assert session.data["messages"][1]["metadata"]["images"] == 1
    assert session.hidden_records == {
        "file-history-snapshot": 1,
        "progress": 1,
        "user/meta": 1,
        "user/command-output": 2,
        "queue-operation": 1,
        "user/interrupted": 1,
        "attachment": 1,
        "system/turn_duration": 1,
    }
    assert finds(session.data, "marmalade") is None
    full = read_claude_session(path, include_hidden=True)
    first = [label for label, _ in hidden_parts(full.data["messages"][0])]
    # What came before the first turn is shown with it.
    assert first[:3] == ["file snapshot", "progress", "hidden note"]
    assert "command output" in first and "queue" in first
    assert ("image", "image/png") in hidden_parts(full.data["messages"][1])


def test_compaction_is_the_archived_boundary(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("first question about pelicans")
    t.answer("m1", text("pelicans answer"))
    t.system(
        "compact_boundary",
        content="Conversation compacted",
        compactMetadata={"trigger": "auto", "preTokens": 1234},
    )
    t.prompt("summary one: pelicans were discussed", isCompactSummary=True)
    t.prompt("second question about herons")
    t.answer("m2", text("herons answer"))
    t.system(
        "compact_boundary",
        content="Conversation compacted",
        compactMetadata={"trigger": "manual", "preTokens": 999},
    )
    t.prompt("summary two: herons too", isCompactSummary=True)
    t.prompt("third question about storks")
    t.answer("m3", text("storks answer"))
    path = t.write(tmp_path / f"{SID}.jsonl")

    data = read_claude_session(path).data
    archived, active = data["archived_messages"], data["messages"]
    assert [m["content"] for m in archived] == [
        "first question about pelicans",
        "pelicans answer",
        f"{SUMMARY_PREFIX}\nsummary one: pelicans were discussed",
        "second question about herons",
        "herons answer",
    ]
    assert archived[2]["metadata"]["superseded"] is True
    summary = active[0]
    assert summary["role"] == "system"
    assert summary["content"] == f"{SUMMARY_PREFIX}\nsummary two: herons too"
    assert summary["metadata"]["compaction"] is True
    assert summary["metadata"]["compacted_count"] == 4
    assert summary["metadata"]["tokens_before"] == 999
    assert "superseded" not in summary["metadata"]
    assert [m["content"] for m in active[1:]] == ["third question about storks", "storks answer"]
    assert data["last_compaction"]["summary"] == "summary two: herons too"
    hit = finds(data, "herons answer")
    assert hit is not None and hit.hit.archived is True
    hit = finds(data, "storks answer")
    assert hit is not None and hit.hit.archived is False
    assert recall.summary_of(data).archived_count == 5


def test_subagents_are_found_in_their_parent(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("find the capybara versions")
    t.answer("m1", tool_use("toolu_task", "Task", prompt="look up capybara", subagent_type="x"))
    t.raw(
        {
            "type": "progress",
            "parentToolUseID": "toolu_task",
            "data": {"type": "agent_progress", "agentId": "abc123"},
        }
    )
    t.result("toolu_task", "the agent said 1.2", toolUseResult={"agentId": "abc123"})
    t.answer("m2", text("Capybara is at 1.2."))
    path = t.write(tmp_path / "proj" / f"{SID}.jsonl")
    sub = Transcript(agentId="abc123", isSidechain=True)
    sub.prompt("look up capybara")
    sub.answer("s1", text("The latest capybara release is nightjar-1.2"))
    sub.write(tmp_path / "proj" / SID / "subagents" / "agent-abc123.jsonl")
    summariser = Transcript(agentId="acompact-1", isSidechain=True)
    summariser.prompt("Your task is to create a detailed summary")
    summariser.answer("c1", text("a summary mentioning ocelotsummary"))
    summariser.write(tmp_path / "proj" / SID / "subagents" / "agent-acompact-1.jsonl")
    # An older sibling subagent file is not a session either.
    sub.write(tmp_path / "proj" / "agent-old.jsonl")

    assert claude_session_files(tmp_path) == [path]
    assert len(subagent_files(path)) == 2
    session = read_claude_session(path)
    assert contents(session.data) == [
        ("user", "find the capybara versions"),
        ("assistant", ""),
        ("user", "look up capybara"),
        ("assistant", "The latest capybara release is nightjar-1.2"),
        ("tool", ""),
        ("assistant", "Capybara is at 1.2."),
    ]
    projection = recall.project(session.data)
    assert [m["metadata"].get("subagent") for m in projection] == [
        None,
        None,
        "abc123",
        "abc123",
        None,
        None,
    ]
    assert projection[2]["metadata"]["subagent_type"] == "x"
    hit = finds(session.data, "nightjar")
    assert hit is not None and hit.hit.session_id == SID and hit.hit.anchor_index == 3
    assert finds(session.data, "ocelotsummary") is None
    assert [s["agent_id"] for s in session.subagents] == ["abc123"]
    without = read_claude_session(path, subagents=False)
    assert finds(without.data, "nightjar") is None
    # Older builds wrote the run beside the main file: found by the parent id it carries.
    siblings = sibling_subagents(tmp_path / "proj")
    assert siblings == {SID: [tmp_path / "proj" / "agent-old.jsonl"]}
    both = read_claude_session(path, sibling_agents=siblings[SID])
    assert [s["agent_id"] for s in both.subagents] == ["abc123", "old"]
    assert [c for _r, c in contents(both.data)].count(
        "The latest capybara release is nightjar-1.2"
    ) == 2


def test_inline_sidechains_attach_to_their_task_call(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("build two parts")
    t.answer(
        "m1",
        tool_use("toolu_a", "Task", prompt="build part A"),
        tool_use("toolu_b", "Task", prompt="build part B"),
    )
    for letter in "BA":  # the runs are written in another order than the calls
        t.last = None
        t.prompt(f"build part {letter}", isSidechain=True)
        t.answer(f"side{letter}", text(f"part {letter} built with wombat{letter}"))
        for line in t.lines[-2:]:
            line["isSidechain"] = True
    t.last = "u0001"
    t.result("toolu_a", "A done")
    t.result("toolu_b", "B done")
    path = t.write(tmp_path / f"{SID}.jsonl")
    roles = contents(read_claude_session(path).data)
    assert roles == [
        ("user", "build two parts"),
        ("assistant", ""),
        ("user", "build part A"),
        ("assistant", "part A built with wombatA"),
        ("tool", ""),
        ("user", "build part B"),
        ("assistant", "part B built with wombatB"),
        ("tool", ""),
    ]


@pytest.mark.parametrize(
    ("lines", "title"),
    [
        (
            [
                {"type": "summary", "summary": "S", "leafUuid": "x"},
                {"type": "ai-title", "aiTitle": "A"},
                {"type": "custom-title", "customTitle": "C"},
            ],
            "C",
        ),
        (
            [
                {"type": "summary", "summary": "S", "leafUuid": "x"},
                {"type": "ai-title", "aiTitle": "A"},
            ],
            "A",
        ),
        ([{"type": "summary", "summary": "S", "leafUuid": "x"}], "S"),
        ([], "the first prompt typed"),
    ],
)
def test_title_rule(tmp_path: Path, lines: list[dict[str, Any]], title: str) -> None:
    t = Transcript()
    t.prompt("<local-command-caveat>not typed</local-command-caveat>", isMeta=True)
    t.prompt("the first prompt typed")
    t.prompt("<command-name>/clear</command-name>")
    for line in lines:
        t.raw(line)
    session = read_claude_session(t.write(tmp_path / f"{SID}.jsonl"))
    assert session.title == title


def test_summary_lines_title_the_session_whose_leaf_they_name(tmp_path: Path) -> None:
    b = Transcript(session_id="b", prefix="b")
    b.prompt("the prompt of b")
    b.answer("mb", text("b answered"))
    a = Transcript(session_id="a", prefix="a")
    a.raw({"type": "summary", "summary": "About B", "leafUuid": "b0001"})
    a.prompt("the prompt of a")
    a.raw({"type": "summary", "summary": "Not a leaf anywhere", "leafUuid": "zzz"})
    path_a, path_b = a.write(tmp_path / "a.jsonl"), b.write(tmp_path / "b.jsonl")
    # Alone, a file's own summary line is the best guess ...
    assert read_claude_session(path_a).title == "Not a leaf anywhere"
    assert read_claude_session(path_b).title == "the prompt of b"
    # ... with the folder's summaries, each titles the session holding its leaf.
    summaries = claude_summaries(claude_session_files(tmp_path))
    assert summaries == {"b0001": "About B", "zzz": "Not a leaf anywhere"}
    assert read_claude_session(path_a, summaries=summaries).title == "the prompt of a"
    assert read_claude_session(path_b, summaries=summaries).title == "About B"


def test_overlong_lines_are_skipped_without_reading_them_whole(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    good = b'{"type": "user"}\n'
    huge = b'{"type": "user", "pad": "' + b"x" * 5000 + b'"}\n'
    path.write_bytes(good + huge + good + huge[:-1])
    lines = read_json_lines(path, max_line=100)
    assert len(lines.records) == 2 and lines.tail is None
    assert lines.skipped_lines == 1 and lines.long_lines == 1 and lines.partial_tail
    assert lines.end_offset == len(good + huge + good)
    assert len(read_json_lines(path).records) == 3  # the default limit is far larger
    # Reading on from a saved offset gives only what came after it.
    more = read_json_lines(path, lines.end_offset - len(good))
    assert len(more.records) == 1 and more.end_offset == lines.end_offset


def test_bad_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("before the damage")
    t.raw({"type": "brand-new-record", "foo": 1})
    t.answer("m1", text("an answer"))
    path = t.write(tmp_path / f"{SID}.jsonl")
    body = path.read_bytes()
    lines = body.split(b"\n")
    lines.insert(1, b'{"type": "user", "message": ')  # cut short
    lines.insert(2, b"[1, 2, 3]")  # JSON, not an object
    lines.insert(3, b'{"type": "user", "message": {"content": "\xff\xfe"}}')  # bad UTF-8
    whole = b"\n".join(lines)
    tail = json.dumps({"type": "user", "message": {"content": "still being written"}})
    path.write_bytes(whole + tail[:20].encode())
    session = read_claude_session(path)
    assert contents(session.data) == [("user", "before the damage"), ("assistant", "an answer")]
    assert session.skipped_lines == 4 and session.partial_tail
    assert session.unknown_records == {"brand-new-record": 1}
    assert session.end_offset == len(whole)
    # The finished line is read once it is whole.
    path.write_bytes(whole + tail.encode() + b"\n")
    session = read_claude_session(path)
    assert contents(session.data)[-1] == ("user", "still being written")
    assert session.skipped_lines == 3 and not session.partial_tail
    # Not a transcript at all: nothing, and no error.
    other = tmp_path / "other.jsonl"
    other.write_bytes(b"\x00\x01 not json\n")
    assert read_claude_session(other).data["messages"] == []


def test_a_grown_file_is_read_on_from_where_the_last_read_stopped(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("start the walrus job")
    t.answer("m1", text("first half"))
    path = t.write(tmp_path / f"{SID}.jsonl")
    first = read_claude_session(path)
    assert not first.resumed and first.end_offset == path.stat().st_size
    # The same response goes on after the saved offset; a compaction and a line still
    # being written follow.
    t.answer("m1", text("second half"), tool_use("toolu_1", "Bash", command="ls"))
    t.result("toolu_1", "listing")
    t.system("compact_boundary", content="Conversation compacted")
    t.prompt("walrus summary", isCompactSummary=True)
    t.prompt("go on with the walrus job")
    body = b"".join(json.dumps(line).encode() + b"\n" for line in t.lines)
    unfinished = json.dumps(
        {
            "type": "assistant",
            "uuid": "late",
            "message": {"id": "m9", "role": "assistant", "content": [text("late answer")]},
        }
    ).encode()
    with open(path, "ab") as fh:  # append, as Claude Code does
        fh.write(body[path.stat().st_size :] + unfinished)
    grown = read_claude_session(path, prior=first.state)
    whole = read_claude_session(path)
    assert grown.resumed and not whole.resumed
    assert grown.data == whole.data
    assert contents(grown.data)[-1] == ("assistant", "late answer")
    assert grown.end_offset == len(body)
    assert ("assistant", "first half\nsecond half") in contents(grown.data)
    # The unfinished line was used but not kept: once whole, it is read once.
    with open(path, "ab") as fh:
        fh.write(b"\n")
    done = read_claude_session(path, prior=grown.state)
    assert done.resumed and done.data == read_claude_session(path).data
    assert [c for _r, c in contents(done.data)].count("late answer") == 1
    # A state is taken over by the read that resumes it: used again, the file is read whole.
    again = read_claude_session(path, prior=grown.state)
    assert not again.resumed and again.data == done.data
    # A rewritten file (other first bytes) is read from the start.
    t.lines[0]["message"]["content"] = "start the narwhal job"
    t.write(path)
    rewritten = read_claude_session(path, prior=done.state)
    assert not rewritten.resumed
    assert contents(rewritten.data)[0] == ("user", "start the narwhal job")
    # Another include_hidden is another reading.
    assert not read_claude_session(path, prior=rewritten.state, include_hidden=True).resumed


def test_reading_changes_nothing(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("hello")
    t.answer("m1", text("hi"), tool_use("toolu_task", "Task", prompt="go"))
    t.result("toolu_task", "done", toolUseResult={"agentId": "a1"})
    path = t.write(tmp_path / "proj" / f"{SID}.jsonl")
    Transcript(agentId="a1").write(tmp_path / "proj" / SID / "subagents" / "agent-a1.jsonl")
    before = snapshot(tmp_path)
    read_claude_session(path, include_hidden=True)
    claude_session_files(tmp_path)
    assert snapshot(tmp_path) == before


def test_default_dir_and_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    assert default_claude_dir() == Path.home() / ".claude" / "projects"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    assert default_claude_dir() == tmp_path / "cc" / "projects"
    assert claude_session_files() == []


# ---------------------------------------------------------------------- real transcripts


def raw_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def test_spotter_session(shared_data: Path) -> None:
    root = shared_data / "claude" / "spotter"
    path = root / f"{SPOTTER_ID}.jsonl"
    raw = raw_lines(path)
    sub_raw = raw_lines(root / SPOTTER_ID / "subagents" / "agent-aac57f5.jsonl")
    boundary = next(i for i, o in enumerate(raw) if o.get("subtype") == "compact_boundary")
    summary_line = raw[boundary + 1]
    assert summary_line["isCompactSummary"] is True

    def ids(lines: list[dict[str, Any]]) -> set[str]:
        return {o["message"]["id"] for o in lines if o["type"] == "assistant"}

    def results(lines: list[dict[str, Any]]) -> int:
        return sum(
            1
            for o in lines
            if o["type"] == "user" and isinstance(o["message"]["content"], list)
            for b in o["message"]["content"]
            if b.get("type") == "tool_result"
        )

    session = read_claude_session(path)
    data = session.data
    projection = recall.project(data)
    roles = [m["role"] for m in projection]
    assert session.session_id == SPOTTER_ID
    assert session.skipped_lines == 0 and not session.partial_tail and not session.unknown_records
    assert session.end_offset == path.stat().st_size
    # One assistant turn per API response, main thread and subagent.
    assert roles.count("assistant") == len(ids(raw)) + len(ids(sub_raw)) == 220
    assert roles.count("tool") == results(raw) + results(sub_raw) == 242 + 12
    # Typed prompts: the opening task, /compact, "continue implementation"; + the Task prompt.
    users = [m["content"] for m in projection if m["role"] == "user"]
    assert users[0].startswith("Work on bead spotter-4te")
    assert users[1:] == [
        sub_raw[0]["message"]["content"],
        "/compact and continue with the reamining tasks",
        "continue implementation",
    ]
    assert session.hidden_records["progress"] == 1697 + 12
    assert session.hidden_records["file-history-snapshot"] == 26
    # The compaction: everything before the boundary is archived.
    archived_ids = ids(raw[:boundary]) | ids(sub_raw)
    archived = data["archived_messages"]
    assert sum(1 for m in archived if m["role"] == "assistant") == len(archived_ids)
    assert len(archived) == 303
    assert (
        data["messages"][0]["content"] == f"{SUMMARY_PREFIX}\n{summary_line['message']['content']}"
    )
    assert data["messages"][0]["metadata"]["compacted_count"] == len(archived)
    assert (
        data["messages"][0]["metadata"]["tokens_before"]
        == raw[boundary]["compactMetadata"]["preTokens"]
    )
    # The subagent's answer is found in the parent, between the Task call and its result.
    final = sub_raw[-1]["message"]["content"][0]["text"]
    hit = finds(data, final[:60])
    assert hit is not None and projection[hit.hit.anchor_index]["metadata"]["subagent"] == "aac57f5"
    assert projection[hit.hit.anchor_index + 1]["tool_call_id"] == "toolu_01Hf8v1Za7y4af8VUwSR4CXU"
    assert [s["agent_id"] for s in session.subagents] == ["aac57f5"]
    meta = data["metadata"]
    assert meta["git_branch"] == "spotter-4te"
    assert meta["cwd"] == "/home/USER/projects/spotter-worktrees/spotter-4te" == meta["project"]
    assert session.title.startswith("Work on bead spotter-4te")
    assert claude_session_files(root) == [path, root / "tool_heavy.jsonl"]
    # Shown with its hidden parts, the transcript keeps its coordinates.
    full = read_claude_session(path, include_hidden=True)
    assert contents(full.data) == contents(data)
    assert sum(len(hidden_parts(m)) for m in recall.project(full.data)) > 1697 + 242 * 2


def test_spotter_hidden_words_are_not_searched(shared_data: Path) -> None:
    path = shared_data / "claude" / "spotter" / "tool_heavy.jsonl"
    session = read_claude_session(path, include_hidden=True)
    visible = " ".join(m["content"] for m in recall.project(session.data)).lower()
    hidden = " ".join(
        text for m in recall.project(session.data) for _label, text in hidden_parts(m)
    ).lower()
    words = sorted({w for w in hidden.split() if w.isalpha() and len(w) > 9} - set(visible.split()))
    assert len(words) > 5
    for word in words[:10]:
        if word not in visible:
            assert finds(session.data, word) is None, word
    assert contents(session.data)[:1] == [("user", "start phoenix in background")]
    assert ("user", "/mcp") in contents(session.data)
    assert session.hidden_records["queue-operation"] == 2
    assert session.hidden_records["user/interrupted"] == 2
    assert session.session_id == "d6e0bada-1959-4eec-a9d2-0bfade768d8f"


def test_older_session_with_inline_subagents(shared_data: Path) -> None:
    path = shared_data / "claude" / "claude-code-viewer" / f"{VIEWER_ID}.jsonl"
    raw = raw_lines(path)
    session = read_claude_session(path)
    projection = recall.project(session.data)
    assert session.title == "Empty Repo Setup: CLAUDE.md Foundation Created"
    assert len(session.subagents) == 5
    side_ids = {o["message"]["id"] for o in raw if o["type"] == "assistant" and o["isSidechain"]}
    main_ids = {o["message"]["id"] for o in raw if o["type"] == "assistant"} - side_ids
    subs = [m for m in projection if m["metadata"].get("subagent")]
    assert sum(1 for m in subs if m["role"] == "assistant") == len(side_ids)
    assert sum(1 for m in projection if m["role"] == "assistant") == len(side_ids | main_ids)
    # Each run sits just before the result of the Task call whose prompt it was given.
    tasks = {
        b["id"]: b["input"]["prompt"]
        for o in raw
        if o["type"] == "assistant"
        for b in o["message"]["content"]
        if b.get("type") == "tool_use" and b["name"] == "Task"
    }
    assert len(tasks) == 5
    for i, m in enumerate(projection):
        if (
            m["role"] == "tool"
            and m.get("tool_call_id") in tasks
            and not m["metadata"].get("subagent")
        ):
            start = i - 1
            while (
                projection[start - 1]["metadata"].get("subagent")
                == projection[i - 1]["metadata"]["subagent"]
            ):
                start -= 1
            assert projection[start]["content"] == tasks[m["tool_call_id"]].strip()
    assert session.data["archived_messages"] == []


def test_catalogue_of_record_types(shared_data: Path) -> None:
    path = shared_data / "claude" / "agent-sessions" / "catalogue.jsonl"
    raw = raw_lines(path)
    session = read_claude_session(path)
    custom = [o["customTitle"] for o in raw if o["type"] == "custom-title"]
    assert session.data["metadata"]["title"] == custom[-1]
    assert session.unknown_records == {} and session.skipped_lines == 0
    assert session.hidden_records["attachment"] == sum(1 for o in raw if o["type"] == "attachment")
    archived = session.data["archived_messages"]
    # Two boundaries: the earlier one is a superseded marker among the archived turns.
    assert sum(1 for m in archived if m["metadata"].get("superseded")) == 1
    assert session.data["messages"][0]["metadata"]["compaction"] is True
