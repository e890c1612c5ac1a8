"""The automation rule of Pi sessions, and ``PiStore``, scanning a Pi dir."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ... import recall
from ...files import loads, open_regular, regular_lstat
from ...model import (
    JSONDict,
    SessionData,
    SessionHit,
    SessionSummary,
)
from ..readonly import ReadOnlyWrites
from .entries import (
    DEFAULT_CACHE_SIZE,
    HEADER_LINE_LIMIT,
    PI_SOURCE,
    USER_TURN_RATE_THRESHOLD,
    cwd_matches,
    default_pi_dir,
    log,
)
from .session import (
    PiBranch,
    PiSession,
    read_pi_session,
)

# ---------------------------------------------------------------------- automation


def pi_is_automated(data: JSONDict) -> bool:
    """Pi's automated rule: tagged, or more than 60 *user* turns an hour (>= 4 of them).

    The shared rule counts every message, which any coding-agent session with tool calls
    exceeds; counting the user's turns keeps interactive sessions undemoted.
    """
    if recall.tagged_automated(data):
        return True
    users = [m for m in recall.project(data) if m.get("role") == "user"]
    rate = recall.message_rate(users)
    return rate is not None and rate > USER_TURN_RATE_THRESHOLD


def settle_automation(hit: SessionHit, data: JSONDict) -> None:
    """Undo the shared rule's demotion of ``hit`` when :func:`pi_is_automated` says no."""
    if not hit.automated or pi_is_automated(data):
        return
    raw = hit.explain.get("raw_score")
    hit.score = (
        float(raw) if isinstance(raw, (int, float)) else hit.score / recall.AUTOMATED_DEMOTION
    )
    hit.automated = False
    hit.explain["demotion"] = 1.0
    hit.explain["automation_rule"] = "pi: user turns per hour"


# ---------------------------------------------------------------------- the store

_Ident = tuple[int, int, int, int]


def _ident(st: os.stat_result) -> _Ident:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _header_id(path: Path) -> str | None:
    """The session id of a Pi file (header id, else the stem); None when it is not one."""
    try:
        with open_regular(path) as fh:
            first = fh.readline(HEADER_LINE_LIMIT)
    except OSError:
        return None
    try:
        obj = loads(first.strip()) if first.strip() else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict) or obj.get("type") != "session":
        return None
    raw = obj.get("id")
    return raw if isinstance(raw, str) and raw else path.stem


class PiStore(ReadOnlyWrites):
    """A read-only store over ``root/**/*.jsonl`` with the recall API of the other stores.

    Parsed sessions are cached in memory by file identity; a file that only grew is parsed
    from where the cached read stopped. Nothing is ever written, locked or created: every
    write method raises :class:`~.readonly.ReadOnlyStore`.
    """

    source_kind = PI_SOURCE

    def __init__(
        self, root: str | os.PathLike[str] | None = None, *, cache_size: int = DEFAULT_CACHE_SIZE
    ) -> None:
        self.root = Path(root).expanduser() if root is not None else default_pi_dir()
        self.cache_size = max(1, cache_size)
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, bool], tuple[_Ident, PiSession]] = OrderedDict()
        self._ids: dict[_Ident, str | None] = {}
        self._paths: dict[str, Path] = {}

    @property
    def label(self) -> str:
        return f"{PI_SOURCE}:{self.root}"

    # ------------------------------------------------------------------ files

    def session_files(self) -> list[tuple[Path, os.stat_result]]:
        """Every ``*.jsonl`` regular file under the root (symlinked dirs are not followed)."""
        out: list[tuple[Path, os.stat_result]] = []
        if not self.root.is_dir():
            return out
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(".jsonl"):
                    continue
                path = Path(dirpath) / name
                st = regular_lstat(path)  # a symlink is never followed
                if st is not None:
                    out.append((path, st))
        return out

    def _session_id_of(self, path: Path, st: os.stat_result) -> str | None:
        key = _ident(st)
        with self._lock:
            if key in self._ids:
                return self._ids[key]
        sid = _header_id(path)
        with self._lock:
            self._ids[key] = sid
        return sid

    def _scan(self) -> list[tuple[str, Path, os.stat_result]]:
        """(session id, path, stat) of every Pi session file; the first file of an id wins."""
        found: list[tuple[str, Path, os.stat_result]] = []
        seen: set[str] = set()
        for path, st in self.session_files():
            sid = self._session_id_of(path, st)
            if sid is None or sid in seen:
                continue
            seen.add(sid)
            found.append((sid, path, st))
        with self._lock:
            self._paths = {sid: path for sid, path, _st in found}
            live = {_ident(st) for _sid, _path, st in found}
            for key in [k for k in self._ids if k not in live]:
                del self._ids[key]
        return found

    def remember_path(self, session_id: str, path: Path) -> None:
        """Note where ``session_id`` lives (e.g. from an index), sparing a scan; the file
        is still checked when it is used."""
        with self._lock:
            self._paths[session_id] = path

    def owned_dirs(self) -> list[Path]:
        return [self.root]

    def session_path(self, session_id: str) -> Path | None:
        """The file holding ``session_id`` (None when there is none)."""
        with self._lock:
            path = self._paths.get(session_id)
        if path is not None:
            try:
                st = path.stat()
            except OSError:
                st = None
            if st is not None and self._session_id_of(path, st) == session_id:
                return path
        for sid, found, _st in self._scan():
            if sid == session_id:
                return found
        return None

    def session_exists(self, session_id: str) -> bool:
        return self.session_path(session_id) is not None

    # ------------------------------------------------------------------ parsing (cached)

    def load(self, path: Path, *, include_hidden: bool = False) -> PiSession | None:
        """The parsed file (from the cache when unchanged); None when it cannot be read."""
        try:
            st = path.stat()
        except OSError:
            return None
        key = (str(path), include_hidden)
        ident = _ident(st)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
        if cached is not None and cached[0] == ident:
            return cached[1]
        prior = cached[1].state if cached is not None else None
        try:
            session = read_pi_session(path, include_hidden=include_hidden, prior=prior)
        except OSError as exc:
            log.debug("cannot read Pi session %s: %s", path, exc)
            return None
        # Keyed by the identity seen before the read: bytes appended meanwhile are picked
        # up by the next call (a resumed read), never hidden behind a newer identity.
        with self._lock:
            self._cache[key] = (ident, session)
            self._cache.move_to_end(key)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return session

    def read(self, session_id: str, *, include_hidden: bool = False) -> PiSession | None:
        path = self.session_path(session_id)
        return None if path is None else self.load(path, include_hidden=include_hidden)

    def iter_sessions(
        self, *, project: str | os.PathLike[str] | None = None, include_hidden: bool = False
    ) -> Iterator[tuple[Path, os.stat_result, PiSession]]:
        """Every readable session (optionally only those whose cwd is in ``project``;
        ``include_hidden``: with thinking, tool calls and results in ``metadata.hidden``)."""
        for _sid, path, st in self._scan():
            session = self.load(path, include_hidden=include_hidden)
            if session is None:
                continue
            if project is not None and not cwd_matches(session.cwd, project):
                continue
            yield path, st, session

    # ------------------------------------------------------------------ recall protocol

    def summaries(self, *, project: str | os.PathLike[str] | None = None) -> list[SessionSummary]:
        out: list[SessionSummary] = []
        for _path, st, session in self.iter_sessions(project=project):
            summary = recall.summary_of(
                session.data,
                size=st.st_size,
                source=PI_SOURCE,
                store=self.label,
                project_dir=session.cwd,
            )
            summary.automated = pi_is_automated(session.data)
            out.append(summary)
        return out

    def recent(
        self, *, limit: int = 10, project: str | os.PathLike[str] | None = None
    ) -> list[SessionSummary]:
        return recall.sort_recent(self.summaries(project=project), limit)

    def projects(self) -> list[tuple[str, int]]:
        """Every cwd with its number of sessions, most sessions first."""
        counts: dict[str, int] = {}
        for _path, _st, session in self.iter_sessions():
            if session.cwd:
                counts[session.cwd] = counts.get(session.cwd, 0) + 1
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    def search_candidates(
        self,
        query: str,
        *,
        window: int = 5,
        project: str | os.PathLike[str] | None = None,
        language: bool = False,
    ) -> list[recall.Candidate]:
        parsed = recall.ClassicQuery.parse(query, language=language)
        if not parsed.searchable:
            return []
        stats = recall.scan_stats(parsed)
        out: list[recall.Candidate] = []
        tools = parsed.filters is not None and parsed.filters.tools
        for path, _st, session in self.iter_sessions(project=project, include_hidden=tools):
            cand = recall.classic_candidate(
                session.data,
                parsed,
                window=window,
                source=PI_SOURCE,
                store=self.label,
                file_name=path.name,
                stats=stats,
            )
            if cand is not None:
                settle_automation(cand.hit, session.data)
                cand.hit.project = session.cwd
                out.append(cand)
        return recall.keep_matching(out, parsed, None if stats is None else stats.rare())

    def search(
        self,
        query: str,
        *,
        limit: int = 5,
        window: int = 5,
        project: str | os.PathLike[str] | None = None,
    ) -> list[SessionHit]:
        return recall.search(
            query, limit, lambda: self.search_candidates(query, window=window, project=project)
        )

    def get_session(self, session_id: str) -> SessionData:
        session = self.read(session_id)
        if session is None:
            empty = SessionData(session_id=session_id)
            empty.source_kind = PI_SOURCE
            return empty
        return session.to_session_data()

    def window(
        self, session_id: str, around_message_id: Any = None, *, window: int = 5
    ) -> list[JSONDict]:
        session = self.read(session_id)
        if session is None:
            return []
        messages = recall.project(session.data)
        if not messages:
            return []
        anchor = recall.parse_anchor(around_message_id, len(messages))
        return recall.window_slice(messages, anchor, window)

    def projection(
        self, session_id: str, *, include_hidden: bool = False, leaf_id: str | None = None
    ) -> list[JSONDict]:
        """The whole projection in the public message shape plus metadata (``KeyError``).

        ``include_hidden`` adds ``metadata.hidden`` (thinking, tool calls, tool results, bash)
        without changing the indices; ``leaf_id`` reads another branch.
        """
        session = self.read(session_id, include_hidden=include_hidden)
        if session is None:
            raise KeyError(session_id)
        if leaf_id is not None and leaf_id != session.leaf_id:
            session = session.branch(leaf_id)
        return recall.full_view(recall.project(session.data))

    def branches(self, session_id: str) -> list[PiBranch]:
        """The active branch first, then every other leaf (``KeyError`` when missing)."""
        session = self.read(session_id)
        if session is None:
            raise KeyError(session_id)
        return list(session.branches)

    def to_json(self) -> JSONDict:
        return {"source": PI_SOURCE, "root": str(self.root), "label": self.label}
