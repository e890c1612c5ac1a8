"""A redacted export never silently replaces its original; every import is undoable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from session_browser.core import portable
from session_browser.core import quarantine as q
from session_browser.core.store import DefaultSessionStore

os.environ.setdefault("DO_NOT_TRACK", "1")
from praisonaiagents.session.store import DefaultSessionStore as PraisonStore

SECRET_LINE = "restic: password_file=/home/ann/.config/restic/pw-local"


def _session(sid: str, text: str = "hello", ts: float = 1_700_000_000.0) -> dict[str, Any]:
    return {
        "session_id": sid,
        "messages": [{"role": "user", "content": text, "timestamp": ts, "metadata": {}}],
        "created_at": "2023-11-14T22:13:20+00:00",
        "updated_at": "2023-11-15T10:00:00+00:00",
        "metadata": {},
        "archived_messages": [],
    }


def _store(root: Path, *sessions: dict[str, Any]) -> DefaultSessionStore:
    store = DefaultSessionStore(root / "sessions")
    store.session_dir.path.mkdir(parents=True, exist_ok=True)
    for data in sessions:
        path = store.session_path(data["session_id"])
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")
        os.chmod(path, 0o640)
        os.utime(path, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    return store


def _files(store: DefaultSessionStore) -> dict[str, tuple[bytes, int, int]]:
    out = {}
    for p in sorted(store.session_dir.path.glob("*.json")):
        st = p.stat()
        out[p.name] = (p.read_bytes(), st.st_mode & 0o777, st.st_mtime_ns)
    return out


def _redacted_export(store: DefaultSessionStore, *ids: str) -> Any:
    data, counts = portable.export_bytes(
        [store.read_raw(i) or {} for i in ids], "json", redact=True
    )
    assert counts.get("secret") == len(ids)
    return json.loads(data)


def test_redacted_export_carries_a_marker_that_praisonai_ignores(tmp_path: Path) -> None:
    src = _store(tmp_path / "src", _session("demo", SECRET_LINE))
    payload = _redacted_export(src, "demo")
    assert payload["redacted"] == {"total": 1, "by_kind": {"secret": 1}}
    assert "[REDACTED:secret]" in payload["sessions"][0]["messages"][0]["content"]
    theirs = PraisonStore(session_dir=str(tmp_path / "praison"))
    assert theirs.import_sessions(payload).imported == 1
    plain, _ = portable.export_bytes([src.read_raw("demo") or {}], "json")
    assert "redacted" not in json.loads(plain)


def test_redacted_replace_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path, _session("demo", SECRET_LINE))
    payload = _redacted_export(store, "demo")
    before = _files(store)
    with pytest.raises(portable.RedactedReplaceRefused, match="redacted export") as info:
        portable.import_sessions(store, payload, overwrite=True)
    assert info.value.ids == ["demo"]
    assert _files(store) == before and q.journal_entries() == []
    # The dry run shows it and says it would be refused.
    dry = portable.import_sessions(store, payload, overwrite=True, dry_run=True)
    assert dry.replaced_ids == ["demo"] and dry.created_ids == [] and dry.refused == ["demo"]
    assert dry.redacted and _files(store) == before
    # Creating from a redacted export is fine.
    other = tmp_path / "other"
    created = portable.import_sessions(_store(other), payload, overwrite=True)
    assert created.created_ids == ["demo"] and created.refused == []


def test_placeholders_without_marker_count_as_redacted(tmp_path: Path) -> None:
    store = _store(tmp_path, _session("demo", SECRET_LINE), _session("plain"))
    payload = _redacted_export(store, "demo")
    del payload["redacted"]  # an older export, or another tool's
    payload["sessions"].append(_session("plain", "new text, nothing hidden"))
    with pytest.raises(portable.RedactedReplaceRefused) as info:
        portable.import_sessions(store, payload, overwrite=True)
    assert info.value.ids == ["demo"]
    # Without the placeholder session the same replace goes through.
    payload["sessions"] = payload["sessions"][1:]
    report = portable.import_sessions(store, payload, overwrite=True)
    assert report.replaced_ids == ["plain"] and not report.redacted


def test_allowed_redacted_replace_is_undone_byte_identically(tmp_path: Path) -> None:
    store = _store(tmp_path, _session("demo", SECRET_LINE), _session("keep"))
    payload = _redacted_export(store, "demo")
    payload["sessions"].append(_session("fresh", "a new one"))
    before = _files(store)
    report = portable.import_sessions(
        store, payload, overwrite=True, allow_redacted=True, source="/x/export.json"
    )
    assert report.replaced_ids == ["demo"] and report.created_ids == ["fresh"]
    assert "[REDACTED:secret]" in store.session_path("demo").read_text()
    entry = q.journal_entries()[0]
    assert entry["id"] == report.action_id and entry["action"] == "import"
    assert entry["item"] == "/x/export.json" and entry["status"] == "done"
    preview = q.undo(dry_run=True)
    assert sorted(f["restore"] for f in preview["files"]) == ["remove", "write"]
    q.undo(stores=[store])
    assert _files(store) == before  # bytes, mode and mtime; the created file is gone
    assert q.journal_entries() == []


def test_create_only_import_is_undone_unless_changed_since(tmp_path: Path) -> None:
    store = _store(tmp_path)
    payload = {"version": 1, "sessions": [_session("a"), _session("b")]}
    report = portable.import_sessions(store, payload)
    assert report.created_ids == ["a", "b"] and report.action_id
    store.add_user_message("b", "written after the import")
    with pytest.raises(q.QuarantineError, match="changed since"):
        q.undo()
    assert store.session_path("a").exists()  # nothing undone
    store2 = _store(tmp_path / "two")
    portable.import_sessions(store2, payload)
    q.undo(q.journal_entries()[0]["id"])
    assert _files(store2) == {}


def test_a_crash_after_the_backup_is_recovered_for_undo(tmp_path: Path) -> None:
    store = _store(tmp_path, _session("demo", "original"))
    before = _files(store)
    journal = q._SourceJournal("import", "x.json", "demo")
    new = q.dumps_session(_session("demo", "replacement"))
    path = store.session_path("demo")
    journal.backup([q._FileChange(path, "session", "modify")], {path: {"exists": True,
                                                                     "sha256": q._sha(new)}})
    journal.entry["pid"] = 2**22 + 12345  # a process that is gone
    journal._save()
    path.write_bytes(new)  # the write landed, the process died before finishing
    assert q.recover_pending()[0]["recovered"].startswith("finished")
    q.undo()
    assert _files(store) == before


def test_dry_run_separates_create_and_replace(tmp_path: Path) -> None:
    store = _store(tmp_path, _session("old"))
    payload = {"version": 1, "sessions": [_session("old", "v2"), _session("new")]}
    dry = portable.import_sessions(store, payload, overwrite=True, dry_run=True)
    assert dry.created_ids == ["new"] and dry.replaced_ids == ["old"]
    assert dry.as_dict()["created_ids"] == ["new"] and dry.as_dict()["replaced_ids"] == ["old"]
    assert q.journal_entries() == []


_PAUSING_IMPORT = """
import json, pathlib, sys, time
from session_browser.core import portable, store as st
real = st.DefaultSessionStore._notify  # the store's after-write hook
done = []
def write_then_pause(self, *args, **kwargs):
    real(self, *args, **kwargs)
    done.append(1)
    if len(done) == 2:
        pathlib.Path(sys.argv[1]).write_text("paused")
        time.sleep(120)
st.DefaultSessionStore._notify = write_then_pause
store = st.DefaultSessionStore(sys.argv[2])
portable.import_file(store, sys.argv[3], overwrite=True)
"""


def test_an_import_killed_mid_way_is_undone_byte_identically(tmp_path: Path) -> None:
    store = _store(tmp_path, *(_session(f"s{i}", f"original {i}") for i in range(4)))
    before = _files(store)
    payload = tmp_path / "p.json"
    sessions = [_session(f"s{i}", f"replacement {i}") for i in range(4)] + [_session("new")]
    payload.write_text(json.dumps({"version": 1, "sessions": sessions}))
    ready = tmp_path / "paused"
    proc = subprocess.Popen(
        [sys.executable, "-c", _PAUSING_IMPORT, str(ready), str(store.session_dir), str(payload)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not ready.exists() and proc.poll() is None:
        time.sleep(0.02)
    assert ready.exists(), proc.communicate(timeout=60)
    proc.kill()  # no finally runs: the journal entry stays pending
    proc.communicate(timeout=60)
    changed = [n for n, f in _files(store).items() if before.get(n) != f]
    assert len(changed) == 2
    assert q.journal_entries()[0]["status"] == "pending"
    q.undo()  # finishes the pending entry first, then puts everything back
    assert _files(store) == before


def test_praisonai_export_over_existing_sessions_replaces_and_undoes(tmp_path: Path) -> None:
    theirs = PraisonStore(session_dir=str(tmp_path / "praison"))
    theirs.add_user_message("p1", "the newer text, api_key is not here")
    payload = json.loads(json.dumps(theirs.export_all()))
    assert "redacted" not in payload
    store = _store(tmp_path / "ours", _session("p1", "the older text"))
    before = _files(store)
    report = portable.import_sessions(store, payload, overwrite=True)
    assert report.replaced_ids == ["p1"] and not report.redacted
    assert "newer" in store.session_path("p1").read_text()
    q.undo()
    assert _files(store) == before
