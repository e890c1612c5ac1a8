"""Connecting to the team index: the URL shown without its password, psycopg loaded on demand,
and every connection failure turned into one line (:class:`PgIndexError`)."""

from __future__ import annotations

import os
import re
from typing import Any

ENV_URL = "SESSION_BROWSER_INDEX_URL"
URL_PREFIXES = ("postgresql://", "postgres://")

# ``scheme://user:password@host`` and ``password=...`` in a key/value string or a query. Both
# are linear: a scheme starts only where no scheme character stands before it, and every
# repetition is bounded by a character it cannot hold.
_URL_PASSWORD = re.compile(
    r"(?P<head>(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*://[^:/@?#\s]*:)(?P<pw>[^@/?#\s]*)(?=@)", re.I
)
_KV_PASSWORD = re.compile(r"(?P<head>\bpassword\s*=\s*)(?P<pw>'(?:[^'\\]|\\.)*'|[^\s&]*)", re.I)
# a password as written, up to where the next key/value pair or query parameter starts
_WRITTEN_KV = re.compile(
    r"\bpassword\s*=\s*(?P<pw>'(?:[^'\\]|\\.)*'?|.*?)(?=&|\s+[a-z_]+\s*=|$)", re.I | re.S
)
_PIECES = re.compile(r"[\s@%'\"\\/:?#&=]+")
MIN_FRAGMENT = 4  # a shorter piece of a password cannot be told from other words
MAX_ERROR_CHARS = 400


class PgIndexError(Exception):
    """The team index cannot be used: one line saying why (never a password)."""


def _url_password(url: str) -> tuple[int, int] | None:
    """Where the password of a ``scheme://user:password@host...`` URL is, as written: from
    the first ``:`` after the user to the last ``@`` (an unencoded ``@``, ``/``, space or
    ``%`` in it makes libpq read it otherwise, and quote its pieces in its errors)."""
    scheme = url.find("://")
    if scheme < 0 or not url[:scheme].replace("+", "").replace(".", "").replace("-", "").isalnum():
        return None
    start = scheme + 3
    at = url.rfind("@", start)
    colon = url.find(":", start, at) if at > 0 else -1
    return (colon + 1, at) if colon >= 0 else None


def written_passwords(url: str) -> list[str]:
    """The passwords ``url`` holds as its user wrote them: a URL's (:func:`_url_password`)
    and every ``password=`` value (in the query, or a key/value string, where an unquoted
    value runs to the next ``key=``)."""
    out: list[str] = []
    where = _url_password(url)
    if where is not None and where[1] > where[0]:
        out.append(url[where[0] : where[1]])
    out += [m.group("pw") for m in _WRITTEN_KV.finditer(url) if m.group("pw")]
    return out


def password_fragments(url: str) -> list[str]:
    """Every piece of the passwords of ``url`` an error could quote: each whole, decoded,
    and cut at the characters libpq splits or stops at; the longest first."""
    from urllib.parse import unquote

    found: set[str] = set()
    for pw in written_passwords(url):
        for form in {pw, unquote(pw), pw.strip("'")}:
            found.add(form)
            found.update(_PIECES.split(form))
    found.discard("")
    return sorted(found, key=lambda f: (-len(f), f))


def mask_url(text: str) -> str:
    """``text`` with every password of a connection string in it replaced by ``***``: the
    password of a URL as its user wrote it (see :func:`_url_password`), and any other
    ``scheme://user:password@`` or ``password=...``. Linear in the length of ``text``."""
    where = _url_password(text) if is_index_url(text) else None
    if where is not None:
        text = text[: where[0]] + "***" + text[where[1] :]
    text = _URL_PASSWORD.sub(lambda m: m.group("head") + "***", text)
    text = _WRITTEN_KV.sub(lambda m: m.group(0)[: m.start("pw") - m.start()] + "***", text)
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
    """One line for a database failure: its message only (a server's DETAIL, CONTEXT,
    QUERY, WHERE and LINE, which can quote the rows and the query sent, are left out, so no
    session text reaches a terminal or a log through an error), with every piece of the
    URL's password removed (libpq quotes a malformed one) and any other password masked.
    Where a piece is too short to be told from other words, only the kind of error is
    said, with the URL masked."""
    text = _message(exc)
    fragments = password_fragments(url) if url else []
    if any(len(f) < MIN_FRAGMENT and f in text for f in fragments):
        return f"{type(exc).__name__} ({mask_url(url)})"
    if fragments:
        text = re.sub("|".join(map(re.escape, fragments)), "***", text)
    if url:
        text = text.replace(url, mask_url(url))
    return mask_url(text)[:MAX_ERROR_CHARS]


_DETAIL_LINE = re.compile(r"^\s*(?:DETAIL|CONTEXT|HINT|QUERY|WHERE|LINE \d+|STATEMENT):", re.M)


def _message(exc: BaseException) -> str:
    """The primary message of ``exc`` in one line (a server error's ``message_primary``;
    another's text up to a DETAIL/CONTEXT/... line), cut to a bounded length."""
    diag = getattr(exc, "diag", None)
    primary = getattr(diag, "message_primary", None) if diag is not None else None
    text = primary if isinstance(primary, str) and primary else str(exc)
    text = text[: 4 * MAX_ERROR_CHARS]
    cut = _DETAIL_LINE.search(text)
    if cut is not None:
        text = text[: cut.start()]
    return " ".join(text.split()) or type(exc).__name__
