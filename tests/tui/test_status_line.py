"""The status line with the default stores: compact (the stores by kind, not their paths),
the index state never cut off, and no default dir listed or indexed that does not exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from session_browser.core.stores import default_store_specs
from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.common.chrome import StatusLine, StatusPart, fit_status

from .conftest import settle, until
from .stores import NOW, build_store


def _status_shown(app: SessionBrowserApp) -> str:
    """The status line as the screen shows it (cut to its width, as the user reads it)."""
    line = app.screen.query_one(StatusLine)
    region = line.content_region
    strips = app.screen._compositor.render_strips()
    row = strips[region.y]
    text = "".join(seg.text for seg in row)
    return text[region.x : region.x + region.width]


@pytest.fixture
def default_home(isolated_home: Path) -> Path:
    """A home as a user has it: a project store with sessions, no global PraisonAI store
    (``$PRAISONAI_HOME/sessions`` does not exist), an empty Pi dir."""
    project = build_store(isolated_home / "work" / ".praisonai")
    (isolated_home / ".pi" / "agent" / "sessions").mkdir(parents=True)
    assert not (isolated_home / ".praisonai" / "sessions").exists()
    return project


def test_default_stores_skip_missing_and_empty_dirs(default_home: Path) -> None:
    specs = default_store_specs()
    assert [(s.kind, s.path) for s in specs] == [("praisonai", default_home)]


def test_with_no_default_dir_at_all_the_global_store_is_kept(isolated_home: Path) -> None:
    # Where new sessions will appear, and what the empty state names.
    specs = default_store_specs()
    assert [(s.kind, s.path) for s in specs] == [
        ("praisonai", isolated_home / ".praisonai" / "sessions")
    ]


@pytest.mark.parametrize("every_kind", [False, True], ids=["sparse", "every-kind"])
@pytest.mark.parametrize("width", [80, 120])
async def test_status_line_keeps_the_index_state(
    default_home: Path, isolated_home: Path, width: int, every_kind: bool
) -> None:
    kinds = ["praisonai"]
    if every_kind:  # every default dir there, each holding something
        build_store(isolated_home / ".praisonai")
        for agent_dir in (".pi/agent/sessions", ".claude/projects", ".codex/sessions"):
            (isolated_home / agent_dir / "sub").mkdir(parents=True, exist_ok=True)
        kinds = ["praisonai", "praisonai", "pi", "claude", "codex"]
    backend = Backend(None)
    assert [s.source_kind for s in backend.stores] == kinds  # no index of an empty dir
    app = SessionBrowserApp(backend, now=NOW, animate=False)
    async with app.run_test(size=(width, 30)) as pilot:
        await until(pilot, lambda: "index ready" in app.status_text, 30)
        await settle(pilot, app)
        shown = _status_shown(app)
        assert "index ready" in shown, shown
        assert f"{app.session_count:,} sessions" in shown, shown
        assert str(default_home) not in app.status_text  # kinds, not paths
        stores = "PraisonAI ×2 + Pi + Claude Code + Codex" if every_kind else "PraisonAI"
        assert stores in app.status_text
        if width >= 120:
            assert stores in shown, shown
        if len(app.status_text) <= width - 2:
            assert app.status_text in shown  # all of it when it fits
        assert len(shown.rstrip()) <= width - 2


def test_fit_drops_the_lowest_parts_first_and_never_the_index_state() -> None:
    parts = [
        StatusPart("30,236 sessions indexed so far", "30,236 sessions", rank=3),
        StatusPart(
            "index building 45% — 13,500 of 30,000 files", "index 45%", rank=4, droppable=False
        ),
        StatusPart("7 files skipped — session-browser index status", "7 files skipped", rank=2),
        StatusPart("PraisonAI ×2 + Pi + Claude Code + Codex", rank=1),
        StatusPart("vault: 12 deleted kept · Claude Code deletes after 30 d", rank=0),
    ]
    wide = fit_status(parts, 400)
    assert wide == " · ".join(p.text for p in parts)
    at_120 = fit_status(parts, 118)
    assert len(at_120) <= 118 and "vault" not in at_120
    assert "index building 45% — 13,500 of 30,000 files" in at_120
    at_80 = fit_status(parts, 78)
    assert len(at_80) <= 78 and "index" in at_80 and "30,236 sessions" in at_80
    assert fit_status(parts, 10) == "index 45%"


def test_every_source_kind_is_named_by_its_agent() -> None:
    from session_browser.core.sources import SOURCES
    from session_browser.tui.common.chrome import stores_part

    for kind in SOURCES:
        assert stores_part([kind]) != kind, kind  # a title, not the bare kind name
    assert stores_part(["opencode", "gemini", "gemini"]) == "OpenCode + Gemini CLI ×2"
