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

import functools
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import (
    Any,
    Concatenate,
    Generic,
    ParamSpec,
    Protocol,
    TypeVar,
    cast,
    overload,
)

from .. import paths
from ..compat import CompatReads
from ..files import FileIdentity
from ..model import JSONDict, SessionData
from ..protocols import RecallStore
from ..sources.base import SessionSource
from ..sources.readonly import WRITE_ACTIONS, refuse
from ..store import DEFAULT_MAX_MESSAGES, DefaultSessionStore


class SessionReader(RecallStore, Protocol):
    """What an index reads sessions through (the viewer, export, and the scan it falls back
    to when the index cannot be used): the recall API of a scanning store, plus the JSON
    store's raw reads."""

    def read_raw(self, session_id: str) -> JSONDict | None: ...

    def iter_sessions(self) -> Iterator[tuple[Path, os.stat_result, JSONDict]]: ...

    def file_identity(self, session_id: str) -> FileIdentity | None: ...


P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


def _written(
    method: Callable[Concatenate[DefaultSessionStore, P], R], action: str | None = None
) -> Callable[Concatenate[IndexStoreAPI, P], R]:
    """A write of the store API made by the index's writer (``action``: what a read-only
    store says it cannot do, by default as :data:`WRITE_ACTIONS` says). Keeps the writer's
    name, signature and docstring."""
    action = action or WRITE_ACTIONS[method.__name__]

    def write(self: IndexStoreAPI, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return method(self._writes(action), *args, **kwargs)

    return functools.wraps(method)(write)


class _WriterSetting(Generic[T]):
    """A setting of the index's writer, read and set through the index. Without a writer
    there is none (``AttributeError``), except ``max_messages``: PraisonAI's default, which
    the working-history read uses."""

    name: str

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, store: None, owner: type | None = None) -> _WriterSetting[T]: ...

    @overload
    def __get__(self, store: IndexStoreAPI, owner: type | None = None) -> T: ...

    def __get__(
        self, store: IndexStoreAPI | None, owner: type | None = None
    ) -> T | _WriterSetting[T]:
        if store is None:  # read on the class: the setting itself, as a property would be
            return self
        if store.writer is not None:
            value: T = getattr(store.writer, self.name)
            return value
        if self.name == "max_messages":
            return cast(T, DEFAULT_MAX_MESSAGES)
        raise AttributeError(f"{store.label} is read-only: it has no {self.name}")

    def __set__(self, store: IndexStoreAPI, value: T) -> None:
        setattr(store._writes("change its settings"), self.name, value)


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

    def owned_dirs(self) -> list[Path]:
        if self.writer is not None:
            return self.writer.owned_dirs()
        return self.reader.owned_dirs()

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

    def projection(self, session_id: str, *, include_hidden: bool = False) -> list[JSONDict]:
        """The whole archived+active projection of a session, in the public message shape
        (as its file reads; a source that keeps hidden parts apart gives them here)."""
        return self.reader.projection(session_id, include_hidden=include_hidden)

    def to_json(self) -> JSONDict:
        return {"source": self.source.kind, "root": str(self.source.root), "label": self.label}

    def file_identity(self, session_id: str) -> FileIdentity | None:
        return self.reader.file_identity(session_id)

    def invalidate_cache(self, session_id: str | None = None) -> None:
        if self.writer is not None:
            self.writer.invalidate_cache(session_id)

    # ------------------------------------------------------------------ the writer's settings

    max_messages = _WriterSetting[int]()  # PraisonAI's default without a writer
    active_window = _WriterSetting[int]()
    retention = _WriterSetting[str]()
    lock_timeout = _WriterSetting[float]()
    spill_dir = _WriterSetting[Path]()

    @property
    def read_side_effects(self) -> bool:
        return self.writer is not None and self.writer.read_side_effects

    # ------------------------------------------------------------------ writes

    add_message = _written(DefaultSessionStore.add_message)
    add_user_message = _written(DefaultSessionStore.add_user_message)
    add_assistant_message = _written(DefaultSessionStore.add_assistant_message)
    set_chat_history = _written(DefaultSessionStore.set_chat_history)
    update_session_metadata = _written(DefaultSessionStore.update_session_metadata)
    set_agent_info = _written(DefaultSessionStore.set_agent_info)
    set_gateway_info = _written(DefaultSessionStore.set_gateway_info)
    rename_session = _written(DefaultSessionStore.rename_session)
    clear_session = _written(DefaultSessionStore.clear_session)
    delete_session = _written(DefaultSessionStore.delete_session)
    write_session = _written(DefaultSessionStore.write_session)
    enforce_window = _written(DefaultSessionStore.enforce_window, "apply a retention policy")
    append_compaction_checkpoint = _written(
        DefaultSessionStore.append_compaction_checkpoint, "add a message"
    )
    merge_session_metadata_map = _written(
        DefaultSessionStore.merge_session_metadata_map, "change session metadata"
    )
    set_runtime_state = _written(DefaultSessionStore.set_runtime_state, "change session metadata")
    clear_runtime_state = _written(
        DefaultSessionStore.clear_runtime_state, "change session metadata"
    )
    upsert_partial_assistant_message = _written(
        DefaultSessionStore.upsert_partial_assistant_message, "add a message"
    )
    discard_partial_assistant_message = _written(
        DefaultSessionStore.discard_partial_assistant_message, "change a message"
    )

    _save_session = _written(DefaultSessionStore._save_session, "add a message")

    def flush_mirror(self, timeout: float | None = None) -> bool:
        """Wait until queued mirror records are delivered (True at once without a mirror)."""
        return True if self.writer is None else self.writer.flush_mirror(timeout)

    def close_mirror(self) -> None:
        """Stop the mirror writer after delivering what is queued."""
        if self.writer is not None:
            self.writer.close_mirror()
