"""The real launch path: ``session-browser --demo`` in a pseudo-terminal, first screen, Ctrl+Q."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

ROWS, COLS = 36, 120
START_TIMEOUT = 60.0  # seconds to the first screen (a busy 2-core machine, a cold import)
QUIT_TIMEOUT = 30.0


def console_script() -> list[str]:
    """The installed ``session-browser`` script beside this Python (else the module)."""
    beside = Path(sys.executable).parent / "session-browser"
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("session-browser")
    return [found] if found else [sys.executable, "-m", "session_browser"]


# Escape sequences: CSI (colours, cursor moves, modes) and OSC (titles), to read the text.
ESCAPES = re.compile(
    rb"\x1b\[[0-9;?<>=$ ]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]"
)


def plain(raw: bytes) -> bytes:
    """What a terminal would show of ``raw``, as a stream (escape sequences dropped)."""
    return ESCAPES.sub(b"", raw)


def read_until(fd: int, wanted: list[bytes], timeout: float, seen: bytearray) -> bool:
    """Read ``fd`` into ``seen`` until every one of ``wanted`` has appeared (True) or the
    time is up or the other end closed (False)."""
    deadline = time.monotonic() + timeout
    while not all(w in plain(bytes(seen)) for w in wanted):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        ready, _, _ = select.select([fd], [], [], min(left, 0.5))
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not chunk:
            return False
        seen.extend(chunk)
    return True


def run_in_pty(
    args: list[str],
    env: dict[str, str],
    tmp: Path,
    steps: list[tuple[bytes, list[bytes]]] | None = None,
) -> tuple[int, bytes, bool]:
    """Start ``args`` on a new pseudo-terminal of ROWS x COLS; wait for the demo's first
    screen; for each of ``steps``, type its keys and wait for its texts; press Ctrl+Q, and
    return (exit code, everything written, first screen and every step seen)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    proc = subprocess.Popen(
        args,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        cwd=tmp,
        start_new_session=True,  # its own session: the pty becomes its controlling terminal
        preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        close_fds=True,
    )
    os.close(slave)
    seen = bytearray()
    try:
        # The status line names the demo store once the first screen is drawn; the
        # session count comes when the index has been read; the prompt and the footer may
        # come in a later frame on a busy machine.
        first = read_until(
            master,
            [b"demo store", b" sessions \xc2\xb7", b"Search every session", b"Quit"],
            START_TIMEOUT,
            seen,
        )
        for keys, wanted in steps or []:
            if not first:
                break
            os.write(master, keys)
            after = bytearray()  # the step's texts, drawn after its keys
            first = read_until(master, wanted, START_TIMEOUT, after)
            seen.extend(after)
        if first:
            time.sleep(0.5)  # let it finish the frame in hand
        os.write(master, b"\x11")  # Ctrl+Q
        deadline = time.monotonic() + QUIT_TIMEOUT
        while proc.poll() is None and time.monotonic() < deadline:
            read_until(master, [b"\x00never"], 0.2, seen)  # keep the pty drained
        read_until(master, [b"\x00never"], 0.5, seen)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
            pytest.fail(
                f"no exit {QUIT_TIMEOUT} s after Ctrl+Q; output tail: {bytes(seen[-800:])!r}"
            )
        return proc.returncode, bytes(seen), first
    finally:
        os.close(master)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


@pytest.mark.skipif(not hasattr(pty, "openpty"), reason="needs a POSIX pseudo-terminal")
def test_demo_starts_in_a_terminal_and_quits_cleanly(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TEXTUAL", "PYTEST", "COLUMNS", "LINES"))
    }
    env.update(
        TERM="xterm-256color",
        HOME=str(tmp_path / "home"),
        SESSION_BROWSER_CACHE_DIR=str(tmp_path / "cache"),
        SESSION_BROWSER_DATA_HOME=str(tmp_path / "data"),
        SESSION_BROWSER_CONFIG_DIR=str(tmp_path / "config"),
        PRAISONAI_HOME=str(tmp_path / "praisonai"),
        TMPDIR=str(tmp_path / "tmp"),  # where --demo builds its temporary store
    )
    (tmp_path / "tmp").mkdir()
    code, out, first = run_in_pty([*console_script(), "--demo"], env, tmp_path)
    text = out.decode("utf-8", "replace")
    assert first, f"the first screen never showed the demo store; output tail: {text[-800:]!r}"
    assert code == 0, f"exit code {code}; output tail: {text[-800:]!r}"
    # The app drew into the alternate screen and gave the terminal back: alternate screen
    # left, cursor shown again, mouse reporting off.
    assert "\x1b[?1049h" in text and "\x1b[?1049l" in text
    assert text.rindex("\x1b[?1049l") > text.rindex("\x1b[?1049h")
    assert "\x1b[?25h" in text[text.rindex("\x1b[?1049h") :]
    assert "\x1b[?1000l" in text
    assert "Traceback" not in text
    # The first screen: the search prompt, the demo store and its sessions on the status
    # line, the footer's keys.
    shown = plain(out).decode("utf-8", "replace")
    assert "Search every session" in shown and "Quit" in shown
    assert "demo store (temporary, deleted on exit)" in shown
    assert re.search(r"\b\d+ sessions\b", shown), shown[-2000:]
    # The demo store is temporary: nothing of it is left behind in the temp dir.
    assert not list((tmp_path / "tmp").glob("session-browser-demo-*"))


def _files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@pytest.mark.skipif(not hasattr(pty, "openpty"), reason="needs a POSIX pseudo-terminal")
def test_demo_leaves_nothing_in_the_users_dirs(tmp_path: Path) -> None:
    """``--demo`` builds, indexes and shows its store without touching the user's cache dir
    (no index, no lock), data dir (no vault, no journal, no query history) or home: all of
    it lives in its temporary dir, removed at exit. The XDG dirs point into the test's dir
    too (no SESSION_BROWSER_* override), as they would on a user's machine."""
    home = tmp_path / "home"
    xdg = {
        name: home / sub
        for name, sub in (
            ("XDG_CACHE_HOME", ".cache"),
            ("XDG_DATA_HOME", ".local/share"),
            ("XDG_CONFIG_HOME", ".config"),
            ("XDG_STATE_HOME", ".local/state"),
        )
    }
    for path in xdg.values():
        path.mkdir(parents=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TEXTUAL", "PYTEST", "COLUMNS", "LINES", "SESSION_BROWSER", "XDG"))
    }
    env.update(
        TERM="xterm-256color",
        HOME=str(home),
        PRAISONAI_HOME=str(home / ".praisonai"),
        TMPDIR=str(tmp_path / "tmp"),
        **{k: str(v) for k, v in xdg.items()},
    )
    (tmp_path / "tmp").mkdir()
    # a search whose best hit is opened: what the query history remembers
    steps = [(b"python", [b"matched"]), (b"\r", [b"Next hit"])]
    code, out, first = run_in_pty([*console_script(), "--demo"], env, tmp_path, steps)
    text = out.decode("utf-8", "replace")
    assert first and code == 0, f"exit code {code}; output tail: {text[-800:]!r}"
    assert _files_under(home) == [], "the demo wrote into the user's dirs"
    assert not list((tmp_path / "tmp").iterdir()), "the demo left its temporary dir behind"
