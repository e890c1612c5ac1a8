"""The quarantine and the denylist: discarding a damaged file of a forgotten session (or one
holding a forgotten text) takes it out of the store, and our trash and undo journal get no
copy of it; any other file is discarded into the trash as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.paths import data_dir
from session_browser.core.store import DefaultSessionStore

from .test_forget import found_in_our_dirs_of

SECRET = "sk-live-QuarantineForgot9d1"


def run(*args: str, code: int = 0) -> str:
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code == code, (args, res.output)
    return res.stdout


def corrupt_copy(store: DefaultSessionStore, sid: str, words: str) -> Path:
    for i in range(3):
        store.add_user_message(sid, f"{words} turn {i}")
    raw = store.session_path(sid).read_bytes()
    corrupt = store.session_dir / f"{sid}.json.corrupt-1700000000000"
    corrupt.write_bytes(raw[: raw.index(b"turn 2")])
    return corrupt


@pytest.mark.parametrize("forget", [["gone"], ["--text", SECRET, "--redact"]])
def test_a_forgotten_file_is_discarded_without_a_copy(tmp_path: Path, forget: list[str]) -> None:
    store = DefaultSessionStore(tmp_path / "sessions", retention="keep_all")
    gone = corrupt_copy(store, "gone", f"the otter key {SECRET}")
    kept = corrupt_copy(store, "kept", "the plain badger notes")
    base = ["--store", str(store.session_dir)]
    run("forget", *forget, "--yes")

    preview = json.loads(run("quarantine", "discard", gone.name, *base, "--dry-run", "--json"))
    assert [f["change"] for f in preview["files"]] == ["remove"]  # no trash copy planned
    assert any("cannot be undone" in n for n in preview["notes"])
    done = json.loads(run("quarantine", "discard", gone.name, *base, "--yes", "--json"))
    assert done["dry_run"] is False and done["action_id"] is None
    assert not gone.exists()  # the discard still works
    assert found_in_our_dirs_of([SECRET.encode(), b"otter key"]) == []
    assert not list((data_dir() / "trash").rglob(gone.name))
    assert json.loads(run("quarantine", "undo", "--list", "--json"))["entries"] == []

    # a file nothing forgotten names goes to the trash, and undo brings it back, as before
    before = kept.read_bytes()
    run("quarantine", "discard", kept.name, *base, "--yes")
    assert not kept.exists() and list((data_dir() / "trash").rglob(kept.name))
    run("quarantine", "undo", "--yes")
    assert kept.read_bytes() == before


def _snap(*roots: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for r in roots for p in sorted(r.rglob("*")) if p.is_file()}


def test_a_forgotten_file_is_not_restored_or_merged(tmp_path: Path) -> None:
    store = DefaultSessionStore(tmp_path / "sessions", retention="keep_all")
    gone = corrupt_copy(store, "gone", f"the otter key {SECRET}")
    base = ["--store", str(store.session_dir)]
    run("forget", "--text", SECRET, "--yes")
    before = _snap(store.session_dir, data_dir())
    for action in (["restore", gone.name, "--as", "back"], ["merge", gone.name]):
        res = CliRunner().invoke(main, ["quarantine", *action, *base, "--yes"])
        assert res.exit_code == 1
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and "holds a forgotten session or text" in lines[0]
    assert _snap(store.session_dir, data_dir()) == before
    assert found_in_our_dirs_of([SECRET.encode()]) == []
