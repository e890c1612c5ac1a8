"""The CLI over Pi session dirs: ``--store pi:DIR`` alone and beside a PraisonAI store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.model import SessionData, SessionMessage
from session_browser.core.store import DefaultSessionStore
from tests.core.test_pi import BEFORE, LARGE, PI_CWD, header, raw_entries, snapshot, user

PROJECT = "--home-user-proj--"


@pytest.fixture
def pi_dir(tmp_path: Path, shared_data: Path) -> Path:
    root = tmp_path / "pi"
    (root / PROJECT).mkdir(parents=True)
    for name in (BEFORE, LARGE):
        src = shared_data / "pi" / name
        head = json.loads(src.open(encoding="utf-8").readline())
        stamp = head["timestamp"].replace(":", "-").replace(".", "-")
        shutil.copyfile(src, root / PROJECT / f"{stamp}_{head['id']}.jsonl")
    # A small session with a word the PraisonAI store below shares, and hostile text.
    lines = [
        header("pi-small", cwd="/srv/app"),
        user("the axolotl pipeline \x1b[31mred\x1b[0m [bold]x[/bold]", "2026-01-16T00:00:00.000Z"),
    ]
    (root / "--srv-app--" / "s.jsonl").parent.mkdir(parents=True)
    (root / "--srv-app--" / "s.jsonl").write_text(
        "".join(json.dumps(o) + "\n" for o in lines), encoding="utf-8"
    )
    return root


@pytest.fixture
def praison_dir(tmp_path: Path) -> Path:
    d = tmp_path / "sessions"
    DefaultSessionStore(d).write_session(
        SessionData(
            session_id="pr-1",
            messages=[
                SessionMessage(role="user", content="axolotl pipeline notes", timestamp=1.75e9),
                SessionMessage(role="assistant", content="noted", timestamp=1.75e9 + 600),
            ],
            created_at="2025-06-15T00:00:00+00:00",
            updated_at="2025-06-15T00:10:00+00:00",
        )
    )
    return d


def run(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.stdout, res.stderr


def test_search_recent_show_on_a_pi_store(pi_dir: Path, shared_data: Path) -> None:
    before = snapshot(pi_dir)
    sid = raw_entries(shared_data / "pi" / LARGE)[0]["id"]
    code, out, err = run("search", "theme selector", "--store", f"pi:{pi_dir}", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["results"] and {r["source"] for r in data["results"]} == {"pi"}
    assert sid in {r["session_id"] for r in data["results"]}
    assert all(r["project"] == PI_CWD for r in data["results"])

    code, out, _ = run("search", "theme selector", "--store", f"pi:{pi_dir}")
    assert code == 0 and "[pi]" in out and f"id: {sid}" in out

    code, out, _ = run("recent", "--store", f"pi:{pi_dir}", "--json")
    rows = json.loads(out)["results"]
    assert code == 0 and len(rows) == 3 and {r["source"] for r in rows} == {"pi"}
    assert rows[0]["session_id"] == "pi-small" and rows[0]["project"] == "/srv/app"
    code, out, _ = run("recent", "--store", f"pi:{pi_dir}")
    assert code == 0 and "[pi]" in out

    code, out, _ = run("show", "pi-small", "--store", f"pi:{pi_dir}")
    assert code == 0 and "axolotl pipeline" in out and "[pi]" in out
    assert "\x1b[31m" not in out and "[bold]x[/bold]" in out  # data, never markup or escapes
    code, out, _ = run("show", sid, "--store", f"pi:{pi_dir}", "--json", "--window", "1")
    assert code == 0 and json.loads(out)["messages"]
    assert snapshot(pi_dir) == before


def test_mixed_stores_and_filters(pi_dir: Path, praison_dir: Path) -> None:
    stores = ["--store", str(praison_dir), "--store", f"pi:{pi_dir}"]
    code, out, _ = run("search", "axolotl pipeline", *stores, "--json", "--limit", "10")
    assert code == 0
    found = {(r["session_id"], r["source"]) for r in json.loads(out)["results"]}
    assert found == {("pr-1", "praisonai"), ("pi-small", "pi")}
    code, out, _ = run("search", "source:pi axolotl", *stores, "--json")
    assert [r["session_id"] for r in json.loads(out)["results"]] == ["pi-small"]
    code, out, _ = run("search", "project:/srv/app axolotl", *stores, "--json")
    assert [r["session_id"] for r in json.loads(out)["results"]] == ["pi-small"]
    code, out, _ = run("recent", *stores, "--json", "--limit", "10")
    assert {r["source"] for r in json.loads(out)["results"]} == {"praisonai", "pi"}
    # The group option works the same way.
    code, out, _ = run("--store", f"pi:{pi_dir}", "search", "axolotl", "--json")
    assert code == 0 and [r["source"] for r in json.loads(out)["results"]] == ["pi"]


def test_index_commands_on_a_pi_store(pi_dir: Path, isolated_home: Path) -> None:
    before = snapshot(pi_dir)
    code, out, err = run("index", "update", "--store", f"pi:{pi_dir}", "--json")
    assert code == 0, err
    entry = json.loads(out)["stores"][0]
    assert entry["added"] == 3 and entry["session_dir"] == str(pi_dir)
    assert Path(entry["db_path"]).is_relative_to(isolated_home / "cache")
    code, out, _ = run("index", "status", "--store", f"pi:{pi_dir}", "--json")
    status = json.loads(out)["stores"][0]
    assert code == 0 and status["sessions"] == 3 and status["files"] == 3
    assert status["source"] == "pi"
    code, out, _ = run("index", "status", "--store", f"pi:{pi_dir}")
    assert code == 0 and "3 sessions" in out and "stale" not in out
    assert snapshot(pi_dir) == before


def test_missing_pi_dir_is_one_clear_line(tmp_path: Path) -> None:
    for args in (("search", "x"), ("recent",), ("index", "status")):
        code, out, err = run(*args, "--store", f"pi:{tmp_path / 'nope'}")
        assert code == (2 if args[0] == "search" else 1) and out == ""  # search: 1 is no match
        assert (
            err.strip()
            == f"session-browser: Pi session dir not found: {tmp_path / 'nope'} is not a directory"
        )
