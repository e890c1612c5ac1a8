"""``DefaultSessionStore``: the PraisonAI-compatible JSON session store.

One JSON file per session in ``session_dir``. Every write takes the session's cross-process
lock, re-reads the file fresh under it, mutates, applies retention and writes atomically.
Every read is lock-free and writes nothing (atomic replace makes that safe).
"""

from __future__ import annotations

import abc
import errno
import logging
import os
import re
import stat
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from . import recall
from .compat import DEFAULT_LOCK_TIMEOUT, PraisonAICompat, StoreDir
from .files import (
    MAX_SESSION_BYTES,
    FileIdentity,
    SessionFileError,
    iter_session_files,
    quarantine,
    read_file_bytes,
    read_json_file,
    session_id_from_bytes,
    session_lock,
    spill_belongs_to,
    spill_files_for,
    stored_id,
    write_session_file,
    write_spill,
)
from .model import (
    SUMMARY_PREFIX,
    JSONDict,
    SessionData,
    SessionHit,
    SessionMessage,
    SessionSummary,
    epoch_seconds,
    message_key,
    tail_turns,
    utc_now_iso,
)
from .paths import (
    check_id,
    default_session_dir,
    default_spill_dir,
    ensure_private_dir,
    session_file_name,
)

log = logging.getLogger("session_browser.store")

DEFAULT_MAX_MESSAGES = 100
RETENTION_COMPACT = "compact"
RETENTION_TRUNCATE = "truncate"
RETENTION_KEEP_ALL = "keep_all"
RETENTIONS = (RETENTION_COMPACT, RETENTION_TRUNCATE, RETENTION_KEEP_ALL)

Mutator = Callable[[SessionData], None]
#: Told of a write that landed: (session id, its file, the dict written or None when deleted).
WriteObserver = Callable[[str, Path, JSONDict | None], None]


def _env_retention() -> str | None:
    value = os.environ.get("PRAISONAI_SESSION_RETENTION")
    if not value:
        return None
    if value not in RETENTIONS:
        log.warning(
            "ignoring PRAISONAI_SESSION_RETENTION=%r (expected one of %s)", value, RETENTIONS
        )
        return None
    return value


def _env_active_window() -> int | None:
    value = os.environ.get("PRAISONAI_SESSION_ACTIVE_WINDOW")
    if not value:
        return None
    try:
        window = int(value)
    except ValueError:
        log.warning("ignoring PRAISONAI_SESSION_ACTIVE_WINDOW=%r (not an integer)", value)
        return None
    if window < 0:
        log.warning("ignoring PRAISONAI_SESSION_ACTIVE_WINDOW=%r (negative)", value)
        return None
    return window


_FILE_RE = re.compile(r"[^\s]+\.[a-zA-Z]{1,4}")


def fallback_summary(messages: Sequence[SessionMessage]) -> str:
    """PraisonAI's deterministic overflow summary text (no LLM involved).

    Mirrors ``ContextCompressor._create_fallback_summary`` as PraisonAI's store calls it,
    including its fallback line when a tool turn carries no string ``metadata.name``.
    """
    try:
        tools: list[Any] = []
        files: set[str] = set()
        counts: dict[Any, int] = {"user": 0, "assistant": 0, "tool": 0, "system": 0}
        for msg in messages:
            role: Any = msg.extra.get("role", msg.role)
            counts[role] = counts.get(role, 0) + 1
            if role == "tool":
                tools.append(msg.metadata.get("name"))
                if isinstance(msg.content, str):
                    files.update(_FILE_RE.findall(msg.content))
        parts = [
            f"Previous conversation: {len(messages)} messages",
            f"Message breakdown: {counts}",
        ]
        if tools:
            parts.append(f"Tools used: {', '.join(sorted(set(tools)))}")
        if files:
            listed = sorted(files)[:5]
            more = f" (+{len(files) - 5} more)" if len(files) > 5 else ""
            parts.append(f"Files referenced: {', '.join(listed)}{more}")
        return "\n".join(parts)
    except Exception:
        return f"Previous conversation: {len(messages)} messages compacted."


def _holds(data: JSONDict, session_id: str) -> bool:
    """True when a stored dict is ``session_id``'s (no stored id counts as a match)."""
    stored = data.get("session_id")
    return stored in (None, "") or str(stored) == session_id


def _is_missing(exc: OSError) -> bool:
    """A read error that means "no such file" (also a name too long to exist)."""
    return isinstance(exc, FileNotFoundError) or exc.errno == errno.ENAMETOOLONG


def _overridden_dir() -> str | None:
    """A session dir assigned to ``DEFAULT_SESSION_DIR`` on this module or on
    praisonaiagents' store module (the override it documents), which wins over
    ``PRAISONAI_HOME``; None when neither is assigned."""
    for name in (__name__, "praisonaiagents.session.store"):
        module = sys.modules.get(name)
        value = vars(module).get("DEFAULT_SESSION_DIR") if module is not None else None
        if value:
            return str(value)
    return None


def _check_can_be_dir(path: Path) -> None:
    """Raise ``NotADirectoryError`` when ``path`` can never be a session dir: it, or the
    nearest of its parents that exists, is not a directory. Nothing is created."""
    for candidate in (path, *path.parents):
        try:
            st = candidate.stat()
        except (FileNotFoundError, NotADirectoryError):
            continue  # not there (or under a file): its parent decides
        except OSError:
            return  # unreadable: the first write says why
        if not stat.S_ISDIR(st.st_mode):
            raise NotADirectoryError(
                errno.ENOTDIR, "not a directory, cannot hold sessions", str(candidate)
            )
        return


class DefaultSessionStore(PraisonAICompat, metaclass=abc.ABCMeta):
    """JSON session store, byte-compatible with ``praisonaiagents`` 1.7.17.

    ``mirror`` is PraisonAI's optional mirror sink (its ``append(session_id, records)`` gets
    every persisted turn on a background thread). ``read_side_effects=True`` gives PraisonAI's
    read semantics: a read folds spill files into the session file and moves a corrupt file
    aside; by default reads never write (spilled turns are merged in memory instead).
    """

    source_kind = "praisonai"

    def __init__(
        self,
        session_dir: str | os.PathLike[str] | None = None,
        max_messages: int = DEFAULT_MAX_MESSAGES,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        retention: str | None = None,
        active_window: int | None = None,
        mirror: Any = None,
        cache_maxsize: int | None = None,  # PraisonAI's session-cache bound; we cache none
        *,
        spill_dir: str | os.PathLike[str] | None = None,
        read_side_effects: bool = False,
        observer: WriteObserver | None = None,
    ) -> None:
        """``observer`` is told of every write that landed, after the :meth:`_after_write`
        hook (``data`` None for a deletion): the index follows the writes it does not make."""
        self._observer = observer
        self.session_dir = StoreDir(session_dir or _overridden_dir() or default_session_dir())
        _check_can_be_dir(Path(self.session_dir))  # before any thread is started
        self._init_compat(mirror=mirror, read_side_effects=read_side_effects)
        self.spill_dir = Path(spill_dir) if spill_dir else default_spill_dir()
        self.max_messages = max_messages
        self.lock_timeout = lock_timeout
        if retention is None:
            retention = _env_retention()
        if retention is None:
            retention = (
                RETENTION_TRUNCATE if max_messages != DEFAULT_MAX_MESSAGES else RETENTION_COMPACT
            )
        if retention not in RETENTIONS:
            raise ValueError(f"invalid retention {retention!r}; expected one of {RETENTIONS}")
        self.retention = retention
        if active_window is None:
            active_window = _env_active_window()
        self.active_window = active_window if active_window is not None else max_messages
        self._misplaced_cache: tuple[int, dict[str, Path]] | None = None

    # ------------------------------------------------------------------ paths

    @property
    def label(self) -> str:
        return str(self.session_dir)

    def skipped_names(self) -> list[str]:
        """The names of the files an index over this store could not read: none (the JSON
        store keeps no index; an indexed store names them)."""
        return []

    def close(self) -> None:
        """Nothing to release: every write opens, locks and closes its own file (a mirror
        is flushed and stopped by :meth:`close_mirror`)."""

    def owned_dirs(self) -> list[Path]:
        return [Path(self.session_dir), self.spill_dir]

    def session_path(self, session_id: str) -> Path:
        """The file of ``session_id`` (a hostile id cannot leave the session dir)."""
        return self.session_dir / session_file_name(session_id)

    # ------------------------------------------------------------------ reads (never write)

    def read_raw(self, session_id: str) -> JSONDict | None:
        """The stored dict of ``session_id``; None when no file holds it.

        The file is normally ``session_path(session_id)``; a session whose file was
        renamed or copied under another name is found by its stored id (one scan,
        remembered until the dir changes). Raises ``OSError`` (unreadable) and
        :class:`SessionFileError` (corrupt) for the session's own file.
        """
        path = self.session_path(session_id)
        try:
            data = read_json_file(path)
        except OSError as exc:
            if not _is_missing(exc):
                raise
            data = None
        if data is not None and _holds(data, session_id):
            return data
        other = self._misplaced().get(session_id)
        if other is None or other == path:
            return None
        try:
            found = read_json_file(other)
        except (OSError, SessionFileError):
            return None
        return found if _holds(found, session_id) else None

    def _misplaced(self) -> dict[str, Path]:
        """Stored ids whose file is not ``session_path(id)`` (cached per dir mtime)."""
        try:
            stamp = self.session_dir.stat().st_mtime_ns
        except OSError:
            return {}
        if self._misplaced_cache is not None and self._misplaced_cache[0] == stamp:
            return self._misplaced_cache[1]
        for _ in self.iter_sessions():
            pass
        return self._misplaced_cache[1] if self._misplaced_cache else {}

    def get_session(self, session_id: str) -> SessionData:
        """The session (empty when missing or unusable; nothing is written)."""
        self._before_read(session_id)
        try:
            data = self.read_raw(session_id)
        except (OSError, SessionFileError) as exc:
            log.warning("cannot read session %r: %s", session_id, exc)
            data = None
        if data is None:
            return self._with_spills(SessionData(session_id=session_id))
        session = SessionData.from_dict(data)
        session.session_id = session.session_id or session_id
        return self._with_spills(session)

    def session_exists(self, session_id: str) -> bool:
        """True when a file holds ``session_id`` (its own file, or a renamed copy)."""
        if not isinstance(session_id, str) or not session_id:
            return False
        try:
            if self.session_path(session_id).is_file():
                return True
        except OSError:
            pass
        return session_id in self._misplaced()

    def iter_sessions(self) -> Iterator[tuple[Path, os.stat_result, JSONDict]]:
        """Every readable session file with its stat and dict; bad files are skipped.

        ``data["session_id"]`` is always a non-empty string (the file stem when none is
        stored). A complete pass also records which ids live under another file name.
        """
        try:
            stamp: int | None = self.session_dir.stat().st_mtime_ns
        except OSError:
            stamp = None
        misplaced: dict[str, Path] = {}
        for path, st in iter_session_files(self.session_dir.path):
            try:
                data = read_json_file(path)
            except (OSError, SessionFileError) as exc:
                log.debug("skipping unreadable session file %s: %s", path, exc)
                continue
            sid = stored_id(data, path)
            data["session_id"] = sid
            if path.name != session_file_name(sid):
                misplaced.setdefault(sid, path)
            yield path, st, data
        if stamp is not None:
            self._misplaced_cache = (stamp, misplaced)

    def summaries(self) -> list[SessionSummary]:
        """A summary of every readable session (unsorted)."""
        out = []
        for _path, st, data in self.iter_sessions():
            out.append(
                recall.summary_of(data, size=st.st_size, source=self.source_kind, store=self.label)
            )
        return out

    def recent(self, *, limit: int = 10) -> list[SessionSummary]:
        """The most recently updated sessions ("what was I working on?")."""
        return recall.sort_recent(self.summaries(), limit)

    def search_candidates(
        self, query: str, *, window: int = 5, language: bool = False
    ) -> list[recall.Candidate]:
        """Every matching session, scored by the classic heuristic, unranked. With
        ``language``, ``query`` is read as the query language (filters, ``-word``): raises
        ``QueryError`` for a bad filter value."""
        parsed = recall.ClassicQuery.parse(query, language=language)
        if not parsed.searchable:
            return []
        stats = recall.scan_stats(parsed)
        out = []
        for path, _st, data in self.iter_sessions():
            cand = recall.classic_candidate(
                data,
                parsed,
                window=window,
                source=self.source_kind,
                store=self.label,
                file_name=path.name,
                stats=stats,
            )
            if cand is not None:
                out.append(cand)
        return recall.keep_matching(out, parsed, None if stats is None else stats.rare())

    def search(self, query: str, *, limit: int = 5, window: int = 5) -> list[SessionHit]:
        """Full-text recall across every session (archived and active turns)."""
        return recall.search(query, limit, lambda: self.search_candidates(query, window=window))

    def window(
        self,
        session_id: str,
        around_message_id: Any = None,
        *,
        window: int = 5,
    ) -> list[JSONDict]:
        """±``window`` messages of the projection around an anchor (the latest if none)."""
        try:
            data = self.read_raw(session_id)
        except (OSError, SessionFileError) as exc:
            log.warning("cannot read session %r: %s", session_id, exc)
            return []
        if data is None:
            return []
        messages = recall.project(data)
        if not messages:
            return []
        anchor = recall.parse_anchor(around_message_id, len(messages))
        return recall.window_slice(messages, anchor, window)

    def projection(self, session_id: str, *, include_hidden: bool = False) -> list[JSONDict]:
        """The whole archived+active projection of a session, in the public message shape
        (PraisonAI's files keep no hidden parts apart: ``include_hidden`` changes nothing)."""
        data = self.read_raw(session_id)
        if data is None:
            raise KeyError(session_id)
        return recall.full_view(recall.project(data))

    # ------------------------------------------------------------------ the write path

    def _after_write(self, session_id: str, path: Path, data: JSONDict | None) -> None:
        """Hook: a write landed (``data`` is None when the session was deleted)."""

    def _load_for_write(self, session_id: str, path: Path) -> SessionData:
        """Load under the lock: missing -> new; corrupt -> quarantined, new; OSError re-raised."""
        try:
            data = read_json_file(path)
        except FileNotFoundError:
            return SessionData(session_id=session_id)
        except SessionFileError as exc:
            target = quarantine(path)
            log.error(
                "session file %s is corrupt (%s); moved aside to %s", path, exc.reason, target
            )
            return SessionData(session_id=session_id)
        stored = data.get("session_id")
        if stored not in (None, "") and str(stored) != session_id:
            raise OSError(f"{path} holds session {stored!r}, whose file name {session_id!r} shares")
        session = SessionData.from_dict(data)
        session.session_id = session_id
        return session

    def _own_spills(
        self, session_id: str, seen: set[tuple[str, str, str]]
    ) -> tuple[list[Path], list[SessionMessage]]:
        """This store's spill files of ``session_id`` and their turns not in ``seen``.

        Only spills that belong to this store (:func:`spill_belongs_to`) are taken: a spill
        dir shared by several stores never moves a turn across them. Nothing is written.
        """
        consumed: list[Path] = []
        recovered: list[SessionMessage] = []
        for spill in spill_files_for(self.spill_dir, session_id):
            try:
                data = read_json_file(spill)
            except (OSError, SessionFileError) as exc:
                log.warning("skipping unreadable spill file %s: %s", spill, exc)
                continue
            raw = data.get("messages")
            if data.get("session_id") != session_id or not isinstance(raw, list):
                continue
            if not spill_belongs_to(data, self.session_dir.path, self.spill_dir):
                continue  # another store's turn (a shared spill dir): never moved here
            for item in raw:
                if not isinstance(item, dict):
                    continue
                key = message_key(item)
                if key in seen:
                    continue
                seen.add(key)
                recovered.append(SessionMessage.from_dict(item))
            consumed.append(spill)
        return consumed, recovered

    def _take_spills(self, session_id: str, session: SessionData) -> list[Path]:
        """Fold this session's spill files into ``session``; return the consumed files."""
        seen = {m.dedup_key() for m in session.messages}
        seen.update(m.dedup_key() for m in session.archived_messages)
        consumed, recovered = self._own_spills(session_id, seen)
        if recovered:
            recovered.sort(key=lambda m: epoch_seconds(m.timestamp) or 0.0)
            session.messages.extend(recovered)
            log.info("session %s: re-ingested %d spilled turn(s)", session_id, len(recovered))
        return consumed

    def _spill(self, session_id: str, pending: Sequence[SessionMessage], error: str) -> None:
        if not pending:
            return
        try:
            target = write_spill(
                self.spill_dir,
                session_id,
                [m.to_dict() for m in pending],
                session_dir=self.session_dir.path,
            )
            log.error(
                "write to session %s failed (%s); turn spilled to %s", session_id, error, target
            )
        except (OSError, TypeError, ValueError, RecursionError) as exc:
            log.error(
                "write to session %s failed (%s) and so did the spill: %s", session_id, error, exc
            )
            target = None
        self._on_persist_failed(session_id, pending[-1], error, str(target) if target else None)

    def _modify(
        self,
        session_id: str,
        mutator: Mutator,
        *,
        pending: Sequence[SessionMessage] = (),
        apply_retention: bool = True,
    ) -> bool:
        """Locked read-modify-write. ``pending`` turns are spilled if the write fails."""
        check_id(session_id)
        path = self.session_path(session_id)
        try:
            ensure_private_dir(self.session_dir)
            with session_lock(path, self.lock_timeout):
                session = self._load_for_write(session_id, path)
                consumed = self._take_spills(session_id, session)
                mutator(session)
                session.updated_at = utc_now_iso()
                if apply_retention:
                    self.enforce_window(session)
                data = session.to_dict()
                self._last_write_error = None
                if not self._atomic_write_json(str(path), data):
                    raise OSError(self._last_write_error or f"the write of {path} failed")
                for spill in consumed:
                    try:
                        spill.unlink()
                    except OSError as exc:
                        log.warning("could not remove re-ingested spill %s: %s", spill, exc)
                self._notify(session_id, path, data)
                return True
        except (OSError, TypeError, ValueError, RecursionError) as exc:
            log.error("could not write session %s: %s", session_id, exc)
            self._spill(session_id, pending, str(exc))
            return False

    def _notify(self, session_id: str, path: Path, data: JSONDict | None) -> None:
        """Run the :meth:`_after_write` hook, then tell the observer; neither failing ever
        fails a landed write."""
        for hook in (self._after_write, self._observer):
            if hook is None:
                continue
            try:
                hook(session_id, path, data)
            except Exception:
                log.exception("after-write hook failed for session %s", session_id)

    def enforce_window(self, session: SessionData) -> None:
        """Apply the retention policy to the active window (PraisonAI's exact rules)."""
        window = self.active_window
        if not window or window <= 0 or len(session.messages) <= window:
            return
        if self.retention == RETENTION_KEEP_ALL:
            return
        recent = tail_turns(session.messages, window)
        overflow = session.messages[: len(session.messages) - len(recent)]
        if self.retention == RETENTION_TRUNCATE:
            session.messages = recent
            self._shift_checkpoint(session, len(overflow))
            log.info(
                "session %s: truncated %d early turns (retention=truncate)",
                session.session_id,
                len(overflow),
            )
            return
        prior = overflow[0] if overflow and overflow[0].metadata.get("compaction") else None
        to_archive = overflow[1:] if prior is not None else overflow
        if not to_archive:
            kept = [prior, *recent] if prior is not None else recent
            self._shift_checkpoint(session, len(session.messages) - len(kept))
            session.messages = kept
            return
        session.archived_messages.extend(to_archive)
        text = fallback_summary(to_archive)
        prior_count = 0
        if prior is not None:
            try:
                prior_count = int(prior.metadata.get("compacted_count", 0) or 0)
            except (TypeError, ValueError, OverflowError):  # "x", 1e400
                prior_count = 0
            prior_text = prior.text
            head = SUMMARY_PREFIX + "\n"
            if prior_text.startswith(head):
                prior_text = prior_text[len(head) :]
            text = f"{prior_text}\n---\n{text}"
        summary = SessionMessage(
            role="system",
            content=f"{SUMMARY_PREFIX}\n{text}",
            timestamp=time.time(),
            metadata={"compaction": True, "compacted_count": prior_count + len(to_archive)},
        )
        kept = [summary, *recent]
        self._shift_checkpoint(session, len(session.messages) - len(kept))
        session.messages = kept
        log.info(
            "session %s: compacted %d early turns into a summary (retention=compact)",
            session.session_id,
            len(to_archive),
        )

    @staticmethod
    def _shift_checkpoint(session: SessionData, dropped: int) -> None:
        if dropped > 0 and session.last_compaction is not None:
            cp = session.last_compaction
            cp.message_index = max(0, cp.message_index - dropped)

    # ------------------------------------------------------------------ writes

    def add_message(
        self,
        session_id: str,
        role: str,
        content: str,
        metadata: dict[str, Any] | None = None,
        tool_calls: list[dict[str, Any]] | None = None,
        tool_call_id: str | None = None,
    ) -> bool:
        """Append one message. False (and the turn spilled) when it could not be written."""
        message = SessionMessage(
            role=role,
            content=content,
            timestamp=time.time(),
            metadata=dict(metadata or {}),
            tool_calls=tool_calls or None,
            tool_call_id=tool_call_id,
        )
        if not self._modify(session_id, lambda s: s.messages.append(message), pending=[message]):
            return False
        self._mirror_append(session_id, [message])
        return True

    def add_user_message(
        self, session_id: str, content: str, metadata: dict[str, Any] | None = None
    ) -> bool:
        return self.add_message(session_id, "user", content, metadata)

    def add_assistant_message(
        self, session_id: str, content: str, metadata: dict[str, Any] | None = None
    ) -> bool:
        return self.add_message(session_id, "assistant", content, metadata)

    def set_chat_history(self, session_id: str, messages: Sequence[dict[str, Any]]) -> bool:
        """Replace the active window with ``messages``."""
        built = [
            SessionMessage(
                role=str(m.get("role", "user")),
                content=m.get("content", "") or "",
                timestamp=m.get("timestamp", time.time()),
                metadata=dict(m.get("metadata") or {}),
                tool_calls=m.get("tool_calls") or None,
                tool_call_id=m.get("tool_call_id"),
            )
            for m in messages
            if isinstance(m, dict)
        ]

        def apply(session: SessionData) -> None:
            session.messages = list(built)
            session.drop_checkpoint()

        if not self._modify(session_id, apply, pending=built):
            return False
        self._mirror_append(session_id, built)
        return True

    def update_session_metadata(self, /, session_id: str, **fields: Any) -> bool:
        """Merge ``fields`` into ``metadata`` (None values are skipped)."""
        if not fields:
            return True

        def apply(session: SessionData) -> None:
            for key, value in fields.items():
                if value is None:
                    continue
                session.metadata[key] = value
                if key in ("agent_id", "agent_name", "user_id"):
                    setattr(session, key, value)

        return self._modify(session_id, apply)

    def set_agent_info(
        self, session_id: str, agent_name: str | None = None, user_id: str | None = None
    ) -> bool:
        def apply(session: SessionData) -> None:
            if agent_name:
                session.agent_name = agent_name
            if user_id:
                session.user_id = user_id

        return self._modify(session_id, apply)

    def set_gateway_info(
        self,
        session_id: str,
        gateway_session_id: str | None = None,
        agent_id: str | None = None,
    ) -> bool:
        def apply(session: SessionData) -> None:
            if gateway_session_id:
                session.gateway_session_id = gateway_session_id
            if agent_id:
                session.agent_id = agent_id

        return self._modify(session_id, apply)

    def rename_session(self, session_id: str, title: str) -> bool:
        """Set ``metadata.title`` (an empty title clears it)."""
        title = (title or "").strip()

        def apply(session: SessionData) -> None:
            if title:
                session.metadata["title"] = title
            else:
                session.metadata.pop("title", None)

        return self._modify(session_id, apply)

    def clear_session(self, session_id: str) -> bool:
        """Empty the active window; archived turns stay recallable."""

        def apply(session: SessionData) -> None:
            session.messages.clear()
            session.drop_checkpoint()

        return self._modify(session_id, apply)

    def delete_session(self, session_id: str) -> bool:
        """Remove the session file (under its lock).

        A file that holds another session (whose id maps to the same file name) is left
        alone and False is returned.
        """
        path = self.session_path(session_id)
        try:
            if not path.exists():
                return True
        except OSError:
            return True  # a name too long to exist
        try:
            with session_lock(path, self.lock_timeout):
                try:
                    stored = read_json_file(path).get("session_id")
                except FileNotFoundError:
                    return True
                except SessionFileError as exc:
                    # Whose bytes these are is unknown unless they name this session; even
                    # then they are moved aside (never deleted): they may be all that is left.
                    owner = session_id_from_bytes(
                        read_file_bytes(path, max_bytes=MAX_SESSION_BYTES)
                    )
                    if owner != session_id:
                        log.error(
                            "not deleting %s: it is corrupt (%s) and its bytes name %s",
                            path,
                            exc.reason,
                            f"session {owner!r}" if owner else "no session",
                        )
                        return False
                    target = quarantine(path)
                    log.warning("session file %s was corrupt; moved aside to %s", path, target)
                    self._notify(session_id, path, None)
                    return True
                if stored not in (None, "") and str(stored) != session_id:
                    log.error("not deleting %s: it holds session %r", path, stored)
                    return False
                path.unlink(missing_ok=True)
                self._notify(session_id, path, None)
            return True
        except OSError as exc:
            log.error("could not delete session %s: %s", session_id, exc)
            return False

    def write_session(self, session: SessionData, *, overwrite: bool = False) -> bool:
        """Write a whole session verbatim (no retention), under its lock.

        Raises ``FileExistsError`` when the session exists and ``overwrite`` is false.
        Used by import and restore, where the destination's window must not cut history.
        """
        check_id(session.session_id)
        path = self.session_path(session.session_id)
        ensure_private_dir(self.session_dir)
        with session_lock(path, self.lock_timeout):
            if not overwrite and path.exists():
                raise FileExistsError(str(path))
            if overwrite:
                self._check_replaceable(session.session_id, path)
            data = session.to_dict()
            write_session_file(path, data)
            self._notify(session.session_id, path, data)
        return True

    @staticmethod
    def _check_replaceable(session_id: str, path: Path) -> None:
        """Under the lock: raise ``OSError`` unless ``path`` is missing or holds ``session_id``."""
        try:
            existing = read_json_file(path)
        except FileNotFoundError:
            return
        except SessionFileError as exc:
            raise OSError(f"{path} is corrupt ({exc.reason}); not overwritten") from exc
        stored = existing.get("session_id")
        if stored not in (None, "") and str(stored) != session_id:
            raise OSError(f"{path} holds session {stored!r}; not overwritten")

    def file_identity(self, session_id: str) -> FileIdentity | None:
        return FileIdentity.at(self.session_path(session_id))
