"""The portable format constants, the errors of export and import, and the redaction marker."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..model import (
    JSONDict,
)
from ..redact import Redactor

PORTABLE_VERSION = 1
LIVE_FIELDS = ("gateway_session_id", "agent_id")
DEFAULT_MAX_IMPORT_BYTES = 1 << 30  # 1 GiB: far above a real store's export
FORMATS = ("json", "md", "html")

REASON_EXISTS = "already exists (use overwrite)"
REASON_DUPLICATE = "duplicate in payload"
REASON_LIMIT = "over the limit"
REDACTED_KEY = "redacted"
IMPORT_ACTION = "import"


class PortableError(ValueError):
    """A payload, file or request that cannot be honoured; nothing was written."""


class RedactedReplaceRefused(PortableError):
    """An import would replace existing sessions with redacted copies; ``ids`` names them."""

    def __init__(self, message: str, ids: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.ids = list(ids)


class UnreadableSession(PortableError):
    """A whole-store export met a file it cannot read (``skip_unreadable`` skips it)."""


class UnexportableSession(PortableError):
    """A session that cannot be written out (nested too deeply); ``ids`` names them."""

    def __init__(self, message: str, ids: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.ids = list(ids)


class ExportSource(Protocol):
    """A group of stores to export from (a :class:`~session_browser.core.multi.StoreGroup`)."""

    @property
    def stores(self) -> Sequence[Any]: ...

    def store_of(self, session_id: str) -> Any: ...


class SessionNotFound(KeyError):
    """No session with that id in the store."""

    def __str__(self) -> str:
        return f"unknown session id: {self.args[0]!r}"


def redact_payload(payload: JSONDict) -> tuple[JSONDict, dict[str, int]]:
    """A copy of a portable payload with every string value redacted (ids/times kept).

    The copy carries the marker ``"redacted": {"total": N, "by_kind": {...}}`` so an
    import knows it holds placeholders, not the originals' values.
    """
    redactor = Redactor()
    out = redactor.value(payload)
    assert isinstance(out, dict)
    out[REDACTED_KEY] = redactor.as_dict()
    return out, dict(redactor.counts)


def is_marked_redacted(payload: Any) -> bool:
    """Whether a payload says it was redacted (the ``redacted`` marker)."""
    return isinstance(payload, dict) and bool(payload.get(REDACTED_KEY))
