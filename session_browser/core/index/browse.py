"""Session lists from the index: recent, browse, count, status, live changes, and the files a
running build has not indexed yet."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from .. import recall
from ..model import (
    JSONDict,
    SessionSummary,
    stored_epoch,
)
from ..query import normalize_project, project_matches
from ..search.pick import SUMMARY_COLUMNS, summary_row
from ..vault.feed import kept_note
from . import partly
from .api import SessionReader
from .hits import IndexHits
from .schema import (
    Broken,
)

SORTS = ("updated", "created", "size")


class IndexBrowse(IndexHits):
    """Lists, status and live changes, read from the index."""

    reader: SessionReader  # what lists the sessions when the index cannot be used

    # ------------------------------------------------------------------ status

    def status(self) -> JSONDict:
        """Where the index is and what it holds (for ``session-browser index status``)."""
        out: JSONDict = {
            "session_dir": str(self.session_dir),
            "source": self.source_kind,
            "db_path": self.db_path,
            "mode": "scan" if self.broken else ("fts5" if self.has_fts else "like"),
            "broken": self.broken,
            "indexing": self.indexing,
            "progress": list(self.progress),
        }
        if self.broken is None:
            with self._lock:
                db = self._conn()
                messages = db.execute("SELECT coalesce(sum(nmsg), 0) FROM sessions").fetchone()[0]
                source, cond = self._listed(db)
                where = f" WHERE {cond}" if cond else ""
                sessions = db.execute(f"SELECT count(*) FROM {source}{where}").fetchone()[0]
                skipped = db.execute("SELECT file, reason FROM skipped ORDER BY file").fetchall()
                inside = partly.summary(db)
            out.update(
                {
                    "sessions": sessions,
                    "messages": messages,
                    "skipped": [{"file": f, "reason": r} for f, r in skipped],
                    "lines_skipped": inside,
                }
            )
        size = 0
        if not self.memory:
            for suffix in ("", "-wal"):
                with contextlib.suppress(OSError):
                    size += os.stat(self.db_path + suffix).st_size
        out["db_bytes"] = size
        files = self.source.list_files()
        # What that listing did not take: symlinks (never followed), FIFOs, devices, sockets.
        out["refused"] = dict(self.source.refused)
        out["files"] = len(files)
        out["json_bytes"] = sum(ident[0] for ident in files.values())
        if not self.memory:
            from .vectors import vectors_status

            vectors = vectors_status(self.db_path)
            if vectors is not None:  # (hybrid search's, when built)
                out["vectors"] = vectors
        return out

    def skipped_names(self) -> list[str]:
        """The names of the files the index could not read, without a directory scan
        (empty when the index is broken: it knows none)."""
        if self.broken is not None:
            return []
        with self._lock:
            rows = self._conn().execute("SELECT file FROM skipped").fetchall()
        return [str(f) for (f,) in rows]

    # ------------------------------------------------------------------ live

    def generation(self) -> int:
        """A number that grows with every session (re)indexed: pass it to
        :meth:`changed_since` later to learn what was added or changed meanwhile."""
        try:
            row = self._rows("SELECT seq FROM sqlite_sequence WHERE name='sessions'")
            top = self._rows("SELECT max(sid) FROM sessions")
        except (Broken, sqlite3.Error):
            return 0
        return max(int(row[0][0]) if row else 0, int(top[0][0] or 0))

    def changed_since(self, generation: int) -> dict[str, int]:
        """Sessions added or changed (indexed again) after ``generation``: session id ->
        the generation that indexed it."""
        try:
            rows = self._rows(
                "SELECT session_id, sid FROM sessions WHERE sid > ? ORDER BY sid", (generation,)
            )
        except (Broken, sqlite3.Error):
            return {}
        return {str(sid_): int(gen) for sid_, gen in rows}

    def _pending_to_scan(self) -> tuple[list[str], int]:
        """(names, how many more): the newest :attr:`pending_scan_files` files a running
        reconcile has not indexed yet (a build indexes the oldest first), and how many other
        pending files a search leaves out. Call with ``_state_lock`` held."""
        limit = max(0, self.pending_scan_files)
        if len(self._pending) <= limit:
            return sorted(self._pending), 0
        names: list[str] = []
        for name in reversed(self._pending_order):
            if len(names) >= limit:
                break
            if name in self._pending:
                names.append(name)
        return sorted(names), len(self._pending) - len(names)

    def _pending_rows(self, text: str) -> list[tuple[str, tuple[int, int, int]]]:
        """The files a running reconcile found that the index does not hold at all (yet),
        whose name holds ``text`` (any case)."""
        needle = (text or "").strip().lower()
        with self._state_lock:
            rows = [(n, i) for n, i in self._pending_new.items() if n in self._pending]
        if needle:
            rows = [(n, i) for n, i in rows if needle in n.lower()]
        return rows

    def _pending_summary(self, name: str, ident: tuple[int, int, int]) -> SessionSummary:
        """A not-yet-indexed file for the session list: read from the file, or from its
        metadata alone when it cannot be read."""
        data = self.source.load(name)
        if data is not None:
            with contextlib.suppress(Exception):  # one odd file never fails the list
                return recall.summary_of(
                    data, size=ident[0], source=self.source_kind, store=self.label
                )
        stamp = datetime.fromtimestamp(ident[1] / 1e9).astimezone().isoformat()
        return SessionSummary(
            session_id=Path(name).stem,
            title="",
            when=stamp,
            size=ident[0],
            source=self.source_kind,
            store=self.label,
        )

    def _browse_pending(
        self, offset: int, limit: int, sort: str, text: str
    ) -> list[SessionSummary] | None:
        """While a reconcile adds files: the indexed sessions and the files not indexed
        yet, in one list (the files ordered by their mtime and size, and only those on the
        page read). None when no file is waiting."""
        pending = self._pending_rows(text)
        if not pending:
            return None
        wanted = max(0, offset) + limit
        indexed = self._browse_index(0, wanted, sort, text)
        keyed: list[tuple[float, int, SessionSummary | None, str]] = []
        for summary in indexed:
            when = summary.created_at if sort == "created" else summary.when
            key = float(summary.size) if sort == "size" else (stored_epoch(when) or 0.0)
            keyed.append((key, 0, summary, ""))
        idents = dict(pending)
        for name, ident in pending:
            key = float(ident[0]) if sort == "size" else ident[1] / 1e9
            keyed.append((key, 1, None, name))
        keyed.sort(key=lambda row: (row[0], row[1]), reverse=True)
        out: list[SessionSummary] = []
        for _key, _kind, row, name in keyed[max(0, offset) : wanted]:
            out.append(row if row is not None else self._pending_summary(name, idents[name]))
        return out

    # ------------------------------------------------------------------ browse

    def _summary(self, row: Sequence[Any]) -> SessionSummary:
        return summary_row(row[:-1], self.source_kind, self.label, peer=row[-1])

    _SUMMARY_SQL = f"SELECT {SUMMARY_COLUMNS}, peer_title FROM sessions"

    def _listed(self, db: sqlite3.Connection | None = None) -> tuple[str, str]:
        """(the FROM clause, the condition) of the sessions a list shows: one row a session.
        The rows the vault keeps of the turns a rewrite dropped (see
        :mod:`..vault.feed`) are found by search, never listed; a deleted session's rows
        are listed once, with where it was kept (the last two columns of :meth:`_listing`)."""
        sql = "SELECT 1 FROM sqlite_master WHERE type='table' AND name='vault_kept'"
        found = db.execute(sql).fetchall() if db is not None else self._rows(sql)
        if not found:
            return "sessions", ""
        return (
            "sessions LEFT JOIN vault_kept AS kept ON kept.file = sessions.file",
            "kept.dropped IS NULL",
        )

    def _listing(
        self, tail: str = "", params: Sequence[Any] = (), text: str = ""
    ) -> list[SessionSummary]:
        """The listed sessions (see :meth:`_listed`) whose title or id holds ``text``, the
        query ending with ``tail`` (its order and limit)."""
        source, cond = self._listed()
        where, args = self._text_filter(text)
        if cond:
            where = f"{where} AND {cond}" if where else f" WHERE {cond}"
            cols = "kept.path, kept.at"
        else:
            cols = "NULL, NULL"
        sql = self._SUMMARY_SQL.replace(" FROM sessions", f", {cols} FROM {source}")
        out: list[SessionSummary] = []
        for row in self._rows(f"{sql}{where}{tail}", [*args, *params]):
            summary = self._summary(row[:-2])
            if row[-2] is not None:
                summary.kept = kept_note(str(row[-2]), float(row[-1]), None)
            out.append(summary)
        return out

    def summaries(self) -> list[SessionSummary]:
        """Every indexed session (unreadable files are not sessions)."""
        try:
            return self._listing()
        except (Broken, sqlite3.Error):
            return self.reader.summaries()

    def recent(
        self, *, limit: int = 10, project: str | os.PathLike[str] | None = None
    ) -> list[SessionSummary]:
        """The most recently updated sessions, from the index (``project``: of that project,
        a session's cwd, only)."""
        if project is not None:
            return self.browse(limit=limit, project=project)
        if limit <= 0:
            return []
        try:
            return self._listing(" ORDER BY when_ DESC, sid LIMIT ?", (limit,))
        except (Broken, sqlite3.Error):
            return self.reader.recent(limit=limit)

    @staticmethod
    def _text_filter(text: str) -> tuple[str, list[Any]]:
        text = (text or "").strip()
        if not text:
            return "", []
        pat = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        return (
            " WHERE (title LIKE ? ESCAPE '\\' OR session_id LIKE ? ESCAPE '\\')",
            [pat, pat],
        )

    def browse(
        self,
        *,
        offset: int = 0,
        limit: int = 100,
        sort: str = "updated",
        text: str = "",
        project: str | os.PathLike[str] | None = None,
    ) -> list[SessionSummary]:
        """One page of the session list (``sort``: updated, created or size; newest/largest
        first); ``text`` keeps sessions whose title or id contains it (any case), ``project``
        those whose project (cwd) is in it. While a build runs, the files it has not indexed
        yet are listed too (see :meth:`_browse_pending`)."""
        if project is not None:
            want = normalize_project(os.fspath(project))
            rows = [
                s
                for s in self.browse(offset=0, limit=1 << 30, sort=sort, text=text)
                if project_matches(s.project, want)
            ]
            return rows[max(0, offset) : max(0, offset) + max(0, limit)]
        if sort not in SORTS:
            raise ValueError(f"sort must be one of {SORTS}, not {sort!r}")
        if limit <= 0:
            return []
        live = self._browse_pending(offset, limit, sort, text)
        return live if live is not None else self._browse_index(offset, limit, sort, text)

    def _browse_index(self, offset: int, limit: int, sort: str, text: str) -> list[SessionSummary]:
        order = {
            "updated": "when_ DESC",
            "created": "created DESC",
            "size": "size DESC",
        }[sort]
        try:
            return self._listing(
                f" ORDER BY {order}, sid LIMIT ? OFFSET ?", [limit, max(0, offset)], text
            )
        except (Broken, sqlite3.Error):
            items = self.reader.summaries()
            needle = (text or "").strip().lower()
            if needle:
                items = [
                    s
                    for s in items
                    if needle in s.display_title.lower() or needle in s.session_id.lower()
                ]
            key: Callable[[SessionSummary], Any] = {
                "updated": lambda s: s.when or "",
                "created": lambda s: s.created_at or "",
                "size": lambda s: s.size,
            }[sort]
            items.sort(key=key, reverse=True)
            return items[max(0, offset) : max(0, offset) + limit]

    def count(self, *, text: str = "") -> int:
        """How many sessions :meth:`browse` can page through with this ``text`` (the files a
        running build has not indexed yet included)."""
        where, params = self._text_filter(text)
        try:
            source, cond = self._listed()
            if cond:
                where = f"{where} AND {cond}" if where else f" WHERE {cond}"
            indexed = int(self._rows(f"SELECT count(*) FROM {source}{where}", params)[0][0])
            return indexed + len(self._pending_rows(text))
        except (Broken, sqlite3.Error):
            needle = (text or "").strip().lower()
            return sum(
                1
                for s in self.reader.summaries()
                if not needle or needle in s.display_title.lower() or needle in s.session_id.lower()
            )

    # ------------------------------------------------------------------ misc

    def iter_index_sessions(self) -> Iterator[tuple[str, str]]:
        """(session id, file name) of every indexed session."""
        yield from self._rows("SELECT session_id, file FROM sessions ORDER BY sid")
