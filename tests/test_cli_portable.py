"""``session-browser export`` / ``import`` end to end (real files, real click runner)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.paths import spill_dir_for
from session_browser.core.store import DefaultSessionStore


def _store(root: Path) -> DefaultSessionStore:
    store = DefaultSessionStore(root / "sessions", retention="keep_all")
    store.add_user_message("s1", "hello <script>x</script> jane@example.com")
    store.add_assistant_message("s1", "token sk-abcdefghijklmnopqrstuv")
    store.add_user_message("a/b", "second session")
    return store


def test_export_import_round_trip_and_reports(tmp_path: Path) -> None:
    src = _store(tmp_path / "src")
    out = tmp_path / "all.json"
    runner = CliRunner()
    res = runner.invoke(
        main, ["export", "--all", "--store", str(src.session_dir), "-o", str(out), "--json"]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["sessions"] == 2
    dst = tmp_path / "dst" / "sessions"
    dst.mkdir(parents=True)
    dry = runner.invoke(main, ["import", str(out), "--store", str(dst), "--dry-run", "--json"])
    assert dry.exit_code == 0 and json.loads(dry.stdout)["imported"] == 2
    assert list(dst.iterdir()) == []
    res = runner.invoke(main, ["import", str(out), "--store", str(dst), "--json"])
    assert json.loads(res.stdout)["imported_ids"] == ["a/b", "s1"]
    assert (dst / "s1.json").read_bytes() == src.session_path("s1").read_bytes()
    again = runner.invoke(main, ["import", str(out), "--store", str(dst)])
    assert again.exit_code == 0 and "skipped 2" in again.stdout and "already exists" in again.stdout
    # The export file is never silently replaced.
    res = runner.invoke(main, ["export", "--all", "--store", str(src.session_dir), "-o", str(out)])
    assert res.exit_code == 1 and "exists (use --force" in res.stderr


def test_human_exports_with_redaction(tmp_path: Path) -> None:
    src = _store(tmp_path / "src")
    runner = CliRunner()
    page = tmp_path / "s1.html"
    res = runner.invoke(
        main, ["export", "s1", "--store", str(src.session_dir), "--redact", "-o", str(page)]
    )
    assert (
        res.exit_code == 0 and "Redacted 3 item(s) (api_key: 1, email: 2)" in res.stdout
    )  # title + body
    text = page.read_text(encoding="utf-8")
    assert "<script>x" not in text and "jane@" not in text and "sk-abc" not in text
    md = tmp_path / "hits.md"
    res = runner.invoke(
        main, ["export", "--search", "hello", "--store", str(src.session_dir), "-o", str(md)]
    )
    assert res.exit_code == 0 and "Exported 1 hit(s)" in res.stdout
    assert "▶ match" in md.read_text(encoding="utf-8")


def test_bad_input_is_one_clear_line(tmp_path: Path) -> None:
    src = _store(tmp_path / "src")
    runner = CliRunner()
    res = runner.invoke(
        main, ["export", "nope", "--store", str(src.session_dir), "-o", str(tmp_path / "x.json")]
    )
    assert (
        res.exit_code == 1 and res.stderr.strip() == "session-browser: unknown session id: 'nope'"
    )
    bad = tmp_path / "bad.json"
    bad.write_text('{"sessions": [null]}')
    res = runner.invoke(main, ["import", str(bad), "--store", str(tmp_path / "d")])
    assert res.exit_code == 1 and len(res.stderr.strip().splitlines()) == 1
    assert "entry 0 is NoneType" in res.stderr and not (tmp_path / "d").exists()
    res = runner.invoke(
        main, ["import", str(bad), "--max-size", "5", "--store", str(tmp_path / "d")]
    )
    assert res.exit_code == 1 and "size cap of 5 bytes" in res.stderr


def test_redacted_import_over_a_session_is_refused_unless_allowed_and_undone(
    tmp_path: Path,
) -> None:
    store = DefaultSessionStore(tmp_path / "sessions", retention="keep_all")
    store.add_user_message("demo", "restic password_file=/home/ann/.restic-pw and ann@example.com")
    original = store.session_path("demo").read_bytes()
    out = tmp_path / "redacted.json"
    runner = CliRunner()
    d = str(store.session_dir)
    res = runner.invoke(main, ["export", "demo", "--store", d, "--redact", "-o", str(out)])
    assert res.exit_code == 0, res.output
    fresh = json.loads(out.read_text())
    fresh["sessions"].append({**fresh["sessions"][0], "session_id": "fresh"})
    out.write_text(json.dumps(fresh))

    dry = runner.invoke(main, ["import", str(out), "--store", d, "--overwrite", "--dry-run"])
    assert dry.exit_code == 1, dry.output
    assert "would create 1:" in dry.stdout and "would replace 1:" in dry.stdout
    assert dry.stdout.index("fresh") < dry.stdout.index("would replace")
    assert "redacted export" in dry.stderr and "--allow-redacted" in dry.stderr
    res = runner.invoke(main, ["import", str(out), "--store", d, "--overwrite"])
    assert res.exit_code == 1 and len(res.stderr.strip().splitlines()) == 1
    assert "refused" in res.stderr and "nothing was imported" in res.stderr
    assert store.session_path("demo").read_bytes() == original
    assert not store.session_path("fresh").exists()
    res = runner.invoke(main, ["import", str(out), "--store", d, "--allow-redacted"])
    assert res.exit_code == 1 and "goes with --overwrite" in res.stderr

    res = runner.invoke(
        main, ["import", str(out), "--store", d, "--overwrite", "--allow-redacted", "--json"]
    )
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["replaced_ids"] == ["demo"] and report["created_ids"] == ["fresh"]
    assert report["redacted"] is True and report["action_id"]
    assert b"[REDACTED:secret]" in store.session_path("demo").read_bytes()
    listing = runner.invoke(main, ["quarantine", "undo", "--list"])
    assert report["action_id"] in listing.stdout and "import" in listing.stdout
    res = runner.invoke(main, ["quarantine", "undo", "--yes"])
    assert res.exit_code == 0, res.output
    assert store.session_path("demo").read_bytes() == original
    assert not store.session_path("fresh").exists()


def test_import_prints_created_replaced_and_how_to_undo(tmp_path: Path) -> None:
    src = _store(tmp_path / "src")
    out = tmp_path / "all.json"
    runner = CliRunner()
    runner.invoke(main, ["export", "--all", "--store", str(src.session_dir), "-o", str(out)])
    dst = tmp_path / "dst" / "sessions"
    res = runner.invoke(main, ["import", str(out), "--store", str(dst)])
    assert res.exit_code == 0 and "created 2:" in res.stdout
    assert "Undo: session-browser quarantine undo " in res.stdout
    res = runner.invoke(main, ["import", str(out), "--store", str(dst), "--overwrite"])
    assert res.exit_code == 0 and "replaced 2:" in res.stdout and "created 2" not in res.stdout


@pytest.mark.parametrize("where", ["new-in-sessions", "live", "spill", "dotdot"])
def test_export_is_never_written_into_a_store(tmp_path: Path, where: str) -> None:
    """The CLI holds the app's policy: no export lands in a session or spill dir, not even
    with --force (a file there is a live session, or becomes one)."""
    src = _store(tmp_path / "src")
    spill = spill_dir_for(src.session_dir)  # the spill dir the CLI opens the store with
    spill.mkdir(parents=True, exist_ok=True)
    target = {
        "new-in-sessions": src.session_dir / "export.json",
        "live": src.session_path("s1"),
        "spill": spill / "export.json",
        "dotdot": src.session_dir / "sub" / ".." / "export.json",
    }[where]
    before = {
        str(p): p.read_bytes()
        for d in (src.session_dir, spill)
        for p in d.rglob("*")
        if p.is_file()
    }
    args = ["export", "--all", "--store", str(src.session_dir), "-o", str(target), "--force"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 1 and "inside the session store" in res.stderr, res.output
    after = {
        str(p): p.read_bytes()
        for d in (src.session_dir, spill)
        for p in d.rglob("*")
        if p.is_file()
    }
    assert after == before
