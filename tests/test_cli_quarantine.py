"""``session-browser quarantine`` end to end."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.files import dumps_session
from session_browser.core.paths import data_dir
from session_browser.core.store import DefaultSessionStore


def _snap(*roots: Path, locks: bool = True) -> dict[str, str]:
    """sha256 of every file under ``roots``, lock files included unless ``locks=False``."""
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest()
        for r in roots
        if r.exists()
        for p in sorted(r.rglob("*"))
        if p.is_file() and (locks or not p.name.endswith(".lock"))
    }


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    store = DefaultSessionStore(home / "sessions", retention="keep_all")
    for i in range(4):
        store.add_user_message("s1", f"turn {i} \x1b[31m[@click=app.quit]")
    raw = store.session_path("s1").read_bytes()
    corrupt = store.session_dir / "s1.json.corrupt-1700000000000"
    corrupt.write_bytes(raw[: raw.index(b"turn 3")])
    data = json.loads(raw)
    data["messages"] = data["messages"][2:]
    store.session_path("s1").write_bytes(dumps_session(data))
    return store.session_dir, corrupt


def test_list_show_merge_undo(tmp_path: Path) -> None:
    sessions, corrupt = _setup(tmp_path)
    runner = CliRunner()
    base = ["--store", str(sessions)]
    res = runner.invoke(main, ["quarantine", "list", *base, "--json"])
    item = json.loads(res.stdout)["items"][0]
    assert (item["session_id"], item["live_exists"], item["kind"]) == ("s1", True, "corrupt")
    assert item["error"]["line"] is not None
    res = runner.invoke(main, ["quarantine", "list", *base], env={"COLUMNS": "250"})
    assert "s1.json.corrupt-1700000000000" in res.stdout and "\x1b" not in res.stdout
    res = runner.invoke(main, ["quarantine", "show", corrupt.name, *base, "--json"])
    shown = json.loads(res.stdout)
    assert shown["salvage"]["recovered_messages"] == 3 and shown["live"]["missing_from_live"] == 2

    before = _snap(sessions, data_dir())
    res = runner.invoke(main, ["quarantine", "merge", corrupt.name, *base], input="n\n")
    assert (
        res.exit_code == 1 and "cancelled" in res.stderr and _snap(sessions, data_dir()) == before
    )
    res = runner.invoke(main, ["quarantine", "merge", corrupt.name, *base, "--dry-run", "--json"])
    assert json.loads(res.stdout)["dry_run"] is True and _snap(sessions, data_dir()) == before
    res = runner.invoke(main, ["quarantine", "merge", corrupt.name, *base, "--yes", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["added_messages"] == 2
    assert _snap(sessions, data_dir()) != before
    res = runner.invoke(main, ["quarantine", "undo", "--yes"])
    assert res.exit_code == 0, res.output
    assert _snap(sessions, data_dir()) == before
    res = runner.invoke(main, ["quarantine", "undo", "--yes"])
    assert res.exit_code == 1 and res.stderr.strip() == "session-browser: nothing to undo"


def test_discard_restore_and_unknown_item(tmp_path: Path) -> None:
    sessions, corrupt = _setup(tmp_path)
    runner = CliRunner()
    base = ["--store", str(sessions)]
    res = runner.invoke(main, ["quarantine", "restore", corrupt.name, "--as", "copy", *base, "-y"])
    assert res.exit_code == 0 and (sessions / "copy.json").exists()
    res = runner.invoke(main, ["quarantine", "discard", corrupt.name, *base, "-y", "--json"])
    assert res.exit_code == 0 and not corrupt.exists()
    assert list((data_dir() / "trash").rglob(corrupt.name))
    res = runner.invoke(main, ["quarantine", "undo", "--list", "--json"])
    assert [e["action"] for e in json.loads(res.stdout)["entries"]] == ["discard", "restore"]
    res = runner.invoke(main, ["quarantine", "show", "nope", *base])
    assert res.exit_code == 1 and "no quarantined, spill or damaged live file matches" in res.stderr


def _damaged_live(tmp_path: Path) -> tuple[Path, Path, bytes]:
    home = tmp_path / "home"
    store = DefaultSessionStore(home / "sessions", retention="keep_all")
    for i in range(4):
        store.add_user_message("s1", f"turn {i}")
    store.add_user_message("ok", "healthy")
    path = store.session_path("s1")
    damaged = path.read_bytes()[: path.read_bytes().index(b"turn 3")]
    path.write_bytes(damaged)
    return store.session_dir, path, damaged


def test_a_truncated_live_file_is_listed_restored_in_place_and_undone(tmp_path: Path) -> None:
    sessions, path, damaged = _damaged_live(tmp_path)
    runner = CliRunner()
    base = ["--store", str(sessions)]
    res = runner.invoke(main, ["quarantine", "list", *base, "--json"])
    [item] = json.loads(res.stdout)["items"]
    assert item["kind"] == "live" and item["name"] == "s1.json"
    assert item["error"]["offset"] == len(damaged) - 1 and item["error"]["line"] > 1
    res = runner.invoke(main, ["quarantine", "list", *base], env={"COLUMNS": "200"})
    assert "s1.json" in res.stdout and "live file, damaged" in res.stdout
    assert "ok.json" not in res.stdout
    res = runner.invoke(main, ["quarantine", "show", "s1.json", *base])
    assert res.exit_code == 0 and "3 message(s)" in res.stdout
    assert "this is the live file itself, damaged" in res.stdout
    res = runner.invoke(main, ["quarantine", "restore", "s1.json", *base, "--dry-run"])
    assert res.exit_code == 0 and "Would restore" in res.stdout
    assert path.read_bytes() == damaged
    res = runner.invoke(main, ["quarantine", "restore", "s1.json", *base, "-y", "--json"])
    assert res.exit_code == 0, res.stderr
    assert len(json.loads(path.read_bytes())["messages"]) == 3
    [aside] = sessions.glob("s1.json.corrupt-*")
    assert aside.read_bytes() == damaged
    res = runner.invoke(main, ["quarantine", "list", *base], env={"COLUMNS": "200"})
    assert "restored in place as s1" in res.stdout
    res = runner.invoke(main, ["quarantine", "undo", "-y"])
    assert res.exit_code == 0 and path.read_bytes() == damaged and not aside.exists()


def test_a_second_restore_warns_and_again_restores(tmp_path: Path) -> None:
    sessions, corrupt = _setup(tmp_path)
    runner = CliRunner()
    base = ["--store", str(sessions)]
    res = runner.invoke(main, ["quarantine", "restore", corrupt.name, *base, "-y"])
    assert res.exit_code == 0 and (sessions / "s1-restored.json").exists()
    res = runner.invoke(main, ["quarantine", "list", *base, "--json"])
    assert json.loads(res.stdout)["items"][0]["status"] == "restored as s1-restored"
    res = runner.invoke(main, ["quarantine", "restore", corrupt.name, *base, "-y"])
    assert res.exit_code == 1 and "warning:" in res.stderr and "already restored" in res.stderr
    assert not (sessions / "s1-restored-2.json").exists()
    res = runner.invoke(main, ["quarantine", "restore", corrupt.name, *base, "-y", "--again"])
    assert res.exit_code == 0 and (sessions / "s1-restored-2.json").exists()


def test_list_finds_damage_in_the_middle_of_a_big_live_file(tmp_path: Path) -> None:
    """Without the index, `quarantine list` still reads every live file whole (once)."""
    store = DefaultSessionStore(tmp_path / "home" / "sessions", retention="keep_all")
    for i in range(40):
        store.add_user_message("big", f"turn {i} " + "x" * 400)
    store.add_user_message("ok", "healthy")
    path = store.session_path("big")
    raw = bytearray(path.read_bytes())
    assert len(raw) > 3 * 4096
    raw[len(raw) // 2 : len(raw) // 2 + 64] = b"\0" * 64
    path.write_bytes(bytes(raw))
    res = CliRunner().invoke(
        main, ["quarantine", "list", "--store", str(store.session_dir), "--json"]
    )
    assert res.exit_code == 0, res.stderr
    [item] = json.loads(res.stdout)["items"]
    assert item["kind"] == "live" and item["name"] == "big.json"


def test_salvage_output_is_never_written_into_the_session_dir(tmp_path: Path) -> None:
    sessions, corrupt = _setup(tmp_path)
    before = _snap(sessions)
    base = ["quarantine", "salvage", corrupt.name, "--store", str(sessions), "--force"]
    for target in (sessions / "salvaged.json", sessions / "s1.json"):
        res = CliRunner().invoke(main, [*base, "-o", str(target)])
        assert res.exit_code == 1 and "inside the session store" in res.stderr, res.output
    assert _snap(sessions) == before
    elsewhere = tmp_path / "salvaged.json"
    res = CliRunner().invoke(
        main,
        ["quarantine", "salvage", corrupt.name, "--store", str(sessions), "-o", str(elsewhere)],
    )
    assert res.exit_code == 0 and json.loads(elsewhere.read_bytes())["session_id"] == "s1"


@pytest.mark.parametrize("backup", ["missing", "other bytes"])
def test_undo_refuses_a_journal_backup_missing_or_not_matching_its_hash(
    tmp_path: Path, backup: str
) -> None:
    """Undo puts back only the bytes the journal recorded: a backup that is gone, or whose
    hash is not the recorded one, stops it before any file is touched (one error line)."""
    sessions, corrupt = _setup(tmp_path)
    runner = CliRunner()
    base = ["--store", str(sessions)]
    res = runner.invoke(main, ["quarantine", "merge", corrupt.name, *base, "--yes"])
    assert res.exit_code == 0, res.output
    [entry] = [p for p in (data_dir() / "journal").iterdir() if p.is_dir()]
    copies = [p for p in entry.rglob("*") if p.is_file() and p.name != "entry.json"]
    assert copies, list(entry.rglob("*"))
    for copy in copies:
        if backup == "missing":
            copy.unlink()
        else:
            copy.write_bytes(copy.read_bytes() + b" ")
    before = _snap(sessions, data_dir())
    res = runner.invoke(main, ["quarantine", "undo", "--yes"])
    assert res.exit_code == 1
    assert res.stderr.count("\n") == 1 and "is missing or damaged" in res.stderr
    assert _snap(sessions, data_dir()) == before  # nothing put back, the entry kept
