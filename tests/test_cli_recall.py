"""The ``search``, ``show`` and ``recent`` commands: human and JSON output, errors, safety."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.store import DefaultSessionStore

EVIL = "look [@click=app.quit]x and \x1b[31mred\x1b[0m \x1b]0;pwn\x07 \x9b2J [bold]b[/bold]"


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    d = tmp_path / "sessions"
    s = DefaultSessionStore(d, active_window=3)
    for i in range(6):
        s.add_message("alpha", "user" if i % 2 == 0 else "assistant", f"billing turn {i}")
    s.rename_session("alpha", "Alpha billing")
    s.add_user_message("evil", EVIL)
    s.add_assistant_message("evil", "ordinary answer")
    s.rename_session("evil", "[red]title\x1b[2J")
    return d


def run(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.stdout, res.stderr


def test_search_human(store_dir: Path) -> None:
    code, out, err = run("search", "billing turn", "--store", str(store_dir))
    assert code == 0 and err == ""
    assert "Alpha billing" in out and "id: alpha" in out and "anchor #" in out
    assert "archived hit" in out


def test_search_json(store_dir: Path) -> None:
    code, out, _ = run(
        "search", "billing", "--json", "--limit", "1", "--window", "1", "--store", str(store_dir)
    )
    assert code == 0
    data = json.loads(out)
    assert data["query"] == "billing" and data["total_found"] == 1
    hit = data["results"][0]
    assert hit["session_id"] == "alpha" and hit["title"] == "Alpha billing"
    assert {"snippet", "score", "anchor_index", "messages", "bookends", "archived"} <= set(hit)
    assert len(hit["messages"]) <= 3


def test_search_no_match(store_dir: Path) -> None:
    code, out, _ = run("search", "zzzz", "--store", str(store_dir))
    assert code == 1 and "No session matches" in out  # grep's status for no match
    code, out, _ = run("search", "zzzz", "--json", "--store", str(store_dir))
    assert code == 1 and json.loads(out)["results"] == []


def test_show_human_and_json(store_dir: Path) -> None:
    code, out, _ = run("show", "alpha", "--around", "1", "--window", "1", "--store", str(store_dir))
    assert code == 0
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert len(lines) == 4
    assert lines[0].startswith("Alpha billing") and "id: alpha" in lines[0]
    assert "billing turn 1" in out and "[archived]" in out and "▶ #1" in out
    code, out, _ = run("show", "alpha", "--json", "--store", str(store_dir))
    data = json.loads(out)
    assert data["session_id"] == "alpha"
    assert data["messages"][-1]["content"] == "billing turn 5"
    assert [m["index"] for m in data["messages"]] == list(range(1, 7))


def test_recent_human_and_json(store_dir: Path) -> None:
    code, out, _ = run("recent", "--store", str(store_dir))
    assert code == 0 and "Alpha billing" in out and "evil" in out
    code, out, _ = run("recent", "--json", "--limit", "1", "--store", str(store_dir))
    data = json.loads(out)
    assert data["total_found"] == 1 and data["results"][0]["session_id"] == "evil"
    assert {"message_count", "archived_count", "when", "title"} <= set(data["results"][0])


def test_group_level_store_option(store_dir: Path) -> None:
    code, out, _ = run("--store", str(store_dir), "recent", "--json")
    assert code == 0 and json.loads(out)["total_found"] == 2


def test_default_stores_project_then_global_dedup(isolated_home: Path) -> None:
    glob = DefaultSessionStore()
    glob.add_user_message("shared", "global copy of kiwi")
    glob.add_user_message("only-global", "kiwi too")
    project = DefaultSessionStore(Path.cwd() / ".praisonai" / "sessions")
    project.add_user_message("shared", "project copy of kiwi")
    code, out, _ = run("search", "kiwi", "--json")
    assert code == 0
    results = {r["session_id"]: r for r in json.loads(out)["results"]}
    assert set(results) == {"shared", "only-global"}
    assert results["shared"]["messages"][0]["content"] == "project copy of kiwi"
    code, out, _ = run("recent", "--json")
    assert json.loads(out)["total_found"] == 2


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["search", "x", "--store", "/no/such/dir"], "store not found"),
        (["show", "no-such-id", "--store", "{d}"], "unknown session id"),
        (["search", "x", "--limit", "0", "--store", "{d}"], "--limit"),
        (["search", "x", "--limit", "many", "--store", "{d}"], "--limit"),
        (["show", "alpha", "--around", "-1", "--store", "{d}"], "--around"),
        (["recent", "--bogus", "--store", "{d}"], "--bogus"),
        (["search", "   ", "--store", "{d}"], "query is empty"),
        (["search"], "QUERY"),
    ],
)
def test_errors_are_one_line(store_dir: Path, args: list[str], needle: str) -> None:
    code, out, err = run(*[a.replace("{d}", str(store_dir)) for a in args])
    assert code != 0
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert needle in err and err.startswith("session-browser: ")


def test_unknown_id_with_hostile_text(store_dir: Path) -> None:
    code, _, err = run("show", "x\x1b[2Jy", "--store", str(store_dir))
    assert code == 1 and "\x1b" not in err and "\\x1b" in err


@pytest.mark.parametrize(
    "args",
    [
        ["search", "look"],
        ["search", "look", "--json"],
        ["show", "evil", "--around", "0"],
        ["show", "evil", "--json"],
        ["recent"],
        ["recent", "--json"],
    ],
)
def test_markup_and_escapes_printed_literally(store_dir: Path, args: list[str]) -> None:
    code, out, _ = run(*args, "--store", str(store_dir))
    assert code == 0
    assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out
    if "--json" in args:
        json.loads(out)
        assert "\\u001b" in out
    else:
        assert "\\x1b" in out  # shown, not obeyed
    if args[0] != "recent":
        assert "[@click=app.quit]x" in out and "[bold]b[/bold]" in out
    if args != ["show", "evil", "--json"]:
        assert "[red]title" in out


def test_real_process_no_textual_and_no_escape(store_dir: Path) -> None:
    env = {**os.environ, "DO_NOT_TRACK": "1", "COLUMNS": "200"}
    code = (
        "import sys, runpy; sys.argv=['session-browser', *sys.argv[1:]];"
        "from session_browser.cli import main\n"
        "try:\n    main()\nexcept SystemExit as e:\n"
        "    assert 'textual' not in sys.modules, 'textual imported'\n    raise\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "show", "evil", "--around", "0", "--store", str(store_dir)],
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert b"\x1b" not in proc.stdout and b"[@click=app.quit]x" in proc.stdout


def test_search_uses_the_index_by_default_and_scans_on_request(
    store_dir: Path, isolated_home: Path
) -> None:
    code, out, _ = run("search", "billing turn", "--json", "--store", str(store_dir))
    assert code == 0
    indexed = json.loads(out)
    assert indexed["ranking"] == "relevance" and indexed["mode"].startswith("index")
    assert any((isolated_home / "cache").rglob("*.sqlite3")), "the index lives in our cache"
    assert not list(store_dir.glob("*.sqlite3*"))

    code, out, _ = run("search", "billing turn", "--json", "--no-index", "--store", str(store_dir))
    assert code == 0
    scanned = json.loads(out)
    assert scanned["ranking"] == "classic"
    expected = DefaultSessionStore(store_dir).search("billing turn", limit=5)
    assert [(h["session_id"], h["score"]) for h in scanned["results"]] == [
        (h.session_id, h.score) for h in expected
    ]

    code, out, _ = run(
        "search", "billing turn", "--json", "--ranking", "classic", "--store", str(store_dir)
    )
    assert code == 0
    assert [(h["session_id"], h["score"]) for h in json.loads(out)["results"]] == [
        (h.session_id, h.score) for h in expected
    ]


def test_search_bad_filter_and_relevance_without_index(store_dir: Path) -> None:
    code, out, err = run("search", "since:someday", "x", "--store", str(store_dir))
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and "since:" in err and "2026-01-31" in err
    code, _, err = run(
        "search", "x", "--no-index", "--ranking", "relevance", "--store", str(store_dir)
    )
    assert code != 0 and "needs the index" in err
