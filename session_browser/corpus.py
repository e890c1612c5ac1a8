"""A deterministic benchmark corpus of real conversations, written as a PraisonAI session store.

Sources
-------
* Schema-Guided Dialogue (``shared/data/sgd_dialogues.jsonl.gz``, streamed line by line):
  ``USER`` turns become ``user`` messages and ``SYSTEM`` turns ``assistant`` messages. The
  original session id is ``sgd-<split>-<dialogue_id>``. SGD has no timestamps, so every session
  gets a synthetic start somewhere in the two years before the fixed :data:`BASE_EPOCH` (never
  "now") and turns 30-240 s apart (users think longer than the assistant answers).
* The ``chitchat_dataset`` package (optional; skipped with a note when not importable): each
  burst of messages by one sender becomes one message (texts joined with ``"\\n"``), the first
  sender is the ``user`` and the other the ``assistant``. The id is ``chitchat-<uuid>`` and the
  real 2018 timestamps are kept (the last message of a burst dates it).
* The demo conversations (``session_browser/demo/conversations.json``, user and assistant
  turns), used by default only when the SGD data is not found: then the corpus is built from
  what ``pip install 'session-browser[bench]'`` installs (chitchat + demo). With the SGD data
  the corpus is SGD + chitchat, as before. The id is ``demo-<id>``; paced like SGD.

Ordinary sessions are paced at no more than 50 messages an hour (the ranking rule calls a session
with more than 60 an hour and at least four timestamps automated): when a conversation is faster
than that, which is common for the real chitchat timestamps, its time offsets are stretched
uniformly from its first message. The check covers both the whole session
(``archived_messages + messages``) and the active window of a compacted session.

Shape of the store
------------------
``build_corpus(home)`` writes ``home/sessions/<safe_id>.json`` exactly as PraisonAI's
``DefaultSessionStore`` does (``json.dump(obj, f, indent=2, ensure_ascii=False)``; orjson with
``OPT_INDENT_2`` is used when it produces the same bytes, which is checked on a sample of every
build) and ``home/state/session_spill/`` salvage files. With ``sessions=None`` every source
conversation is used once; with a smaller number a seeded sample; with a larger number seeded
rounds of copies (``<id>-copy<N>``: same text, new start time, pace, title, agent and variant).
Deterministically mixed in, as fractions of the files written:

* ~10 % compacted: conversations of 12+ turns whose first N turns sit in ``archived_messages``
  while ``messages`` starts with PraisonAI's ``[Session Summary]`` system message;
* ~3 % automated: ``metadata.source = "cron"``, a top-level ``"source": "scheduled"``, or
  untagged turns 1-5 s apart;
* ~2 % of the sessions in lineage chains: one conversation split into 2-3 sessions
  (``<id>``, ``<id>-part2``, ``<id>-part3``) sharing ``metadata.lineage_id``;
* ~30 % titled (``metadata.title``), ~40 % with an ``agent_name``, some with a ``user_id``;
* ~0.1 % corrupt files, at least three (one of each kind) from 100 sessions up: the first 60 %
  of a valid file's bytes, invalid UTF-8 bytes inside a string, or a JSON list root;
* one session whose last two turns were never persisted and live in two spill files instead.

Known-item queries
------------------
``make_queries(corpus)`` reads the store back (it needs nothing but the files) and derives
queries whose answer is known. Text is tokenized as lowercase ``\\w+`` words; document
frequency (``df``) counts *conversations* (a session id with its ``-copyN`` / ``-partN``
suffixes stripped), so copies and chain parts do not make a word look common. A word is *rare*
when it is alphabetic, 3+ letters long and its ``df`` is at most
``max(2, ceil(0.0005 * conversations))``; *common* when it is alphabetic, 4+ letters long and its
``df`` is at least ``max(3, ceil(0.02 * conversations))``. Targets are
user/assistant messages of sessions that are not corrupt and not automated, one query per
conversation at most. Slices:

* ``rare``: 2-3 rare alphabetic words of one active message, in message order, lowercase;
* ``phrase``: 3-5 consecutive words of one active message separated by single spaces, quoted
  with their original casing (``"..."``); the span holds a word with ``df`` <= 4x the rare limit;
* ``archived``: like ``rare``, from an archived turn of a compacted session;
* ``mixed``: one rare word plus one or two common words of the same message;
* ``casing``: a ``rare`` query in Title or UPPER case, different from the message's own casing;
* ``fragment``: 4-6 ordinary consecutive words of one active message (a sentence fragment typed
  from memory: unquoted, lowercase, no rare word, at least two words of 4+ letters).

Relevance is computed by brute force over every message of every readable session (archived
turns, the compaction summary and spilled turns included): a session is relevant when one of its
messages contains all the query words as tokens (for a phrase: the words consecutively). Every
other session of a lineage chain with such a session is relevant too (a chain is one
conversation). Queries are dropped when the token-based answer differs from a plain
case-insensitive substring scan (so engines matching substrings or tokens agree on the truth)
or when the relevant sessions span more than five conversations (copies of the target
conversation count once).
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import math
import os
import random
import re
import uuid
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any, NamedTuple

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is optional
    _HAVE_ORJSON = False
else:
    _HAVE_ORJSON = True

JSONDict = dict[str, Any]

#: Fixed "now" of the corpus: 2025-06-01T00:00:00Z. SGD sessions fall in the two years before.
BASE_EPOCH = 1748736000.0
SPREAD_DAYS = 730
SGD_FILENAME = "sgd_dialogues.jsonl.gz"
DATA_DIR_ENV = "SESSION_BROWSER_DATA_DIR"

COMPACTED_FRACTION = 0.10
AUTOMATED_FRACTION = 0.03
LINEAGE_FRACTION = 0.02
CORRUPT_FRACTION = 0.001
TITLE_FRACTION = 0.30
AGENT_FRACTION = 0.40
USER_ID_FRACTION = 0.35

#: Ordinary sessions are kept at or below 50 messages an hour (72 s a message).
SECONDS_PER_MESSAGE = 72.0
AUTOMATED_RATE_THRESHOLD = 60.0
AUTOMATED_SOURCES = frozenset({"scheduled", "automated", "cron", "system", "batch"})
LINEAGE_KEYS = ("lineage_id", "root_session_id", "thread_id")

SLICES = ("rare", "phrase", "archived", "mixed", "casing", "fragment")
MAX_RELEVANT_CONVERSATIONS = 5
_MAX_SUBSTRING_CANDIDATES = 20000
_TRIES_PER_SESSION = 6

_WORD_RE = re.compile(r"\w+")
_SUFFIX_RE = re.compile(r"^(.*?)(?:-copy\d+)?(?:-part\d+)?$")
_USER_IDS = ("alice", "bob", "carol", "dmitri", "eun-ji", "farah", "user-1024", "default")
_CHAT_AGENTS = ("Companion", "Chat Buddy", "Assistant")
_CORRUPT_KINDS = ("truncated", "bad_utf8", "list_root")
_AUTOMATED_KINDS = ("cron", "scheduled", "fast")


# --------------------------------------------------------------------------------------------
# small helpers


def safe_id(session_id: str) -> str:
    """PraisonAI's file stem for a session id: every char not alnum, ``-`` or ``_`` -> ``_``."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in session_id)


def conversation_key(session_id: str) -> str:
    """The source conversation of a corpus session id (``-copyN`` / ``-partN`` stripped)."""
    match = _SUFFIX_RE.match(session_id)
    return match.group(1) if match else session_id


def tokenize(text: str) -> list[str]:
    """The corpus tokenizer: lowercase unicode ``\\w+`` words, in order."""
    return _WORD_RE.findall(text.lower())


def iso_utc(epoch: float) -> str:
    """``datetime.isoformat()`` of an epoch in UTC, as PraisonAI writes ``created_at``."""
    return datetime.fromtimestamp(epoch, UTC).isoformat()


def _loads(data: bytes | str) -> Any:
    if _HAVE_ORJSON:
        return orjson.loads(data)
    return json.loads(data)


def _json_bytes(obj: Any) -> bytes:
    return json.dumps(obj, indent=2, ensure_ascii=False).encode("utf-8")


class _Encoder:
    """PraisonAI's JSON bytes; orjson when it is byte-identical (verified on a sample)."""

    def __init__(self, use_orjson: bool) -> None:
        self.use_orjson = use_orjson and _HAVE_ORJSON
        self.count = 0
        self.fallbacks = 0

    def __call__(self, obj: Any) -> bytes:
        self.count += 1
        if not self.use_orjson:
            return _json_bytes(obj)
        try:
            data: bytes = orjson.dumps(obj, option=orjson.OPT_INDENT_2)
        except (TypeError, orjson.JSONEncodeError):
            self.fallbacks += 1
            return _json_bytes(obj)
        if self.count <= 64 or self.count % 256 == 0:
            reference = _json_bytes(obj)
            if reference != data:
                self.use_orjson = False
                self.fallbacks += 1
                return reference
        return data


def load_session(path: Path) -> JSONDict | None:
    """A session file parsed strictly (UTF-8, JSON, dict root with a messages list) or None."""
    try:
        raw = path.read_bytes()
        data = json.loads(raw.decode("utf-8")) if not _HAVE_ORJSON else orjson.loads(raw)
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        return None
    return data


def iter_session_dicts(sessions_dir: Path) -> Iterator[tuple[str, JSONDict | None]]:
    """``(file stem, parsed session or None when unreadable)`` for every ``*.json``, sorted."""
    for path in sorted(Path(sessions_dir).glob("*.json")):
        yield path.stem, load_session(path)


def session_messages(data: JSONDict) -> list[JSONDict]:
    """The archived-plus-active projection: ``archived_messages + messages`` (dicts only)."""
    archived = data.get("archived_messages") or []
    active = data.get("messages") or []
    return [m for m in [*archived, *active] if isinstance(m, dict)]


def is_automated(data: JSONDict, messages: Sequence[JSONDict] | None = None) -> bool:
    """The ranking rule: tagged cron/scheduled/..., or > 60 messages an hour (>= 4 stamps)."""
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    source = str(data.get("source") or meta.get("source") or "").lower()
    if source in AUTOMATED_SOURCES or meta.get("automated") is True:
        return True
    rate = message_rate(session_messages(data) if messages is None else messages)
    return rate is not None and rate > AUTOMATED_RATE_THRESHOLD


def message_rate(messages: Sequence[JSONDict]) -> float | None:
    """Messages per hour over the span of their timestamps (None below four stamps)."""
    stamps: list[float] = []
    for msg in messages:
        value = msg.get("timestamp")
        if isinstance(value, int | float) and not isinstance(value, bool):
            stamps.append(float(value))
    if len(stamps) < 4:
        return None
    span_hours = (max(stamps) - min(stamps)) / 3600.0
    if span_hours <= 0:
        return None
    return len(stamps) / span_hours


def _lineage_of(data: JSONDict) -> str | None:
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    for key in LINEAGE_KEYS:
        value = data.get(key) or meta.get(key)
        if value:
            return str(value)
    return None


# --------------------------------------------------------------------------------------------
# sources


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


def corpus_sources(info: CorpusInfo) -> str:
    """Which sources a built corpus holds, e.g. ``sgd + chitchat`` or ``chitchat + demo``."""
    return " + ".join(name for name, n in info.conversations.items() if n) or "none"


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
    for item in _loads(text).get("sessions") or ():
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
            item = _loads(raw)
            base = safe_id(f"sgd-{item['split']}-{item['dialogue_id']}")
            turns = tuple(
                Turn("user" if t.get("speaker") == "USER" else "assistant",
                     str(t.get("utterance") or ""), None)
                for t in item.get("turns") or ()
            )
            if turns:
                services = tuple(str(s) for s in item.get("services") or ())
                yield Conversation("sgd", base, turns, services)


def _iter_sgd(path: Path | None) -> Iterator[Conversation]:
    return iter_sgd_conversations(path) if path is not None else iter(())


def _parse_time(value: str) -> float:
    text = value[:-1] + "+00:00" if value.endswith("Z") else value
    stamp = datetime.fromisoformat(text)
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.timestamp()


def load_chitchat_conversations(path: Path) -> list[Conversation]:
    """Chitchat conversations: one message per burst, alternating user/assistant, real times."""
    raw = _loads(path.read_bytes())
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


# --------------------------------------------------------------------------------------------
# plan


@dataclass
class _Slot:
    base_id: str
    copy: int
    n_turns: int
    kind: str = "plain"  # plain | lineage | corrupt | spill | automated | compacted
    sub: str = ""
    parts: int = 1

    @property
    def session_id(self) -> str:
        return self.base_id if self.copy == 0 else f"{self.base_id}-copy{self.copy}"


def _plan(units: Sequence[tuple[str, int]], sessions: int | None, seed: int) -> list[_Slot]:
    """Which conversation (and copy) fills each slot, and which variant each slot gets."""
    rng = random.Random(f"session-browser-corpus/plan/{seed}")
    if sessions is None:
        slots = [_Slot(base, 0, n) for base, n in units]
    else:
        if sessions < 0:
            raise ValueError("sessions must be >= 0")
        if sessions and not units:
            raise ValueError("no source conversations")
        slots = []
        order = list(range(len(units)))
        copy = 0
        while len(slots) < sessions:
            rng.shuffle(order)
            for i in order[: sessions - len(slots)]:
                base, n = units[i]
                slots.append(_Slot(base, copy, n))
            copy += 1
    files = len(slots)
    vr = random.Random(f"session-browser-corpus/variants/{seed}")
    order = list(range(len(slots)))
    vr.shuffle(order)
    # Lineage chains first: each adds parts-1 files, trimmed from the (plain) tail of the plan.
    limit = len(slots) if sessions is None else int(len(slots) * 0.9)
    need = round(LINEAGE_FRACTION * files)
    for i in order:
        if need < 2:
            break
        slot = slots[i]
        if i >= limit or slot.n_turns < 8:
            continue
        parts = 3 if need >= 3 and slot.n_turns >= 12 and vr.random() < 0.4 else 2
        slot.kind, slot.parts = "lineage", parts
        need -= parts
    if sessions is not None:
        extra = sum(s.parts - 1 for s in slots)
        if extra:
            del slots[len(slots) - extra:]
    files = sum(s.parts for s in slots)

    def pick(count: int, ok: Callable[[_Slot], bool], kind: str, subs: Sequence[str]) -> None:
        taken = 0
        for i in order:
            if taken >= count:
                return
            if i >= len(slots):
                continue
            slot = slots[i]
            if slot.kind == "plain" and ok(slot):
                slot.kind, slot.sub = kind, subs[taken % len(subs)]
                taken += 1

    corrupt = max(round(CORRUPT_FRACTION * files), 3 if files >= 100 else 0)
    pick(corrupt, lambda s: s.n_turns >= 2, "corrupt", _CORRUPT_KINDS)
    pick(1 if files >= 20 else 0, lambda s: s.copy == 0 and s.n_turns >= 6, "spill", ("",))
    pick(round(AUTOMATED_FRACTION * files), lambda s: s.n_turns >= 4, "automated",
         _AUTOMATED_KINDS)
    pick(round(COMPACTED_FRACTION * files), lambda s: s.n_turns >= 12, "compacted", ("",))
    return slots


# --------------------------------------------------------------------------------------------
# rendering


def _msg(role: str, content: str, ts: float, metadata: JSONDict | None = None) -> JSONDict:
    return {"role": role, "content": content, "timestamp": ts,
            "metadata": {} if metadata is None else metadata}


def _pace(ts: list[float], start: int = 0) -> None:
    """Stretch ``ts[start:]`` from its first stamp to at most 50 messages an hour."""
    n = len(ts) - start
    if n < 4:
        return
    first = ts[start]
    span = ts[-1] - first
    need = n * SECONDS_PER_MESSAGE + 1.0
    if span >= need:
        return
    if span > 0:
        factor = need / span
        for i in range(start + 1, len(ts)):
            ts[i] = first + (ts[i] - first) * factor
    else:
        step = need / (n - 1)
        for i in range(start + 1, len(ts)):
            ts[i] = first + (i - start) * step


def _random_start(rng: random.Random) -> float:
    day = rng.randrange(SPREAD_DAYS)
    daytime = rng.random() < 0.85
    second = rng.uniform(7.5 * 3600, 23.5 * 3600) if daytime else rng.uniform(0, 86400)
    return BASE_EPOCH - (day + 1) * 86400 + second


def _timeline(conv: Conversation, slot: _Slot, rng: random.Random, fast: bool) -> list[float]:
    real = [t.ts for t in conv.turns if t.ts is not None]
    if len(real) == len(conv.turns):
        start = real[0]
        if slot.copy:
            start += rng.uniform(1.0, 700.0) * 86400
        if not fast:
            return [start + (r - real[0]) for r in real]
    else:
        start = _random_start(rng)
    out = [start]
    for turn in conv.turns[1:]:
        if fast:
            gap = rng.uniform(1.0, 5.0)
        elif turn.role == "user":
            gap = rng.uniform(45.0, 240.0)
        else:
            gap = rng.uniform(30.0, 120.0)
        out.append(out[-1] + gap)
    return out


def _domain(service: str) -> str:
    name = service.split("_")[0]
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)


def _title(conv: Conversation, rng: random.Random) -> str:
    if conv.prompt and rng.random() < 0.7:
        return conv.prompt
    if conv.services and rng.random() < 0.5:
        return " & ".join(dict.fromkeys(_domain(s) for s in conv.services))
    first = next((t.text for t in conv.turns if t.role == "user"), conv.turns[0].text)
    first = " ".join(first.split())
    return first if len(first) <= 48 else first[:47].rstrip() + "…"


def _agent(conv: Conversation, rng: random.Random) -> str:
    if conv.services and rng.random() < 0.7:
        return f"{_domain(conv.services[0])} Assistant"
    return rng.choice(_CHAT_AGENTS)


def _session(session_id: str, messages: list[JSONDict], archived: list[JSONDict],
             first_ts: float, last_ts: float, rng: random.Random, agent_name: str | None,
             user_id: str | None, metadata: JSONDict) -> JSONDict:
    return {
        "session_id": session_id,
        "messages": messages,
        "created_at": iso_utc(first_ts - rng.uniform(0.05, 2.0)),
        "updated_at": iso_utc(last_ts + rng.uniform(0.01, 0.5)),
        "agent_name": agent_name,
        "user_id": user_id,
        "metadata": metadata,
        "gateway_session_id": None,
        "agent_id": None,
        "runtime_state": {},
        "archived_messages": archived,
    }


class _Rendered(NamedTuple):
    sessions: list[tuple[str, JSONDict]]
    spills: list[tuple[str, JSONDict]]


def _render(conv: Conversation, slot: _Slot, seed: int) -> _Rendered:
    """The session dicts (and spill payloads) of one slot; depends only on (seed, slot, conv)."""
    sid = slot.session_id
    rng = random.Random(f"session-browser-corpus/session/{seed}/{sid}")
    fast = slot.kind == "automated" and slot.sub == "fast"
    ts = _timeline(conv, slot, rng, fast)
    turns = conv.turns
    n = len(turns)
    metadata: JSONDict = {}
    if rng.random() < TITLE_FRACTION:
        metadata["title"] = _title(conv, rng)
    agent = _agent(conv, rng) if rng.random() < AGENT_FRACTION else None
    user = rng.choice(_USER_IDS) if rng.random() < USER_ID_FRACTION else None
    spills: list[tuple[str, JSONDict]] = []

    if slot.kind == "compacted":
        window = rng.choice([w for w in (4, 6, 8, 10) if n - w >= 6])
        cut = n - window
        gap = ts[cut] - ts[cut - 1]
        summary_ts = ts[cut - 1] + gap * rng.uniform(0.05, 0.5)
        full = [*ts[:cut], summary_ts, *ts[cut:]]
        _pace(full)
        _pace(full, cut)
        archived = [_msg(t.role, t.text, full[i]) for i, t in enumerate(turns[:cut])]
        counts = {"user": 0, "assistant": 0, "tool": 0, "system": 0}
        for t in turns[:cut]:
            counts[t.role] = counts.get(t.role, 0) + 1
        summary = _msg("system",
                       f"[Session Summary]\nPrevious conversation: {cut} messages\n"
                       f"Message breakdown: {counts}",
                       full[cut], {"compaction": True, "compacted_count": cut})
        active = [summary] + [_msg(t.role, t.text, full[cut + 1 + i])
                              for i, t in enumerate(turns[cut:])]
        obj = _session(sid, active, archived, full[0], full[-1], rng, agent, user, metadata)
        return _Rendered([(sid, obj)], spills)

    if slot.kind == "lineage":
        k = slot.parts
        evens = [p for p in range(4, n - 3) if p % 2 == 0]
        if k == 3:
            first_cut = rng.choice([p for p in evens if p <= n - 8])
            cuts = [first_cut, rng.choice([p for p in evens if p >= first_cut + 4])]
        else:
            cuts = [rng.choice(evens)]
        bounds = [0, *cuts, n]
        lineage_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        out: list[tuple[str, JSONDict]] = []
        prev_end: float | None = None
        for part in range(k):
            lo, hi = bounds[part], bounds[part + 1]
            origin = ts[lo] if prev_end is None else prev_end + rng.uniform(900.0, 3 * 86400.0)
            part_ts = [origin + (x - ts[lo]) for x in ts[lo:hi]]
            _pace(part_ts)
            part_id = sid if part == 0 else f"{sid}-part{part + 1}"
            meta = dict(metadata)
            meta["lineage_id"] = lineage_id
            if part:
                meta["parent_session_id"] = out[-1][0]
            msgs = [_msg(t.role, t.text, part_ts[i]) for i, t in enumerate(turns[lo:hi])]
            out.append((part_id, _session(part_id, msgs, [], part_ts[0], part_ts[-1], rng,
                                          agent, user, meta)))
            prev_end = part_ts[-1]
        return _Rendered(out, spills)

    top: JSONDict = {}
    if slot.kind == "automated" and slot.sub == "cron":
        metadata["source"] = "cron"
    elif slot.kind == "automated" and slot.sub == "scheduled":
        top["source"] = "scheduled"
    if slot.kind == "spill":
        # The session file keeps all but the last two turns: pace what it keeps.
        head = ts[:-2]
        _pace(head)
        ts = [*head, head[-1] + (ts[-2] - ts[-3]), head[-1] + (ts[-1] - ts[-3])]
    elif not fast:
        _pace(ts)
    msgs = [_msg(t.role, t.text, ts[i]) for i, t in enumerate(turns)]
    if slot.kind == "spill":
        kept, lost = msgs[:-2], msgs[-2:]
        pid = rng.randrange(2000, 65000)
        for m in lost:
            at = float(m["timestamp"]) + rng.uniform(0.05, 1.5)
            name = f"{safe_id(sid)}.{int(at * 1000)}.{pid}.{rng.getrandbits(32):08x}.json"
            spills.append((name, {"session_id": sid, "spilled_at": iso_utc(at), "messages": [m]}))
        msgs = kept
    obj = _session(sid, msgs, [], float(msgs[0]["timestamp"]), float(msgs[-1]["timestamp"]),
                   rng, agent, user, metadata)
    obj.update(top)
    return _Rendered([(sid, obj)], spills)


def _corrupt_bytes(data: bytes, obj: JSONDict, kind: str, encode: _Encoder) -> bytes:
    if kind == "truncated":
        return data[: int(len(data) * 0.6)]
    if kind == "bad_utf8":
        marker = b'"content": "'
        at = data.find(marker)
        at = at + len(marker) if at >= 0 else len(data) // 2
        return data[:at] + b"\xff\xfe\xc3\x28" + data[at:]
    return encode(obj["messages"])  # list root


# --------------------------------------------------------------------------------------------
# build


@dataclass
class CorpusInfo:
    """What :func:`build_corpus` wrote (id lists are sorted)."""

    home: Path
    sessions_dir: Path
    spill_dir: Path
    seed: int
    session_count: int  # session files written, corrupt ones included
    message_count: int  # message dicts (active + archived) in the readable session files
    json_bytes: int  # bytes of all session files
    corrupt_ids: list[str] = field(default_factory=list)
    automated_ids: list[str] = field(default_factory=list)
    lineage_groups: dict[str, list[str]] = field(default_factory=dict)
    compacted_ids: list[str] = field(default_factory=list)
    spilled_ids: list[str] = field(default_factory=list)
    spill_files: list[Path] = field(default_factory=list)
    sources: dict[str, int] = field(default_factory=dict)  # session files per source
    conversations: dict[str, int] = field(default_factory=dict)  # source conversations read
    titled: int = 0
    with_agent: int = 0
    copies: int = 0  # session files that are copies (ids with ``-copyN``)
    encoder: str = "json"
    notes: list[str] = field(default_factory=list)


def build_corpus(
    home: Path,
    *,
    sessions: int | None = None,
    seed: int = 7,
    sgd_path: Path | None = None,
    include_chitchat: bool = True,
    progress: Callable[[int, int], None] | None = None,
    chitchat_path: Path | None = None,
    overwrite: bool = False,
    include_sgd: bool = True,
    include_demo: bool | None = None,
) -> CorpusInfo:
    """Write the corpus under ``home`` (``sessions/`` and ``state/session_spill/``).

    Sources: the SGD data when found (``sgd_path``, else :func:`find_sgd_path`; never with
    ``include_sgd=False``), the installed ``chitchat_dataset`` package, and the demo
    conversations (``include_demo``; by default only when SGD is not used, so anyone who
    installed the package with the ``bench`` extra gets a corpus, and with the shared data the
    corpus is the same as before). ``CorpusInfo.notes`` says which were used.

    ``sessions=None`` uses every source conversation once; a number gives exactly that many
    session files (sampled, or with copies). Same arguments, same bytes. Refuses a non-empty
    sessions dir unless ``overwrite`` (which deletes only ``*.json`` files in the two dirs).
    """
    home = Path(home)
    sessions_dir = home / "sessions"
    spill_dir = home / "state" / "session_spill"
    for folder in (sessions_dir, spill_dir):
        folder.mkdir(parents=True, exist_ok=True)
        existing = list(folder.glob("*.json"))
        if existing and not overwrite:
            raise FileExistsError(f"{folder} already holds session files")
        for path in existing:
            path.unlink()
    notes: list[str] = []
    sgd: Path | None = None
    if include_sgd:
        sgd = Path(sgd_path) if sgd_path is not None else find_sgd_path()
        if sgd is None:
            notes.append(f"{SGD_FILENAME} not found (set {DATA_DIR_ENV} to use it): "
                         "corpus built from the pip-installable data")
        elif not sgd.is_file():
            raise FileNotFoundError(f"{SGD_FILENAME} not found at {sgd}")
    if include_demo is None:
        include_demo = sgd is None
    demo = load_demo_conversations() if include_demo else []

    chitchat: list[Conversation] = []
    if include_chitchat:
        cc_path = chitchat_path if chitchat_path is not None else chitchat_dataset_path()
        if cc_path is None:
            notes.append("chitchat_dataset not importable: chitchat conversations skipped")
        else:
            chitchat = load_chitchat_conversations(Path(cc_path))
    else:
        notes.append("chitchat excluded (include_chitchat=False)")

    units: list[tuple[str, int]] = []
    conversations = {"sgd": 0, "chitchat": len(chitchat), "demo": len(demo)}
    for conv in _iter_sgd(sgd):
        units.append((conv.base_id, len(conv.turns)))
        conversations["sgd"] += 1
    units.extend((c.base_id, len(c.turns)) for c in (*chitchat, *demo))
    if not units:
        raise FileNotFoundError(
            f"no corpus data: {SGD_FILENAME} not found (set {DATA_DIR_ENV}) and the "
            "chitchat_dataset package is not installed (pip install 'session-browser[bench]')")
    notes.append("corpus sources: " + " + ".join(k for k, n in conversations.items() if n))
    if len({u[0] for u in units}) != len(units):
        raise ValueError("duplicate source conversation ids")

    slots = _plan(units, sessions, seed)
    del units
    by_base: dict[str, list[_Slot]] = {}
    for slot in slots:
        by_base.setdefault(slot.base_id, []).append(slot)
    total = sum(s.parts for s in slots)

    encode = _Encoder(use_orjson=True)
    info = CorpusInfo(home=home, sessions_dir=sessions_dir, spill_dir=spill_dir, seed=seed,
                      session_count=0, message_count=0, json_bytes=0,
                      sources={"sgd": 0, "chitchat": 0, "demo": 0},
                      conversations=conversations,
                      notes=notes)
    lineage: dict[str, list[str]] = {}
    done = 0

    def emit(conv: Conversation) -> None:
        nonlocal done
        for slot in by_base.get(conv.base_id, ()):
            rendered = _render(conv, slot, seed)
            for sid, obj in rendered.sessions:
                data = encode(obj)
                if slot.kind == "corrupt":
                    data = _corrupt_bytes(data, obj, slot.sub, encode)
                    info.corrupt_ids.append(sid)
                else:
                    info.message_count += len(obj["messages"]) + len(obj["archived_messages"])
                    if slot.kind == "automated":
                        info.automated_ids.append(sid)
                    elif slot.kind == "compacted":
                        info.compacted_ids.append(sid)
                    elif slot.kind == "spill":
                        info.spilled_ids.append(sid)
                    meta = obj["metadata"]
                    if "lineage_id" in meta:
                        lineage.setdefault(str(meta["lineage_id"]), []).append(sid)
                    info.titled += "title" in meta
                    info.with_agent += obj["agent_name"] is not None
                    info.copies += slot.copy > 0
                with open(sessions_dir / f"{safe_id(sid)}.json", "wb") as fh:
                    fh.write(data)
                info.session_count += 1
                info.json_bytes += len(data)
                info.sources[conv.source] += 1
                done += 1
                if progress is not None and (done % 1000 == 0 or done == total):
                    progress(done, total)
            for name, payload in rendered.spills:
                path = spill_dir / name
                path.write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
                info.spill_files.append(path)

    for conv in _iter_sgd(sgd):
        emit(conv)
    for conv in (*chitchat, *demo):
        emit(conv)

    info.corrupt_ids.sort()
    info.automated_ids.sort()
    info.compacted_ids.sort()
    info.spilled_ids.sort()
    info.spill_files.sort()
    info.lineage_groups = {k: sorted(v) for k, v in sorted(lineage.items())}
    info.encoder = "orjson" if encode.use_orjson else "json"
    if encode.fallbacks:
        notes.append(f"json used for {encode.fallbacks} file(s) where orjson differed")
    return info


# --------------------------------------------------------------------------------------------
# known-item queries


@dataclass
class KnownItem:
    """A query with its known answer.

    ``target_index`` indexes the target session's ``archived_messages + messages``; ``terms``
    are the lowercase query words (in order; for a phrase, the phrase's words).
    """

    query: str
    relevant: set[str]
    slice: str
    target_id: str
    target_index: int
    terms: tuple[str, ...] = ()
    conversations: int = 1  # distinct source conversations among ``relevant``


class _Index:
    """Every readable message of a store, lowercased, with token postings and conversation df."""

    def __init__(self, sessions_dir: Path, spill_dir: Path | None) -> None:
        self.ids: list[str] = []
        self.paths: list[Path] = []
        self.conv: list[str] = []
        self.lineage: list[str | None] = []
        self.n_archived: list[int] = []
        self.automated: list[bool] = []
        self.corrupt: list[str] = []
        self.text: list[str] = []
        self.msg_session: array[int] = array("I")
        self.postings: dict[str, array[int]] = {}
        self.df: dict[str, int] = {}
        self.members: dict[str, set[str]] = {}

        spilled = _read_spills(spill_dir) if spill_dir is not None else {}
        entries = sorted((conversation_key(p.stem), p.stem, p)
                         for p in Path(sessions_dir).glob("*.json"))
        current: str | None = None
        conv_tokens: set[str] = set()
        for conv, stem, path in entries:
            data = load_session(path)
            if data is None:
                self.corrupt.append(stem)
                continue
            if conv != current:
                self._count(conv_tokens)
                conv_tokens = set()
                current = conv
            sid = str(data.get("session_id") or stem)
            index = len(self.ids)
            messages = session_messages(data)
            self.ids.append(sid)
            self.paths.append(path)
            self.conv.append(conv)
            lineage = _lineage_of(data)
            self.lineage.append(lineage)
            if lineage is not None:
                self.members.setdefault(lineage, set()).add(sid)
            self.n_archived.append(
                sum(isinstance(m, dict) for m in data.get("archived_messages") or []))
            self.automated.append(is_automated(data, messages))
            for msg in [*messages, *spilled.get(sid, [])]:
                content = msg.get("content")
                low = content.lower() if isinstance(content, str) else ""
                tokens = set(_WORD_RE.findall(low))
                mid = len(self.text)
                self.text.append(low)
                self.msg_session.append(index)
                for token in tokens:
                    plist = self.postings.get(token)
                    if plist is None:
                        plist = self.postings[token] = array("I")
                    plist.append(mid)
                conv_tokens |= tokens
        self._count(conv_tokens)
        self.n_conv = len(set(self.conv))
        self.vocab = sorted(self.postings)
        self.blob = "\n".join(self.vocab)
        self.starts: list[int] = []
        pos = 0
        for word in self.vocab:
            self.starts.append(pos)
            pos += len(word) + 1

    def _count(self, tokens: set[str]) -> None:
        for token in tokens:
            self.df[token] = self.df.get(token, 0) + 1

    def vocab_containing(self, needle: str) -> list[str]:
        """Vocabulary words that contain ``needle`` (a ``\\w+`` string) as a substring."""
        out: list[str] = []
        pos = self.blob.find(needle)
        while pos >= 0:
            i = bisect_right(self.starts, pos) - 1
            out.append(self.vocab[i])
            nxt = self.starts[i + 1] if i + 1 < len(self.starts) else len(self.blob)
            pos = self.blob.find(needle, nxt)
        return out

    def match(self, terms: Sequence[str], phrase: bool) -> set[int] | None:
        """Sessions with a message holding all terms (or the phrase); None if ambiguous."""
        anchor = min(terms, key=lambda t: (len(self.postings.get(t, ())), t))
        wanted = set(terms)
        by_token: set[int] = set()
        for mid in self.postings.get(anchor, ()):
            tokens = _WORD_RE.findall(self.text[mid])
            ok = _has_run(tokens, terms) if phrase else wanted.issubset(tokens)
            if ok:
                by_token.add(self.msg_session[mid])
        candidates: set[int] = set()
        for word in self.vocab_containing(anchor):
            candidates.update(self.postings[word])
            if len(candidates) > _MAX_SUBSTRING_CANDIDATES:
                return None
        joined = " ".join(terms)
        by_substring: set[int] = set()
        for mid in candidates:
            text = self.text[mid]
            ok = joined in text if phrase else all(t in text for t in terms)
            if ok:
                by_substring.add(self.msg_session[mid])
        return by_token if by_token == by_substring else None

    def relevant_ids(self, sessions: set[int]) -> set[str]:
        """Session ids of ``sessions`` plus the rest of their lineage chains."""
        ids = {self.ids[s] for s in sessions}
        for s in sessions:
            lineage = self.lineage[s]
            if lineage is not None:
                ids |= self.members[lineage]
        return ids


def _has_run(tokens: Sequence[str], run: Sequence[str]) -> bool:
    k = len(run)
    first = run[0]
    for i in range(len(tokens) - k + 1):
        if tokens[i] == first and list(tokens[i:i + k]) == list(run):
            return True
    return False


def _read_spills(spill_dir: Path) -> dict[str, list[JSONDict]]:
    out: dict[str, list[JSONDict]] = {}
    if not Path(spill_dir).is_dir():
        return out
    for path in sorted(Path(spill_dir).glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("messages"), list):
            msgs = [m for m in data["messages"] if isinstance(m, dict)]
            out.setdefault(str(data.get("session_id")), []).extend(msgs)
    return out


_APOSTROPHES = frozenset({"'", "\u2019"})


def _wordlike(token: str) -> bool:
    return len(token) >= 3 and token.isalpha()


class _Builder:
    """Turns a target message into a query of one slice (or None)."""

    def __init__(self, index: _Index) -> None:
        self.index = index
        self.rare_max = max(2, math.ceil(0.0005 * index.n_conv))
        self.common_min = max(3, math.ceil(0.02 * index.n_conv))

    def _df(self, token: str) -> int:
        return self.index.df.get(token, 0)

    def _rare(self, tokens: Sequence[str]) -> list[str]:
        seen: dict[str, None] = {}
        for t in tokens:
            if _wordlike(t) and self._df(t) <= self.rare_max:
                seen.setdefault(t, None)
        return list(seen)

    def build(self, slice_: str, content: str,
              rng: random.Random) -> tuple[str, tuple[str, ...]] | None:
        """``(query, terms)`` for a message, or None when it has no suitable words."""
        tokens = tokenize(content)
        position = {t: i for i, t in reversed(list(enumerate(tokens)))}
        if slice_ in ("rare", "archived", "casing"):
            rare = self._rare(tokens)
            if len(rare) < 2:
                return None
            chosen = rng.sample(rare, min(len(rare), rng.choice((2, 3))))
            chosen.sort(key=position.__getitem__)
            if slice_ != "casing":
                return " ".join(chosen), tuple(chosen)
            return self._recase(content, chosen, rng)
        if slice_ == "mixed":
            rare = self._rare(tokens)
            common = list(dict.fromkeys(
                t for t in tokens
                if len(t) >= 4 and t.isalpha() and self._df(t) >= self.common_min))
            if not rare or not common:
                return None
            chosen = [rng.choice(rare), *rng.sample(common, min(len(common),
                                                                 rng.choice((1, 2))))]
            chosen.sort(key=position.__getitem__)
            return " ".join(chosen), tuple(chosen)
        if slice_ == "phrase":
            return self._phrase(content, rng)
        if slice_ == "fragment":
            return self._fragment(content, rng)
        raise ValueError(f"unknown slice {slice_!r}")

    def _recase(self, content: str, chosen: list[str],
                rng: random.Random) -> tuple[str, tuple[str, ...]] | None:
        surface: dict[str, str] = {}
        for match in _WORD_RE.finditer(content):
            surface.setdefault(match.group().lower(), match.group())
        original = " ".join(surface.get(t, t) for t in chosen)
        styles = ["title", "upper"]
        rng.shuffle(styles)
        for style in styles:
            words = [t.upper() if style == "upper" else t.capitalize() for t in chosen]
            query = " ".join(words)
            if query not in (original, " ".join(chosen)) and tokenize(query) == chosen:
                return query, tuple(chosen)
        return None

    def _phrase(self, content: str, rng: random.Random) -> tuple[str, tuple[str, ...]] | None:
        words = list(_WORD_RE.finditer(content))
        limit = self.rare_max * 4
        lengths = [3, 4, 5]
        rng.shuffle(lengths)
        for length in lengths:
            spans: list[tuple[int, int]] = []
            for i in range(len(words) - length + 1):
                run = words[i:i + length]
                if any(content[a.end():b.start()] != " " for a, b in pairwise(run)):
                    continue
                if min(self._df(w.group().lower()) for w in run) > limit:
                    continue
                spans.append((run[0].start(), run[-1].end()))
            if spans:
                lo, hi = rng.choice(spans)
                text = content[lo:hi]
                return f'"{text}"', tuple(tokenize(text))
        return None


    def _fragment(self, content: str,
                  rng: random.Random) -> tuple[str, tuple[str, ...]] | None:
        """4-6 ordinary consecutive words as typed from memory: unquoted, lowercase, no rare
        word among them, at least two of four letters or more."""
        words = list(_WORD_RE.finditer(content))
        lengths = [4, 5, 6]
        rng.shuffle(lengths)
        for length in lengths:
            spans: list[tuple[int, int]] = []
            for i in range(len(words) - length + 1):
                run = words[i:i + length]
                if any(content[a.end():b.start()] != " " for a, b in pairwise(run)):
                    continue
                lower = [w.group().lower() for w in run]
                if not all(t.isalpha() for t in lower) or sum(len(t) >= 4 for t in lower) < 2:
                    continue
                if min(self._df(t) for t in lower) <= self.rare_max:
                    continue
                lo, hi = run[0].start(), run[-1].end()
                if content[lo - 1:lo] in _APOSTROPHES or content[hi:hi + 1] in _APOSTROPHES:
                    continue  # half of "don't" is not a word anyone types
                spans.append((lo, hi))
            if spans:
                lo, hi = rng.choice(spans)
                text = content[lo:hi].lower()
                return text, tuple(tokenize(text))
        return None


def make_queries(corpus: Path | CorpusInfo, *, n: int = 200, seed: int = 7) -> list[KnownItem]:
    """Up to ``n`` known-item queries over a store, evenly over :data:`SLICES` (see module doc).

    ``corpus`` is a :class:`CorpusInfo`, a sessions dir, or a home holding ``sessions/``.
    Spill files are read from ``<sessions dir>/../state/session_spill``. Deterministic.
    """
    if isinstance(corpus, CorpusInfo):
        sessions_dir, spill_dir = corpus.sessions_dir, corpus.spill_dir
    else:
        sessions_dir = Path(corpus)
        if (sessions_dir / "sessions").is_dir():
            sessions_dir = sessions_dir / "sessions"
        spill_dir = sessions_dir.parent / "state" / "session_spill"
    index = _Index(sessions_dir, spill_dir)
    builder = _Builder(index)
    quotas = {s: n // len(SLICES) + (i < n % len(SLICES)) for i, s in enumerate(SLICES)}
    used: set[str] = set()
    items: list[KnownItem] = []
    for slice_ in SLICES:
        rng = random.Random(f"session-browser-queries/{seed}/{slice_}")
        pool = [s for s in range(len(index.ids))
                if not index.automated[s] and (slice_ != "archived" or index.n_archived[s])]
        rng.shuffle(pool)
        got = 0
        for s in pool:
            if got >= quotas[slice_]:
                break
            if index.conv[s] in used:
                continue
            item = _make_item(index, builder, s, slice_, rng)
            if item is not None:
                items.append(item)
                used.add(index.conv[s])
                got += 1
    return items


def _make_item(index: _Index, builder: _Builder, s: int, slice_: str,
               rng: random.Random) -> KnownItem | None:
    data = load_session(index.paths[s])
    if data is None:
        return None
    messages = session_messages(data)
    archived = index.n_archived[s]
    positions = [
        i for i, m in enumerate(messages)
        if m.get("role") in ("user", "assistant") and isinstance(m.get("content"), str)
        and (i < archived if slice_ == "archived" else i >= archived)
    ]
    rng.shuffle(positions)
    for pos in positions[:_TRIES_PER_SESSION]:
        built = builder.build(slice_, str(messages[pos]["content"]), rng)
        if built is None:
            continue
        query, terms = built
        hits = index.match(terms, phrase=slice_ == "phrase")
        if hits is None or s not in hits:
            continue
        relevant = index.relevant_ids(hits)
        convs = len({conversation_key(i) for i in relevant})
        if convs > MAX_RELEVANT_CONVERSATIONS:
            continue
        return KnownItem(query, relevant, slice_, index.ids[s], pos, terms, convs)
    return None
