"""The built-in demo store: a PraisonAI home full of believable sessions.

:func:`build_demo_store` writes, under ``root`` (a PraisonAI home):

- ``root/sessions/<safe_id>.json``: one file per session, exactly as
  ``praisonaiagents`` writes them (``json.dump(indent=2, ensure_ascii=False)``, mode 0600,
  float epoch message timestamps, ISO ``created_at`` / ``updated_at``);
- ``root/sessions/<safe_id>.json.corrupt-<epoch_ms>``: two quarantined corrupt files, a
  truncated copy of a session whose (older, shorter) live file also exists, and a copy with
  invalid UTF-8 in the middle of a session that has no live file any more;
- ``root/state/session_spill/<safe_id>.<epoch_ms>.<pid>.<8hex>.json``: one spill file with
  turns a failed write could not persist, belonging to an existing session.

The conversations themselves live in ``conversations.json`` beside this module (original
text written for this project). One more session, a long pairing session of 2,000+
messages, is generated here, deterministically. Every timestamp is relative to ``now``, so
the demo always looks recent; building twice with the same ``now`` gives byte-identical
files. The only randomness is a :class:`random.Random` seeded from each session id.

Plain standard library: no textual, no rich, nothing from the rest of the package.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = [
    "DemoInfo",
    "KnownItem",
    "build_demo_store",
    "demo_session_ids",
    "safe_session_id",
]

DAY = 86400.0
FILE_MODE = 0o600
#: Interactive sessions are kept well under the "more than 60 messages an hour" rule that
#: marks a session as automated.
MAX_INTERACTIVE_RATE = 40.0
_SEED_PREFIX = "session-browser-demo/"
_DATA_FILE = "conversations.json"


# --------------------------------------------------------------------------- public types


@dataclass(frozen=True)
class KnownItem:
    """A question the demo can answer: the session and message index holding the answer.

    ``index`` is in the projection's coordinates: ``archived_messages`` first, then
    ``messages`` (whose first entry is the compaction summary in a compacted session).
    """

    question: str
    session_id: str
    index: int


@dataclass(frozen=True)
class DemoInfo:
    """What :func:`build_demo_store` wrote, and which sessions show which feature."""

    root: Path
    sessions_dir: Path
    spill_dir: Path
    #: Every live session, in the order of ``conversations.json``.
    session_ids: tuple[str, ...]
    #: The quarantined ``*.json.corrupt-<ms>`` files (truncated first, bad UTF-8 second).
    corrupt_files: tuple[Path, ...]
    spill_files: tuple[Path, ...]
    #: Compacted: a summary message first, the early turns in ``archived_messages``.
    archived_id: str
    #: ``"source": "cron"``, turns two seconds apart.
    automated_id: str
    #: Three sessions sharing ``metadata.lineage_id``, oldest first.
    lineage_ids: tuple[str, ...]
    #: Rich markup, ANSI/OSC escapes, BEL, RLM, emoji and CJK in titles and text.
    hostile_id: str
    #: The generated 2,000+ message session.
    long_id: str
    #: Assistant ``tool_calls`` and ``role: tool`` results.
    tools_id: str
    #: Holds the billing-migration decision.
    decision_id: str
    #: Owns the spill file.
    spill_owner_id: str
    #: Live file shorter than its truncated quarantined copy.
    salvage_id: str
    #: Exists only as the bad-UTF-8 quarantined copy (no live file).
    lost_id: str
    known_items: tuple[KnownItem, ...]
    now: float


def safe_session_id(session_id: str) -> str:
    """The file-name stem PraisonAI uses: anything but letters, digits, ``-``, ``_`` -> ``_``."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in session_id)


def demo_session_ids() -> tuple[str, ...]:
    """The ids of the live demo sessions, without building anything."""
    return tuple(c.id for c in _load_conversations() if c.role != "lost")


# --------------------------------------------------------------------------- data model


@dataclass(frozen=True)
class _Turn:
    role: str
    content: str
    tool_calls: tuple[dict[str, Any], ...] = ()
    tool_call_id: str | None = None


@dataclass(frozen=True)
class _Spill:
    minutes_after: float
    turns: tuple[_Turn, ...]


@dataclass(frozen=True)
class _Salvage:
    live_prefix: int
    keep_fraction: float
    days_ago_after: float
    turns_after: tuple[_Turn, ...]


@dataclass(frozen=True)
class _Conversation:
    id: str
    days_ago: float
    turns: tuple[_Turn, ...]
    title: str | None = None
    agent_name: str | None = None
    user_id: str | None = None
    source: str | None = None
    lineage_id: str | None = None
    lineage_part: int = 0
    role: str | None = None
    gap: tuple[float, float] | None = None
    pauses: Mapping[int, float] | None = None
    archived_upto: int = 0
    answers: tuple[tuple[str, int], ...] = ()
    extra_metadata: Mapping[str, Any] | None = None
    spill: _Spill | None = None
    salvage: _Salvage | None = None
    generate: str | None = None
    exchanges: int = 0


def _req(obj: Mapping[str, Any], key: str, typ: type[Any]) -> Any:
    val = obj.get(key)
    if not isinstance(val, typ) or (isinstance(val, bool) and typ is not bool):
        raise ValueError(f"demo data: {key!r} must be {typ.__name__}, got {val!r}")
    return val


def _opt_str(obj: Mapping[str, Any], key: str) -> str | None:
    val = obj.get(key)
    if val is not None and not isinstance(val, str):
        raise ValueError(f"demo data: {key!r} must be a string or null, got {val!r}")
    return val


def _num(obj: Mapping[str, Any], key: str, default: float | None = None) -> float:
    val = obj.get(key, default)
    if isinstance(val, bool) or not isinstance(val, int | float):
        raise ValueError(f"demo data: {key!r} must be a number, got {val!r}")
    return float(val)


def _parse_turn(raw: Any) -> _Turn:
    if not isinstance(raw, list) or len(raw) not in (2, 3):
        raise ValueError(f"demo data: a turn is [role, text] or [role, text, extras]: {raw!r}")
    role, content = raw[0], raw[1]
    if role not in ("user", "assistant", "tool", "system") or not isinstance(content, str):
        raise ValueError(f"demo data: bad turn {raw[:2]!r}")
    extras: Mapping[str, Any] = raw[2] if len(raw) == 3 else {}
    if not isinstance(extras, dict):
        raise ValueError(f"demo data: turn extras must be an object: {extras!r}")
    calls = extras.get("tool_calls") or []
    if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
        raise ValueError(f"demo data: tool_calls must be a list of objects: {calls!r}")
    return _Turn(role, content, tuple(calls), _opt_str(extras, "tool_call_id"))


def _parse_turns(raw: Any) -> tuple[_Turn, ...]:
    if not isinstance(raw, list):
        raise ValueError("demo data: turns must be a list")
    return tuple(_parse_turn(t) for t in raw)


def _parse_conversation(obj: Any) -> _Conversation:
    if not isinstance(obj, dict):
        raise ValueError(f"demo data: a conversation must be an object: {obj!r}")
    lineage = obj.get("lineage")
    gap = obj.get("gap")
    spill = obj.get("spill")
    salvage = obj.get("salvage")
    pauses = obj.get("pauses") or {}
    extra = obj.get("metadata")
    return _Conversation(
        id=_req(obj, "id", str),
        days_ago=_num(obj, "days_ago"),
        turns=_parse_turns(obj.get("turns", [])),
        title=_opt_str(obj, "title"),
        agent_name=_opt_str(obj, "agent_name"),
        user_id=_opt_str(obj, "user_id"),
        source=_opt_str(obj, "source"),
        lineage_id=_req(lineage, "id", str) if isinstance(lineage, dict) else None,
        lineage_part=int(_num(lineage, "part")) if isinstance(lineage, dict) else 0,
        role=_opt_str(obj, "demo_role"),
        gap=(float(gap[0]), float(gap[1])) if isinstance(gap, list) else None,
        pauses={int(k): float(v) for k, v in pauses.items()},
        archived_upto=int(_num(obj, "archived_upto", 0)),
        answers=tuple(
            (_req(ans, "question", str), int(_num(ans, "turn"))) for ans in obj.get("answers", [])
        ),
        extra_metadata=extra if isinstance(extra, dict) else None,
        spill=(
            _Spill(_num(spill, "minutes_after"), _parse_turns(spill.get("turns")))
            if isinstance(spill, dict)
            else None
        ),
        salvage=(
            _Salvage(
                live_prefix=int(_num(salvage, "live_prefix")),
                keep_fraction=_num(salvage, "keep_fraction", 0.7),
                days_ago_after=_num(salvage, "days_ago_after"),
                turns_after=_parse_turns(salvage.get("turns_after", [])),
            )
            if isinstance(salvage, dict)
            else None
        ),
        generate=_opt_str(obj, "generate"),
        exchanges=int(_num(obj, "exchanges", 0)),
    )


def _load_conversations() -> list[_Conversation]:
    text = resources.files(__name__).joinpath(_DATA_FILE).read_text(encoding="utf-8")
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("sessions"), list):
        raise ValueError(f"demo data: {_DATA_FILE} must be an object with a 'sessions' list")
    convs = [_parse_conversation(c) for c in data["sessions"]]
    ids = [c.id for c in convs]
    if len(set(map(safe_session_id, ids))) != len(ids):
        raise ValueError("demo data: two sessions share a file name")
    return convs


# --------------------------------------------------------------------------- timelines


def _gap(prev: _Turn, cur: _Turn, rng: random.Random, fixed: tuple[float, float] | None) -> float:
    """Seconds between two consecutive turns: people read and type, tools are quick."""
    if fixed is not None:
        lo, hi = fixed
        return lo if lo == hi else rng.uniform(lo, hi)
    if cur.role == "tool":
        return rng.uniform(1.5, 9.0)
    if cur.role == "assistant":
        return rng.uniform(20.0, 75.0) if prev.role == "tool" else rng.uniform(75.0, 200.0)
    return rng.uniform(150.0, 600.0)


def _offsets(
    turns: Sequence[_Turn],
    rng: random.Random,
    *,
    fixed: tuple[float, float] | None = None,
    pauses: Mapping[int, float] | None = None,
    max_rate: float | None = MAX_INTERACTIVE_RATE,
) -> list[float]:
    """Seconds from the first turn to each turn.

    With ``max_rate``, ordinary gaps are stretched if needed so the session stays under
    ``max_rate`` messages an hour over its whole span (pauses count as they are).
    """
    gaps = [0.0] + [_gap(turns[i - 1], turns[i], rng, fixed) for i in range(1, len(turns))]
    pause_total = 0.0
    for i, secs in (pauses or {}).items():
        if 0 < i < len(gaps):
            gaps[i] = secs
            pause_total += secs
    if max_rate is not None and len(turns) >= 4:
        needed = len(turns) / max_rate * 3600.0
        ordinary = sum(gaps) - pause_total
        if sum(gaps) < needed and ordinary > 0:
            scale = (needed - pause_total) / ordinary
            gaps = [g if i in (pauses or {}) else g * scale for i, g in enumerate(gaps)]
    out: list[float] = []
    total = 0.0
    for g in gaps:
        total += g
        out.append(total)
    return out


def _stamps(offsets: Sequence[float], end: float) -> list[float]:
    """Absolute timestamps for ``offsets`` so that the last one falls on ``end``."""
    last = offsets[-1] if offsets else 0.0
    return [round(end - (last - off), 6) for off in offsets]


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat()


# --------------------------------------------------------------------------- documents


def _message(turn: _Turn, ts: float) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "role": turn.role,
        "content": turn.content,
        "timestamp": ts,
        "metadata": {},
    }
    if turn.tool_calls:
        msg["tool_calls"] = [dict(c) for c in turn.tool_calls]
    if turn.tool_call_id is not None:
        msg["tool_call_id"] = turn.tool_call_id
    return msg


def _summary_message(archived: Sequence[dict[str, Any]], ts: float) -> dict[str, Any]:
    """The compaction summary PraisonAI's "compact" retention writes (fallback summariser)."""
    counts = {"user": 0, "assistant": 0, "tool": 0, "system": 0}
    for m in archived:
        counts[m["role"]] = counts.get(m["role"], 0) + 1
    text = f"Previous conversation: {len(archived)} messages\nMessage breakdown: {counts}"
    return {
        "role": "system",
        "content": f"[Session Summary]\n{text}",
        "timestamp": ts,
        "metadata": {"compaction": True, "compacted_count": len(archived)},
    }


def _metadata(conv: _Conversation, lineage_prev: Mapping[tuple[str, int], str]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if conv.title is not None:
        meta["title"] = conv.title
    if conv.source is not None:
        meta["source"] = conv.source
    if conv.lineage_id is not None:
        meta["lineage_id"] = conv.lineage_id
        meta["lineage_part"] = conv.lineage_part
        prev = lineage_prev.get((conv.lineage_id, conv.lineage_part - 1))
        if prev is not None:
            meta["continued_from"] = prev
    if conv.extra_metadata:
        meta.update(conv.extra_metadata)
    return meta


def _session_doc(
    conv: _Conversation,
    messages: list[dict[str, Any]],
    archived: list[dict[str, Any]],
    metadata: dict[str, Any],
) -> dict[str, Any]:
    every = archived + messages
    stamps = [float(m["timestamp"]) for m in every]
    doc: dict[str, Any] = {
        "session_id": conv.id,
        "messages": messages,
        "created_at": _iso(min(stamps)),
        "updated_at": _iso(max(stamps)),
        "agent_name": conv.agent_name,
        "user_id": conv.user_id,
        "metadata": metadata,
        "gateway_session_id": None,
        "agent_id": None,
        "runtime_state": {},
        "archived_messages": archived,
    }
    # PraisonAI mirrors a few metadata keys at the top level.
    if "source" in metadata:
        doc["source"] = metadata["source"]
    return doc


def _dump(doc: Any, *, indent: int | None = 2) -> bytes:
    return json.dumps(doc, indent=indent, ensure_ascii=False).encode("utf-8")


def _write(path: Path, payload: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    os.chmod(path, FILE_MODE)


def _corrupt_utf8(raw: bytes) -> bytes:
    """``raw`` with six bytes in the middle of a message's text replaced by invalid UTF-8.

    The bytes replaced are plain ASCII letters inside a ``"content"`` string, so the damage
    is confined to one message: a tolerant decoder still sees a whole JSON document.
    """
    start = raw.find(b'"content": "', len(raw) // 2)
    if start < 0:
        start = raw.find(b'"content": "')
    pos = start + len(b'"content": "') + 24
    allowed = set(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ")
    while pos + 6 <= len(raw) and not all(b in allowed for b in raw[pos : pos + 6]):
        pos += 1
    if pos + 6 > len(raw):
        raise ValueError("demo data: no place to corrupt")
    return raw[:pos] + b"\xff\xfe\xc3\x28\xa0\xa1" + raw[pos + 6 :]


def _truncate(raw: bytes, fraction: float) -> bytes:
    """The first ``fraction`` of ``raw``, cut on a UTF-8 character boundary."""
    cut = int(len(raw) * fraction)
    while 0 < cut < len(raw) and 0x80 <= raw[cut] < 0xC0:
        cut -= 1
    return raw[:cut]


# --------------------------------------------------------------------------- the build


def build_demo_store(root: Path, *, now: float | None = None) -> DemoInfo:
    """Write the demo store under the PraisonAI home ``root`` and describe it.

    Existing files with the same names are overwritten; nothing else under ``root`` is
    touched. Deterministic for a given ``now`` (default: the current time).
    """
    now = time.time() if now is None else float(now)
    root = Path(root)
    sessions_dir = root / "sessions"
    spill_dir = root / "state" / "session_spill"
    sessions_dir.mkdir(parents=True, exist_ok=True)
    spill_dir.mkdir(parents=True, exist_ok=True)

    convs = _load_conversations()
    lineage_prev = {(c.lineage_id, c.lineage_part): c.id for c in convs if c.lineage_id is not None}
    session_ids: list[str] = []
    corrupt_truncated: list[Path] = []
    corrupt_utf8: list[Path] = []
    spill_files: list[Path] = []
    known: list[KnownItem] = []
    roles: dict[str, list[str]] = {}

    for conv in convs:
        rng = random.Random(_SEED_PREFIX + conv.id)
        stem = safe_session_id(conv.id)
        end = now - conv.days_ago * DAY
        meta = _metadata(conv, lineage_prev)
        if conv.role:
            roles.setdefault(conv.role, []).append(conv.id)

        if conv.generate == "pairing":
            turns, pauses, milestones = _pairing_session(rng, conv.exchanges)
            offsets = _offsets(turns, rng, pauses=pauses, max_rate=None)
            known.extend(KnownItem(q, conv.id, i) for q, i in milestones)
        else:
            turns = list(conv.turns)
            automated = conv.source is not None or conv.gap is not None
            offsets = _offsets(
                turns,
                rng,
                fixed=conv.gap,
                pauses=conv.pauses,
                max_rate=None if automated else MAX_INTERACTIVE_RATE,
            )
        stamps = _stamps(offsets, end)
        msgs = [_message(t, ts) for t, ts in zip(turns, stamps, strict=True)]

        if conv.role == "lost":
            # Only a quarantined copy survives, with a few bytes of garbage in the middle.
            ms = int((stamps[-1] + 2.0) * 1000)
            path = sessions_dir / f"{stem}.json.corrupt-{ms}"
            _write(path, _corrupt_utf8(_dump(_session_doc(conv, msgs, [], meta))))
            corrupt_utf8.append(path)
            continue

        if conv.salvage is not None:
            sv = conv.salvage
            # The full conversation was being saved when the machine died: the file was cut
            # short and later quarantined. The live file is an older backup copy (the first
            # turns) plus what was said after restoring it.
            ms = int((stamps[-1] + 2.5) * 1000)
            path = sessions_dir / f"{stem}.json.corrupt-{ms}"
            full = _dump(_session_doc(conv, msgs, [], meta))
            _write(path, _truncate(full, sv.keep_fraction))
            corrupt_truncated.append(path)
            after = list(sv.turns_after)
            after_stamps = _stamps(_offsets(after, rng), now - sv.days_ago_after * DAY)
            msgs = msgs[: sv.live_prefix] + [
                _message(t, ts) for t, ts in zip(after, after_stamps, strict=True)
            ]

        archived: list[dict[str, Any]] = []
        if conv.archived_upto > 0:
            n = conv.archived_upto
            archived = msgs[:n]
            summary = _summary_message(archived, round(archived[-1]["timestamp"] + 1.0, 6))
            msgs = [summary, *msgs[n:]]

        for question, turn in conv.answers:
            index = turn + 1 if conv.archived_upto and turn >= conv.archived_upto else turn
            known.append(KnownItem(question, conv.id, index))

        _write(sessions_dir / f"{stem}.json", _dump(_session_doc(conv, msgs, archived, meta)))
        session_ids.append(conv.id)

        if conv.spill is not None:
            sp = conv.spill
            sp_turns = list(sp.turns)
            first = float(msgs[-1]["timestamp"]) + sp.minutes_after * 60.0
            sp_offsets = _offsets(sp_turns, rng, max_rate=None)
            sp_stamps = [round(first + off, 6) for off in sp_offsets]
            spilled_at = sp_stamps[-1] + 0.35
            payload = {
                "session_id": conv.id,
                "spilled_at": _iso(spilled_at),
                "messages": [_message(t, ts) for t, ts in zip(sp_turns, sp_stamps, strict=True)],
            }
            pid = rng.randint(2000, 65000)
            name = f"{stem}.{int(spilled_at * 1000)}.{pid}.{rng.getrandbits(32):08x}.json"
            path = spill_dir / name
            # PraisonAI writes spill files compactly (json.dump(..., ensure_ascii=False)).
            _write(path, _dump(payload, indent=None))
            spill_files.append(path)

    def one(role: str) -> str:
        ids = roles.get(role, [])
        if len(ids) != 1:
            raise ValueError(f"demo data: expected one {role!r} session, found {ids!r}")
        return ids[0]

    lineage = sorted((c for c in convs if c.lineage_id is not None), key=lambda c: c.lineage_part)
    return DemoInfo(
        root=root,
        sessions_dir=sessions_dir,
        spill_dir=spill_dir,
        session_ids=tuple(session_ids),
        corrupt_files=tuple(corrupt_truncated + corrupt_utf8),
        spill_files=tuple(spill_files),
        archived_id=one("archived"),
        automated_id=one("automated"),
        lineage_ids=tuple(c.id for c in lineage),
        hostile_id=one("hostile"),
        long_id=one("long"),
        tools_id=one("tools"),
        decision_id=one("decision"),
        spill_owner_id=one("spill_owner"),
        salvage_id=one("salvage"),
        lost_id=one("lost"),
        known_items=tuple(known),
        now=now,
    )


# --------------------------------------------------------------------------- long session

_PAIRING_FILE = "pairing.json"


@dataclass(frozen=True)
class _Pairing:
    """The vocabulary of the generated pairing session (``pairing.json``)."""

    files: tuple[str, ...]
    funcs: tuple[str, ...]
    endpoints: tuple[str, ...]
    tables: tuple[str, ...]
    notes: tuple[str, ...]
    acks: tuple[str, ...]
    flaky: tuple[str, ...]
    ci_tips: tuple[str, ...]
    errors: tuple[tuple[str, str], ...]
    mypy: tuple[tuple[str, str], ...]
    design: tuple[tuple[str, str], ...]
    cancel: tuple[tuple[str, str], ...]
    review: tuple[tuple[str, str], ...]
    #: (extra parameters, the arguments passing them) of a ported function
    signatures: tuple[tuple[str, str], ...]
    #: each exchange kind and how many times it is in the draw
    kinds: tuple[tuple[str, int], ...]
    #: kind -> its texts: "user", "assistant" (and "assistant_slower" for a benchmark)
    exchanges: Mapping[str, Mapping[str, str]]
    #: name -> (user, assistant, the question whose answer the assistant turn is)
    milestones: Mapping[str, tuple[str, str, str]]


def _strings(obj: Mapping[str, Any], key: str) -> tuple[str, ...]:
    val = _req(obj, key, list)
    if not all(isinstance(v, str) for v in val):
        raise ValueError(f"demo data: {key!r} must be a list of strings")
    return tuple(val)


def _pairs(obj: Mapping[str, Any], key: str) -> tuple[tuple[str, str], ...]:
    val = _req(obj, key, list)
    if not all(isinstance(v, list) and [type(t) for t in v] == [str, str] for v in val):
        raise ValueError(f"demo data: {key!r} must be a list of [text, text] pairs")
    return tuple((v[0], v[1]) for v in val)


def _load_pairing() -> _Pairing:
    text = resources.files(__name__).joinpath(_PAIRING_FILE).read_text(encoding="utf-8")
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError(f"demo data: {_PAIRING_FILE} must be an object")
    kinds = _req(data, "kinds", dict)
    if not all(isinstance(w, int) and not isinstance(w, bool) and w > 0 for w in kinds.values()):
        raise ValueError("demo data: 'kinds' must map each kind to a positive count")
    exchanges = {kind: _req(_req(data, "exchanges", dict), kind, dict) for kind in kinds}
    for kind, texts in exchanges.items():
        if not isinstance(texts.get("user"), str) or not isinstance(texts.get("assistant"), str):
            raise ValueError(f"demo data: exchange {kind!r} needs a user and an assistant text")
    milestones = {
        name: (_req(m, "user", str), _req(m, "assistant", str), _req(m, "question", str))
        for name, m in _req(data, "milestones", dict).items()
    }
    return _Pairing(
        files=_strings(data, "files"),
        funcs=_strings(data, "funcs"),
        endpoints=_strings(data, "endpoints"),
        tables=_strings(data, "tables"),
        notes=_strings(data, "notes"),
        acks=_strings(data, "acks"),
        flaky=_strings(data, "flaky"),
        ci_tips=_strings(data, "ci_tips"),
        errors=_pairs(data, "errors"),
        mypy=_pairs(data, "mypy"),
        design=_pairs(data, "design"),
        cancel=_pairs(data, "cancel"),
        review=_pairs(data, "review"),
        signatures=_pairs(data, "signatures"),
        kinds=tuple(kinds.items()),
        exchanges=exchanges,
        milestones=milestones,
    )


def _pairing_exchange(
    v: _Pairing, rng: random.Random, kind: str, done: int, total: int
) -> tuple[str, str]:
    """One user/assistant exchange of the pairing session: the random picks of its kind
    (always drawn in the same order, so the demo is the same on every build) filled into
    that kind's texts."""
    func = rng.choice(v.funcs)
    path = rng.choice(v.files)
    table = rng.choice(v.tables)
    fields: dict[str, object] = {"func": func, "path": path, "table": table}
    texts = v.exchanges[kind]
    answer = "assistant"
    if kind == "port":
        fields["extra"], fields["args"] = rng.choice(v.signatures)
        fields["note1"], fields["note2"] = rng.sample(v.notes, 2)
    elif kind == "error":
        err, fix = rng.choice(v.errors)
        name = path.split("/")[-1].replace(".py", "")
        fields |= {"test": f"tests/{name}_test.py::test_{func}", "error": err.format(func=func)}
        fields["fix"] = fix.format(func=func)
    elif kind == "batch":
        fields["n"] = rng.choice([40, 120, 380, 900, 1400])
    elif kind == "gather":
        fields["other"] = rng.choice([f for f in v.funcs if f != func])
    elif kind == "bench":
        fields["endpoint"] = rng.choice(v.endpoints)
        p50a = rng.randint(80, 600)
        p95a = p50a * rng.randint(3, 6)
        better = rng.random() < 0.8
        p50b = int(p50a * (rng.uniform(0.25, 0.7) if better else rng.uniform(1.05, 1.4)))
        p95b = int(p95a * (rng.uniform(0.2, 0.6) if better else rng.uniform(1.1, 1.6)))
        fields |= {"p50a": p50a, "p95a": p95a, "p50b": p50b, "p95b": p95b}
        answer = "assistant" if better else "assistant_slower"
    elif kind == "mypy":
        fields["error"], fields["fix"] = rng.choice(v.mypy)
    elif kind in ("design", "cancel"):
        question, reply = rng.choice(v.design if kind == "design" else v.cancel)
        fields["question"] = question.format(func=func, path=path, table=table)
        fields["answer"] = reply.format(func=func, table=table)
    elif kind == "review":
        bug, fix = rng.choice(v.review)
        fields["code"], fields["fix"] = bug.format(func=func), fix.format(func=func)
    elif kind == "flaky":
        fields["runs"] = rng.randint(3, 9)
        fields["tip"] = rng.choice(v.flaky).format(func=func, table=table)
    elif kind == "ci":
        fields["minutes"] = rng.randint(11, 24)
        fields["tip"] = rng.choice(v.ci_tips)
    elif kind == "sql":
        fields["ms"] = rng.randint(250, 2400)
    elif kind == "next":
        sha = f"{rng.getrandbits(28):07x}"
        fields |= {"next": rng.choice(v.files), "done": done, "total": total}
        fields["ack"] = rng.choice(v.acks).format(sha=sha)
    return texts["user"].format(**fields), texts[answer].format(**fields)


def _pairing_session(
    rng: random.Random, exchanges: int
) -> tuple[list[_Turn], dict[int, float], list[tuple[str, int]]]:
    """A long, deterministic pairing session: turns, overnight/lunch pauses, milestones."""
    exchanges = max(exchanges, 40)
    v = _load_pairing()
    fixed = {
        0: "kickoff",
        int(exchanges * 0.27): "shim",
        int(exchanges * 0.58): "leak",
        int(exchanges * 0.82): "xlsx",
    }
    kinds = [k for k, w in v.kinds for _ in range(w)]
    turns: list[_Turn] = []
    pauses: dict[int, float] = {}
    milestones: list[tuple[str, int]] = []
    total_modules = len(v.files)
    day_left = rng.randint(48, 62)
    lunch_at = day_left // 2
    day_number = 1
    for ex in range(exchanges):
        done = min(total_modules, 1 + ex * total_modules // exchanges)
        if ex == exchanges - 1:
            user = "That's the last module. Can you write the summary for the PR description?"
            assistant = (
                f"**reportd async port: summary**\n\n- All {total_modules} modules on "
                "asyncpg; Flask replaced by FastAPI.\n- `reportd.compat.run_sync()` shim "
                "kept for the scheduler until v3.0.\n- Fixed a connection leak on cache hits "
                "in `get_cached_report`.\n- xlsx exports are background jobs (202 + export "
                "id); CSV still streams.\n- p95 of the report endpoints down roughly 3x on "
                "the staging dataset."
            )
        elif ex in fixed:
            user, assistant, question = v.milestones[fixed[ex]]
            milestones.append((question, len(turns) + 1))
        elif ex == lunch_at and day_left > 0:
            user = "Lunch, back in an hour."
            assistant = "Enjoy! When you're back we pick up with the failing test from before."
        else:
            user, assistant = _pairing_exchange(v, rng, rng.choice(kinds), done, total_modules)
        if day_left == 0:
            # A new working day: the night before is a long pause.
            day_number += 1
            day_left = rng.randint(48, 62)
            lunch_at = ex + day_left // 2
            pauses[len(turns)] = rng.uniform(14.0, 16.0) * 3600.0
            user = f"Morning! Day {day_number} of the port. {user}"
        elif ex == lunch_at + 1 and ex > 0:
            pauses[len(turns)] = rng.uniform(50.0, 70.0) * 60.0
        turns.append(_Turn("user", user))
        turns.append(_Turn("assistant", assistant))
        day_left -= 1
    return turns, pauses, milestones
