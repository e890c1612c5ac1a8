"""Every test runs against a private PraisonAI home, cache and data dir (never the user's)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("DO_NOT_TRACK", "1")

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """PRAISONAI_HOME, our cache and data dirs, HOME and the cwd all point into a temp dir."""
    root = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(root))
    monkeypatch.setenv("PRAISONAI_HOME", str(root / ".praisonai"))
    monkeypatch.setenv("SESSION_BROWSER_CACHE_DIR", str(root / "cache"))
    monkeypatch.setenv("SESSION_BROWSER_DATA_HOME", str(root / "data"))
    monkeypatch.setenv("SESSION_BROWSER_CONFIG_DIR", str(root / "config"))
    for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("DO_NOT_TRACK", "1")
    monkeypatch.delenv("PRAISONAI_SESSION_RETENTION", raising=False)
    monkeypatch.delenv("PRAISONAI_SESSION_ACTIVE_WINDOW", raising=False)
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    monkeypatch.delenv("KIMI_SHARE_DIR", raising=False)
    monkeypatch.delenv("GOOSE_PATH_ROOT", raising=False)
    work = root / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return root


@pytest.fixture
def shared_data() -> Path:
    """The real conversation data beside the repo (``../shared/data``; not in the repository,
    so tests that need it skip on a plain clone)."""
    env = os.environ.get("SESSION_BROWSER_DATA_DIR")
    path = Path(env) if env else SHARED_DATA
    if not path.is_dir():
        pytest.skip(f"needs the real data in ../shared/data (not in the repository): {path}")
    return path
