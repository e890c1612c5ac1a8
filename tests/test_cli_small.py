"""The command line as a demanding user pipes and scripts it, run as a real process:
piped output is never wrapped or cut, ``search`` exits as grep does, ``show --around``
past the end is an error, and ``vault restore --to`` makes a missing dir (never through a
symlink)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from session_browser.core.store import DefaultSessionStore
from session_browser.core.vault import Vault, default_vault_dir

LONG_ID = "project-" + "a1b2c3d4" * 14  # 120 characters: wider than an 80-column pipe
LONG_TITLE = "Migrating the billing service " + "with a very long title " * 5 + "END"


def sb(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real CLI with stdout and stderr piped (not a terminal), as in ``| grep``."""
    env = dict(os.environ, COLUMNS="80", LINES="24")
    return subprocess.run(
        [sys.executable, "-m", "session_browser", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )


@pytest.fixture
def store(tmp_path: Path) -> Path:
    s = DefaultSessionStore(tmp_path / "sessions", retention="keep_all")
    s.add_user_message(LONG_ID, "billing question " + "about the invoices " * 10)
    s.add_assistant_message(LONG_ID, "billing answer")
    s.rename_session(LONG_ID, LONG_TITLE)
    return s.session_dir


def _whole_on_a_line(out: str, text: str) -> None:
    assert any(text in line for line in out.splitlines()), out


def test_piped_output_keeps_ids_and_titles_whole(store: Path) -> None:
    for args in (
        ["search", "billing", "--store", str(store)],
        ["search", "billing", "--no-index", "--store", str(store)],
        ["recent", "--store", str(store)],
        ["show", LONG_ID, "--store", str(store)],
    ):
        res = sb(*args)
        assert res.returncode == 0, (args, res.stderr)
        _whole_on_a_line(res.stdout, LONG_ID)
        _whole_on_a_line(res.stdout, LONG_TITLE)
        assert max(len(line) for line in res.stdout.splitlines()) > 80  # nothing fitted to 80


def test_search_exits_as_grep(store: Path, tmp_path: Path) -> None:
    found = sb("search", "billing", "--store", str(store))
    assert found.returncode == 0 and LONG_ID in found.stdout
    none = sb("search", "zzzznothing", "--store", str(store))
    assert none.returncode == 1 and none.stderr == ""
    assert "No session matches zzzznothing" in none.stdout
    as_json = sb("search", "zzzznothing", "--json", "--store", str(store))
    assert as_json.returncode == 1 and as_json.stderr == ""
    payload = json.loads(as_json.stdout)
    assert payload["results"] == [] and payload["total_found"] == 0
    # Errors are 2, distinct from "no match": a missing store, a refused option, a usage error.
    for args in (
        ["search", "billing", "--store", str(tmp_path / "missing")],
        ["search", "billing", "--no-index", "--ranking", "relevance", "--store", str(store)],
        ["search", "", "--store", str(store)],
        ["search", "billing", "--limit", "0", "--store", str(store)],
    ):
        err = sb(*args)
        assert err.returncode == 2, (args, err.returncode, err.stderr)
        assert err.stdout == "" and err.stderr.count("\n") == 1, (args, err.stderr)
        assert err.stderr.startswith("session-browser: ")
    helped = sb("search", "--help")
    assert helped.returncode == 0
    assert "0 when a session matches, 1 when none does" in " ".join(helped.stdout.split())


def test_other_commands_keep_exit_1_for_errors(store: Path) -> None:
    res = sb("show", "nosuchsession", "--store", str(store))
    assert res.returncode == 1 and "unknown session id" in res.stderr


def test_show_around_past_the_end_is_an_error(store: Path) -> None:
    for extra in ([], ["--json"]):
        res = sb("show", LONG_ID, "--around", "999", *extra, "--store", str(store))
        assert res.returncode == 1 and res.stdout == "", res.stdout
        assert res.stderr == (
            "session-browser: message #999 does not exist; the session has 2 messages "
            "(#0 to #1)\n"
        )
    last = sb("show", LONG_ID, "--around", "1", "--json", "--store", str(store))
    assert last.returncode == 0, last.stderr
    assert json.loads(last.stdout)["messages"][-1]["content"] == "billing answer"


def _kept(sessions: Path) -> bytes:
    sessions.mkdir(parents=True)
    data = json.dumps({"session_id": "s1", "messages": [{"role": "user", "content": "hi"}]})
    with Vault(default_vault_dir()) as vault:
        vault.keep("praisonai", sessions / "s1.json", "s1", data.encode(), messages=1)
    return data.encode()


def test_vault_restore_makes_the_missing_dir(tmp_path: Path) -> None:
    data = _kept(tmp_path / "sessions")
    into = tmp_path / "rescued" / "day" / "one"
    res = sb("vault", "restore", "s1", "--to", str(into))
    assert res.returncode == 0, res.stderr
    assert (into / "s1.json").read_bytes() == data
    for made in (tmp_path / "rescued", into.parent, into):
        assert stat.S_IMODE(made.stat().st_mode) == 0o700, made
    # Relative to the working dir, as typed.
    res = sb("vault", "restore", "s1", "--to", "here/now", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "here" / "now" / "s1.json").read_bytes() == data


def test_vault_restore_never_makes_a_dir_through_a_symlink(tmp_path: Path) -> None:
    _kept(tmp_path / "sessions")
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    res = sb("vault", "restore", "s1", "--to", str(link / "new" / "dir"))
    assert res.returncode == 1 and res.stderr.count("\n") == 1
    assert "is a symlink" in res.stderr
    assert list(real.iterdir()) == []  # nothing made through the link
    a_file = tmp_path / "plain"
    a_file.write_text("x")
    res = sb("vault", "restore", "s1", "--to", str(a_file))
    assert res.returncode == 2 and res.stderr.count("\n") == 1  # a file is no dir
    res = sb("vault", "restore", "s1", "--to", str(a_file / "under"))
    assert res.returncode == 1 and res.stderr.count("\n") == 1
    assert a_file.read_text() == "x"
