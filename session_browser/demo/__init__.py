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

_FILES = (
    "reportd/db/pool.py",
    "reportd/db/queries/revenue.py",
    "reportd/db/queries/churn.py",
    "reportd/db/queries/usage.py",
    "reportd/reports/daily.py",
    "reportd/reports/monthly.py",
    "reportd/reports/tenant_overview.py",
    "reportd/exports/csv_writer.py",
    "reportd/exports/xlsx_writer.py",
    "reportd/exports/s3_upload.py",
    "reportd/api/routes/reports.py",
    "reportd/api/routes/exports.py",
    "reportd/api/deps.py",
    "reportd/scheduler/jobs.py",
    "reportd/cache/redis_cache.py",
    "reportd/emails/digest.py",
    "reportd/auth/tokens.py",
    "reportd/metrics.py",
)

_FUNCS = (
    "build_daily_summary",
    "fetch_revenue_rows",
    "compute_churn",
    "load_tenant_settings",
    "render_csv",
    "render_xlsx",
    "upload_export",
    "send_digest",
    "refresh_materialized_views",
    "get_cached_report",
    "paginate_rows",
    "validate_token",
    "collect_usage",
    "tenant_overview",
    "schedule_nightly_jobs",
    "invalidate_cache",
    "monthly_rollup",
    "list_exports",
)

_ENDPOINTS = (
    "GET /reports/daily",
    "GET /reports/monthly",
    "GET /tenants/{id}/overview",
    "POST /exports",
    "GET /exports/{id}",
    "GET /usage",
)

_TABLES = ("invoices", "subscriptions", "usage_events", "tenants", "report_cache", "exports")

_DESIGN: tuple[tuple[str, str], ...] = (
    (
        "Should `{func}` take the pool or a connection?",
        "A connection if the caller might need it inside a transaction; the pool otherwise. "
        "The rule we've been following: query functions take `conn`, orchestration "
        "functions take `pool` and decide where the transaction starts.",
    ),
    (
        "`{func}` returns a list of dicts today. Keep that or switch to the `Row` dataclass?",
        "Switch, but only at the edges we touch anyway: `Row` gives mypy something to check, "
        "and `dataclasses.asdict` keeps the JSON responses identical. Callers that index "
        "with `row['x']` show up as type errors, which is the to-do list for free.",
    ),
    (
        "Where should the transaction for `{func}` start? It writes to `{table}` and to the "
        "audit log.",
        "In `{func}` itself, around both writes: `async with conn.transaction():`. The audit "
        "row must commit or roll back with the change it describes; the route handler "
        "shouldn't need to know that.",
    ),
    (
        "Do we need a repository class for `{table}`, or are plain functions fine?",
        "Plain functions. A class would only hold the pool, which we already pass in, and "
        "module-level functions are easier to grep and to fake in tests.",
    ),
)

_CANCEL: tuple[tuple[str, str], ...] = (
    (
        "What happens if the client disconnects in the middle of `{func}`?",
        "The request task is cancelled: `CancelledError` is raised at the current `await`. "
        "`async with pool.acquire()` still returns the connection (asyncpg resets it), so "
        "nothing leaks. Don't catch `CancelledError` broadly; if cleanup is needed, use "
        "`try/finally` and re-raise.",
    ),
    (
        "Should `{func}` have a timeout?",
        "Yes, at two levels: `statement_timeout` on the connection (the database stops the "
        "query) and `asyncio.timeout(10)` around the call (we stop waiting). The first one "
        "matters more: a cancelled coroutine doesn't stop a running query by itself.",
    ),
    (
        "If `{func}` is cancelled halfway through the inserts, do we end up with half a report?",
        "Not if the inserts are in one `conn.transaction()`: cancellation raises inside the "
        "block, the transaction rolls back, and the connection is reset before it goes back "
        "to the pool.",
    ),
)

_REVIEW: tuple[tuple[str, str], ...] = (
    (
        "async def {func}(pool, ids):\n    results = []\n    for i in ids:\n"
        "        results.append(await fetch_one(pool, i))\n    return results",
        "Correct, but serial: one round trip per id, each waiting for the last. Either one "
        "query with `ANY($1)` or, if `fetch_one` must stay, "
        "`await asyncio.gather(*(fetch_one(pool, i) for i in ids))` with a semaphore.",
    ),
    (
        "async def {func}(pool):\n    conn = await pool.acquire()\n"
        "    rows = await conn.fetch(QUERY)\n    await pool.release(conn)\n    return rows",
        "If `fetch` raises, `release` never runs and the connection leaks. Use "
        "`async with pool.acquire() as conn:` so release happens on every path.",
    ),
    (
        "async def {func}(pool, tenant_id):\n    data = await load(pool, tenant_id)\n"
        "    time.sleep(0.5)  # let the replica catch up\n    return await load(pool, tenant_id)",
        "`time.sleep` blocks the whole event loop for half a second, so every other request "
        "stalls too. `await asyncio.sleep(0.5)` at minimum, but better to read from the "
        "primary when you need read-your-writes.",
    ),
    (
        "async def {func}(pool, day):\n    key = f'report:{{day}}'\n"
        "    if (hit := cache.get(key)):\n        return hit\n"
        "    return await build(pool, day)",
        "`cache.get` is the sync Redis client, so it blocks the loop on every call. Use "
        "`redis.asyncio` and `await cache.get(key)`; also nothing ever writes the result "
        "back to the cache.",
    ),
)

_FLAKY = (
    "It depends on row order: `{table}` has no `ORDER BY` in the fixture query, and "
    "Postgres returns rows in whatever order is cheapest. Add `ORDER BY id` to the query, "
    "or compare sets in the test.",
    "It compares `created_at` with `datetime.now()` taken in the test; on a slow CI box the "
    "two straddle a second boundary. Freeze time or compare with a tolerance.",
    "Two tests insert the same tenant id into `{table}` and run on different xdist workers "
    "against one database. Give each worker its own schema (the worker id is in "
    "`PYTEST_XDIST_WORKER`).",
)

_ERRORS: tuple[tuple[str, str], ...] = (
    (
        "RuntimeError: Task <Task pending name='Task-7'> got Future <Future pending> "
        "attached to a different loop",
        "The pool was created at import time, on a different event loop than the one the "
        "test runs on. Create it inside the app's lifespan (and in tests, in an async "
        "fixture) so pool and requests share one loop.",
    ),
    (
        "asyncpg.exceptions.TooManyConnectionsError: sorry, too many clients already",
        "Each test builds its own pool and never closes it. Use one session-scoped pool "
        "fixture and `await pool.close()` in its teardown; also cap `max_size` at 5 in tests.",
    ),
    (
        "TypeError: object Record can't be used in 'await' expression",
        "`conn.fetchrow()` is already awaited one line up; the second `await` is on the "
        "Record it returned. Drop the extra `await`.",
    ),
    (
        "RuntimeWarning: coroutine '{func}' was never awaited",
        "A sync caller still calls `{func}()` without `await`, so it only creates a "
        "coroutine object. grep for the call sites; one is in a list comprehension, which "
        "needs `await asyncio.gather(*(...))` instead.",
    ),
    (
        "asyncpg.exceptions.DataError: invalid input for query argument $2: "
        "'2024-03-01' (expected a datetime.date or datetime.datetime instance, got 'str')",
        "psycopg2 converted strings to dates for us; asyncpg is strict about types. Parse "
        "the date at the API boundary (`date.fromisoformat`) and pass a real `date`.",
    ),
    (
        "AssertionError: assert Decimal('1204.50') == 1204.5",
        "asyncpg returns `numeric` as `Decimal`, like psycopg2 did, but the old test "
        "compared against a float that the sync code produced via `float()`. Compare with "
        "`Decimal('1204.50')`; money should stay Decimal end to end anyway.",
    ),
    (
        "asyncio.exceptions.CancelledError",
        "The test client closes the request while `{func}` is still running, which cancels "
        "it. That's correct behaviour; the test should await the response before leaving the "
        "`async with` block.",
    ),
    (
        "asyncpg.exceptions.InterfaceError: cannot perform operation: another operation "
        "is in progress",
        "Two coroutines share one connection concurrently (the `gather` inside `{func}`). "
        "A connection runs one query at a time: acquire one connection per task from the "
        "pool, or run the queries sequentially on the same connection.",
    ),
)

_MYPY = (
    (
        'Incompatible return value type (got "Coroutine[Any, Any, list[Row]]", '
        'expected "list[Row]")',
        "The caller is still sync. Make it `async def` and `await` the call; mypy will "
        "then walk you up the call chain, which is exactly the list of what's left to port.",
    ),
    (
        'Missing type parameters for generic type "Pool"',
        "Spell it `asyncpg.Pool[asyncpg.Record]` (the stubs make `Pool` generic over the "
        "record class), or add a `PgPool` alias in `reportd/db/pool.py` and use that everywhere.",
    ),
    (
        '"Record" has no attribute "tenant_id"',
        "Records are accessed by key, not attribute: `row['tenant_id']`. Or convert once "
        "with `Row(**row)` at the query boundary and use the dataclass everywhere else.",
    ),
    (
        'Argument 1 to "gather" has incompatible type "list[Coroutine[Any, Any, None]]"',
        "`gather` takes the awaitables as separate arguments: `await asyncio.gather(*tasks)`.",
    ),
)

_CI_TIPS = (
    "The asyncpg tests spin up Postgres per module; make the container session-scoped.",
    "`pytest -n 2` works now that no test shares a pool; that alone should halve it.",
    "The xlsx golden files are regenerated on every run; cache them by content hash.",
    "Half the time is `pip install`; cache the wheel directory keyed on the lockfile.",
)

_NOTES = (
    "`$1`, `$2` placeholders instead of `%s`: asyncpg uses Postgres' native ones.",
    "The connection returns to the pool at the end of the `async with`, even on errors.",
    "`fetch` returns `Record` objects; converting to `Row` at the boundary keeps the rest "
    "of the code independent of the driver.",
    "No `conn.commit()`: outside an explicit transaction each statement autocommits.",
    "I kept the function signature apart from `async`, so the diff for callers is small.",
    "The query text is unchanged, so the existing index on `(tenant_id, created_at)` still "
    "applies.",
)

_ACKS = (
    "Committed as {sha}. What's next on the list?",
    "Nice, pushed ({sha}). Next?",
    "ok merged that ({sha}). what's next",
    "Done, tests green locally, committed {sha}. Next one?",
)


def _pairing_exchange(rng: random.Random, kind: str, done: int, total: int) -> tuple[str, str]:
    """One user/assistant exchange of the pairing session."""
    func = rng.choice(_FUNCS)
    path = rng.choice(_FILES)
    table = rng.choice(_TABLES)
    if kind == "port":
        extra, args = rng.choice(
            [
                ("", ""),
                (", day: date", ", day"),
                (", since: datetime", ", since"),
                (", limit: int = 500", ", limit"),
            ]
        )
        notes = rng.sample(_NOTES, 2)
        return (
            f"Next: `{func}` in `{path}`. It still uses the sync `cursor.execute` path.",
            f"Here's the async version of `{func}`:\n\n```python\n"
            f"async def {func}(pool: PgPool, tenant_id: int{extra}) -> list[Row]:\n"
            f"    async with pool.acquire() as conn:\n"
            f"        rows = await conn.fetch(\n"
            f'            "SELECT * FROM {table} WHERE tenant_id = $1 ORDER BY created_at DESC",\n'
            f"            tenant_id{args},\n"
            f"        )\n"
            f"    return [Row(**r) for r in rows]\n```\n\n- {notes[0]}\n- {notes[1]}",
        )
    if kind == "error":
        err, fix = rng.choice(_ERRORS)
        test = f"tests/{path.split('/')[-1].replace('.py', '')}_test.py::test_{func}"
        return (
            f"`{test}` is red after that:\n\n```\n{err.format(func=func)}\n```",
            fix.format(func=func),
        )
    if kind == "batch":
        n = rng.choice([40, 120, 380, 900, 1400])
        return (
            f"`{func}` still does one query per tenant: {n} tenants, {n} round trips. "
            "Can we batch it?",
            "Yes: pass all ids as one array parameter and group in Python.\n\n```python\n"
            "rows = await conn.fetch(\n"
            f'    "SELECT * FROM {table} WHERE tenant_id = ANY($1::bigint[])",\n'
            "    tenant_ids,\n)\nby_tenant = defaultdict(list)\nfor r in rows:\n"
            "    by_tenant[r['tenant_id']].append(Row(**r))\n```\n\n"
            f"One round trip instead of {n}. If the list can get huge, chunk it by 1,000.",
        )
    if kind == "gather":
        other = rng.choice([f for f in _FUNCS if f != func])
        return (
            f"`{func}` and `{other}` are independent. Can they run concurrently?",
            "Yes, with a task group; each task acquires its own connection:\n\n```python\n"
            "async with asyncio.TaskGroup() as tg:\n"
            f"    a = tg.create_task({func}(pool, tenant_id))\n"
            f"    b = tg.create_task({other}(pool, tenant_id))\n"
            "return combine(a.result(), b.result())\n```\n\n"
            "Watch the pool size: every concurrent request now holds two connections. "
            "With `max_size=20` that's 10 requests in flight before they queue.",
        )
    if kind == "bench":
        endpoint = rng.choice(_ENDPOINTS)
        p50a = rng.randint(80, 600)
        p95a = p50a * rng.randint(3, 6)
        better = rng.random() < 0.8
        p50b = int(p50a * (rng.uniform(0.25, 0.7) if better else rng.uniform(1.05, 1.4)))
        p95b = int(p95a * (rng.uniform(0.2, 0.6) if better else rng.uniform(1.1, 1.6)))
        user = (
            f"Benchmark for `{endpoint}` on the staging dataset: p50 {p50a} ms -> {p50b} ms, "
            f"p95 {p95a} ms -> {p95b} ms."
        )
        if better:
            return user, (
                f"Good: the p95 gain ({p95a} -> {p95b} ms) is bigger than the p50 gain, which "
                "is what removing serial round trips should do. Worth noting in the PR, "
                "with the dataset size so the numbers can be reproduced."
            )
        return user, (
            "Slower, so something is serialising. My guess is the pool: "
            "`min_size=1` means the first burst of requests waits for new connections. Try "
            "`min_size=5` and run it again before we dig into the queries."
        )
    if kind == "mypy":
        err, fix = rng.choice(_MYPY)
        return f"mypy in `{path}`: `error: {err}`", fix
    if kind == "design":
        q, ans = rng.choice(_DESIGN)
        return q.format(func=func, path=path, table=table), ans.format(func=func, table=table)
    if kind == "cancel":
        q, ans = rng.choice(_CANCEL)
        return q.format(func=func), ans.format(func=func)
    if kind == "review":
        bug, fix = rng.choice(_REVIEW)
        return (
            f"Does this look right? From `{path}`:\n\n```python\n{bug.format(func=func)}\n```",
            fix.format(func=func),
        )
    if kind == "flaky":
        runs = rng.randint(3, 9)
        return (
            f"`test_{func}` failed in CI, passed on re-run. Third time this week ({runs} runs).",
            rng.choice(_FLAKY).format(func=func, table=table),
        )
    if kind == "ci":
        minutes = rng.randint(11, 24)
        return (
            f"CI is slow today, {minutes} minutes for the test job 🙄",
            rng.choice(_CI_TIPS),
        )
    if kind == "sql":
        ms = rng.randint(250, 2400)
        return (
            f"The query in `{func}` takes {ms} ms for the biggest tenant.",
            f"Can you paste `EXPLAIN (ANALYZE, BUFFERS)` for it? If it's a seq scan on "
            f"`{table}`, an index on `(tenant_id, created_at DESC)` is the usual fix; if it's "
            "a sort spilling to disk, raising `work_mem` for that one query will show it.",
        )
    if kind == "logging":
        return (
            f"Add structured logging to `{func}`?",
            "```python\nlog.info(\n"
            f'    "{func} done",\n'
            '    extra={"tenant_id": tenant_id, "rows": len(rows), '
            '"elapsed_ms": round(elapsed * 1000)},\n)\n```\n\n'
            "Keep the message constant and put the variables in `extra`, so the log search "
            "can group by message.",
        )
    if kind == "test":
        return (
            f"Write a test for `{func}`?",
            "```python\n"
            f"async def test_{func}_returns_rows_for_one_tenant(pool, seed_tenants):\n"
            f"    rows = await {func}(pool, tenant_id=seed_tenants.acme)\n"
            "    assert rows\n"
            "    assert {r.tenant_id for r in rows} == {seed_tenants.acme}\n```\n\n"
            "`pool` and `seed_tenants` come from `conftest.py`; the second tenant in the seed "
            "data is what makes the isolation assertion meaningful.",
        )
    # "next"
    sha = f"{rng.getrandbits(28):07x}"
    nxt = rng.choice(_FILES)
    return (
        rng.choice(_ACKS).format(sha=sha),
        f"Progress: {done} of {total} modules ported. Next up is `{nxt}`; it has the "
        f"most call sites left, so porting it now unblocks the rest.",
    )


_KINDS = (
    ("port", 5),
    ("error", 4),
    ("next", 4),
    ("batch", 2),
    ("gather", 1),
    ("bench", 2),
    ("mypy", 2),
    ("design", 2),
    ("cancel", 1),
    ("review", 2),
    ("flaky", 1),
    ("ci", 1),
    ("sql", 2),
    ("logging", 1),
    ("test", 2),
)

_MILESTONES: dict[str, tuple[str, str, str]] = {
    "kickoff": (
        "Today we start porting `reportd` from Flask + psycopg2 to async (FastAPI + asyncpg). "
        "18 modules. Plan?",
        "Bottom-up, so every step is shippable:\n\n1. `db/pool.py`: one asyncpg pool "
        "created in the app lifespan.\n2. Query modules, one at a time, each with its tests.\n"
        "3. Reports and exports on top of them.\n4. Routes last; until then a sync shim "
        "calls the async code.\n\nWe keep a checklist and commit after every module.",
        "what is the plan for the reportd async port",
    ),
    "shim": (
        "The sync callers in the scheduler still need the old functions. Keep a shim, or port "
        "the scheduler now?",
        "**Decision: keep the `reportd.compat.run_sync()` shim until v3.0** and delete it in "
        "the first release after. It runs a coroutine on a private event loop thread, so "
        "sync callers keep working while we port. Every use logs a deprecation warning with "
        "the caller, so we can see what's left.",
        "how long do we keep the run_sync shim",
    ),
    "leak": (
        "Load test on staging died with `TooManyConnectionsError` after 20 minutes. Leak?",
        "Found it: `get_cached_report` returns early on a cache hit *between* "
        "`pool.acquire()` and `pool.release()`, so every cache hit leaked a connection. "
        "Switched it to `async with pool.acquire() as conn:`; there are no manual "
        "`release()` calls left anywhere now, and the 2-hour load test is flat at 14 "
        "connections.",
        "what caused the connection leak in the load test",
    ),
    "xlsx": (
        "Big tenants' xlsx exports take 40 s and time out behind the load balancer.",
        "**Decision: xlsx exports become a background job.** `POST /exports` returns "
        "`202 Accepted` with an export id; the job writes the file to S3 and "
        "`GET /exports/{id}` returns a signed URL when it's ready. CSV stays synchronous "
        "because it streams.",
        "why do xlsx exports return 202",
    ),
}


def _pairing_session(
    rng: random.Random, exchanges: int
) -> tuple[list[_Turn], dict[int, float], list[tuple[str, int]]]:
    """A long, deterministic pairing session: turns, overnight/lunch pauses, milestones."""
    exchanges = max(exchanges, 40)
    fixed = {
        0: "kickoff",
        int(exchanges * 0.27): "shim",
        int(exchanges * 0.58): "leak",
        int(exchanges * 0.82): "xlsx",
    }
    kinds = [k for k, w in _KINDS for _ in range(w)]
    turns: list[_Turn] = []
    pauses: dict[int, float] = {}
    milestones: list[tuple[str, int]] = []
    total_modules = len(_FILES)
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
            user, assistant, question = _MILESTONES[fixed[ex]]
            milestones.append((question, len(turns) + 1))
        elif ex == lunch_at and day_left > 0:
            user = "Lunch, back in an hour."
            assistant = "Enjoy! When you're back we pick up with the failing test from before."
        else:
            user, assistant = _pairing_exchange(rng, rng.choice(kinds), done, total_modules)
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
