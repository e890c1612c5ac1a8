"""``session-browser forget``: a secret planted in sessions of every source kind, copied into
everything we keep (index, vault versions with a subagent part, trash, undo journal, query
history, saved searches, a real team index), is erased from every byte of our dirs and from
a ``pg_dump``; the next index update, vault keep and push leave it out while the agents'
own files still hold it."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.history import load_history, remember
from session_browser.core.paths import cache_dir, data_dir
from session_browser.core.saved_searches import save_search
from session_browser.core.store import DefaultSessionStore
from session_browser.core.vault import compact
from session_browser.core.vault.format import DESCRIBED_Z, DESCRIPTION_DICT, MAGIC, scan_pack
from session_browser.core.vault.store import Vault
from session_browser.core.vault.zdict import ZDICT
from tests.core.test_claude import Transcript, text
from tests.core.test_codex import Rollout
from tests.core.test_pi import assistant, header, user, write_lines
from tests.pg.conftest import Cluster

SECRET = "sk-forgetme-7q3ZxK9wLmP2vR8tQ"
TOKEN = b"7q3zxk9wlmp2vr8tq"  # the secret's rarest word, as the indexes fold it
CLAUDE_ID = "11111111-2222-3333-4444-555555555555"
CODEX_ID = "019e0000-1111-7222-8333-944445555666"


def run(*args: str, code: int = 0) -> str:
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code == code, (args, res.output)
    return res.stdout


def occurrences(data: bytes, needles: list[bytes] | None = None) -> int:
    if needles is not None:
        return sum(data.count(n) for n in needles)
    low = data.lower()
    return data.count(SECRET.encode()) + low.count(TOKEN)


def pack_texts(path: Path) -> list[bytes]:
    """Every chunk and description of a vault pack, inflated (so a grep sees what it
    holds)."""
    out = []
    with open(path, "rb") as fh:
        for offset, magic, flag, _digest, length in scan_pack(fh):
            fh.seek(offset + 48)
            body = fh.read(length)
            if magic == MAGIC:
                dec = zlib.decompressobj(zdict=ZDICT) if flag else zlib.decompressobj()
                out.append(dec.decompress(body) + dec.flush())
            elif flag == DESCRIBED_Z:
                dec = zlib.decompressobj(zdict=DESCRIPTION_DICT)
                out.append(dec.decompress(body) + dec.flush())
            else:
                out.append(body)
    return out


def blobs_inflated(path: Path) -> list[bytes]:
    """Every compressed value in an SQLite file's tables, inflated (a parse state is)."""
    out = []
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for name in names:
            with contextlib.suppress(sqlite3.Error):
                for row in db.execute(f'SELECT * FROM "{name}"'):
                    for value in row:
                        if isinstance(value, bytes):
                            with contextlib.suppress(zlib.error):
                                out.append(zlib.decompress(value))
    finally:
        db.close()
    return out


def found_in_our_dirs() -> list[str]:
    """Every file of our cache and data dirs holding the secret (packs read decompressed,
    and the compressed values of the index files inflated)."""
    return found_in_our_dirs_of(None)


def found_in_our_dirs_of(needles: list[bytes] | None) -> list[str]:
    """:func:`found_in_our_dirs` for ``needles`` (None: the secret)."""
    hits = []
    for root in (cache_dir(), data_dir()):
        for path in sorted(root.rglob("*")):
            if not path.is_file() or path.is_symlink():
                continue
            data = path.read_bytes()
            blobs = [data] + (pack_texts(path) if path.suffix == ".pack" else [])
            if path.suffix == ".sqlite3":
                blobs += blobs_inflated(path)
            if any(occurrences(b, needles) for b in blobs):
                hits.append(str(path))
    return hits


def pg_dump(cluster: Cluster, url: str) -> bytes:
    done = subprocess.run(
        [str(cluster.bindir / "pg_dump"), "--no-owner", url], capture_output=True, check=True
    )
    return done.stdout


def plant(root: Path) -> tuple[list[str], dict[str, Path]]:
    """Sessions of every kind holding the secret (and one that does not): the --store args
    and the agents' files."""
    praison = DefaultSessionStore(root / "praison" / "sessions", retention="keep_all")
    praison.add_user_message("p-secret", f"here is the key {SECRET} for the billing api")
    praison.add_assistant_message("p-secret", "noted, rotating it tomorrow")
    praison.add_user_message("p-clean", "the walrus migration plan is ready")
    pi = write_lines(
        root / "pi" / "--work-proj--" / "2025-01-02_pi.jsonl",
        [header("pi-secret"), user(f"deploy with {SECRET} please"), assistant("deployed")],
    )
    claude = Transcript(CLAUDE_ID)
    claude.prompt("review the ledger schema with a subagent")
    claude.answer("m1", text("I asked a subagent."))
    folder = root / "claude" / "-home-someone-project"
    main_file = claude.write(folder / f"{CLAUDE_ID}.jsonl")
    sub = Transcript(CLAUDE_ID, agentId="a1", isSidechain=True)
    sub.prompt("review the ledger schema")
    sub.answer("s1", text(f"The schema uses {SECRET} in its config."))
    sub.write(folder / CLAUDE_ID / "subagents" / "agent-a1.jsonl")
    rollout = Rollout(CODEX_ID)
    rollout.prompt(f"why does {SECRET} fail")
    rollout.answer("It expired.")
    codex = rollout.write(
        root / "codex" / "sessions" / "2026" / "05" / "11" / f"rollout-{CODEX_ID}.jsonl"
    )
    stores = [
        "--store", str(praison.session_dir),
        "--store", f"pi:{root / 'pi'}",
        "--store", f"claude:{root / 'claude'}",
        "--store", f"codex:{root / 'codex' / 'sessions'}",
    ]  # fmt: skip
    files = {
        "praison": praison.session_path("p-secret"),
        "pi": pi,
        "claude": main_file,
        "codex": codex,
    }
    return stores, files


def grow(files: dict[str, Path]) -> None:
    """A second version of each file (the vault keeps both)."""
    DefaultSessionStore(files["praison"].parent, retention="keep_all").add_user_message(
        "p-secret", "and one more turn"
    )
    with open(files["pi"], "a", encoding="utf-8") as fh:
        fh.write(json.dumps(user("one more", ts="2025-01-02T03:09:00.000Z")) + "\n")


def quarantine_and_undo(sessions: Path) -> None:
    """A damaged copy of the secret's session discarded into our trash, then undone: the
    trash and the undo journal hold copies."""
    raw = (sessions / "p-secret.json").read_bytes()
    corrupt = sessions / "p-secret.json.corrupt-1700000000000"
    corrupt.write_bytes(raw[: raw.index(b"rotating")])
    run("quarantine", "discard", corrupt.name, "--store", str(sessions), "-y")
    run("quarantine", "undo", "--yes")
    corrupt.unlink()  # (the agent's dir is not ours: a copy left there is not the point)
    corrupt.write_bytes(raw[: raw.index(b"rotating")])
    run("quarantine", "discard", corrupt.name, "--store", str(sessions), "-y")


def ids_found(stores: list[str], query: str) -> set[str]:
    res = CliRunner().invoke(main, ["search", query, *stores, "--json"])
    return {h["session_id"] for h in json.loads(res.stdout)["results"]} if res.stdout else set()


def test_forget_text_reaches_every_copy_and_stays_forgotten(
    tmp_path: Path, pg_cluster: Cluster, pg_url: str
) -> None:
    stores, files = plant(tmp_path)
    run("index", "update", *stores)
    grow(files)
    run("index", "update", *stores)
    exports = tmp_path / "exports"
    exports.mkdir()
    run("export", "p-secret", "-o", str(exports / "p.json"), *stores)
    run("push", "--to", pg_url, "--include-hidden", *stores)
    quarantine_and_undo(files["praison"].parent)
    remember(f"key {SECRET}")
    save_search("billing key", SECRET)
    assert found_in_our_dirs() and occurrences(pg_dump(pg_cluster, pg_url))
    assert any("catalog.sqlite" in p or ".pack" in p for p in found_in_our_dirs())
    assert any("/trash/" in p for p in found_in_our_dirs())
    assert any("/journal/" in p for p in found_in_our_dirs())

    before = {p: Path(p).read_bytes() for p in found_in_our_dirs()}
    out = run("forget", "--text", SECRET, "--index", pg_url)
    assert "dry run" in out and SECRET not in out
    for word in ("index", "vault", "trash folder", "undo journal entry", "query history"):
        assert word in out, word
    assert "team index" in out and "saved searches" in out
    for sid in ("p-secret", "pi-secret", CLAUDE_ID, CODEX_ID):
        assert sid in out
    assert "p-clean" not in out
    assert {p: Path(p).read_bytes() for p in found_in_our_dirs()} == before  # nothing changed

    out = run("forget", "--secret", SECRET, "--index", pg_url, "--yes")
    assert SECRET not in out and "VACUUM FULL of sb_sessions" in out
    assert "may still hold copies in its WAL" in out
    run("vault", "check")
    assert found_in_our_dirs() == []
    assert occurrences(pg_dump(pg_cluster, pg_url)) == 0

    # another pass of everything takes nothing back while the agents' files still hold it
    for f in files.values():
        assert SECRET.encode() in f.read_bytes() or f == files["claude"]
    run("index", "update", *stores)
    run("push", "--to", pg_url, "--include-hidden", *stores)
    grow(files)
    run("index", "update", *stores)
    assert found_in_our_dirs() == []
    assert occurrences(pg_dump(pg_cluster, pg_url)) == 0
    assert ids_found(stores, "walrus migration") == {"p-clean"}
    assert SECRET.encode() in (exports / "p.json").read_bytes()  # not ours: left as it is

    log = json.loads(run("forget", "--log", "--json"))["log"]
    assert len(log) == 1 and log[0]["what"] == "text" and "p-secret" in log[0]["session_ids"]
    assert SECRET not in json.dumps(log)
    denied = json.loads(run("forget", "--list", "--json"))["denied"]
    assert [d["kind"] for d in denied] == ["text", "session", "session", "session", "session"]
    assert SECRET not in (data_dir() / "forget" / "denied.json").read_text()


def test_forget_a_deleted_session_only_the_vault_has(
    tmp_path: Path, pg_cluster: Cluster, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSION_BROWSER_INDEX_URL", pg_url)  # a team index configured
    sessions = tmp_path / "sessions"
    store = DefaultSessionStore(sessions, retention="keep_all")
    store.add_user_message("gone-1", f"the deploy key is {SECRET}")
    store.add_user_message("kept-1", "the otter census is due")
    args = ["--store", str(sessions)]
    run("index", "update", *args)
    run("push", *args)
    store.add_user_message("gone-1", "second turn")
    run("index", "update", *args)
    store.session_path("gone-1").unlink()
    run("index", "update", *args)
    assert json.loads(run("vault", "log", "gone-1", "--json"))["versions"]
    assert found_in_our_dirs() and occurrences(pg_dump(pg_cluster, pg_url))

    out = run("forget", "gone-1")
    assert "vault" in out and "2 version(s)" in out and "dry run" in out
    assert "team index: 1 session(s): gone-1" in out
    run("forget", "gone-1", "--yes")
    assert found_in_our_dirs() == []
    assert occurrences(pg_dump(pg_cluster, pg_url)) == 0
    assert b"otter census" in pg_dump(pg_cluster, pg_url)
    run("vault", "log", "gone-1", code=1)
    run("vault", "check")
    # a catalog rebuilt from the packs alone does not bring it back either
    run("vault", "rebuild")
    run("vault", "log", "gone-1", code=1)
    assert json.loads(run("vault", "log", "kept-1", "--json"))["versions"]
    run("index", "update", *args)
    assert found_in_our_dirs() == []
    assert ids_found(args, "otter census") == {"kept-1"}
    # the session's file written again by its agent stays out while it is denied
    DefaultSessionStore(sessions).add_user_message("gone-1", f"again {SECRET}")
    run("index", "update", *args)
    assert found_in_our_dirs() == []
    entry = json.loads(run("forget", "--list", "--json"))["denied"][0]
    assert entry["session_id"] == "gone-1"
    run("forget", "--undo-deny", entry["id"])
    run("index", "update", *args)
    assert ids_found(args, "again") == {"gone-1"}


def test_delete_file_only_for_praisonai_and_bad_requests(tmp_path: Path) -> None:
    stores, files = plant(tmp_path)
    run("index", "update", *stores)
    res = CliRunner().invoke(main, ["forget", CLAUDE_ID, "--delete-file", "--yes"])
    assert res.exit_code == 1 and "read-only" in res.stderr and "nothing was erased" in res.stderr
    assert res.stderr.count("\n") == 1
    assert files["claude"].exists() and CLAUDE_ID in run("forget", CLAUDE_ID)  # still kept
    # a query or a backup that only mentions an id is not a copy of that session
    remember("class1 p-secret-notes")
    remember("find p-secret now")
    assert "query history: 1" in run("forget", "p-secret")
    run("forget", "p-secret", "--delete-file", "--yes")
    assert not files["praison"].exists()
    assert load_history() == ["class1 p-secret-notes"]
    for args, why in (
        ([], "name a session id or --text"),
        (["--text", "  "], "non-blank"),
        (["x", "--redact"], "--redact goes with --text"),
        (["--undo-deny", "nope"], "no denylist entry"),
    ):
        res = CliRunner().invoke(main, ["forget", *args])
        assert res.exit_code != 0 and why in res.stderr, (args, res.output)
        assert res.stderr.count("\n") == 1


def test_redact_keeps_the_sessions_with_the_text_replaced_everywhere(
    tmp_path: Path, pg_cluster: Cluster, pg_url: str
) -> None:
    stores, files = plant(tmp_path)
    run("index", "update", *stores)
    grow(files)
    run("index", "update", *stores)
    run("push", "--to", pg_url, "--include-hidden", *stores)
    versions = json.loads(run("vault", "log", "p-secret", "--json"))["versions"]
    assert len(versions) == 2

    out = run("forget", "--text", SECRET, "--redact", "--index", pg_url)
    assert "text redacted in" in out and "dry run" in out
    run("forget", "--text", SECRET, "--redact", "--index", pg_url, "--yes")
    assert found_in_our_dirs() == []
    dump = pg_dump(pg_cluster, pg_url)
    assert occurrences(dump) == 0 and b"[REDACTED:forgotten]" in dump
    # the sessions stay: every version (same times), readable, found by their other words
    after = json.loads(run("vault", "log", "p-secret", "--json"))["versions"]
    assert [v["seen"] for v in after] == [v["seen"] for v in versions]
    run("vault", "check")
    out_dir = tmp_path / "restored"
    run("vault", "restore", "p-secret", "--version", "1", "--to", str(out_dir))
    restored = (out_dir / "p-secret.json").read_text(encoding="utf-8")
    assert "[REDACTED:forgotten]" in restored and SECRET not in restored
    assert json.loads(restored)["session_id"] == "p-secret"
    assert ids_found(stores, "billing api") == {"p-secret"}
    # the catalog rebuilt from the packs alone names the redacted versions, not the old
    run("vault", "rebuild")
    run("vault", "check")
    assert len(json.loads(run("vault", "log", "p-secret", "--json"))["versions"]) == 2
    # the next passes (the agents' files still hold it, and grow) keep it redacted
    grow(files)
    run("index", "update", *stores)
    run("push", "--to", pg_url, "--include-hidden", *stores)
    assert found_in_our_dirs() == []
    assert occurrences(pg_dump(pg_cluster, pg_url)) == 0
    assert len(json.loads(run("vault", "log", "p-secret", "--json"))["versions"]) == 3
    assert SECRET.encode() in files["praison"].read_bytes()


def test_an_index_held_open_is_said_and_scrubbed_by_the_next_forget(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    store = DefaultSessionStore(sessions, retention="keep_all")
    store.add_user_message("s-1", f"token {SECRET}")
    store.add_user_message("s-2", "the heron count")
    run("index", "update", "--store", str(sessions))
    (index_file,) = (cache_dir() / "index").glob("*.sqlite3")
    reader = sqlite3.connect(index_file, isolation_level=None)
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM sessions").fetchone()[0] == 2  # a snapshot
    try:
        out = run("forget", "--text", SECRET, "--yes")
        assert "another process has it open" in out
    finally:
        reader.execute("COMMIT")
        reader.close()
    out = run("forget", "--text", SECRET, "--yes")
    assert "nothing we keep holds that text" in out and "not vacuumed" not in out
    assert found_in_our_dirs() == []


def test_a_forget_that_fails_midway_leaves_the_vault_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions = tmp_path / "sessions"
    store = DefaultSessionStore(sessions, retention="keep_all")
    store.add_user_message("s-1", f"token {SECRET}")
    store.add_user_message("s-2", "the heron count")
    run("index", "update", "--store", str(sessions))
    packs = sorted(p.name for p in (data_dir() / "vault" / "packs").iterdir())

    real = compact._rewrite

    def fail(vault: Vault, forgotten: set[tuple[str, str]]) -> list[int]:
        real(vault, forgotten)  # the new pack is written...
        assert len(list((data_dir() / "vault" / "packs").iterdir())) > len(packs)
        raise OSError(28, "No space left on device")  # ... and the catalog cannot take it

    monkeypatch.setattr(compact, "_rewrite", fail)
    res = CliRunner().invoke(main, ["forget", "s-1", "--yes"])
    assert res.exit_code == 1 and res.stderr.count("\n") == 1
    assert sorted(p.name for p in (data_dir() / "vault" / "packs").iterdir()) == packs
    run("vault", "check")
    assert len(json.loads(run("vault", "log", "s-1", "--json"))["versions"]) == 1
    # (only this patch undone: undoing them all would undo the test's own data dir too)
    monkeypatch.setattr(compact, "_rewrite", real)
    run("forget", "s-1", "--yes")  # once it can, the forget finishes
    assert found_in_our_dirs() == []
