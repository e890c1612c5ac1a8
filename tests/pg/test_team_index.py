"""The team index on a real PostgreSQL: the same query-language table gives the same sessions
as the SQLite index, pushes are idempotent, atomic per session, safe when run at once, and
survive being killed or cut off; failures are one line without the password."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner, Result

from session_browser.bench.team import push_message_line
from session_browser.cli import main
from session_browser.core.index import SqliteSessionStore
from session_browser.core.pgindex import PgIndexError, PgIndexStore, mask_url, push_stores
from session_browser.core.pgindex.schema import SCHEMA_VERSION
from session_browser.core.query import Term, local_machine, local_user, parse_query
from session_browser.core.search.rank import COVERAGE_CHECK
from session_browser.core.sources import SOURCES

from .corpus import HOUR, T0, put, write_store

REPO = Path(__file__).resolve().parents[2]

QUERIES = [
    "billing",
    "billing migration",
    '"billing migration"',
    "migration billing",
    "BILLING",
    "cafe",
    "café",
    "RESUME",
    "partition*",
    "cert*",
    "billing -deploy",
    "deploy -staging",
    "the billing",
    "role:user",
    "role:assistant billing",
    "archived:yes",
    "archived:no billing",
    "since:2025-10-12 until:2025-10-15",
    "since:2025-10-13",
    "session:cafe",
    "source:praisonai partition*",
    "source:scheduled",
    "agent:PLANNER billing",
    "agent:coder",
    "project:/home/a",
    "project:/home/a/app deploy",
    f"machine:{local_machine()} billing",
    f"user:{local_user()}",
    "machine:elsewhere billing",
    "kuberntes ingress",
    "nothingmatcheshere",
    # questions in other words: no message holds all their words (session recall)
    "slow postgres vacuum fixed by monthly partitioning",
    "what did we decide about rerunning the billing migration once invoices reconciled",
    "kafka consumers lagging, more partitions",
]
PARAPHRASES = QUERIES[-3:]


def _pushed(d: Path, url: str, **kw: object) -> None:
    push_stores(url, [(SOURCES["praisonai"].source(d), "praisonai")], **kw)  # type: ignore[arg-type]


def _top(hits: list[object]) -> list[tuple[str, float]]:
    return [(h.session_id, round(h.score, 4)) for h in hits]  # type: ignore[attr-defined]


def test_the_query_table_gives_the_same_sessions_on_both_engines(
    tmp_path: Path, pg_url: str
) -> None:
    d = write_store(tmp_path / "store")
    _pushed(d, pg_url)
    local = SqliteSessionStore(d)
    team = PgIndexStore(pg_url)
    try:
        compared = 0
        for query in QUERIES:
            want = _top(local.search(query, limit=10))
            got = _top(team.search(query, limit=10))
            assert got == want, query
            compared += bool(want)
        assert compared >= len(QUERIES) - 3  # nearly every query finds something
        # a typo is corrected on both engines the same way
        assert team.search_ex("kuberntes").fuzzy and local.search_ex("kuberntes").fuzzy
        # a question in other words is ranked by session recall on both, anchored alike
        for query, target in zip(PARAPHRASES, ["postgres", "billing", "kafka"], strict=True):
            mine = local.search(query, limit=3)
            theirs = team.search(query, limit=3)
            assert mine[0].session_id == target, query
            assert mine[0].explain["session_recall"] is not None, query
            assert [(h.session_id, h.anchor_index) for h in theirs] == [
                (h.session_id, h.anchor_index) for h in mine
            ], query
    finally:
        team.close()
        local.close()


def test_an_excluded_word_drops_sessions_beyond_the_refined_ones(
    tmp_path: Path, pg_url: str
) -> None:
    # More sessions hold the word than refine looks at, most of them the excluded word in
    # another message: none of those is a hit on either engine, however few refine leaves.
    d = tmp_path / "store"
    d.mkdir()
    for n in range(COVERAGE_CHECK + 5):
        put(d, f"billed{n}", ["billing deployment", "deploy"], start=T0 + n * HOUR)
    for n in range(3):
        put(d, f"clean{n}", ["deploy notes"], start=T0 - (n + 1) * HOUR)
    _pushed(d, pg_url)
    clean = {f"clean{n}" for n in range(3)}
    team = PgIndexStore(pg_url)
    try:
        for query in ("dep* -billing", "deploy -billing"):
            res = team.search_ex(query, limit=50)
            assert {h.session_id for h in res.hits} == clean, query
            assert res.matched_sessions == 3, query
    finally:
        team.close()


def _fold_keys(store: SqliteSessionStore | PgIndexStore, query: str) -> list[tuple[str, bool, str]]:
    """(session, full hit, fold key) of each relevance candidate of ``query``; a fold key
    that is not a lineage (the store's own name for the session's file) reads ``own``."""
    out: list[tuple[str, bool, str]] = []
    for cand in store.relevance_candidates(parse_query(query), limit=10).candidates:
        key = cand.lineage
        assert key is not None, cand.hit.session_id  # every candidate folds by some key
        if key.startswith(store.label + "\x00"):
            key = "own"
        out.append((cand.hit.session_id, bool(cand.hit.messages), key))
    return out


def test_both_engines_fold_lineage_by_the_same_key_and_leave_out_a_hit_they_cannot_build(
    tmp_path: Path, pg_url: str
) -> None:
    d = write_store(tmp_path / "store")
    day = 24 * HOUR
    put(d, "ledger-a", ["the ledger export", "ledger done"], start=T0 + 20 * day, lineage_id="L")
    put(d, "ledger-b", ["ledger export resumed", "ok"], start=T0 + 21 * day, lineage_id="L")
    put(d, "ledger-c", ["an unrelated ledger note", "fine"], start=T0 + 22 * day)
    _pushed(d, pg_url)
    SqliteSessionStore(d).close()  # indexed as pushed
    # The python session is emptied behind both indexes' backs, after they read it: its
    # messages are still indexed (it scores) but its hit cannot be built any more.
    emptied = json.loads((d / "python.json").read_text())
    emptied["messages"] = []
    (d / "python.json").write_text(json.dumps(emptied))
    with psycopg.connect(pg_url) as conn:
        conn.execute(
            "UPDATE sb_sessions SET data = %s WHERE session_id = 'python'", (json.dumps(emptied),)
        )
    local = SqliteSessionStore(d, reconcile="none")
    team = PgIndexStore(pg_url)
    try:
        want = _fold_keys(local, "ledger")
        assert want == _fold_keys(team, "ledger")
        assert {(sid, key) for sid, _full, key in want} == {
            ("ledger-a", "L"),
            ("ledger-b", "L"),
            ("ledger-c", "own"),
        }
        assert sorted(full for _sid, full, _key in want) == [False, True, True]
        folded = [(h.session_id, h.folded) for h in local.search("ledger", limit=10)]
        assert folded == [(h.session_id, h.folded) for h in team.search("ledger", limit=10)]
        assert len(folded) == 2
        # The emptied session scores on both engines but is no hit: the next session takes
        # its place (never a hit that opens nothing).
        for query in ("taskgroup", "taskgroup | readiness"):
            assert _top(team.search(query, limit=1)) == _top(local.search(query, limit=1))
        assert local.search("taskgroup", limit=1) == []
        assert [h.session_id for h in team.search("taskgroup | readiness", limit=1)] == ["typo"]
    finally:
        team.close()
        local.close()


def _messages_per_session(url: str) -> list[tuple[str, int, int]]:
    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT s.session_id, s.nmsg, count(m.id) FROM sb_sessions s "
            "LEFT JOIN sb_messages m ON m.sid = s.sid GROUP BY s.sid ORDER BY 1"
        ).fetchall()


def test_push_again_sends_only_changes_and_replaces_a_session_whole(
    tmp_path: Path, pg_url: str
) -> None:
    d = write_store(tmp_path / "store")
    src = [(SOURCES["praisonai"].source(d), "praisonai")]
    first = push_stores(pg_url, src)
    assert (first.sent, first.unchanged) == (10, 0)
    again = push_stores(pg_url, src)
    assert (again.sent, again.unchanged, again.messages) == (0, 10, 0)
    put(d, "deploy", ["A brand new deploy conversation"] * 4, start=T0 + HOUR)
    (d / "kafka.json").unlink()
    third = push_stores(pg_url, src)
    assert (third.sent, third.removed) == (1, 1)
    rows = _messages_per_session(pg_url)
    assert [r[0] for r in rows] == sorted(s for s in (p.stem for p in d.glob("*.json")))
    assert all(n == c for _sid, n, c in rows)
    assert ("deploy", 4, 4) in rows
    with psycopg.connect(pg_url) as conn:  # the removed session's messages went with it
        orphans = conn.execute(
            "SELECT count(*) FROM sb_messages m "
            "WHERE NOT EXISTS (SELECT 1 FROM sb_sessions s WHERE s.sid = m.sid)"
        ).fetchone()
    assert orphans == (0,)
    with PgIndexStore(pg_url) as team:
        assert [h.session_id for h in team.search('"brand new"')] == ["deploy"]
        assert team.search("kafka") == []


def test_redact_sends_no_secret_and_hidden_parts_stay_home(tmp_path: Path, pg_url: str) -> None:
    d = write_store(tmp_path / "store", only=["secret"])
    data = json.loads((d / "secret.json").read_text())
    data["messages"][1]["metadata"] = {"hidden": [{"type": "thinking", "text": "innerthought"}]}
    (d / "secret.json").write_text(json.dumps(data))
    _pushed(d, pg_url, redact=True)
    with psycopg.connect(pg_url) as conn:
        blob = " ".join(str(r) for r in conn.execute("SELECT * FROM sb_sessions").fetchall())
        blob += " ".join(str(r) for r in conn.execute("SELECT text FROM sb_messages").fetchall())
    assert "sk-abcdefghijklmnopqrstuvwx1234" not in blob and "bob@example.com" not in blob
    assert "[REDACTED:api_key]" in blob and "[REDACTED:email]" in blob
    assert "innerthought" not in blob


def _big_store(root: Path, n: int, tag: str = "") -> Path:
    root.mkdir(parents=True)
    for i in range(n):
        texts = [f"session {tag}{i} talks about topic{i % 17} and word{i % 101} here"] * 6
        put(root, f"{tag}s{i:05d}", texts, start=T0 + i)
    return root


def _push_cmd(url: str, *stores: Path, machine: str = "m1") -> list[str]:
    args = [sys.executable, "-m", "session_browser", "push", "--to", url, "--machine", machine]
    for s in stores:
        args += ["--store", str(s)]
    return args


def test_two_pushers_at_once_lose_and_duplicate_nothing(tmp_path: Path, pg_url: str) -> None:
    shared = _big_store(tmp_path / "shared", 150, "a")
    own1 = _big_store(tmp_path / "own1", 40, "b")
    own2 = _big_store(tmp_path / "own2", 40, "c")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(_push_cmd(pg_url, shared, own1), env=env, stderr=subprocess.PIPE),
        subprocess.Popen(_push_cmd(pg_url, own2, shared), env=env, stderr=subprocess.PIPE),
    ]
    for p in procs:
        _out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    rows = _messages_per_session(pg_url)
    assert len(rows) == 230  # the shared store once: same machine, user, dir and file
    assert all(n == c == 6 for _sid, n, c in rows)
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM sb_messages").fetchone() == (1380,)


def _wait_for_sessions(url: str, proc: subprocess.Popen[bytes], at_least: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with psycopg.connect(url) as conn:
                row = conn.execute("SELECT count(*) FROM sb_sessions").fetchone()
            if row is not None and row[0] >= at_least:
                return
        except psycopg.Error:
            pass
        time.sleep(0.01)


def test_a_push_killed_midway_leaves_no_partial_session_and_the_next_resumes(
    tmp_path: Path, pg_url: str
) -> None:
    store = _big_store(tmp_path / "big", 650)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(_push_cmd(pg_url, store), env=env, stderr=subprocess.PIPE)
    _wait_for_sessions(pg_url, proc, 200)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    rows = _messages_per_session(pg_url)
    assert 0 < len(rows) < 650, "the push was not stopped midway"
    assert all(n == c == 6 for _sid, n, c in rows)
    done = CliRunner().invoke(main, _push_cmd(pg_url, store)[3:])  # the resume, in-process
    assert done.exit_code == 0, done.output
    assert f"{len(rows)} unchanged" in done.stdout
    rows = _messages_per_session(pg_url)
    assert len(rows) == 650 and all(n == c == 6 for _sid, n, c in rows)


def test_a_connection_cut_mid_push_fails_in_one_line_and_the_next_push_resumes(
    tmp_path: Path, pg_url: str
) -> None:
    store = _big_store(tmp_path / "big", 650)
    args = _push_cmd(pg_url, store)[3:]
    outcome: list[Result] = []
    # the push runs in a thread of this process (the CLI's own error handling and exit code);
    # the test cuts its connection from here
    pushing = threading.Thread(target=lambda: outcome.append(CliRunner().invoke(main, args)))
    pushing.start()
    deadline = time.monotonic() + 60
    cut: list[tuple[bool]] = []
    while not cut and time.monotonic() < deadline and pushing.is_alive():
        with psycopg.connect(pg_url, autocommit=True) as conn:
            try:
                row = conn.execute("SELECT count(*) FROM sb_sessions").fetchone()
            except psycopg.errors.UndefinedTable:  # the push has not made its tables yet
                row = None
            if row is not None and row[0] >= 200:
                cut = conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                ).fetchall()
        time.sleep(0.01)
    pushing.join(60)
    assert cut and outcome and outcome[0].exit_code == 1
    lines = outcome[0].stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("session-browser: push to the team index")
    rows = _messages_per_session(pg_url)
    assert len(rows) < 650 and all(n == c == 6 for _sid, n, c in rows)
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    rows = _messages_per_session(pg_url)
    assert len(rows) == 650 and all(n == c == 6 for _sid, n, c in rows)


def test_unreachable_index_is_one_line_without_the_password(tmp_path: Path) -> None:
    url = f"postgresql://team:s3cretpw@/nodb?host={tmp_path}/nowhere"
    store = write_store(tmp_path / "store", only=["cafe"])
    for args in (["push", "--to", url, "--store", str(store)], ["--index", url, "search", "x"]):
        res = CliRunner().invoke(main, args)
        assert res.exit_code == (2 if "search" in args else 1)  # search: 1 is no match
        err = res.stderr.strip()
        assert len(err.splitlines()) == 1 and "team index" in err, err
        assert "s3cretpw" not in err
    assert mask_url(url) == f"postgresql://team:***@/nodb?host={tmp_path}/nowhere"
    assert mask_url("host=h password='x y' user=u") == "host=h password=*** user=u"


def test_cli_search_recent_show_read_the_team_index(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = write_store(tmp_path / "store")
    res = CliRunner().invoke(main, ["push", "--to", pg_url, "--store", str(d), "--machine", "lab1"])
    assert res.exit_code == 0, res.output
    assert "10 sessions sent" in res.output
    (d / "cafe.json").unlink()  # the team index shows what was pushed, not the local files
    monkeypatch.setenv("SESSION_BROWSER_INDEX_URL", pg_url)
    res = CliRunner().invoke(main, ["search", "résumé", "--json"])
    assert res.exit_code == 0, res.output
    hits = json.loads(res.stdout)["results"]
    assert [(h["session_id"], h["store"]) for h in hits] == [("cafe", f"{local_user()}@lab1")]
    res = CliRunner().invoke(main, ["search", "machine:lab1", "cafe", "--json"])
    assert [h["session_id"] for h in json.loads(res.stdout)["results"]] == ["cafe"]
    res = CliRunner().invoke(main, ["search", "machine:lab2", "cafe", "--json"])
    assert json.loads(res.stdout)["results"] == []
    res = CliRunner().invoke(main, ["search", "résumé"])
    assert f"from {local_user()}@lab1" in res.stdout
    res = CliRunner().invoke(main, ["show", "cafe", "--json"])
    assert res.exit_code == 0, res.output
    assert "CRF" in json.dumps(json.loads(res.stdout)["messages"])
    res = CliRunner().invoke(main, ["recent", "--limit", "3", "--json"])
    assert json.loads(res.stdout)["total_found"] == 3


def test_a_schema_from_a_newer_version_is_refused(pg_url: str) -> None:
    PgIndexStore(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE sb_schema SET version = version + 1")
    with pytest.raises(PgIndexError, match="newer than this version"):
        PgIndexStore(pg_url)


def test_a_version_5_index_has_its_session_words_reduced_anew(tmp_path: Path, pg_url: str) -> None:
    d = write_store(tmp_path / "store")
    src = [(SOURCES["praisonai"].source(d), "praisonai")]
    push_stores(pg_url, src)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        fresh = conn.execute("SELECT sid, words, length FROM sb_words ORDER BY sid").fetchall()
        # as version 5 reduced them (another stemmer): words no question asks any more
        conn.execute("UPDATE sb_words SET words = ARRAY['shar', 'tak'], length = 2")
        conn.execute("UPDATE sb_schema SET version = 5")
    again = push_stores(pg_url, src)
    assert (again.sent, again.unchanged) == (0, 10)
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT version FROM sb_schema").fetchall() == [(SCHEMA_VERSION,)]
        got = conn.execute("SELECT sid, words, length FROM sb_words ORDER BY sid").fetchall()
    assert got == fresh and len(got) == 10


def test_a_version_1_index_is_migrated_in_place_and_nothing_is_pushed_again(
    tmp_path: Path, pg_url: str
) -> None:
    d = write_store(tmp_path / "store")
    src = [(SOURCES["praisonai"].source(d), "praisonai")]
    push_stores(pg_url, src)
    with psycopg.connect(pg_url, autocommit=True) as conn:  # as version 1 made it
        conn.execute(
            "ALTER TABLE sb_messages ADD CONSTRAINT sb_messages_sid_fkey FOREIGN KEY (sid) "
            "REFERENCES sb_sessions(sid) ON DELETE CASCADE"
        )
        conn.execute("UPDATE sb_schema SET version = 1")
    again = push_stores(pg_url, src)
    assert (again.sent, again.unchanged) == (0, 10)
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT version FROM sb_schema").fetchall() == [(SCHEMA_VERSION,)]
        keys = conn.execute(
            "SELECT count(*) FROM pg_constraint WHERE conrelid = 'sb_messages'::regclass "
            "AND contype = 'f'"
        ).fetchone()
    assert keys == (0,)
    with PgIndexStore(pg_url) as team:
        assert team.search("kafka")


def test_bench_index_prints_both_engines_and_leaves_no_schema(pg_url: str) -> None:
    res = CliRunner().invoke(
        main,
        [
            "bench",
            "--index",
            pg_url,
            "--sessions",
            "12",
            "--queries",
            "3",
            "--pushers",
            "2",
            "--no-sgd",  # the small pip-installed data: no reading of the big SGD file
            "--push-message-mb",
            "5",
            "--json",
            "-q",
        ],
    )
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["team"]["push_messages"] == report["corpus"]["messages"] > 0
    n = report["queries"]  # as many as the small corpus gives (up to 3)
    assert report["team"]["quality"]["n"] == report["sqlite"]["quality"]["n"] == n >= 2
    assert abs(report["team"]["quality"]["rank1"] - report["sqlite"]["quality"]["rank1"]) <= 0.01
    big = report["push_message"]  # one 5 MB message pushed in a process of its own
    assert big["error"] is None and big["exit"] == 0 and big["message_bytes"] >= 5_000_000
    assert big["rss_x"] == round(big["rss_mb"] * 2**20 / big["message_bytes"], 2) > 0
    assert push_message_line(big).startswith("push of one 5.0 MB message: ")
    with psycopg.connect(pg_url) as conn:
        left = conn.execute(
            "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'sb_bench_%%'"
        ).fetchone()
    assert left == (0,)


def _wait_count(url: str, want: int, proc: subprocess.Popen[bytes]) -> int:
    deadline = time.monotonic() + 60
    got = -1
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with psycopg.connect(url) as conn:
                row = conn.execute("SELECT count(*) FROM sb_sessions").fetchone()
        except psycopg.errors.UndefinedTable:  # the pusher has not made its tables yet
            row = None
        got = -1 if row is None else int(row[0])
        if got == want:
            return got
        time.sleep(0.05)
    return got


def test_push_watch_follows_new_and_deleted_sessions_until_interrupted(
    tmp_path: Path, pg_url: str
) -> None:
    d = write_store(tmp_path / "store", only=["cafe", "billing"])
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [*_push_cmd(pg_url, d), "--watch", "--interval", "0.1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert _wait_count(pg_url, 2, proc) == 2
        put(d, "late", ["a session written while watching"])
        assert _wait_count(pg_url, 3, proc) == 3
        (d / "cafe.json").unlink()
        assert _wait_count(pg_url, 2, proc) == 2
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out.decode().count("pushed to") == 3  # the first pass and the two changes


def _pi_store(root: Path) -> Path:
    folder = root / "--home-u-zephyr--"
    folder.mkdir(parents=True)

    def msg(eid: str, parent: str | None, ts: str, message: dict[str, object]) -> str:
        return json.dumps(
            {
                "type": "message",
                "id": eid,
                "parentId": parent,
                "timestamp": f"2025-03-04T{ts}.000Z",
                "message": message,
            }
        )

    lines = [
        json.dumps(
            {
                "type": "session",
                "version": 3,
                "id": "pi-zephyr",
                "timestamp": "2025-03-04T10:00:00.000Z",
                "cwd": "/home/u/zephyr",
            }
        ),
        msg("a1", None, "10:00:01", {"role": "user", "content": "plan the zephyr migration"}),
        msg(
            "a2",
            "a1",
            "10:01:00",
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "secretthoughtword"},
                    {"type": "text", "text": "we will use quokka adapters"},
                ],
            },
        ),
    ]
    (folder / "2025-03-04T10-00-00-000Z_pi-zephyr.jsonl").write_text("\n".join(lines) + "\n")
    return root


def test_a_pi_store_is_pushed_without_its_hidden_parts_unless_asked(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pi = _pi_store(tmp_path / "pi")
    praison = write_store(tmp_path / "store", only=["cafe"])
    args = ["push", "--to", pg_url, "--store", f"pi:{pi}", "--store", str(praison)]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    assert "2 sessions sent" in res.stdout

    def stored() -> str:
        with psycopg.connect(pg_url) as conn:
            rows = conn.execute("SELECT kind, data FROM sb_sessions ORDER BY kind").fetchall()
        assert [r[0] for r in rows] == ["pi", "praisonai"]
        return rows[0][1]

    assert "quokka" in stored() and "secretthoughtword" not in stored()
    monkeypatch.setenv("SESSION_BROWSER_INDEX_URL", pg_url)
    res = CliRunner().invoke(main, ["search", "source:pi", "zephyr", "--json"])
    assert [h["session_id"] for h in json.loads(res.stdout)["results"]] == ["pi-zephyr"]
    res = CliRunner().invoke(main, ["search", "source:pi", "cafe", "--json"])
    assert json.loads(res.stdout)["results"] == []
    res = CliRunner().invoke(main, [*args, "--include-hidden"])
    assert res.exit_code == 0, res.output
    assert "secretthoughtword" in stored()
    # in:tools searches the hidden parts pushed, with nothing to say about them
    res = CliRunner().invoke(main, ["search", "in:tools", "secretthoughtword", "--json"])
    out = json.loads(res.stdout)
    assert [h["session_id"] for h in out["results"]] == ["pi-zephyr"]
    assert "the team index holds no hidden parts" not in res.stderr
    res = CliRunner().invoke(main, ["search", "secretthoughtword", "--json"])
    assert json.loads(res.stdout)["results"] == []


def test_the_config_file_names_the_team_index_and_index_status_shows_it(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = write_store(tmp_path / "store", only=["cafe", "billing"])
    config = tmp_path / "config"
    config.mkdir()
    monkeypatch.setenv("SESSION_BROWSER_CONFIG_DIR", str(config))
    monkeypatch.delenv("SESSION_BROWSER_INDEX_URL", raising=False)
    # a password in the URL (trust auth ignores it): never printed
    url = pg_url.replace("postgres@", "postgres:s3cretpw@")
    (config / "settings.json").write_text(json.dumps({"index_url": url}))
    res = CliRunner().invoke(main, ["push", "--store", str(d), "--machine", "lab9"])
    assert res.exit_code == 0, res.output
    assert "2 sessions sent" in res.stdout
    res = CliRunner().invoke(main, ["search", "résumé", "--json"])
    assert [h["store"] for h in json.loads(res.stdout)["results"]] == [f"{local_user()}@lab9"]
    res = CliRunner().invoke(main, ["index", "status", "--json"])
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout)["team"]
    assert (info["sessions"], info["messages"], info["machines"]) == (2, 5, 1)
    assert info["per_machine"] == {"lab9": 2} and info["schema_version"] >= 1
    assert "s3cretpw" not in res.stdout and ":***@" in info["index"]
    res = CliRunner().invoke(main, ["index", "status"])
    assert "2 sessions, 5 messages from 1 machine(s)" in res.stdout and "s3cretpw" not in res.stdout
    # the environment wins over the config file, --index over both
    monkeypatch.setenv("SESSION_BROWSER_INDEX_URL", f"postgresql://x:envpw@/none?host={tmp_path}")
    res = CliRunner().invoke(main, ["index", "status"])
    assert res.exit_code == 1 and "envpw" not in res.stderr and "team index" in res.stderr
    res = CliRunner().invoke(main, ["--index", url, "index", "status", "--json"])
    assert json.loads(res.stdout)["team"]["sessions"] == 2
    # a local store named with --store is its own index status
    res = CliRunner().invoke(main, ["index", "status", "--store", str(d), "--json"])
    assert "stores" in json.loads(res.stdout)


def test_pg_trgm_in_a_schema_not_searched_turns_the_typo_pass_off_not_the_index(
    pg_url: str,
) -> None:
    from psycopg.conninfo import make_conninfo

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA a")
        conn.execute("CREATE SCHEMA b")
    in_a = make_conninfo(pg_url, options="-c search_path=a")
    in_b = make_conninfo(pg_url, options="-c search_path=b")
    with PgIndexStore(in_a) as team:
        assert team.has_trgm  # the extension made in schema a
    with PgIndexStore(in_b) as team:  # b cannot see a's operator classes
        assert not team.has_trgm
        assert team.search("anything") == []


def test_a_message_vector_is_the_vector_of_its_words_positions_and_all(pg_url: str) -> None:
    from session_browser.core.pgindex.tsv import message_vector, tsvector_literal

    texts = [
        "",
        "Billing migration: the THE the billing, Café au lait!",
        "Snake_case x2Y __init__ A-B ok\tGo\nDONE 42",
        " ".join(["loop"] * 300 + ["done", "loop"]),  # more positions than PostgreSQL keeps
        " ".join(["w"] * 17_000 + ["end", "w"]),  # positions past the last one
        "naïve Straße x" + "y" * 600 + " z",
        "ok " + "é" * 1100 + " then",  # a token too long to be a lexeme (2,200 bytes)
    ]
    with psycopg.connect(pg_url) as conn:
        for text in texts:
            fast, toks = message_vector(text)
            slow, distinct = tsvector_literal(text)
            assert list(dict.fromkeys(toks)) == distinct
            same = conn.execute(
                "SELECT %s::tsvector = %s::tsvector, %s::tsvector::text", (fast, slow, fast)
            ).fetchone()
            assert same is not None and same[0], (text[:40], same[1][:200])


def test_a_frequent_word_read_among_the_newest_messages_first_gives_the_same_sessions(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import session_browser.core.pgindex.engine as pgstore
    from session_browser.core.pgindex.engine import PgEngine

    d = tmp_path / "store"
    d.mkdir()
    for n in range(60):  # "weather" in every message of the first sessions, rarer later
        every = 1 if n < 20 else 5
        texts = [
            f"weather note {n} line {i}" if i % every == 0 else f"other words {n} {i}"
            for i in range(10)
        ]
        put(d, f"s{n:02d}", texts, start=T0 + n * HOUR)
    _pushed(d, pg_url)
    local = SqliteSessionStore(d)
    team = PgIndexStore(pg_url)
    monkeypatch.setattr(pgstore, "SCAN_MIN", 20)
    monkeypatch.setattr(pgstore, "SCAN_FACTOR", 2)
    try:
        queries = ["weather", "weather | other", "weather note", "weather -other"]
        monkeypatch.setattr(pgstore, "RECENT_MIN_DF", 10**9)  # the whole match set
        whole = [_top(team.search(q, limit=10)) for q in queries]
        monkeypatch.setattr(pgstore, "RECENT_MIN_DF", 1)
        assert PgEngine(team)._recent_bound(team._df(Term(("weather",), "weather")), 20)
        newest = [_top(team.search(q, limit=10)) for q in queries]
        monkeypatch.setattr(pgstore, "RECENT_MARGIN", 0.1)  # too narrow a range: read again
        narrow = [_top(team.search(q, limit=10)) for q in queries]
        want = [_top(local.search(q, limit=10)) for q in queries]
        assert whole == newest == narrow
        assert [w[:3] for w in want] == [g[:3] for g in newest]
        assert all(newest)
    finally:
        team.close()
        local.close()
