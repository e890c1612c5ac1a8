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

import pytest
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


def test_a_spill_with_a_400_char_id_is_listed_unusable_and_blocks_nothing(tmp_path: Path) -> None:
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
    assert items[bad.name].unusable and "too long" in items[bad.name].unusable
    assert items[good.name].unusable is None
    with pytest.raises(q.QuarantineError, match="cannot name a session file"):
        q.fold(store, items[bad.name])
    q.fold(store, items[good.name])  # the other item still works
    runner = CliRunner()
    args = ["--store", str(store.session_dir)]
    res = runner.invoke(main, ["quarantine", "list", "--json", *args])
    assert res.exit_code == 0, res.output
    (listed,) = json.loads(res.stdout)["items"]
    assert listed["unusable"] and listed["name"] == bad.name
    res = runner.invoke(main, ["quarantine", "list", *args], env={"COLUMNS": "300"})
    assert res.exit_code == 0 and "unusable" in res.stdout
    for cmd in ("show", "salvage"):
        assert runner.invoke(main, ["quarantine", cmd, bad.name, *args]).exit_code == 0
    res = runner.invoke(main, ["quarantine", "fold", bad.name, "--yes", *args])
    assert res.exit_code != 0 and bad.name in res.stderr and "Traceback" not in res.output
    res = runner.invoke(main, ["quarantine", "discard", bad.name, "--yes", *args])
    assert res.exit_code == 0 and not bad.exists()


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
