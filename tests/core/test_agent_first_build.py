"""A first build of Claude Code transcripts and Codex rollouts parsed by a worker process: the
same rows (messages, hidden parts, titles, compaction, subagents, lines left out) and the same
vault (each file and its part files) as when the index's own process parses them; the parse
states the worker kept stay there, so a later change is read whole once and indexed the same.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from session_browser.bench.agents import claude_jsonl, codex_jsonl, codex_rollout_name
from session_browser.core.files import SHADOW_MARK
from session_browser.core.index import parsing
from session_browser.core.index.reconcile import Reconciler
from session_browser.core.index.write import stored_words
from session_browser.core.open import index_store
from session_browser.core.sources import SOURCES
from session_browser.core.vault import Vault, default_vault_dir

DATA = Path(__file__).resolve().parents[2] / "../shared/data"
FILES = 620  # two batches (more than one: a bulk first build)


def _session(i: int) -> dict[str, Any]:
    base = 1.7e9 + i * 3600
    return {
        "session_id": f"gen-{i:04d}-0000-4000-8000-000000000000",
        "created_at": base,
        "metadata": {"title": f"generated {i}"} if i % 3 else {},
        "archived_messages": (
            [{"role": "user", "content": f"older wombat{i}", "timestamp": base}]
            if i % 5 == 0
            else []
        ),
        "messages": [
            {
                "role": "user",
                "content": f"question {i} about quokka{i % 11}",
                "timestamp": base + 1,
            },
            {"role": "assistant", "content": f"answer {i} numbat", "timestamp": base + 2},
        ],
    }


def claude_dir(root: Path) -> Path:
    """Real transcripts (subagents, tool calls, compaction) and generated ones."""
    real = DATA / "claude"
    if not real.is_dir():
        pytest.skip("the shared data dir is not here")
    project = root / "-home-me-proj"
    for sub in ("spotter", "claude-code-viewer"):
        shutil.copytree(
            real / sub, project, dirs_exist_ok=True, ignore=shutil.ignore_patterns("LICENSE")
        )
    (project / "broken.jsonl").write_bytes(b'not json\n{"type": 3}\n')
    for i in range(FILES):
        (project / f"gen-{i:04d}.jsonl").write_bytes(claude_jsonl(_session(i)))
    # a summary line in one file titling another's session (by its last turn)
    leaf = json.loads((project / "gen-0000.jsonl").read_bytes().splitlines()[-1])["uuid"]
    summary = {"type": "summary", "summary": SUMMARY, "leafUuid": leaf}
    later = project / "gen-0003.jsonl"
    later.write_bytes(json.dumps(summary).encode() + b"\n" + later.read_bytes())
    return root


SUMMARY = "Wombat census, as decided"


def codex_dir(root: Path) -> Path:
    real = DATA / "codex"
    if not real.is_dir():
        pytest.skip("the shared data dir is not here")
    for sub in ("codemie-code", "codex-session-view"):
        for f in (real / sub).glob("rollout-*.jsonl"):
            dest = root / "2026" / "01" / "01" / f.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, dest)
    for i in range(FILES):
        data = _session(i)
        dest = root / codex_rollout_name(data["session_id"], data["created_at"])
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(codex_jsonl(data))
    return root


def dump(db: Path) -> dict[str, Any]:
    with sqlite3.connect(db) as c:
        c.execute("CREATE VIRTUAL TABLE temp.words USING fts5vocab(main, recall_words, instance)")
        return {
            t: c.execute(f"SELECT {cols} FROM {t} ORDER BY 1").fetchall()
            for t, cols in (
                ("sessions", "*"),
                ("messages", "*"),
                ("hidden", "*"),
                ("skipped", "*"),
                ("partly", "*"),
                ("recall_lengths", "*"),
                ("temp.words", "doc, term, offset"),
            )
        }


def words_as_stored(db: Path) -> None:
    """Each session's recall words are those its stored messages give (as a write made
    through the store, which reads them from its rows, takes them)."""
    with sqlite3.connect(db) as c:
        c.execute("CREATE VIRTUAL TABLE temp.w USING fts5vocab(main, recall_words, instance)")
        held: dict[int, list[str]] = {}
        for doc, term in c.execute("SELECT doc, term FROM temp.w"):
            held.setdefault(doc, []).append(term)
        sessions = c.execute("SELECT sid, row_lo, row_hi FROM sessions").fetchall()
        assert len(held) == len(sessions)
        for sid, lo, hi in sessions:
            assert sorted(held[sid]) == sorted(stored_words(c, lo, hi).split()), sid


def kept() -> dict[str, tuple[str, int, int, list[str]]]:
    """Every file the vault holds, by path: (its hash, size, messages, its part files'
    names). (By path: Copilot's session files all have one name.)"""
    with Vault(default_vault_dir()) as v:
        out = {}
        for version in v.latest():
            parts = v._db.execute(
                "SELECT f.path FROM parts p JOIN versions pv ON pv.vid = p.part "
                "JOIN files f ON f.fid = pv.fid WHERE p.vid = ? ORDER BY f.path",
                (version.vid,),
            ).fetchall()
            out[version.path] = (
                version.sha256,
                version.size,
                version.messages or 0,
                [Path(p[0]).name for p in parts],
            )
        return out


def by_version(name: str) -> str:
    """An index name with the vault version it names (``<file>#v<vid>``: the turns a rewrite
    dropped) told by that version's hash: which id a version gets depends on the order the
    vault kept the files in, which two workers do not fix."""
    if SHADOW_MARK not in name:
        return name
    file, vid = name.rsplit(SHADOW_MARK, 1)
    with Vault(default_vault_dir()) as v:
        row = v._db.execute("SELECT sha256 FROM versions WHERE vid = ?", (int(vid),)).fetchone()
    return f"{file}{SHADOW_MARK}{row[0]}"


def build(
    kind: str, d: Path, tmp: Path, tag: str, monkeypatch: pytest.MonkeyPatch, *, worker: bool
) -> tuple[dict[str, Any], dict[str, Any], Any, dict[str, Any]]:
    monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(tmp / f"data-{tag}"))
    monkeypatch.setattr(Reconciler, "worker_min_files", 0 if worker else 10**9)
    with index_store(SOURCES[kind], d, "none", vault=True, db_path=tmp / f"{tag}.sqlite3") as s:
        report = s.reconcile()
        assert s.warnings == []
        out = dump(tmp / f"{tag}.sqlite3"), kept(), report
        words_as_stored(tmp / f"{tag}.sqlite3")
        # A transcript that grows after the build is read on from where the build stopped,
        # or read whole once when the worker parsed it (its parse state stayed there; the
        # index's process may have parsed the last batches itself): the same rows.
        last = FILES - 1  # the newest file: read last
        grown = next(p for p in d.rglob("*.jsonl") if f"gen-{last:04d}" in p.name)
        line = claude_jsonl(_session(last)) if kind == "claude" else codex_jsonl(_session(last))
        before, st = grown.read_bytes(), grown.stat()
        with grown.open("ab") as fh:
            fh.write(line.splitlines(keepends=True)[-2 if kind == "claude" else -1])
        again = s.reconcile()
        assert again.updated == 1 and sum(s.last_reads.values()) == 1
        if not worker:
            assert s.last_reads["resumed"] == 1
        after = dump(tmp / f"{tag}.sqlite3")
        after["sessions"] = [
            (r[0], by_version(r[1]), *r[2:3], *r[4:]) for r in after["sessions"]
        ]  # (not the append's mtime)
    with grown.open("r+b") as fh:  # as it was (same inode), for the next build
        fh.write(before)
        fh.truncate()
    os.utime(grown, ns=(st.st_atime_ns, st.st_mtime_ns))
    return (*out, after)


@pytest.mark.parametrize(("kind", "workers"), [("claude", 1), ("codex", 1), ("claude", 2)])
def test_a_worker_builds_the_same_agent_index_and_vault(
    kind: str, workers: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = (claude_dir if kind == "claude" else codex_dir)(tmp_path / kind)
    seen = seen_workers(monkeypatch, workers)
    here = build(kind, d, tmp_path, "here", monkeypatch, worker=False)
    assert seen.workers == []
    there = build(kind, d, tmp_path, "there", monkeypatch, worker=True)
    # (with two, the second hands its bytes to the first to keep)
    seen.check_each_did_the_work(workers)
    for table, rows in here[0].items():
        assert rows == there[0][table], table
    assert here[1] == there[1]
    assert here[3] == there[3] != here[0]
    assert here[2].messages == there[2].messages > 2 * FILES
    assert len(here[0]["sessions"]) >= FILES + 2
    assert here[0]["hidden"], "tool calls and thinking are kept as hidden parts"
    if kind == "claude":
        titles = {r[1]: r[6] for r in here[0]["sessions"]}
        assert titles["-home-me-proj/gen-0000.jsonl"] == SUMMARY  # (another file's line)
        assert any(parts for *_r, parts in here[1].values()), "subagent files kept with theirs"
        assert [r[0] for r in here[0]["skipped"]] == ["-home-me-proj/broken.jsonl"]


class WorkerSeen:
    """The parsing workers a build started, and how many batches each handed back."""

    def __init__(self) -> None:
        self.workers: list[parsing.Worker] = []
        self.batches: dict[int, int] = {}

    def check_each_did_the_work(self, count: int = 1) -> None:
        """``count`` workers were started, each handed back parsed batches and ended having
        kept every file it was given (so the rows compared are partly theirs, not all parsed
        again by the index's process after a failure)."""
        assert len(self.workers) == count
        for worker in self.workers:
            assert self.batches.get(id(worker), 0) >= 1
            assert worker._ended and worker.unkept == []


def seen_workers(monkeypatch: pytest.MonkeyPatch, workers: int = 1) -> WorkerSeen:
    """Count the workers of the builds that follow; ``workers`` a build, and the index's
    process waits for each to start (it otherwise parses on while they import, and on a
    busy machine could parse every batch itself)."""
    seen = WorkerSeen()
    start, recv = parsing.Worker.__init__, parsing.Worker.recv

    def counting(self: parsing.Worker, *args: Any, **kwargs: Any) -> None:
        start(self, *args, **kwargs)
        seen.workers.append(self)

    def waiting(self: parsing.Worker) -> bool:
        if not self.ready and self._results.poll(60):
            self.ready = self._results.recv() == "ready"
        return self.ready

    def counted(self: parsing.Worker) -> list[parsing.Done]:
        batch = recv(self)
        seen.batches[id(self)] = seen.batches.get(id(self), 0) + 1
        return batch

    monkeypatch.setattr(parsing.Worker, "__init__", counting)
    monkeypatch.setattr(parsing.Worker, "poll_ready", waiting)
    monkeypatch.setattr(parsing.Worker, "recv", counted)
    monkeypatch.setattr(Reconciler, "parse_workers", workers)
    return seen


def built_both_ways(
    kind: str, root: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> list[tuple[dict[str, Any], dict[str, Any], Any]]:
    """A first build of ``root`` by the index's process alone, then one with a worker (which
    must have done its share: :meth:`WorkerSeen.check_each_did_the_work`): each one's tables,
    vault and report, the tables checked equal."""
    seen = seen_workers(monkeypatch)
    built = []
    for tag, worker in (("here", False), ("there", True)):
        monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(tmp / f"data-{tag}"))
        monkeypatch.setattr(Reconciler, "worker_min_files", 0 if worker else 10**9)
        db = tmp / f"{tag}.sqlite3"
        with index_store(SOURCES[kind], root, "none", vault=True, db_path=db) as s:
            report = s.reconcile()
            assert s.warnings == []
        built.append((dump(db), kept(), report))
        assert len(seen.workers) == int(worker)
    seen.check_each_did_the_work()
    here, there = built[0][0], built[1][0]
    for table, rows in here.items():
        assert rows == there[table], table
    return built


@pytest.mark.parametrize("kind", ["opencode", "goose"])
def test_a_worker_builds_the_same_database_index_and_vault(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenCode's and Goose's sessions, rows of one database, parse apart too: a first build
    whose worker process reads them (each opening its own immutable connection) gives the
    same rows and the same vault as the index's own process."""
    from session_browser.bench.agent_db import Corpus, write_database

    def corpus(i: int) -> Corpus:
        data = _session(i)
        turns = [(m["role"], m["content"], m["timestamp"]) for m in data["messages"]]
        older = [(m["role"], m["content"], m["timestamp"]) for m in data["archived_messages"]]
        title = data["metadata"].get("title")
        return Corpus(data["session_id"], title, data["created_at"], older, turns, "/proj")

    root = tmp_path / kind
    write_database(kind, root, (corpus(i) for i in range(FILES)))
    (here, here_kept, here_report), (_there, there_kept, there_report) = built_both_ways(
        kind, root, tmp_path, monkeypatch
    )
    assert here_kept == there_kept and len(here_kept) == FILES
    assert here_report.messages == there_report.messages > 2 * FILES
    assert len(here["sessions"]) == FILES


#: Real files of the whole-read formats (``../shared/data/<agent>``), copied in beside the
#: generated sessions where there are some (the rest: the agent's own writer's records).
_REAL = {"gemini": "gemini", "kimi": "kimi", "aider": "aider"}


def whole_read_dir(kind: str, root: Path) -> Path:
    """FILES generated sessions of ``kind`` as its agent writes them, one of them corrupt,
    and the real files of the format where ``../shared/data`` has some."""
    from session_browser.bench.agents import BESIDE, WRITERS

    target_of, body_of = WRITERS[kind]
    for i in range(FILES):
        data = _session(i)
        stem = f"gen-{i:04d}-0000-4000-8000-000000000000"
        target = root / target_of(stem, data["created_at"])
        target.parent.mkdir(parents=True, exist_ok=True)
        body = body_of(data)
        target.write_bytes(b"{not json\n" if i == 7 else body)
        for other, content in (BESIDE[kind](data) if kind in BESIDE else {}).items():
            (target.parent / other).write_bytes(content)
    real = DATA / _REAL.get(kind, "-")
    if kind == "kimi" and real.is_dir():  # a newer release's layout: main log, a subagent's
        agents = root / "wd_real" / "real-0000-4000-8000-000000000000" / "agents"
        for log, agent in (("assistant_tools", "main"), ("subagent_agent-0", "agent-0")):
            (agents / agent).mkdir(parents=True)
            shutil.copy(real / "agent-sessions" / f"{log}.jsonl", agents / agent / "wire.jsonl")
    elif real.is_dir():
        shutil.copytree(
            real, root / "real", dirs_exist_ok=True, ignore=shutil.ignore_patterns("LICENSE*")
        )
    return root


@pytest.mark.parametrize("kind", ["gemini", "copilot", "kimi", "cline", "aider"])
def test_a_worker_builds_the_same_whole_read_index_and_vault(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The formats read whole each time (a session's file, its folder, a launch of a
    history) parse apart: a first build whose worker process reads them gives the same rows
    and the same vault (a Kimi session's or an Aider launch's export included) as the
    index's own process."""
    root = whole_read_dir(kind, tmp_path / kind)
    (here, here_kept, here_report), (_there, there_kept, there_report) = built_both_ways(
        kind, root, tmp_path, monkeypatch
    )
    assert here_kept == there_kept and len(here_kept) >= FILES - 1
    assert here_report.messages == there_report.messages >= 2 * (FILES - 1)
    assert len(here["sessions"]) >= FILES - 1
    assert here["skipped"] or kind == "aider", "the corrupt file is skipped"
