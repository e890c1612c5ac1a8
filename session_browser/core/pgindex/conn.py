"""Connecting to the team index: the URL shown without its password, psycopg loaded on demand,
and every connection failure turned into one line (:class:`PgIndexError`)."""

from __future__ import annotations

import os
import re
from typing import Any

ENV_URL = "SESSION_BROWSER_INDEX_URL"
URL_PREFIXES = ("postgresql://", "postgres://")

# ``scheme://user:password@host`` and ``password=...`` in a key/value string or a query.
_URL_PASSWORD = re.compile(
    r"(?P<head>[a-z][a-z0-9+.-]*://[^:/@?#\s]*:)(?P<pw>[^@/?#\s]*)(?=@)", re.I
)
_KV_PASSWORD = re.compile(r"(?P<head>\bpassword\s*=\s*)(?P<pw>'(?:[^'\\]|\\.)*'|[^\s&]*)", re.I)


class PgIndexError(Exception):
    """The team index cannot be used: one line saying why (never a password)."""


def mask_url(text: str) -> str:
    """``text`` with every password of a connection string in it replaced by ``***``."""
    text = _URL_PASSWORD.sub(lambda m: m.group("head") + "***", text)
    return _KV_PASSWORD.sub(lambda m: m.group("head") + "***", text)


def is_index_url(value: str | None) -> bool:
    return bool(value) and str(value).lower().startswith(URL_PREFIXES)


def index_url(explicit: str | None = None) -> str | None:
    """The team index URL: ``explicit`` (``--index``), else ``SESSION_BROWSER_INDEX_URL``,
    else ``index_url`` in the config file (``settings.json`` in the config dir)."""
    value = explicit or os.environ.get(ENV_URL) or None
    if not value:
        from ..settings import load_settings

        value = load_settings().index_url
    return value.strip() if value else None


def psycopg_module() -> Any:
    """The psycopg package (a clear error when it is not installed)."""
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - installed with the [pg] extra
        raise PgIndexError(
            "the team index needs psycopg: pip install 'session-browser[pg]'"
        ) from exc
    return psycopg


def error_line(exc: BaseException, url: str) -> str:
    """One line for a database failure, the URL and any password in it masked."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    text = text.replace(url, mask_url(url)) if url else text
    return mask_url(text)[:400]
