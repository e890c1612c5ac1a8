"""Where Claude Code keeps its transcripts: the config dir, the projects dir, the main
transcripts under it, and each one's subagent files (never following a symlinked folder)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ...files import loads, open_regular, real_dir, regular_lstat
from .transcript import text_or_none as _str


def claude_config_dir() -> Path:
    """Claude Code's data folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    env = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return Path(env).expanduser() if env else Path.home() / ".claude"


#: Days after which Claude Code deletes a transcript when its settings do not say.
CLAUDE_DEFAULT_CLEANUP_DAYS = 30


def claude_cleanup_days() -> tuple[int, Path, bool]:
    """(days after which Claude Code deletes a transcript, its settings file, whether the
    file sets it: ``cleanupPeriodDays``)."""
    path = claude_config_dir() / "settings.json"
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return CLAUDE_DEFAULT_CLEANUP_DAYS, path, False
    days = data.get("cleanupPeriodDays") if isinstance(data, dict) else None
    if isinstance(days, int) and not isinstance(days, bool):
        return days, path, True
    return CLAUDE_DEFAULT_CLEANUP_DAYS, path, False


def default_claude_dir() -> Path:
    """Where the transcripts are: ``<config dir>/projects``."""
    return claude_config_dir() / "projects"


def is_subagent_file(path: Path) -> bool:
    """True for a subagent transcript (``subagents/agent-*.jsonl``, or an older sibling
    ``agent-*.jsonl`` beside the main files): part of a parent, never a session itself."""
    return path.name.startswith("agent-") or path.parent.name == "subagents"


def claude_session_files(root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Every main transcript under ``root`` (default :func:`default_claude_dir`), sorted.

    Subagent files and the side folders (``subagents``, ``tool-results``) are skipped;
    symlinked folders are not followed; nothing is opened."""
    base = Path(root).expanduser() if root is not None else default_claude_dir()
    out: list[Path] = []
    if not base.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in ("subagents", "tool-results"))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if name.endswith(".jsonl") and not is_subagent_file(path) and regular_lstat(path):
                out.append(path)
    return out


def stem_of(path: str | os.PathLike[str]) -> str:
    """``path`` without its suffix, as a string (``Path.with_suffix("")`` without a Path:
    every file read asks it)."""
    text = os.fspath(path)
    base = text.rfind(os.sep) + 1
    dot = text.rfind(".", base)
    return text if dot <= base or dot == len(text) - 1 else text[:dot]


def subagent_names(
    path: str | os.PathLike[str], refused: dict[str, int] | None = None
) -> list[str]:
    """The names in ``<stem>/subagents/`` of the main file ``path``, sorted; none when
    ``<stem>`` or ``subagents`` is a symlink (never followed; counted in ``refused``)."""
    stem = stem_of(path)
    folder = os.path.join(stem, "subagents")
    if not real_dir(stem, refused) or not real_dir(folder, refused):
        return []
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def subagent_files(path: str | os.PathLike[str]) -> list[Path]:
    """The subagent transcripts of the main file ``path`` (``<stem>/subagents/agent-*``),
    the compaction summariser's runs included, sorted by name."""
    names = subagent_names(path)
    if not names:
        return []
    folder = Path(stem_of(path)) / "subagents"
    return [folder / n for n in names if n.startswith("agent-") and n.endswith(".jsonl")]


FIRST_LINE_LIMIT = 1 << 20


def sibling_subagents(folder: str | os.PathLike[str]) -> dict[str, list[Path]]:
    """Subagent files older builds wrote beside the main files (``agent-<id>.jsonl`` in the
    project folder), by the parent's session id on their first line: pass a session's list
    as ``sibling_agents`` to :func:`read_claude_session`."""
    out: dict[str, list[Path]] = {}
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return out
    for name in names:
        if not (name.startswith("agent-") and name.endswith(".jsonl")):
            continue
        path = Path(folder) / name
        try:
            with open_regular(path) as fh:
                first = loads(fh.readline(FIRST_LINE_LIMIT))
        except (OSError, ValueError, RecursionError):
            continue
        parent = _str(first.get("sessionId")) if isinstance(first, dict) else None
        if parent:
            out.setdefault(parent, []).append(path)
    return out
