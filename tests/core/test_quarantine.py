"""The quarantine workbench on corrupt files of every kind, including PraisonAI's own."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from session_browser.core import quarantine as q
from session_browser.core.files import dumps_session
from session_browser.core.model import message_key
from session_browser.core.paths import data_dir
from session_browser.core.store import DefaultSessionStore

T0 = 1_700_000_000.0


def _store(root: Path) -> DefaultSessionStore:
    return DefaultSessionStore(
        root / "sessions", spill_dir=root / "state" / "session_spill", retention="keep_all"
    )


def _msg(i: int, *, archived: bool = False, size: int = 40) -> dict[str, Any]:
    tag = "arch" if archived else "msg"
    return {
        "role": "user" if i % 2 == 0 else "assistant",
        "content": f'{tag} {i} "quoted" \\ ü ' + "y" * size,
        "timestamp": T0 + i * 700 + (0 if archived else 1_000_000),
        "metadata": {},
    }


def _session(sid: str, n: int = 6, archived: int = 4, size: int = 40) -> dict[str, Any]:
    return {
        "session_id": sid,
        "messages": [_msg(i, size=size) for i in range(n)],
        "created_at": "2023-11-14T22:13:20+00:00",
        "updated_at": "2023-11-20T00:00:00+00:00",
        "agent_name": None,
        "user_id": None,
        "metadata": {"title": "t"},
        "gateway_session_id": None,
        "agent_id": None,
        "runtime_state": {},
        "archived_messages": [_msg(i, archived=True, size=size) for i in range(archived)],
    }


def _spans(raw: bytes, data: dict[str, Any]) -> list[tuple[str, int, dict[str, Any]]]:
    """(list, end byte, message) of every message as it sits in ``raw``."""
    out = []
    for name in ("messages", "archived_messages"):
        for m in data[name]:
            piece = textwrap.indent(json.dumps(m, indent=2, ensure_ascii=False), "    ").lstrip()
            start = raw.index(piece.encode("utf-8"))
            out.append((name, start + len(piece.encode("utf-8")), m))
    return out


def _keys(msgs: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {message_key(m) for m in msgs}


def _snapshot(*roots: Path, locks: bool = True) -> dict[str, str]:
    """sha256 of every file under ``roots``, lock files included (inspection creates none).

    ``locks=False`` leaves them out, for comparisons across a real action: a write takes
    the session's ``.lock`` and leaves it in place, as PraisonAI does.
    """
    out: dict[str, str] = {}
    for root in roots:
        if not root.exists():
            continue
        for p in sorted(root.rglob("*")):
            if p.is_file() and (locks or not p.name.endswith(".lock")):
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


# --------------------------------------------------------------------------- salvage


@pytest.mark.parametrize("where", ["mid-string", "mid-message", "mid-archive", "after-key"])
def test_truncation_recovers_every_complete_message(tmp_path: Path, where: str) -> None:
    data = _session("s1")
    raw = dumps_session(data)
    spans = _spans(raw, data)
    if where == "mid-string":
        cut = raw.index(b"msg 3 ") + 3
    elif where == "mid-message":
        cut = raw.index(b'"timestamp"', raw.index(b"msg 4 "))
    elif where == "mid-archive":
        cut = raw.index(b"arch 2 ") + 10
    else:
        cut = raw.index(b'"archived_messages"') + 5
    broken = raw[:cut]
    result = q.salvage_bytes(broken, path=tmp_path / "x")
    complete = [(n, m) for n, end, m in spans if end <= cut]
    assert _keys(result.messages) == _keys([m for n, m in complete if n == "messages"])
    assert _keys(result.archived_messages) == _keys(
        [m for n, m in complete if n == "archived_messages"]
    )
    assert result.method == "prefix" and result.problem is not None
    assert result.problem.offset is not None and result.problem.offset <= cut
    assert result.session_id == "s1" and result.envelope["session_id"] == "s1"
    assert 0 < result.kept_bytes <= cut and result.lost_bytes == cut - result.kept_bytes
    if where in ("mid-string", "mid-message", "mid-archive"):
        assert result.partial is not None and result.partial["role"] in ("user", "assistant")
    if where == "mid-archive":
        assert result.envelope["created_at"] == data["created_at"]


def test_every_prefix_length_recovers_exactly_the_complete_messages(tmp_path: Path) -> None:
    data = _session("p", n=3, archived=2, size=2)
    raw = dumps_session(data)
    spans = _spans(raw, data)
    for cut in range(0, len(raw) + 1, 7):
        result = q.salvage_bytes(raw[:cut], path=tmp_path / "x")
        expected = [m for _n, end, m in spans if end <= cut]
        assert _keys(result.messages + result.archived_messages) == _keys(expected), cut


def test_invalid_utf8_is_replaced_and_reported(tmp_path: Path) -> None:
    data = _session("u")
    raw = bytearray(dumps_session(data))
    at = raw.index(b"msg 2 ") + 4
    raw[at : at + 2] = b"\xff\xfe"
    result = q.salvage_bytes(bytes(raw), path=tmp_path / "x")
    assert result.invalid_utf8 == [(at, at + 2)]
    assert (
        result.method == "intact"
        and len(result.messages) == 6
        and len(result.archived_messages) == 4
    )
    assert any("\ufffd" in m["content"] for m in result.messages)
    assert result.problem is not None and result.problem.offset == at
    assert result.problem.message.startswith("invalid UTF-8")


def test_damage_in_the_middle_still_finds_later_messages(tmp_path: Path) -> None:
    data = _session("m")
    raw = dumps_session(data)
    start = raw.index(b'"content": "msg 2 ')
    broken = raw[:start] + b"\x00" * 50 + raw[start + 50 :]
    result = q.salvage_bytes(broken, path=tmp_path / "x")
    lost = {message_key(_msg(2))}
    expected = _keys(data["messages"] + data["archived_messages"]) - lost
    assert _keys(result.messages + result.archived_messages) == expected
    assert _keys(result.archived_messages) == _keys(data["archived_messages"])


def test_list_root_null_string_entries_zero_byte_and_scalar(tmp_path: Path) -> None:
    listed = q.salvage_bytes(json.dumps([_msg(0), None, "x", _msg(1)]).encode(), path=tmp_path)
    assert listed.method == "list-root" and len(listed.messages) == 2
    assert listed.skipped_entries == ["[1] is null", "[2] is str"]
    assert q.diagnose(b"[1]") is not None and "root is list" in str(q.diagnose(b"[1]"))

    data = _session("n")
    data["messages"].insert(1, None)
    data["archived_messages"].insert(0, "stray")
    ok = q.salvage_bytes(dumps_session(data), path=tmp_path)
    assert len(ok.messages) == 6 and len(ok.archived_messages) == 4
    assert ok.skipped_entries == ["messages[1] is null", "archived_messages[0] is str"]

    empty = q.salvage_bytes(b"", path=tmp_path)
    assert empty.method == "none" and empty.recovered == 0
    problem = q.diagnose(b"")
    assert problem is not None and (problem.message, problem.offset) == ("empty file", 0)
    assert q.salvage_bytes(b'"just a string"', path=tmp_path).recovered == 0


def test_deep_nesting_does_not_crash(tmp_path: Path) -> None:
    raw = (
        b'{"session_id": "d", "messages": [{"role": "user", "content": "ok", "timestamp": 1.0}, '
        + b"[" * 100_000
    )
    result = q.salvage_bytes(raw, path=tmp_path)
    assert [m["content"] for m in result.messages] == ["ok"]
    assert q.diagnose(b"[" * 100_000 + b"]" * 100_000) is not None


def test_huge_truncated_file(tmp_path: Path) -> None:
    data = _session("big", n=3000, archived=3000, size=5000)
    raw = dumps_session(data)
    assert len(raw) > 30_000_000
    cut = len(raw) - 2000  # inside the last archived message
    result = q.salvage_bytes(raw[:cut], path=tmp_path)
    assert len(result.messages) == 3000 and len(result.archived_messages) == 2999
    assert result.partial is not None and result.partial["list"] == "archived_messages"


def test_position_of_parse_error() -> None:
    problem = q.diagnose(b'{\n  "a": 1,\n  "b": tru\n}')
    assert problem is not None
    assert (problem.line, problem.column, problem.offset) == (3, 8, 19)


# --------------------------------------------------------------------------- list + compare


def test_list_finds_corrupt_and_spill_files_with_ids_and_errors(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.session_dir.mkdir(parents=True)
    store.spill_dir.mkdir(parents=True)
    live = _session("a/b", n=2, archived=0)
    (store.session_dir / "a_b.json").write_bytes(dumps_session(live))
    (store.session_dir / "a_b.json.corrupt-1700000000000").write_bytes(dumps_session(live)[:150])
    (store.session_dir / "zz.json.corrupt-1700000000001-1").write_bytes(b"")
    spill = {"session_id": "a/b", "spilled_at": "x", "messages": [_msg(9)]}
    (store.spill_dir / "a_b.1700000000002.123.deadbeef.json").write_bytes(
        json.dumps(spill).encode()
    )
    (store.session_dir / "unrelated.txt").write_bytes(b"x")
    items = q.list_items([store])
    assert [(i.kind, i.session_id, i.id_source, i.live_exists) for i in items] == [
        ("corrupt", "a/b", "bytes", True),
        ("corrupt", "zz", "name", False),
        ("spill", "a/b", "payload", True),
    ]
    problem = items[0].problem
    assert problem is not None and problem.message == "Unterminated string starting at"
    assert problem.offset is not None and dumps_session(live)[problem.offset] == ord('"')
    assert items[1].problem is not None and items[1].problem.message == "empty file"
    assert items[2].problem is None and items[2].message_count == 1
    assert items[0].size == 150 and items[0].at_ms == 1700000000000
    assert q.find_item([store], "zz").name == "zz.json.corrupt-1700000000001-1"
    with pytest.raises(q.QuarantineError, match="matches 2 files"):
        q.find_item([store], "a_b.")
    comp = q.compare(store, q.salvage(items[2]))
    assert comp.live_exists and [m for _, m in comp.missing] == [_msg(9)]


# --------------------------------------------------------------------------- actions + undo


def _setup(tmp_path: Path) -> tuple[DefaultSessionStore, dict[str, Any], list[Path]]:
    store = _store(tmp_path / "home")
    store.session_dir.mkdir(parents=True)
    store.spill_dir.mkdir(parents=True)
    full = _session("s1", n=8, archived=4)
    live = _session("s1", n=8, archived=4)
    # The live file lost messages 3 and 5 and an archived turn; the quarantine has them.
    live["messages"] = [m for i, m in enumerate(live["messages"]) if i not in (3, 5)]
    live["archived_messages"] = live["archived_messages"][1:]
    (store.session_dir / "s1.json").write_bytes(dumps_session(live))
    (store.session_dir / "other.json").write_bytes(dumps_session(_session("other", 2, 0)))
    raw = dumps_session(full)
    corrupt = store.session_dir / "s1.json.corrupt-1700000000000"
    corrupt.write_bytes(raw[: raw.index(b"arch 3 ")])
    spill = store.spill_dir / "s1.1700000000001.9.abcdef01.json"
    spill.write_bytes(
        json.dumps(
            {"session_id": "s1", "spilled_at": "t", "messages": [_msg(20), _msg(5)]}
        ).encode()
    )
    return store, full, [corrupt, spill]


def _roots(store: DefaultSessionStore) -> tuple[Path, Path, Path]:
    return store.session_dir, store.spill_dir, data_dir()


@pytest.mark.parametrize("action", ["restore", "merge", "fold", "discard-corrupt", "discard-spill"])
def test_action_then_undo_round_trips_byte_identical(tmp_path: Path, action: str) -> None:
    store, full, (corrupt, spill) = _setup(tmp_path)
    before = _snapshot(*_roots(store))
    unlocked_before = _snapshot(*_roots(store), locks=False)
    lock_free_before = {p.name for p in store.session_dir.iterdir()}
    item = q.find_item([store], (spill if action in ("fold", "discard-spill") else corrupt).name)

    fn: Any = {
        "restore": lambda dry: q.restore(store, item, dry_run=dry),
        "merge": lambda dry: q.merge(store, item, dry_run=dry),
        "fold": lambda dry: q.fold(store, item, dry_run=dry),
        "discard-corrupt": lambda dry: q.discard(item, dry_run=dry),
        "discard-spill": lambda dry: q.discard(item, dry_run=dry),
    }[action]
    preview = fn(True)
    assert preview.dry_run and preview.files
    assert _snapshot(*_roots(store)) == before  # a dry run writes nothing
    result = fn(False)
    before = unlocked_before  # a real action leaves the session's lock file in place
    after = _snapshot(*_roots(store), locks=False)
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    journal = str(data_dir() / "journal")
    outside_journal = {p for p in changed if not p.startswith(journal)}
    expected = {f["path"] for f in result.files}
    assert outside_journal == expected  # nothing else changed
    if action == "restore":
        new = store.read_raw("s1-restored")
        assert new is not None and new["metadata"]["restored_from"] == corrupt.name
        assert len(new["messages"]) == 8 and len(new["archived_messages"]) == 3
    elif action == "merge":
        merged = store.read_raw("s1")
        assert merged is not None
        assert merged["messages"] == full["messages"]  # time order restored
        assert merged["archived_messages"] == full["archived_messages"]
        assert result.added == 3
    elif action == "fold":
        folded = store.read_raw("s1")
        assert folded is not None and not spill.exists()
        contents = [m["content"] for m in folded["messages"]]
        assert contents.count(_msg(5)["content"]) == 1 and contents[-1] == _msg(20)["content"]
        assert contents.index(_msg(5)["content"]) == 4  # in time order
    else:
        gone = corrupt if action == "discard-corrupt" else spill
        assert not gone.exists()
        assert list((data_dir() / "trash").rglob(gone.name))

    undone = q.undo()
    assert undone["action_id"] == result.action_id
    assert _snapshot(*_roots(store), locks=False) == before
    names = {p.name for p in store.session_dir.iterdir()}
    assert {n for n in names - lock_free_before if not n.endswith(".lock")} == set()
    with pytest.raises(q.QuarantineError, match="nothing to undo"):
        q.undo()


def test_undo_refuses_when_files_changed_and_keeps_order(tmp_path: Path) -> None:
    store, _full, (corrupt, _spill) = _setup(tmp_path)
    item = q.find_item([store], corrupt.name)
    first = q.merge(store, item)
    store.add_user_message("s1", "a new turn after the merge")
    with pytest.raises(q.QuarantineError, match="changed since action"):
        q.undo()
    with pytest.raises(q.QuarantineError, match="changed since action"):
        q.undo(first.action_id)
    assert q.journal_entries()[0]["id"] == first.action_id  # still journaled


def test_merge_needs_a_live_session_and_restore_never_overwrites(tmp_path: Path) -> None:
    store, _full, (corrupt, _spill) = _setup(tmp_path)
    (store.session_dir / "s1.json").unlink()
    item = q.find_item([store], corrupt.name)
    with pytest.raises(q.QuarantineError, match="no live session"):
        q.merge(store, item)
    (store.session_dir / "taken.json").write_bytes(b"{}")
    with pytest.raises(q.QuarantineError, match="already exists"):
        q.restore(store, item, new_session_id="taken")
    assert (store.session_dir / "taken.json").read_bytes() == b"{}"


# --------------------------------------------------------------------------- real PraisonAI files

_PRAISON_CHILD = r"""
import json, os, resource, signal, sys
os.environ["DO_NOT_TRACK"] = "1"
from praisonaiagents.session.store import DefaultSessionStore
session_dir, mode = sys.argv[1], sys.argv[2]
store = DefaultSessionStore(session_dir=session_dir)
if mode == "quarantine":
    store.add_user_message("victim", "after the corruption")
elif mode == "spill":
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    limit = int(sys.argv[3])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    ok = store.add_user_message("victim", "the turn that did not fit " + "z" * 200)
    print(json.dumps({"ok": ok}))
"""


def _praison(home: Path, *args: str) -> str:
    env = dict(os.environ, PRAISONAI_HOME=str(home), DO_NOT_TRACK="1")
    proc = subprocess.run(
        [sys.executable, "-c", _PRAISON_CHILD, str(home / "sessions"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return proc.stdout


def test_real_praisonai_quarantine_and_spill(tmp_path: Path) -> None:
    home = tmp_path / "praison"
    store = _store(home)
    store.session_dir.mkdir(parents=True)
    full = _session("victim", n=30, archived=0, size=3000)
    raw = dumps_session(full)
    (store.session_dir / "victim.json").write_bytes(raw[: len(raw) // 2])

    _praison(home, "quarantine")  # PraisonAI moves the broken file aside and starts fresh
    corrupt = [p for p in store.session_dir.iterdir() if ".json.corrupt-" in p.name]
    assert len(corrupt) == 1 and corrupt[0].read_bytes() == raw[: len(raw) // 2]

    size = (store.session_dir / "victim.json").stat().st_size
    out = _praison(home, "spill", str(size + 50))  # the next write cannot fit: it spills
    assert json.loads(out.strip().splitlines()[-1]) == {"ok": False}
    spills = list(store.spill_dir.iterdir())
    assert len(spills) == 1

    items = q.list_items([store])
    assert [(i.kind, i.session_id, i.live_exists) for i in items] == [
        ("corrupt", "victim", True),
        ("spill", "victim", True),
    ]
    result = q.salvage(items[0])
    spans = _spans(raw, full)
    expected = [m for _n, end, m in spans if end <= len(raw) // 2]
    assert _keys(result.messages) == _keys(expected) and len(expected) >= 10
    comp = q.compare(store, result)
    assert len(comp.missing) == len(expected)

    before = _snapshot(*_roots(store))
    merged = q.merge(store, items[0])
    folded = q.fold(store, q.find_item([store], spills[0].name))
    live = store.read_raw("victim")
    assert live is not None
    contents = [m["content"] for m in live["messages"]]
    assert contents[: len(expected)] == [m["content"] for m in expected]
    assert contents[-2:] == ["after the corruption", "the turn that did not fit " + "z" * 200]
    assert merged.added == len(expected) and folded.added == 1
    q.undo()
    q.undo()
    assert _snapshot(*_roots(store)) == before


def test_quarantined_name_with_newline_is_listed(tmp_path: Path) -> None:
    store = DefaultSessionStore(tmp_path / "sessions")
    store.add_user_message("live", "hi")
    odd = store.session_dir / "a\nb.json.corrupt-1700000000000"
    odd.write_bytes(b'{"session_id": "a\\nb", "messages": [')
    items = q.list_items([store])
    assert [it.path for it in items] == [odd]
    assert items[0].session_id == "a\nb"


def test_spill_note_and_single_parse(tmp_path: Path) -> None:
    # PraisonAI's layout: its spill (no owner key) belongs to <home>/sessions
    spill_dir = tmp_path / "home" / "state" / "session_spill"
    store = DefaultSessionStore(tmp_path / "home" / "sessions", spill_dir=spill_dir)
    spill_dir.mkdir(parents=True)
    spill = spill_dir / "s1.1700000000000.1.abcdef01.json"
    spill.write_text(
        json.dumps(
            {
                "session_id": "s1",
                "spilled_at": "2024-01-01T00:00:00+00:00",
                "messages": [{"role": "user", "content": "lost turn", "timestamp": 1.0}, None],
            }
        )
    )
    (item,) = q.list_items([store])
    assert (item.kind, item.session_id, item.id_source, item.message_count) == (
        "spill",
        "s1",
        "payload",
        1,
    )
    result = q.salvage(item)
    assert "spilled at 2024-01-01T00:00:00+00:00" in result.notes
    assert result.envelope == {} and [m["content"] for m in result.messages] == ["lost turn"]


def test_find_item_rejects_an_empty_reference(tmp_path: Path) -> None:
    store = DefaultSessionStore(tmp_path / "sessions")
    (tmp_path / "sessions").mkdir()
    (tmp_path / "sessions" / "x.json.corrupt-1").write_bytes(b"{")
    with pytest.raises(q.QuarantineError, match="no item given"):
        q.find_item([store], "  ")


# --------------------------------------------------------------------------- target checks


def _misplaced_setup(tmp_path: Path) -> tuple[DefaultSessionStore, Path, Path, Path]:
    """``a_b.json`` holds session ``a_b``; session ``a/b`` lives in ``renamed.json``."""
    store = _store(tmp_path / "home")
    store.session_dir.mkdir(parents=True)
    store.spill_dir.mkdir(parents=True)
    own = store.session_dir / "a_b.json"
    own.write_bytes(dumps_session(_session("a_b", 2, 0)))
    live = _session("a/b", 2, 0)
    renamed = store.session_dir / "renamed.json"
    renamed.write_bytes(dumps_session(live))
    full = _session("a/b", 4, 0)
    raw = dumps_session(full)
    corrupt = store.session_dir / "a_b.json.corrupt-1700000000000"
    corrupt.write_bytes(raw[:-3])
    spill = store.spill_dir / "a_b.1700000000001.9.abcdef01.json"
    spill.write_bytes(json.dumps({"session_id": "a/b", "messages": [_msg(30)]}).encode())
    return store, own, renamed, spill


def test_merge_and_fold_never_write_a_file_holding_another_session(tmp_path: Path) -> None:
    store, own, renamed, spill = _misplaced_setup(tmp_path)
    before = _snapshot(*_roots(store))
    item = q.find_item([store], "a_b.json.corrupt-1700000000000")
    assert item.session_id == "a/b" and item.live_exists
    for dry in (True, False):
        with pytest.raises(q.QuarantineError, match=r"holds session 'a_b'.*renamed\.json"):
            q.merge(store, item, dry_run=dry)
    spill_item = q.find_item([store], spill.name)
    for dry in (True, False):
        with pytest.raises(q.QuarantineError, match="holds session 'a_b'"):
            q.fold(store, spill_item, dry_run=dry)
    assert _snapshot(*_roots(store)) == before
    assert q.journal_entries() == []

    # Without a_b.json, a/b lives only under another name: no second copy is created.
    own.unlink()
    before = _snapshot(*_roots(store))
    with pytest.raises(q.QuarantineError, match=r"lives in renamed\.json"):
        q.merge(store, item, dry_run=True)
    with pytest.raises(q.QuarantineError, match=r"lives in renamed\.json"):
        q.merge(store, item)
    with pytest.raises(q.QuarantineError, match=r"lives in renamed\.json"):
        q.fold(store, spill_item)
    assert _snapshot(*_roots(store)) == before
    assert not own.exists() and renamed.exists()


def test_merge_and_fold_refuse_a_corrupt_target(tmp_path: Path) -> None:
    store, _full, (corrupt, spill) = _setup(tmp_path)
    item = q.find_item([store], corrupt.name)
    spill_item = q.find_item([store], spill.name)
    target = store.session_dir / "s1.json"
    target.write_bytes(b'{"session_id": "s1", "messages": [')
    before = _snapshot(*_roots(store))
    calls: list[Callable[[], object]] = [
        lambda: q.merge(store, item, dry_run=True),
        lambda: q.merge(store, item),
        lambda: q.fold(store, spill_item, dry_run=True),
        lambda: q.fold(store, spill_item),
    ]
    for call in calls:
        with pytest.raises(q.QuarantineError, match=r"s1\.json is corrupt"):
            call()
    assert _snapshot(*_roots(store)) == before


def test_write_reads_the_target_under_the_lock(tmp_path: Path) -> None:
    store, _full, (corrupt, _spill) = _setup(tmp_path)
    item = q.find_item([store], corrupt.name)
    target = store.session_dir / "s1.json"
    seen: list[Any] = []

    def build(current: Any) -> dict[str, Any]:
        seen.append(current)
        return dict(current)

    # The file changes after any unlocked look: the write sees (and keeps) the new bytes.
    store.add_user_message("s1", "written after the listing")
    journal = q._Journal("merge", item, "s1")
    changes = [q._FileChange(target, "session", "modify")]
    q._write_session_bytes(store, "s1", journal, changes, build, must_not_exist=False)
    assert seen[0]["messages"][-1]["content"] == "written after the listing"
    target.write_bytes(dumps_session(_session("intruder", 1, 0)))
    before = target.read_bytes()
    with pytest.raises(q.QuarantineError, match="holds session 'intruder'"):
        q._write_session_bytes(
            store, "s1", q._Journal("merge", item, "s1"), changes, build, must_not_exist=False
        )
    assert target.read_bytes() == before and len(seen) == 1


def test_fold_finishes_the_journal_when_the_spill_is_already_gone(tmp_path: Path) -> None:
    store, _full, (_corrupt, spill) = _setup(tmp_path)
    item = q.find_item([store], spill.name)
    result = q.salvage(item)
    target = store.session_dir / "s1.json"
    before_target = target.read_bytes()
    changes = [
        q._FileChange(target, "session", "modify"),
        q._FileChange(spill, "spill", "remove"),
    ]
    journal = q._Journal("fold", item, "s1")

    def build(current: Any) -> dict[str, Any]:
        spill.unlink()  # another writer consumed it before the backup
        return q._merge_into(current, q._missing(current, result))

    q._write_session_bytes(store, "s1", journal, changes, build, must_not_exist=False)
    entry = q.journal_entries()[0]
    assert entry["status"] == "done" and entry["id"] == journal.id
    q.undo()
    assert target.read_bytes() == before_target and not spill.exists()


class _Recording(DefaultSessionStore):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[tuple[str, str, Any]] = []

    def _after_write(self, session_id: str, path: Path, data: Any) -> None:
        self.calls.append((session_id, path.name, data))


def test_undo_notifies_the_store_of_every_session_file(tmp_path: Path) -> None:
    _plain, _full, (corrupt, _spill) = _setup(tmp_path)
    store = _Recording(
        tmp_path / "home" / "sessions",
        spill_dir=tmp_path / "home" / "state" / "session_spill",
        retention="keep_all",
    )
    item = q.find_item([store], corrupt.name)
    before = json.loads((store.session_dir / "s1.json").read_bytes())
    q.merge(store, item)
    assert [c[:2] for c in store.calls] == [("s1", "s1.json")]
    store.calls.clear()
    q.undo(stores=[store])
    assert store.calls == [("s1", "s1.json", before)]

    store.calls.clear()
    q.restore(store, q.find_item([store], corrupt.name))
    store.calls.clear()
    q.undo(stores=[store])
    assert store.calls == [("s1-restored", "s1-restored.json", None)]


def test_oversized_files_are_listed_but_never_read(tmp_path: Path) -> None:
    store = _store(tmp_path / "home")
    store.session_dir.mkdir(parents=True)
    big = store.session_dir / "big.json.corrupt-1700000000000"
    with big.open("wb") as fh:  # sparse: no disk, no memory
        fh.truncate(q.MAX_SALVAGE_BYTES + 1)
    (item,) = q.list_items([store])
    assert item.size == q.MAX_SALVAGE_BYTES + 1 and item.session_id == "big"
    assert item.problem is not None and "limit" in item.problem.message
    with pytest.raises(q.QuarantineError, match="salvage limit"):
        q.salvage(item)
    with pytest.raises(q.QuarantineError, match="salvage limit"):
        q.restore(store, item)
    assert big.stat().st_size == q.MAX_SALVAGE_BYTES + 1


def test_inspection_creates_no_lock_or_any_other_file(tmp_path: Path) -> None:
    store, _full, items = _setup(tmp_path)
    before = _snapshot(*_roots(store))
    for path in items:
        item = q.find_item([store], path.name)
        result = q.salvage(item)
        q.compare(store, result)
        for fn in (q.merge, q.fold, q.restore):
            with contextlib.suppress(q.QuarantineError):
                fn(store, item, dry_run=True)
        q.discard(item, dry_run=True)
    q.list_items([store])
    q.journal_entries()
    assert _snapshot(*_roots(store)) == before


def test_discard_moves_the_file_where_its_preview_said(tmp_path: Path) -> None:
    """The confirmation names the trash folder the discard then uses (one place, not a
    second one made up when the file moves)."""
    store, _full, (corrupt, _spill) = _setup(tmp_path)
    item = q.find_item([store], corrupt.name)
    raw = corrupt.read_bytes()

    def trash_path(result: q.ActionResult) -> Path:
        [path] = [f["path"] for f in result.files if f.get("role") == "trash"]
        return Path(path)

    named = trash_path(q.discard(item, dry_run=True))
    assert named.parent.parent == data_dir() / "trash" and not named.exists()
    done = q.discard(item)
    assert trash_path(done) == named
    assert named.read_bytes() == raw and not corrupt.exists()


def test_undo_leaves_the_lock_file_of_a_session_it_removed(tmp_path: Path) -> None:
    """Restore as a new session, then undo: the new session file goes, its empty
    ``<id>.json.lock`` stays (see the next test for why), and PraisonAI locks it as before."""
    from praisonaiagents.session.store import FileLock

    store, _full, (corrupt, _spill) = _setup(tmp_path)
    item = q.find_item([store], corrupt.name)
    q.restore(store, item)
    new = store.session_dir / "s1-restored.json"
    assert new.exists()
    q.undo()
    assert not new.exists()
    lock = Path(f"{new}.lock")
    assert lock.is_file() and lock.stat().st_size == 0
    with FileLock(str(new), timeout=1.0):
        pass


def test_removing_a_lock_file_breaks_praisonais_lock(tmp_path: Path) -> None:
    """Why lock files stay: PraisonAI's lock opens ``<file>.lock`` and then flocks it without
    checking that the path still names what it opened. A writer between those two steps
    when the file is removed ends up holding a lock on the removed file while the next
    writer locks a new file at the path: two writers at once. Taking the lock first (even
    non-blocking) does not close that gap, so nothing here removes a lock file."""
    import fcntl

    from praisonaiagents.session.store import FileLock

    session = tmp_path / "s.json"
    lock_path = Path(f"{session}.lock")
    cleaner = FileLock(str(session), timeout=1.0)
    assert cleaner.acquire()  # a cleanup that holds the lock first
    early = open(lock_path, "w")  # noqa: SIM115 - a writer's open() before its flock()
    try:
        lock_path.unlink()  # the cleanup removes the lock file, then lets go
        cleaner.release()
        fcntl.flock(early.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # the writer's flock
        other = FileLock(str(session), timeout=1.0)
        assert other.acquire()  # a second writer gets "the" lock too
        other.release()
    finally:
        early.close()
