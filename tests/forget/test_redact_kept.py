"""``{"redact_kept": true}``: the index and the vault keep only redacted copies (the export's
rules); the sessions stay searchable by their other words and every kept version stays a
file its source reads."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.paths import config_dir
from session_browser.core.store import DefaultSessionStore
from tests.core.test_pi import assistant, header, user, write_lines

from .test_forget import found_in_our_dirs_of, ids_found

AWS = "AKIAZ7Q3KEPTREDACTED"
PASSWORD = "hunter2KeptRedacted"


def run(*args: str) -> str:
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code == 0, (args, res.output)
    return res.stdout


def test_only_redacted_copies_are_kept(tmp_path: Path) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "settings.json").write_text('{"redact_kept": true}\n', encoding="utf-8")
    sessions = tmp_path / "sessions"
    store = DefaultSessionStore(sessions, retention="keep_all")
    store.add_user_message("p1", f"the pelican deploy uses {AWS} and password={PASSWORD}")
    store.add_user_message("p2", "the plain walrus notes")
    pi = write_lines(
        tmp_path / "pi" / "--proj--" / "s.jsonl",
        [header("pi-1"), user(f"key {AWS} for the heron job"), assistant("done")],
    )
    stores = ["--store", str(sessions), "--store", f"pi:{tmp_path / 'pi'}"]
    run("index", "update", *stores)
    store.add_user_message("p1", "a second pelican turn")  # a second version
    run("index", "update", *stores)

    assert found_in_our_dirs_of([AWS.encode(), PASSWORD.encode()]) == []
    assert AWS.encode() in pi.read_bytes()  # the agents' files are theirs
    assert ids_found(stores, "pelican deploy") == {"p1"}
    assert ids_found(stores, "heron job") == {"pi-1"}
    versions = json.loads(run("vault", "log", "p1", "--json"))["versions"]
    assert len(versions) == 2
    out = tmp_path / "restored"
    run("vault", "restore", "p1", "--version", "1", "--to", str(out))
    kept = json.loads((out / "p1.json").read_text(encoding="utf-8"))
    assert "[REDACTED:aws_access_key]" in json.dumps(kept) and kept["session_id"] == "p1"
    run("vault", "restore", "pi-1", "--to", str(tmp_path / "pi-restored"))
    lines = (tmp_path / "pi-restored" / "s.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and all(json.loads(line) for line in lines)
    assert "[REDACTED:aws_access_key]" in lines[1]
