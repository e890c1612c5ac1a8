"""The vault is the CLI's and the app's, never a library side effect: a
``SqliteSessionStore`` built by a library caller writes nothing into our data dir unless
it is asked to keep the vault (``vault=True``); the CLI and the app ask."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.index import SqliteSessionStore
from session_browser.core.paths import data_dir
from session_browser.core.vault import Vault, default_vault_dir
from session_browser.tui.backend import Backend


def store_dir(root: Path) -> Path:
    sessions = root / "sessions"
    sessions.mkdir(parents=True)
    for sid, words in (("s1", "the heron nests by the pier"), ("s2", "the egret fishes")):
        data = {"session_id": sid, "messages": [{"role": "user", "content": words}]}
        (sessions / f"{sid}.json").write_text(json.dumps(data))
    return sessions


def kept_files() -> int:
    """How many files the vault keeps (0 when there is no vault at all)."""
    if not default_vault_dir().exists():
        return 0
    with Vault(default_vault_dir()) as vault:
        return int(vault.stats().files)


def ours_on_disk() -> list[str]:
    root = data_dir()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def test_a_library_store_writes_no_vault(tmp_path: Path) -> None:
    sessions = store_dir(tmp_path)
    with SqliteSessionStore(session_dir=sessions, db_path=tmp_path / "i.sqlite3") as store:
        assert [h.session_id for h in store.search("heron")] == ["s1"]
        store.add_message("s3", "user", "a new session written through the library")
        (sessions / "s2.json").unlink()
        store.reconcile()
        assert [h.session_id for h in store.search("egret")] == []  # gone: nothing kept
    assert ours_on_disk() == []


def test_a_library_store_keeps_the_vault_when_asked(tmp_path: Path) -> None:
    sessions = store_dir(tmp_path)
    with SqliteSessionStore(
        session_dir=sessions, db_path=tmp_path / "i.sqlite3", vault=True
    ) as store:
        (sessions / "s2.json").unlink()
        store.reconcile()
        [hit] = store.search("egret")  # deleted, found from the vault's copy
        assert hit.session_id == "s2" and hit.kept is not None
    assert kept_files() == 2


def test_the_cli_keeps_the_vault_by_default(tmp_path: Path) -> None:
    sessions = store_dir(tmp_path)
    res = CliRunner().invoke(main, ["--store", str(sessions), "search", "heron"])
    assert res.exit_code == 0, res.output
    assert kept_files() == 2


def test_the_app_keeps_the_vault_by_default(tmp_path: Path) -> None:
    sessions = store_dir(tmp_path)
    backend = Backend([str(sessions)])
    try:
        for store in backend._live_stores():
            store.reconcile()
    finally:
        backend.close()
    assert kept_files() == 2
