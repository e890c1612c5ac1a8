"""What ``in:tools`` searches: the hidden parts of a message (tool calls and their results,
reasoning, bookkeeping records) as searchable text, the same for the index and every scan.

Hidden parts are many times the prose of a coding agent's transcript (tool results are whole
files and command outputs), so each part is searched up to :data:`HIDDEN_ITEM_CHARS`
characters: the first screenful of a tool result, where its point usually is, without
making the index many times larger. Images are left out (nothing to read).
"""

from __future__ import annotations

import re

from .model import JSONDict, hidden_parts
from .query import ParsedQuery, fold

#: Characters of one hidden part that are searched (the rest of a long tool result is not).
HIDDEN_ITEM_CHARS = 2000

_CALL = "tool call: "
# A JSON string escape: ``\uXXXX`` or one of the characters after a backslash.
_ESCAPE = re.compile(r'\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))')
_ESCAPED = {'"': '"', "\\": "\\", "/": "/", "b": " ", "f": " ", "n": "\n", "r": "\r", "t": "\t"}


def _unescaped(match: re.Match[str]) -> str:
    code = match.group(1)
    if code is None:
        return _ESCAPED[match.group(2)]
    value = int(code, 16)
    # (a control character or half of a surrogate pair is no text to search: a space)
    return " " if value < 0x20 or 0xD800 <= value <= 0xDFFF else chr(value)


def as_written(text: str) -> str:
    """A JSON text (a tool call's arguments, an object a tool returned) with its strings'
    escapes undone, so their words are words: in ``{"command": "set -e\\ntrap ..."}``
    the ``trap`` after the escaped newline is ``trap``, not ``ntrap``. Any other text is
    returned as it is."""
    if not text.startswith(("{", "[")) or "\\" not in text:
        return text
    return _ESCAPE.sub(_unescaped, text)


def hidden_texts(message: JSONDict) -> list[str]:
    """The searchable text of each hidden part of ``message`` (a tool call as its tool's
    name and arguments), each cut at :data:`HIDDEN_ITEM_CHARS` characters."""
    out: list[str] = []
    for label, text in hidden_parts(message):
        if label == "image":
            continue
        # (an escape is at most 6 characters for 1: what may end within the searched ones)
        text = as_written(text[: 6 * HIDDEN_ITEM_CHARS])
        if label.startswith(_CALL):
            text = f"{label[len(_CALL) :]} {text}"
        text = text.strip()
        if text:
            out.append(text[:HIDDEN_ITEM_CHARS])
    return out


def with_hidden(text: str, message: JSONDict) -> str:
    """``text`` (a message's prose) followed by the searchable text of its hidden parts,
    one per line: what a scan matches with ``in:tools``."""
    parts = hidden_texts(message)
    if not parts:
        return text
    return "\n".join([text, *parts]) if text else "\n".join(parts)


def hidden_snippet(pq: ParsedQuery, content: str, message: JSONDict) -> str:
    """The text a hit's snippet is cut from with ``in:tools``: the turn's prose when it holds
    a word of the query, else the first hidden part that does."""
    if _holds(pq, content):
        return content
    return next((t for t in hidden_texts(message) if _holds(pq, t)), content)


def _holds(pq: ParsedQuery, text: str) -> bool:
    folded = fold(text)
    return any(t.count_in(folded, 1) for t in pq.terms)
