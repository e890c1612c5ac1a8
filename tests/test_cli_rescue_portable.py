"""Export and import against hostile targets, sources and sessions."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core import portable
from session_browser.core.files import loads
from session_browser.core.store import DefaultSessionStore
from session_browser.core.tool import session_search
from tests import hostile

# What must never reach a terminal raw from any output path.
RAW_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
    "\ud800-\udfff]"
)


def _store(tmp_path: Path) -> Path:
    sessions = tmp_path / "home" / "sessions"
    hostile.write_good(sessions)
    return sessions


def test_export_refuses_a_fifo_or_a_symlink_target_even_with_force(tmp_path: Path) -> None:
    sessions = _store(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    real = tmp_path / "real.json"
    real.write_text("keep me")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    runner = CliRunner()
    for target, word in ((fifo, "not a regular file"), (link, "symbolic link")):
        res = runner.invoke(
            main, ["export", "good-0", "--store", str(sessions), "-o", str(target), "--force"]
        )
        assert res.exit_code == 1 and word in res.stderr, res.output
        assert len(res.stderr.strip().splitlines()) == 1
    assert fifo.is_fifo() and link.is_symlink() and real.read_text() == "keep me"
    res = runner.invoke(
        main, ["export", "good-0", "--store", str(sessions), "-o", str(real), "--force"]
    )
    assert res.exit_code == 0 and json.loads(real.read_text())["sessions"][0]["session_id"]


@pytest.mark.parametrize("source", ["fifo", "/dev/zero"])
def test_import_refuses_a_fifo_or_a_device_at_once(tmp_path: Path, source: str) -> None:
    sessions = _store(tmp_path)
    path = tmp_path / "pipe" if source == "fifo" else Path(source)
    if source == "fifo":
        os.mkfifo(path)
    # A child process, so a hang is a timeout here rather than a stuck suite.
    started = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from session_browser.cli import main; main()",
            "import",
            str(path),
            "--store",
            str(sessions),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and "not a regular file" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert time.monotonic() - started < 30
    with pytest.raises(portable.PortableError, match="not a regular file"):
        portable.load_payload(path)


def test_export_all_skips_or_names_an_unexportable_session(tmp_path: Path) -> None:
    sessions = _store(tmp_path)
    kinds = hostile.write_all(sessions)
    # 1,010 levels: orjson reads it (its limit is 1,024), but no JSON writer goes that deep.
    too_deep = "hostile-deep-1010"
    (sessions / f"{too_deep}.json").write_bytes(
        hostile._session_json(too_deep, content=hostile.nested(1010))
    )
    runner = CliRunner()
    out = tmp_path / "all.json"
    args = ["export", "--all", "--store", str(sessions), "-o", str(out)]
    res = runner.invoke(main, args)
    assert res.exit_code == 1 and too_deep in res.stderr and "Traceback" not in res.output
    assert len(res.stderr.strip().splitlines()) == 1 and not out.exists()
    res = runner.invoke(main, [*args, "--skip-unreadable", "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    # every hostile kind is exported (980 levels included); only the 1,010-deep one is not
    assert report["sessions"] == len(kinds) + 3
    assert any(too_deep in s for s in report["skipped_unreadable"])
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)  # the 980-deep session inside a payload, with NaN beside it
    try:
        payload = loads(out.read_bytes())
    finally:
        sys.setrecursionlimit(limit)
    exported = {s["session_id"]: s for s in payload["sessions"]}
    store = DefaultSessionStore(sessions)
    for sid in (kinds["lone_surrogate"], kinds["nasty_text"]):
        assert exported[sid] == store.read_raw(sid)  # exact data, escapes and all
    assert not RAW_UNSAFE.search(out.read_text(encoding="utf-8", errors="surrogateescape"))
    for fmt in ("md", "html", "json"):
        res = runner.invoke(
            main,
            [
                "export",
                "--all",
                "--skip-unreadable",
                "--format",
                fmt,
                "--store",
                str(sessions),
                "-o",
                "-",
            ],
        )
        assert res.exit_code == 0, res.output
        text = res.stdout_bytes.decode("utf-8")
        unsafe = RAW_UNSAFE.sub("", text.replace("\n", "").replace("\t", ""))
        assert unsafe == text.replace("\n", "").replace("\t", ""), fmt
        if fmt == "md":  # the string timestamp cannot open a heading of its own
            assert "\\x1b[31mred" in text and not re.search(r"^#+ .*\n#", text)


def test_an_over_long_id_is_skipped_not_fatal_and_a_portable_error(tmp_path: Path) -> None:
    sessions = _store(tmp_path)
    store = DefaultSessionStore(sessions)
    good = store.read_raw("good-0")
    assert good is not None
    payload = {
        "version": 1,
        "sessions": [dict(good, session_id="x" * 400), dict(good, session_id="fresh")],
    }
    with pytest.raises(portable.PortableError, match="too long"):
        portable.import_sessions(store, payload)
    report = portable.import_sessions(store, payload, skip_invalid=True)
    assert report.imported_ids == ["fresh"] and len(report.skipped) == 1
    assert len(report.skipped[0]["reason"]) < 400
    src = tmp_path / "in.json"
    src.write_text(json.dumps(dict(payload, sessions=[dict(good, session_id="y" * 400)])))
    res = CliRunner().invoke(main, ["import", str(src), "--store", str(sessions)])
    assert res.exit_code == 1 and "too long" in res.stderr and len(res.stderr) < 1000


def test_tool_error_replies_are_bounded(tmp_path: Path) -> None:
    store = DefaultSessionStore(_store(tmp_path))
    reply = session_search(session_id="z" * 100_000, store=store)
    data = json.loads(reply)
    assert data["success"] is False and len(reply) < 3000
    assert "more characters" in data["session_id"]
    reply = session_search(session_id="\u202e\x1b[31m" + "q" * 10, store=store)
    assert not RAW_UNSAFE.search(reply) and json.loads(reply)["session_id"].startswith("\u202e")
