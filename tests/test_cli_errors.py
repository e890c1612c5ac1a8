"""Bad input from the shell: one line on stderr, a non-zero status, nothing half-written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core import quarantine as q
from session_browser.core.store import DefaultSessionStore


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, list(args), input=input)
    return res.exit_code, res.stdout, res.stderr


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("session-browser: ") and "Traceback" not in err
    return lines[0]


@pytest.fixture
def store(tmp_path: Path) -> DefaultSessionStore:
    s = DefaultSessionStore(tmp_path / "home" / "sessions", retention="keep_all")
    s.add_user_message("s1", "first line\nsecond line about billing")
    s.add_assistant_message("s1", "an answer")
    s.add_user_message("s2", "other billing talk")
    return s


def _snapshot(root: Path) -> dict[str, tuple[bytes, int, int]]:
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_ino, p.stat().st_mode)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize(
    "args",
    [
        ["nosuchcommand"],
        ["export", "s1"],  # no -o
        ["quarantine", "list", "--bogus"],
        ["index", "status", "--bogus"],
        ["import"],
        ["search", "x", "--limit", "0"],
    ],
)
def test_usage_errors_are_one_line_everywhere(args: list[str]) -> None:
    code, out, err = run(*args)
    assert code == 2 and out == ""
    line = _one_line(err)
    assert "--help" in line


def test_search_takes_unquoted_words(store: DefaultSessionStore) -> None:
    code, out, err = run("search", "other", "billing", "--store", str(store.session_dir), "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["query"] == "other billing"
    assert payload["results"][0]["session_id"] == "s2"


def test_show_keeps_line_breaks_and_refuses_an_anchor_past_the_end(
    store: DefaultSessionStore,
) -> None:
    code, out, err = run("show", "s1", "--around", "1", "--store", str(store.session_dir))
    assert code == 0, err
    assert "\\x0a" not in out and "first line\n" in out
    assert "▶ #1 assistant" in out
    code, out, err = run("show", "s1", "--around", "99", "--store", str(store.session_dir))
    assert code == 1 and out == ""
    assert "message #99 does not exist; the session has 2 messages" in _one_line(err)


def test_show_unreadable_session_is_an_error(store: DefaultSessionStore) -> None:
    store.session_path("s1").write_bytes(b'{"session_id": "s1", "messages": [')
    code, out, err = run("show", "s1", "--store", str(store.session_dir))
    assert code == 1 and out == ""
    assert "cannot read session 's1'" in _one_line(err)


def test_show_empty_and_huge_ids(store: DefaultSessionStore) -> None:
    code, _out, err = run("show", "", "--store", str(store.session_dir))
    assert code == 1 and "empty" in _one_line(err)
    code, _out, err = run("show", "x" * 10_000, "--store", str(store.session_dir))
    assert code == 1 and len(_one_line(err)) < 300


def test_import_into_pi_store_is_refused(store: DefaultSessionStore, tmp_path: Path) -> None:
    payload = tmp_path / "p.json"
    payload.write_text(json.dumps({"version": 1, "sessions": [{"session_id": "x"}]}))
    code, _out, err = run("import", str(payload), "--store", f"pi:{tmp_path / 'pi'}")
    assert code == 1 and "read-only" in _one_line(err)
    assert not (Path.cwd() / "pi:").exists() and not (tmp_path / "pi").exists()


def test_import_write_failure_exits_non_zero(tmp_path: Path) -> None:
    payload = tmp_path / "p.json"
    sessions = [{"session_id": "ok", "messages": []}, {"session_id": "big", "messages": []}]
    payload.write_text(json.dumps({"version": 1, "sessions": sessions}))
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "big.json.lock").mkdir()  # the lock of "big" cannot be taken: its write fails
    code, out, err = run("import", str(payload), "--store", str(dest), "--json")
    assert code == 1
    report = json.loads(out)
    assert report["imported_ids"] == ["ok"] and report["failed_count"] == 1
    assert "1 session(s) could not be written" in _one_line(err)
    assert sorted(p.name for p in dest.iterdir()) == ["big.json.lock", "ok.json", "ok.json.lock"]


def test_export_all_names_unreadable_file_once(store: DefaultSessionStore, tmp_path: Path) -> None:
    bad = store.session_dir / "broken.json"
    bad.write_bytes(b"{nope")
    out = tmp_path / "all.json"
    code, _out, err = run("export", "--all", "--store", str(store.session_dir), "-o", str(out))
    line = _one_line(err)
    assert code == 1 and line.count(str(bad)) == 1 and "--skip-unreadable" in line
    assert not out.exists()


@pytest.mark.parametrize("command", ["export", "salvage"])
def test_output_into_missing_dir_or_dir(
    store: DefaultSessionStore, tmp_path: Path, command: str
) -> None:
    corrupt = store.session_dir / "s9.json.corrupt-1700000000000"
    corrupt.write_bytes(b'{"session_id": "s9", "messages": [{"role": "user", "content": "a"}')
    base = (
        ["export", "s1"] if command == "export" else ["quarantine", "salvage", corrupt.name]
    ) + ["--store", str(store.session_dir)]
    code, _out, err = run(*base, "-o", str(tmp_path / "missing" / "x.json"))
    assert code == 1 and "no such directory" in _one_line(err) and ".tmp" not in err
    code, _out, err = run(*base, "-o", str(tmp_path), "--force")
    assert code == 1 and "is a directory" in _one_line(err)
    assert not (tmp_path / "missing").exists()


def test_confirmation_at_end_of_input_changes_nothing(store: DefaultSessionStore) -> None:
    corrupt = store.session_dir / "s1.json.corrupt-1700000000000"
    corrupt.write_bytes(
        b'{"session_id": "s1", "messages": [{"role": "user", "content": "lost", "timestamp": 5}'
    )
    before = _snapshot(store.session_dir)
    code, _out, err = run("quarantine", "merge", corrupt.name, "--store", str(store.session_dir))
    assert code == 1 and "cancelled; nothing changed" in err and "Aborted" not in err
    assert _snapshot(store.session_dir) == before


def test_empty_quarantine_item(store: DefaultSessionStore) -> None:
    code, _out, err = run("quarantine", "show", "", "--store", str(store.session_dir))
    assert code == 1 and "no item given" in _one_line(err)


def test_core_warnings_do_not_repeat_the_error(store: DefaultSessionStore) -> None:
    store.session_path("s1").write_bytes(b"{broken")
    code, _out, err = run("export", "s1", "--store", str(store.session_dir), "-o", "-")
    assert code == 1
    _one_line(err)


def _sb(*args: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "session_browser", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


# The import pauses after its third session file, in the middle of the run, and says so;
# the test sends Ctrl-C only then, so the interrupt path is checked on every run.
_PAUSING_IMPORT = """
import pathlib, sys, time
from session_browser.core import store as st
real = st.DefaultSessionStore._notify  # the store's after-write hook
done = []
def write_then_pause(self, *args, **kwargs):
    result = real(self, *args, **kwargs)
    done.append(1)
    if len(done) == 3:
        pathlib.Path(sys.argv[1]).write_text("paused")
        time.sleep(120)
    return result
st.DefaultSessionStore._notify = write_then_pause
from session_browser.cli import main
main(args=sys.argv[2:], prog_name="session-browser")
"""


def test_ctrl_c_mid_import_leaves_only_whole_files(tmp_path: Path) -> None:
    sessions = [
        {
            "session_id": f"s{i}",
            "messages": [{"role": "user", "content": "x" * 500, "timestamp": float(i)}] * 4,
        }
        for i in range(20)
    ]
    payload = tmp_path / "p.json"
    payload.write_text(json.dumps({"version": 1, "sessions": sessions}))
    dest = tmp_path / "dest"
    ready = tmp_path / "paused"
    env = dict(os.environ, DO_NOT_TRACK="1")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _PAUSING_IMPORT,
            str(ready),
            "import",
            str(payload),
            "--store",
            str(dest),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not ready.exists() and proc.poll() is None:
        time.sleep(0.02)
    assert ready.exists(), proc.communicate(timeout=60)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    text = err.decode()
    assert proc.returncode == 130 and "interrupted" in text and "Traceback" not in text, text
    written = sorted(p.name for p in dest.glob("*.json"))
    assert len(written) == 3  # the import stopped where it was interrupted
    assert not [p for p in dest.iterdir() if p.name.endswith(".tmp")]
    for path in dest.glob("*.json"):
        assert json.loads(path.read_bytes())["session_id"] == path.stem
    # What it wrote is one finished journal entry: undo removes exactly those files.
    entry = q.journal_entries()[0]
    assert entry["action"] == "import" and entry["status"] == "done"
    assert sorted(Path(f["path"]).name for f in entry["files"]) == written
    q.undo()
    assert not list(dest.glob("*.json"))


@pytest.mark.parametrize("as_json", [False, True])
def test_broken_pipe_is_quiet(tmp_path: Path, as_json: bool) -> None:
    d = tmp_path / "sessions"
    d.mkdir()
    for i in range(600):
        data = {"session_id": f"n{i}", "messages": [{"role": "user", "content": "billing " * 40}]}
        (d / f"n{i}.json").write_text(json.dumps(data))
    args = ["search", "billing", "--limit", "600", "--store", str(d)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "session_browser", *args, *(["--json"] if as_json else [])],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ, DO_NOT_TRACK="1"),
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(10)
    proc.stdout.close()  # the reader goes away, as with '| head'
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 0
    assert err == b""
