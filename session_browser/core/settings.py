"""The app's remembered choices (theme, Recent's sort, compact rows, the viewer's context
level), which sources the vault leaves alone, the team index's URL (``index_url``, written
by hand) and the dirs whose Aider chat histories are read (``aider_roots``, by hand):
``settings.json`` in our config dir (next to ``keymap.toml``), 0600 in a 0700 dir, written
atomically.

Plain data kept in the core, so that the app itself writes no file.

A file that cannot be read gives the defaults (the app starts as if it were absent); an
unknown or ill-typed value is ignored on its own.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .files import atomic_write_bytes
from .paths import config_dir, ensure_private_dir

MAX_BYTES = 64 * 1024


@dataclass
class Settings:
    theme: str | None = None
    sort: str | None = None
    compact: bool = False
    context: int | None = None  # the viewer's context level (an index of its levels)
    # Source kinds whose files the vault does not keep (``"vault_off": ["codex"]``).
    vault_off: list[str] = field(default_factory=list)
    index_url: str | None = None  # the team index (postgresql://...), set by hand
    # The dirs (repos, or dirs of repos) whose Aider chat histories are read (``aider:``).
    aider_roots: list[str] = field(default_factory=list)
    # Keep only redacted copies (the export's rules) in the index, the vault and the team
    # index (``"redact_kept": true``, set by hand).
    redact_kept: bool = False


def settings_path() -> Path:
    return config_dir() / "settings.json"


def load_settings(path: Path | None = None) -> Settings:
    path = path or settings_path()
    try:
        if path.stat().st_size > MAX_BYTES:
            return Settings()
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return Settings()
    out = Settings()
    if not isinstance(data, dict):
        return out
    if isinstance(data.get("theme"), str):
        out.theme = data["theme"]
    if isinstance(data.get("sort"), str):
        out.sort = data["sort"]
    if isinstance(data.get("compact"), bool):
        out.compact = data["compact"]
    url = data.get("index_url")
    if isinstance(url, str) and url.strip():
        out.index_url = url.strip()
    context = data.get("context")
    if isinstance(context, int) and not isinstance(context, bool) and 0 <= context < 100:
        out.context = context
    roots = data.get("aider_roots")
    if isinstance(roots, list):
        out.aider_roots = [r for r in roots if isinstance(r, str) and r.strip()]
    if data.get("redact_kept") is True:
        out.redact_kept = True
    off = data.get("vault_off")
    if isinstance(off, list):
        out.vault_off = [k for k in off if isinstance(k, str)]
    return out


def vault_on(kind: str) -> bool:
    """Whether the vault keeps the files of source ``kind``: on for every source unless
    ``settings.json`` lists it in ``vault_off`` (or ``SESSION_BROWSER_VAULT=off``)."""
    if os.environ.get("SESSION_BROWSER_VAULT", "").lower() in ("0", "off", "no", "false"):
        return False
    return kind not in load_settings().vault_off


def save_settings(settings: Settings, path: Path | None = None) -> None:
    """Write ``settings`` (raises ``OSError``; the old file then stays as it was)."""
    path = path or settings_path()
    ensure_private_dir(path.parent)
    data = asdict(settings)
    if data["index_url"] is None:  # only written when set (by hand)
        del data["index_url"]
    if not data["aider_roots"]:
        del data["aider_roots"]
    if not data["redact_kept"]:  # (likewise)
        del data["redact_kept"]
    payload = json.dumps(data, indent=2, sort_keys=True).encode("utf-8")
    atomic_write_bytes(path, payload + b"\n")
