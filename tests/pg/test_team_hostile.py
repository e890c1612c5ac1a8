"""The team index against hostile input: one huge message is pushed in memory bounded by its
size, a query word too long to index finds nothing, and no error prints a piece of the
password (however malformed the URL) or a row of session text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from session_browser.bench.heavy import write_one_message_session
from session_browser.cli import main
from session_browser.core.pgindex import PgIndexStore, mask_url, push_stores
from session_browser.core.pgindex.conn import error_line
from session_browser.core.query import tokenize
from session_browser.core.sources import SOURCES

from .corpus import put

REPO = Path(__file__).resolve().parents[2]


def _pushed(d: Path, url: str) -> None:
    push_stores(url, [(SOURCES["praisonai"].source(d), "praisonai")])


def _ids(url: str, query: str) -> list[str]:
    with PgIndexStore(url) as team:
        res = team.search_ex(query, limit=10)
        assert res.error is None, res.error
        return [h.session_id for h in res.hits]


def test_pushing_one_huge_message_peaks_under_four_times_its_size(
    tmp_path: Path, pg_url: str
) -> None:
    d = tmp_path / "store"
    d.mkdir()
    size = write_one_message_session(d / "huge.json", "huge", 60_000_000)
    env = {**os.environ, "PYTHONPATH": str(REPO), "HOME": str(tmp_path)}
    # The peak is read by the push process itself (VmHWM of its own image): the rusage a
    # parent gets keeps the high-water mark of the forked copy of the parent before exec, so
    # under a big test runner it would measure the runner, not the push.
    argv = ["session-browser", "push", "--to", pg_url, "--store", str(d)]
    code = (
        "import runpy, sys\n"
        f"sys.argv = {argv!r}\n"
        "try:\n"
        "    runpy.run_module('session_browser', run_name='__main__')\n"
        "finally:\n"
        "    hwm = [x for x in open('/proc/self/status') if x.startswith('VmHWM:')]\n"
        "    print('PEAK', hwm[0].split()[1], file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "1 sessions sent" in proc.stdout
    peaks = [line.split()[1] for line in proc.stderr.splitlines() if line.startswith("PEAK ")]
    assert len(peaks) == 1, proc.stderr
    peak = int(peaks[0]) * 1024
    assert peak <= 4 * size, f"peak RSS {peak / 1e6:.0f} MB for a {size / 1e6:.0f} MB message"
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT length(text), length(tsv) FROM sb_messages").fetchone()
    assert row is not None and row[0] >= size - 1000 and row[1] == 1  # one word: "ab"
    assert _ids(pg_url, "ab") == ["huge"]


def test_a_long_message_is_stored_whole_and_its_vector_is_its_first_part(
    tmp_path: Path, pg_url: str
) -> None:
    d = tmp_path / "store"
    d.mkdir()
    piece = "alphaword tab\there new\nline back\\slash nul\x00char café ∑ "
    text = piece * (3_000_000 // len(piece)) + " omegaword"  # past the vector's cap
    put(d, "long", [text, "short reply"])
    _pushed(d, pg_url)
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT text FROM sb_messages ORDER BY id").fetchall()
        data = conn.execute("SELECT data FROM sb_sessions").fetchone()
    assert [r[0] for r in rows] == [text.replace("\x00", "\ufffd"), "short reply"]
    assert data is not None and json.loads(data[0])["messages"][0]["content"] == text
    assert _ids(pg_url, "alphaword") == ["long"]
    assert _ids(pg_url, "slash") == ["long"]
    assert _ids(pg_url, "omegaword") == []  # past the first MAX_VECTOR_CHARS characters


def test_vector_tokens_read_a_huge_text_in_pieces_up_to_the_cap() -> None:
    from session_browser.core.pgindex.tsv import (
        MAX_VECTOR_CHARS,
        MAX_VECTOR_TOKENS,
        vector_tokens,
    )

    words = "Straße naïve x2Y Ölförderung über_alles ünd " * 3000
    assert vector_tokens(words) == tokenize(words)  # pieces never split a word
    huge = "ab " * 30_000_000  # 90 MB
    started = time.perf_counter()
    toks = vector_tokens(huge)
    assert time.perf_counter() - started < 1.0
    assert toks == ["ab"] * MAX_VECTOR_TOKENS
    cut = "a " * (MAX_VECTOR_CHARS // 2 - 1) + " bcd"  # "bcd" crosses the cap: left out
    assert vector_tokens(cut)[-1] == "a"
    assert vector_tokens("ok " + "z" * 2100 + " done") == ["ok", "done"]  # too long a lexeme


def test_many_distinct_words_outside_ascii_fit_in_one_vector(tmp_path: Path, pg_url: str) -> None:
    d = tmp_path / "store"
    d.mkdir()
    # 80,000 distinct words of 13 letters in Cyrillic: 2 MB of lexemes, past PostgreSQL's 1 MB
    letters = "абвгдежзиклмнопрстуфхцчшщэюя"
    words = ["слово" + "".join(letters[(n // 28**k) % 28] for k in range(8)) for n in range(80_000)]
    put(d, "cyrillic", [" ".join(words)])
    _pushed(d, pg_url)
    assert _ids(pg_url, words[0]) == ["cyrillic"]


def test_a_query_word_too_long_to_index_finds_nothing(tmp_path: Path, pg_url: str) -> None:
    d = tmp_path / "store"
    d.mkdir()
    long_word = "q" * 3000
    put(d, "one", [f"plain words {long_word}", "other"])
    _pushed(d, pg_url)
    for query in (long_word, f'"plain {long_word}"', long_word + "*", f"{long_word} -plain"):
        assert _ids(pg_url, query) == [], query
    assert _ids(pg_url, "plain") == ["one"]
    assert _ids(pg_url, f"plain -{long_word}") == []  # its text holds the word (as in SQLite)
    res = CliRunner().invoke(main, ["--index", pg_url, "search", long_word])
    assert res.exit_code == 1 and "internal error" not in res.output, res.output  # no match


def test_mask_url_is_linear() -> None:
    # (20,000 characters took a quadratic pattern about 14 s; a linear one takes milliseconds)
    for text in (
        "x" * 20_000,
        "postgresql://u:" + "x" * 20_000,
        "a://" * 5_000,
        "password=" + " a" * 10_000,
    ):
        started = time.perf_counter()
        mask_url(text)
        assert time.perf_counter() - started < 0.5, text[:20]


# Each a URL whose password libpq reads otherwise than it was written, and quotes.
MALFORMED = [
    "postgresql://team:Team@Pa55w0rd@localhost:1/db",  # an unencoded @
    "postgresql://team:Team Pa55w0rd@localhost:1/db",  # a space
    "postgresql://team:Team%zzPa55w0rd@localhost:1/db",  # a bad % escape
    "postgresql://team:Team%Pa55w0rd@localhost:1/db",
    "postgresql://team:Team/Pa55w0rd@localhost:1/db",  # an unencoded /
    "postgresql:///db?host=/nowhere&password=Team Pa55w0rd",  # in the query
    "host=/nowhere password=Team Pa55w0rd dbname=db",  # key/value, not a URL
]


@pytest.mark.parametrize("url", MALFORMED)
def test_a_malformed_password_never_shows_in_an_error(tmp_path: Path, url: str) -> None:
    store = tmp_path / "store"
    store.mkdir()
    put(store, "s", ["hello"])
    for args in (
        ["push", "--to", url, "--store", str(store)],
        ["--index", url, "search", "hello"],
    ):
        res = CliRunner().invoke(main, args, env={"SESSION_BROWSER_INDEX_URL": None})
        shown = res.output + (res.stderr if res.stderr_bytes is not None else "")
        for piece in ("Team", "Pa55w0rd", "Pa55", "w0rd", "zzPa"):
            assert piece not in shown, (args[:2], shown)
        if args[0] != "--index" or url.startswith("postgresql"):
            failed = 2 if "search" in args else 1  # search's errors are 2 (1: no match)
            assert res.exit_code == failed, shown
            assert len(res.stderr.strip().splitlines()) == 1, shown
    for piece in ("Team", "Pa55w0rd"):
        assert piece not in mask_url(url)


def test_error_line_removes_every_piece_of_the_password() -> None:
    url = "postgresql://team:Team Pa55w0rd@localhost/db"
    exc = psycopg.OperationalError('missing "=" after "Pa55w0rd" near Team')
    assert error_line(exc, url) == 'missing "=" after "***" near ***'
    short = "postgresql://team:ab cd@localhost/db"  # pieces too short to find safely
    line = error_line(psycopg.OperationalError('missing "=" after "cd"'), short)
    assert line == "OperationalError (postgresql://team:***@localhost/db)"


def test_a_push_failing_mid_copy_never_echoes_session_text(tmp_path: Path, pg_url: str) -> None:
    d = tmp_path / "store"
    d.mkdir()
    _pushed(d, pg_url)  # the schema
    with psycopg.connect(pg_url, autocommit=True) as conn:  # the server refuses one row
        conn.execute(
            "ALTER TABLE sb_messages ADD CONSTRAINT no_zebra CHECK (text NOT LIKE '%zebraword%')"
        )
    for n in range(3):
        put(d, f"s{n}", ["plain text", f"row {n} holds zebraword\tand more"])
    res = CliRunner().invoke(main, ["push", "--to", pg_url, "--store", str(d)])
    assert res.exit_code == 1
    err = res.stderr.strip()
    assert len(err.splitlines()) == 1 and "no_zebra" in err, err
    for text in ("zebraword", "plain text", "CONTEXT", "DETAIL", "COPY"):
        assert text not in res.output, res.output
