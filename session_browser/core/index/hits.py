"""Hits with their context: the scored sessions ordered, folded by lineage, and built from the
index's rows (or, when the rows cannot give exactly what the file gives, read from their files,
with a small cache keyed by file identity)."""

from __future__ import annotations

import itertools
import json
import logging
from typing import Any, NamedTuple

from .. import recall
from ..model import (
    JSONDict,
    SessionHit,
    copy_json,
)
from ..query import (
    ParsedQuery,
)
from ..search.hidden import snippet_source
from ..search.pick import light_hit, peer_or, session_hit
from ..search.rank import (
    Scored,
    explain,
)
from ..search.rows import COMPOUND_CHUNK, IN_CHUNK
from .typos import IndexFuzzy

log = logging.getLogger("session_browser.index")

HIT_CACHE_FILES = 64  # parsed session files kept for building hits
HIT_CACHE_BYTES = 8 << 20  # ... and at most this many bytes of their JSON

_SESSION_COLS = (
    "file, size, mtime_ns, inode, session_id, title, when_, agent, project, hit_rows, "
    "message_count, archived_count, nmsg, row_lo, row_hi, chars, peer_title"
)
_CONVO = ("user", "assistant")
# A verbatim entry with text (its view's content is not empty): turns without text (tool
# calls and their results) are no bookends. :func:`_prose`, called from SQL.
_PROSE_SQL = "session_browser_prose(raw)"


def _prose(raw: str) -> bool:
    """Whether the verbatim entry ``raw`` has text (see :data:`_PROSE_SQL`)."""
    try:
        return recall.has_content(json.loads(raw)[1])
    except (ValueError, IndexError, TypeError):
        return False


WHOLE_ROWS = 64  # a session with at most this many rows (and characters) is read whole
WHOLE_CHARS = 64_000
_MESSAGE_COLS = "id, idx, role, archived, ts, text"


class HitRow(NamedTuple):
    """A session's row as its hit is built from it (``_SESSION_COLS``)."""

    file: str
    size: int
    mtime_ns: int
    inode: int
    session_id: str
    title: str | None
    when: str | None
    agent: str | None
    project: str | None
    hit_rows: int
    message_count: int
    archived_count: int
    nmsg: int
    row_lo: int
    row_hi: int
    chars: int | None
    peer_title: str | None


class _Ahead(NamedTuple):
    """A session's row and, for a short session, its message rows (``_MESSAGE_COLS``, in
    id order), read ahead for several hits at once."""

    session: HitRow
    messages: list[tuple[Any, ...]] | None


class _FromFile(Exception):
    """The rows cannot give this hit as its file would: read the file."""


class IndexHits(IndexFuzzy):
    """Turns scored sessions into hits, reading only the sessions that will be shown."""

    def _read_ahead(self, sids: list[int]) -> dict[int, _Ahead]:
        """The session rows of the sessions ``sids`` (those most likely shown), and the
        message rows of the short ones, in two reads instead of two a session
        (:meth:`_hit_from_rows` checks each as before)."""
        if not sids:
            return {}
        out: dict[int, _Ahead] = {}
        with self._lock:
            db = self._conn()
            for start in range(0, len(sids), IN_CHUNK):
                chunk = sids[start : start + IN_CHUNK]
                marks = ",".join("?" * len(chunk))
                for sid, *row in db.execute(
                    f"SELECT sid, {_SESSION_COLS} FROM sessions WHERE sid IN ({marks})", chunk
                ):
                    out[sid] = _Ahead(HitRow._make(row), None)
            short = [
                (sid, row.row_lo, row.row_hi)
                for sid, (row, _m) in out.items()
                if row.row_hi - row.row_lo < WHOLE_ROWS and (row.chars or 0) <= WHOLE_CHARS
            ]
            if short:
                rows: dict[int, list[tuple[Any, ...]]] = {sid: [] for sid, _lo, _hi in short}
                one = f"SELECT ?, {_MESSAGE_COLS} FROM messages WHERE id BETWEEN ? AND ?"
                for start in range(0, len(short), COMPOUND_CHUNK):
                    part = short[start : start + COMPOUND_CHUNK]
                    for sid, *message in db.execute(
                        " UNION ALL ".join([one] * len(part)),
                        [x for ask in part for x in ask],
                    ):
                        rows[sid].append(tuple(message))
                for sid, messages in rows.items():
                    messages.sort(key=lambda r: int(r[0]))
                    out[sid] = _Ahead(out[sid].session, messages)
        return out

    def _light_hit(self, s: Scored) -> SessionHit:
        return light_hit(s, self.source_kind, self.label)

    def _projected(self, name: str) -> tuple[JSONDict, list[JSONDict]] | None:
        """Session ``name`` read and projected, from a small cache checked against its
        identity as the source gives it (a person refining a query sees the same sessions
        again)."""
        ident = self.source.identity(name)
        if ident is None:
            return self.reconciler.kept_projected(name)  # gone: the vault's copy, when it keeps one
        with self._hit_lock:
            cached = self._hit_cache.get(name)
            if cached is not None and cached[0] == ident:
                self._hit_cache.move_to_end(name)
                return cached[1], cached[2]
        data = self.source.load(name)
        if data is None:
            return None
        messages = recall.project(data)
        with self._hit_lock:
            old = self._hit_cache.pop(name, None)
            if old is not None:
                self._hit_bytes -= old[0][0]
            if ident[0] <= HIT_CACHE_BYTES // 8:
                self._hit_cache[name] = (ident, data, messages)
                self._hit_bytes += ident[0]
            while self._hit_cache and (
                len(self._hit_cache) > HIT_CACHE_FILES or self._hit_bytes > HIT_CACHE_BYTES
            ):
                _name, (gone, _d, _m) = self._hit_cache.popitem(last=False)
                self._hit_bytes -= gone[0]
        return data, messages

    def _full_hit(
        self, s: Scored, pq: ParsedQuery, window: int, ahead: _Ahead | None = None
    ) -> SessionHit | None:
        """The hit with its context: from the index's rows when they give exactly what the
        file gives, else from the file; None when the file is gone (and not kept)."""
        if s.info.key >= 0:  # an indexed session (scanned files have negative keys)
            try:
                return self._hit_from_rows(s, pq, window, ahead)
            except Exception as exc:  # anything unexpected: the file decides
                if not isinstance(exc, _FromFile):
                    log.debug("%s: hit from the file: %s", s.info.file, exc)
        return self._hit_from_file(s, pq, window)

    def _hit_from_rows(
        self, s: Scored, pq: ParsedQuery, window: int, ahead: _Ahead | None = None
    ) -> SessionHit | None:
        """The hit of an indexed session built from its rows: the same hit as
        :meth:`_hit_from_file` builds (title, snippet, window, bookends), reading only the
        rows it shows, never the file. :class:`_FromFile` when the rows cannot give it: the
        session was indexed without ``hit_rows``, or replaced, or its file changed since.
        ``ahead``: its session row (and a short session's message rows) read already."""
        with self._lock:
            db = self._conn()
            row: HitRow | None = None
            if ahead is not None:
                row = ahead.session
            else:
                got = db.execute(
                    f"SELECT {_SESSION_COLS} FROM sessions WHERE sid = ?", (s.info.key,)
                ).fetchone()
                row = None if got is None else HitRow._make(got)
            if row is None or not row.hit_rows or row.file != s.info.file:
                raise _FromFile
            name, size, mtime_ns, inode = row.file, row.size, row.mtime_ns, row.inode
            count, archived_count, nmsg = row.message_count, row.archived_count, row.nmsg
            lo, hi, chars, flag = row.row_lo, row.row_hi, row.chars, row.hit_rows
            # The identity the index keeps: the source's (a Claude Code transcript's folds
            # in its subagent files), not the file's alone.
            now = self.source.identity(name)
            if now is None:
                raise _FromFile  # gone: the file path reads the vault's copy
            if now != (size, mtime_ns, inode):
                raise _FromFile  # changed since it was indexed: the file says what it is now
            if self.reconciler.kept_note(name) is not None:
                raise _FromFile  # rows kept from the vault: its copy says what they were
            n = count + archived_count
            if n <= 0:
                raise _FromFile
            anchor = max(0, min(s.anchor, n - 1))
            window = max(0, window)
            start, end = max(0, anchor - window), min(n, anchor + window + 1)
            # Message ids run in projection order: entry i's rows lie between lo + i minus
            # the entries without a row, and lo + i plus the extra parts of long messages.
            blanks, extra = n - nmsg, (hi - lo + 1) - nmsg
            rows: list[tuple[Any, ...]]
            first: list[tuple[Any, ...]]
            last: list[tuple[Any, ...]]
            whole = hi - lo < WHOLE_ROWS and (chars or 0) <= WHOLE_CHARS
            if whole:
                # a short session: all its rows at once (one read instead of three)
                if ahead is not None and ahead.messages is not None:
                    rows = ahead.messages
                else:
                    rows = db.execute(
                        f"SELECT {_MESSAGE_COLS} FROM messages WHERE id BETWEEN ? AND ? "
                        "ORDER BY id",
                        (lo, hi),
                    ).fetchall()
                convo = [r for r in rows if r[2] in _CONVO]
                first, last = convo[: 3 + extra], convo[len(convo) - 2 - extra :]
            else:
                rows = db.execute(
                    f"SELECT {_MESSAGE_COLS} FROM messages WHERE id BETWEEN ? AND ? "
                    "AND idx BETWEEN ? AND ? ORDER BY id",
                    (max(lo, lo + start - blanks), min(hi, lo + end - 1 + extra), start, end - 1),
                ).fetchall()
                first = db.execute(
                    f"SELECT {_MESSAGE_COLS} FROM messages WHERE id BETWEEN ? AND ? "
                    "AND role IN ('user', 'assistant') ORDER BY id LIMIT ?",
                    (lo, hi, 3 + extra),
                ).fetchall()
                last = db.execute(
                    f"SELECT {_MESSAGE_COLS} FROM messages WHERE id BETWEEN ? AND ? "
                    "AND role IN ('user', 'assistant') ORDER BY id DESC LIMIT ?",
                    (lo, hi, 2 + extra),
                ).fetchall()
            verbatim: dict[int, str] = {}
            v_first: list[int] = []
            v_last: list[int] = []
            odd = flag - 1  # the session's entries in ``verbatim``
            if 0 < odd <= WHOLE_ROWS:
                marked = []
                for idx, convo_flag, raw in db.execute(
                    "SELECT idx, convo, raw FROM verbatim WHERE sid = ?", (s.info.key,)
                ):
                    verbatim[idx] = raw
                    if convo_flag and _prose(raw):  # a turn without text is no bookend
                        marked.append(idx)
                marked.sort()
                v_first, v_last = marked[:3], marked[-2:]
            elif odd > 0:
                verbatim.update(
                    db.execute(
                        "SELECT idx, raw FROM verbatim WHERE sid = ? AND idx BETWEEN ? AND ?",
                        (s.info.key, start, end - 1),
                    )
                )
                db.create_function("session_browser_prose", 1, _prose, deterministic=True)
                for desc, wanted, out in (("", 3, v_first), (" DESC", 2, v_last)):
                    for idx, raw in db.execute(
                        "SELECT idx, raw FROM verbatim WHERE sid = ? AND convo = 1 "
                        f"AND {_PROSE_SQL} ORDER BY idx{desc} LIMIT ?",
                        (s.info.key, wanted),
                    ):
                        out.append(idx)
                        verbatim[idx] = raw
        if not whole:  # the three reads may overlap: each row once, in id order
            by_id = {r[0]: r for r in itertools.chain(rows, first, last)}
            rows = [by_id[mid] for mid in sorted(by_id)]
        texts: dict[int, list[str]] = {}  # a long message's parts, in order
        facts: dict[int, tuple[str, int, float | None]] = {}
        for _id, idx, role, archived, ts, text in rows:
            part = texts.get(idx)
            if part is None:
                texts[idx] = [text]
                facts[idx] = (role, archived, ts)
            else:
                part.append(text)

        def view(i: int) -> JSONDict:
            raw = verbatim.get(i)
            if raw is not None:
                role, content, ts, archived = json.loads(raw)
                return {
                    "index": i,
                    "role": role,
                    "content": content,
                    "timestamp": ts,
                    "archived": bool(archived),
                }
            fact = facts.get(i)
            if fact is None:
                raise _FromFile  # rows and projection disagree: never guess
            return {
                "index": i,
                "role": fact[0],
                "content": "".join(texts[i]),
                "timestamp": fact[2],
                "archived": bool(fact[1]),
            }

        opening = sorted({r[1] for r in first} | set(v_first))[:3]
        closing = sorted({r[1] for r in last} | set(v_last))[-2:]
        ends: dict[str, list[JSONDict]] = {}
        if opening:  # as recall.bookends: no closing ones in a short session
            ends = {
                "opening": [view(i) for i in opening[: recall.BOOKEND_SIZE]],
                "closing": (
                    [view(i) for i in closing] if len(opening) > recall.BOOKEND_SIZE else []
                ),
            }
        shown = view(anchor)
        hit = SessionHit(
            session_id=row.session_id,
            title=peer_or(row.peer_title, row.title, self.source_kind),
            display_title=row.title or "",
            agent=row.agent,
            when=row.when,
            snippet=recall.make_snippet(
                snippet_source(pq, "".join(texts.get(anchor, ())), s.anchor_text),
                pq.words,
                pq.all_tokens,
            ),
            score=s.score,
            anchor_index=anchor,
            messages=[view(i) for i in range(start, end)],
            bookends=ends,
            source=self.source_kind,
            store=self.label,
            archived=bool(shown["archived"]),
            automated=s.info.tagged or s.info.machine,
            explain=explain(s, pq) or {},
        )
        hit.project = row.project
        return hit

    def _hit_from_file(self, s: Scored, pq: ParsedQuery, window: int) -> SessionHit | None:
        """The hit with its context read from the session's file (a small cache of parsed
        files keyed by their identity)."""
        loaded = self._projected(s.info.file)
        if loaded is None:
            return None
        data, messages = loaded
        hit = session_hit(s, pq, data, messages, window, self.source_kind, self.label)
        if hit is None:
            return None
        hit.kept = self.reconciler.kept_note(s.info.file)
        # The message views share their content with the cache: give the hit its own
        # copy of any content that is not a plain (immutable) string.
        for view in itertools.chain(hit.messages, *hit.bookends.values()):
            if not isinstance(view.get("content"), str):
                view["content"] = copy_json(view.get("content"))
        return hit
