"""Snapshot fixtures: a fixed store, a frozen clock, a private config dir, no paths on screen."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config"
    monkeypatch.setenv("SESSION_BROWSER_CONFIG_DIR", str(path))
    return path
