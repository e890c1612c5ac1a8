"""Special files and symlinks in the sources' trees, through the real CLI in a subprocess.

A FIFO (which blocks a plain ``open``) or a link to ``/dev/zero`` (which never ends) among a
Claude Code session's subagent files, a Codex rollout or a Pi session file is skipped and
counted, the rest read: ``search`` (indexed and ``--no-index``), ``recent`` and ``show``
finish. A transcript, a ``subagents`` folder or a rollout that is a symlink is never
followed, so what it points at outside the tree is never read; ``index status`` counts what
was left out. The subprocess timeout is only a guard: each test asserts what was printed.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from session_browser.core.files import NotRegularFile, open_regular, read_file_bytes
from session_browser.core.sources.claude.source import ClaudeSource
from session_browser.core.sources.codex_source import CodexSource
from session_browser.core.sources.pi.source import PiSource
from tests.core.test_claude import Transcript, text
from tests.core.test_codex import Rollout
from tests.core.test_pi import assistant, header, user, write_lines

SID = "11111111-2222-3333-4444-555555555555"
LINKED_SID = "99999999-2222-3333-4444-555555555555"
TID = "019e0000-1111-7222-8333-944445555666"
LINKED_TID = "019e0000-1111-7222-8333-000000000000"
GUARD = 60  # seconds: a hang fails the test instead of stalling the run


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "session_browser", *args],
        capture_output=True,
        text=True,
        timeout=GUARD,
        env={**os.environ, "COLUMNS": "200"},
    )


def ok(*args: str) -> str:
    proc = cli(*args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def found(*args: str) -> list[str]:
    proc = cli("search", *args, "--json")
    hits = [h["session_id"] for h in json.loads(proc.stdout)["results"]]
    assert proc.returncode == (0 if hits else 1), proc.stderr  # 1: no match, as grep
    return hits


def specials(folder: Path, stem: str) -> None:
    """A FIFO and a link to /dev/zero named ``<stem>-fifo.jsonl`` / ``<stem>-zero.jsonl``."""
    folder.mkdir(parents=True, exist_ok=True)
    os.mkfifo(folder / f"{stem}-fifo.jsonl")
    os.symlink("/dev/zero", folder / f"{stem}-zero.jsonl")


@pytest.fixture
def claude(tmp_path: Path) -> Path:
    """A Claude Code projects dir: one session with a real subagent run and special files
    in ``subagents/`` and beside it (older builds' ``agent-*.jsonl``); a transcript that is
    a symlink to a file outside the tree; a session whose ``subagents`` folder is a
    symlink to a folder outside it."""
    root = tmp_path / "projects"
    project = root / "-home-someone-project"
    outside = tmp_path / "outside"
    t = Transcript(SID)
    t.prompt("how do we migrate the billing ledger")
    t.answer("m1", text("Use an expand and contract migration."))
    t.write(project / f"{SID}.jsonl")
    sub = Transcript(SID, agentId="a1", isSidechain=True)
    sub.prompt("review the ledger schema")
    sub.answer("s1", text("The quokkaschema columns are consistent."))
    sub.write(project / SID / "subagents" / "agent-a1.jsonl")
    specials(project / SID / "subagents", "agent-sub")
    specials(project, "agent-old")  # older builds' sibling files

    secret = Transcript(LINKED_SID)
    secret.prompt("the outsideword lives outside the tree")
    secret.answer("x1", text("outsideword answer"))
    os.symlink(secret.write(outside / "secret.jsonl"), project / f"{LINKED_SID}.jsonl")

    other = Transcript("22222222-2222-3333-4444-555555555555")
    other.prompt("a session with a linked subagents folder")
    other.answer("o1", text("nothing to see"))
    other.write(project / "other.jsonl")
    agent = Transcript("22222222-2222-3333-4444-555555555555", agentId="b1", isSidechain=True)
    agent.prompt("linked agent")
    agent.answer("b1", text("the linkedagentword"))
    agent.write(outside / "subagents" / "agent-b1.jsonl")
    (project / "other").mkdir()
    os.symlink(outside / "subagents", project / "other" / "subagents")
    return root


@pytest.fixture
def codex(tmp_path: Path) -> Path:
    """A Codex sessions dir: one rollout, a FIFO and a /dev/zero link named as rollouts, and
    a rollout that is a symlink to one outside the tree."""
    day = tmp_path / "codex" / "sessions" / "2026" / "05" / "11"
    r = Rollout(TID)
    r.event("user_message", message="what about the pelican cache")
    r.message("assistant", "The pelican cache expires hourly.")
    r.write(day / f"rollout-2026-05-11T08-26-55-{TID}.jsonl")
    specials(day, f"rollout-2026-05-11T09-00-00-{TID[:-4]}0001")
    linked = Rollout(LINKED_TID)
    linked.event("user_message", message="the codexlinkword question")
    linked.message("assistant", "codexlinkword answer")
    target = linked.write(
        tmp_path / "elsewhere" / f"rollout-2026-05-11T10-00-00-{LINKED_TID}.jsonl"
    )
    os.symlink(target, day / target.name)
    return day.parents[2]


@pytest.fixture
def pi(tmp_path: Path) -> Path:
    root = tmp_path / "pi" / "sessions" / "--work-proj--"
    write_lines(root / "s1.jsonl", [header("s1"), user("the heron config"), assistant("in etc")])
    specials(root, "pi")
    elsewhere = write_lines(
        tmp_path / "away" / "s2.jsonl", [header("s2"), user("piLinkword"), assistant("no")]
    )
    os.symlink(elsewhere, root / "s2.jsonl")
    return root.parent


def test_claude_special_files_and_links_are_skipped_and_counted(claude: Path) -> None:
    store = ["--store", f"claude:{claude}"]
    for mode in ([], ["--no-index"]):
        assert found("quokkaschema", *store, *mode) == [SID]  # the real subagent run is read
        assert found("billing ledger", *store, *mode) == [SID]
        assert found("outsideword", *store, *mode) == []  # a linked transcript: never read
        assert found("linkedagentword", *store, *mode) == []  # a linked subagents folder
        recent = ok("recent", *store, *mode, "--json")
        ids = {r["session_id"] for r in json.loads(recent)["results"]}
        assert ids == {SID, "22222222-2222-3333-4444-555555555555"}
    shown = ok("show", SID, "--window", "20", *store)
    assert "The quokkaschema columns are consistent." in shown
    status = ok("index", "status", *store)
    # The FIFOs in subagents/ and beside the main files; the /dev/zero links there, the
    # linked transcript and the linked subagents folder.
    assert "not read: 2 special files, 4 symlinks" in " ".join(status.split())
    info = json.loads(ok("index", "status", *store, "--json"))
    (entry,) = info["stores"]
    assert entry["refused"] == {"special file": 2, "symlink": 4}


def test_codex_special_files_and_links_are_skipped_and_counted(codex: Path) -> None:
    store = ["--store", f"codex:{codex}"]
    for mode in ([], ["--no-index"]):
        assert found("pelican cache", *store, *mode) == [TID]
        assert found("codexlinkword", *store, *mode) == []
        ids = {
            r["session_id"] for r in json.loads(ok("recent", *store, *mode, "--json"))["results"]
        }
        assert ids == {TID}
    assert "The pelican cache expires hourly." in ok("show", TID, *store)
    status = " ".join(ok("index", "status", *store).split())
    assert "not read: 1 special file, 2 symlinks" in status


def test_pi_special_files_and_links_are_skipped(pi: Path) -> None:
    store = ["--store", f"pi:{pi}"]
    for mode in ([], ["--no-index"]):
        assert found("heron", *store, *mode) == ["s1"]
        assert found("piLinkword", *store, *mode) == []
    assert "in etc" in ok("show", "s1", *store)


# ---------------------------------------------------------------------- the opener


@pytest.fixture
def odd_files(tmp_path: Path) -> Iterator[dict[str, Path]]:
    regular = tmp_path / "regular.jsonl"
    regular.write_bytes(b"{}\n")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    zero = tmp_path / "zero"
    os.symlink("/dev/zero", zero)
    link = tmp_path / "link"
    os.symlink(regular, link)
    sock_path = tmp_path / "sock"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    try:
        yield {
            "regular": regular,
            "fifo": fifo,
            "zero": zero,
            "link": link,
            "socket": sock_path,
            "dir": tmp_path,
            "dev": Path("/dev/zero"),
        }
    finally:
        sock.close()


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("fifo", "special file"),
        ("dev", "special file"),
        ("socket", "special file"),
        ("dir", "directory"),
        ("zero", "symlink"),
        ("link", "symlink"),
    ],
)
def test_open_regular_refuses_without_blocking(
    odd_files: dict[str, Path], name: str, kind: str
) -> None:
    with pytest.raises(NotRegularFile) as caught:
        open_regular(odd_files[name])
    assert caught.value.kind == kind
    assert str(odd_files[name]) in str(caught.value)


def test_open_regular_reads_a_regular_file_and_follows_links_only_when_asked(
    odd_files: dict[str, Path],
) -> None:
    with open_regular(odd_files["regular"]) as fh:
        assert fh.read() == b"{}\n"
    with open_regular(odd_files["link"], follow_links=True) as fh:
        assert fh.read() == b"{}\n"
    with pytest.raises(NotRegularFile) as caught:  # followed, still a device
        open_regular(odd_files["zero"], follow_links=True)
    assert caught.value.kind == "special file"
    with pytest.raises(NotRegularFile):
        read_file_bytes(odd_files["fifo"])
    fds = len(os.listdir("/proc/self/fd"))
    for name in ("fifo", "dev", "dir", "zero"):
        with pytest.raises(NotRegularFile):
            open_regular(odd_files[name])
    assert len(os.listdir("/proc/self/fd")) == fds  # no descriptor left open


@pytest.mark.parametrize("source", [ClaudeSource, CodexSource, PiSource])
def test_listing_counts_what_it_does_not_take(
    source: Any, claude: Path, codex: Path, pi: Path
) -> None:
    root = {ClaudeSource: claude, CodexSource: codex, PiSource: pi}[source]
    src = source(root)
    files = src.list_files()
    assert files and all("fifo" not in n and "zero" not in n for n in files)
    assert src.refused.get("special file", 0) >= 1 and src.refused.get("symlink", 0) >= 2
