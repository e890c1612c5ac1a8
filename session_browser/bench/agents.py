"""The benchmark corpus written as coding agents' session files, and read back.

The same conversations as the PraisonAI JSON corpus, in the files those agents write:
Claude Code ``<project>/<id>.jsonl`` (one user line per prompt, one assistant line per answer
with its ``message.id``, a ``compact_boundary`` line and an ``isCompactSummary`` summary after
the archived turns), Codex ``YYYY/MM/DD/rollout-<time>-<id>.jsonl`` (``session_meta``,
``event_msg`` ``user_message``, assistant ``response_item`` messages, a ``compacted`` line after
the archived turns), Gemini CLI ``<project hash>/chats/session-<id>.json`` (the one-object chat
file, ``user`` and ``gemini`` messages, ``summary`` the title; the legacy file records no
compaction, so the archived turns are its first messages) and Copilot CLI
``<id>/events.jsonl`` (``session.start``, ``user.message``, ``assistant.message``, a
``session.compaction_complete`` event after the archived turns), Kimi Code CLI
``<work dir md5>/<id>/agents/main/wire.jsonl`` (wire protocol 1.4: ``turn.prompt``,
``content.part`` loop events, ``context.apply_compaction``) and Cline
``saoudrizwan.claude-dev/tasks/<id>/ui_messages.json`` (``say`` records: ``task``,
``user_feedback``, ``text``, a completed ``compaction``). Copilot, Kimi and Cline make the
answers to one prompt one assistant turn, as the agents do. OpenCode and Goose keep every
session as rows of one SQLite database (``opencode.db``, ``sessions.db``):
:mod:`session_browser.bench.agent_db` writes those. Reading a written file back gives the
same prose turns (and, where the format records one, the same archived/active split).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from session_browser.bench.agent_db import DATABASES, Corpus, write_database
from session_browser.bench.sessions import JSONDict, read_spills
from session_browser.core.paths import safe_id
from session_browser.core.sources.base import Skip
from session_browser.core.sources.pi.build import chat_turns

AGENT_PROJECT_CWD = "/proj"
CLAUDE_PROJECT_DIR = "-proj"
CLINE_EXTENSION = "saoudrizwan.claude-dev"


def _stamp(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _epoch(value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return 0.0
    return 0.0


def _turns(data: JSONDict, key: str, created: float) -> list[tuple[str, str, float]]:
    """(role, text, epoch) of the user and assistant turns of ``data[key]``."""
    return [(role, text, _epoch(ts) or created) for role, text, ts in chat_turns(data, key)]


def _title(data: JSONDict) -> str | None:
    meta = data.get("metadata")
    title = meta.get("title") if isinstance(meta, dict) else None
    return title if isinstance(title, str) and title else None


def _lines(lines: list[JSONDict]) -> bytes:
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def claude_jsonl(data: JSONDict, *, cwd: str = AGENT_PROJECT_CWD) -> bytes:
    """A PraisonAI-shaped session dict as the bytes of a Claude Code transcript."""
    sid = str(data.get("session_id") or "session")
    created = _epoch(data.get("created_at"))
    lines: list[JSONDict] = []
    parent: str | None = None

    def add(kind: str, ts: float, **fields: Any) -> None:
        nonlocal parent
        uuid = f"bench-{sid}-{len(lines):07d}"
        lines.append(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "cwd": cwd,
                "sessionId": sid,
                "version": "2.1.39",
                "type": kind,
                "uuid": uuid,
                "timestamp": _stamp(ts),
                **fields,
            }
        )
        parent = uuid

    def turn(role: str, text: str, ts: float) -> None:
        if role == "user":
            add("user", ts, message={"role": "user", "content": text})
        else:
            message = {
                "id": f"msg_bench_{len(lines):07d}",
                "role": "assistant",
                "model": "bench",
                "content": [{"type": "text", "text": text}],
            }
            add("assistant", ts, message=message)

    archived = _turns(data, "archived_messages", created)
    active = _turns(data, "messages", created)
    for role, text, ts in archived:
        turn(role, text, ts)
    if archived:
        ts = archived[-1][2]
        add(
            "system",
            ts,
            subtype="compact_boundary",
            content="Conversation compacted",
            compactMetadata={"trigger": "auto", "preTokens": 0},
        )
        summary = f"{len(archived)} earlier turns"
        add("user", ts, isCompactSummary=True, message={"role": "user", "content": summary})
    for role, text, ts in active:
        turn(role, text, ts)
    title = _title(data)
    if title is not None:
        lines.append({"type": "custom-title", "customTitle": title, "sessionId": sid})
    return _lines(lines)


def codex_jsonl(data: JSONDict, *, cwd: str = AGENT_PROJECT_CWD) -> bytes:
    """A PraisonAI-shaped session dict as the bytes of a Codex rollout."""
    sid = str(data.get("session_id") or "session")
    created = _epoch(data.get("created_at"))
    lines: list[JSONDict] = []

    def add(kind: str, ts: float, **payload: Any) -> None:
        lines.append({"timestamp": _stamp(ts), "type": kind, "payload": payload})

    def turn(role: str, text: str, ts: float) -> None:
        if role == "user":
            add("event_msg", ts, type="user_message", message=text, images=[])
        else:
            add(
                "response_item",
                ts,
                type="message",
                role="assistant",
                content=[{"type": "output_text", "text": text}],
            )

    add(
        "session_meta",
        created,
        id=sid,
        timestamp=_stamp(created),
        cwd=cwd,
        originator="codex_cli_rs",
        cli_version="0.125.0",
        source="cli",
    )
    title = _title(data)
    if title is not None:
        add("event_msg", created, type="thread_name_updated", thread_id=sid, thread_name=title)
    archived = _turns(data, "archived_messages", created)
    active = _turns(data, "messages", created)
    for role, text, ts in archived:
        turn(role, text, ts)
    if archived:
        add(
            "compacted",
            archived[-1][2],
            message=f"{len(archived)} earlier turns",
            replacement_history=[],
        )
    for role, text, ts in active:
        turn(role, text, ts)
    return _lines(lines)


def gemini_json(data: JSONDict, *, cwd: str = AGENT_PROJECT_CWD) -> bytes:
    """A PraisonAI-shaped session dict as the bytes of a Gemini CLI chat file (the one-object
    format: ``JSON.stringify(conversation, null, 2)``)."""
    sid = str(data.get("session_id") or "session")
    created = _epoch(data.get("created_at"))
    turns = [*_turns(data, "archived_messages", created), *_turns(data, "messages", created)]
    messages: list[JSONDict] = []
    for role, text, ts in turns:
        message: JSONDict = {
            "id": f"bench-{sid}-{len(messages):07d}",
            "timestamp": _stamp(ts),
            "type": "user" if role == "user" else "gemini",
            "content": text,
        }
        if role != "user":
            message["model"] = "bench"
        messages.append(message)
    chat: JSONDict = {
        "sessionId": sid,
        "projectHash": gemini_project_hash(cwd),
        "startTime": _stamp(created),
        "lastUpdated": _stamp(turns[-1][2] if turns else created),
        "messages": messages,
    }
    title = _title(data)
    if title is not None:
        chat["summary"] = title
    return orjson.dumps(chat, option=orjson.OPT_INDENT_2)


def gemini_project_hash(cwd: str) -> str:
    """The project dir's name under Gemini CLI's ``tmp`` dir (older releases: its SHA-256)."""
    return hashlib.sha256(cwd.encode("utf-8")).hexdigest()


def copilot_events(data: JSONDict, *, cwd: str = AGENT_PROJECT_CWD) -> bytes:
    """A PraisonAI-shaped session dict as the bytes of a Copilot CLI ``events.jsonl``."""
    sid = str(data.get("session_id") or "session")
    created = _epoch(data.get("created_at"))
    lines: list[JSONDict] = []

    def add(kind: str, ts: float, **payload: Any) -> None:
        parent = lines[-1]["id"] if lines else None
        lines.append(
            {
                "type": kind,
                "data": payload,
                "id": f"bench-{sid}-{len(lines):07d}",
                "timestamp": _stamp(ts),
                "parentId": parent,
            }
        )

    def turn(role: str, text: str, ts: float) -> None:
        if role == "user":
            add("user.message", ts, content=text, transformedContent=text, attachments=[])
        else:
            add("assistant.message", ts, messageId=f"bench-{sid}-m{len(lines):07d}",
                model="bench", content=text, toolRequests=[])

    add("session.start", created, sessionId=sid, version=1, producer="copilot-agent",
        copilotVersion="1.0.55-1", startTime=_stamp(created), context={"cwd": cwd})
    archived = _turns(data, "archived_messages", created)
    active = _turns(data, "messages", created)
    for role, text, ts in archived:
        turn(role, text, ts)
    if archived:
        ts = archived[-1][2]
        add("session.compaction_start", ts)
        add("session.compaction_complete", ts, success=True,
            summaryContent=f"{len(archived)} earlier turns")
    for role, text, ts in active:
        turn(role, text, ts)
    return _lines(lines)


def _ms(epoch: float) -> int:
    return round(epoch * 1000)


def kimi_wire(data: JSONDict, *, cwd: str = AGENT_PROJECT_CWD) -> bytes:
    """A PraisonAI-shaped session dict as the bytes of a Kimi Code CLI ``wire.jsonl`` (wire
    protocol 1.4: ``turn.prompt``, the answer as ``content.part`` loop events, a
    ``context.apply_compaction`` after the archived turns)."""
    created = _epoch(data.get("created_at"))
    lines: list[JSONDict] = [
        {"type": "metadata", "protocol_version": "1.4", "created_at": _ms(created)},
        {"type": "profile.bind", "profileName": "agent", "modelAlias": "bench",
         "environmentDisclosure": {"cwd": cwd}, "time": _ms(created)},
    ]

    def turn(role: str, text: str, ts: float) -> None:
        if role == "user":
            parts = [{"type": "text", "text": text}]
            lines.append({"type": "turn.prompt", "input": parts, "origin": {"kind": "user"},
                          "time": _ms(ts), "agentId": "main"})
            lines.append({"type": "context.append_message",
                          "message": {"role": "user", "content": parts, "toolCalls": [],
                                      "origin": {"kind": "user"}},
                          "time": _ms(ts), "agentId": "main"})
        else:
            event = {"type": "content.part", "part": {"type": "text", "text": text}}
            lines.append({"type": "context.append_loop_event", "event": event,
                          "time": _ms(ts), "agentId": "main"})

    archived = _turns(data, "archived_messages", created)
    active = _turns(data, "messages", created)
    for role, text, ts in archived:
        turn(role, text, ts)
    if archived:
        lines.append({"type": "context.apply_compaction",
                      "summary": f"{len(archived)} earlier turns", "time": _ms(archived[-1][2])})
    for role, text, ts in active:
        turn(role, text, ts)
    return _lines(lines)


def cline_ui_messages(data: JSONDict) -> bytes:
    """A PraisonAI-shaped session dict as the bytes of a Cline task's ``ui_messages.json``
    (``say: task`` the first prompt, ``user_feedback`` the later ones, ``text`` the answers,
    a completed ``compaction`` after the archived turns)."""
    created = _epoch(data.get("created_at"))
    messages: list[JSONDict] = []
    asked = False

    def turn(role: str, text: str, ts: float) -> None:
        nonlocal asked
        say = "text" if role != "user" else "user_feedback" if asked else "task"
        asked = asked or role == "user"
        messages.append({"ts": _ms(ts), "type": "say", "say": say, "text": text})

    archived = _turns(data, "archived_messages", created)
    active = _turns(data, "messages", created)
    for role, text, ts in archived:
        turn(role, text, ts)
    if archived:
        messages.append({"ts": _ms(archived[-1][2]), "type": "say", "say": "compaction",
                         "text": orjson.dumps({"status": "completed"}).decode()})
    for role, text, ts in active:
        turn(role, text, ts)
    return orjson.dumps(messages)


def aider_history(data: JSONDict) -> bytes:
    """A PraisonAI-shaped session dict as the bytes of one launch in an Aider
    ``.aider.chat.history.md``: the launch header (local time), each prompt line as a
    ``#### `` line, the answers to one prompt as one reply between blank lines (aider
    records no compaction: the archived turns are the launch's first)."""
    created = _epoch(data.get("created_at"))
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(created))
    out = [f"\n# aider chat started at {started}\n\n"]
    turns: list[tuple[str, str]] = []
    for role, text, _ts in (
        *_turns(data, "archived_messages", created),
        *_turns(data, "messages", created),
    ):
        if role == "assistant" and turns and turns[-1][0] == "assistant":
            turns[-1] = (role, f"{turns[-1][1]}\n{text}")
        else:
            turns.append((role, text))
    for role, text in turns:
        if role == "user":
            out.append("".join(f"#### {line}  \n" if line else "####  \n"
                               for line in text.splitlines()))
        else:
            out.append(f"\n{text}\n\n")
    return "".join(out).encode("utf-8")


def codex_rollout_name(sid: str, created: float) -> str:
    """``YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl`` of a session."""
    when = datetime.fromtimestamp(created, UTC)
    return f"{when:%Y/%m/%d}/rollout-{when:%Y-%m-%dT%H-%M-%S}-{sid}.jsonl"


def _claude_target(stem: str, created: float) -> str:
    return f"{CLAUDE_PROJECT_DIR}/{stem}.jsonl"


def _codex_target(stem: str, created: float) -> str:
    return codex_rollout_name(stem, created)


def _gemini_target(stem: str, created: float) -> str:
    return f"{gemini_project_hash(AGENT_PROJECT_CWD)}/chats/session-{stem}.json"


def _copilot_target(stem: str, created: float) -> str:
    return f"{stem}/events.jsonl"


def _kimi_target(stem: str, created: float) -> str:
    work_dir = hashlib.md5(AGENT_PROJECT_CWD.encode("utf-8")).hexdigest()
    return f"{work_dir}/{stem}/agents/main/wire.jsonl"


def _aider_target(stem: str, created: float) -> str:
    return f"{stem}/.aider.chat.history.md"


def _cline_target(stem: str, created: float) -> str:
    return f"{CLINE_EXTENSION}/tasks/{stem}/ui_messages.json"


#: Per format: where a session's file goes under the root (from its file stem and start
#: time), and its bytes.
WRITERS: dict[str, tuple[Callable[[str, float], str], Callable[[JSONDict], bytes]]] = {
    "claude": (_claude_target, claude_jsonl),
    "codex": (_codex_target, codex_jsonl),
    "gemini": (_gemini_target, gemini_json),
    "copilot": (_copilot_target, copilot_events),
    "kimi": (_kimi_target, kimi_wire),
    "cline": (_cline_target, cline_ui_messages),
    "aider": (_aider_target, aider_history),
}


def _kimi_state(data: JSONDict) -> dict[str, bytes]:
    title = _title(data)
    return {} if title is None else {"state.json": orjson.dumps({"custom_title": title})}


#: Per format: the files written beside a session's file (by name), when it has any: Kimi
#: keeps a session's title in ``state.json`` beside its wire log.
BESIDE: dict[str, Callable[[JSONDict], dict[str, bytes]]] = {"kimi": _kimi_state}
#: The formats the benchmark corpus can be written in (OpenCode and Goose: rows of one
#: database, see :mod:`session_browser.bench.agent_db`).
AGENT_FORMATS = (*WRITERS, *DATABASES)


def _session(raw: bytes, spilled: dict[str, list[JSONDict]]) -> JSONDict | None:
    """The corpus session of a file's bytes, its spilled turns appended (None: not one)."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        return None
    extra = spilled.get(str(data.get("session_id")))
    return data | {"messages": [*data["messages"], *extra]} if extra else data


def _database_corpus(path: Path, spilled: dict[str, list[JSONDict]]) -> Corpus:
    """Corpus file ``path`` as a database format's writer takes it."""
    raw = path.read_bytes()
    stem = path.name[: -len(".json")]
    data = _session(raw, spilled)
    if data is None:
        return Corpus(stem, None, 0.0, [], [], AGENT_PROJECT_CWD,
                      unreadable=raw.decode("utf-8", "replace"))
    created = _epoch(data.get("created_at"))
    return Corpus(
        str(data.get("session_id") or stem),
        _title(data),
        created,
        _turns(data, "archived_messages", created),
        _turns(data, "messages", created),
        AGENT_PROJECT_CWD,
    )


def write_agent_corpus(
    fmt: str,
    session_dir: Path,
    spill_dir: Path | None,
    root: Path,
    *,
    names: Iterable[str] | None = None,
) -> int:
    """Write the PraisonAI session files ``names`` (default: every ``*.json``) of
    ``session_dir`` as the session files of the agent ``fmt`` (one of :data:`AGENT_FORMATS`)
    under ``root`` (spilled turns appended, corrupt files copied as they are: the reader
    skips them; OpenCode and Goose: rows of one database, a corrupt file a session the reader
    skips). Returns the number of files (sessions) written."""
    spilled = read_spills(spill_dir)
    chosen = (
        sorted(names) if names is not None else sorted(p.name for p in session_dir.glob("*.json"))
    )
    if fmt in DATABASES:
        corpus = (_database_corpus(session_dir / name, spilled) for name in chosen)
        write_database(fmt, root, corpus)
        return len(chosen)
    target_of, body_of = WRITERS[fmt]
    for name in chosen:
        stem = name[: -len(".json")]
        raw = (session_dir / name).read_bytes()
        data = _session(raw, spilled)
        body = raw
        created = 0.0
        beside: dict[str, bytes] = {}
        if data is not None:
            created = _epoch(data.get("created_at"))
            body = body_of(data)
            beside = BESIDE[fmt](data) if fmt in BESIDE else {}
        target = root / target_of(stem, created)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
        for other, content in beside.items():
            (target.parent / other).write_bytes(content)
    return len(chosen)


def agent_sessions(fmt: str, root: Path) -> Iterator[tuple[Path, str, JSONDict]]:
    """(file, session id, PraisonAI-shaped dict) of every readable session of an agent's dir
    (a Claude Code projects dir, a Codex sessions dir, ...), as the agent's reader gives
    them."""
    if fmt not in ("claude", "codex"):
        yield from _source_sessions(fmt, root)
        return
    if fmt == "claude":
        from session_browser.core.sources.claude.places import claude_session_files
        from session_browser.core.sources.claude.reader import read_claude_session

        files, read = claude_session_files(root), read_claude_session
    else:
        from session_browser.core.sources.codex import codex_session_files, read_codex_session

        files, read = codex_session_files(root), read_codex_session  # type: ignore[assignment]
    for path in files:
        try:
            session = read(path)
        except (OSError, ValueError):
            continue
        data = session.data
        sid = session.session_id
        if not sid or not (data.get("messages") or data.get("archived_messages")):
            continue
        yield path, str(sid), data


def agent_file_count(fmt: str, root: Path) -> int:
    """How many session files of the agent ``fmt`` are under ``root`` (read or not)."""
    if fmt in ("claude", "codex"):
        return sum(1 for _ in root.rglob("*.jsonl"))
    from session_browser.core.sources import SOURCES

    return len(SOURCES[fmt].source(root).list_files())


def _source_sessions(fmt: str, root: Path) -> Iterator[tuple[Path, str, JSONDict]]:
    """As :func:`agent_sessions`, through the source of kind ``fmt`` (its files in its order,
    each read whole without hidden parts)."""
    from session_browser.core.sources import SOURCES
    from session_browser.core.sources.agent import WholeReadSource
    from session_browser.core.sources.aider import split_name

    source = SOURCES[fmt].source(root)
    assert isinstance(source, WholeReadSource)
    for name in source.file_order(set(source.list_files())):
        got = source.read_session(name, include_hidden=False)
        if isinstance(got, Skip) or not got.has_turns:
            continue
        sid = got.data.get("session_id")
        file = split_name(name)[0] if fmt == "aider" else name  # Aider's: <file>#<launch>
        if sid:
            yield root / file, str(sid), got.data


def agent_readback(fmt: str, root: Path, dest: Path) -> int:
    """As :func:`~session_browser.bench.layout.pi_readback`, for a Claude Code or Codex dir:
    every session as read back, into ``dest/<safe id>.json`` (automated sessions tagged by
    Pi's rule, which both sources use; the others without message timestamps). Returns the
    count."""
    from session_browser.core.sources import pi_is_automated

    dest.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    for _path, sid, data in agent_sessions(fmt, root):
        if sid in seen:
            continue
        seen.add(sid)
        meta = data.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        if pi_is_automated(data):
            data = data | {"metadata": meta | {"automated": True}}
        else:
            data = data | {
                key: [{k: v for k, v in m.items() if k != "timestamp"} for m in data.get(key) or []]
                for key in ("archived_messages", "messages")
            }
        (dest / f"{safe_id(sid)}.json").write_bytes(orjson.dumps(data))
    return len(seen)
