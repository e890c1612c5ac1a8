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
  quoted). ``source:`` names a store's kind (``praisonai``, ``pi``: every session of such a
  store) or a session's own source tag (``cli``, ``scheduled``, ...). ``project:`` keeps
  sessions whose working dir (a Pi session's ``cwd``, a PraisonAI session's
  ``metadata.cwd``/``project``) is PATH or inside it; ``~`` and relative paths are
  resolved against the current dir (``project:.`` is "this project").

Any text parses: an unknown ``key:value`` is just words, a lone ``"`` closes at the end, a lone
``-`` or ``*`` is ignored. Only a bad *filter value* is an error (:class:`QueryError`, with a
message that says what is expected). Words are tokenised the way the index tokenises them
(letters and digits; everything else separates), so ``foo.bar`` is the phrase ``"foo bar"``.
Nothing a person types ever reaches FTS5 unquoted: :func:`fts_expr` quotes every token.
"""

from __future__ import annotations

import functools
import os
import re
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

ROLES = ("user", "assistant", "system", "tool", "developer", "function")
FILTER_KEYS = ("role", "since", "until", "session", "source", "agent", "archived", "project")
MIN_PREFIX = 2
MAX_TERMS = 32

_TOKEN_RE = re.compile(r"[^\W_]+")
_YES = frozenset({"yes", "y", "true", "1", "only"})
_NO = frozenset({"no", "n", "false", "0", "none"})


class QueryError(ValueError):
    """A query whose filter value cannot be used (the message says what is expected)."""


def fold(text: str) -> str:
    """Lowercase and strip diacritics (as the index's ``remove_diacritics 2`` does)."""
    lowered = text.lower()
    if lowered.isascii():
        return lowered
    decomposed = unicodedata.normalize("NFKD", lowered)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def tokenize(text: str) -> list[str]:
    """The folded index tokens of ``text`` (runs of letters and digits)."""
    return _TOKEN_RE.findall(fold(text))


@dataclass(frozen=True)
class Term:
    """One positive or excluded part: a word, a phrase or a prefix."""

    tokens: tuple[str, ...]
    raw: str
    quoted: bool = False
    prefix: bool = False

    @property
    def label(self) -> str:
        body = " ".join(self.tokens)
        if self.prefix:
            body += "*"
        return f'"{body}"' if len(self.tokens) > 1 or self.quoted else body

    def fts(self) -> str:
        """This term as an FTS5 phrase: every token double-quoted, never raw user text."""
        body = " ".join(self.tokens)
        return f'"{body}"*' if self.prefix else f'"{body}"'

    @property
    def pattern(self) -> re.Pattern[str]:
        """A regex whose matches in *folded* text (see :func:`fold`) are this term's
        occurrences, exactly as :meth:`occurrences` counts them over :func:`tokenize`."""
        return _term_pattern(self.tokens, self.prefix)

    def count_in(self, folded: str, most: int = 0) -> int:
        """How often this term occurs in ``folded`` text (no tokenising needed); with
        ``most``, counting stops there (``most=1``: whether it occurs at all)."""
        # Find the first word as a substring and check its ends (a token character is
        # exactly what ``str.isalnum`` accepts); a phrase then matches the rest of its
        # words right there. Several times faster than running a regex over the text.
        tok = self.tokens[0]
        i = folded.find(tok)
        if i < 0:
            return 0
        size = len(tok)
        end = len(folded)
        count = 0
        if len(self.tokens) > 1:
            if any(t not in folded for t in self.tokens[1:]):
                return 0
            tail = _tail_pattern(self.tokens[1:], self.prefix)
            while i >= 0:
                if (i == 0 or not folded[i - 1].isalnum()) and tail.match(folded, i + size):
                    count += 1
                    if count == most:
                        break
                i = folded.find(tok, i + 1)
            return count
        prefix = self.prefix
        while i >= 0:
            j = i + size
            if (i == 0 or not folded[i - 1].isalnum()) and (
                prefix or j == end or not folded[j].isalnum()
            ):
                count += 1
                if count == most:
                    break
            i = folded.find(tok, j if prefix else i + 1)
        return count

    def occurrences(self, toks: list[str]) -> int:
        """How often this term occurs in a token list."""
        n = len(self.tokens)
        if n == 1:
            tok = self.tokens[0]
            if self.prefix:
                return sum(1 for t in toks if t.startswith(tok))
            return toks.count(tok)
        first = self.tokens[0]
        last = n - 1
        count = 0
        start = 0
        while True:
            try:
                i = toks.index(first, start)
            except ValueError:
                return count
            seg = toks[i : i + n]
            if len(seg) == n and seg[:last] == list(self.tokens[:last]):
                tail = self.tokens[last]
                if seg[last].startswith(tail) if self.prefix else seg[last] == tail:
                    count += 1
            start = i + 1


_NOT_TOKEN = r"(?<![^\W_])"  # no token character just before
_END_TOKEN = r"(?![^\W_])"  # no token character just after


@functools.lru_cache(maxsize=512)
def _term_pattern(tokens: tuple[str, ...], prefix: bool) -> re.Pattern[str]:
    r"""Tokens are maximal runs of ``[^\W_]``, so a token is a match with no token character
    on either side, and consecutive tokens are separated by ``[\W_]+``. A phrase is matched
    inside a lookahead so overlapping occurrences count, as over a token list."""
    parts = [re.escape(t) for t in tokens]
    if prefix:
        parts[-1] += r"[^\W_]*"
    body = r"[\W_]+".join(parts) + _END_TOKEN
    if len(tokens) == 1:
        return re.compile(_NOT_TOKEN + body)
    return re.compile(_NOT_TOKEN + "(?=" + body + ")")


@functools.lru_cache(maxsize=512)
def _tail_pattern(tokens: tuple[str, ...], prefix: bool) -> re.Pattern[str]:
    """The words of a phrase after its first, matched right where the first one ends."""
    parts = [re.escape(t) for t in tokens]
    if prefix:
        parts[-1] += r"[^\W_]*"
    return re.compile("".join(r"[\W_]+" + p for p in parts) + _END_TOKEN)


NOTHING_SEARCHABLE = "nothing searchable was typed (no letters or digits)"


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
    warnings: list[str] = field(default_factory=list)

    @property
    def words(self) -> str:
        """The positive words as plain text (for snippets and the classic heuristic)."""
        return " ".join(" ".join(t.tokens) for t in self.terms)

    @property
    def has_filters(self) -> bool:
        return any(
            v is not None
            for v in (
                self.role,
                self.since,
                self.until,
                self.session,
                self.source,
                self.agent,
                self.archived,
                self.project,
            )
        )

    @property
    def empty(self) -> bool:
        return not self.terms and not self.has_filters

    @property
    def nothing_searchable(self) -> bool:
        """Text was typed, but no word, excluded word or filter came of it (only
        punctuation or symbols, say a lone quote or an emoji): nothing can be searched."""
        return bool(self.text.strip()) and self.empty and not self.excluded

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
    """What one part of a query is: ``("filter", key, value)``, ``("exclude", "", text)``
    or ``("term", "", text)``."""
    negative = False
    if quoted:
        if head.startswith("-"):
            negative, head = True, head[1:]
        key = head[:-1].lower() if head.endswith(":") else ""
        if key in FILTER_KEYS and not negative:
            return "filter", key, body
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


_AGE_RE = re.compile(r"(\d{1,6})\s*(m|min|h|d|w)", re.IGNORECASE)
_AGE_UNITS = {"m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DAY_WORDS = {"today": 0, "yesterday": 1}


def _relative(value: str, key: str, now: float) -> float | None:
    """The timestamp a relative ``since:``/``until:`` value names (None: not relative).

    ``today`` / ``yesterday`` are whole UTC days (``since:`` their start, ``until:`` their
    end, as a bare date); an age (``7d``) is that long before ``now``."""
    raw = value.strip().lower()
    if raw in _DAY_WORDS:
        midnight = datetime.fromtimestamp(now, UTC).replace(
            hour=0, minute=0, second=0, microsecond=0
        )
        start = midnight - timedelta(days=_DAY_WORDS[raw])
        return (start if key == "since" else start + timedelta(days=1)).timestamp()
    age = _AGE_RE.fullmatch(raw)
    if age:
        return now - int(age.group(1)) * _AGE_UNITS[age.group(2).lower()]
    return None


def _day(value: str, key: str) -> datetime:
    raw = value.strip()
    try:
        if len(raw) == 10:
            day = datetime.strptime(raw, "%Y-%m-%d")
            return day.replace(tzinfo=UTC)
        parsed = datetime.fromisoformat(raw)
    except (ValueError, OverflowError, OSError):
        raise _bad_date(key, value) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _bad_date(key: str, value: str) -> QueryError:
    return QueryError(
        f"{key}: expects a date like 2026-01-31 (or an ISO date-time), today, yesterday"
        f" or an age like 7d, 12h, 2w, not {value!r}"
    )


def _timestamp(day: datetime, key: str, value: str) -> float:
    try:
        return day.timestamp()
    except (ValueError, OverflowError, OSError):
        raise _bad_date(key, value) from None


def _end_of_day(day: datetime) -> datetime:
    """The instant after ``day``'s last moment. The last representable day
    (9999-12-31) has no next day, so it is clamped to ``datetime.max`` (UTC), which
    still covers every timestamp a transcript can carry."""
    try:
        return day + timedelta(days=1)
    except OverflowError:
        return datetime.max.replace(tzinfo=UTC)


def _make_term(raw: str, quoted: bool) -> Term | None:
    prefix = raw.endswith("*")
    body = raw.rstrip("*") if prefix else raw
    tokens = tuple(tokenize(body))
    if not tokens:
        return None
    if prefix and len(tokens[-1]) < MIN_PREFIX:
        prefix = False
    return Term(tokens=tokens, raw=raw, quoted=quoted or len(tokens) > 1, prefix=prefix)


def _apply_filter(pq: ParsedQuery, key: str, value: str, now: float) -> None:
    value = value.strip()
    if not value:
        raise QueryError(f"{key}: needs a value (e.g. {_EXAMPLES[key]})")
    if key == "role":
        role = value.lower()
        if role not in ROLES:
            raise QueryError(f"role: expects one of {', '.join(ROLES)}, not {value!r}")
        pq.role = role
    elif key in ("since", "until") and (rel := _relative(value, key, now)) is not None:
        setattr(pq, key, rel)
    elif key == "since":
        pq.since = _timestamp(_day(value, key), key, value)
    elif key == "until":
        day = _day(value, key)
        # A bare date means the whole day.
        end = _end_of_day(day) if len(value) == 10 else day
        pq.until = _timestamp(end, key, value)
    elif key == "session":
        pq.session = value
    elif key == "source":
        pq.source = value.lower()
    elif key == "agent":
        pq.agent = value
    elif key == "project":
        pq.project = normalize_project(value)
    elif key == "archived":
        low = value.lower()
        if low in _YES:
            pq.archived = True
        elif low in _NO:
            pq.archived = False
        else:
            raise QueryError(f"archived: expects yes or no, not {value!r}")


_EXAMPLES = {
    "role": "role:user",
    "since": "since:2026-01-31",
    "until": "until:2026-01-31",
    "session": "session:ID",
    "source": "source:cli",
    "agent": "agent:NAME",
    "archived": "archived:yes",
    "project": "project:~/code/app",
}


def normalize_project(value: str) -> str:
    """A ``project:`` value as an absolute, normalised path (``~`` expanded)."""
    return os.path.normpath(os.path.abspath(os.path.expanduser(value.strip())))


def project_matches(project: str | None, want: str) -> bool:
    """True when a session's ``project`` dir is ``want`` or inside it (text only: the dir
    may live on another machine, so nothing on disk is consulted)."""
    if not project:
        return False
    have = os.path.normpath(os.path.expanduser(project))
    if have == want:
        return True
    prefix = want if want.endswith(os.sep) else want + os.sep
    return have.startswith(prefix)


def parse_query(text: str, *, now: float | None = None) -> ParsedQuery:
    """Parse ``text``; raises :class:`QueryError` only for a bad filter value. ``now``
    (epoch seconds, the clock by default) is what relative dates count back from."""
    text = text or ""
    clock = time.time() if now is None else now
    pq = ParsedQuery(text=text)
    for head, body, quoted, _span in _split(text):
        kind, key, body = _classify(head, body, quoted)
        if kind == "filter":
            _apply_filter(pq, key, body, clock)
            continue
        term = _make_term(body, quoted)
        if term is None:
            continue
        target = pq.excluded if kind == "exclude" else pq.terms
        if term in target:
            continue
        if len(pq.terms) + len(pq.excluded) >= MAX_TERMS:
            pq.warnings.append(f"only the first {MAX_TERMS} terms are used")
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
            return f"nothing matches with {dropped}; without it, {some}"
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
