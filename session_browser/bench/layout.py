"""The sessions measured: built, given or written as Pi JSONL files, what they hold, and the
known-item queries the harness asks of them."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

from session_browser.bench.agents import (
    AGENT_FORMATS,
    agent_file_count,
    agent_readback,
    write_agent_corpus,
)
from session_browser.bench.config import BenchError, BenchOptions, Progress
from session_browser.bench.corpus import build_corpus, corpus_sources
from session_browser.bench.queries import KnownItem, MessageIndex, Query, make_queries
from session_browser.bench.sessions import JSONDict, read_spills
from session_browser.bench.stores import jsonable
from session_browser.core.paths import safe_id

COMMON_WORDS = 20
PI_PROJECT_CWD = "/proj"
PI_PROJECT_DIR = "--proj--"
_WORD_RE = re.compile(r"[^\W\d_]+")


@dataclass
class CorpusStats:
    """What is in a session dir: counts, sizes and the most frequent words."""

    files: int = 0
    sessions: int = 0
    unreadable: int = 0
    messages: int = 0
    archived_messages: int = 0
    json_bytes: int = 0
    top_words: list[str] = field(default_factory=list)

    def to_json(self) -> JSONDict:
        return asdict(self)


def _message_text(message: JSONDict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            p if isinstance(p, str) else str(p.get("text", ""))
            for p in content
            if isinstance(p, (str, dict))
        )
    return ""


def _count_session(stats: CorpusStats, words: Counter[str], data: JSONDict) -> None:
    stats.sessions += 1
    for key in ("archived_messages", "messages"):
        items = data.get(key)
        if not isinstance(items, list):
            continue
        for item in items:
            if not isinstance(item, dict):
                continue
            stats.messages += 1
            if key == "archived_messages":
                stats.archived_messages += 1
            words.update(_WORD_RE.findall(_message_text(item).lower()))


def corpus_stats(
    session_dir: Path | None,
    *,
    pi_dir: Path | None = None,
    agent: tuple[str, Path] | None = None,
    top: int = COMMON_WORDS,
) -> CorpusStats:
    """Count sessions, messages and bytes of a session dir and/or a Pi session dir (its
    ``*.jsonl`` files, read as the index reads them) and find their most frequent words."""
    stats = CorpusStats()
    words: Counter[str] = Counter()
    names: list[str] = []
    if session_dir is not None:
        with os.scandir(session_dir) as entries:
            names = sorted(e.name for e in entries if e.name.endswith(".json") and e.is_file())
    for name in names:
        assert session_dir is not None
        path = session_dir / name
        try:
            raw = path.read_bytes()
        except OSError:
            stats.unreadable += 1
            continue
        stats.files += 1
        stats.json_bytes += len(raw)
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            try:
                data = json.loads(raw.decode("utf-8"))
            except (ValueError, RecursionError):
                stats.unreadable += 1
                continue
        if not isinstance(data, dict):
            stats.unreadable += 1
            continue
        _count_session(stats, words, data)
    if pi_dir is not None:
        from session_browser.core.sources.pi import read_pi_session
        from session_browser.core.sources.pi.source import scan_pi_dir

        for rel, ident in sorted(scan_pi_dir(pi_dir).items()):
            stats.files += 1
            stats.json_bytes += ident[0]
            try:
                session = read_pi_session(pi_dir / rel)
            except (OSError, ValueError):
                stats.unreadable += 1
                continue
            if session.header is None:
                stats.unreadable += 1
                continue
            _count_session(stats, words, session.data)
    if agent is not None:
        from session_browser.bench.agents import agent_sessions

        fmt, root = agent
        readable = 0
        counted: set[Path] = set()
        for path, _sid, data in agent_sessions(fmt, root):
            readable += 1
            file = path if path.is_file() else path.parent  # a database's session: its rows
            if file not in counted:
                counted.add(file)
                stats.json_bytes += file.stat().st_size
            _count_session(stats, words, data)
        written = agent_file_count(fmt, root)
        stats.files += written
        stats.unreadable += max(0, written - readable)
    stats.top_words = [w for w, _ in words.most_common(top)]
    return stats


# --------------------------------------------------------------------------- Pi corpora


def pi_readback(pi_dir: Path, dest: Path) -> int:
    """Write every Pi session of ``pi_dir`` as read back (``read_pi_session(p).data``) into
    ``dest`` as ``<safe id>.json``, PraisonAI's layout, for the query generator. Files without
    a session header are left out; the first file of a session id wins. Pi's own automated
    rule (:func:`~session_browser.core.sources.pi.pi_is_automated`, user turns an hour) decides
    which sessions are automated, as in the Pi index: an automated session is tagged
    ``metadata.automated``, and the others lose their message timestamps, so the generator's
    rate rule (every message an hour) does not exclude coding sessions full of quick turns.
    Returns the count."""
    from session_browser.core.sources.pi import pi_is_automated, read_pi_session
    from session_browser.core.sources.pi.source import scan_pi_dir

    dest.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    for rel in sorted(scan_pi_dir(pi_dir)):
        try:
            session = read_pi_session(pi_dir / rel)
        except (OSError, ValueError):
            continue
        sid = session.session_id
        if session.header is None or not sid or sid in seen:
            continue
        seen.add(sid)
        data = session.data
        if pi_is_automated(data):
            data = data | {"metadata": data["metadata"] | {"automated": True}}
        else:
            data = data | {
                key: [{k: v for k, v in m.items() if k != "timestamp"} for m in data[key]]
                for key in ("archived_messages", "messages")
            }
        (dest / f"{safe_id(sid)}.json").write_bytes(orjson.dumps(data))
    return len(seen)


def write_pi_corpus(
    session_dir: Path,
    spill_dir: Path | None,
    pi_root: Path,
    *,
    names: Iterable[str] | None = None,
) -> int:
    """Write the PraisonAI session files ``names`` (default: every ``*.json``) of
    ``session_dir`` as Pi JSONL files under ``pi_root/--proj--/`` (spilled turns appended,
    corrupt files copied as they are). Returns the number of files written."""
    from session_browser.core.sources.pi import pi_jsonl

    spilled = read_spills(spill_dir)
    out_dir = pi_root / PI_PROJECT_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    chosen = (
        sorted(names) if names is not None else sorted(p.name for p in session_dir.glob("*.json"))
    )
    for name in chosen:
        raw = (session_dir / name).read_bytes()
        target = out_dir / f"{name[: -len('.json')]}.jsonl"
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            data = None
        if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
            target.write_bytes(raw)  # corrupt: no session header, the reader skips it
            continue
        extra = spilled.get(str(data.get("session_id")))
        if extra:
            data = data | {"messages": [*data["messages"], *extra]}
        target.write_bytes(pi_jsonl(data, cwd=PI_PROJECT_CWD))
    return len(chosen)


@dataclass
class Layout:
    """Where the measured sessions are and where the queries and their truth come from."""

    format: str  # json | pi | mixed
    sessions: Path | None  # the PraisonAI session dir measured (json, mixed)
    spill: Path | None  # its spill dir
    pi: Path | None  # the Pi session dir measured (pi, mixed)
    query_source: Path  # a PraisonAI-shaped store the queries are generated from
    info: JSONDict = field(default_factory=dict)
    truth: Path | None = None  # a PraisonAI-shaped dir whose text decides relevance
    truth_spill: Path | None = None
    agent: Path | None = None  # the coding agent's dir measured (its copy: see agent_copy)


def agent_copy(work: Path, fmt: str) -> Path:
    """Where the coding agent's sessions measured are: the run's own copy of a given dir, or
    the built corpus, in the place its index and scan read them (the truth is read back from
    there: an Aider session's id is made from its file's path)."""
    return work / f"copy-{fmt}" / fmt


def prepare(opt: BenchOptions, work: Path, say: Progress) -> Layout:
    """The sessions to measure, built or given, and what they are."""
    fmt = opt.format
    if opt.pi_store is not None:
        root = Path(opt.pi_store).expanduser()
        if not root.is_dir():
            raise BenchError(f"no Pi session dir at {root}")
        say(f"reading the Pi sessions of {root} back for the queries")
        readback = work / "pi-readback" / "sessions"
        if not pi_readback(root, readback):
            raise BenchError(f"no readable Pi session in {root}")
        return Layout("pi", None, None, root, readback, {"source": "store", "path": str(root)})
    if opt.agent_store is not None and opt.agent is not None:
        root = Path(opt.agent_store).expanduser()
        if not root.is_dir():
            raise BenchError(f"no {opt.agent} session dir at {root}")
        measured = agent_copy(work, opt.agent)
        say(f"copying the {opt.agent} sessions of {root} to {measured}")
        shutil.copytree(root, measured, symlinks=False)
        say(f"reading the {opt.agent} sessions of {root} back for the queries")
        readback = work / f"{opt.agent}-readback" / "sessions"
        if not agent_readback(opt.agent, measured, readback):
            raise BenchError(f"no readable {opt.agent} session in {root}")
        given_agent: JSONDict = {"source": "store", "path": str(root)}
        return Layout(opt.agent, None, None, None, readback, given_agent, agent=measured)
    if opt.store is not None or opt.home is not None:
        if opt.store is not None:
            sessions = Path(opt.store).expanduser()
            spill: Path | None = None
            if sessions.name == "sessions":
                spill = sessions.parent / "state" / "session_spill"
        else:
            home = Path(opt.home or "").expanduser()
            sessions, spill = home / "sessions", home / "state" / "session_spill"
        if not sessions.is_dir():
            raise BenchError(f"no session dir at {sessions}")
        given: JSONDict = {"source": "store", "path": str(sessions)}
        return Layout("json", sessions, spill, None, sessions, given)
    home = work / "corpus"
    say(
        f"building the corpus ({opt.sessions or 'all'} sessions, seed {opt.seed}) in {home}"
    )
    t0 = time.perf_counter()
    info = build_corpus(
        home,
        sessions=opt.sessions,
        seed=opt.seed,
        sgd_path=opt.sgd_path,
        include_sgd=opt.sgd,
        progress=None,
    )
    say(f"corpus sources: {corpus_sources(info)}")
    sessions, spill = home / "sessions", home / "state" / "session_spill"
    built = {
        "source": "built",
        "path": str(sessions),
        "requested_sessions": opt.sessions,
        "build_seconds": time.perf_counter() - t0,
        "info": info_json(info),
        "sources": corpus_sources(info),
    }
    if fmt == "json":
        return Layout("json", sessions, spill, None, sessions, built)
    if fmt == "pi":
        pi_root = work / "pi"
        say(f"writing the corpus as Pi JSONL files in {pi_root}")
        write_pi_corpus(sessions, spill, pi_root)
        truth = work / "pi-truth" / "sessions"
        pi_readback(pi_root, truth)
        built["path"] = str(pi_root)
        built["build_seconds"] = time.perf_counter() - t0
        return Layout("pi", None, None, pi_root, sessions, built, truth)
    if fmt in AGENT_FORMATS:
        root = agent_copy(work, fmt)
        say(f"writing the corpus as {fmt} session files in {root}")
        write_agent_corpus(fmt, sessions, spill, root)
        truth = work / f"{fmt}-truth" / "sessions"
        agent_readback(fmt, root, truth)
        built["path"] = str(root)
        built["build_seconds"] = time.perf_counter() - t0
        return Layout(fmt, None, None, None, sessions, built, truth, agent=root)
    # mixed: every other session file (sorted by name) goes to the Pi half
    names = sorted(p.name for p in sessions.glob("*.json"))
    json_names, pi_names = names[0::2], names[1::2]
    mixed_home, pi_root = work / "mixed" / "home", work / "mixed" / "pi"
    say(
        f"splitting the corpus: {len(json_names)} PraisonAI JSON files in {mixed_home}, "
        f"{len(pi_names)} Pi JSONL files in {pi_root}"
    )
    json_dir = mixed_home / "sessions"
    json_spill = mixed_home / "state" / "session_spill"
    truth_home = work / "mixed-truth"
    truth, truth_spill = truth_home / "sessions", truth_home / "state" / "session_spill"
    for folder in (json_dir, json_spill, truth, truth_spill):
        folder.mkdir(parents=True, exist_ok=True)
    for name in json_names:
        shutil.copyfile(sessions / name, json_dir / name)
        shutil.copyfile(sessions / name, truth / name)
    json_ids = {name[: -len(".json")] for name in json_names}
    if spill.is_dir():
        for path in sorted(spill.glob("*.json")):
            try:
                owner = str(orjson.loads(path.read_bytes()).get("session_id"))
            except (OSError, orjson.JSONDecodeError, AttributeError):
                continue
            if owner in json_ids:
                shutil.copyfile(path, json_spill / path.name)
                shutil.copyfile(path, truth_spill / path.name)
    write_pi_corpus(sessions, spill, pi_root, names=pi_names)
    pi_readback(pi_root, truth)
    built["path"] = f"{json_dir} + {pi_root}"
    built["split"] = {"json_files": len(json_names), "pi_files": len(pi_names)}
    built["build_seconds"] = time.perf_counter() - t0
    return Layout("mixed", json_dir, json_spill, pi_root, sessions, built, truth, truth_spill)

def harness_queries(layout: Layout, n: int, seed: int) -> tuple[list[Query], list[str]]:
    """``n`` known-item queries of the measured sessions (seeded), and notes on how they were
    made."""
    items = make_queries(layout.query_source, n=n, seed=seed)
    notes: list[str] = []
    if layout.truth is not None:
        items = _recheck(items, layout, notes)
    out: list[Query] = []
    for item in items:
        relevant = sorted(str(x) for x in item.relevant)
        target = item.target_id
        if not relevant and target:
            relevant = [target]
        out.append(
            Query(query=item.query, relevant=relevant, slice=item.slice, target_id=target,
                  n=len(out))
        )
    return out, notes

def _recheck(items: list[KnownItem], layout: Layout, notes: list[str]) -> list[KnownItem]:
    """The relevant sets of ``items`` recomputed on the text the measured stores hold."""
    assert layout.truth is not None
    index = MessageIndex(layout.truth, layout.truth_spill)
    kept: list[KnownItem] = []
    changed = dropped = 0
    for item in items:
        hits = index.match(item.terms, phrase=item.slice == "phrase")
        if hits is None:  # tokens and substrings disagree: keep the corpus's answer
            kept.append(item)
            continue
        relevant = index.relevant_ids(hits)
        if not relevant:
            dropped += 1
            continue
        if relevant != set(item.relevant):
            changed += 1
            item.relevant = relevant
        kept.append(item)
    where = (
        "both stores' text"
        if layout.format == "mixed"
        else f"the {'Pi' if layout.format == 'pi' else layout.format} text read back"
    )
    notes.append(
        f"the queries are those of the JSON corpus; their relevant sets were recomputed on "
        f"{where}: {changed} changed (lineage chains: Pi files have none), {dropped} dropped"
    )
    return kept



def info_json(info: Any) -> JSONDict:
    if info is None:
        return {}
    if isinstance(info, dict):
        items = info.items()
    elif hasattr(info, "__dict__"):
        items = vars(info).items()
    else:
        return {"repr": repr(info)}
    out: JSONDict = {}
    for k, v in items:
        if jsonable(v):
            out[str(k)] = v
        elif isinstance(v, Path):
            out[str(k)] = str(v)
        elif isinstance(v, dict) and all(jsonable(x) for x in v.values()):
            out[str(k)] = {str(a): b for a, b in v.items()}
    return out
