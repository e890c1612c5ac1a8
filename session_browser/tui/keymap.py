"""Remappable keys: a keymap file of binding id -> keys in our config dir.

``keymap.toml`` (or ``keymap.json``) in ``$SESSION_BROWSER_CONFIG_DIR`` or the user config dir
(``platformdirs.user_config_dir("session-browser")``)::

    # binding id = "key[,key...]"
    "app.help" = "f1,question_mark"
    "viewer.next_hit" = "n,ctrl+n"
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from textual.binding import Binding, BindingType

from session_browser.core.paths import config_dir


def keymap_path() -> Path | None:
    base = config_dir()
    for name in ("keymap.toml", "keymap.json"):
        if (base / name).is_file():
            return base / name
    return None


# Binding ids that were renamed: a keymap naming the old id moves the new one.
RENAMED_IDS = {"main.sort": "recent.sort"}


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
        out[RENAMED_IDS.get(str(key), str(key))] = value
    return out


def keymap_problems(
    keymap: dict[str, str], sections: list[tuple[str, list[BindingType]]]
) -> list[str]:
    """What is wrong with ``keymap`` against the app's bindings (``sections``: where they
    apply, as the help lists them): ids no binding has, and keys the keymap gives a binding
    that another binding of the same place (or of "Everywhere", the first section) has."""
    problems: list[str] = []
    known = {b.id for _name, bindings in sections for b in bindings if isinstance(b, Binding)}
    for binding_id in keymap:
        if binding_id not in known:
            problems.append(f"unknown binding id {binding_id!r} (F1 lists every id)")
    everywhere = sections[0][1] if sections else []
    seen: set[tuple[str, frozenset[str]]] = set()
    for name, bindings in sections:
        owners: dict[str, set[str]] = {}
        scope = bindings if bindings is everywhere else [*everywhere, *bindings]
        for binding in scope:
            if not isinstance(binding, Binding) or binding.id is None:
                continue
            keys = keymap.get(binding.id, binding.key)
            for key in (k.strip() for k in keys.split(",")):
                if key:
                    owners.setdefault(key, set()).add(binding.id)
        for key, ids in owners.items():
            remapped = sorted(i for i in ids if i in keymap)
            if len(ids) < 2 or not remapped:
                continue
            if (key, frozenset(ids)) in seen:  # "Everywhere" is in every place: once
                continue
            seen.add((key, frozenset(ids)))
            problems.append(
                f"key {key!r} is given to both {' and '.join(repr(i) for i in sorted(ids))}"
                f" ({name}): only one of them can have it"
            )
    return problems
