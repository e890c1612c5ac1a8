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
MAX_VECTOR_TOKENS = 150_000  # tokens of one message put in its vector
MAX_VECTOR_CHARS = 1_000_000  # ... read from its first characters only (as one index part)
MAX_VECTOR_BYTES = 1_000_000  # ... and its size (PostgreSQL's limit is 1 MB)
SCAN_CHARS = 1 << 16  # a longer text is read in pieces of about this many characters
NO_LEXEME = "_"  # in a query, stands for a word too long to be indexed: no vector holds it


def vector_tokens(text: str) -> list[str]:
    """The tokens of ``text`` its vector holds: those of its first
    :data:`MAX_VECTOR_CHARS` characters (a word cut there is left out), at most
    :data:`MAX_VECTOR_TOKENS`, their distinct words within :data:`MAX_VECTOR_BYTES`.
    A long text is read in pieces ended before a white space (which no token holds, folded
    or not), and reading stops at the cap: time and memory are bounded whatever the size
    of the text."""
    if len(text) <= SCAN_CHARS:
        return _within_bytes(_tokens(text)[:MAX_VECTOR_TOKENS])
    limit = min(len(text), MAX_VECTOR_CHARS)
    if limit < len(text) and not text[limit].isspace():
        cut = _last_space(text, limit)
        limit = cut if cut > 0 else limit  # (no white space at all: cut where it is)
    out: list[str] = []
    start = 0
    while start < limit and len(out) < MAX_VECTOR_TOKENS:
        stop = start + SCAN_CHARS
        if stop >= limit:
            stop = limit
        else:
            space = _SPACE.search(text, stop, limit)
            stop = space.start() if space is not None else limit
        out.extend(_tokens(text[start:stop]))
        start = stop
    return _within_bytes(out[:MAX_VECTOR_TOKENS])


_SPACE = re.compile(r"\s")


def _last_space(text: str, end: int) -> int:
    """The position of the last white space of ``text[:end]`` (-1 when there is none),
    looked for in the piece before ``end`` only."""
    start = max(0, end - SCAN_CHARS)
    found = -1
    for space in _SPACE.finditer(text, start, end):
        found = space.start()
    return found


def _within_bytes(toks: list[str]) -> list[str]:
    """``toks`` without those too long to be a lexeme (never in a vector: left out here
    so they are no term of the vocabulary either), up to where their vector would pass
    :data:`MAX_VECTOR_BYTES`, counted as PostgreSQL counts it: each distinct word's bytes
    (rounded up to even), 2 bytes for its count of positions and 2 per position kept (256
    at most). Only a long text of many different words comes near it."""
    if toks and max(map(len, toks)) * 4 > MAX_LEXEME_BYTES:
        toks = [t for t in toks if lexeme_fits(t)]
    if sum(map(len, toks)) * 4 + 5 * len(toks) <= MAX_VECTOR_BYTES:  # (a bound: fast)
        return toks
    seen: dict[str, int] = {}
    total = 0
    for n, tok in enumerate(toks):
        have = seen.get(tok, 0)
        if have == 0:
            total += (len(tok.encode()) + 1) // 2 * 2 + 4
        elif have < MAX_POSITIONS:
            total += 2
        else:
            continue
        seen[tok] = have + 1
        if total > MAX_VECTOR_BYTES:
            return toks[:n]
    return toks


def lexeme_fits(tok: str) -> bool:
    """Whether ``tok`` can be a lexeme (a longer one is never indexed)."""
    return len(tok) * 4 <= MAX_LEXEME_BYTES or len(tok.encode()) <= MAX_LEXEME_BYTES


def tsvector_literal(text: str) -> tuple[str, list[str]]:
    """The ``tsvector`` literal of ``text`` (positions 1.., as PostgreSQL numbers them) and
    its distinct tokens. PostgreSQL itself clamps positions to 16383 and keeps 256 of them
    per word; a token too long to be a lexeme is left out."""
    return _literal(vector_tokens(text))


def _literal(toks: Iterable[str]) -> tuple[str, list[str]]:
    positions: dict[str, list[int]] = {}
    for n, tok in enumerate(toks, 1):
        have = positions.get(tok)
        if have is None:
            positions[tok] = [n]
        elif len(have) < MAX_POSITIONS:
            have.append(n)
    parts = [
        f"{tok}:{','.join(map(str, pos))}" if len(pos) > 1 else f"{tok}:{pos[0]}"
        for tok, pos in positions.items()
        if lexeme_fits(tok)
    ]
    return " ".join(parts), list(positions)


def message_vector(text: str) -> tuple[str, list[str]]:
    """(its ``tsvector`` literal, its tokens: :func:`vector_tokens`). Each token is written
    with its position, in order, repeated words and all: PostgreSQL's input merges a word's
    positions (clamping them to 16383 and keeping 256, as it does), so this costs Python
    about one join, and the server parses it in a third of the time ``to_tsvector`` takes to
    make the same vector from the words. Tokens holding one too long to be a lexeme (over
    511 characters) are written as :func:`tsvector_literal` writes them."""
    toks = vector_tokens(text)
    if not toks:
        return "", toks
    if max(map(len, toks)) * 4 > MAX_LEXEME_BYTES:
        return _literal(toks)[0], toks
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


def query_lexeme(tok: str) -> str:
    """``tok`` as a query holds it: a word too long to be a lexeme (PostgreSQL refuses
    one in a query) is :data:`NO_LEXEME`, which finds nothing: no vector holds it."""
    return tok if lexeme_fits(tok) else NO_LEXEME


def term_query(term: Term) -> str:
    """One term as a ``tsquery``: a word, a phrase (``<->``), a prefix (``:*`` on its last
    word). Tokens are letters and digits only, so they need no quoting."""
    parts = [query_lexeme(tok) for tok in term.tokens]
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
