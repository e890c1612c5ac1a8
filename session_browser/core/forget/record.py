"""The forget log: ``<data dir>/forget/log.jsonl``, one line per forget (when, which
sessions, which stores, whether a text was forgotten or redacted); never any content."""

from __future__ import annotations

import json
import os
from typing import Any

from ..paths import ensure_private_dir
from .deny import forget_dir, now_iso

MAX_READ = 8 << 20


def log_path() -> os.PathLike[str]:
    return forget_dir() / "log.jsonl"


def record(*, what: str, session_ids: list[str], stores: list[str], mode: str) -> None:
    """Append one line (``what``: ``session`` or ``text``; ``mode``: ``forget``/``redact``).
    Written with ``O_APPEND`` and fsynced: a line is whole or absent."""
    ensure_private_dir(forget_dir())
    line = json.dumps(
        {
            "at": now_iso(),
            "what": what,
            "mode": mode,
            "session_ids": session_ids,
            "stores": stores,
        },
        ensure_ascii=False,
    )
    fd = os.open(log_path(), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, (line + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def read_log() -> list[dict[str, Any]]:
    """Every entry, oldest first (a line that is not one is skipped)."""
    try:
        with open(log_path(), "rb") as fh:
            raw = fh.read(MAX_READ)
    except FileNotFoundError:
        return []
    out = []
    for line in raw.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            out.append(item)
    return out
