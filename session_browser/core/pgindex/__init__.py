"""The team index: many machines push their sessions into one PostgreSQL database, everyone
searches it (``session-browser push --to URL``, ``session-browser --index URL ...``).

Modules: :mod:`.conn` URLs (never shown with their password) and connection errors;
:mod:`.schema` the tables and their version; :mod:`.tsv` words as ``tsvector``/``tsquery``;
:mod:`.push` sending sessions; :mod:`.store` :class:`PgIndexStore`, the search API.
"""

from __future__ import annotations

from .conn import ENV_URL, PgIndexError, index_url, is_index_url, mask_url
from .push import Pusher, PushReport, push_stores
from .schema import SCHEMA_VERSION
from .store import PgIndexStore

__all__ = [
    "ENV_URL",
    "SCHEMA_VERSION",
    "PgIndexError",
    "PgIndexStore",
    "PushReport",
    "Pusher",
    "index_url",
    "is_index_url",
    "mask_url",
    "push_stores",
]
