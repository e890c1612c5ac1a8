"""Words as PostgreSQL full-text search holds them: the same folded tokens as the SQLite index
(:func:`~session_browser.core.query.tokenize`: lowercased, accents removed, runs of letters and
digits), written as ``tsvector`` / ``tsquery`` literals. Tokenising here rather than with a
server text-search configuration makes both engines see exactly the same words whatever the
server's locale (a ``simple`` configuration would split ``café`` in a C-locale database)."""

from __future__ import annotations

from collections.abc import Sequence

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


def message_vector(text: str) -> tuple[str | None, str | None, list[str]]:
    """(its words for the server, or None; its ``tsvector`` literal, or None; its distinct
    tokens). When the folded tokens are all ASCII the server makes the vector:
    ``to_tsvector('simple', words)`` over runs of ASCII letters and digits joined by spaces
    gives exactly the literal's lexemes and positions whatever the locale (checked on real
    messages; a token over 2,047 bytes, dropped by both, shifts the server's positions) and
    costs a fraction of building it here. Other text gets the literal."""
    toks = tokenize(text)[:MAX_VECTOR_TOKENS]
    words = " ".join(toks)
    if words.isascii():
        return words, None, list(dict.fromkeys(toks))
    literal, distinct = tsvector_literal(text)
    return None, literal, distinct


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
