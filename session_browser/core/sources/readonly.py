"""Refusing writes: other agents' stores are read, never modified.

:class:`ReadOnlyWrites` gives a store every write method of the store API, each raising
:class:`ReadOnlyStore` before it touches anything, so an import, a restore or a rename aimed at
a Pi store fails with one clear message and leaves no file, lock or spill behind.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

#: The write methods of the store API (``DefaultSessionStore``) a read-only store refuses, and
#: what its refusal says it cannot do.
WRITE_ACTIONS: dict[str, str] = {
    "add_message": "add a message",
    "add_user_message": "add a message",
    "add_assistant_message": "add a message",
    "set_chat_history": "replace a chat history",
    "update_session_metadata": "change session metadata",
    "set_agent_info": "change session metadata",
    "set_gateway_info": "change session metadata",
    "rename_session": "rename a session",
    "clear_session": "clear a session",
    "delete_session": "delete a session",
    "write_session": "write a session",
}
WRITE_METHODS = tuple(WRITE_ACTIONS)


class ReadOnlyStore(PermissionError):
    """A write was asked of a store that is only ever read (e.g. a Pi store)."""


def refuse(label: str, action: str) -> NoReturn:
    """Raise the :class:`ReadOnlyStore` of a write (``action``) asked of store ``label``."""
    raise ReadOnlyStore(
        f"{label} is read-only: cannot {action} (its sessions belong to another tool "
        "and are never modified)"
    )


def _refusing(name: str) -> Callable[..., NoReturn]:
    """The write method ``name`` of a read-only store: it refuses, whatever it is given."""
    action = WRITE_ACTIONS[name]

    def write(self: ReadOnlyWrites, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse(action)

    write.__name__ = name
    write.__qualname__ = f"ReadOnlyWrites.{name}"
    return write


class ReadOnlyWrites:
    """Mixin: every write of the store API raises :class:`ReadOnlyStore`."""

    @property
    def label(self) -> str:
        """How errors name the store (each store says which dir it reads)."""
        return type(self).__name__

    def close(self) -> None:
        """Nothing to release: a read-only store opens each file only while reading it."""

    def _refuse(self, action: str) -> NoReturn:
        refuse(self.label, action)

    add_message = _refusing("add_message")
    add_user_message = _refusing("add_user_message")
    add_assistant_message = _refusing("add_assistant_message")
    set_chat_history = _refusing("set_chat_history")
    update_session_metadata = _refusing("update_session_metadata")
    set_agent_info = _refusing("set_agent_info")
    set_gateway_info = _refusing("set_gateway_info")
    rename_session = _refusing("rename_session")
    clear_session = _refusing("clear_session")
    delete_session = _refusing("delete_session")
    write_session = _refusing("write_session")
