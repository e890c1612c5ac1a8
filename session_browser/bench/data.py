"""The source conversations of the corpus (:mod:`session_browser.bench.corpus`).

* Schema-Guided Dialogue (``shared/data/sgd_dialogues.jsonl.gz``, streamed line by line):
  ``USER`` turns become ``user`` messages and ``SYSTEM`` turns ``assistant`` messages. The
  original session id is ``sgd-<split>-<dialogue_id>``. SGD has no timestamps, so every session
  gets a synthetic start somewhere in the two years before the fixed
  :data:`~session_browser.bench.corpus.BASE_EPOCH` (never "now") and turns 30-240 s apart
  (users think longer than the assistant answers).
* The ``chitchat_dataset`` package (optional; skipped with a note when not importable): each
  burst of messages by one sender becomes one message (texts joined with ``"\\n"``), the first
  sender is the ``user`` and the other the ``assistant``. The id is ``chitchat-<uuid>`` and the
  real 2018 timestamps are kept (the last message of a burst dates it).
* The demo conversations (``session_browser/demo/conversations.json``, user and assistant
  turns), used by default only when the SGD data is not found: then the corpus is built from
  what ``pip install 'session-browser[bench]'`` installs (chitchat + demo). With the SGD data
  the corpus is SGD + chitchat, as before. The id is ``demo-<id>``; paced like SGD.
"""

from __future__ import annotations

import gzip
import importlib.util
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from session_browser.bench.sessions import loads
from session_browser.core.paths import safe_id

SGD_FILENAME = "sgd_dialogues.jsonl.gz"
DATA_DIR_ENV = "SESSION_BROWSER_DATA_DIR"


class Turn(NamedTuple):
    """One message of a source conversation (``ts`` is None when the source has no time)."""

    role: str
    text: str
    ts: float | None


class Conversation(NamedTuple):
    """A source conversation: its corpus id, turns and a little context."""

    source: str
    base_id: str
    turns: tuple[Turn, ...]
    services: tuple[str, ...] = ()
    prompt: str | None = None


def default_sgd_path() -> Path:
    """Find ``sgd_dialogues.jsonl.gz``: ``$SESSION_BROWSER_DATA_DIR``, else ``shared/data``
    beside the current directory or the package, or beside one of their parents."""
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        base = Path(env)
        for candidate in (base / SGD_FILENAME, base / "data" / SGD_FILENAME,
                          base / "shared" / "data" / SGD_FILENAME):
            if candidate.is_file():
                return candidate
    seen: set[Path] = set()
    for start in (Path.cwd().resolve(), Path(__file__).resolve().parent):
        for folder in (start, *start.parents):
            if folder in seen:
                continue
            seen.add(folder)
            candidate = folder / "shared" / "data" / SGD_FILENAME
            if candidate.is_file():
                return candidate
    raise FileNotFoundError(
        f"{SGD_FILENAME} not found: set {DATA_DIR_ENV} or pass sgd_path")


def find_sgd_path() -> Path | None:
    """:func:`default_sgd_path`, or None when the SGD data is not there."""
    try:
        return default_sgd_path()
    except FileNotFoundError:
        return None


def load_demo_conversations() -> list[Conversation]:
    """The user and assistant turns of the demo conversations shipped in
    ``session_browser/demo/conversations.json`` (written for this project; no timestamps, so
    they are paced like SGD). Tool turns and tool-call-only turns are left out."""
    from importlib import resources

    text = resources.files("session_browser.demo").joinpath("conversations.json").read_text(
        encoding="utf-8")
    out: list[Conversation] = []
    for item in loads(text).get("sessions") or ():
        turns = tuple(
            Turn(str(raw[0]), str(raw[1]), None)
            for raw in item.get("turns") or ()
            if isinstance(raw, list) and len(raw) >= 2 and raw[0] in ("user", "assistant")
            and str(raw[1]).strip()
        )
        if len(turns) >= 2:
            out.append(Conversation("demo", safe_id(f"demo-{item['id']}"), turns, (),
                                    item.get("title") or None))
    return out


def chitchat_dataset_path() -> Path | None:
    """``dataset.json`` of the installed ``chitchat_dataset`` package, or None."""
    try:
        spec = importlib.util.find_spec("chitchat_dataset")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "dataset.json"
    return path if path.is_file() else None


def iter_sgd_conversations(path: Path) -> Iterator[Conversation]:
    """Stream SGD dialogues from the gzipped JSON lines (one conversation in memory at a time)."""
    with gzip.open(path, "rb") as fh:
        for raw in fh:
            if not raw.strip():
                continue
            item = loads(raw)
            base = safe_id(f"sgd-{item['split']}-{item['dialogue_id']}")
            turns = tuple(
                Turn("user" if t.get("speaker") == "USER" else "assistant",
                     str(t.get("utterance") or ""), None)
                for t in item.get("turns") or ()
            )
            if turns:
                services = tuple(str(s) for s in item.get("services") or ())
                yield Conversation("sgd", base, turns, services)


def _parse_time(value: str) -> float:
    text = value[:-1] + "+00:00" if value.endswith("Z") else value
    stamp = datetime.fromisoformat(text)
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.timestamp()


def load_chitchat_conversations(path: Path) -> list[Conversation]:
    """Chitchat conversations: one message per burst, alternating user/assistant, real times."""
    raw = loads(path.read_bytes())
    out: list[Conversation] = []
    for cid, conv in raw.items():
        turns: list[Turn] = []
        for burst in conv.get("messages") or ():
            parts = [m for m in burst if isinstance(m, dict)]
            if not parts:
                continue
            role = "user" if len(turns) % 2 == 0 else "assistant"
            text = "\n".join(str(m.get("text") or "") for m in parts)
            turns.append(Turn(role, text, _parse_time(str(parts[-1]["timestamp"]))))
        if turns:
            prompt = conv.get("prompt")
            out.append(Conversation("chitchat", safe_id(f"chitchat-{cid}"), tuple(turns), (),
                                    str(prompt) if prompt else None))
    return out

