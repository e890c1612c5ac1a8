"""The benchmark corpus written as Gemini CLI chat files, Copilot CLI events, Kimi wire logs,
Cline tasks, Aider histories and OpenCode's and Goose's databases (``bench --format KIND``):
read back through our sources as written, and measured like ``--claude``."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from session_browser.bench.agents import agent_readback, agent_sessions, write_agent_corpus
from session_browser.bench.config import AGENT_NAMES
from session_browser.bench.corpus import build_corpus
from session_browser.bench.report import format_report
from session_browser.bench.sessions import read_spills
from session_browser.cli import main
from tests.test_bench import _run_bench

PROSE = ("user", "assistant")
NEW_FORMATS = ["gemini", "copilot", "kimi", "cline"]
#: The formats that record a compaction (Gemini's one-object chat file does not).
SPLIT_FORMATS = ("copilot", "kimi", "cline")


def _prose(data: dict[str, Any], key: str) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in data.get(key) or [] if m["role"] in PROSE]


def _one_answer_a_prompt(turns: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Copilot CLI's, Kimi's and Cline's turns: the answers between two prompts are one
    assistant turn."""
    out: list[tuple[str, str]] = []
    for role, text in turns:
        if role == "assistant" and out and out[-1][0] == "assistant":
            out[-1] = (role, f"{out[-1][1]}\n{text}")
        else:
            out.append((role, text))
    return out


@pytest.mark.parametrize("fmt", NEW_FORMATS)
def test_new_agent_corpus_reads_back_as_written(tmp_path: Path, fmt: str) -> None:
    """Every session written as the agent's file reads back through our source of that kind
    under its own id, with its title (Gemini, Kimi: where the agent keeps one) and its prose
    turns in order; a compaction record gives back the archived/active split (Gemini's
    one-object file records none: the archived turns are its first messages). Copilot, Kimi
    and Cline make the answers to one prompt one turn."""
    info = build_corpus(tmp_path / "home", sessions=30, seed=7, include_sgd=False,
                        include_chitchat=False)
    root = tmp_path / fmt
    assert write_agent_corpus(fmt, info.sessions_dir, info.spill_dir, root) == 30
    read = {sid: data for _path, sid, data in agent_sessions(fmt, root)}
    assert len(read) == 30
    spilled = read_spills(info.spill_dir)
    archived = titled = 0
    for path in sorted(info.sessions_dir.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        data["messages"] += spilled.get(data["session_id"], [])  # the turns written after it
        back = read[data["session_id"]]
        if fmt in SPLIT_FORMATS:
            for key in ("archived_messages", "messages"):
                want = _one_answer_a_prompt(_prose(data, key))
                assert _prose(back, key) == want, (key, path.name)
        else:
            want = _prose(data, "archived_messages") + _prose(data, "messages")
            got = _prose(back, "archived_messages") + _prose(back, "messages")
            assert got == want, path.name
        title = (data.get("metadata") or {}).get("title")
        if fmt in ("gemini", "kimi") and title:
            titled += 1
            assert back["metadata"]["title"] == title
        archived += len(data["archived_messages"])
    assert archived > 0  # sessions with a compaction were written
    assert fmt not in ("gemini", "kimi") or titled > 0
    assert agent_readback(fmt, root, tmp_path / "back") == 30


def test_corrupt_session_file_is_copied_and_skipped(tmp_path: Path) -> None:
    """A corpus file that is not JSON is written as it is; reading back skips it."""
    info = build_corpus(tmp_path / "home", sessions=5, seed=7, include_sgd=False,
                        include_chitchat=False)
    (info.sessions_dir / "broken.json").write_bytes(b"{not json")
    root = tmp_path / "gemini"
    assert write_agent_corpus("gemini", info.sessions_dir, info.spill_dir, root) == 6
    assert len(list(root.rglob("session-*.json"))) == 6
    assert len(list(agent_sessions("gemini", root))) == 5


@pytest.mark.parametrize("fmt", [*NEW_FORMATS, "aider", "opencode", "goose"])
def test_format_corpus_is_measured(tmp_path: Path, fmt: str) -> None:
    """``bench --format KIND``: the corpus written as that agent's files, our index and scan
    of that source measured and judged; the text report prints the build rate and p95."""
    args = ["--sessions", "60", "--queries", "12", "--peer-queries", "4", "--format", fmt,
            "--no-big-message", "--no-contention"]
    report, _ = _run_bench(tmp_path, args)
    assert report["corpus"]["format"] == fmt
    assert list(report["stores"]) == [fmt, f"{fmt}-scan"]
    stats = report["corpus"]["stats"]
    assert stats["files"] == 60 and stats["sessions"] > 50
    index = report["stores"][fmt]
    assert index["status"] == "ok", index
    assert index["build"]["messages_per_s"] > 0
    quality = index["search"]["quality"]
    assert quality["n"] == len(report["queries"]["items"]) >= 10
    assert quality["rank1"] >= 0.7 and quality["recall10"] >= 0.9
    assert index["update"]["outside_found"] == 1.0
    scan = report["stores"][f"{fmt}-scan"]
    assert scan["status"] == "ok" and scan["search"]["quality"]["recall10"] >= 0.9
    assert {t["name"] for t in report["targets"]} >= {"build_rate", "rank1", "recall10"}
    text = format_report(report)
    label = {
        "gemini": "Gemini CLI chat JSON",
        "copilot": "Copilot CLI events JSONL",
        "kimi": "Kimi CLI wire JSONL",
        "cline": "Cline ui_messages JSON",
        "aider": "Aider chat history Markdown",
        "opencode": "OpenCode SQLite database",
        "goose": "Goose SQLite database",
    }[fmt]
    assert label in text
    assert f"ours ({AGENT_NAMES[fmt]} index)" in text
    assert "messages/s" in text and "search p95" in text and "cold build rate" in text


def test_format_flags_are_checked(tmp_path: Path) -> None:
    for args in (["--format", "gemini", "--codex"], ["--format", "copilot", "--pi"]):
        result = CliRunner().invoke(main, ["bench", *args])
        assert result.exit_code == 1 and "give one of" in result.stderr
        assert result.stderr.strip().count("\n") == 0
    result = CliRunner().invoke(main, ["bench", "--format", "nope"])
    assert result.exit_code == 2 and "nope" in result.stderr
    result = CliRunner().invoke(main, ["bench", "--store", str(tmp_path), "--format", "gemini"])
    assert result.exit_code == 1 and "--store/--home" in result.stderr
    result = CliRunner().invoke(main, ["bench", "--store", f"gemini:{tmp_path / 'nope'}"])
    assert result.exit_code == 1 and "no gemini session dir" in result.stderr


def test_existing_gemini_dir_is_measured_and_left_as_it_was(tmp_path: Path) -> None:
    """``bench --store gemini:DIR``: a Gemini CLI ``tmp`` dir (with a project's ``logs.json``
    beside its chats, no session) is measured on a copy; its session files are counted,
    the other file is not, and nothing in it changes."""
    info = build_corpus(tmp_path / "home", sessions=30, seed=7, include_sgd=False,
                        include_chitchat=False)
    root = tmp_path / "tmp"
    write_agent_corpus("gemini", info.sessions_dir, info.spill_dir, root)
    (next(root.iterdir()) / "logs.json").write_text("[]", encoding="utf-8")
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}
    args = ["--store", f"gemini:{root}", "--queries", "12", "--peer-queries", "4",
            "--no-big-message", "--no-contention"]
    (tmp_path / "run").mkdir()
    report, _ = _run_bench(tmp_path / "run", args)
    stats = report["corpus"]["stats"]
    assert (stats["files"], stats["sessions"], stats["unreadable"]) == (30, 30, 0)
    assert report["stores"]["gemini"]["search"]["quality"]["rank1"] >= 0.7
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}
    assert after == before


def test_aider_corpus_reads_back_as_written(tmp_path: Path) -> None:
    """Every session written as a launch in a repo's ``.aider.chat.history.md`` reads back
    through our Aider source (its id is Aider's: the file and the launch time), with its
    prose turns in order (the answers to one prompt one turn; no compaction recorded). The
    format is Markdown without escapes: a reply's line that starts with ``>`` is what aider
    writes for its own output, and is read as such (hidden), as aider's history is."""

    def words(turns: list[tuple[str, str]]) -> list[tuple[str, str]]:
        return [
            (role, " ".join(w for line in text.splitlines() if not line.startswith(">")
                            for w in line.split()))
            for role, text in turns
        ]

    info = build_corpus(tmp_path / "home", sessions=30, seed=7, include_sgd=False,
                        include_chitchat=False)
    root = tmp_path / "repos"
    assert write_agent_corpus("aider", info.sessions_dir, info.spill_dir, root) == 30
    read = {path.parent.name: data for path, _sid, data in agent_sessions("aider", root)}
    assert len(read) == 30
    spilled = read_spills(info.spill_dir)
    for path in sorted(info.sessions_dir.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        data["messages"] += spilled.get(data["session_id"], [])
        back = read[path.stem]
        assert back["session_id"].startswith("aider-")
        want = _one_answer_a_prompt(_prose(data, "archived_messages") + _prose(data, "messages"))
        assert words(_prose(back, "messages")) == words(want), path.name
    assert agent_readback("aider", root, tmp_path / "back") == 30


DATABASE_FORMATS = ("opencode", "goose")


@pytest.mark.parametrize("fmt", DATABASE_FORMATS)
def test_database_corpus_reads_back_as_written(tmp_path: Path, fmt: str) -> None:
    """Every session written as rows of OpenCode's ``opencode.db`` or Goose's ``sessions.db``
    reads back through our source of that kind under its own id, with its title (OpenCode:
    its default title until it names one) and its prose turns in order, one message a turn,
    and the compaction the rows record gives back the archived/active split. A corpus file
    that is not a session is a session of no turns: read, counted, skipped."""
    info = build_corpus(tmp_path / "home", sessions=30, seed=7, include_sgd=False,
                        include_chitchat=False)
    (info.sessions_dir / "broken.json").write_bytes(b"{not json")
    root = tmp_path / fmt
    assert write_agent_corpus(fmt, info.sessions_dir, info.spill_dir, root) == 31
    assert sorted(p.name for p in root.iterdir()) == [
        {"opencode": "opencode.db", "goose": "sessions.db"}[fmt]
    ]
    read = {sid: (path, data) for path, sid, data in agent_sessions(fmt, root)}
    assert len(read) == 30 and "broken" not in read
    spilled = read_spills(info.spill_dir)
    archived = titled = untitled = 0
    for path in sorted(info.sessions_dir.glob("*.json")):
        if path.name == "broken.json":
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        data["messages"] += spilled.get(data["session_id"], [])
        where, back = read[data["session_id"]]
        assert where == root / where.parent.name / data["session_id"]  # <database>/<id>
        for key in ("archived_messages", "messages"):
            assert _prose(back, key) == _prose(data, key), (key, path.name)
        if data["archived_messages"]:
            archived += 1
            summary = back["messages"][0]
            assert summary["role"] == "system" and "earlier turns" in summary["content"]
        assert back["metadata"]["cwd"] == "/proj"
        title = (data.get("metadata") or {}).get("title")
        if title:
            titled += 1
            assert back["metadata"]["title"] == title
        else:
            untitled += 1
            got = back["metadata"].get("title")
            assert got is None if fmt == "goose" else got.startswith("New session - 20")
    assert archived > 0 and titled > 0 and untitled > 0
    assert agent_readback(fmt, root, tmp_path / "back") == 30


@pytest.mark.parametrize("fmt", DATABASE_FORMATS)
def test_database_corpus_has_the_agents_tables(tmp_path: Path, fmt: str) -> None:
    """The database written has the tables, columns and indexes of the agent's own schema
    (the one our reader's tests take from the agent's source)."""
    from tests.core.test_opencode import SCHEMA as OPENCODE_SCHEMA

    info = build_corpus(tmp_path / "home", sessions=3, seed=7, include_sgd=False,
                        include_chitchat=False)
    write_agent_corpus(fmt, info.sessions_dir, info.spill_dir, tmp_path / "written")
    [written] = list((tmp_path / "written").iterdir())
    reference = tmp_path / "reference.db"
    script = (
        OPENCODE_SCHEMA
        if fmt == "opencode"
        else (Path(__file__).parent / "fixtures" / "goose" / "schema.sql").read_text()
    )
    with closing(sqlite3.connect(reference)) as db:
        db.executescript(script)

    def schema(path: Path) -> list[tuple[str, str]]:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            rows = db.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall()
        return [(name, " ".join(str(sql).split())) for name, sql in rows]

    assert schema(written) == schema(reference)


@pytest.mark.parametrize("fmt", DATABASE_FORMATS)
def test_outside_turn_is_added_to_the_database_and_indexed(tmp_path: Path, fmt: str) -> None:
    """The bench's outside change of a database format adds a row as the agent does: our
    index, brought up to date, finds the new words in that session and re-reads only it;
    nothing is left beside the database."""
    from session_browser.bench.phases import _agent_outside_edit
    from session_browser.bench.stores import search_ids
    from session_browser.core.open import index_store
    from session_browser.core.sources import SOURCES

    info = build_corpus(tmp_path / "home", sessions=10, seed=7, include_sgd=False,
                        include_chitchat=False)
    root = tmp_path / fmt
    write_agent_corpus(fmt, info.sessions_dir, info.spill_dir, root)
    before = sorted(p.name for p in root.iterdir())
    path, sid, data = next(iter(agent_sessions(fmt, root)))
    store = index_store(SOURCES[fmt], root, "none", db_path=tmp_path / "index.db")
    try:
        assert store.reconcile().added == 10
        assert search_ids(fmt, store, "zqxkestrelmarker", 5) == []
        listed = SOURCES[fmt].source(root).list_files()
        _agent_outside_edit(fmt, sid, path, "note zqxkestrelmarker for the benchmark")
        changed = SOURCES[fmt].source(root).list_files()
        assert {n for n in changed if changed[n] != listed[n]} == {f"{path.parent.name}/{sid}"}
        report = store.reconcile()
        assert (report.added, report.updated, report.removed) == (0, 1, 0)
        assert search_ids(fmt, store, "zqxkestrelmarker", 5) == [sid]
    finally:
        store.close()
    back = {s: d for _p, s, d in agent_sessions(fmt, root)}[sid]
    assert _prose(back, "messages")[-1] == ("user", "note zqxkestrelmarker for the benchmark")
    assert len(back["messages"]) == len(data["messages"]) + 1
    assert sorted(p.name for p in root.iterdir()) == before


@pytest.mark.parametrize("fmt", DATABASE_FORMATS)
def test_existing_database_dir_is_measured_and_left_as_it_was(tmp_path: Path, fmt: str) -> None:
    """``bench --store opencode:DIR`` / ``goose:DIR``: the agent's dir (its database, and a
    session the database does not hold in the older layout beside it: OpenCode's JSON tree,
    Goose's ``<id>.jsonl``) is measured on a copy; the outside changes go to the copy, and
    nothing in the dir changes (bytes, mtimes, no file beside the database)."""
    info = build_corpus(tmp_path / "home", sessions=30, seed=7, include_sgd=False,
                        include_chitchat=False)
    root = tmp_path / fmt
    write_agent_corpus(fmt, info.sessions_dir, info.spill_dir, root)
    if fmt == "opencode":
        from tests.core.test_opencode import sessions as opencode_sessions
        from tests.core.test_opencode import write_storage

        write_storage(root, opencode_sessions()[:1])
    else:
        legacy = Path(__file__).parent / "fixtures" / "goose" / "20250301_1.jsonl"
        (root / legacy.name).write_bytes(legacy.read_bytes())
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}
    args = ["--store", f"{fmt}:{root}", "--queries", "12", "--peer-queries", "4",
            "--no-big-message", "--no-contention"]
    (tmp_path / "run").mkdir()
    report, _ = _run_bench(tmp_path / "run", args)
    stats = report["corpus"]["stats"]
    assert (stats["files"], stats["sessions"], stats["unreadable"]) == (31, 31, 0)
    index = report["stores"][fmt]
    assert index["search"]["quality"]["rank1"] >= 0.7
    assert index["update"]["outside_found"] == 1.0
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}
    assert after == before
