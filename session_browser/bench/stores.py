"""Every measured store, opened and driven the same way in a phase process."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from session_browser.bench.config import (
    AGENT_KINDS,
    AGENT_OF,
    GROUP,
    OUR_INDEXES,
    OURS,
    PEERS,
    PI,
    PI_SCAN,
    PRAISON_JSON,
    PRAISON_SQLITE,
    SCAN,
)
from session_browser.bench.sessions import JSONDict


def db_bytes(db_path: Path) -> int:
    """Size of a SQLite database with its WAL and shared-memory files."""
    total = 0
    for suffix in ("", "-wal", "-shm", "-journal"):
        p = Path(str(db_path) + suffix)
        if p.exists():
            total += p.stat().st_size
    return total


def remove_db(db_path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(str(db_path) + suffix).unlink(missing_ok=True)


def open_store(
    kind: str,
    session_dir: Path,
    db_path: Path,
    *,
    reconcile: str = "none",
    pi_dir: Path | None = None,
) -> Any:
    if kind == OURS:
        from session_browser.core.index import SqliteSessionStore

        return SqliteSessionStore(session_dir, db_path=db_path, reconcile=reconcile, vault=True)
    if kind == SCAN:
        from session_browser.core.store import DefaultSessionStore

        return DefaultSessionStore(session_dir)
    if kind == PI:
        from session_browser.core.open import pi_index_store

        return pi_index_store(session_dir, db_path=db_path, reconcile=reconcile, vault=True)
    if kind == PI_SCAN:
        from session_browser.core.sources.pi import PiStore

        return PiStore(session_dir)
    if kind == GROUP:
        from session_browser.core.stores import PI_PREFIX, open_stores

        if pi_dir is None:
            raise ValueError("the group needs a Pi dir")
        return open_stores(
            [str(session_dir), f"{PI_PREFIX}{pi_dir}"],
            indexed=True,
            reconcile=reconcile,
            vault=True,
        )
    if kind in AGENT_OF:
        from session_browser.core.open import index_store, scan_store
        from session_browser.core.sources import SOURCES

        source = SOURCES[AGENT_OF[kind]]
        if kind not in AGENT_KINDS:  # the scan
            return scan_store(source, session_dir)
        # the index the source kind opens (as the CLI and the app do), at the measured path
        return index_store(source, session_dir, reconcile, vault=True, db_path=db_path)
    if kind == PRAISON_JSON:
        from praisonaiagents.session.store import DefaultSessionStore as PraisonDefault

        return PraisonDefault(session_dir=str(session_dir))
    if kind == PRAISON_SQLITE:
        from praisonaiagents.session.sqlite_store import SqliteSessionStore as PraisonSqlite

        return PraisonSqlite(session_dir=str(session_dir), db_path=str(db_path))
    raise ValueError(f"unknown store kind {kind!r}")


def open_kind(kind: str, args: JSONDict, *, reconcile: str = "none") -> Any:
    pi_dir = args.get("pi_dir")
    return open_store(
        kind,
        Path(args["session_dir"]),
        Path(args["db_path"]),
        reconcile=reconcile,
        pi_dir=Path(pi_dir) if pi_dir else None,
    )


def members(store: Any) -> list[Any]:
    """The indexed stores behind ``store`` (a group's members, or the store itself)."""
    inner = getattr(store, "stores", None)
    return list(inner) if isinstance(inner, list) else [store]


def reconcile_all(store: Any) -> JSONDict:
    """Reconcile an indexed store (every member of a group); the reports, summed."""
    total: JSONDict = {}
    for member in members(store):
        for key, value in report_json(member.reconcile()).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
            else:
                total.setdefault(key, value)
    return total


def open_ready(kind: str, args: JSONDict) -> Any:
    """Open a store to measure it: ours with its index brought up to date first, the others as
    they are."""
    if kind in OUR_INDEXES:
        store = open_kind(kind, args, reconcile="none")
        reconcile_all(store)
        return store
    return open_kind(kind, args)


def group_db_paths(args: JSONDict) -> list[Path]:
    """Where the group's indexes live (the default paths in this process's cache dir)."""
    from session_browser.core.index import default_db_path
    from session_browser.core.sources.pi.source import PiSource

    return [
        default_db_path(Path(args["session_dir"])),
        default_db_path(Path(args["pi_dir"]), PiSource.index_prefix),
    ]


def import_store(kind: str) -> None:
    """Import a store's modules before any timer starts (the packages import their names
    on first use: the modules themselves are named here)."""
    if kind == OURS:
        import session_browser.core.index.store
    elif kind == SCAN:
        import session_browser.core.store
    elif kind in (PI, GROUP):
        import session_browser.core.index.store
        import session_browser.core.open
    elif kind == PI_SCAN:
        import session_browser.core.sources.pi
    elif kind in AGENT_OF:
        import session_browser.core.index.store
        import session_browser.core.open
        import session_browser.core.sources.kinds  # noqa: F401
    else:
        import praisonaiagents.session.sqlite_store
        import praisonaiagents.session.store  # noqa: F401


def close_store(store: Any) -> None:
    close = getattr(store, "close", None)
    if callable(close):
        close()
    conn = getattr(store, "_conn", None)  # PraisonAI's SqliteSessionStore has no close()
    if conn is not None and hasattr(conn, "close"):
        conn.close()


def report_json(report: Any) -> JSONDict:
    if report is None:
        return {}
    as_dict = getattr(report, "as_dict", None)
    if callable(as_dict):
        report = as_dict()
    if isinstance(report, dict):
        if isinstance(report.get("skipped"), list):
            report = report | {"skipped": len(report["skipped"])}
        return {str(k): v for k, v in report.items() if jsonable(v)}
    out: JSONDict = {}
    for name in ("added", "changed", "removed", "skipped", "unchanged", "done", "total"):
        value = getattr(report, name, None)
        if value is None:
            continue
        if isinstance(value, (list, tuple, set, frozenset)):
            out[name] = len(value)
        elif jsonable(value):
            out[name] = value
    return out


def jsonable(value: Any) -> bool:
    return isinstance(value, (int, float, str, bool)) or value is None


def hit_ids(hits: Iterable[Any]) -> list[str]:
    return [sid for sid, _source in hit_sources(hits)]


def hit_sources(hits: Iterable[Any]) -> list[tuple[str, str]]:
    """(session id, source) of every hit (PraisonAI's dict hits have no source)."""
    out: list[tuple[str, str]] = []
    for hit in hits:
        if isinstance(hit, dict):
            out.append((str(hit.get("session_id")), str(hit.get("source") or "")))
        else:
            out.append(
                (str(getattr(hit, "session_id", None)), str(getattr(hit, "source", "") or ""))
            )
    return out


def search_ids(kind: str, store: Any, query: str, limit: int) -> list[str]:
    return hit_ids(store.search(query, limit=limit))


def recent_count(store: Any, limit: int) -> int:
    return len(store.recent(limit=limit))


def store_available(kind: str) -> str | None:
    """None when the store can be imported, else why not."""
    modules = {
        OURS: "session_browser.core.index",
        PI: "session_browser.core.open",
        PI_SCAN: "session_browser.core.sources.pi",
        GROUP: "session_browser.core.open",
        **{k: "session_browser.core.sources" for k in AGENT_OF},
    }
    if kind in modules:
        try:
            spec = importlib.util.find_spec(modules[kind])
        except ImportError as exc:  # pragma: no cover
            return str(exc)
        return None if spec is not None else f"{modules[kind]} is not available"
    if kind in PEERS:
        try:
            spec = importlib.util.find_spec("praisonaiagents")
        except ImportError as exc:  # pragma: no cover
            return str(exc)
        return None if spec is not None else "praisonaiagents is not installed"
    return None
