"""Quarantine actions on hostile items: huge sparse files, symlinks, unusable ids, crashes."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core import quarantine as q
from session_browser.core.files import dumps_session
from session_browser.core.paths import data_dir
from session_browser.core.store import DefaultSessionStore


def _store(root: Path) -> DefaultSessionStore:
    store = DefaultSessionStore(
        root / "sessions", spill_dir=root / "state" / "session_spill", retention="keep_all"
    )
    store.session_dir.mkdir(parents=True)
    store.spill_dir.mkdir(parents=True)
    return store


def _sha(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def test_discard_and_undo_of_a_600_mb_sparse_file_stream_and_stay_sparse(tmp_path: Path) -> None:
    store = _store(tmp_path / "home")
    big = store.session_dir / "big.json.corrupt-1700000000000"
    with big.open("wb") as fh:
        fh.write(b'{"session_id": "big", "messages": [')
        fh.truncate(600 * 1024 * 1024)
    size, sha = big.stat().st_size, _sha(big)
    code = textwrap.dedent(
        f"""
        import sys
        from session_browser.core import quarantine as q
        from session_browser.core.store import DefaultSessionStore
        store = DefaultSessionStore({str(store.session_dir)!r}, spill_dir={str(store.spill_dir)!r})
        item = q.find_item([store], {big.name!r})
        q.{{}}
        # VmHWM: this process's own peak (ru_maxrss would carry the forking parent's).
        hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0]
        print(int(hwm.split()[1]) // 1024)
        """
    )
    env = dict(os.environ)
    for step in ("discard(item)", "undo()"):
        if step == "undo()":
            code = code.replace("item = q.find_item([store], " + repr(big.name) + ")\n", "")
        out = subprocess.run(
            [sys.executable, "-c", code.format(step)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=300,
        )
        peak_mb = int(out.stdout.split()[-1])
        assert peak_mb < 200, f"{step} peaked at {peak_mb} MB"
        if step == "discard(item)":
            assert not big.exists()
            (trashed,) = (data_dir() / "trash").rglob(big.name)
            assert trashed.stat().st_size == size
            assert trashed.stat().st_blocks * 512 < 16 * 1024 * 1024  # still sparse
    assert big.stat().st_size == size and _sha(big) == sha
    assert big.stat().st_blocks * 512 < 16 * 1024 * 1024


def test_a_symlinked_item_is_moved_and_put_back_as_the_link(tmp_path: Path) -> None:
    store = _store(tmp_path / "home")
    outside = tmp_path / "outside-the-store.txt"
    outside.write_bytes(b"secret data outside the store")
    link = store.session_dir / "s1.json.corrupt-1700000000000"
    link.symlink_to(outside)
    item = q.find_item([store], link.name)
    q.discard(item)
    assert not os.path.lexists(link)
    (trashed,) = [p for p in (data_dir() / "trash").rglob("*") if p.name == link.name]
    assert trashed.is_symlink() and os.readlink(trashed) == str(outside)
    for p in (data_dir() / "journal").rglob("*"):  # the target's bytes were never copied
        assert not p.is_file() or b"secret data" not in p.read_bytes()
    q.undo()
    assert link.is_symlink() and os.readlink(link) == str(outside)
    assert outside.read_bytes() == b"secret data outside the store"


def test_a_spill_claiming_a_400_char_id_is_its_file_names_session(tmp_path: Path) -> None:
    """An id no file could be named after is only a claim: the spill is session ``long``,
    as its name says, and the claim is shown; the other item works as ever."""
    store = _store(tmp_path / "home")
    bad = store.spill_dir / "long.1700000000001.9.abcdef01.json"
    bad.write_text(
        json.dumps({"session_id": "x" * 400, "messages": [{"role": "user", "content": "hi"}]})
    )
    good = store.spill_dir / "s1.1700000000002.9.abcdef02.json"
    good.write_text(
        json.dumps({"session_id": "s1", "messages": [{"role": "user", "content": "hey"}]})
    )
    items = {it.name: it for it in q.list_items([store])}
    item = items[bad.name]
    assert (item.session_id, item.id_source, item.inner_id) == ("long", "name", "x" * 400)
    assert item.unusable is None and items[good.name].unusable is None
    q.fold(store, items[good.name])  # the other item still works
    runner = CliRunner()
    args = ["--store", str(store.session_dir)]
    res = runner.invoke(main, ["quarantine", "list", "--json", *args])
    assert res.exit_code == 0, res.output
    (listed,) = json.loads(res.stdout)["items"]
    assert listed["session_id"] == "long" and listed["inner_session_id"] == "x" * 400
    res = runner.invoke(main, ["quarantine", "list", *args], env={"COLUMNS": "600"})
    assert res.exit_code == 0 and "its bytes claim" in res.stdout
    for cmd in ("show", "salvage"):
        assert runner.invoke(main, ["quarantine", cmd, bad.name, *args]).exit_code == 0
    res = runner.invoke(main, ["quarantine", "fold", bad.name, "--yes", *args])
    assert res.exit_code == 0 and "Traceback" not in res.output
    folded = json.loads(store.session_path("long").read_text())
    assert folded["session_id"] == "long" and not bad.exists()
    assert [m["content"] for m in folded["messages"]] == ["hi"]


def test_list_shows_the_id_inside_a_corrupt_file_when_the_name_differs(tmp_path: Path) -> None:
    store = _store(tmp_path / "home")
    raw = dumps_session({"session_id": "inner-id", "messages": [{"role": "user", "content": "x"}]})
    corrupt = store.session_dir / "outer.json.corrupt-1700000000000"
    corrupt.write_bytes(raw[:-5])
    (item,) = q.list_items([store])
    assert item.session_id == "outer" and item.inner_id == "inner-id"
    runner = CliRunner()
    args = ["--store", str(store.session_dir)]
    listed = json.loads(runner.invoke(main, ["quarantine", "list", "--json", *args]).stdout)
    assert listed["items"][0]["session_id"] == "outer"
    assert listed["items"][0]["inner_session_id"] == "inner-id"
    text = runner.invoke(main, ["quarantine", "list", *args], env={"COLUMNS": "300"}).stdout
    assert "outer" in text and "inner-id" in text


def _crash_child(store: DefaultSessionStore, item_name: str) -> subprocess.CompletedProcess[str]:
    """Run a merge in a child that is SIGKILLed right after the session write."""
    code = textwrap.dedent(
        f"""
        import os, signal
        from session_browser.core import quarantine as q
        from session_browser.core.quarantine import actions
        from session_browser.core.store import DefaultSessionStore
        real = actions.atomic_write_bytes
        def write_then_die(path, payload, **kw):
            real(path, payload, **kw)
            if path.name.endswith(".json") and path.name != "entry.json":
                os.kill(os.getpid(), signal.SIGKILL)
        actions.atomic_write_bytes = write_then_die
        store = DefaultSessionStore({str(store.session_dir)!r}, spill_dir={str(store.spill_dir)!r},
                                    retention="keep_all")
        q.merge(store, q.find_item([store], {item_name!r}))
        """
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_a_crash_between_session_write_and_journal_is_undone(tmp_path: Path) -> None:
    store = _store(tmp_path / "home")
    msgs = [{"role": "user", "content": f"turn {i}", "timestamp": 1.7e9 + i} for i in range(4)]
    full = dumps_session({"session_id": "s1", "messages": msgs})
    store.session_path("s1").write_bytes(dumps_session({"session_id": "s1", "messages": msgs[:2]}))
    os.chmod(store.session_path("s1"), 0o600)
    corrupt = store.session_dir / "s1.json.corrupt-1700000000000"
    corrupt.write_bytes(full[:-3])
    before = store.session_path("s1").read_bytes()
    proc = _crash_child(store, corrupt.name)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert store.session_path("s1").read_bytes() != before  # the write happened
    (entry,) = q.journal_entries()
    assert entry["status"] == "pending"
    res = CliRunner().invoke(main, ["quarantine", "undo", "--list", "--json"])
    assert res.exit_code == 0, res.output
    assert q.journal_entries()[0]["status"] == "done"
    res = CliRunner().invoke(main, ["quarantine", "undo", "--yes"])  # previews, then undoes
    assert res.exit_code == 0, res.output
    assert store.session_path("s1").read_bytes() == before
    assert q.journal_entries() == []


def test_undo_alone_finishes_a_crashed_entry(tmp_path: Path) -> None:
    store = _store(tmp_path / "home")
    msgs = [{"role": "user", "content": f"turn {i}", "timestamp": 1.7e9 + i} for i in range(4)]
    store.session_path("s1").write_bytes(dumps_session({"session_id": "s1", "messages": msgs[:1]}))
    before = store.session_path("s1").read_bytes()
    corrupt = store.session_dir / "s1.json.corrupt-1700000000000"
    corrupt.write_bytes(dumps_session({"session_id": "s1", "messages": msgs})[:-3])
    assert _crash_child(store, corrupt.name).returncode == -signal.SIGKILL
    res = CliRunner().invoke(main, ["quarantine", "undo", "--yes"])
    assert res.exit_code == 0, res.output
    assert store.session_path("s1").read_bytes() == before


def test_a_pending_entry_with_nothing_changed_is_dropped(tmp_path: Path) -> None:
    store = _store(tmp_path / "home")
    store.session_path("s1").write_bytes(dumps_session({"session_id": "s1", "messages": []}))
    corrupt = store.session_dir / "s1.json.corrupt-1700000000000"
    corrupt.write_bytes(b'{"session_id": "s1", "messages": [{"role": "user", "content": "a"}')
    journal = q._Journal("merge", q.find_item([store], corrupt.name), "s1")
    journal.entry["pid"] = 2**22 + 12345  # a process that is gone
    journal.backup([q._FileChange(store.session_path("s1"), "session", "modify")])
    assert q.recover_pending()[0]["recovered"].startswith("dropped")
    assert q.journal_entries() == []


def test_journal_trash_and_data_dir_are_private_under_umask_022(tmp_path: Path) -> None:
    store = _store(tmp_path / "home")
    store.session_path("s1").write_bytes(dumps_session({"session_id": "s1", "messages": []}))
    corrupt = store.session_dir / "s1.json.corrupt-1700000000000"
    corrupt.write_bytes(b'{"session_id": "s1", "messages": [{"role": "user", "content": "a"}]')
    spill = store.spill_dir / "s1.1700000000002.9.abcdef02.json"
    spill.write_text(
        json.dumps({"session_id": "s1", "messages": [{"role": "user", "content": "b"}]})
    )
    old = os.umask(0o022)
    try:
        q.merge(store, q.find_item([store], corrupt.name))
        q.discard(q.find_item([store], spill.name))
    finally:
        os.umask(old)
    root = data_dir()
    paths = [root, *root.rglob("*")]
    assert any(p.is_file() for p in paths) and any(p.name == "trash" for p in paths)
    for p in paths:
        mode = stat.S_IMODE(p.lstat().st_mode)
        assert mode == (0o700 if p.is_dir() else 0o600), (p, oct(mode))


def _live_session(sid: str, text: str) -> bytes:
    msgs = [{"role": "user", "content": text, "timestamp": 1.7e9}]
    return dumps_session({"session_id": sid, "messages": msgs})


def test_the_file_name_is_the_session_in_the_list_and_in_every_action(tmp_path: Path) -> None:
    """A corrupt copy named for ``outer`` whose bytes claim ``inner``: the list, restore,
    merge, discard and undo all take it as ``outer``; ``inner`` is only shown."""
    store = _store(tmp_path / "home")
    outer, inner = store.session_path("outer"), store.session_path("inner")
    outer.write_bytes(_live_session("outer", "outer's own turn"))
    inner.write_bytes(_live_session("inner", "inner's own turn"))
    inner_bytes = inner.read_bytes()
    claim = {
        "session_id": "inner",
        "messages": [{"role": "user", "content": "saved turn", "timestamp": 1.7e9 + 5}],
    }
    corrupt = store.session_dir / "outer.json.corrupt-1700000000000"
    corrupt.write_bytes(dumps_session(claim)[:-3])

    (item,) = q.list_items([store])
    assert (item.session_id, item.id_source, item.inner_id) == ("outer", "name", "inner")
    result = q.salvage(item)
    assert result.session_id == "outer" and any("claim" in n for n in result.notes)

    restored = q.restore(store, item)
    assert restored.session_id == "outer-restored" and any("claim" in n for n in restored.notes)
    assert json.loads(store.session_path("outer-restored").read_text())["session_id"] == (
        "outer-restored"
    )
    assert not store.session_path("inner-restored").exists()
    q.undo(stores=[store])
    assert not store.session_path("outer-restored").exists()

    outer_before = outer.read_bytes()
    merged = q.merge(store, q.find_item([store], corrupt.name))
    assert merged.session_id == "outer" and merged.added == 1
    contents = [m["content"] for m in json.loads(outer.read_text())["messages"]]
    assert contents == ["outer's own turn", "saved turn"]
    assert inner.read_bytes() == inner_bytes  # the claimed session is never touched
    q.undo(stores=[store])
    assert outer.read_bytes() == outer_before

    discarded = q.discard(q.find_item([store], corrupt.name))
    assert discarded.session_id == "outer" and not corrupt.exists()
    entry = q.undo(stores=[store])
    assert entry["action"] == "discard" and corrupt.exists()

    res = CliRunner().invoke(
        main, ["quarantine", "list", "--store", str(store.session_dir)], env={"COLUMNS": "300"}
    )
    assert res.exit_code == 0 and "outer" in res.stdout and "its bytes claim inner" in res.stdout


def test_a_spill_is_folded_into_the_session_its_name_gives(tmp_path: Path) -> None:
    """A spill named for ``a`` whose payload claims ``b``: listed as ``a``, folded into
    ``a`` (``b`` untouched), and undone."""
    store = _store(tmp_path / "home")
    live_b = _live_session("b", "b's own turn")
    store.session_path("b").write_bytes(live_b)
    spill = store.spill_dir / "a.1700000000001.9.abcdef01.json"
    spill.write_text(
        json.dumps({"session_id": "b", "messages": [{"role": "user", "content": "spilled"}]})
    )
    (item,) = q.list_items([store])
    assert (item.session_id, item.inner_id) == ("a", "b")
    folded = q.fold(store, item)
    assert folded.session_id == "a" and any("claim" in n for n in folded.notes)
    data = json.loads(store.session_path("a").read_text())
    assert data["session_id"] == "a" and [m["content"] for m in data["messages"]] == ["spilled"]
    assert store.session_path("b").read_bytes() == live_b and not spill.exists()
    q.undo(stores=[store])
    assert spill.exists() and not store.session_path("a").exists()
