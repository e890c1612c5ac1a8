"""Write screenshots/*.svg and *.png of every screen of the app, on the demo store, and
of the reading view of a real Claude Code and a real Codex session (from ``../shared/data``
or ``$SESSION_BROWSER_DATA_DIR``, when there).

    .venv/bin/python scripts/screenshots.py [OUT_DIR [NAME...]]

With names, only those screenshots are written.

PNG files need ``rsvg-convert`` (Debian/Ubuntu: ``apt-get install librsvg2-bin``); without
it only the SVG files are written.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend

SIZE = (120, 36)
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)

Step = Callable[[Pilot[Any]], Awaitable[None]]


async def settle(pilot: Pilot[Any]) -> None:
    await pilot.pause(0.2)
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
    for node in pilot.app.screen.query("Input"):
        node.cursor_blink = False  # type: ignore[attr-defined]
    await pilot.pause()


def keys(*pressed: str) -> Step:
    async def run(pilot: Pilot[Any]) -> None:
        for key in pressed:
            if key == "|":
                await settle(pilot)
            else:
                await pilot.press(key)
        await settle(pilot)

    return run


SHOTS: list[tuple[str, str, Step]] = [
    ("search", "dark", keys(*"billing")),
    ("viewer-archived-boundary", "dark", keys(*"random status codes", "|", "enter", "enter")),
    ("recent", "dark", keys("f3")),
    ("recent-marked", "dark", keys("f3", "|", "down", "space", "down", "space")),
    ("help", "dark", keys("f1")),
    ("explain", "dark", keys(*"chargefox", "|", "down", "e")),
    ("palette", "dark", keys("ctrl+p", "|", *"view")),
    ("markup-injection", "dark", keys(*"garbage", "|", "enter", "enter")),
    ("search-light", "light", keys(*"temporal")),
    ("quarantine", "dark", keys("f4")),
    ("export", "dark", keys("f6")),
    ("empty", "dark", keys()),
]


DATA = Path(
    os.environ.get("SESSION_BROWSER_DATA_DIR")
    or Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
)
CLAUDE_SID = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
CLAUDE_FILE = DATA / "claude" / "spotter" / f"{CLAUDE_SID}.jsonl"
CODEX_TID = "019e1625-789d-76c0-80ab-3724b5ddb799"
CODEX_FILE = DATA / "codex" / "codemie-code" / f"rollout-2026-05-11T11-26-55-{CODEX_TID}.jsonl"


def real_stores(root: Path) -> list[str]:
    """The real transcripts, copied where Claude Code and Codex keep them."""
    claude = root / "claude" / "-home-USER-projects-spotter"
    claude.mkdir(parents=True)
    shutil.copy(CLAUDE_FILE, claude / CLAUDE_FILE.name)
    shutil.copytree(CLAUDE_FILE.with_suffix(""), claude / CLAUDE_SID)  # its subagents
    codex = root / "codex" / "2026" / "05" / "11"
    codex.mkdir(parents=True)
    shutil.copy(CODEX_FILE, codex / CODEX_FILE.name)
    return [f"claude:{root / 'claude'}", f"codex:{root / 'codex'}"]


def reading(path: Path, top: int, opened: list[int]) -> Step:
    """The viewer on the session of ``path`` with turn ``top`` at the top and the runs of
    tool calls at ``opened`` opened."""

    async def run(pilot: Pilot[Any]) -> None:
        from session_browser.core.sources.claude import read_claude_session
        from session_browser.core.sources.codex import read_codex_session
        from session_browser.tui.viewer.screen import ViewerScreen
        from session_browser.tui.viewer.transcript import TranscriptView

        read = read_codex_session if path == CODEX_FILE else read_claude_session
        session = read(path)
        viewer = ViewerScreen(session.session_id, title=session.title)
        await pilot.app.push_screen(viewer)
        await settle(pilot)
        view = pilot.app.screen.query_one(TranscriptView)
        for start in opened:
            view.toggle_run(start)
        view.set_cursor(top, top=True, context=0)
        await settle(pilot)

    return run


READING_SHOTS: list[tuple[str, str, Step]] = [
    ("viewer-claude-code", "dark", reading(CLAUDE_FILE, 329, [332])),
    ("viewer-codex", "dark", reading(CODEX_FILE, 111, [118])),
]


def to_png(svg: Path) -> Path | None:
    tool = shutil.which("rsvg-convert")
    if tool is None:
        return None
    # rsvg drops leading spaces of text runs unless told to keep them.
    text = svg.read_text(encoding="utf-8").replace("<svg ", '<svg xml:space="preserve" ', 1)
    with tempfile.NamedTemporaryFile("w", suffix=".svg", delete=False, encoding="utf-8") as fh:
        fh.write(text)
    png = svg.with_suffix(".png")
    try:
        subprocess.run([tool, fh.name, "-o", str(png)], check=True)
    finally:
        os.unlink(fh.name)
    return png


async def shoot(
    name: str, theme: str, step: Step, stores: list[str], out: Path, labels: list[str]
) -> Path:
    app = SessionBrowserApp(
        Backend(stores),
        now=NOW,
        store_labels=labels,
        theme="textual-light" if theme == "light" else None,
        animate=False,
        keymap={},
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await step(pilot)
        app.save_screenshot(f"{name}.svg", str(out))
    return out / f"{name}.svg"


async def main(out: Path, only: set[str]) -> int:
    from session_browser.demo import build_demo_store

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="session-browser-shots-") as tmp:
        root = Path(tmp)
        build_demo_store(root / "demo", now=NOW.timestamp())
        empty = root / "empty"
        empty.mkdir()
        demo = ["demo store"]
        shots = [
            (name, theme, step, [str(empty if name == "empty" else root / "demo" / "sessions")])
            for name, theme, step in SHOTS
        ]
        labels = {name: demo for name, _theme, _step in SHOTS}
        if CLAUDE_FILE.exists() and CODEX_FILE.exists():
            real = real_stores(root / "real")
            for name, theme, step in READING_SHOTS:
                shots.append((name, theme, step, real))
                labels[name] = ["Claude Code", "Codex"]
        else:
            print(f"no real transcripts in {DATA}: reading view not shot", file=sys.stderr)
        for name, theme, step, stores in shots:
            if only and name not in only:
                continue
            try:
                svg = await shoot(name, theme, step, stores, out, labels[name])
            except Exception as exc:  # one broken screen must not stop the others
                print(f"{name}: failed: {type(exc).__name__}: {exc}", file=sys.stderr)
                continue
            png = to_png(svg)
            print(svg, png or "(no rsvg-convert: SVG only)")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("SESSION_BROWSER_CONFIG_DIR", tempfile.mkdtemp())
    os.environ.setdefault("SESSION_BROWSER_CACHE_DIR", tempfile.mkdtemp())
    target = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(__file__).resolve().parents[1] / "screenshots"
    )
    sys.exit(asyncio.run(main(target, set(sys.argv[2:]))))
