"""What ``in:tools`` searches: the hidden parts of a message (tool calls and their results,
reasoning, bookkeeping records) as searchable text, the same for the index and every scan.

Hidden parts are many times the prose of a coding agent's transcript (tool results are whole
files and command outputs), so each part is searched up to :data:`HIDDEN_ITEM_CHARS`
characters: the first screenful of a tool result, where its point usually is, without
making the index many times larger. Images are left out (nothing to read).
"""

from __future__ import annotations

from .model import JSONDict, hidden_parts
from .query import ParsedQuery, fold

#: Characters of one hidden part that are searched (the rest of a long tool result is not).
HIDDEN_ITEM_CHARS = 2000

_CALL = "tool call: "


def hidden_texts(message: JSONDict) -> list[str]:
    """The searchable text of each hidden part of ``message`` (a tool call as its tool's
    name and arguments), each cut at :data:`HIDDEN_ITEM_CHARS` characters."""
    out: list[str] = []
    for label, text in hidden_parts(message):
        if label == "image":
            continue
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
