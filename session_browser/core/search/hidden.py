"""The hidden parts of a session (tool calls and results, reasoning, bookkeeping) as rows an
engine keeps beside the prose for ``in:tools``, and the text a hit's snippet is cut from."""

from __future__ import annotations

from ..hidden import hidden_texts
from ..model import JSONDict, finite_float
from ..query import ParsedQuery, fold
from .rows import MessageRow

PER_SESSION = 8  # hidden candidates taken at most from one session
CANDIDATES = 400  # hidden candidates taken at most


def hidden_rows(data: JSONDict, folded: bool) -> list[MessageRow]:
    """One row per hidden part of the session ``data``, at the projection index of its turn
    (the indices :func:`~.rows.extract` gives the messages)."""
    active = data.get("messages")
    archived = data.get("archived_messages")
    old = [m for m in archived if isinstance(m, dict)] if isinstance(archived, list) else []
    new = [m for m in active if isinstance(m, dict)] if isinstance(active, list) else []
    n_old = len(old)
    rows: list[MessageRow] = []
    for idx, msg in enumerate(old + new):
        meta = msg.get("metadata")
        if not (isinstance(meta, dict) and meta.get("hidden")) and not msg.get("tool_calls"):
            continue
        texts = hidden_texts(msg)
        if not texts:
            continue
        role = msg.get("role", "")
        role = role if isinstance(role, str) else str(role)
        arch = 1 if idx < n_old or msg.get("archived") else 0
        ts = finite_float(msg.get("timestamp"))
        for text in texts:
            rows.append((idx, role, arch, ts, fold(text) if folded else text))
    return rows


def snippet_source(pq: ParsedQuery, content: str, anchor_text: str) -> str:
    """The text a hit's snippet is cut from: the anchor turn's prose, or with ``in:tools``
    the hidden part that matched when the prose holds none of the query's words."""
    if not pq.tools or not anchor_text:
        return content
    folded = fold(content)
    if any(t.count_in(folded, 1) for t in pq.terms):
        return content
    return anchor_text
