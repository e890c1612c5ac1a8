"""A Claude Code or Codex line whose fields have the wrong types is an unknown record,
counted, in every path that reads one (the reader, the index's parse, the scanning store's
search, recent and show, the session id a main file carries), never a crash such as
``unhashable type: 'list'``: table-driven over field x wrong type."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from session_browser.core.sources.base import SessionDoc
from session_browser.core.sources.claude import read_claude_session
from session_browser.core.sources.claude.source import ClaudeSource, first_session_id
from session_browser.core.sources.codex import read_codex_session
from session_browser.core.sources.codex_source import CodexSource
from session_browser.core.sources.scan import SourceStore
from tests.core.test_claude import SID, Transcript, text
from tests.core.test_codex import TID, Rollout, rollout_path

WRONG: list[Any] = [["x"], {"a": 1}, 7, True]

CLAUDE_FIELDS = [
    ("type",),
    ("message",),
    ("message", "content"),
    ("timestamp",),
    ("uuid",),
    ("parentUuid",),
    ("sessionId",),
    ("cwd",),
    ("isSidechain",),
    ("agentId",),
]
CODEX_FIELDS = [
    ("type",),
    ("payload",),
    ("payload", "type"),
    ("payload", "message"),
    ("payload", "images"),
    ("payload", "role"),
    ("payload", "content"),
    ("payload", "call_id"),
    ("timestamp",),
]


#: The right type of a field (a string where not named); True is never a number here.
RIGHT: dict[tuple[str, ...], Any] = {
    ("message",): dict,
    ("payload",): dict,
    ("message", "content"): (str, list),
    ("payload", "content"): (str, list),
    ("payload", "images"): list,
    ("timestamp",): (str, int),
    ("isSidechain",): bool,
}


def _right(path: tuple[str, ...], value: Any) -> bool:
    kinds = RIGHT.get(path, str)
    if value is True:
        return kinds is bool
    return isinstance(value, kinds)


def _cases(fields: list[tuple[str, ...]]) -> list[Any]:
    out = []
    for path in fields:
        for value in WRONG:
            if _right(path, value):
                continue
            out.append(pytest.param(path, value, id=f"{'.'.join(path)}={json.dumps(value)}"))
    return out


def _spoil(line: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(line)
    target = out
    for key in path[:-1]:
        if not isinstance(target.get(key), dict):
            target[key] = {}
        target = target[key]
    target[path[-1]] = value
    return out


def _append(path: Path, lines: list[dict[str, Any]]) -> None:
    with open(path, "ab") as fh:
        fh.write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))


@pytest.mark.parametrize(("field", "value"), _cases(CLAUDE_FIELDS))
def test_claude_wrong_typed_field(tmp_path: Path, field: tuple[str, ...], value: Any) -> None:
    root = tmp_path / "projects"
    t = Transcript(SID)
    t.prompt("where does the heron config live")
    t.answer("m1", text("The heron config lives in etc."))
    bad = [_spoil(t.lines[0], field, value), _spoil(t.lines[1], field, value)]
    main = t.write(root / "proj" / f"{SID}.jsonl")
    _append(main, bad)
    sub = Transcript(SID, agentId="a1", isSidechain=True)
    sub.prompt("look at the heron schema")
    sub.answer("s1", text("The quokkaschema is fine."))
    sub_path = sub.write(main.with_suffix("") / "subagents" / "agent-a1.jsonl")
    _append(sub_path, [_spoil(sub.lines[0], field, value), _spoil(sub.lines[1], field, value)])

    session = read_claude_session(main, include_hidden=True)
    assert sum(session.unknown_records.values()) == 4, session.unknown_records
    texts = json.dumps(session.data)
    assert "The heron config lives in etc." in texts and "quokkaschema" in texts
    assert first_session_id(main) == SID

    source = ClaudeSource(root)
    (name,) = source.list_files()
    doc = source.parse(name, source.list_files()[name], None)  # what the index reads
    assert isinstance(doc, SessionDoc) and doc.skipped is not None
    assert doc.skipped.unknown_count == 4
    scan = SourceStore(source)  # --no-index and the app's search without an index
    assert [h.session_id for h in scan.search("heron")] == [SID]
    assert [h.session_id for h in scan.search("quokkaschema")] == [SID]
    assert [s.session_id for s in scan.recent()] == [SID]
    shown = [m.get("content") for m in scan.projection(SID)]
    assert "where does the heron config live" in shown


@pytest.mark.parametrize(("field", "value"), _cases(CODEX_FIELDS))
def test_codex_wrong_typed_field(tmp_path: Path, field: tuple[str, ...], value: Any) -> None:
    r = Rollout(TID)
    r.event("user_message", message="what about the pelican cache")
    r.message("assistant", "The pelican cache expires hourly.")
    good = list(r.lines)
    path = r.write(rollout_path(tmp_path / "sessions", TID))
    _append(path, [_spoil(line, field, value) for line in good[1:]])

    session = read_codex_session(path, include_hidden=True)
    assert sum(session.unknown_records.values()) == 2, session.unknown_records
    assert "The pelican cache expires hourly." in json.dumps(session.data)

    source = CodexSource(tmp_path / "sessions")
    files = source.list_files()
    (name,) = files
    doc = source.parse(name, files[name], None)
    assert isinstance(doc, SessionDoc) and doc.skipped is not None
    assert doc.skipped.unknown_count == 2
    scan = SourceStore(source)
    assert [h.session_id for h in scan.search("pelican")] == [TID]
    assert [s.session_id for s in scan.recent()] == [TID]
    assert "what about the pelican cache" in [m.get("content") for m in scan.projection(TID)]
