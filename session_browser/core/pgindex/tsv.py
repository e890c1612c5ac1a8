"""Words as PostgreSQL full-text search holds them: the same folded tokens as the SQLite index
(:func:`~session_browser.core.query.tokenize`: lowercased, accents removed, runs of letters and
digits), written as ``tsvector`` / ``tsquery`` literals. Tokenising here rather than with a
server text-search configuration makes both engines see exactly the same words whatever the
server's locale (a ``simple`` configuration would split ``café`` in a C-locale database)."""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Iterable, Sequence

from ..query import Term, tokenize

MAX_POSITION = 16383  # PostgreSQL's largest lexeme position
MAX_POSITIONS = 256  # ... and how many positions it keeps per lexeme
MAX_LEXEME_BYTES = 2000  # a longer token is left out (PostgreSQL's limit is 2047 bytes)
MAX_VECTOR_TOKENS = 150_000  # tokens of one message put in its vector (far below 1 MB)


def tsvector_literal(text: str) -> tuple[str, list[str]]:
    """The ``tsvector`` literal of ``text`` (positions 1.., as PostgreSQL numbers them) and
    its distinct tokens. PostgreSQL itself clamps positions to 16383 and keeps 256 of them
    per word; a token too long to be a lexeme is left out."""
    positions: dict[str, list[int]] = {}
    for n, tok in enumerate(tokenize(text)[:MAX_VECTOR_TOKENS], 1):
        have = positions.get(tok)
        if have is None:
            positions[tok] = [n]
        elif len(have) < MAX_POSITIONS:
            have.append(n)
    parts = [
        f"{tok}:{','.join(map(str, pos))}" if len(pos) > 1 else f"{tok}:{pos[0]}"
        for tok, pos in positions.items()
        if len(tok) * 4 <= MAX_LEXEME_BYTES or len(tok.encode()) <= MAX_LEXEME_BYTES
    ]
    return " ".join(parts), list(positions)


def message_vector(text: str) -> tuple[str, list[str]]:
    """(its ``tsvector`` literal, its tokens). Each token is written with its position, in
    order, repeated words and all: PostgreSQL's input merges a word's positions (clamping them
    to 16383 and keeping 256, as it does), so this costs Python about one join, and the server
    parses it in a third of the time ``to_tsvector`` takes to make the same vector from the
    words. A token too long to be a lexeme (over 511 characters) takes
    :func:`tsvector_literal`."""
    toks = _tokens(text)[:MAX_VECTOR_TOKENS]
    if not toks:
        return "", toks
    if max(map(len, toks)) * 4 > MAX_LEXEME_BYTES:
        return tsvector_literal(text)[0], toks
    suffixes: Iterable[str] = _POSITIONS
    if len(toks) > MAX_POSITION:  # the server clamps the later ones to the last position
        suffixes = itertools.chain(_POSITIONS, itertools.repeat(_POSITIONS[-1]))
    return " ".join(map(operator.add, toks, suffixes)), toks


_POSITIONS = [f":{n}" for n in range(1, MAX_POSITION + 1)]  # ":1" ... ":16383"
_ASCII_TOKEN = re.compile("[a-z0-9]+")


def _tokens(text: str) -> list[str]:
    """:func:`~session_browser.core.query.tokenize`, a third faster on ASCII text (nearly
    every message): there its letters and digits are ``[a-z0-9]`` once lowercased."""
    if text.isascii():
        return _ASCII_TOKEN.findall(text.lower())
    return tokenize(text)


def term_query(term: Term) -> str:
    """One term as a ``tsquery``: a word, a phrase (``<->``), a prefix (``:*`` on its last
    word). Tokens are letters and digits only, so they need no quoting."""
    parts = list(term.tokens)
    if term.prefix and parts:
        parts[-1] += ":*"
    return " <-> ".join(parts) if len(parts) > 1 else (parts[0] if parts else "")


def any_query(terms: Sequence[Term], excluded: Sequence[Term] = ()) -> str:
    """Messages holding any of ``terms`` (and none of ``excluded``)."""
    return _with_excluded(" | ".join(f"({term_query(t)})" for t in terms if t.tokens), excluded)


def all_query(terms: Sequence[Term], excluded: Sequence[Term] = ()) -> str:
    """Messages holding every one of ``terms`` (and none of ``excluded``)."""
    return _with_excluded(" & ".join(f"({term_query(t)})" for t in terms if t.tokens), excluded)


def _with_excluded(body: str, excluded: Sequence[Term]) -> str:
    if not body:
        return ""
    nots = [f"!({term_query(t)})" for t in excluded if t.tokens]
    return " & ".join([f"({body})", *nots]) if nots else body
