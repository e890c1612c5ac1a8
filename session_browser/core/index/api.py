"""The session-store API of an index, by composition: reads go to its reader, writes to its
writer.

An index is not a session store. It holds a *reader* (what loads sessions from the files it
indexes: the JSON store for PraisonAI's files, a :class:`~..sources.scan.SourceStore` for a
read-only source, Pi's reader for Pi) and, for PraisonAI's writable files only, a *writer*:
the :class:`~..store.DefaultSessionStore` over the same dir. Every write of the store API is
made by the writer (locked, atomic, with its retention and spills), which tells the index
after each one (its ``observer``) so the written session is indexed again at once. A store
without a writer refuses every write with :class:`~..sources.readonly.ReadOnlyStore`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn, Protocol

from .. import paths, recall
from ..compat import CompatReads
from ..files import FileIdentity
from ..model import JSONDict, SessionData, SessionSummary
from ..sources.base import SessionSource
from ..sources.readonly import refuse
from ..store import DEFAULT_MAX_MESSAGES, DefaultSessionStore


class SessionReader(Protocol):
    """What an index reads sessions through (the viewer, export, and the scan it falls back
    to when the index cannot be used)."""

    @property
    def label(self) -> str: ...

    def read_raw(self, session_id: str) -> JSONDict | None: ...

    def get_session(self, session_id: str) -> SessionData: ...

    def session_exists(self, session_id: str) -> bool: ...

    def iter_sessions(self) -> Iterator[tuple[Path, os.stat_result, JSONDict]]: ...

    def summaries(self) -> list[SessionSummary]: ...

    def recent(self, *, limit: int = 10) -> list[SessionSummary]: ...

    def search_candidates(
        self, query: str, *, window: int = 5, language: bool = False
    ) -> list[recall.Candidate]: ...

    def window(
        self, session_id: str, around_message_id: Any = None, *, window: int = 5
    ) -> list[JSONDict]: ...

    def file_identity(self, session_id: str) -> FileIdentity | None: ...

    def session_path(self, session_id: str) -> Path | None: ...


class IndexStoreAPI(CompatReads):
    """The reads and writes of the store API, passed to the index's reader and writer."""

    reader: SessionReader
    writer: DefaultSessionStore | None  # None: a read-only source, every write refused
    source: SessionSource

    def _writes(self, action: str) -> DefaultSessionStore:
        """The writer, or :class:`ReadOnlyStore` for ``action`` when there is none."""
        if self.writer is None:
            refuse(self.label, action)
        return self.writer

    # ------------------------------------------------------------------ reads

    @property
    def label(self) -> str:
        return self.reader.label

    def session_path(self, session_id: str) -> Path:
        """The file of ``session_id`` (a hostile id cannot leave the session dir)."""
        if self.writer is not None:
            return self.writer.session_path(session_id)
        found = self.reader.session_path(session_id)
        return found if found is not None else self.source.root / paths.safe_id(session_id)

    def read_raw(self, session_id: str) -> JSONDict | None:
        return self.reader.read_raw(session_id)

    def get_session(self, session_id: str) -> SessionData:
        return self.reader.get_session(session_id)

    def session_exists(self, session_id: str) -> bool:
        return self.reader.session_exists(session_id)

    def iter_sessions(self) -> Iterator[tuple[Path, os.stat_result, JSONDict]]:
        return self.reader.iter_sessions()

    def window(
        self, session_id: str, around_message_id: Any = None, *, window: int = 5
    ) -> list[JSONDict]:
        return self.reader.window(session_id, around_message_id, window=window)

    def projection(self, session_id: str) -> list[JSONDict]:
        """The whole archived+active projection of a session, in the public message shape."""
        data = self.read_raw(session_id)
        if data is None:
            raise KeyError(session_id)
        return recall.full_view(recall.project(data))

    def file_identity(self, session_id: str) -> FileIdentity | None:
        return self.reader.file_identity(session_id)

    def invalidate_cache(self, session_id: str | None = None) -> None:
        if self.writer is not None:
            self.writer.invalidate_cache(session_id)

    # ------------------------------------------------------------------ the writer's settings

    def _no_writer(self, name: str) -> NoReturn:
        raise AttributeError(f"{self.label} is read-only: it has no {name}")

    @property
    def max_messages(self) -> int:
        return DEFAULT_MAX_MESSAGES if self.writer is None else self.writer.max_messages

    @max_messages.setter
    def max_messages(self, value: int) -> None:
        self._writes("change its settings").max_messages = value

    @property
    def active_window(self) -> int:
        if self.writer is None:
            self._no_writer("active_window")
        return self.writer.active_window

    @active_window.setter
    def active_window(self, value: int) -> None:
        self._writes("change its settings").active_window = value

    @property
    def retention(self) -> str:
        if self.writer is None:
            self._no_writer("retention")
        return self.writer.retention

    @retention.setter
    def retention(self, value: str) -> None:
        self._writes("change its settings").retention = value

    @property
    def lock_timeout(self) -> float:
        if self.writer is None:
            self._no_writer("lock_timeout")
        return self.writer.lock_timeout

    @lock_timeout.setter
    def lock_timeout(self, value: float) -> None:
        self._writes("change its settings").lock_timeout = value

    @property
    def spill_dir(self) -> Path:
        if self.writer is None:
            self._no_writer("spill_dir")
        return self.writer.spill_dir

    @property
    def read_side_effects(self) -> bool:
        return self.writer is not None and self.writer.read_side_effects

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
        return self._writes("add a message").add_message(
            session_id, role, content, metadata, tool_calls, tool_call_id
        )

    def add_user_message(
        self, session_id: str, content: str, metadata: dict[str, Any] | None = None
    ) -> bool:
        return self._writes("add a message").add_user_message(session_id, content, metadata)

    def add_assistant_message(
        self, session_id: str, content: str, metadata: dict[str, Any] | None = None
    ) -> bool:
        return self._writes("add a message").add_assistant_message(session_id, content, metadata)

    def set_chat_history(self, session_id: str, messages: Sequence[dict[str, Any]]) -> bool:
        return self._writes("replace a chat history").set_chat_history(session_id, messages)

    def update_session_metadata(self, session_id: str, **fields: Any) -> bool:
        writer = self._writes("change session metadata")
        return writer.update_session_metadata(session_id, **fields)

    def set_agent_info(
        self, session_id: str, agent_name: str | None = None, user_id: str | None = None
    ) -> bool:
        writer = self._writes("change session metadata")
        return writer.set_agent_info(session_id, agent_name, user_id)

    def set_gateway_info(
        self,
        session_id: str,
        gateway_session_id: str | None = None,
        agent_id: str | None = None,
    ) -> bool:
        writer = self._writes("change session metadata")
        return writer.set_gateway_info(session_id, gateway_session_id, agent_id)

    def rename_session(self, session_id: str, title: str) -> bool:
        return self._writes("rename a session").rename_session(session_id, title)

    def clear_session(self, session_id: str) -> bool:
        return self._writes("clear a session").clear_session(session_id)

    def delete_session(self, session_id: str) -> bool:
        return self._writes("delete a session").delete_session(session_id)

    def write_session(self, session: SessionData, *, overwrite: bool = False) -> bool:
        return self._writes("write a session").write_session(session, overwrite=overwrite)

    def enforce_window(self, session: SessionData) -> None:
        """Apply the writer's retention policy to the active window."""
        self._writes("apply a retention policy").enforce_window(session)

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
        return self._writes("add a message").append_compaction_checkpoint(
            session_id,
            summary,
            role=role,
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            metadata=metadata,
        )

    def merge_session_metadata_map(
        self,
        session_id: str,
        key: str,
        updates: dict[str, Any],
        *,
        defaults: dict[str, Any] | None = None,
    ) -> bool:
        writer = self._writes("change session metadata")
        return writer.merge_session_metadata_map(session_id, key, updates, defaults=defaults)

    def set_runtime_state(
        self,
        session_id: str,
        runtime_id: str,
        turn_id: str,
        state: dict[str, Any],
        mirror_enabled: bool = True,
    ) -> bool:
        writer = self._writes("change session metadata")
        return writer.set_runtime_state(session_id, runtime_id, turn_id, state, mirror_enabled)

    def clear_runtime_state(self, session_id: str, runtime_id: str | None = None) -> bool:
        writer = self._writes("change session metadata")
        return writer.clear_runtime_state(session_id, runtime_id)

    def upsert_partial_assistant_message(
        self, session_id: str, content: str, *, finalize: bool = False
    ) -> bool:
        writer = self._writes("add a message")
        return writer.upsert_partial_assistant_message(session_id, content, finalize=finalize)

    def discard_partial_assistant_message(self, session_id: str) -> bool:
        writer = self._writes("change a message")
        return writer.discard_partial_assistant_message(session_id)

    def flush_mirror(self, timeout: float | None = None) -> bool:
        """Wait until queued mirror records are delivered (True at once without a mirror)."""
        return True if self.writer is None else self.writer.flush_mirror(timeout)

    def close_mirror(self) -> None:
        """Stop the mirror writer after delivering what is queued."""
        if self.writer is not None:
            self.writer.close_mirror()
