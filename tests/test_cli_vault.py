"""``session-browser vault``: status, log, restore (byte-identical, never over a file),
check (damage is an exit status) and prune, on a vault filled through the library."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.text import parse_size
from session_browser.core.vault import Vault, default_vault_dir
from tests.core.test_vault import damage_entry


def run(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.stdout, res.stderr


def fill(sessions: Path) -> tuple[Path, list[bytes]]:
    sessions.mkdir(parents=True)
    path = sessions / "s1.json"
    versions = [
        json.dumps({"session_id": "s1", "messages": ["x"] * n}, indent=2).encode()
        for n in (1, 2, 3)
    ]
    with Vault(default_vault_dir()) as vault:
        for i, data in enumerate(versions):
            vault.keep("praisonai", path, "s1", data, messages=i + 1, now=1000.0 + i)
    return path, versions


def test_log_status_and_restore_of_a_deleted_session(tmp_path: Path) -> None:
    path, versions = fill(tmp_path / "sessions")
    code, out, _ = run("vault", "log", "s1", "--json")
    assert code == 0
    rows = json.loads(out)["versions"]
    assert [r["version"] for r in rows] == [1, 2, 3]
    assert [r["size"] for r in rows] == [len(v) for v in versions]
    assert rows[0]["seen"] == "1970-01-01T00:16:40+00:00"
    code, out, _ = run("vault", "restore", "s1")  # the file is gone: back where it was
    assert code == 0 and path.read_bytes() == versions[2]
    path.write_bytes(b"what is there now")
    code, out, err = run("vault", "restore", "s1")
    assert code == 1 and "never writes over a file" in err
    assert path.read_bytes() == b"what is there now"
    path.unlink()
    code, out, _ = run("vault", "restore", "s1", "--version", "2")
    assert code == 0 and path.read_bytes() == versions[1]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, out, _ = run("vault", "restore", "s1", "--to", str(elsewhere), "--json")
    assert code == 0 and (elsewhere / "s1.json").read_bytes() == versions[2]
    code, out, _ = run("vault", "status", "--json")
    status = json.loads(out)
    assert (status["files"], status["versions"]) == (1, 3)
    assert status["stored_bytes"] > 0


def test_bad_requests_are_one_line_and_non_zero(tmp_path: Path) -> None:
    fill(tmp_path / "sessions")
    code, _out, err = run("vault", "log", "nope")
    assert code == 1 and err.count("\n") == 1 and "no version" in err
    code, _out, err = run("vault", "restore", "s1", "--version", "9")
    assert code == 2 and "between 1 and 3" in err
    for budget in ("lots", "-1", "5X", "1e9", ""):
        code, _out, err = run("vault", "prune", "--budget", budget)
        assert code == 2 and "not a size" in err, (budget, err)


def test_sizes_as_people_type_them() -> None:
    assert [parse_size(t) for t in ("0", "1048576", "500M", "1.5GiB", "2g", "64KB", "3 k")] == [
        0, 1 << 20, 500 << 20, 3 << 29, 2 << 30, 64 << 10, 3 << 10,
    ]
    with pytest.raises(ValueError, match="too large"):
        parse_size("99999999T")


def test_check_reports_damage_and_prune_keeps_the_last_copy(tmp_path: Path) -> None:
    fill(tmp_path / "sessions")
    assert run("vault", "check")[0] == 0
    code, out, _ = run("vault", "prune", "--budget", "0", "--json")
    assert code == 0 and json.loads(out)["freed_bytes"] > 0
    code, out, _ = run("vault", "log", "s1", "--json")
    assert len(json.loads(out)["versions"]) == 1
    damage_entry(default_vault_dir(), zlib.compress(b"other bytes"))
    code, out, _ = run("vault", "check", "--json")
    assert code == 1 and len(json.loads(out)["damaged"]) == 1
    code, _out, err = run("vault", "restore", "s1", "--to", str(tmp_path))
    assert code == 1 and "does not match its hash" in err
    assert not (tmp_path / "s1.json").exists()


def test_a_deleted_transcript_is_searched_shown_and_restored_from_the_command_line(
    tmp_path: Path,
) -> None:
    from tests.core.test_vault_feed import SID, claude_dir

    root = tmp_path / "projects"
    path, _t = claude_dir(root)
    original = path.read_bytes()
    store = f"claude:{root}"
    code, out, _ = run("search", "heron", "--store", store)
    assert code == 0 and "deleted from" not in out
    path.unlink()
    code, out, _ = run("search", "heron", "--store", store)
    assert code == 0 and f"deleted from {path}" in out.replace("\n", "")
    code, out, _ = run("search", "heron", "--store", store, "--json")
    [hit] = json.loads(out)["results"]
    assert hit["session_id"] == SID and hit["kept"].startswith("deleted from")
    code, out, _ = run("show", SID, "--store", store)
    assert code == 0 and "heron config" in out and "deleted from" in out
    code, out, _ = run("show", SID, "--version", "1", "--json")
    assert code == 0 and "heron" in json.dumps(json.loads(out)["messages"])
    code, _out, err = run("show", SID, "--version", "5")
    assert code == 1 and "between 1 and 1" in err
    exported = tmp_path / "out.json"
    code, _out, err = run("export", SID, "--store", store, "-o", str(exported))
    assert code == 0, err
    assert "heron config" in exported.read_text()
    code, out, _ = run("doctor", "--json")
    report = json.loads(out)
    assert report["vault"]["gone"] == 1 and report["vault"]["disk_bytes"] > 0
    assert any("older than 30 days" in f["text"] for f in report["findings"])
    code, out, _ = run("vault", "restore", SID)
    assert code == 0 and path.read_bytes() == original


def test_doctor_reads_claude_cleanup_period(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "claude-config"
    config.mkdir()
    (config / "settings.json").write_text('{"cleanupPeriodDays": 7}')
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.setenv("PRAISONAI_SESSION_RETENTION", "truncate")
    code, out, _ = run("doctor")
    assert code == 0
    assert f"older than 7 days (cleanupPeriodDays in {config / 'settings.json'})" in out
    assert "PRAISONAI_SESSION_RETENTION=truncate" in out


def test_recent_lists_each_session_once_and_marks_the_deleted(tmp_path: Path) -> None:
    from tests.core.test_vault_feed import OTHER, SID, claude_dir
    from tests.core.test_vault_listing import truncated

    sessions = tmp_path / "sessions"
    truncated(sessions).close()
    code, out, _ = run("recent", "--store", str(sessions), "--json")
    assert code == 0
    rows = json.loads(out)["results"]
    assert sorted(r["session_id"] for r in rows) == ["s1", "s2"]
    assert [r["kept"] for r in rows] == [None, None]
    code, out, _ = run("recent", "--store", str(sessions))
    assert code == 0 and out.count(" s1") == 1 and "[deleted]" not in out
    code, out, _ = run("show", "s1", "--store", str(sessions), "--json")
    assert code == 0 and "pelican" not in out and "filler turn 3" in out

    root = tmp_path / "projects"
    path, _t = claude_dir(root)
    store = f"claude:{root}"
    code, out, _ = run("recent", "--store", store)
    assert code == 0 and "[deleted]" not in out
    path.unlink()
    code, out, _ = run("recent", "--store", store)
    assert code == 0 and out.count("[deleted]") == 1
    [line] = [line for line in out.splitlines() if "[deleted]" in line]
    assert SID[:8] in line and OTHER[:8] not in line
    code, out, _ = run("recent", "--store", store, "--json")
    kept = {r["session_id"]: r["kept"] for r in json.loads(out)["results"]}
    assert kept[OTHER] is None and kept[SID].startswith(f"deleted from {path} on ")
