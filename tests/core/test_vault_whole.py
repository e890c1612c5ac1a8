"""Sessions that are no file of their own are kept by the vault: a row of OpenCode's or
Goose's database, a launch inside Aider's chat history, a newer Kimi Code CLI session (a
folder of logs: its own and its subagents'). Each is kept as the source read it
(a portable export), again when it changes; once its row or launch is gone, search, ``show``
and ``vault log`` still read it from the vault (marked deleted), ``vault restore`` writes it
only where it is asked to (as a file ``import`` reads), ``forget`` reaches it, and nothing
is ever written where the agent keeps its sessions."""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core import recall
from session_browser.core.open import index_store
from session_browser.core.sources import SOURCES
from session_browser.core.sources.aider import HISTORY
from session_browser.core.sources.goose import DB_NAME
from session_browser.core.vault import Vault
from session_browser.core.vault.reading import kept_session, load_session
from session_browser.core.vault.whole import HEAD, export_bytes, export_name, read_export
from tests.agents import snapshot
from tests.core import test_aider, test_goose, test_kimi, test_opencode


def run(*args: str, code: int = 0) -> str:
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code == code, (args, res.output)
    return res.output


def texts(data: dict[str, Any] | None) -> str:
    assert data is not None
    return json.dumps(data)


def delete_rows(db_path: Path, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
    """What the agent does when a session is deleted in it (the test plays the agent)."""
    with closing(sqlite3.connect(db_path)) as db:
        for sql, args in statements:
            db.execute(sql, args)
        db.commit()
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # (a WAL database: as it does in time)


def test_an_export_reads_back_as_the_session_it_holds() -> None:
    data: dict[str, Any] = {
        "session_id": "ses_1",
        "messages": [
            {"role": "user", "content": "lone \udc80 surrogate", "metadata": {"hidden": [{}]}},
            {"role": "assistant", "content": "é", "metadata": {}},
        ],
    }
    raw = export_bytes("opencode", "opencode.db/ses_1", data)
    assert raw.startswith(HEAD) and raw == export_bytes("opencode", "opencode.db/ses_1", data)
    assert read_export(raw, hidden=True) == data
    shown = read_export(raw)
    assert shown is not None and shown["messages"][0]["metadata"] == {}
    assert read_export(b'{"kept_export": {}, "sessions": []}') is None
    assert read_export(b"not json") is None
    assert export_name("aider-9ae4-2026-03-02T18:40:11") == "aider-9ae4-2026-03-02T18_40_11.json"
    assert export_name("../x/y") == "_x_y.json" and export_name("..") == "session.json"


# ---------------------------------------------------------------------- OpenCode


def test_a_deleted_opencode_session_is_read_from_the_vault(tmp_path: Path) -> None:
    root = tmp_path / "opencode"
    root.mkdir()
    db = test_opencode.write_database(root / "opencode.db", test_opencode.sessions())
    sid = test_opencode.SID
    name = root / "opencode.db" / sid
    before = snapshot(root, itself=True)
    store = index_store(SOURCES["opencode"], root, vault=True)
    try:
        assert [h.session_id for h in store.search("ninety minutes")] == [sid]
        assert snapshot(root, itself=True) == before  # read: nothing written, locked or created
        with Vault() as vault:
            [first] = vault.versions(sid)
            assert first.path == str(name) and vault.head(first, len(HEAD)) == HEAD
        # the database written anew (another inode): every session is read again, and
        # one whose content is the same adds no version
        with closing(sqlite3.connect(db)) as conn:
            conn.execute("VACUUM INTO ?", (str(tmp_path / "copy.db"),))
        (tmp_path / "copy.db").replace(db)
        assert store.reconcile().updated == 2
        with Vault() as vault:
            assert vault.versions(sid) == [first]
        # OpenCode adds a turn: the session is kept again, as it is now
        with closing(sqlite3.connect(db)) as conn:
            conn.execute(
                "INSERT INTO message VALUES ('msg_late', ?, ?, ?, ?)",
                (sid, test_opencode.T0 + 10**7, test_opencode.T0 + 10**7, '{"role": "user"}'),
            )
            conn.execute(
                "INSERT INTO part VALUES ('prt_late', 'msg_late', ?, ?, ?, ?)",
                (
                    sid,
                    test_opencode.T0 + 10**7,
                    test_opencode.T0 + 10**7,
                    json.dumps({"type": "text", "text": "and log every cache miss of the osprey"}),
                ),
            )
            conn.commit()
        assert store.reconcile().updated == 1
        with Vault() as vault:
            assert len(vault.versions(sid)) == 2
        # ... and deletes it: its rows are gone from the database
        delete_rows(
            db,
            [
                ("DELETE FROM part WHERE session_id = ?", (sid,)),
                ("DELETE FROM message WHERE session_id = ?", (sid,)),
                ("DELETE FROM session WHERE id = ?", (sid,)),
            ],
        )
        after_delete = snapshot(root, itself=True)
        assert store.reconcile().removed == 1
        [hit] = store.search("osprey", limit=5)
        assert hit.session_id == sid and hit.kept is not None
        assert hit.kept.startswith(f"deleted from {name} on ")
        tools = store.search("in:tools stale_entry", limit=5)  # its hidden parts were kept
        assert [h.session_id for h in tools] == [sid]
    finally:
        store.close()
    assert snapshot(root, itself=True) == after_delete
    assert sorted(p.name for p in root.iterdir()) == ["opencode.db"]  # no -wal, no -shm
    # a new index (rebuilt, or on another day) still finds it, from the vault alone
    indexes = list((Path.home() / "cache").rglob("opencode-*.sqlite3*"))
    assert indexes
    for index in indexes:
        index.unlink()
    store = index_store(SOURCES["opencode"], root, vault=True)
    try:
        [hit] = store.search("osprey", limit=5)
        assert hit.session_id == sid and hit.kept is not None
    finally:
        store.close()
    shown = json.loads(run("show", sid, "--store", f"opencode:{root}", "--json"))
    assert "osprey" in json.dumps(shown["messages"])
    assert "deleted from" in run("show", sid, "--version", "2")
    log = json.loads(run("vault", "log", sid, "--json"))
    assert [v["path"] for v in log["versions"]] == [str(name)] * 2
    assert [v["turns"] for v in log["versions"]] == [6, 7]
    data, _version, _n = load_session(sid, 1, hidden=True)
    assert "osprey" not in texts(data) and "pytest -q tests/test_api.py" in texts(data)
    assert "pytest -q" not in texts(load_session(sid, 1)[0])  # hidden parts asked for only
    assert snapshot(root, itself=True) == after_delete


def test_a_kept_export_is_restored_only_where_asked_and_imports(tmp_path: Path) -> None:
    root = tmp_path / "opencode"
    root.mkdir()
    test_opencode.write_database(root / "opencode.db", test_opencode.sessions())
    sid = test_opencode.SID
    run("index", "update", "--store", f"opencode:{root}")
    before = snapshot(root, itself=True)
    out = run("vault", "restore", sid, code=1)
    assert "kept as a portable export" in out and "--to" in out
    assert snapshot(root, itself=True) == before
    restored = json.loads(run("vault", "restore", sid, "--to", str(tmp_path / "out"), "--json"))
    assert restored["restored"] == str(tmp_path / "out" / f"{sid}.json")
    sessions = tmp_path / "sessions"
    run("import", restored["restored"], "--store", str(sessions))
    imported = json.loads((sessions / f"{sid}.json").read_text())
    assert imported["session_id"] == sid and "ninety minutes" in json.dumps(imported)
    assert snapshot(root, itself=True) == before


def test_forget_reaches_the_kept_copies_of_a_database_session(tmp_path: Path) -> None:
    root = tmp_path / "opencode"
    root.mkdir()
    db = test_opencode.write_database(root / "opencode.db", test_opencode.sessions())
    sid = test_opencode.SID
    store_args = ["--store", f"opencode:{root}"]
    run("index", "update", *store_args)
    delete_rows(
        db,
        [
            ("DELETE FROM part WHERE session_id = ?", (sid,)),
            ("DELETE FROM message WHERE session_id = ?", (sid,)),
            ("DELETE FROM session WHERE id = ?", (sid,)),
        ],
    )
    run("index", "update", *store_args)
    assert json.loads(run("vault", "log", sid, "--json"))["versions"]
    before = snapshot(root, itself=True)
    out = run("forget", sid, "--yes")
    assert "vault" in out
    run("vault", "log", sid, code=1)
    assert kept_session(sid) is None
    run("index", "update", *store_args)
    found = run("search", "ninety minutes", *store_args, "--json", code=1)
    assert sid not in found
    assert snapshot(root, itself=True) == before


def test_forget_text_redacts_a_kept_export_and_it_still_reads(tmp_path: Path) -> None:
    root = tmp_path / "opencode"
    root.mkdir()
    db = test_opencode.write_database(root / "opencode.db", test_opencode.sessions())
    sid = test_opencode.SID
    store_args = ["--store", f"opencode:{root}"]
    run("index", "update", *store_args)
    delete_rows(
        db,
        [
            ("DELETE FROM part WHERE session_id = ?", (sid,)),
            ("DELETE FROM message WHERE session_id = ?", (sid,)),
            ("DELETE FROM session WHERE id = ?", (sid,)),
        ],
    )
    run("index", "update", *store_args)
    before = snapshot(root, itself=True)
    run("forget", "--text", "hourly LRU", "--redact", "--yes")
    run("vault", "check")
    data, _version, _n = load_session(sid, hidden=True)
    assert "hourly LRU" not in texts(data) and "[REDACTED:forgotten]" in texts(data)
    assert "ninety minutes" in texts(data)  # the rest of the session as it was
    # forgetting the text outright drops every kept version that holds it
    run("forget", "--text", "ninety minutes", "--yes")
    run("vault", "log", sid, code=1)
    assert snapshot(root, itself=True) == before


# ---------------------------------------------------------------------- Goose


def test_a_deleted_goose_session_is_read_from_the_vault(tmp_path: Path) -> None:
    sessions = test_goose.goose_dir(tmp_path)
    sid = test_goose.SID
    store = index_store(SOURCES["goose"], sessions, vault=True)
    try:
        assert [h.session_id for h in store.search("lone CR quotes")] == [sid]
        delete_rows(
            sessions / DB_NAME,
            [
                ("DELETE FROM messages WHERE session_id = ?", (sid,)),
                ("DELETE FROM sessions WHERE id = ?", (sid,)),
            ],
        )
        after_delete = snapshot(sessions, itself=True)
        assert store.reconcile().removed == 1
        [hit] = store.search("lone CR quotes", limit=5)
        assert hit.session_id == sid and hit.kept is not None
        assert hit.kept.startswith(f"deleted from {sessions / DB_NAME / sid} on ")
    finally:
        store.close()
    assert snapshot(sessions, itself=True) == after_delete
    kept = kept_session(sid)
    assert "lone CR" in texts(kept) and kept is not None
    assert kept["metadata"]["title"] == "CRLF in quoted strings"
    with Vault() as vault:
        # the older <id>.jsonl session is a file: kept as its bytes, as before
        [legacy] = vault.versions(test_goose.LEGACY)
        assert vault.head(legacy, len(HEAD)) != HEAD


# ---------------------------------------------------------------------- Aider


def test_a_launch_cut_from_the_aider_history_is_read_from_the_vault(tmp_path: Path) -> None:
    history = test_aider.repo(tmp_path, "parser")
    text = history.read_text()
    second = text.index("# aider chat started at 2026-03-02")
    store = index_store(SOURCES["aider"], tmp_path, vault=True)
    try:
        [heron] = store.search("heron")
        with Vault() as vault:
            assert len(vault.versions(heron.session_id)) == 1
        history.write_text(text[:second])  # the history file cut: its second launch gone
        after_cut = snapshot(tmp_path / "parser", itself=True)
        report = store.reconcile()
        assert report.removed == 1 and report.unchanged == 1
        [hit] = store.search("heron", limit=5)
        assert hit.session_id == heron.session_id and hit.kept is not None
        assert hit.kept.startswith(f"deleted from {history}#2026-03-02T18:40:11 on ")
    finally:
        store.close()
    assert snapshot(tmp_path / "parser", itself=True) == after_cut
    assert sorted(p.name for p in (tmp_path / "parser").iterdir()) == [HISTORY]
    kept = kept_session(heron.session_id)
    assert "byte-order mark" in texts(kept)
    log = json.loads(run("vault", "log", heron.session_id, "--json"))
    assert [v["turns"] for v in log["versions"]] == [2]


# ---------------------------------------------------------------------- Kimi Code CLI


def test_a_deleted_kimi_session_is_kept_with_its_subagents_logs(
    tmp_path: Path, shared_data: Path
) -> None:
    share = test_kimi.kimi_home(tmp_path, shared_data)
    sid = test_kimi.SID
    folder = share / "sessions" / "wd_real" / sid
    store = index_store(SOURCES["kimi"], share / "sessions", vault=True)
    try:
        assert sid in [h.session_id for h in store.search("swift files", limit=5)]
        shutil.rmtree(folder)  # deleted in Kimi Code CLI, its subagents' logs with it
        after_delete = snapshot(share, itself=True)
        assert store.reconcile().removed == 1
        [hit] = store.search("swift files", limit=5)
        assert hit.session_id == sid and hit.kept is not None
        assert hit.kept.startswith(f"deleted from {folder}/agents/main/wire.jsonl on ")
    finally:
        store.close()
    assert snapshot(share, itself=True) == after_delete
    kept = kept_session(sid)
    assert kept is not None
    subagent = [m for m in recall.project(kept) if m["metadata"].get("subagent") == "agent-0"]
    assert subagent and "3,124 Swift files" in json.dumps(subagent)
    # the Python release's log is a file of its own: kept as its bytes, as before
    with Vault() as vault:
        [old] = vault.versions(test_kimi.OLD_SID)
        assert vault.head(old, len(HEAD)) != HEAD


def test_a_deleted_session_of_opencode_json_storage_is_kept(tmp_path: Path) -> None:
    root = tmp_path / "opencode"
    root.mkdir()
    test_opencode.write_storage(root, test_opencode.sessions())
    sid = test_opencode.SID
    storage = root / "storage"
    store = index_store(SOURCES["opencode"], root, vault=True)
    try:
        assert [h.session_id for h in store.search("ninety minutes")] == [sid]
        # OpenCode deletes the session: its info, messages and parts (a tree of files)
        (storage / "session" / test_opencode.PROJECT / f"{sid}.json").unlink()
        for message in sorted((storage / "message" / sid).iterdir()):
            shutil.rmtree(storage / "part" / message.stem, ignore_errors=True)
        shutil.rmtree(storage / "message" / sid)
        after_delete = snapshot(root, itself=True)
        assert store.reconcile().removed == 1
        [hit] = store.search("ninety minutes", limit=5)
        assert hit.session_id == sid and hit.kept is not None
    finally:
        store.close()
    assert snapshot(root, itself=True) == after_delete
    kept = kept_session(sid)
    assert kept is not None and kept["metadata"]["title"] == "Cache the forecast API responses"


def test_with_the_vault_off_nothing_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSION_BROWSER_VAULT", "off")
    root = tmp_path / "opencode"
    root.mkdir()
    db = test_opencode.write_database(root / "opencode.db", test_opencode.sessions())
    store = index_store(SOURCES["opencode"], root, vault=True)
    try:
        assert [h.session_id for h in store.search("ninety minutes")] == [test_opencode.SID]
        delete_rows(db, [("DELETE FROM session WHERE id = ?", (test_opencode.SID,))])
        assert store.reconcile().removed == 1
        assert store.search("ninety minutes", limit=5) == []
    finally:
        store.close()
    assert kept_session(test_opencode.SID) is None
