"""Reads never write: a whole browse leaves the session dir (and spill dir) byte-identical."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.model import SessionData
from session_browser.core.sources.pi import PiStore, pi_jsonl
from session_browser.core.sources.readonly import ReadOnlyStore
from session_browser.core.store import DefaultSessionStore
from session_browser.core.stores import open_pi_store, open_stores
from session_browser.core.tool import session_search

Snapshot = dict[str, tuple[bytes | None, int, int, int]]


def snapshot(*dirs: Path) -> Snapshot:
    """Every entry under ``dirs`` (and the dirs themselves): bytes, inode, mode, mtime_ns."""
    snap: Snapshot = {}
    for root in dirs:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in ["", *dirnames, *filenames]:
                p = Path(dirpath) / name
                st = p.lstat()
                content = p.read_bytes() if p.is_file() else None
                snap[str(p)] = (content, st.st_ino, st.st_mode, st.st_mtime_ns)
    return snap


def build(home: Path) -> tuple[Path, Path]:
    sessions = home / "sessions"
    spill = home / "state" / "session_spill"
    store = DefaultSessionStore(sessions, spill_dir=spill, active_window=3)
    for i in range(6):
        store.add_message("alpha", "user" if i % 2 == 0 else "assistant", f"alpha billing {i}")
    store.add_user_message("beta", "beta talks about the ledger")
    store.rename_session("beta", "Beta")
    # leftovers a browse must not touch: corrupt file, quarantine, temp, db, sub-folder
    (sessions / "broken.json").write_bytes(b"{not json")
    (sessions / "old.json.corrupt-1700000000000").write_bytes(b"bad")
    (sessions / ".x.json.123.tmp").write_bytes(b"{}")
    (sessions / "index.db").write_bytes(b"SQLite format 3\x00")
    (sessions / "sub").mkdir()
    (sessions / "sub" / "inner.json").write_text("{}")
    # a pending spill for alpha: only a write may fold it back in
    spill.mkdir(parents=True)
    (spill / "alpha.1700000000000.1.abcdef01.json").write_text(
        json.dumps(
            {
                "session_id": "alpha",
                "spilled_at": "x",
                "messages": [{"role": "user", "content": "spilled"}],
            }
        )
    )
    # no lock files yet: reads must not create them
    for lock in sessions.glob("*.lock"):
        lock.unlink()
    return sessions, spill


def browse(sessions: Path) -> list[Any]:
    store = DefaultSessionStore(sessions)
    results: list[Any] = [
        store.list_sessions(),
        store.get_session("alpha"),
        store.get_session("broken"),
        store.get_session("missing"),
        store.get_chat_history("alpha"),
        store.search("billing"),
        store.search("ledger", limit=1, window=0),
        store.window("alpha"),
        store.window("alpha", 0, window=1),
        store.window("missing"),
        store.recent(),
        store.summaries(),
        store.session_exists("alpha"),
        store.projection("alpha"),
        store.file_identity("alpha"),
    ]
    group = open_stores([sessions])
    results += [group.search("billing"), group.recent(), group.window("beta")]
    results += [
        session_search(query="billing", store=group),
        session_search(session_id="alpha", around_message_id="1", store=group),
        session_search(store=group),
        session_search(session_id="nope", store=group),
    ]
    runner = CliRunner()
    for args in (
        ["search", "billing", "--store", str(sessions)],
        ["search", "billing", "--json", "--store", str(sessions)],
        ["show", "alpha", "--store", str(sessions)],
        ["show", "alpha", "--around", "0", "--json", "--store", str(sessions)],
        ["recent", "--store", str(sessions)],
        ["recent", "--json", "--store", str(sessions)],
    ):
        res = runner.invoke(main, args)
        assert res.exit_code == 0, (args, res.output)
        results.append(res.output)
    return results


def test_whole_browse_writes_nothing(tmp_path: Path) -> None:
    sessions, spill = build(tmp_path)
    before = snapshot(sessions, spill)
    results = browse(sessions)
    assert snapshot(sessions, spill) == before
    assert not list(sessions.glob("*.lock"))
    # and the browse really read things
    assert results[5][0].session_id == "alpha"
    assert "spilled" not in json.dumps(results[4])


def test_default_stores_browse_writes_nothing(isolated_home: Path) -> None:
    """The CLI's default stores (project + global) are read-only too."""
    praison = isolated_home / ".praisonai"
    _sessions, spill = build(praison)
    project = Path.cwd() / ".praisonai" / "sessions"
    project.mkdir(parents=True)
    DefaultSessionStore(project, spill_dir=spill).add_user_message("proj", "billing in project")
    for lock in project.glob("*.lock"):
        lock.unlink()
    before = snapshot(praison, project)
    runner = CliRunner()
    out = runner.invoke(main, ["search", "billing", "--json"])
    assert out.exit_code == 0
    ids = {r["session_id"] for r in json.loads(out.output)["results"]}
    assert ids == {"alpha", "proj"}
    assert runner.invoke(main, ["recent"]).exit_code == 0
    assert runner.invoke(main, ["show", "proj"]).exit_code == 0
    assert json.loads(session_search(query="billing"))["total_found"] == 2
    assert snapshot(praison, project) == before


# Every write of the store API, with arguments a real store would act on.
PI_WRITES: dict[str, tuple[Any, ...]] = {
    "add_message": ("pi-gen", "user", "written?"),
    "add_user_message": ("pi-gen", "written?"),
    "add_assistant_message": ("pi-gen", "written?"),
    "set_chat_history": ("pi-gen", [{"role": "user", "content": "written?"}]),
    "update_session_metadata": ("pi-gen",),
    "set_agent_info": ("pi-gen", "agent", "user"),
    "set_gateway_info": ("pi-gen", "gw", "agent"),
    "rename_session": ("pi-gen", "renamed"),
    "clear_session": ("pi-gen",),
    "delete_session": ("pi-gen",),
    "write_session": (SessionData(session_id="pi-new"),),
}


def build_pi(root: Path) -> Path:
    """A generated Pi session dir: one compacted session plus one file per hostile kind."""
    from tests import hostile

    pi = root / "pi"
    folder = pi / "--work-gen--"
    folder.mkdir(parents=True)
    data = {
        "session_id": "pi-gen",
        "created_at": "2026-01-01T00:00:00+00:00",
        "metadata": {"title": "Generated"},
        "archived_messages": [
            {"role": "user", "content": "old billing question", "timestamp": 1767225600.0},
            {"role": "assistant", "content": "old answer", "timestamp": 1767225601.0},
        ],
        "messages": [
            {"role": "user", "content": "billing migration plan", "timestamp": 1767225700.0},
            {"role": "assistant", "content": "dual write first", "timestamp": 1767225701.0},
        ],
    }
    (folder / "2026-01-01T00-00-00-000Z_pi-gen.jsonl").write_bytes(pi_jsonl(data, cwd="/work/gen"))
    for kind, path in hostile.write_pi_all(pi).items():
        if kind == "lone_surrogate":  # (its CLI output is another fix, not this test's)
            path.unlink()
    return pi


def browse_pi(pi: Path, out: Path) -> None:
    """Every browse path over a Pi dir, through the library and the CLI."""
    stores: list[Any] = [PiStore(pi), open_pi_store(pi, indexed=True)]
    for store in stores:
        for name, args in PI_WRITES.items():
            with pytest.raises(ReadOnlyStore):
                getattr(store, name)(*args)
        assert store.search("billing")[0].session_id == "pi-gen"
        assert store.recent(limit=50)
        assert store.window("pi-gen", 0, window=2)
        assert store.get_session("pi-gen").messages
        assert store.projection("pi-gen")
        store.session_exists("pi-gen")
    for indexed in (False, True):
        group = open_stores([f"pi:{pi}"], indexed=indexed)
        assert group.search("billing")[0].session_id == "pi-gen"
        group.recent(limit=50)
        group.window("pi-gen")
        session_search(query="billing", store=group)
        session_search(session_id="pi-gen", around_message_id="1", store=group)
        group.close()
    for store in stores:
        close = getattr(store, "close", None)
        if callable(close):
            close()
    runner = CliRunner()
    spec = f"pi:{pi}"
    for args in (
        ["search", "billing", "--store", spec],
        ["search", "billing", "--no-index", "--json", "--store", spec],
        ["recent", "--store", spec],
        ["recent", "--no-index", "--json", "--store", spec],
        ["show", "pi-gen", "--store", spec],
        ["show", "pi-gen", "--json", "--store", spec],
        ["export", "pi-gen", "-o", str(out / "one.json"), "--store", spec],
        ["export", "--all", "--format", "md", "-o", str(out / "all.md"), "--store", spec],
        [
            "export",
            "--search",
            "billing",
            "-o",
            str(out / "hits.html"),
            "--format",
            "html",
            "--store",
            spec,
        ],
    ):
        res = runner.invoke(main, args)
        assert res.exit_code == 0, (args, res.output)


def test_pi_stores_are_never_written(tmp_path: Path) -> None:
    """A generated Pi dir is byte-, inode-, mode- and mtime-identical after a browse, and
    no file appears in it; every write method of every Pi store refuses."""
    pi = build_pi(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    before = snapshot(pi)
    browse_pi(pi, out)
    assert snapshot(pi) == before
    assert (out / "one.json").stat().st_size > 0
