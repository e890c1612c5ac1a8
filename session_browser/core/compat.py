"""The rest of ``praisonaiagents`` 1.7.17's session-store API, for a true drop-in.

:class:`CompatReads` holds what is built on a store's own reads (agent and gateway lookups,
the listing, runtime state, the model, portable export/import as store methods): a base of
the JSON store and of the index, which reads through whatever source it indexes.
:class:`PraisonAICompat` (a base class of :class:`~session_browser.core.store.DefaultSessionStore`,
the writer) adds the writes: compaction checkpoints, runtime state, partial assistant turns,
the background mirror and the ``SESSION_PERSIST_FAILED`` hook. Every write goes through the
store's one locked, atomic read-modify-write (``_modify``); every read goes through
``get_session`` / ``iter_sessions`` and writes nothing unless the store was opened with
``read_side_effects=True`` (PraisonAI's behaviour: a read folds spill files into the session
file and renames a corrupt file aside).

:class:`StoreDir` is the type of ``store.session_dir``: a ``str`` as in PraisonAI (it compares
equal to the same path as a string, and to the same :class:`~pathlib.Path`), that also offers
the few ``Path`` operations the rest of this package uses on it.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from . import payload as _payload
from . import recall
from .files import (
    SessionFileError,
    quarantine,
    read_json_file,
    session_lock,
    write_session_file,
)
from .model import ImportReport, JSONDict, SessionData, SessionMessage, copy_json

log = logging.getLogger("session_browser.store")

DEFAULT_MIRROR_QUEUE_SIZE = 1000
DEFAULT_MIRROR_MAX_RETRIES = 3
DEFAULT_IMPORT_MAX_SESSIONS = 10_000
DEFAULT_LOCK_TIMEOUT = 5.0  # seconds a write waits for a session's lock


class StoreDir(str):
    """A session dir: a ``str`` (PraisonAI's type) that also answers ``Path`` operations."""

    __slots__ = ()

    def __new__(cls, value: str | os.PathLike[str]) -> StoreDir:
        return super().__new__(cls, os.fspath(value))

    @property
    def path(self) -> Path:
        return Path(str(self))

    def __truediv__(self, other: str | os.PathLike[str]) -> Path:
        return self.path / other

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PurePath):
            return self.path == other
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = str.__hash__

    def __getattr__(self, name: str) -> Any:
        # Any other Path operation (stat, mkdir, glob, rglob, parent, ...) on the same path;
        # names ``str`` has itself (``replace``, ``split``...) keep their ``str`` meaning.
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.path, name)


class _MirrorWriter:
    """Hands persisted records to a mirror on a daemon thread; never blocks a turn."""

    def __init__(self, mirror: Any) -> None:
        self._mirror = mirror
        self._queue: queue.Queue[tuple[str, list[JSONDict]]] = queue.Queue(
            maxsize=DEFAULT_MIRROR_QUEUE_SIZE
        )
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="session-browser-mirror", daemon=True
        )
        self._thread.start()

    def enqueue(self, session_id: str, records: list[JSONDict]) -> None:
        if not records:
            return
        if self._stop.is_set():
            log.warning(
                "session mirror is closed; dropping %d record(s) for %s (local write kept)",
                len(records),
                session_id,
            )
            return
        try:
            self._queue.put_nowait((session_id, records))
        except queue.Full:
            log.warning(
                "session mirror queue full; dropping %d record(s) for %s (local write kept)",
                len(records),
                session_id,
            )

    def _run(self) -> None:
        while not self._stop.is_set() or not self._queue.empty():
            try:
                session_id, records = self._queue.get(timeout=0.25)
            except queue.Empty:
                continue
            try:
                self._deliver(session_id, records)
            finally:
                self._queue.task_done()

    def _deliver(self, session_id: str, records: list[JSONDict]) -> None:
        delay = 0.05
        for attempt in range(1, DEFAULT_MIRROR_MAX_RETRIES + 1):
            try:
                self._mirror.append(session_id, copy_json(records))
                return
            except Exception as exc:  # the mirror is someone else's code
                if attempt >= DEFAULT_MIRROR_MAX_RETRIES:
                    log.error(
                        "session mirror append failed for %s after %d attempts: %s "
                        "(local write kept)",
                        session_id,
                        attempt,
                        exc,
                    )
                    return
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    def flush(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._queue.all_tasks_done:
                if self._queue.unfinished_tasks == 0:
                    return True
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(0.01)

    def close(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._thread.join(timeout=timeout)


def _is_partial(message: SessionMessage | None) -> bool:
    return (
        message is not None
        and message.role == "assistant"
        and bool((message.metadata or {}).get("partial"))
    )


def _recorded(session: SessionData, key: str, *fallbacks: str) -> str | None:
    """A session-level metadata string, else the latest turn that recorded one."""
    for name in (key, *fallbacks):
        value = session.metadata.get(name)
        if isinstance(value, str) and value:
            return value
    for message in reversed(session.messages):
        value = (message.metadata or {}).get(key)
        if isinstance(value, str) and value:
            return value
    return None


class CompatReads:
    """praisonaiagents 1.7.17's store methods built on a store's own session reads
    (``get_session``, ``iter_sessions``) and, for the import, its ``write_session``: shared by
    the JSON store and the index, whatever the index reads."""

    # ------------------------------------------------------------------ seams
    # praisonaiagents' private hook points that its tests and code built on its store call
    # or patch, with its signatures and meaning (see docs/compat.md).

    @staticmethod
    def _session_title(data: dict[str, Any]) -> str:
        """praisonaiagents' title of a stored session dict (:func:`recall.peer_title`)."""
        return recall.peer_title(data)

    def _load_session(self, session_id: str) -> SessionData:
        """The session as a read gives it (:meth:`get_session`)."""
        return self.get_session(session_id)

    # Recall heuristics PraisonAI exposes as class constants (our ``recall`` uses the same).
    BOOKEND_SIZE = 2
    AUTOMATED_RATE_THRESHOLD = 60.0
    AUTOMATED_DEMOTION = 0.25
    # Version of the portable export payload.
    PORTABLE_VERSION = 1

    if TYPE_CHECKING:
        max_messages: int
        session_dir: StoreDir

        def get_session(self, session_id: str) -> SessionData: ...
        def read_raw(self, session_id: str) -> JSONDict | None: ...
        def iter_sessions(self) -> Iterator[tuple[Path, os.stat_result, JSONDict]]: ...
        def write_session(self, session: SessionData, *, overwrite: bool = False) -> bool: ...
        def session_path(self, session_id: str) -> Path: ...

    # ------------------------------------------------------------------ reads

    def get_chat_history(
        self, session_id: str, max_messages: int | None = None
    ) -> list[dict[str, Any]]:
        return self.get_session(session_id).get_chat_history(max_messages)

    def list_sessions(self, limit: int | None = 50) -> list[dict[str, Any]]:
        """PraisonAI's listing dicts, most recently updated first."""
        rows: list[dict[str, Any]] = []
        for _path, _st, data in self.iter_sessions():
            meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
            assert isinstance(meta, dict)
            messages = data.get("messages")
            sid = data["session_id"]
            rows.append(
                {
                    "session_id": sid,
                    "id": sid,
                    "agent_name": data.get("agent_name"),
                    "title": meta.get("title"),
                    "agent_id": data.get("agent_id") or meta.get("agent_id"),
                    "source": data.get("source") or meta.get("source"),
                    "parent_id": data.get("parent_id") or meta.get("parent_id"),
                    "parent_session_id": data.get("parent_session_id")
                    or meta.get("parent_session_id"),
                    "agent_key": data.get("agent_key") or meta.get("agent_key"),
                    "created_at": data.get("created_at"),
                    "updated_at": data.get("updated_at"),
                    "message_count": len(messages) if isinstance(messages, list) else 0,
                    "model": data.get("model") or data.get("llm") or meta.get("model"),
                    "total_tokens": data.get("total_tokens")
                    or data.get("token_count")
                    or meta.get("total_tokens"),
                    "cost": data.get("cost") or meta.get("cost"),
                }
            )
        rows.sort(key=lambda r: str(r.get("updated_at") or ""), reverse=True)
        return rows if limit is None else rows[: max(0, limit)]

    def get_working_history(
        self, session_id: str, max_messages: int | None = None
    ) -> list[dict[str, Any]]:
        """The compacted working history: checkpoint summary + the turns after it."""
        session = self.get_session(session_id)
        return session.get_working_history(max_messages or self.max_messages)

    def get_session_model(self, session_id: str) -> str | None:
        """The model the session recorded (metadata, else the latest turn's)."""
        try:
            return _recorded(self.get_session(session_id), "model", "llm")
        except Exception:
            return None

    def get_session_reasoning_effort(self, session_id: str) -> str | None:
        """The reasoning effort the session recorded (metadata, else the latest turn's)."""
        try:
            return _recorded(self.get_session(session_id), "reasoning_effort")
        except Exception:
            return None

    def get_runtime_state(
        self, session_id: str, runtime_id: str, turn_id: str | None = None
    ) -> dict[str, Any]:
        state = self.get_session(session_id).runtime_state.get(runtime_id, {})
        if not isinstance(state, dict):
            return {}
        copied: JSONDict = copy_json(state if turn_id is None else state.get(turn_id, {}))
        return copied

    def _scan(self, key: str, value: str) -> Iterator[JSONDict]:
        for _path, _st, data in self.iter_sessions():
            if data.get(key) == value:
                yield data

    def list_sessions_by_agent(self, agent_name: str, limit: int = 50) -> list[str]:
        """Ids of the sessions whose ``agent_name`` is ``agent_name`` (directory order)."""
        return [d["session_id"] for d in self._scan("agent_name", agent_name)][:limit]

    def get_sessions_by_agent(self, agent_name: str, limit: int = 10) -> list[SessionData]:
        return [self.get_session(sid) for sid in self.list_sessions_by_agent(agent_name, limit)]

    def get_agent_chat_history(
        self, agent_name: str, max_messages: int | None = None, max_sessions: int = 5
    ) -> list[dict[str, Any]]:
        """Every turn of an agent's sessions, each tagged with its session and agent."""
        out: list[dict[str, Any]] = []
        for session in self.get_sessions_by_agent(agent_name, max_sessions):
            for msg in session.get_chat_history(max_messages):
                out.append({**msg, "session_id": session.session_id, "agent_name": agent_name})
        return out

    def get_by_gateway_session(self, gateway_session_id: str) -> SessionData | None:
        for data in self._scan("gateway_session_id", gateway_session_id):
            return SessionData.from_dict(data)
        return None

    def list_sessions_by_gateway_agent(self, agent_id: str, limit: int = 50) -> list[str]:
        return [d["session_id"] for d in self._scan("agent_id", agent_id)][:limit]

    # ------------------------------------------------------------------ portable

    def export_session(self, session_id: str, *, include_lineage: bool = True) -> JSONDict:
        """The portable payload of a session; an unknown or unreadable id gives no sessions."""
        try:
            return _payload.export_session(self, session_id, include_lineage=include_lineage)
        except _payload.SessionNotFound:
            pass
        except _payload.PortableError as exc:
            log.warning("not exporting session %r: %s", session_id, exc)
        return {"version": self.PORTABLE_VERSION, "sessions": []}

    def export_all(self) -> JSONDict:
        """Every session; ``OSError`` when a file is unreadable (the backup would be incomplete)."""
        try:
            return _payload.export_all(self)
        except _payload.PortableError as exc:
            raise OSError(f"Incomplete session export: {exc}") from exc

    def import_sessions(
        self,
        payload: Any,
        *,
        max_sessions: int = DEFAULT_IMPORT_MAX_SESSIONS,
        reset_live_fields: bool = True,
        overwrite: bool = False,
    ) -> ImportReport:
        """Import a portable payload; malformed entries are skipped and reported.

        A payload that is not an object or has no ``sessions`` list imports nothing; one
        from a newer format version is refused with a reason (PraisonAI's rules).
        """
        report = ImportReport(version=self.PORTABLE_VERSION)
        if not isinstance(payload, dict) or not isinstance(payload.get("sessions"), list):
            return report
        version = payload.get("version")
        if isinstance(version, int) and version > self.PORTABLE_VERSION:
            report.skipped.append(
                {
                    "session_id": "",
                    "reason": f"unsupported payload version {version} "
                    f"(supported <= {self.PORTABLE_VERSION})",
                }
            )
            return report
        # PraisonAI's own reasons for entries it cannot even name; the rest go through our
        # one import path (which writes each session under its lock, verbatim).
        entries: list[Any] = []
        for index, raw in enumerate(payload["sessions"]):
            if not isinstance(raw, dict):
                reason = f"malformed record at index {index}"
            elif not isinstance(raw.get("session_id"), str) or not raw["session_id"].strip():
                reason = f"missing session_id at index {index}"
            else:
                entries.append(raw)
                continue
            report.skipped.append({"session_id": "", "reason": reason})
        try:
            done = _payload.import_payload(
                self,
                {"version": self.PORTABLE_VERSION, "sessions": entries},
                overwrite=overwrite,
                # PraisonAI's semantics: a library call, not a user's restore (no journal,
                # no second opinion on redacted copies).
                allow_redacted=True,
                reset_live_fields=reset_live_fields,
                max_sessions=max_sessions,
                skip_invalid=True,
            )
        except _payload.PortableError as exc:
            report.skipped.append({"session_id": "", "reason": str(exc)})
            return report
        done.skipped[:0] = report.skipped
        return done


class PraisonAICompat(CompatReads):
    """praisonaiagents 1.7.17's store methods that browsing itself does not need."""

    _mirror_writer: _MirrorWriter | None = None
    read_side_effects: bool = False
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT

    if TYPE_CHECKING:
        session_dir: StoreDir
        spill_dir: Path
        max_messages: int
        _misplaced_cache: Any

        def session_path(self, session_id: str) -> Path: ...
        def session_exists(self, session_id: str) -> bool: ...
        def get_session(self, session_id: str) -> SessionData: ...
        def _own_spills(
            self, session_id: str, seen: set[tuple[str, str, str]]
        ) -> tuple[list[Path], list[SessionMessage]]: ...
        def iter_sessions(self) -> Iterator[tuple[Path, os.stat_result, JSONDict]]: ...
        def _modify(
            self,
            session_id: str,
            mutator: Callable[[SessionData], None],
            *,
            pending: Sequence[SessionMessage] = (),
            apply_retention: bool = True,
        ) -> bool: ...

    def _init_compat(self, *, mirror: Any = None, read_side_effects: bool = False) -> None:
        self.read_side_effects = read_side_effects
        self._mirror_writer = _MirrorWriter(mirror) if mirror is not None else None

    # ------------------------------------------------------------------ reads

    def _before_read(self, session_id: str) -> None:
        """With ``read_side_effects``: PraisonAI's read-time fold of spills and quarantine."""
        if not self.read_side_effects or not isinstance(session_id, str) or not session_id:
            return
        path = self.session_path(session_id)
        try:
            read_json_file(path)
        except SessionFileError:
            try:
                with session_lock(path, self.lock_timeout):
                    try:
                        read_json_file(path)
                    except SessionFileError as exc:
                        target = quarantine(path)
                        log.error(
                            "session file %s is corrupt (%s); moved aside to %s",
                            path,
                            exc.reason,
                            target,
                        )
                        self._fire_corruption_hook(session_id, exc.reason, str(target))
            except OSError as exc:
                log.warning("could not move corrupt session file %s aside: %s", path, exc)
        except OSError:
            pass
        if self._spilled_turns(session_id, set()):
            self._modify(session_id, lambda _s: None)

    def _spilled_turns(
        self, session_id: str, seen: set[tuple[str, str, str]]
    ) -> list[SessionMessage]:
        """This store's spilled turns of ``session_id`` not in ``seen`` (nothing is written)."""
        return self._own_spills(session_id, seen)[1]

    def _with_spills(self, session: SessionData) -> SessionData:
        """``session`` with its not yet folded spilled turns merged in (in memory only)."""
        try:
            seen = {m.dedup_key() for m in session.messages}
            seen.update(m.dedup_key() for m in session.archived_messages)
            turns = self._spilled_turns(session.session_id, seen)
        except (OSError, ValueError, TypeError, RecursionError):
            return session
        if turns:
            turns.sort(key=lambda m: m.timestamp if m.timestamp is not None else 0.0)
            session.messages.extend(turns)
        return session

    def invalidate_cache(self, session_id: str | None = None) -> None:
        """Forget cached lookups. Reads always go to disk, so only the renamed-file map."""
        self._misplaced_cache = None

    # ------------------------------------------------------------------ writes

    def append_compaction_checkpoint(
        self,
        session_id: str,
        summary: str,
        *,
        role: str = "system",
        tokens_before: int = 0,
        tokens_after: int = 0,
        metadata: dict[str, Any] | None = None,
    ) -> bool:
        """Anchor a compaction summary at the current end of the transcript.

        A blank summary is refused (False) so resume never replays an empty message.
        """
        from .model import CompactionCheckpoint

        summary = summary or ""
        if not summary.strip():
            return False

        def apply(session: SessionData) -> None:
            session.raw.pop("last_compaction", None)
            session.last_compaction = CompactionCheckpoint(
                summary=summary,
                message_index=len(session.messages),
                role=role,
                tokens_before=tokens_before,
                tokens_after=tokens_after,
                metadata=dict(metadata or {}),
            )

        return self._modify(session_id, apply)

    def merge_session_metadata_map(
        self,
        session_id: str,
        key: str,
        updates: dict[str, Any],
        *,
        defaults: dict[str, Any] | None = None,
    ) -> bool:
        """``metadata[key]`` = defaults, then what is stored, then ``updates`` (under the lock)."""

        def apply(session: SessionData) -> None:
            merged = dict(defaults or {})
            current = session.metadata.get(key)
            if isinstance(current, dict):
                merged.update(current)
            merged.update(updates)
            session.metadata[key] = merged

        return self._modify(session_id, apply)

    def set_runtime_state(
        self,
        session_id: str,
        runtime_id: str,
        turn_id: str,
        state: dict[str, Any],
        mirror_enabled: bool = True,
    ) -> bool:
        """Store ``state`` under ``runtime_state[runtime_id][turn_id]`` (a no-op when disabled)."""
        if not mirror_enabled:
            return True
        snapshot = copy_json(state)

        def apply(session: SessionData) -> None:
            runtime = session.runtime_state.get(runtime_id)
            if not isinstance(runtime, dict):
                runtime = session.runtime_state[runtime_id] = {}
            runtime[turn_id] = snapshot

        return self._modify(session_id, apply)

    def clear_runtime_state(self, session_id: str, runtime_id: str | None = None) -> bool:
        def apply(session: SessionData) -> None:
            session.raw.pop("runtime_state", None)
            if runtime_id is None:
                session.runtime_state.clear()
            else:
                session.runtime_state.pop(runtime_id, None)

        return self._modify(session_id, apply)

    def _has_trailing_partial(self, session_id: str) -> bool | None:
        try:
            session = self.get_session(session_id)
        except Exception:
            return None
        return _is_partial(session.messages[-1] if session.messages else None)

    def upsert_partial_assistant_message(
        self, session_id: str, content: str, *, finalize: bool = False
    ) -> bool:
        """Create or overwrite the one trailing ``metadata.partial`` assistant turn.

        ``finalize`` drops the flag (a finished turn); with no partial turn and some
        ``content`` it appends a normal assistant turn; finalizing an empty partial
        removes it.
        """
        if finalize and not content and self._has_trailing_partial(session_id) is False:
            return True
        finalized: list[SessionMessage] = []

        def apply(session: SessionData) -> None:
            trailing = session.messages[-1] if session.messages else None
            if trailing is not None and _is_partial(trailing):
                if finalize and not content:
                    session.messages.pop()
                    return
                trailing.content = content
                trailing.timestamp = time.time()
                if finalize:
                    trailing.metadata.pop("partial", None)
                    finalized.append(trailing)
                return
            if finalize and not content:
                return
            message = SessionMessage(
                role="assistant",
                content=content,
                timestamp=time.time(),
                metadata={} if finalize else {"partial": True},
            )
            session.messages.append(message)
            if finalize:
                finalized.append(message)

        if not self._modify(session_id, apply):
            return False
        self._mirror_append(session_id, finalized)
        return True

    def discard_partial_assistant_message(self, session_id: str) -> bool:
        """Drop a trailing partial assistant turn, if there is one."""
        if self._has_trailing_partial(session_id) is False:
            return True

        def apply(session: SessionData) -> None:
            if session.messages and _is_partial(session.messages[-1]):
                session.messages.pop()

        return self._modify(session_id, apply)

    # ------------------------------------------------------------------ mirror

    def _mirror_append(self, session_id: str, messages: Sequence[SessionMessage]) -> None:
        """Queue persisted turns for the mirror, each with a stable ``id`` (last writer wins)."""
        writer = self._mirror_writer
        if writer is None or not messages:
            return
        records: list[JSONDict] = []
        for message in messages:
            try:
                record = json.loads(json.dumps(message.to_dict(), ensure_ascii=False))
            except (TypeError, ValueError, RecursionError) as exc:
                log.warning("session mirror: dropping a record of %s: %s", session_id, exc)
                continue
            record.setdefault("id", f"{session_id}:{record.get('timestamp', time.time())}")
            record["session_id"] = session_id
            records.append(record)
        writer.enqueue(session_id, records)

    def flush_mirror(self, timeout: float | None = None) -> bool:
        """Wait until queued mirror records are delivered (True at once without a mirror)."""
        writer = self._mirror_writer
        return True if writer is None else writer.flush(timeout)

    def close_mirror(self) -> None:
        """Stop the mirror writer after delivering what is queued."""
        if self._mirror_writer is not None:
            self._mirror_writer.close()

    # ------------------------------------------------------------------ seams (writes)

    _last_write_error: str | None = None

    def _atomic_write_json(self, filepath: str, data: Any) -> bool:
        """Write ``data`` to ``filepath`` atomically (temp file, fsync, rename); False when
        it failed. Every session write goes through it, so a patched one that returns
        False fails the write as praisonaiagents' does: the turn spills, the
        ``SESSION_PERSIST_FAILED`` hook fires, the next write re-ingests it."""
        try:
            write_session_file(Path(filepath), data)
        except (OSError, TypeError, ValueError, RecursionError) as exc:
            self._last_write_error = str(exc)
            return False
        return True

    def _save_session(self, session: Any) -> bool:
        """Store ``session`` (ours or praisonaiagents' ``SessionData``) as it is, through
        the locked write (retention applied, ``updated_at`` set); False when it failed."""
        stored = SessionData.from_dict(session.to_dict())

        def replace(target: SessionData) -> None:
            for f in dataclasses.fields(SessionData):
                setattr(target, f.name, getattr(stored, f.name))

        return self._modify(stored.session_id, replace)

    def _fire_corruption_hook(
        self, session_id: str, error: str, quarantine_path: str | None
    ) -> None:
        """``SESSION_PERSIST_FAILED`` for a corrupt session file met on load, as
        praisonaiagents fires it (empty role and content, the quarantine as the spill)."""
        message = SessionMessage(role="", content="")
        self._on_persist_failed(
            session_id, message, f"corrupt session file: {error}", quarantine_path
        )

    # ------------------------------------------------------------------ failures

    def _on_persist_failed(
        self, session_id: str, message: SessionMessage, error: str, spill_path: str | None
    ) -> None:
        """Fire praisonaiagents' ``SESSION_PERSIST_FAILED`` hook (when it is installed)."""
        try:
            from praisonaiagents.hooks.events import SessionPersistFailedInput
            from praisonaiagents.hooks.registry import get_default_registry
            from praisonaiagents.hooks.runner import HookRunner
            from praisonaiagents.hooks.types import HookEvent
        except Exception:
            return
        try:
            registry = get_default_registry()
            if not registry.has_hooks(HookEvent.SESSION_PERSIST_FAILED):
                return
            event = SessionPersistFailedInput(
                session_id=session_id,
                cwd=os.getcwd(),
                event_name=HookEvent.SESSION_PERSIST_FAILED.value,
                timestamp=datetime.now(UTC).isoformat(),
                role=message.role,
                content=message.content if isinstance(message.content, str) else message.text,
                error=error,
                spilled=spill_path is not None,
                spill_path=spill_path,
            )
            HookRunner(registry).execute_sync(HookEvent.SESSION_PERSIST_FAILED, event)
        except Exception:
            log.debug("SESSION_PERSIST_FAILED hook failed", exc_info=True)
