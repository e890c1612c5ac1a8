"""Portable export/import (interop with the real praisonaiagents 1.7.17) and human exports."""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from session_browser.core import portable
from session_browser.core.model import SessionHit
from session_browser.core.store import DefaultSessionStore

os.environ.setdefault("DO_NOT_TRACK", "1")
from praisonaiagents.session.store import (
    DefaultSessionStore as PraisonStore,
)

T0 = 1_700_000_000.0


def _msg(role: str, content: Any, ts: float, **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": content, "timestamp": ts, "metadata": {}, **extra}


def _session(sid: str, n: int = 3, *, archived: int = 0, **top: Any) -> dict[str, Any]:
    archived_msgs = [_msg("user", f"{sid} archived {i}", T0 + i * 600) for i in range(archived)]
    messages = []
    if archived:
        messages.append(
            {
                "role": "system",
                "content": f"[Session Summary]\nPrevious conversation: {archived} messages",
                "timestamp": T0 + archived * 600,
                "metadata": {"compaction": True, "compacted_count": archived},
            }
        )
    for i in range(n):
        messages.append(
            _msg("user" if i % 2 == 0 else "assistant", f"{sid} turn {i} ✓", T0 + 90_000 + i * 700)
        )
    data: dict[str, Any] = {
        "session_id": sid,
        "messages": messages,
        "created_at": "2023-11-14T22:13:20+00:00",
        "updated_at": "2023-11-15T10:00:00+00:00",
        "agent_name": "helper",
        "user_id": "u1",
        "metadata": {"title": f"Title {sid}", "lineage_id": f"L-{sid}", "gateway_session_id": "g"},
        "gateway_session_id": "gw-1",
        "agent_id": "agent-7",
        "runtime_state": {},
        "archived_messages": archived_msgs,
    }
    data.update(top)
    return data


def _fill(store_dir: Path, sessions: list[dict[str, Any]]) -> DefaultSessionStore:
    store = DefaultSessionStore(store_dir, spill_dir=store_dir.parent / "spill")
    store_dir.mkdir(parents=True, exist_ok=True)
    for data in sessions:
        store.session_path(data["session_id"]).write_text(
            json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8"
        )
    return store


def _tool_session() -> dict[str, Any]:
    data = _session("tools", 2, archived=3)
    data["messages"].append(
        _msg(
            "assistant",
            "",
            T0 + 99_000,
            tool_calls=[
                {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
            ],
        )
    )
    data["messages"].append(_msg("tool", "a.txt", T0 + 99_001, tool_call_id="c1"))
    data["last_compaction"] = {
        "summary": "s",
        "message_index": 1,
        "role": "system",
        "tokens_before": 10,
        "tokens_after": 2,
        "timestamp": T0,
        "metadata": {},
    }
    return data


def _reset(data: dict[str, Any]) -> dict[str, Any]:
    out = dict(data)
    out["gateway_session_id"] = None
    out["agent_id"] = None
    meta = dict(out["metadata"])
    meta.pop("gateway_session_id", None)
    meta.pop("agent_id", None)
    out["metadata"] = meta
    return out


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.glob("*.json"))} if d.exists() else {}


# --------------------------------------------------------------------------- round trips


def test_ours_to_ours_round_trip_is_byte_identical_without_reset(tmp_path: Path) -> None:
    originals = [_session("a", 4), _tool_session(), _session("b", 1, extra_key={"x": [1, 2]})]
    src = _fill(tmp_path / "src" / "sessions", originals)
    payload = portable.export_all(src)
    assert payload["version"] == 1
    assert sorted(s["session_id"] for s in payload["sessions"]) == ["a", "b", "tools"]
    blob = portable.dumps_payload(payload)
    export_file = tmp_path / "export.json"
    export_file.write_bytes(blob)

    dst = DefaultSessionStore(tmp_path / "dst" / "sessions", active_window=2)
    report = portable.import_file(dst, export_file, reset_live_fields=False)
    assert report.imported == 3 and report.skipped == []
    # Kept verbatim: archived turns, tool calls, lineage, unknown keys, updated_at — and
    # the destination's window of 2 did not truncate anything.
    assert _files(dst.session_dir) == _files(src.session_dir)


def test_ours_to_ours_with_reset_clears_only_live_fields(tmp_path: Path) -> None:
    src = _fill(tmp_path / "src" / "sessions", [_tool_session()])
    dst = DefaultSessionStore(tmp_path / "dst" / "sessions")
    report = portable.import_sessions(dst, portable.export_session(src, "tools"))
    assert report.imported_ids == ["tools"]
    got = dst.read_raw("tools")
    assert got == _reset(_tool_session())
    assert got is not None and got["metadata"]["lineage_id"] == "L-tools"
    assert got["updated_at"] == "2023-11-15T10:00:00+00:00"  # kept (a restore)


def test_ours_export_imports_into_praisonai(tmp_path: Path) -> None:
    originals = [_session("a", 3), _tool_session()]
    src = _fill(tmp_path / "src" / "sessions", originals)
    payload = json.loads(portable.dumps_payload(portable.export_all(src)))
    theirs = PraisonStore(session_dir=str(tmp_path / "praison"))
    report = theirs.import_sessions(payload)
    assert report.imported == 2 and report.skipped == []
    for original in originals:
        path = Path(theirs._get_session_path(original["session_id"]))
        got = json.loads(path.read_text(encoding="utf-8"))
        assert got.pop("updated_at") != original["updated_at"]  # PraisonAI stamps "now"
        expected = _reset(original)
        expected.pop("updated_at")
        assert got == expected


def test_praisonai_export_imports_into_ours_byte_identical(tmp_path: Path) -> None:
    theirs = PraisonStore(session_dir=str(tmp_path / "praison"), active_window=3)
    for i in range(6):
        theirs.add_user_message("p1", f"question {i} <b>ünïcode</b>")
        theirs.add_assistant_message("p1", f"answer {i}")
    theirs.add_message(
        "p2",
        "assistant",
        "",
        tool_calls=[{"id": "t", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    )
    theirs.add_message("p2", "tool", "result", tool_call_id="t")
    theirs.update_session_metadata("p2", lineage_id="LIN")
    theirs.set_gateway_info("p2", gateway_session_id="gw", agent_id="ag")
    payload = json.loads(json.dumps(theirs.export_all()))
    assert any(s["archived_messages"] for s in payload["sessions"])

    ours = DefaultSessionStore(tmp_path / "ours" / "sessions")
    report = portable.import_sessions(ours, payload, reset_live_fields=False)
    assert report.imported == 2
    assert _files(ours.session_dir) == _files(tmp_path / "praison")

    # And the default (reset) import equals PraisonAI's own import modulo updated_at.
    ours2 = DefaultSessionStore(tmp_path / "ours2" / "sessions")
    portable.import_sessions(ours2, payload)
    theirs2 = PraisonStore(session_dir=str(tmp_path / "praison2"))
    theirs2.import_sessions(payload)
    for sid in ("p1", "p2"):
        a = ours2.read_raw(sid)
        b = json.loads(Path(theirs2._get_session_path(sid)).read_text(encoding="utf-8"))
        assert a is not None
        a.pop("updated_at"), b.pop("updated_at")
        assert a == b
        assert a["gateway_session_id"] is None and a["agent_id"] is None


def test_export_session_includes_lineage_members(tmp_path: Path) -> None:
    a = _session("root", 1)
    b = _session("cont", 1, created_at="2024-01-01T00:00:00+00:00")
    c = _session("other", 1)
    a["metadata"]["lineage_id"] = b["metadata"]["lineage_id"] = "chain"
    store = _fill(tmp_path / "s" / "sessions", [a, b, c])
    ids = [s["session_id"] for s in portable.export_session(store, "root")["sessions"]]
    assert ids == ["root", "cont"]
    assert [
        s["session_id"]
        for s in portable.export_session(store, "root", include_lineage=False)["sessions"]
    ] == ["root"]
    with pytest.raises(portable.SessionNotFound):
        portable.export_session(store, "nope")


def test_export_all_refuses_an_incomplete_backup(tmp_path: Path) -> None:
    store = _fill(tmp_path / "s" / "sessions", [_session("a")])
    (store.session_dir / "bad.json").write_bytes(b'{"session_id": "bad", "mess')
    with pytest.raises(portable.PortableError, match="incomplete export"):
        portable.export_all(store)
    skipped: list[str] = []
    payload = portable.export_all(store, skip_unreadable=True, skipped=skipped)
    assert [s["session_id"] for s in payload["sessions"]] == ["a"]
    assert skipped == [str(store.session_dir / "bad.json")]


# --------------------------------------------------------------------------- hostile input


@pytest.mark.parametrize(
    ("payload", "match"),
    [
        ([], "not an object"),
        ("x", "not an object"),
        ({"version": 1}, "no 'sessions' list"),
        ({"sessions": {"a": 1}}, "no 'sessions' list"),
        ({"version": 2, "sessions": []}, "unsupported payload version 2"),
        ({"version": "1", "sessions": []}, "not an integer"),
        ({"sessions": [_session("ok"), None]}, "entry 1 is NoneType"),
        ({"sessions": [_session("ok"), "s"]}, "entry 1 is str"),
        ({"sessions": [_session("ok"), {"messages": []}]}, "no usable session_id"),
        ({"sessions": [_session("ok"), {"session_id": "  "}]}, "no usable session_id"),
        ({"sessions": [_session("ok"), {"session_id": 5}]}, "no usable session_id"),
    ],
)
def test_hostile_payloads_write_nothing(tmp_path: Path, payload: Any, match: str) -> None:
    store = DefaultSessionStore(tmp_path / "sessions")
    with pytest.raises(portable.PortableError, match=match):
        portable.import_sessions(store, payload)
    assert not store.session_dir.exists() or list(store.session_dir.iterdir()) == []


def test_skip_invalid_imports_the_rest(tmp_path: Path) -> None:
    store = DefaultSessionStore(tmp_path / "sessions")
    report = portable.import_sessions(
        store, {"sessions": [None, _session("ok"), {"x": 1}]}, skip_invalid=True
    )
    assert report.imported_ids == ["ok"]
    assert [s["reason"].split(":")[0] for s in report.skipped] == ["invalid", "invalid"]


def test_hostile_ids_stay_inside_the_store_and_collisions_are_skipped(tmp_path: Path) -> None:
    store = DefaultSessionStore(tmp_path / "deep" / "sessions")
    payload = {"sessions": [_session("../../x"), _session("a/b"), _session("a_b"), _session("a/b")]}
    report = portable.import_sessions(store, payload)
    assert report.imported_ids == ["../../x", "a/b"]
    reasons = {(s["session_id"], s["reason"]) for s in report.skipped}
    assert ("a/b", "duplicate in payload") in reasons
    assert any(sid == "a_b" and "already used by session 'a/b'" in r for sid, r in reasons)
    assert sorted(p.name for p in store.session_dir.iterdir() if p.suffix == ".json") == [
        "______x.json",
        "a_b.json",
    ]
    assert not (tmp_path / "x.json").exists()
    assert store.read_raw("../../x") is not None
    assert json.loads((store.session_dir / "a_b.json").read_bytes())["session_id"] == "a/b"
    # A later import of "a_b" never overwrites the file of "a/b", even with overwrite.
    again = portable.import_sessions(store, {"sessions": [_session("a_b")]}, overwrite=True)
    assert again.imported == 0 and "holds another session" in again.skipped[0]["reason"]


def test_exists_overwrite_limit_and_dry_run(tmp_path: Path) -> None:
    store = _fill(tmp_path / "sessions", [_session("a", 1)])
    before = _files(store.session_dir)
    payload = {"version": 1, "sessions": [_session("a", 5), _session("b"), _session("c")]}
    dry = portable.import_sessions(store, payload, dry_run=True, max_sessions=1)
    assert dry.dry_run and dry.imported_ids == ["b"]
    assert [s["reason"] for s in dry.skipped] == [
        "already exists (use overwrite)",
        "over the limit (max_sessions=1)",
    ]
    assert _files(store.session_dir) == before
    report = portable.import_sessions(store, payload, overwrite=True)
    assert report.imported_ids == ["a", "b", "c"]
    raw = store.read_raw("a")
    assert raw is not None and len(raw["messages"]) == 5


def test_unreadable_destination_file_is_not_overwritten(tmp_path: Path) -> None:
    store = DefaultSessionStore(tmp_path / "sessions")
    store.session_dir.mkdir(parents=True)
    (store.session_dir / "a.json").write_bytes(b"{broken")
    report = portable.import_sessions(store, {"sessions": [_session("a")]}, overwrite=True)
    assert report.imported == 0 and "unreadable" in report.skipped[0]["reason"]
    assert (store.session_dir / "a.json").read_bytes() == b"{broken"


def test_size_cap_and_bad_files(tmp_path: Path) -> None:
    store = DefaultSessionStore(tmp_path / "sessions")
    f = tmp_path / "e.json"
    f.write_bytes(portable.dumps_payload({"version": 1, "sessions": [_session("a")]}))
    with pytest.raises(portable.PortableError, match="over the import size cap of 100 bytes"):
        portable.import_file(store, f, max_bytes=100)
    for content, match in (
        (b"", "is empty"),
        (b"\xff\xfe{}", "not UTF-8|not valid JSON"),
        (b'{"sessions": [', "not valid JSON"),
    ):
        f.write_bytes(content)
        with pytest.raises(portable.PortableError, match=match):
            portable.import_file(store, f)
    with pytest.raises(portable.PortableError, match="cannot read"):
        portable.import_file(store, tmp_path / "missing.json")
    assert not store.session_dir.exists()
    assert portable.DEFAULT_MAX_IMPORT_BYTES >= 1 << 30


def test_deep_nesting_fails_clearly_and_writes_nothing(tmp_path: Path) -> None:
    store = DefaultSessionStore(tmp_path / "sessions")
    f = tmp_path / "deep.json"
    depth = 100_000
    f.write_bytes(
        b'{"version": 1, "sessions": [{"session_id": "d", "messages": [{"role": "user", "content": '
        + b"[" * depth
        + b"]" * depth
        + b"}]}]}"
    )
    with pytest.raises(portable.PortableError, match="nested too deeply"):
        portable.import_file(store, f)
    # The same nesting built in memory: refused per entry, nothing written.
    nested: Any = []
    for _ in range(depth):
        nested = [nested]
    payload = {
        "sessions": [_session("fine"), {"session_id": "d", "messages": [_msg("user", nested, T0)]}]
    }
    with pytest.raises(portable.PortableError, match="nested too deeply"):
        portable.import_sessions(store, payload)
    assert not store.session_dir.exists() or list(store.session_dir.iterdir()) == []
    report = portable.import_sessions(store, payload, skip_invalid=True)
    assert report.imported_ids == ["fine"] and "nested too deeply" in report.skipped[0]["reason"]
    # Moderate nesting (well within the parsers' limits) imports intact.
    moderate: Any = "leaf"
    for _ in range(200):
        moderate = [moderate]
    portable.import_sessions(
        store, {"sessions": [{"session_id": "m", "messages": [_msg("user", moderate, T0)]}]}
    )
    raw = store.read_raw("m")
    assert raw is not None and raw["messages"][0]["content"] == moderate


def test_a_50_mb_message_imports_intact(tmp_path: Path) -> None:
    big = "x" * (50 * 1024 * 1024 - 7) + "<end>ü"
    f = tmp_path / "big.json"
    f.write_bytes(
        portable.dumps_payload(
            {"version": 1, "sessions": [{"session_id": "big", "messages": [_msg("user", big, T0)]}]}
        )
    )
    store = DefaultSessionStore(tmp_path / "sessions")
    assert portable.import_file(store, f).imported == 1
    raw = store.read_raw("big")
    assert raw is not None and raw["messages"][0]["content"] == big
    assert [p.name for p in store.session_dir.iterdir() if not p.name.endswith(".lock")] == [
        "big.json"
    ]


# --------------------------------------------------------------------------- human exports

HOSTILE = "<script>alert(1)</script> [@click=app.quit] [/x] \x1b]0;pwn\x07 \x1b[31mred & 'q' \"dq\""


def _hostile_session() -> dict[str, Any]:
    data = _session("h<1>", 2, archived=2)
    data["messages"][1]["content"] = HOSTILE + " ```` fence"
    data["metadata"]["title"] = "T <img src=x onerror=alert(1)>"
    return data


def test_markdown_marks_archive_boundary_and_summary_and_escapes(tmp_path: Path) -> None:
    out = portable.render_sessions([_hostile_session()], "md").text
    assert out.count("*archived*") == 2
    assert "compaction boundary: 2 earlier turns archived here (above)" in out
    assert "*compaction summary*" in out
    assert out.index("archived 1") < out.index("compaction boundary") < out.index("Session Summary")
    assert "\x1b" not in out and "\x07" not in out and "\\x1b" in out
    assert "<img" not in out  # the title is escaped
    assert "`````text" in out  # a fence longer than the content's own backtick run


def _tags(page: str) -> list[tuple[str, list[str]]]:
    found: list[tuple[str, list[str]]] = []

    class Collector(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append((tag, [name for name, _ in attrs]))

    Collector().feed(page)
    return found


def test_html_is_self_contained_and_escaped() -> None:
    out = portable.render_sessions([_hostile_session()], "html").text
    assert out.startswith("<!DOCTYPE html>")
    assert "<script" not in out and "<img" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert "[@click=app.quit]" in out  # literal text, inert in HTML
    assert "\x1b" not in out and "\\x1b" in out
    tags = _tags(out)
    assert {t for t, _ in tags} <= {
        "html",
        "head",
        "meta",
        "title",
        "style",
        "body",
        "main",
        "h1",
        "h2",
        "p",
        "section",
        "dl",
        "dt",
        "dd",
        "div",
        "article",
        "header",
        "b",
        "span",
        "pre",
    }
    assert not [a for _, attrs in tags for a in attrs if a in ("src", "href") or a.startswith("on")]
    style = out[out.index("<style>") : out.index("</style>")]
    assert not re.search(r"https?://|@import|url\(", style)
    assert "default-src 'none'" in out
    assert 'class="msg role-user archived"' in out
    assert '<div class="boundary">compaction boundary: 2 earlier turns archived here' in out
    assert "summary" in out and "compaction summary</span>" in out


def test_boundary_without_archived_turns_uses_the_summary_count() -> None:
    data = _session("s", 1, archived=3)
    data["archived_messages"] = []
    out = portable.render_sessions([data], "md").text
    assert "3 earlier turns archived here (not in this export)" in out


def test_redaction_counts_and_hides_secrets() -> None:
    secrets = (
        "key sk-proj-abcdefghijklmnopqrst1234 gh ghp_abcdefghijklmnopqrstuvwxyz0123456789 "
        "aws AKIAABCDEFGHIJKLMNOP auth: Bearer abcdefghijk.lmnop slack xoxb-1234567890-abcdefg "
        "api_key=s3cretvalue9 mail jane.doe@example.com"
    )
    data = _session("r", 1)
    data["messages"][0]["content"] = secrets
    for fmt in ("md", "html"):
        rendered = portable.render_sessions([data], fmt, redact=True)
        for leaked in (
            "sk-proj-abc",
            "ghp_abc",
            "AKIAABC",
            "abcdefghijk.lmnop",
            "xoxb-",
            "s3cretvalue9",
            "jane.doe@",
        ):
            assert leaked not in rendered.text
        assert rendered.redactions == {
            "api_key": 1,
            "github_token": 1,
            "aws_access_key": 1,
            "bearer_token": 1,
            "slack_token": 1,
            "secret": 1,
            "email": 1,
        }
        assert "Redacted: 7" in rendered.text
    plain = portable.render_sessions([data], "md")
    assert "jane.doe@example.com" in plain.text and plain.redactions == {}
    payload, counts = portable.redact_payload({"version": 1, "sessions": [data]})
    assert "sk-proj" not in json.dumps(payload) and counts["email"] == 1
    assert payload["sessions"][0]["session_id"] == "r"
    assert data["messages"][0]["content"] == secrets  # the original is untouched


def test_render_hits_marks_anchor_and_archived() -> None:
    hit = SessionHit(
        session_id="s<1>",
        title="<b>t</b>",
        when="2024-01-01T00:00:00+00:00",
        snippet="snip",
        score=3.0,
        anchor_index=1,
        messages=[
            {"index": 0, "role": "user", "content": "before", "timestamp": T0, "archived": True},
            {
                "index": 1,
                "role": "assistant",
                "content": HOSTILE,
                "timestamp": T0,
                "archived": True,
            },
        ],
        archived=True,
    )
    md = portable.render_hits([hit], "md", query="q<").text
    assert "▶ match" in md and md.count("archived") >= 2 and "\x1b" not in md
    page = portable.render_hits([hit], "html", query="q<").text
    assert "<b>t</b>" not in page and "&lt;b&gt;t&lt;/b&gt;" in page
    assert 'class="msg role-assistant archived anchor"' in page


def test_export_all_gives_a_file_without_id_its_stem(tmp_path: Path) -> None:
    store = DefaultSessionStore(tmp_path / "src")
    store.add_user_message("named", "hi")
    (store.session_dir / "no-id.json").write_text(json.dumps({"messages": []}))
    payload = portable.export_all(store)
    assert sorted(s["session_id"] for s in payload["sessions"]) == ["named", "no-id"]
    dest = DefaultSessionStore(tmp_path / "dst")
    report = portable.import_sessions(dest, json.loads(portable.dumps_payload(payload)))
    assert sorted(report.imported_ids) == ["named", "no-id"]


def test_collect_sessions_of_a_group(tmp_path: Path) -> None:
    from session_browser.core.stores import open_stores

    a = DefaultSessionStore(tmp_path / "a")
    b = DefaultSessionStore(tmp_path / "b")
    a.add_user_message("one", "x")
    a.update_session_metadata("one", lineage_id="L")
    a.add_user_message("two", "y")
    a.update_session_metadata("two", lineage_id="L")
    b.add_user_message("one", "shadowed by store a")
    b.add_user_message("three", "z")
    group = open_stores([a.session_dir, b.session_dir])
    got = portable.collect_sessions(group, ["one"], include_lineage=True)
    assert [s["session_id"] for s in got] == ["one", "two"]
    assert [
        s["session_id"] for s in portable.collect_sessions(group, ["one"], include_lineage=False)
    ] == ["one"]
    every = portable.collect_sessions(group, all_sessions=True)
    assert sorted(s["session_id"] for s in every) == ["one", "three", "two"]
    assert next(s for s in every if s["session_id"] == "one")["messages"][0]["content"] == "x"
    with pytest.raises(portable.SessionNotFound):
        portable.collect_sessions(group, ["nope"])
    seen: list[tuple[int, int]] = []
    portable.collect_sessions(group, all_sessions=True, progress=lambda d, t: seen.append((d, t)))
    assert seen[0] == (0, 4) and seen[-1] == (4, 4)
    data, redactions = portable.export_bytes(every, "json")
    assert json.loads(data)["version"] == 1 and redactions == {}
