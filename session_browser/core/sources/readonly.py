"""Refusing writes: other agents' stores are read, never modified.

:class:`ReadOnlyWrites` gives a store every write method of the store API, each raising
:class:`ReadOnlyStore` before it touches anything, so an import, a restore or a rename aimed at
a Pi store fails with one clear message and leaves no file, lock or spill behind.
"""

from __future__ import annotations

from typing import Any, NoReturn

#: The write methods of the store API (``DefaultSessionStore``) a read-only store refuses.
WRITE_METHODS = (
    "add_message",
    "add_user_message",
    "add_assistant_message",
    "set_chat_history",
    "update_session_metadata",
    "set_agent_info",
    "set_gateway_info",
    "rename_session",
    "clear_session",
    "delete_session",
    "write_session",
)


class ReadOnlyStore(PermissionError):
    """A write was asked of a store that is only ever read (e.g. a Pi store)."""


def refuse(label: str, action: str) -> NoReturn:
    """Raise the :class:`ReadOnlyStore` of a write (``action``) asked of store ``label``."""
    raise ReadOnlyStore(
        f"{label} is read-only: cannot {action} (its sessions belong to another tool "
        "and are never modified)"
    )


class ReadOnlyWrites:
    """Mixin: every write of the store API raises :class:`ReadOnlyStore`."""

    def _refuse(self, action: str) -> NoReturn:
        refuse(getattr(self, "label", type(self).__name__), action)

    def add_message(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse("add a message")

    def add_user_message(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse("add a message")

    def add_assistant_message(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse("add a message")

    def set_chat_history(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse("replace a chat history")

    def update_session_metadata(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse("change session metadata")

    def set_agent_info(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse("change session metadata")

    def set_gateway_info(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse("change session metadata")

    def rename_session(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse("rename a session")

    def clear_session(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse("clear a session")

    def delete_session(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse("delete a session")

    def write_session(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse("write a session")
