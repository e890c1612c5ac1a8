"""What the viewer's ``C`` copies is pasted into a real interactive bash in a pty, plain and
with bracketed paste, and nothing runs but the resume command itself.

Hostile Claude Code and Codex transcripts put into their dir or their session id the keys
that edit and submit a plain paste (Ctrl-U, CR), the end of a bracketed paste (``ESC [201~``),
a flag for an id, bidi, separator and no-break-space characters: the viewer copies nothing and
says why. A dir the shell would expand (``$(...)``, ``;``, backquotes) is quoted: the line
copied runs the resume command, with its arguments, in that dir, and nothing else. The
``claude`` and ``codex`` run here are stubs that note how they were called.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.viewer.screen import ViewerScreen
from tests.core.test_claude import Transcript, text
from tests.core.test_codex import Rollout, rollout_path

from .conftest import screen_text, settle
from .stores import NOW

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="no bash to paste into")

SID = "0a1b2c3d-1111-2222-3333-444455556666"
TID = "019e1625-789d-76c0-80ab-3724b5ddb799"
PROMPT = "rdy$ "  # the shell's prompt: it reads the next line
MARK = "pwned"  # the hostile payloads touch a file of this name, in the dir they run in
PAYLOAD = f"touch {MARK}"
CTRL_U_CR = f"\x15{PAYLOAD}\r#"  # kill the line, run the payload; the rest is a comment
PASTE_END = f"\x1b[201~{CTRL_U_CR}"  # end a bracketed paste first, then type as above
#: (what, where it goes: "cwd" or "id", the value put there)
HOSTILE = [
    ("ctrl-u-cr-in-dir", "cwd", f"/home/me/x{CTRL_U_CR}"),
    ("paste-end-in-dir", "cwd", f"/home/me/x{PASTE_END}"),
    ("ctrl-u-cr-in-id", "id", CTRL_U_CR),
    ("paste-end-in-id", "id", PASTE_END),
    ("flag-id", "id", "--dangerously-skip-permissions"),
    ("not-a-uuid", "id", "abc def"),
    ("bidi-in-dir", "cwd", "/home/me/\u202etxt.exe"),
    ("line-separator-in-dir", "cwd", "/home/me/a\u2028b"),
    ("nbsp-in-dir", "cwd", "/home/me/a\u00a0b"),
    ("bidi-in-id", "id", SID[:-1] + "\u2066"),
]
#: Dirs a shell would expand unquoted; they exist, and the line is offered for them.
QUOTED = [
    ("subst-in-dir", f"d $({PAYLOAD})"),
    ("semicolon-in-dir", f"e;{PAYLOAD};#"),
    ("backquote-in-dir", f"f`{PAYLOAD}`'g"),
]


@dataclass
class Case:
    name: str
    agent: str  # "claude" or "codex"
    session_id: str
    cwd: str
    word: str  # a word only this session holds
    copied: str = ""
    shown: str = ""  # the viewer's screen
    notice: str = ""


def hostile_stores(tmp: Path) -> tuple[list[str], list[Case]]:
    """Claude and Codex stores with one session per hostile value, and the cases."""
    cases: list[Case] = []
    n = 0
    for agent in ("claude", "codex"):
        plain_id = SID if agent == "claude" else TID
        for name, where, value in HOSTILE:
            n += 1
            sid = value if where == "id" else plain_id[:-4] + f"{n:04d}"
            cwd = value if where == "cwd" else str(tmp / "work")
            cases.append(Case(f"{agent}-{name}", agent, sid, cwd, f"hostileword{n}x"))
        for name, dirname in QUOTED:
            n += 1
            cwd = str(tmp / "work" / dirname)
            os.makedirs(cwd, exist_ok=True)
            cases.append(
                Case(f"{agent}-{name}", agent, plain_id[:-4] + f"{n:04d}", cwd, f"hostileword{n}x")
            )
    for i, case in enumerate(cases):
        if case.agent == "claude":
            t = Transcript(case.session_id, cwd=case.cwd)
            t.prompt(f"look at {case.word} please")
            t.answer("m1", text("Looked."))
            t.write(tmp / "claude" / "proj" / f"s{i}.jsonl")
        else:
            r = Rollout(case.session_id)
            r.lines[0]["payload"]["cwd"] = case.cwd
            r.prompt(f"look at {case.word} please")
            r.answer("Looked.")
            r.write(rollout_path(tmp / "codex", f"{TID[:-4]}{i:04d}"))
    return [f"claude:{tmp / 'claude'}", f"codex:{tmp / 'codex'}"], cases


async def copy_each(stores: list[str], cases: list[Case]) -> None:
    """Open each case's session in the viewer, press ``C``: what it copied, what it said."""
    app = SessionBrowserApp(Backend(stores, indexed=False), now=NOW, animate=False, keymap={})
    async with app.run_test(size=(120, 36)) as pilot:
        for case in cases:
            app.copy_to_clipboard("")
            app.open_session(case.session_id, store="", anchor=-1, terms=[], title="")
            await settle(pilot, app)
            viewer = app.screen
            assert isinstance(viewer, ViewerScreen) and viewer.session_id == case.session_id
            assert viewer.resume is not None, case.name  # the viewer has been told the line
            case.shown = screen_text(app)
            await pilot.press("C")
            case.copied = app.clipboard
            case.notice = str(list(app._notifications)[-1].message)
            await pilot.press("escape")


class Bash:
    """An interactive bash in a pty, as a user's terminal runs it."""

    def __init__(self, home: Path, bindir: Path) -> None:
        self.master, slave = os.openpty()
        env = {
            "PATH": f"{bindir}:/usr/bin:/bin",
            "HOME": str(home),
            "TERM": "xterm",
            "PS1": PROMPT,
            "PS2": "> ",
            "INPUTRC": "/dev/null",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
        }
        self.proc = subprocess.Popen(
            ["bash", "--norc", "--noprofile", "-i"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=home,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
        os.close(slave)
        self.out = b""
        self.rounds = 0
        self._wait(PROMPT.encode())

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def run(self, command: str) -> None:
        """Type ``command`` and Enter, then wait until the shell answered the next sentinel."""
        self.send(command.encode() + b"\r")
        self.sync()

    def sync(self) -> None:
        """Wait until the shell has run everything sent so far (it echoes a sentinel whose
        text appears only once evaluated, ``S$((n*7))E``) and reads the next line: readline
        edits it (typed ahead, a cooked tty would edit it instead)."""
        self.rounds += 1
        want = f"S{self.rounds * 7}E".encode()
        self.send(f'echo "S$(({self.rounds}*7))E"\r'.encode())
        self._wait(want)
        self._wait(PROMPT.encode())

    def _wait(self, want: bytes) -> None:
        deadline = time.monotonic() + 30
        while want not in self.out:
            left = deadline - time.monotonic()
            assert left > 0, f"the shell never printed {want!r}: {self.out[-2000:]!r}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                self.out += os.read(self.master, 65536)
        self.out = self.out.split(want, 1)[1]

    def paste(self, text: str, *, bracketed: bool) -> None:
        """Paste ``text`` as a terminal does, press Enter, and wait for the shell."""
        data = text.encode("utf-8", "surrogateescape")
        if bracketed:
            data = b"\x1b[200~" + data + b"\x1b[201~"
        self.send(data + b"\r")
        self.sync()

    def close(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        os.close(self.master)


def stub(bindir: Path, name: str, log: Path) -> None:
    """A ``name`` command that notes its dir and its arguments in ``log``."""
    path = bindir / name
    path.write_text(f'#!/bin/sh\n{{ printf "%s|" "{name}" "$PWD" "$@"; echo; }} >> "{log}"\n')
    path.chmod(0o755)


async def test_a_pasted_resume_line_runs_only_the_resume_command(tmp_path: Path) -> None:
    stores, cases = hostile_stores(tmp_path)
    await copy_each(stores, cases)

    refused = [c for c in cases if c.name.split("-", 1)[1] in {h[0] for h in HOSTILE}]

    bindir, log, home = tmp_path / "bin", tmp_path / "calls.log", tmp_path / "home"
    bindir.mkdir()
    home.mkdir()
    for name in ("claude", "codex"):
        stub(bindir, name, log)
    shell = Bash(home, bindir)
    try:
        for case in cases:
            for bracketed in (False, True):
                what = (case.name, "bracketed" if bracketed else "plain")
                shell.run(f"bind 'set enable-bracketed-paste {'on' if bracketed else 'off'}'")
                shell.run(f"cd {home}")
                log.unlink(missing_ok=True)
                shell.paste(case.copied, bracketed=bracketed)
                assert not list(tmp_path.rglob(MARK)), what
                calls = log.read_text().splitlines() if log.exists() else []
                if case in refused:
                    assert calls == [], what
                elif case.agent == "claude":
                    assert calls == [f"claude|{case.cwd}|--resume|{case.session_id}|"], what
                else:
                    assert calls == [f"codex|{case.cwd}|resume|--|{case.session_id}|"], what
    finally:
        shell.close()
    for case in refused:
        assert case.copied == "", (case.name, case.copied)
        reason = case.notice.removeprefix("No resume command for this session: ")
        assert reason != case.notice, case
        assert f"resume: not offered: {reason.rstrip('.')}" in case.shown, case
    for case in cases:
        if case not in refused:
            assert case.copied.startswith("cd '"), (case.name, case.copied)


def test_the_shell_in_the_pty_runs_what_a_hostile_paste_types(tmp_path: Path) -> None:
    """The check above can fail: the same shell runs the payload when the raw hostile text
    is pasted (Ctrl-U + CR on a plain paste, ``ESC [201~`` with bracketed paste)."""
    bindir, home = tmp_path / "bin", tmp_path / "home"
    bindir.mkdir()
    home.mkdir()
    shell = Bash(home, bindir)
    try:
        shell.run("bind 'set enable-bracketed-paste off'")
        shell.paste(f"cd '/x{CTRL_U_CR}' && claude --resume {SID}", bracketed=False)
        assert (home / MARK).exists()
        (home / MARK).unlink()
        shell.run("bind 'set enable-bracketed-paste on'")
        shell.paste(f"cd '/x{CTRL_U_CR}' && claude --resume {SID}", bracketed=True)
        assert not (home / MARK).exists()  # a bracketed paste holds Ctrl-U and CR as text
        shell.paste(f"cd '/x{PASTE_END}' && claude --resume {SID}", bracketed=True)
        assert (home / MARK).exists()
    finally:
        shell.close()
