"""The portable format constants, the errors of export and import, and the redaction marker
(those one store's payload needs are :mod:`..payload`'s, named here too)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..model import (
    JSONDict,
)
from ..payload import (
    LIVE_FIELDS,
    PORTABLE_VERSION,
    REASON_DUPLICATE,
    REASON_EXISTS,
    REASON_LIMIT,
    REDACTED_KEY,
    PortableError,
    RedactedReplaceRefused,
    SessionNotFound,
    UnreadableSession,
    is_marked_redacted,
)
from ..redact import Redactor

DEFAULT_MAX_IMPORT_BYTES = 1 << 30  # 1 GiB: far above a real store's export
FORMATS = ("json", "md", "html")
IMPORT_ACTION = "import"

__all__ = [
    "DEFAULT_MAX_IMPORT_BYTES",
    "FORMATS",
    "IMPORT_ACTION",
    "LIVE_FIELDS",
    "PORTABLE_VERSION",
    "REASON_DUPLICATE",
    "REASON_EXISTS",
    "REASON_LIMIT",
    "REDACTED_KEY",
    "ExportSource",
    "PortableError",
    "RedactedReplaceRefused",
    "SessionNotFound",
    "UnexportableSession",
    "UnreadableSession",
    "is_marked_redacted",
    "redact_payload",
]


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
