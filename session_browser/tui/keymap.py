"""Remappable keys: a keymap file of binding id -> keys in our config dir.

``keymap.toml`` (or ``keymap.json``) in ``$SESSION_BROWSER_CONFIG_DIR`` or the user config dir
(``platformdirs.user_config_dir("session-browser")``)::

    # binding id = "key[,key...]"
    "app.help" = "f1,question_mark"
    "viewer.next_hit" = "n,ctrl+n"
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import platformdirs

from session_browser.core.paths import APP_NAME


def config_dir() -> Path:
    env = os.environ.get("SESSION_BROWSER_CONFIG_DIR")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def keymap_path() -> Path | None:
    base = config_dir()
    for name in ("keymap.toml", "keymap.json"):
        if (base / name).is_file():
            return base / name
    return None


class KeymapError(Exception):
    pass


def load_keymap(path: Path | None = None) -> dict[str, str]:
    """The keymap in ``path`` (or the config dir's); {} when there is none."""
    path = path or keymap_path()
    if path is None:
        return {}
    try:
        raw = path.read_bytes()
        data = json.loads(raw) if path.suffix == ".json" else tomllib.loads(raw.decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise KeymapError(f"cannot read keymap {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise KeymapError(f"keymap {path} must map binding ids to keys")
    if isinstance(data.get("keys"), dict):
        data = data["keys"]
    out: dict[str, str] = {}
    for key, value in data.items():
        if isinstance(value, list):
            value = ",".join(str(v) for v in value)
        if not isinstance(value, str):
            raise KeymapError(f"keymap {path}: {key!r} must be a string of keys")
        out[str(key)] = value
    return out
