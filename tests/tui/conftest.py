"""Fixtures for the app tests: a small store, a frozen clock, a private config dir."""

from __future__ import annotations

import asyncio
import inspect
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.worker import WorkerCancelled, WorkerState

from session_browser.demo import DemoInfo, build_demo_store
from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend

from .stores import NOW, build_store


@pytest.fixture(autouse=True)
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config"
    monkeypatch.setenv("SESSION_BROWSER_CONFIG_DIR", str(path))
    return path


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return build_store(tmp_path / "home")


def make_app(store: Path, **kwargs: object) -> SessionBrowserApp:
    return SessionBrowserApp(
        Backend([store], indexed=False),
        now=NOW,
        store_labels=["test-store"],
        animate=False,
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.fixture
def demo(tmp_path: Path) -> DemoInfo:
    """The demo store, built with the frozen clock."""
    return build_demo_store(tmp_path / "home", now=NOW.timestamp())


async def until(pilot: Pilot[int], check: Callable[[], object], seconds: float) -> float:
    """Wait (pressing nothing) until ``check()`` is true, at most ``seconds`` (a ceiling, not a
    wait: the test goes on as soon as the state is there); returns the seconds it took."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if check():
            return time.monotonic() - started
        await pilot.pause(0.05)
    raise AssertionError(f"not within {seconds} s")


async def settle_workers(pilot: Pilot[int], app: SessionBrowserApp) -> None:
    """Let every worker finish and every message it posted be handled."""
    for _ in range(3):
        await pilot.pause()
        for _attempt in range(100):
            try:
                await app.workers.wait_for_complete([w for w in app.workers if w.is_running])
                break
            except WorkerCancelled:  # one superseded by the next (an exclusive group)
                await pilot.pause()
    await pilot.pause()


#: a one-shot timer this short is a debounce whose end starts work (a search, a filter, a find)
DEBOUNCE_AT_MOST = 0.25


def _nodes(app: SessionBrowserApp) -> list[Any]:
    nodes: list[Any] = [app]
    for screen in app.screen_stack:
        nodes.append(screen)
        nodes.extend(screen.walk_children(with_self=False))
    return nodes


def pending_debounces(app: SessionBrowserApp) -> list[Any]:
    """The debounce timers of the app and its screens that have not fired yet."""
    return [
        timer
        for node in _nodes(app)
        for timer in list(node._timers)
        if timer._repeat == 1
        and timer._interval <= DEBOUNCE_AT_MOST
        and timer._task is not None
        and not timer._task.done()
    ]


def quiet(app: SessionBrowserApp) -> bool:
    """No debounce pending, no worker pending or running, no message waiting to be handled
    (a worker's answer posted from its thread is a message)."""
    if pending_debounces(app):
        return False
    if any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in app.workers):
        return False
    return all(node._message_queue.empty() for node in _nodes(app))


async def settle(pilot: Pilot[int], app: SessionBrowserApp, ceiling: float = 60.0) -> None:
    """Let the debounce timers fire, then every worker finish (:func:`settle_workers`): by
    state, not by time (a loaded machine fires a timer late), at most ``ceiling`` seconds."""
    started = time.monotonic()
    await pilot.pause(0.05)
    calm = 0  # quiet twice in a row, a pause apart: what the last answer posted is handled
    while calm < 2:
        await settle_workers(pilot, app)
        calm = calm + 1 if quiet(app) else 0
        if time.monotonic() - started > ceiling:
            raise AssertionError(f"the app did not settle within {ceiling} s")
        await pilot.pause(0.02)


def said(app: SessionBrowserApp) -> str:
    """What the current screen says, its words joined by one space: a line wrapped inside a
    box (a long tmp path pushes words to the next line) reads as one."""
    return " ".join(re.sub(r"[\u2500-\u257f\u2580-\u259f]", " ", screen_text(app)).split())


def screen_text(app: SessionBrowserApp) -> str:
    """What the current screen shows, as plain text."""
    return "\n".join(
        "".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips()
    )


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run ``async def`` tests in a fresh event loop (no async plugin needed)."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    names = pyfuncitem._fixtureinfo.argnames
    kwargs: dict[str, Any] = {name: pyfuncitem.funcargs[name] for name in names}
    asyncio.run(pyfuncitem.obj(**kwargs))
    return True
