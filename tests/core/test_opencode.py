"""OpenCode sessions as a read-only source: its SQLite database (opened immutable: nothing
created beside it, never blocked by OpenCode's lock) and the older JSON storage layout.

No real OpenCode file is in ../shared/data: the fixtures are written here from OpenCode's own
writer (anomalyco/opencode ``packages/opencode/src/session/session.sql.ts`` for the tables,
``session/message-v2.ts`` for the message and part objects, ``storage/json-migration.ts`` for
the older layout and how it maps onto the tables)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core import recall
from session_browser.core.model import SUMMARY_PREFIX, hidden_parts
from session_browser.core.resume_line import ResumeLine, resume_line
from session_browser.core.sources.base import Skip
from session_browser.core.sources.opencode import OpenCodeSource, default_opencode_dir
from tests.agents import cli, ids, snapshot

SID = "ses_4f1d2c3b8ffeA1b2C3d4E5f6G7"
CHILD = "ses_4f1d2c3b7ffeZ9y8X7w6V5u4T3"
PROJECT = "prj_7e0c1d2e3f"
CWD = "/home/dev/weather"
T0 = 1_787_000_000_000  # ms

SCHEMA = """
CREATE TABLE project (id text PRIMARY KEY, worktree text NOT NULL, vcs text, name text,
  time_created integer NOT NULL, time_updated integer NOT NULL);
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL REFERENCES project(id),
  parent_id text, slug text NOT NULL, directory text NOT NULL, title text NOT NULL,
  version text NOT NULL, share_url text, summary_additions integer, summary_deletions integer,
  summary_files integer, summary_diffs text, revert text, permission text,
  time_created integer NOT NULL, time_updated integer NOT NULL, time_compacting integer,
  time_archived integer);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL REFERENCES session(id),
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL REFERENCES message(id),
  session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL,
  data text NOT NULL);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);
CREATE INDEX part_session_idx ON part (session_id);
CREATE INDEX session_parent_idx ON session (parent_id);
"""


class Session:
    """One OpenCode session as its writer holds it: ``Session.Info``, then messages
    (``MessageV2.User`` / ``MessageV2.Assistant``) each with its parts."""

    def __init__(self, sid: str, title: str, parent: str | None = None) -> None:
        self.info: dict[str, Any] = {
            "id": sid,
            "slug": "calm-river",
            "projectID": PROJECT,
            "directory": CWD,
            "title": title,
            "version": "1.2.27",
            "time": {"created": T0, "updated": T0},
        }
        if parent:
            self.info["parentID"] = parent
        self.messages: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        self.clock = T0
        self.n = 0

    def _id(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}_{self.info['id'][4:16]}{self.n:04d}"

    def message(self, role: str, *parts: dict[str, Any], **extra: Any) -> str:
        self.clock += 60_000
        mid = self._id("msg")
        info: dict[str, Any] = {"id": mid, "sessionID": self.info["id"], "role": role}
        if role == "user":
            info |= {
                "time": {"created": self.clock},
                "agent": "build",
                "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"},
            }
        else:
            info |= {
                "time": {"created": self.clock, "completed": self.clock + 5000},
                "parentID": self.messages[-1][0]["id"] if self.messages else mid,
                "modelID": "claude-sonnet-4-5",
                "providerID": "anthropic",
                "mode": "build",
                "agent": "build",
                "path": {"cwd": CWD, "root": CWD},
                "cost": 0.0123,
                "tokens": {
                    "input": 900,
                    "output": 120,
                    "reasoning": 0,
                    "cache": {"read": 0, "write": 0},
                },
            }
        info |= extra
        full = [
            {"id": self._id("prt"), "sessionID": self.info["id"], "messageID": mid, **p}
            for p in parts
        ]
        self.messages.append((info, full))
        self.info["time"]["updated"] = self.clock + 5000
        return mid


def text(words: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text", "text": words, **extra}


def tool(name: str, args: dict[str, Any], output: str, status: str = "completed") -> dict[str, Any]:
    state: dict[str, Any] = {
        "status": status,
        "input": args,
        "time": {"start": T0, "end": T0 + 900},
    }
    if status == "completed":
        state |= {"output": output, "title": name, "metadata": {}}
    else:
        state |= {"error": output}
    return {"type": "tool", "callID": "toolu_01", "tool": name, "state": state}


STEP = {"type": "step-start", "snapshot": "4b825dc6"}
FINISH = {
    "type": "step-finish",
    "reason": "stop",
    "cost": 0.01,
    "tokens": {"input": 900, "output": 120, "reasoning": 0, "cache": {"read": 0, "write": 0}},
}


def sessions() -> list[Session]:
    main_s = Session(SID, "Cache the forecast API responses")
    main_s.message(
        "user",
        text("the forecast endpoint is slow, cache the upstream responses"),
        text(
            'Called the Read tool with the following input: {"filePath":"api.py"}', synthetic=True
        ),
        {
            "type": "file",
            "mime": "text/plain",
            "filename": "api.py",
            "url": "file:///home/dev/weather/api.py",
        },
    )
    main_s.message(
        "assistant",
        STEP,
        {
            "type": "reasoning",
            "text": "An LRU keyed by city and hour should be enough.",
            "time": {"start": T0},
        },
        tool(
            "bash",
            {"command": "pytest -q tests/test_api.py"},
            "3 passed, 1 failed: test_stale_entry",
        ),
        text("I added an hourly LRU cache around fetch_forecast."),
        FINISH,
    )
    main_s.message(
        "assistant",
        tool(
            "task",
            {
                "description": "review cache",
                "prompt": "review the cache",
                "subagent_type": "general",
            },
            "Looks right.",
        ),
    )
    # /compact: a user message holding a compaction part, then the summary answer
    main_s.message("user", {"type": "compaction", "auto": False})
    main_s.message(
        "assistant",
        text("We cached fetch_forecast with an hourly LRU; test_stale_entry still fails."),
        summary=True,
    )
    main_s.message("user", text("now make the stale entry expire after ninety minutes"))
    main_s.message(
        "assistant", STEP, text("Entries now expire after 90 minutes; all tests pass."), FINISH
    )
    child = Session(CHILD, "review cache (@general subagent)", parent=SID)
    child.message("user", text("review the cache"))
    child.message("assistant", text("Looks right; the eviction of the kingfisher key is tested."))
    return [main_s, child]


def write_database(path: Path, items: list[Session]) -> Path:
    """The database as OpenCode writes it (rows of session.sql.ts: the message and part
    objects without their ids in ``data``)."""
    with sqlite3.connect(path) as db:
        db.executescript(SCHEMA)
        db.execute("INSERT INTO project VALUES (?, ?, 'git', NULL, ?, ?)", (PROJECT, CWD, T0, T0))
        for s in items:
            i = s.info
            db.execute(
                "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version,"
                " time_created, time_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    i["id"],
                    PROJECT,
                    i.get("parentID"),
                    i["slug"],
                    i["directory"],
                    i["title"],
                    i["version"],
                    i["time"]["created"],
                    i["time"]["updated"],
                ),
            )
            for info, parts in s.messages:
                data = {k: v for k, v in info.items() if k not in ("id", "sessionID")}
                when = info["time"]["created"]
                db.execute(
                    "INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                    (info["id"], i["id"], when, when, json.dumps(data)),
                )
                for p in parts:
                    pdata = {
                        k: v for k, v in p.items() if k not in ("id", "sessionID", "messageID")
                    }
                    db.execute(
                        "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                        (p["id"], info["id"], i["id"], when, when, json.dumps(pdata)),
                    )
    db.close()
    return path


def write_storage(root: Path, items: list[Session]) -> None:
    """The older JSON layout (what json-migration.ts reads): project/, session/<project>/,
    message/<session>/, part/<message>/."""
    storage = root / "storage"
    (storage / "project").mkdir(parents=True)
    (storage / "project" / f"{PROJECT}.json").write_text(
        json.dumps({"id": PROJECT, "worktree": CWD})
    )
    for s in items:
        folder = storage / "session" / PROJECT
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{s.info['id']}.json").write_text(json.dumps(s.info))
        for info, parts in s.messages:
            mdir = storage / "message" / s.info["id"]
            mdir.mkdir(parents=True, exist_ok=True)
            (mdir / f"{info['id']}.json").write_text(json.dumps(info))
            for p in parts:
                pdir = storage / "part" / info["id"]
                pdir.mkdir(parents=True, exist_ok=True)
                (pdir / f"{p['id']}.json").write_text(json.dumps(p))


@pytest.fixture(params=["database", "storage"])
def data_dir(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    root = tmp_path / "opencode"
    root.mkdir()
    if request.param == "database":
        write_database(root / "opencode.db", sessions())
    else:
        write_storage(root, sessions())
    return root


def test_turns_hidden_parts_compaction_and_links(data_dir: Path) -> None:
    source = OpenCodeSource(data_dir)
    names = source.list_files()
    assert len(names) == 2
    [main_name] = [n for n in names if SID in n]
    data = source.load(main_name, include_hidden=True)
    assert data is not None and data["session_id"] == SID
    assert data["metadata"]["title"] == "Cache the forecast API responses"
    assert data["metadata"]["cwd"] == CWD
    archived, active = data["archived_messages"], data["messages"]
    assert [(m["role"], m["content"]) for m in archived] == [
        ("user", "the forecast endpoint is slow, cache the upstream responses"),
        ("assistant", "I added an hourly LRU cache around fetch_forecast."),
        ("assistant", ""),
    ]
    assert active[0]["role"] == "system" and active[0]["content"].startswith(SUMMARY_PREFIX)
    assert "hourly LRU; test_stale_entry still fails" in active[0]["content"]
    assert [(m["role"], m["content"]) for m in active[1:]] == [
        ("user", "now make the stale entry expire after ninety minutes"),
        ("assistant", "Entries now expire after 90 minutes; all tests pass."),
    ]
    assert [label for label, _t in hidden_parts(archived[0])] == ["hidden note", "hidden note"]
    labels = [label for label, _t in hidden_parts(archived[1])]
    assert labels == ["thinking", "tool call: bash", "tool result: bash"]
    assert "test_stale_entry" in hidden_parts(archived[1])[2][1]
    plain = source.load(main_name)
    assert plain is not None and not any(hidden_parts(m) for m in recall.project(plain))
    [child_name] = [n for n in names if CHILD in n]
    child = source.load(child_name)
    assert child is not None
    assert child["metadata"]["parent_session"] == SID and child["metadata"]["lineage_id"] == SID


@pytest.mark.parametrize("index", [True, False])
def test_search_never_writes_and_folds_the_subagent(data_dir: Path, index: bool) -> None:
    before = snapshot(data_dir, itself=True)
    store = f"opencode:{data_dir}"
    extra = [] if index else ["--no-index"]
    assert ids(cli("search", "ninety minutes", "--store", store, "--json", *extra)) == [SID]
    assert ids(cli("search", "source:opencode", "LRU", "--store", store, "--json", *extra)) == [SID]
    assert ids(cli("search", "test_stale_entry", "--store", store, "--json", *extra)) == [SID]
    assert ids(cli("search", "pytest", "--store", store, "--json", *extra)) == []
    tools = cli("search", "in:tools", "pytest", "--store", store, "--json", *extra)
    assert ids(tools) == [SID]
    # the subagent's words are found, folded into its parent's lineage
    found = cli("search", "kingfisher", "--store", store, "--json", *extra)
    assert ids(found) == [CHILD]
    assert found["results"][0]["project"] == CWD
    recent = cli("recent", "--store", store, "--json", *extra)
    assert set(ids(recent)) <= {SID, CHILD} and SID in ids(recent)
    assert snapshot(data_dir, itself=True) == before


def test_the_database_is_never_locked_and_nothing_is_created_beside_it(tmp_path: Path) -> None:
    root = tmp_path / "opencode"
    root.mkdir()
    db = write_database(root / "opencode.db", sessions())
    before = snapshot(root, itself=True)
    assert sorted(p.name for p in root.iterdir()) == ["opencode.db"]
    # OpenCode running: another process holds an exclusive lock on the database.
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys\n"
            f"db = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
            "db.execute('BEGIN EXCLUSIVE')\n"
            "print('locked', flush=True)\n"
            "sys.stdin.readline()\n"
            "db.execute('ROLLBACK')\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(sqlite3.OperationalError):  # an ordinary reader is blocked
            sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0).execute(
                "SELECT count(*) FROM session"
            ).fetchone()
        source = OpenCodeSource(root)
        names = source.list_files()
        assert len(names) == 2
        data = source.load(f"opencode.db/{SID}")
        assert data is not None and data["metadata"]["title"] == "Cache the forecast API responses"
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=30)
    assert snapshot(root, itself=True) == before


def test_a_migrated_session_is_read_from_the_database_once(tmp_path: Path) -> None:
    root = tmp_path / "opencode"
    root.mkdir()
    write_storage(root, sessions())
    write_database(root / "opencode.db", sessions()[:1])
    names = OpenCodeSource(root).list_files()
    assert sorted(names) == [
        f"opencode.db/{SID}",
        f"storage/session/{PROJECT}/{CHILD}.json",
    ]


def test_default_dir_and_resume_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert default_opencode_dir() == Path.home() / ".local" / "share" / "opencode"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_opencode_dir() == tmp_path / "opencode"
    (tmp_path / "opencode").mkdir()
    write_database(tmp_path / "opencode" / "opencode.db", sessions())
    assert ids(cli("search", "ninety", "--store", "opencode:", "--json")) == [SID]
    res = CliRunner().invoke(main, ["doctor", "--json"])
    assert res.exit_code == 0, res.output
    [agent] = [a for a in json.loads(res.output)["agents"] if a["source"] == "opencode"]
    assert agent["sessions"] == 2 and agent["dir"] == str(tmp_path / "opencode")
    assert agent["retention"].startswith("OpenCode keeps sessions")
    assert resume_line("opencode", SID, CWD) == ResumeLine(f"cd {CWD} && opencode --session {SID}")


def test_rows_that_are_not_what_opencode_writes_are_skipped(tmp_path: Path) -> None:
    root = tmp_path / "opencode"
    root.mkdir()
    db = write_database(root / "opencode.db", sessions())
    with sqlite3.connect(db) as conn:
        first = conn.execute(
            "SELECT id FROM message WHERE session_id = ? ORDER BY time_created LIMIT 1", (SID,)
        ).fetchone()[0]
        conn.execute("UPDATE message SET data = 'not json' WHERE id = ?", (first,))
        parts = [
            r[0]
            for r in conn.execute(
                "SELECT id FROM part WHERE session_id = ? AND message_id != ? ORDER BY id",
                (SID, first),
            )
        ]
        conn.execute("UPDATE part SET data = '[1, 2]' WHERE id = ?", (parts[0],))
        conn.execute(
            "UPDATE part SET data = ? WHERE id = ?",
            (json.dumps({"type": "tool", "tool": 5, "state": "done"}), parts[1]),
        )
    conn.close()
    (root / "opencode-beta.db").write_bytes(b"not a database at all")
    source = OpenCodeSource(root)
    names = source.list_files()
    assert sorted(names) == [f"opencode.db/{CHILD}", f"opencode.db/{SID}"]
    doc = source.parse(f"opencode.db/{SID}", names[f"opencode.db/{SID}"], None)
    assert not isinstance(doc, Skip) and doc.skipped is not None and doc.skipped.bad == 2
    assert doc.data["archived_messages"][0]["role"] == "assistant"  # the unreadable prompt left out
    assert "ninety minutes" in json.dumps(doc.data)


def test_a_session_written_to_since_is_read_again(tmp_path: Path) -> None:
    root = tmp_path / "opencode"
    root.mkdir()
    items = sessions()
    db = write_database(root / "opencode.db", items)
    store = f"opencode:{root}"
    assert ids(cli("search", "albatross", "--store", store, "--json")) == []
    with sqlite3.connect(db) as conn:  # OpenCode answers again in the same session
        later = T0 + 3_600_000
        data = {"role": "assistant", "time": {"created": later}, "modelID": "m", "summary": False}
        conn.execute(
            "INSERT INTO message VALUES ('msg_zzz', ?, ?, ?, ?)",
            (SID, later, later, json.dumps(data)),
        )
        part = {"type": "text", "text": "The albatross cache key is fixed too."}
        conn.execute(
            "INSERT INTO part VALUES ('prt_zzz', 'msg_zzz', ?, ?, ?, ?)",
            (SID, later, later, json.dumps(part)),
        )
        conn.execute("UPDATE session SET time_updated = ? WHERE id = ?", (later, SID))
    conn.close()
    assert ids(cli("search", "albatross", "--store", store, "--json")) == [SID]


def test_a_session_of_the_database_has_its_own_identity(tmp_path: Path) -> None:
    """A session inside the database is no file of its own: the source gives its identity
    (the index checks it before it trusts or replaces its rows, and before it reuses a parse
    to build a hit), and the index reads it by that name."""
    root = tmp_path / "opencode"
    root.mkdir()
    db = write_database(root / "opencode.db", sessions())
    source = OpenCodeSource(root)
    listed = source.list_files()
    name = f"opencode.db/{SID}"
    assert source.identity(name) == listed[name]
    other = source.identity(f"opencode.db/{CHILD}")
    with sqlite3.connect(db) as conn:  # OpenCode answers again in the same session
        conn.execute("UPDATE session SET time_updated = time_updated + 1000 WHERE id = ?", (SID,))
    conn.close()
    changed = source.identity(name)
    assert changed is not None and changed != listed[name]
    assert source.identity(f"opencode.db/{CHILD}") == other  # the others are as they were
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM part WHERE session_id = ?", (SID,))
        conn.execute("DELETE FROM message WHERE session_id = ?", (SID,))
        conn.execute("DELETE FROM session WHERE id = ?", (SID,))
    conn.close()
    assert source.identity(name) is None  # deleted in OpenCode: gone
    assert source.identity("opencode.db/ses_nothing") is None
    assert source.identity("notes.txt/whatever") is None
    (root / "opencode.db").unlink()
    assert source.identity(f"opencode.db/{CHILD}") is None
