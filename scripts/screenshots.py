"""Write screenshots/*.svg and *.png of every screen of the app, on the demo store.

    .venv/bin/python scripts/screenshots.py [OUT_DIR]

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


async def shoot(name: str, theme: str, step: Step, store: Path, out: Path) -> Path:
    app = SessionBrowserApp(
        Backend([store]),
        now=NOW,
        store_labels=["demo store"],
        theme="textual-light" if theme == "light" else None,
        animate=False,
        keymap={},
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await step(pilot)
        app.save_screenshot(f"{name}.svg", str(out))
    return out / f"{name}.svg"


async def main(out: Path) -> int:
    from session_browser.demo import build_demo_store

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="session-browser-shots-") as tmp:
        root = Path(tmp)
        build_demo_store(root / "demo", now=NOW.timestamp())
        empty = root / "empty"
        empty.mkdir()
        for name, theme, step in SHOTS:
            store = empty if name == "empty" else root / "demo" / "sessions"
            try:
                svg = await shoot(name, theme, step, store, out)
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
    sys.exit(asyncio.run(main(target)))
