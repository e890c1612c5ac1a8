"""The phases of one store, each run in a fresh process (``python -m session_browser.bench
--phase ...``): what it does and what it measures, as JSON."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from session_browser.bench.config import (
    AGENT_OF,
    GROUP,
    INDEXED_KINDS,
    MISSING_WORD,
    OUR_INDEXES,
    OUR_RECENT_REPEATS,
    PI_KINDS,
    PRAISON_SQLITE,
    READ_ONLY_KINDS,
    SEARCH_LIMIT,
    UPDATE_REPEATS,
    WARMUP_QUERIES,
)
from session_browser.bench.heavy import phase_cli, phase_reader, phase_writer
from session_browser.bench.metrics import first_relevant_rank, max_rss_mb
from session_browser.bench.queries import Query
from session_browser.bench.sessions import JSONDict, iso_utc
from session_browser.bench.stores import (
    close_store,
    db_bytes,
    group_db_paths,
    hit_sources,
    import_store,
    members,
    open_kind,
    open_ready,
    recent_count,
    reconcile_all,
    remove_db,
    search_ids,
)
from session_browser.core.paths import data_dir


def _open_up_to_date(kind: str, args: JSONDict, out: JSONDict) -> Any:
    """Open an indexed store and bring its index up to date (ours: a reconcile, whose report
    goes to ``out["reconcile"]``; PraisonAI SQLite: its first search, which builds or checks its
    index); the time it took goes to ``out["seconds"]``."""
    t0 = time.perf_counter()
    if kind in OUR_INDEXES:
        store = open_kind(kind, args, reconcile="none")
        out["reconcile"] = reconcile_all(store)
    else:
        store = open_kind(kind, args)
        store.search(MISSING_WORD, limit=1)
    out["seconds"] = time.perf_counter() - t0
    return store


def phase_build(args: JSONDict) -> JSONDict:
    """Cold build: no index file, open the store and index everything."""
    kind = args["kind"]
    if kind not in INDEXED_KINDS:
        raise ValueError(f"{kind} has no index to build")
    db_path = Path(args["db_path"])
    import_store(kind)
    db_paths = group_db_paths(args) if kind == GROUP else [db_path]
    for path in db_paths:
        remove_db(path)
    vault = data_dir() / "vault"
    if kind in OUR_INDEXES:  # the bench's own data dir: each build fills a vault of its own
        shutil.rmtree(vault, ignore_errors=True)
    out: JSONDict = {}
    store = _open_up_to_date(kind, args, out)
    close_store(store)
    out["index_bytes"] = sum(db_bytes(path) for path in db_paths)
    out["vault_bytes"] = sum(p.stat().st_size for p in vault.rglob("*") if p.is_file())
    out["rss_mb"] = max_rss_mb()
    return out


def phase_reopen(args: JSONDict) -> JSONDict:
    """Open an up-to-date index in a fresh process and make sure it is fresh."""
    kind = args["kind"]
    import_store(kind)
    out: JSONDict = {}
    store = _open_up_to_date(kind, args, out)
    t1 = time.perf_counter()
    ids = search_ids(kind, store, args.get("probe") or MISSING_WORD, SEARCH_LIMIT)
    out["first_search_seconds"] = time.perf_counter() - t1
    out["first_search_hits"] = len(ids)
    close_store(store)
    out["rss_mb"] = max_rss_mb()
    return out


def phase_search(args: JSONDict) -> JSONDict:
    """Warm known-item and common-word latencies, ranks, hit sources, recent(50) latency."""
    kind = args["kind"]
    queries = [Query.from_json(q) for q in args["queries"]]
    common: list[str] = list(args["common"])
    import_store(kind)
    store = open_ready(kind, args)
    for q in queries[: int(args.get("warmup", WARMUP_QUERIES))]:
        with contextlib.suppress(Exception):  # counted when the query is measured below
            search_ids(kind, store, q.query, SEARCH_LIMIT)
    known: list[JSONDict] = []
    for q in queries:
        error: str | None = None
        t0 = time.perf_counter()
        try:
            hits = store.search(q.query, limit=SEARCH_LIMIT)
        except Exception as exc:  # a store that fails a query scores it as a miss
            hits, error = [], f"{type(exc).__name__}: {exc}"
        dt = time.perf_counter() - t0
        found = hit_sources(hits)
        relevant = set(q.relevant)
        rank = first_relevant_rank([sid for sid, _ in found], relevant)
        known.append(
            {
                "n": q.n,
                "slice": q.slice,
                "seconds": dt,
                "rank": rank,
                "error": error,
                "hits": len(found),
                "sources": [source for _, source in found],
                "relevant_source": found[rank - 1][1] if rank is not None else None,
                "relevant_sources": sorted({source for sid, source in found if sid in relevant}),
            }
        )
    common_out: list[JSONDict] = []
    for text in common:
        error = None
        t0 = time.perf_counter()
        try:
            ids = search_ids(kind, store, text, SEARCH_LIMIT)
        except Exception as exc:  # counted and shown, never timed
            ids, error = [], f"{type(exc).__name__}: {exc}"
        common_out.append(
            {"query": text, "seconds": time.perf_counter() - t0, "hits": len(ids), "error": error}
        )
    recent: list[float] = []
    count = 0
    for _ in range(int(args.get("recent_repeats", OUR_RECENT_REPEATS))):
        t0 = time.perf_counter()
        count = recent_count(store, 50)
        recent.append(time.perf_counter() - t0)
    close_store(store)
    return {
        "known": known,
        "common": common_out,
        "recent": recent,
        "recent_count": count,
        "rss_mb": max_rss_mb(),
    }


def _target_sessions(session_dir: Path, n: int) -> list[tuple[str, Path]]:
    """``n`` readable sessions with an active window, picked deterministically."""
    out: list[tuple[str, Path]] = []
    for path in sorted(session_dir.glob("*.json")):
        try:
            data = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue
        if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
            continue
        sid = str(data.get("session_id") or path.stem)
        if sid != path.stem:
            continue
        out.append((sid, path))
        if len(out) >= n:
            break
    return out


def _pi_target_sessions(pi_dir: Path, n: int) -> list[tuple[str, Path]]:
    """``n`` readable Pi sessions with turns, picked deterministically."""
    from session_browser.core.sources.pi import read_pi_session
    from session_browser.core.sources.pi.source import scan_pi_dir

    def sessions() -> Iterator[tuple[str, Path]]:
        for rel in sorted(scan_pi_dir(pi_dir)):
            path = pi_dir / rel
            try:
                session = read_pi_session(path)
            except (OSError, ValueError):
                continue
            if session.header is not None and session.data["messages"]:
                yield session.session_id, path

    return _first_sessions(sessions(), n)


def _agent_target_sessions(fmt: str, root: Path, n: int) -> list[tuple[str, Path]]:
    """``n`` readable sessions with turns of a coding agent's dir, picked deterministically
    (OpenCode, Goose: sessions of the database, where the agent writes; it no longer writes
    the older files beside it)."""
    from session_browser.bench.agent_db import DATABASES
    from session_browser.bench.agents import agent_sessions

    db = DATABASES[fmt].name if fmt in DATABASES else None
    return _first_sessions(
        (
            (sid, path)
            for path, sid, data in agent_sessions(fmt, root)
            if data.get("messages") and (db is None or path.parent.name == db)
        ),
        n,
    )


def _first_sessions(found: Iterable[tuple[str, Path]], n: int) -> list[tuple[str, Path]]:
    """The first ``n`` of ``found`` (session id, file), each id once."""
    out: list[tuple[str, Path]] = []
    seen: set[str] = set()
    for sid, path in found:
        if sid in seen:
            continue
        seen.add(sid)
        out.append((sid, path))
        if len(out) >= n:
            break
    return out


def _agent_outside_edit(fmt: str, sid: str, path: Path, text: str) -> None:
    """Add a user turn the way the agent does: one more JSON line at the end of its file
    (Claude Code, Codex, Copilot CLI, Kimi), the file written again whole (Gemini CLI,
    Cline), or a message row added to the database the session is in (OpenCode, Goose: the
    session's path is ``<database>/<id>``)."""
    from session_browser.bench.agent_db import DATABASES

    if fmt in DATABASES:
        DATABASES[fmt].add_prompt(path.parent, sid, text)
        return
    stamp = iso_utc(time.time())
    if fmt == "aider":
        with open(path, "ab") as fh:
            fh.write(f"#### {text}  \n".encode())
        return
    if fmt == "cline":
        said = orjson.loads(path.read_bytes())
        said.append({"ts": time.time_ns() // 1_000_000, "type": "say", "say": "user_feedback",
                     "text": text})
        tmp = path.with_name(f".{path.name}.bench-tmp")
        tmp.write_bytes(orjson.dumps(said))
        os.replace(tmp, path)
        return
    if fmt == "gemini":
        chat = orjson.loads(path.read_bytes())
        chat["messages"].append(
            {"id": f"bench-outside-{time.time_ns()}", "timestamp": stamp, "type": "user",
             "content": text}
        )
        chat["lastUpdated"] = stamp
        tmp = path.with_name(f".{path.name}.bench-tmp")
        tmp.write_bytes(orjson.dumps(chat, option=orjson.OPT_INDENT_2))
        os.replace(tmp, path)
        return
    if fmt == "codex":
        line: JSONDict = {
            "timestamp": stamp,
            "type": "event_msg",
            "payload": {"type": "user_message", "message": text, "images": []},
        }
    elif fmt == "kimi":
        line = {
            "type": "turn.prompt",
            "input": [{"type": "text", "text": text}],
            "origin": {"kind": "user"},
            "time": time.time_ns() // 1_000_000,
            "agentId": "main",
        }
    elif fmt == "copilot":
        last = orjson.loads(path.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1])
        line = {
            "type": "user.message",
            "data": {"content": text, "transformedContent": text, "attachments": []},
            "id": f"bench-outside-{time.time_ns()}",
            "timestamp": stamp,
            "parentId": last.get("id"),
        }
    else:
        last = orjson.loads(path.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1])
        line = {
            "parentUuid": last.get("uuid"),
            "isSidechain": False,
            "sessionId": sid,
            "type": "user",
            "uuid": f"bench-outside-{time.time_ns()}",
            "timestamp": stamp,
            "message": {"role": "user", "content": text},
        }
    with open(path, "ab") as fh:
        fh.write(orjson.dumps(line) + b"\n")


def _outside_edit(path: Path, text: str) -> None:
    """Append a user turn the way another process would: rewrite and replace the file."""
    data = orjson.loads(path.read_bytes())
    data["messages"].append(
        {"role": "user", "content": text, "timestamp": time.time(), "metadata": {}}
    )
    tmp = path.with_name(f".{path.name}.bench-tmp")
    tmp.write_bytes(json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8"))
    os.replace(tmp, path)


def _pi_outside_edit(path: Path, text: str) -> None:
    """Append a user turn the way Pi does: one more JSON line at the end of the file."""
    line = {
        "type": "message",
        "timestamp": iso_utc(time.time()),
        "message": {"role": "user", "content": text},
    }
    with open(path, "ab") as fh:
        fh.write(orjson.dumps(line) + b"\n")


def _resumed(store: Any) -> bool | None:
    """True when the last reconcile of the Pi index behind ``store`` read from an offset."""
    for member in members(store):
        reads = getattr(member, "last_reads", None)
        if isinstance(reads, dict) and (reads.get("resumed") or reads.get("full")):
            return bool(reads.get("resumed")) and not reads.get("full")
    return None


def phase_update(args: JSONDict) -> JSONDict:
    """One session changed from outside (time the re-index), then one write through the store.

    Pi stores are read-only: no write. The group alternates its outside changes between its
    JSON store and its Pi store and writes through its JSON store."""
    kind = args["kind"]
    session_dir = Path(args["session_dir"])
    pi_dir = Path(args["pi_dir"]) if args.get("pi_dir") else None
    repeats = int(args.get("repeats", UPDATE_REPEATS))
    import_store(kind)
    reconciles = kind in OUR_INDEXES
    store = open_ready(kind, args)
    json_targets: list[tuple[str, Path]] = []
    pi_targets: list[tuple[str, Path]] = []
    if kind in PI_KINDS:
        pi_targets = _pi_target_sessions(session_dir, repeats)
    elif kind in AGENT_OF:
        pi_targets = _agent_target_sessions(AGENT_OF[kind], session_dir, repeats)
    elif kind == GROUP:
        assert pi_dir is not None
        json_targets = _target_sessions(session_dir, 2 * repeats)
        pi_targets = _pi_target_sessions(pi_dir, repeats)
    else:
        json_targets = _target_sessions(session_dir, 2 * repeats)
    outside_plan: list[tuple[str, Path, bool]] = []
    if kind in PI_KINDS or kind in AGENT_OF:
        outside_plan = [(sid, path, True) for sid, path in pi_targets]
    elif kind == GROUP:
        for i in range(repeats):
            pool, is_pi = (pi_targets, True) if i % 2 else (json_targets, False)
            if i // 2 < len(pool):
                sid, path = pool[i // 2]
                outside_plan.append((sid, path, is_pi))
    else:
        outside_plan = [(sid, path, False) for sid, path in json_targets[:repeats]]
    write_targets = [] if kind in READ_ONLY_KINDS else json_targets[repeats:]
    outside: list[float] = []
    outside_found: list[bool] = []
    resumed: list[bool] = []
    writes: list[float] = []
    write_found: list[bool] = []
    for i, (sid, path, is_pi) in enumerate(outside_plan):
        marker = f"benchoutside{i}marker"
        if kind in AGENT_OF:
            _agent_outside_edit(AGENT_OF[kind], sid, path, f"note {marker} for the benchmark")
        elif is_pi:
            _pi_outside_edit(path, f"note {marker} for the benchmark")
        else:
            _outside_edit(path, f"note {marker} for the benchmark")
        if reconciles:
            t0 = time.perf_counter()
            reconcile_all(store)
            outside.append(time.perf_counter() - t0)
            if is_pi:
                was_resumed = _resumed(store)
                if was_resumed is not None:
                    resumed.append(was_resumed)
            ids = search_ids(kind, store, marker, SEARCH_LIMIT)
        elif kind == PRAISON_SQLITE:
            # PraisonAI's index has no reconcile: a new store checks it on its first search
            close_store(store)
            t0 = time.perf_counter()
            store = open_kind(kind, args)
            ids = search_ids(kind, store, marker, SEARCH_LIMIT)
            outside.append(time.perf_counter() - t0)
        else:
            ids = search_ids(kind, store, marker, SEARCH_LIMIT)
        outside_found.append(sid in ids)
    writer = members(store)[0]
    for i, (sid, _path) in enumerate(write_targets):
        marker = f"benchwrite{i}marker"
        t0 = time.perf_counter()
        writer.add_message(sid, "user", f"note {marker} for the benchmark")
        writes.append(time.perf_counter() - t0)
        write_found.append(sid in search_ids(kind, store, marker, SEARCH_LIMIT))
    close_store(store)
    return {
        "outside": outside,
        "outside_found": outside_found,
        "outside_pi": [is_pi for _sid, _path, is_pi in outside_plan],
        "resumed": resumed,
        "write": writes,
        "write_found": write_found,
        "rss_mb": max_rss_mb(),
    }


def phase_build_search(args: JSONDict) -> JSONDict:
    """One process builds the index from nothing and answers every query: its peak RSS is
    what a first ``session-browser search`` on a big store needs."""
    kind = args["kind"]
    db_paths = group_db_paths(args) if kind == GROUP else [Path(args["db_path"])]
    for path in db_paths:
        remove_db(path)
    t0 = time.perf_counter()
    store = open_ready(kind, args)
    errors = 0
    for text in [*(q["query"] for q in args["queries"]), *args["common"]]:
        try:
            search_ids(kind, store, text, SEARCH_LIMIT)
        except Exception:
            errors += 1
    close_store(store)
    return {"seconds": time.perf_counter() - t0, "errors": errors, "rss_mb": max_rss_mb()}




PHASES: dict[str, Callable[[JSONDict], JSONDict]] = {
    "build": phase_build,
    "reopen": phase_reopen,
    "search": phase_search,
    "update": phase_update,
    "build_search": phase_build_search,
    "cli": phase_cli,
    "writer": phase_writer,
    "reader": phase_reader,
}


