"""One session per (machine, user, session id) on the team index, the newest copy, as locally
across stores: two store dirs holding the same ids, pushed at once, list each session once
with the newest content; the same id from two machines is two sessions, each named by its
machine, and ``show`` refuses to guess between them (``--machine``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.pgindex import SCHEMA_VERSION, PgIndexStore, push_stores
from session_browser.core.query import local_user
from session_browser.core.sources import SOURCES
from session_browser.core.sources.base import Identity, SessionDoc, Skip

from .corpus import HOUR, T0, put, write_store

REPO = Path(__file__).resolve().parents[2]
SHARED = 150  # session ids both store dirs hold
OWN = 5  # ... and each holds alone


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    """Two store dirs holding the same ids ``dupNNN``: the even ones newer in ``a``, the odd
    ones in ``b``; the newer copy says ``freshcopy`` and the older ``stalecopy``."""
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        d.mkdir()
    for i in range(SHARED):
        newer, older = (a, b) if i % 2 == 0 else (b, a)
        for d, word, day in (
            (newer, "freshcopy", "2026-02-01"),
            (older, "stalecopy", "2026-01-01"),
        ):
            texts = [f"dup{i} {word} talks about topic{i % 13}", f"reply {word} {i}"] * 3
            put(d, f"dup{i:03d}", texts, start=T0 + i * HOUR, updated_at=f"{day}T00:00:00+00:00")
    for d in (a, b):
        for i in range(OWN):
            put(d, f"own-{d.name}{i}", [f"own {d.name} freshcopy {i}", "ok"], start=T0)
    return a, b


def _push_cmd(url: str, *stores: Path, machine: str) -> list[str]:
    args = [sys.executable, "-m", "session_browser", "push", "--to", url, "--machine", machine]
    for s in stores:
        args += ["--store", str(s)]
    return [*args, "--json"]


def _cli(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.stdout, res.stderr


def _rows(url: str) -> list[tuple[str, str, str, int, int]]:
    """(machine, user, id, messages it says, messages held) of every session held."""
    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT s.machine, s.os_user, s.session_id, s.nmsg, count(m.id) FROM sb_sessions s "
            "LEFT JOIN sb_messages m ON m.sid = s.sid GROUP BY s.sid ORDER BY 3, 1"
        ).fetchall()


def test_two_dirs_with_the_same_ids_pushed_at_once_list_each_session_once_the_newest(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = _dirs(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # two pushers at once, the dirs in opposite orders: whichever writes a copy first, the
    # newest stays
    procs = [
        subprocess.Popen(_push_cmd(pg_url, a, b, machine="m1"), env=env, stderr=subprocess.PIPE),
        subprocess.Popen(_push_cmd(pg_url, b, a, machine="m1"), env=env, stderr=subprocess.PIPE),
    ]
    for p in procs:
        _out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    rows = _rows(pg_url)
    ids = [r[2] for r in rows]
    assert len(ids) == len(set(ids)) == SHARED + 2 * OWN
    assert all(n == held == 6 for _m, _u, sid, n, held in rows if sid.startswith("dup"))

    monkeypatch.setenv("SESSION_BROWSER_INDEX_URL", pg_url)
    code, out, err = _cli("recent", "--limit", "1000", "--json")
    assert code == 0, err
    listed = [(r["session_id"], r["store"]) for r in json.loads(out)["results"]]
    assert len(listed) == SHARED + 2 * OWN
    assert len({sid for sid, _store in listed}) == len(listed)
    assert {store for _sid, store in listed} == {f"{local_user()}@m1"}
    code, out, err = _cli("search", "freshcopy", "--limit", "1000", "--json")
    assert code == 0, err
    found = [h["session_id"] for h in json.loads(out)["results"]]
    assert sorted(found) == sorted(ids)  # every session once
    code, out, err = _cli("search", "stalecopy", "--limit", "1000", "--json")
    assert code == 1, err  # no match: exit 1, as grep
    assert json.loads(out)["results"] == []  # no older copy is held
    code, out, err = _cli("show", "dup007", "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert shown["from"] == f"{local_user()}@m1"
    assert all("freshcopy" in m["content"] for m in shown["messages"])

    # pushed again: nothing is sent, the older copies are counted as such
    again = subprocess.run(
        _push_cmd(pg_url, a, b, machine="m1"), env=env, capture_output=True, check=True
    )
    report = json.loads(again.stdout)
    assert (report["sent"], report["unchanged"], report["older"]) == (0, SHARED + 2 * OWN, SHARED)
    code, out, err = _cli("push", "--to", pg_url, "--machine", "m1", "--store", str(a))
    assert code == 0, err
    assert f"{SHARED // 2} older copies of sessions held not sent" in out
    assert _rows(pg_url) == rows


class Reads:
    """A store dir's real source, noting which files a push reads."""

    def __init__(self, root: Path) -> None:
        self.source = SOURCES["praisonai"].source(root)
        self.root = root
        self.read: list[str] = []

    def list_files(self) -> dict[str, Identity]:
        return self.source.list_files()

    def parse(self, name: str, ident: Identity, prior: bytes | None) -> SessionDoc | Skip:
        self.read.append(name)
        return self.source.parse(name, ident, prior)


def test_older_copies_are_not_read_again_and_a_newer_edit_takes_over(
    tmp_path: Path, pg_url: str
) -> None:
    a, b = _dirs(tmp_path)
    ra, rb = Reads(a), Reads(b)
    src = [(ra, "praisonai"), (rb, "praisonai")]

    def push() -> tuple[int, int, int, int]:
        ra.read.clear()
        rb.read.clear()
        r = push_stores(pg_url, src, machine="m1")
        return r.sent, r.unchanged, r.older, len(ra.read) + len(rb.read)

    first = push()
    # (a's odd ids, held until b's newer copies replaced them, are read once more)
    assert push() == (0, SHARED + 2 * OWN, SHARED, SHARED // 2)
    # pushed again: each file is known, held or older, and none is read
    assert push() == (0, SHARED + 2 * OWN, SHARED, 0)
    assert first[0] == 2 * OWN + SHARED + SHARED // 2  # a's 155, then b's 80 newer

    put(b, "dup000", ["dup0 editedcopy later", "yes"], updated_at="2026-03-01T00:00:00+00:00")
    # b's dup000 only is read (a's, held when a is pushed first, is unchanged)
    assert push() == (1, SHARED + 2 * OWN, SHARED - 1, 1)
    assert rb.read == ["dup000.json"]
    with PgIndexStore(pg_url) as team:
        assert [h.session_id for h in team.search("editedcopy")] == ["dup000"]
        assert "dup000" not in [h.session_id for h in team.search("freshcopy", limit=1000)]
    # the copy held gone from its dir: a later push holds the other dir's copy again
    (b / "dup000.json").unlink()
    push()
    push()
    with PgIndexStore(pg_url) as team:
        assert "dup000" in [h.session_id for h in team.search("freshcopy", limit=1000)]
    assert [r[2] for r in _rows(pg_url)].count("dup000") == 1
    assert push()[3] == 0


def test_the_same_id_from_two_machines_is_two_sessions_and_show_asks_which(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = write_store(tmp_path / "one", only=["cafe", "billing"])
    two = write_store(tmp_path / "two", only=["cafe"])
    put(two, "cafe", ["Café on lab2: the résumé parser moved", "to a transformer"])
    for d, machine in ((one, "lab1"), (two, "lab2")):
        code, _out, err = _cli("push", "--to", pg_url, "--store", str(d), "--machine", machine)
        assert code == 0, err
    monkeypatch.setenv("SESSION_BROWSER_INDEX_URL", pg_url)
    me = local_user()
    code, out, _err = _cli("recent", "--json")
    listed = sorted((r["session_id"], r["store"]) for r in json.loads(out)["results"])
    assert listed == [("billing", f"{me}@lab1"), ("cafe", f"{me}@lab1"), ("cafe", f"{me}@lab2")]
    code, out, _err = _cli("recent")
    assert f"{me}@lab1" in out and f"{me}@lab2" in out  # the table says where each is from
    code, out, _err = _cli("search", "résumé", "--json")
    hits = sorted((h["session_id"], h["store"]) for h in json.loads(out)["results"])
    assert hits == [("cafe", f"{me}@lab1"), ("cafe", f"{me}@lab2")]

    code, out, err = _cli("show", "cafe")
    assert code == 1 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert f"{me}@lab1" in lines[0] and f"{me}@lab2" in lines[0]
    assert "show cafe --machine NAME" in lines[0]

    code, out, err = _cli("show", "cafe", "--machine", "lab2", "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert shown["from"] == f"{me}@lab2" and "transformer" in json.dumps(shown["messages"])
    code, out, err = _cli("show", "cafe", "--machine", f"{me}@lab1", "--json")
    assert code == 0, err
    assert "CRF" in json.dumps(json.loads(out)["messages"])
    code, out, err = _cli("show", "cafe", "--machine", "lab1")
    assert code == 0 and f"from {me}@lab1" in out and "CRF" in out
    code, out, err = _cli("show", "billing")  # one machine only: no question
    assert code == 0, err

    code, out, err = _cli("show", "cafe", "--machine", "lab3")
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "not on the team index from lab3" in err and "lab1" in err
    code, out, err = _cli("show", "nosuchid", "--machine", "lab1")
    assert code == 1 and err.strip() == "session-browser: unknown session id: 'nosuchid'"


def test_show_machine_needs_the_team_index(tmp_path: Path) -> None:
    d = write_store(tmp_path / "store", only=["cafe"])
    code, out, err = _cli("show", "cafe", "--store", str(d), "--machine", "lab1")
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1
    assert "--machine" in err and "team index" in err


def test_a_version_3_index_with_copies_is_folded_to_the_newest(tmp_path: Path, pg_url: str) -> None:
    d = write_store(tmp_path / "store", only=["cafe", "billing"])
    src = [(SOURCES["praisonai"].source(d), "praisonai")]
    push_stores(pg_url, src, machine="m1")  # type: ignore[arg-type]
    cols = (
        "machine, os_user, kind, file, fingerprint, session_id, title, when_, created, "
        "message_count, archived_count, source, agent, tagged, rate_auto, machine_paced, "
        "lineage, project, nmsg, chars, redacted, data"
    )
    with psycopg.connect(pg_url, autocommit=True) as conn:  # as version 3 held copies
        conn.execute("DROP INDEX sb_sessions_one")
        conn.execute("ALTER TABLE sb_sessions DROP COLUMN mtime_ns")
        conn.execute("ALTER TABLE sb_sessions ADD UNIQUE (machine, os_user, kind, root, file)")
        conn.execute("UPDATE sb_schema SET version = 3")
        for sid, shift, title in (("cafe", -1000.0, "older copy"), ("billing", 1000.0, "newer")):
            conn.execute(
                f"INSERT INTO sb_sessions(root, updated_ts, {cols}) SELECT '/elsewhere', "
                f"updated_ts + %s, {cols.replace('title', '%s')} FROM sb_sessions "
                "WHERE session_id = %s",
                (shift, title, sid),
            )
        conn.execute(
            "INSERT INTO sb_messages(sid, idx, role, archived, ts, text, tsv) "
            "SELECT c.sid, m.idx, m.role, m.archived, m.ts, m.text, m.tsv FROM sb_sessions c "
            "JOIN sb_sessions o ON o.session_id = c.session_id AND o.root <> '/elsewhere' "
            "JOIN sb_messages m ON m.sid = o.sid WHERE c.root = '/elsewhere'"
        )
        assert [r[2] for r in _rows(pg_url)] == ["billing", "billing", "cafe", "cafe"]
    with PgIndexStore(pg_url) as team:
        assert team.status()["schema_version"] == SCHEMA_VERSION == 7
    with psycopg.connect(pg_url) as conn:
        # every session kept has its content words (session recall), the folded none
        words = conn.execute("SELECT sid FROM sb_words ORDER BY 1").fetchall()
        assert words == conn.execute("SELECT sid FROM sb_sessions ORDER BY 1").fetchall()
        held = conn.execute("SELECT session_id, root, title FROM sb_sessions ORDER BY 1").fetchall()
        assert held == [
            ("billing", "/elsewhere", "newer"),
            ("cafe", str(d), "Notes from the Café meeting about résumé parsing"),
        ]
        assert conn.execute("SELECT count(*) FROM sb_messages").fetchone() == (
            sum(r[3] for r in _rows(pg_url)),
        )
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute(
                f"INSERT INTO sb_sessions(root, {cols}) SELECT '/third', {cols} FROM sb_sessions "
                "WHERE session_id = 'cafe'"
            )
    assert all(n == held for _m, _u, _s, n, held in _rows(pg_url))
    # the next push: the dir's billing is older than the copy held, cafe unchanged
    report = push_stores(pg_url, src, machine="m1")  # type: ignore[arg-type]
    assert (report.sent, report.unchanged, report.older) == (0, 1, 1)
