"""A deterministic benchmark corpus of real conversations, written as a PraisonAI session store.

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

Known-item queries over the store: :mod:`session_browser.bench.queries`.
"""

from __future__ import annotations

import json
import random
import re
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from session_browser.bench.data import (
    DATA_DIR_ENV,
    SGD_FILENAME,
    Conversation,
    chitchat_dataset_path,
    find_sgd_path,
    iter_sgd_conversations,
    load_chitchat_conversations,
    load_demo_conversations,
)
from session_browser.bench.sessions import Encoder, JSONDict, iso_utc
from session_browser.core.paths import safe_id

#: Fixed "now" of the corpus: 2025-06-01T00:00:00Z. SGD sessions fall in the two years before.
BASE_EPOCH = 1748736000.0
SPREAD_DAYS = 730

COMPACTED_FRACTION = 0.10
AUTOMATED_FRACTION = 0.03
LINEAGE_FRACTION = 0.02
CORRUPT_FRACTION = 0.001
TITLE_FRACTION = 0.30
AGENT_FRACTION = 0.40
USER_ID_FRACTION = 0.35

#: Ordinary sessions are kept at or below 50 messages an hour (72 s a message).
SECONDS_PER_MESSAGE = 72.0

#: Ordinary sessions are kept at or below 50 messages an hour (72 s a message).
_USER_IDS = ("alice", "bob", "carol", "dmitri", "eun-ji", "farah", "user-1024", "default")
_CHAT_AGENTS = ("Companion", "Chat Buddy", "Assistant")
_CORRUPT_KINDS = ("truncated", "bad_utf8", "list_root")
_AUTOMATED_KINDS = ("cron", "scheduled", "fast")



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


def _corrupt_bytes(data: bytes, obj: JSONDict, kind: str, encode: Encoder) -> bytes:
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

    encode = Encoder(use_orjson=True)
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


def corpus_sources(info: CorpusInfo) -> str:
    """Which sources a built corpus holds, e.g. ``sgd + chitchat`` or ``chitchat + demo``."""
    return " + ".join(name for name, n in info.conversations.items() if n) or "none"


def _iter_sgd(path: Path | None) -> Iterator[Conversation]:
    return iter_sgd_conversations(path) if path is not None else iter(())
