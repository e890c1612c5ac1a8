"""The search query language, and the text folding every search path shares.

A query is a list of space-separated parts:

- ``word``: a plain word (case and diacritics do not matter);
- ``"quoted phrase"``: the words next to each other, in this order;
- ``-word`` / ``-"a phrase"``: leave out sessions that contain it;
- ``prefix*``: any word that starts with ``prefix`` (two characters at least);
- filters ``role:user``, ``since:2026-01-31``, ``until:2026-02-28``, ``session:ID``,
  (``since:``/``until:`` also take ``today``, ``yesterday`` (whole UTC days, like a bare
  date) and an age such as ``30m``, ``12h``, ``7d``, ``2w``: that long before now),
  ``source:NAME``, ``agent:NAME``, ``archived:yes|no``, ``project:PATH`` (values may be
  quoted), and ``in:tools`` (search the tool calls and results, reasoning and bookkeeping of
  Claude Code, Codex and Pi transcripts too: not searched by default). ``source:`` names a
  store's kind (``praisonai``, ``pi``: every session of such a store) or a session's own
  source tag (``cli``, ``scheduled``, ...). ``project:`` keeps sessions whose working dir
  (a Pi session's ``cwd``, a PraisonAI session's ``metadata.cwd``/``project``) is PATH or
  inside it; ``~`` and relative paths are resolved against the current dir (``project:.``
  is "this project"). ``machine:NAME`` and ``user:NAME`` keep the sessions written on that
  machine / by that user (a local store's are this machine's and this user's; the team index
  records each session's origin).

Any text parses: an unknown ``key:value`` is just words, a lone ``"`` closes at the end, a lone
``-`` or ``*`` is ignored. Only a bad *filter value* is an error (a quote inside one, as in
``agent:q"q``, too: the filter is never dropped for words) (:class:`QueryError`, with a
message that says what is expected). Words are tokenised the way the index tokenises them
(letters and digits; everything else separates), so ``foo.bar`` is the phrase ``"foo bar"``.
Nothing a person types ever reaches FTS5 unquoted: :func:`fts_expr` quotes every token.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import notes
from ..notes import Note
from .filters import BY_KEY, FILTER_KEYS, FILTERS, Filter, active, parse_value
from .terms import MIN_PREFIX, QueryError, Term, tokenize

MAX_TERMS = 32

NOTHING_SEARCHABLE = Note(
    notes.NOTHING_SEARCHABLE, "nothing searchable was typed (no letters or digits)"
)


@dataclass
class ParsedQuery:
    """A parsed query: positive terms, excluded terms and filters."""

    text: str
    terms: list[Term] = field(default_factory=list)
    excluded: list[Term] = field(default_factory=list)
    role: str | None = None
    since: float | None = None
    until: float | None = None
    session: str | None = None
    source: str | None = None
    agent: str | None = None
    archived: bool | None = None
    project: str | None = None
    machine: str | None = None
    user: str | None = None
    in_: str | None = None  # ``in:tools``: tool calls and results, reasoning searched too
    warnings: list[str] = field(default_factory=list)

    @property
    def words(self) -> str:
        """The positive words as plain text (for snippets and the classic heuristic)."""
        return " ".join(" ".join(t.tokens) for t in self.terms)

    @property
    def filter_values(self) -> dict[str, Any]:
        """Every filter of the language (see :data:`~.filters.FILTERS`) -> its value or None."""
        return {f.key: getattr(self, f.name) for f in FILTERS}

    @functools.cached_property
    def session_filters(self) -> list[tuple[Filter, Any]]:
        """The session filters set, with their values (parse first: cached)."""
        return active(self.filter_values, "session")

    @functools.cached_property
    def message_filters(self) -> list[tuple[Filter, Any]]:
        """The message filters set, with their values (parse first: cached)."""
        return active(self.filter_values, "message")

    @property
    def has_filters(self) -> bool:
        """Whether a filter narrows the query (``in:tools`` widens it: not one)."""
        return any(getattr(self, f.name) is not None for f in FILTERS if f.scope != "option")

    @property
    def tools(self) -> bool:
        """``in:tools``: the hidden parts of transcripts (tool calls and results, reasoning,
        bookkeeping) are searched too, not only the prose."""
        return self.in_ is not None

    @property
    def empty(self) -> bool:
        """Nothing to search: no word, no excluded word, no filter. (A query of excluded
        words only lists every session holding none of them, as filters alone do.)"""
        return not self.terms and not self.excluded and not self.has_filters

    @property
    def nothing_searchable(self) -> bool:
        """Text was typed, but no word, excluded word or filter came of it (only
        punctuation or symbols, say a lone quote or an emoji): nothing can be searched."""
        return bool(self.text.strip()) and self.empty

    @property
    def all_tokens(self) -> tuple[str, ...]:
        out: list[str] = []
        for term in self.terms:
            out.extend(term.tokens)
        return tuple(out)


def _split(text: str) -> list[tuple[str, str, bool, tuple[int, int]]]:
    """Split into (head, body, quoted, span) parts.

    ``head`` is what stands before an opening quote (``-``, ``key:``, ``-key:`` or ''), so
    ``agent:"my agent"`` and ``-"a phrase"`` stay one part; an unclosed quote runs to the end.
    ``span`` is where the part stands in ``text``.
    """
    parts: list[tuple[str, str, bool, tuple[int, int]]] = []
    i = 0
    n = len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        start = i
        while i < n and not text[i].isspace() and text[i] != '"':
            i += 1
        if i < n and text[i] == '"':
            head = text[start:i]
            close = text.find('"', i + 1)
            body = text[i + 1 :] if close < 0 else text[i + 1 : close]
            i = n if close < 0 else close + 1
            if i < n and text[i] == "*":
                body += "*"
                i += 1
            parts.append((head, body, True, (start, i)))
            continue
        parts.append(("", text[start:i], False, (start, i)))
    return parts


def _classify(head: str, body: str, quoted: bool) -> tuple[str, str, str]:
    """What one part of a query is: ``("filter", key, value)``, ``("exclude", "", text)``,
    ``("term", "", text)`` or ``("bad", key, text)`` (a filter whose value holds a quote)."""
    negative = False
    if quoted:
        if head.startswith("-"):
            negative, head = True, head[1:]
        key = head[:-1].lower() if head.endswith(":") else ""
        if key in FILTER_KEYS and not negative:
            return "filter", key, body
        typed, colon, _value = head.partition(":")
        if colon and typed.lower() in FILTER_KEYS and not negative:
            # A quote inside a filter value (``session:abc"``): never words in its place.
            return "bad", typed.lower(), f'{head}"{body}'
        if head:
            body = head + " " + body
    else:
        if body.startswith("-") and len(body) > 1:
            negative, body = True, body[1:]
        key, sep, value = body.partition(":")
        if sep and not negative and key.lower() in FILTER_KEYS:
            return "filter", key.lower(), value
    return ("exclude" if negative else "term"), "", body


_OPERATORS = frozenset({"AND", "OR", "NOT"})


def highlight_terms(text: str) -> list[str]:
    """The words and phrases of query ``text`` that a view highlights and steps through,
    as typed: its positive terms only. A filter value is never one (``archived:yes`` adds
    no ``yes``, ``source:pi`` no ``pi``), nor an excluded word, nor ``AND``/``OR``/``NOT``.
    Any text gives an answer (a bad filter value is left out as any filter is)."""
    out: list[str] = []
    for head, body, quoted, _span in _split(text or ""):
        kind, _key, body = _classify(head, body, quoted)
        if kind != "term":
            continue
        word = body.rstrip("*") if quoted else body.strip("()*~^")
        if (not quoted and word in _OPERATORS) or not tokenize(word) or word in out:
            continue
        out.append(word)
    return out


def loosened(text: str) -> list[tuple[str, str]]:
    """Ways to widen a query that found nothing, to say why it did: ``(what was left out,
    the query without it)``, first without its excluded words, then without its filters.
    A query with neither gives nothing."""
    parts = [(text[a:b], _classify(h, body, q)[0]) for h, body, q, (a, b) in _split(text)]
    out: list[tuple[str, str]] = []
    for kind in ("exclude", "filter"):
        dropped = [raw for raw, k in parts if k == kind]
        rest = [raw for raw, k in parts if k != kind]
        if dropped and any(k == "term" for _raw, k in parts):
            out.append((" ".join(dropped), " ".join(rest)))
    return out


def _make_term(raw: str, quoted: bool) -> Term | None:
    prefix = raw.endswith("*")
    body = raw.rstrip("*") if prefix else raw
    tokens = tuple(tokenize(body))
    if not tokens:
        return None
    if prefix and len(tokens[-1]) < MIN_PREFIX:
        prefix = False
    return Term(tokens=tokens, raw=raw, quoted=quoted or len(tokens) > 1, prefix=prefix)


def parse_query(text: str, *, now: float | None = None) -> ParsedQuery:
    """Parse ``text``; raises :class:`QueryError` only for a bad filter value. ``now``
    (epoch seconds, the clock by default) is what relative dates count back from."""
    text = text or ""
    clock = time.time() if now is None else now
    pq = ParsedQuery(text=text)
    for head, body, quoted, _span in _split(text):
        kind, key, body = _classify(head, body, quoted)
        if kind == "bad":
            raise QueryError(
                f"{key}: a value holding a quote must be quoted whole, like "
                f'{key}:"a value" (not {body!r})'
            )
        if kind == "filter":
            setattr(pq, BY_KEY[key].name, parse_value(key, body, clock))
            continue
        term = _make_term(body, quoted)
        if term is None:
            continue
        target = pq.excluded if kind == "exclude" else pq.terms
        if term in target:
            continue
        if len(pq.terms) + len(pq.excluded) >= MAX_TERMS:
            capped = f"only the first {MAX_TERMS} terms are used"
            pq.warnings.append(Note(notes.TERMS_CAPPED, capped))
            break
        target.append(term)
    if pq.since is not None and pq.until is not None and pq.since >= pq.until:
        raise QueryError("since: is not before until: (nothing can match)")
    return pq


def classic_text(text: str) -> str:
    """The words of a query as plain text, without its filters and excluded words (quotes
    and a prefix's ``*`` dropped): what a literal substring search looks for."""
    out: list[str] = []
    for head, body, quoted, _span in _split(text):
        kind, _key, body = _classify(head, body, quoted)
        if kind == "term":
            out.append(body.rstrip("*") if body.endswith("*") else body)
    return " ".join(w for w in out if w)


def why_empty(text: str, matched: Callable[[str], int]) -> str | None:
    """Why ``text`` found nothing, when leaving out its excluded words or its filters would
    find something: ``matched(query)`` counts the sessions a query matches."""
    for dropped, rest in loosened(text):
        n = matched(rest)
        if n > 0:
            some = "1 session matches" if n == 1 else f"{n:,} sessions match"
            return Note(notes.WHY_EMPTY, f"nothing matches with {dropped}; without it, {some}")
    return None


def fts_expr(terms: list[Term], *, op: str = "OR", excluded: list[Term] | None = None) -> str:
    """An FTS5 MATCH expression from terms (every token quoted)."""
    body = f" {op} ".join(t.fts() for t in terms)
    if len(terms) > 1:
        body = f"({body})"
    if excluded:
        body += " NOT (" + " OR ".join(t.fts() for t in excluded) + ")"
    return body


def like_pattern(term: Term) -> str:
    """A LIKE pattern (``\\`` escapes) that every text containing ``term`` matches."""
    escaped = [t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") for t in term.tokens]
    return "%" + "%".join(escaped) + "%"
