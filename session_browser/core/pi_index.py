"""``PiIndexStore``: the search index over a Pi session dir (read-only, incremental).

The same machinery as :class:`~session_browser.core.index.SqliteSessionStore` (one row per
message with text, FTS5, relevance ranking, background reconcile, browse/count), fed by the
Pi reader (:mod:`session_browser.core.sources.pi`) instead of PraisonAI's JSON files:

- **Strictly read-only.** The Pi files are opened ``rb`` and closed; nothing is written,
  locked or created under the Pi dir. The database lives in our cache dir
  (``paths.cache_dir()/index/pi-<dir key>.sqlite3``). Every write method raises
  :class:`~session_browser.core.sources.readonly.ReadOnlyStore`.
- **Files.** ``root/**/*.jsonl`` (symlinked dirs are not followed); the ``file`` column holds
  the path relative to the root (``--home-user-proj--/<ts>_<uuid>.jsonl``). Reconcile
  compares each file's identity (size, mtime_ns, inode) with the index, as for JSON stores.
- **Incremental reads.** Beside the rows, the table ``pi_state`` keeps each file's parse state
  (:meth:`PiParseState.dump`: entries read so far, ``end_offset``, and the first and last
  bytes read). When a file changed, the reader resumes from ``end_offset`` if the file only
  grew (same inode, same prefix bytes), and reads it from the start otherwise. The whole
  session is re-indexed either way: an appended compaction or a new branch changes which
  earlier turns are archived or on the active branch. :attr:`PiIndexStore.last_reads` counts
  the resumed and full reads of the last reconcile.
- **What is indexed.** The visible prose of the active branch (user and assistant text,
  visible custom messages, compaction and branch summaries); thinking, tool calls, tool
  results and bash output never reach the index.
- **Automation.** Pi's own rule (:func:`~session_browser.core.sources.pi.pi_is_automated`:
  tagged, or more than 60 *user* turns an hour) sets the automated flag and the relevance
  demotion, so interactive coding sessions full of quick tool calls are not demoted.
- **Source and project.** Hits and summaries carry ``source="pi"`` and
  ``project=<the session's cwd>``; ``source:pi`` and ``project:PATH`` filter in the query
  language (see :mod:`session_browser.core.query`), and :meth:`PiIndexStore.recent` /
  :meth:`PiIndexStore.browse` take a ``project`` keyword too.
- **Viewer.** :meth:`PiIndexStore.projection` (``include_hidden``, ``leaf_id``) and
  :meth:`PiIndexStore.branches` read the file through a :class:`PiStore`.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from . import paths, recall
from .files import MAX_SESSION_BYTES, FileIdentity
from .index import SqliteSessionStore
from .index.rows import Parsed, extract
from .index.schema import Broken
from .model import JSONDict, SessionData, SessionSummary
from .query import normalize_project, project_matches
from .sources.pi import (
    PI_SOURCE,
    PiBranch,
    PiParseState,
    PiStore,
    default_pi_dir,
    pi_is_automated,
    read_pi_session,
    settle_automation,
)
from .sources.readonly import ReadOnlyWrites
from .store import DefaultSessionStore

__all__ = ["PiIndexStore", "default_pi_db_path"]

PI_CONTENT_VERSION = "1"  # what the Pi reader puts in the rows; another value rebuilds
_STATE_DDL = "CREATE TABLE IF NOT EXISTS pi_state(file TEXT PRIMARY KEY, state BLOB NOT NULL)"
_IN_CHUNK = 500


def default_pi_db_path(root: Path) -> Path:
    """Where the index of the Pi dir ``root`` lives (our cache dir, never the Pi dir)."""
    return paths.cache_dir() / "index" / f"pi-{paths.dir_key(root)}.sqlite3"


def scan_pi_dir(root: Path) -> dict[str, tuple[int, int, int]]:
    """(size, mtime_ns, inode) of every ``*.jsonl`` regular file under ``root``, by path
    relative to ``root`` (``/``-separated); symlinked dirs are not followed."""
    out: dict[str, tuple[int, int, int]] = {}
    if not root.is_dir():
        return out
    base = str(root)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        rel_dir = os.path.relpath(dirpath, base)
        for name in filenames:
            if not name.endswith(".jsonl") or name.startswith("."):
                continue
            full = os.path.join(dirpath, name)
            try:
                st = os.stat(full)
            except OSError:
                continue
            if not os.path.isfile(full):
                continue
            rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
            out[rel] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


class _PiReads(DefaultSessionStore):
    """The file-level reads of the JSON store, answered from Pi files.

    Sits between :class:`SqliteSessionStore` and :class:`DefaultSessionStore` in the method
    order, so the index's own fallbacks (``super().summaries()``, the classic scan) read Pi
    files too.
    """

    pi: PiStore

    def _pi_path(self, session_id: str) -> Path | None:
        raise NotImplementedError

    def read_raw(self, session_id: str) -> JSONDict | None:
        path = self._pi_path(session_id)
        session = None if path is None else self.pi.load(path)
        return None if session is None else dict(session.data)

    def get_session(self, session_id: str) -> SessionData:
        self._pi_path(session_id)
        return self.pi.get_session(session_id)

    def session_exists(self, session_id: str) -> bool:
        if not isinstance(session_id, str) or not session_id:
            return False
        return self._pi_path(session_id) is not None

    def iter_sessions(self) -> Iterator[tuple[Path, os.stat_result, JSONDict]]:
        for path, st, session in self.pi.iter_sessions():
            yield path, st, session.data

    def summaries(self) -> list[SessionSummary]:
        return self.pi.summaries()

    def search_candidates(
        self, query: str, *, window: int = 5, **kwargs: Any
    ) -> list[recall.Candidate]:
        return self.pi.search_candidates(
            query, window=window, language=bool(kwargs.get("language"))
        )

    def window(
        self, session_id: str, around_message_id: Any = None, *, window: int = 5
    ) -> list[JSONDict]:
        self._pi_path(session_id)
        return self.pi.window(session_id, around_message_id, window=window)

    def file_identity(self, session_id: str) -> FileIdentity | None:
        path = self._pi_path(session_id)
        try:
            return None if path is None else FileIdentity.of(path.stat())
        except OSError:
            return None


class PiIndexStore(ReadOnlyWrites, SqliteSessionStore, _PiReads):  # type: ignore[misc]
    """A searchable, read-only index over a Pi session dir (see the module docstring)."""

    source_kind = PI_SOURCE

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        db_path: str | os.PathLike[str] | None = None,
        reconcile: str = "sync",
        fts: bool = True,
    ) -> None:
        root_path = Path(root).expanduser() if root is not None else default_pi_dir()
        self.root = root_path
        self.pi = PiStore(root_path)
        self._priors: dict[str, PiParseState] = {}
        self.last_reads: dict[str, int] = {"resumed": 0, "full": 0}
        super().__init__(
            root_path,
            db_path=str(db_path) if db_path is not None else str(default_pi_db_path(root_path)),
            reconcile=reconcile,
            fts=fts,
            # Never used (writes are refused); named so nothing defaults to PraisonAI's.
            spill_dir=paths.cache_dir() / "pi-no-spill",
        )

    @property
    def label(self) -> str:
        return f"{PI_SOURCE}:{self.root}"

    def __enter__(self) -> PiIndexStore:
        return self

    def session_path(self, session_id: str) -> Path:
        found = self._pi_path(session_id)
        return found if found is not None else self.root / f"{paths.safe_id(session_id)}.jsonl"

    # ------------------------------------------------------------------ schema

    def _schema_ok(self, db: sqlite3.Connection) -> bool:
        if not super()._schema_ok(db):
            return False
        db.execute(_STATE_DDL)
        row = db.execute("SELECT value FROM meta WHERE key='pi_content'").fetchone()
        if row is None:
            if db.execute("SELECT count(*) FROM sessions").fetchone()[0]:
                return False
            db.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('pi_content', ?)",
                (PI_CONTENT_VERSION,),
            )
            return True
        return bool(row[0] == PI_CONTENT_VERSION)

    # ------------------------------------------------------------------ file hooks

    _watchable = False  # a tree of dirs: every reconcile stats every file

    def _scan_files(self) -> dict[str, tuple[int, int, int]]:
        return scan_pi_dir(self.root)

    def _before_parse(
        self, db: sqlite3.Connection, todo: Sequence[tuple[str, tuple[int, int, int]]]
    ) -> None:
        """Load the saved parse state of every changed file we have read before."""
        self._priors = {}
        self.last_reads = {"resumed": 0, "full": 0}
        names = [name for name, _ident in todo]
        for start in range(0, len(names), _IN_CHUNK):
            chunk = names[start : start + _IN_CHUNK]
            marks = ",".join("?" * len(chunk))
            for name, blob in db.execute(
                f"SELECT file, state FROM pi_state WHERE file IN ({marks})", chunk
            ):
                try:
                    self._priors[name] = PiParseState.load(bytes(blob))
                except ValueError:
                    continue

    def _parse_file(self, name: str, ident: tuple[int, int, int], *, folded: bool) -> Parsed | str:
        prior = self._priors.pop(name, None)
        path = self.root / name
        try:
            # One huge file (a single giant line among them) is skipped, never read whole.
            size = os.stat(path).st_size
            if size > MAX_SESSION_BYTES:
                return f"file is {size} bytes, over the {MAX_SESSION_BYTES}-byte limit"
            session = read_pi_session(path, prior=prior)
        except OSError as exc:
            return f"unreadable: {exc.strerror or exc}"
        except (ValueError, RecursionError) as exc:  # pragma: no cover - defensive
            return f"unusable Pi session: {exc}"
        self.last_reads["resumed" if session.resumed else "full"] += 1
        if session.header is None:
            return "not a Pi session (no session header)"
        data = session.data
        try:
            parsed = extract(name, FileIdentity(*ident), data, folded=folded)
        except (ValueError, TypeError, RecursionError) as exc:  # pragma: no cover - defensive
            return f"unusable Pi session: {exc}"
        auto = pi_is_automated(data)
        row = list(parsed.row)
        row[10] = 1 if auto else 0  # rate_auto: Pi's rule (user turns an hour)
        row[11] = 1 if auto and not row[9] else 0  # machine: what relevance demotes
        parsed.row = tuple(row)
        parsed.extra = session.state.dump()
        return parsed

    def _inserted(self, db: sqlite3.Connection, items: Sequence[Parsed]) -> None:
        db.executemany(
            "INSERT OR REPLACE INTO pi_state(file, state) VALUES (?, ?)",
            [(item.file, item.extra) for item in items if isinstance(item.extra, bytes)],
        )

    def _delete_file(self, db: sqlite3.Connection, name: str) -> bool:
        db.execute("DELETE FROM pi_state WHERE file=?", (name,))
        return super()._delete_file(db, name)

    def _load_file(self, name: str) -> JSONDict | None:
        session = self.pi.load(self.root / name)
        if session is None or session.header is None:
            return None
        return session.data

    def _classic_order(self, names: set[str]) -> list[str]:
        return sorted(names)

    def _classic_candidate(
        self, data: JSONDict, parsed: recall.ClassicQuery, window: int, name: str
    ) -> recall.Candidate | None:
        cand = recall.classic_candidate(
            data, parsed, window=window, source=self.source_kind, store=self.label, file_name=name
        )
        if cand is not None:
            settle_automation(cand.hit, data)
            meta = data.get("metadata")
            cwd = meta.get("cwd") if isinstance(meta, dict) else None
            cand.hit.project = cwd if isinstance(cwd, str) else None
        return cand

    def _demotion_flags(self, data: JSONDict, messages: Sequence[JSONDict]) -> tuple[bool, bool]:
        tagged = recall.tagged_automated(data)
        return tagged, (not tagged) and pi_is_automated(data)

    def _after_write(self, session_id: str, path: Path, data: JSONDict | None) -> None:
        """Never called: nothing is written through a Pi store."""

    # ------------------------------------------------------------------ lookups

    def _pi_path(self, session_id: str) -> Path | None:
        """The file of ``session_id``: from the index when it knows it, else a scan."""
        try:
            rows = self._rows(
                "SELECT file FROM sessions WHERE session_id=? ORDER BY file", (session_id,)
            )
        except (Broken, sqlite3.Error):  # the index is unusable: the reader scans
            rows = []
        for (name,) in rows:
            path = self.root / str(name)
            if path.is_file():
                self.pi.remember_path(session_id, path)
                return path
        found: Path | None = self.pi.session_path(session_id)
        return found

    # ------------------------------------------------------------------ status

    def status(self) -> JSONDict:
        out = super().status()
        files = scan_pi_dir(self.root)
        out["files"] = len(files)
        out["json_bytes"] = sum(ident[0] for ident in files.values())
        out["source"] = PI_SOURCE
        return out

    # ------------------------------------------------------------------ browse by project

    def recent(
        self, *, limit: int = 10, project: str | os.PathLike[str] | None = None
    ) -> list[SessionSummary]:
        """The most recently updated sessions, optionally of one project (cwd) only."""
        if project is None:
            return super().recent(limit=limit)
        return self.browse(limit=limit, project=project)

    def browse(
        self,
        *,
        offset: int = 0,
        limit: int = 100,
        sort: str = "updated",
        text: str = "",
        project: str | os.PathLike[str] | None = None,
    ) -> list[SessionSummary]:
        """A page of the session list; ``project`` keeps sessions whose cwd is in it."""
        if project is None:
            return super().browse(offset=offset, limit=limit, sort=sort, text=text)
        want = normalize_project(os.fspath(project))
        rows = [
            s
            for s in super().browse(offset=0, limit=1 << 30, sort=sort, text=text)
            if project_matches(s.project, want)
        ]
        return rows[max(0, offset) : max(0, offset) + max(0, limit)]

    # ------------------------------------------------------------------ the viewer

    def projection(
        self, session_id: str, *, include_hidden: bool = False, leaf_id: str | None = None
    ) -> list[JSONDict]:
        """The whole projection (``KeyError`` when missing); ``include_hidden`` adds thinking,
        tool calls and results in ``metadata.hidden``; ``leaf_id`` reads another branch."""
        self._pi_path(session_id)
        return self.pi.projection(session_id, include_hidden=include_hidden, leaf_id=leaf_id)

    def branches(self, session_id: str) -> list[PiBranch]:
        """The active branch first, then every other leaf (``KeyError`` when missing)."""
        self._pi_path(session_id)
        return self.pi.branches(session_id)

    def to_json(self) -> JSONDict:
        return {"source": PI_SOURCE, "root": str(self.root), "label": self.label}
