"""Untrusted text made safe to show: no control or bidi character reaches a terminal raw.

Transcripts, titles, ids and file names can hold ANSI/OSC escape sequences, bells,
carriage returns, right-to-left marks, line separators and lone surrogates. This module
holds the one rule for every output path (CLI text, Markdown/HTML exports, JSON output,
the agent tool):

- :func:`printable` turns each unsafe character into a visible escape (``\\x1b``,
  ``\\u200f``, ``\\ud83d``) so it is shown, never obeyed;
- :func:`json_escape_unsafe` is the same rule for JSON text: each unsafe character becomes
  a JSON ``\\uXXXX`` escape, so the document still parses to exactly the same data (a JSON
  file round-trips byte-for-value) while no raw control reaches a terminal that prints it.
  ``json.dumps(ensure_ascii=False)`` alone escapes only C0 controls.

The unsafe set: C0 controls (tab and newline allowed in multi-line bodies), DEL, C1
controls (so every ESC/CSI sequence is broken), the bidi controls (U+061C, U+200E/U+200F,
U+202A-U+202E, U+2066-U+2069), U+FEFF, the line/paragraph separators U+2028/U+2029 and
lone surrogates (U+D800-U+DFFF; a valid pair is one astral character in a Python string).
Markup is not this module's concern: renderers must treat text as plain text.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from .model import dumps_json

_COMMON = "\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\u2028\u2029\ud800-\udfff"
# Multi-line bodies: C0 controls except tab and newline, plus the common set.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f" + _COMMON + "]")
# One-line text (titles, ids, table cells): every C0 control, plus the common set.
_UNSAFE_ONE_LINE = re.compile("[\x00-\x1f" + _COMMON + "]")
# In JSON text C0 controls are already escaped by json.dumps; the rest of the set is not.
_UNSAFE_JSON = re.compile("[" + _COMMON + "]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def printable(text: str, *, one_line: bool = False) -> str:
    """``text`` with every control/bidi character replaced by a visible escape.

    With ``one_line`` newlines and tabs are escaped too (for titles, ids, table cells).
    """
    pattern = _UNSAFE_ONE_LINE if one_line else _UNSAFE
    return pattern.sub(_escape, text)


def json_escape_unsafe(json_text: str) -> str:
    """JSON text with every unsafe character written as a ``\\uXXXX`` escape.

    Valid only on JSON produced by ``json.dumps`` (these characters can only occur inside
    its strings, where the escape means the same character): the data is unchanged.
    """
    if json_text.isascii() and "\x7f" not in json_text:  # two fast scans: nothing to escape
        return json_text
    return _UNSAFE_JSON.sub(_json_escape, json_text)


def safe_json(value: Any, *, indent: int | None = 2, sort_keys: bool = False) -> str:
    """JSON for output: UTF-8 text kept readable, unsafe characters escaped, any depth of
    nesting the parsers read (:func:`~.model.dumps_json`)."""
    return json_escape_unsafe(dumps_json(value, indent=indent, sort_keys=sort_keys))


def compact_json(value: Any) -> str:
    """:func:`safe_json` on one line without spaces, encoded by orjson (several times faster:
    for answers built per request). What orjson refuses (lone surrogates, integers beyond 64
    bits, nesting deeper than it goes, keys that are not strings) takes the standard
    encoder, with the same escapes."""
    try:
        text = orjson.dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError is one
        text = dumps_json(value, indent=None)
    return json_escape_unsafe(text)


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters with an ellipsis."""
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def clip_marked(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the cut said: ``… [N more characters]``."""
    if len(text) <= width:
        return text
    return text[:width] + f"… [{len(text) - width} more characters]"


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})([^\n`]*)$")


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(language, code) of each fenced code block of Markdown ``text``, in order. A block
    left open runs to the end of the text (as Markdown reads it)."""
    out: list[tuple[str, str]] = []
    fence = ""
    lang = ""
    body: list[str] = []
    for line in text.split("\n"):
        if not fence:
            match = _FENCE.match(line)
            if match:
                fence, lang, body = match.group(1), match.group(2).strip(), []
            continue
        stripped = line.strip()
        if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
            out.append((lang, "\n".join(body)))
            fence = ""
            continue
        body.append(line)
    if fence:
        out.append((lang, "\n".join(body).rstrip("\n")))
    return out


_MD_INLINE = re.compile(
    r"\*\*(?=\S)(.+?)(?<=\S)\*\*"  # **strong**
    r"|__(?=\S)(.+?)(?<=\S)__"  # __strong__
    r"|(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=\S)\*(?![\w*])"  # *em*
    r"|~~(?=\S)(.+?)(?<=\S)~~"  # ~~struck~~
    r"|`+([^`\n]+?)`+"  # `code`
    r"|!?\[([^\]\n]*)\]\([^)\s]*\)"  # [text](url), ![alt](url)
)
_MD_LINE = re.compile(r"^ {0,3}(?:#{1,6}\s+|>\s?)|`{3,}|~{3,}", re.MULTILINE)


def strip_markdown(text: str) -> str:
    """``text`` with the common Markdown markup taken out (``**bold**`` -> ``bold``, heading
    hashes, quote marks, fences, link targets): for one-line previews such as snippets."""
    text = _MD_LINE.sub("", text)
    return _MD_INLINE.sub(lambda m: next(g for g in m.groups() if g is not None), text)


def human_size(size: int) -> str:
    """A byte count for people, in binary units: ``512 B``, ``1.5 KiB``, ``2.0 GiB``."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"  # pragma: no cover


# (short unit, long unit, seconds), largest first
_AGE_UNITS = (
    ("y", "year", 365 * 86400),
    ("mo", "month", 30 * 86400),
    ("d", "day", 86400),
    ("h", "hour", 3600),
    ("m", "minute", 60),
)
#: A time this far ahead still reads "just now": clocks of two machines drift.
FUTURE_SLACK = 60.0


def relative_age(seconds: float, *, words: bool = False) -> str:
    """How long ago something happened ``seconds`` ago, in its largest whole unit: ``3d ago``
    for compact rows, ``3 days ago`` with ``words``; ``just now`` under a minute (or up to
    :data:`FUTURE_SLACK` ahead), ``in the future`` beyond that."""
    if seconds < -FUTURE_SLACK:
        return "in the future"
    for short, long, size in _AGE_UNITS:
        if seconds >= size:
            n = int(seconds // size)
            if words:
                return f"{n} {long}{'s' if n != 1 else ''} ago"
            return f"{n}{short} ago"
    return "just now"


_SIZE_RE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(?:([kmgt])(?:i?b)?|b)?\s*", re.IGNORECASE)
_SIZE_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """A size as people type it: bytes (``1048576``), or a number with a binary unit
    (``500M``, ``1.5GiB``, ``2g``, ``64KB``: K, M, G, T are powers of 1024, as
    :func:`human_size` prints them). :class:`ValueError` for anything else."""
    match = _SIZE_RE.fullmatch(text)
    if match is None:
        raise ValueError(f"not a size: {text!r} (bytes, or a number with K, M, G or T)")
    number, unit = match.groups()
    value = float(number) * (_SIZE_UNITS[unit.lower()] if unit else 1)
    if value >= 1 << 62:
        raise ValueError(f"size too large: {text!r}")
    return int(value)


def shown_id(session_id: str, width: int = 120) -> str:
    """A session id for a message: quoted, controls escaped, a huge one cut short."""
    return repr(clip(session_id, width)) if session_id else "(empty)"
