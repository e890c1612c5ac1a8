"""Damaged live session files in the quarantine workbench: listed, restored in place, undone;
what was already done with an item; why an action does not apply."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from session_browser.core import quarantine as q
from session_browser.core.files import dumps_session
from session_browser.core.quarantine import actions as q_actions
from session_browser.core.store import DefaultSessionStore

T0 = 1_700_000_000


def _store(root: Path) -> DefaultSessionStore:
    store = DefaultSessionStore(
        root / "sessions", spill_dir=root / "state" / "session_spill", retention="keep_all"
    )
    store.session_dir.mkdir(parents=True)
    return store


def _session(sid: str, n: int = 6, size: int = 40) -> dict[str, Any]:
    return {
        "session_id": sid,
        "messages": [
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"turn {i} ü " + "y" * size,
                "timestamp": T0 + i * 60,
                "metadata": {},
            }
            for i in range(n)
        ],
        "created_at": "2023-11-14T22:13:20+00:00",
        "updated_at": "2023-11-20T00:00:00+00:00",
        "metadata": {"title": "t"},
        "archived_messages": [],
    }


def _write(store: DefaultSessionStore, sid: str, raw: bytes) -> Path:
    path = store.session_path(sid)
    path.write_bytes(raw)
    return path


def _truncated(store: DefaultSessionStore, sid: str, n: int = 6, size: int = 40) -> bytes:
    raw = dumps_session(_session(sid, n, size))
    return raw[: raw.index(f"turn {n - 1} ".encode())]


def test_damaged_live_files_are_listed_healthy_ones_never(tmp_path: Path) -> None:
    store = _store(tmp_path)
    big = dumps_session(_session("big-ok", n=40, size=400))
    assert len(big) > 3 * 4096  # looked at through its ends only
    _write(store, "big-ok", big)
    _write(store, "small-ok", dumps_session(_session("small-ok")))
    broken = {
        "trunc": _truncated(store, "trunc"),
        "big-trunc": _truncated(store, "big-trunc", n=40, size=400),
        "empty": b"",
        "nul": dumps_session(_session("nul"))[:300] + b"\0" * 9000,
        "utf8": dumps_session(_session("utf8")).replace("ü".encode(), b"\xff", 1),
        "listroot": b'[{"session_id": "listroot"}]\n',
    }
    for sid, raw in broken.items():
        _write(store, sid, raw)
    items = q.list_items([store])
    assert {it.session_id for it in items} == set(broken)
    assert all(it.kind == q.KIND_LIVE for it in items)
    by_id = {it.session_id: it for it in items}
    assert str(by_id["empty"].problem) == "empty file (line 1, column 1, byte 0)"
    assert by_id["listroot"].problem is not None
    assert "root is list" in by_id["listroot"].problem.message
    utf8 = by_id["utf8"].problem
    assert utf8 is not None and utf8.message.startswith("invalid UTF-8")
    assert utf8.offset == broken["utf8"].index(b"\xff")
    trunc = by_id["trunc"].problem
    assert trunc is not None and trunc.offset is not None and trunc.line is not None
    assert by_id["trunc"].as_dict()["kind"] == "live"


def test_restore_in_place_then_undo_gives_back_the_damaged_bytes(tmp_path: Path) -> None:
    store = _store(tmp_path)
    damaged = _truncated(store, "s1")
    path = _write(store, "s1", damaged)
    os.chmod(path, 0o640)
    os.utime(path, ns=(T0 * 10**9, T0 * 10**9))
    [item] = q.list_items([store])
    plan = q.restore(store, item, dry_run=True)
    assert [f["change"] for f in plan.files] == ["modify", "create"]
    assert plan.files[0]["path"] == str(path) and plan.added == 5
    assert path.read_bytes() == damaged  # a dry run writes nothing
    assert sorted(p.name for p in store.session_dir.iterdir()) == ["s1.json"]
    done = q.restore(store, item)
    assert done.action_id is not None and done.session_id == "s1"
    data = json.loads(path.read_bytes())
    assert len(data["messages"]) == 5 and data["session_id"] == "s1"
    [aside] = store.session_dir.glob("s1.json.corrupt-*")
    assert aside.read_bytes() == damaged
    assert str(aside) == plan.files[1]["path"]  # the file the dry run named
    assert aside.name == f"s1.json.corrupt-{T0 * 1000}"  # named after the damaged file's mtime
    assert store.read_raw("s1") is not None
    # The damaged live file is no longer listed; its aside copy says what became of it.
    [after] = q.list_items([store])
    assert after.path == aside and after.status == "restored in place as s1"
    q.undo(done.action_id)
    assert path.read_bytes() == damaged
    st = path.stat()
    assert st.st_mode & 0o777 == 0o640 and st.st_mtime_ns == T0 * 10**9
    assert not aside.exists()
    [again] = q.list_items([store])
    assert again.kind == q.KIND_LIVE and again.status is None


def test_in_place_restore_refuses_a_file_that_parses_now(tmp_path: Path) -> None:
    store = _store(tmp_path)
    path = _write(store, "s1", _truncated(store, "s1"))
    [item] = q.list_items([store])
    healthy = dumps_session(_session("s1"))
    path.write_bytes(healthy)
    with pytest.raises(q.QuarantineError, match="parses now"):
        q.restore(store, item)
    assert path.read_bytes() == healthy
    assert sorted(p.name for p in store.session_dir.iterdir() if "lock" not in p.name) == [
        "s1.json"
    ]
    assert q.journal_entries() == []


def _corrupt_copy(store: DefaultSessionStore, sid: str) -> Path:
    path = store.session_dir / f"{sid}.json.corrupt-{T0 * 1000}"
    path.write_bytes(_truncated(store, sid))
    return path


def test_a_second_restore_warns_instead_of_making_another_copy(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _corrupt_copy(store, "s1")
    [item] = q.list_items([store])
    first = q.restore(store, item)
    assert first.session_id == "s1-restored"
    [item] = [it for it in q.list_items([store]) if it.kind == q.KIND_CORRUPT]
    assert item.status == "restored as s1-restored"
    with pytest.raises(q.AlreadyRestored, match="already restored as s1-restored"):
        q.restore(store, item, dry_run=True)
    assert not store.session_path("s1-restored-2").exists()
    assert q.restore(store, item, again=True).session_id == "s1-restored-2"
    assert q.restore(store, item, new_session_id="chosen").session_id == "chosen"


def test_status_after_merge_says_fully_merged(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _corrupt_copy(store, "s1")
    live = _session("s1")
    live["messages"] = live["messages"][:2]
    _write(store, "s1", dumps_session(live))
    [item] = q.list_items([store])
    assert item.status is None
    q.merge(store, item)
    [item] = q.list_items([store])
    assert item.status == "fully merged into s1, can be discarded"
    assert item.as_dict()["history"][0]["action"] == "merge"


def test_why_an_action_does_not_apply(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _write(store, "live", _truncated(store, "live"))
    _corrupt_copy(store, "orphan")
    items = {it.session_id: it for it in q.list_items([store])}
    live, orphan = items["live"], items["orphan"]
    assert "fold is for spill files" in str(q.unavailable(live, "fold"))
    assert "restore it in place" in str(q.unavailable(live, "merge"))
    assert "has no live file to merge into" in str(q.unavailable(orphan, "merge"))
    assert q.unavailable(orphan, "restore") is None
    with pytest.raises(q.QuarantineError, match="restore it in place"):
        q.merge(store, live, dry_run=True)


def test_a_failed_in_place_write_leaves_the_damaged_file_and_no_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path)
    damaged = _truncated(store, "s1")
    path = _write(store, "s1", damaged)
    [item] = q.list_items([store])
    real = q_actions.atomic_write_bytes

    def failing(target: Path, payload: bytes, **kw: Any) -> None:
        if target == path:
            raise OSError(28, "No space left on device")
        real(target, payload, **kw)

    monkeypatch.setattr(q_actions, "atomic_write_bytes", failing)
    with pytest.raises(OSError):
        q.restore(store, item)
    assert path.read_bytes() == damaged
    assert not list(store.session_dir.glob("s1.json.corrupt-*"))
    assert q.journal_entries() == []


def test_discard_of_a_damaged_live_file_and_undo(tmp_path: Path) -> None:
    store = _store(tmp_path)
    damaged = _truncated(store, "s1")
    path = _write(store, "s1", damaged)
    [item] = q.list_items([store])
    done = q.discard(item)
    assert not path.exists() and q.list_items([store]) == []
    q.undo(done.action_id)
    assert path.read_bytes() == damaged


def test_damage_inside_a_big_file_is_listed_with_and_without_the_index(tmp_path: Path) -> None:
    from session_browser.core.index import SqliteSessionStore

    plain = _store(tmp_path)
    raw = dumps_session(_session("mid", n=40, size=400))
    middle = raw.index("ü".encode(), len(raw) // 2)
    damaged = raw[:middle] + b"\xff" + raw[middle + 2 :]  # its ends look fine
    _write(plain, "mid", damaged)
    [found] = q.list_items([plain])  # every file is read whole (once)
    assert found.kind == q.KIND_LIVE and found.session_id == "mid"
    with SqliteSessionStore(plain.session_dir, db_path=tmp_path / "idx.sqlite3") as indexed:
        assert indexed.skipped_names() == ["mid.json"]
        [item] = q.list_items([indexed])
    assert item.kind == q.KIND_LIVE and item.problem is not None
    assert item.problem.message.startswith("invalid UTF-8") and item.problem.offset == middle


def _damaged_in_the_middle(sid: str) -> bytes:
    """A session file over 8 KiB whose first and last 4 KiB are intact: a run of NUL bytes
    overwrote the middle (the size stays the same)."""
    raw = bytearray(dumps_session(_session(sid, n=60, size=400)))
    assert len(raw) > 4 * 4096
    middle = len(raw) // 2
    raw[middle : middle + 512] = b"\0" * 512
    return bytes(raw)


def test_damage_in_the_middle_of_a_big_live_file_is_listed(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _write(store, "ok", dumps_session(_session("ok", n=60, size=400)))
    raw = _damaged_in_the_middle("mid")
    _write(store, "mid", raw)
    [item] = q.list_items([store])
    assert item.kind == q.KIND_LIVE and item.session_id == "mid"
    assert item.problem is not None and item.problem.offset == len(raw) // 2


def test_a_healthy_file_damaged_later_is_listed_even_with_its_old_size_and_mtime(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path)
    good = dumps_session(_session("s1", n=60, size=400))
    path = _write(store, "s1", good)
    os.utime(path, ns=(T0 * 10**9, T0 * 10**9))
    assert q.list_items([store]) == []  # read whole once, remembered as healthy
    assert q.list_items([store]) == []
    raw = bytearray(good)
    raw[len(raw) // 2] = 0xFF  # invalid UTF-8, same size, same mtime put back
    path.write_bytes(bytes(raw))
    os.utime(path, ns=(T0 * 10**9, T0 * 10**9))
    [item] = q.list_items([store])
    assert item.session_id == "s1" and item.kind == q.KIND_LIVE
    # Listing leaves the session dir as it was: the memory is in our cache dir.
    assert sorted(p.name for p in store.session_dir.iterdir()) == ["s1.json"]
