"""Words as every search path sees them: folding, tokens, and one query term."""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

MIN_PREFIX = 2

_TOKEN_RE = re.compile(r"[^\W_]+")
# ASCII text's tokens without the regex: every ASCII character but letters and digits made
# a space, then split (what ``_TOKEN_RE`` finds in ASCII; folding may leave a capital: "ℂ").
_ASCII_GAPS = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalnum()})
# Runs of characters outside ASCII: the only ones that may be combining marks.
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


class QueryError(ValueError):
    """A query whose filter value cannot be used (the message says what is expected)."""


def fold(text: str) -> str:
    """Lowercase and strip diacritics (as the index's ``remove_diacritics 2`` does)."""
    lowered = text.lower()
    if lowered.isascii():
        return lowered
    decomposed = unicodedata.normalize("NFKD", lowered)
    # Only the non-ASCII runs are looked at a character at a time: a text with a few accents,
    # dashes or arrows is mostly ASCII, which holds no combining mark.
    return _NON_ASCII.sub(_without_marks, decomposed)


def _without_marks(run: re.Match[str]) -> str:
    """A run of decomposed characters without its combining marks."""
    return "".join(c for c in run.group() if not unicodedata.combining(c))


def folded_spans(text: str, needle: str) -> list[tuple[int, int]]:
    """Where ``needle`` occurs in ``text`` as search sees it (both folded): ``(start, end)``
    offsets into ``text`` as written, left to right, not overlapping. ``cafe`` finds the
    ``Café`` of "Café au lait" at ``(0, 4)``."""
    key = fold(needle)
    if not key:
        return []
    if text.isascii():
        folded, starts = text.lower(), None
    else:  # fold each character, remembering which character each folded one came from
        pieces = [fold(ch) for ch in text]
        folded = "".join(pieces)
        starts = [i for i, piece in enumerate(pieces) for _ in piece]
        starts.append(len(text))
    spans: list[tuple[int, int]] = []
    at = folded.find(key)
    while at >= 0:
        end = at + len(key)
        if starts is None:
            spans.append((at, end))
        else:
            last = starts[end - 1]
            spans.append((starts[at], last + 1))
        at = folded.find(key, end)
    return spans


def tokenize(text: str) -> list[str]:
    """The folded index tokens of ``text`` (runs of letters and digits)."""
    folded = fold(text)
    if folded.isascii():  # (most text: twice as fast)
        return folded.translate(_ASCII_GAPS).split()
    return _TOKEN_RE.findall(folded)


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
        if not prefix and not most and size <= _SHORT_WORD:
            # A short word ("i", "a", "it") also sits inside many longer ones: a regex
            # led by the word finds and checks every place in C, the loop below in Python.
            return len(_word_pattern(tok).findall(folded, i))
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


_SHORT_WORD = 3  # words this long or shorter are counted by :func:`_word_pattern`


@functools.lru_cache(maxsize=512)
def _word_pattern(tok: str) -> re.Pattern[str]:
    """Whole-word occurrences of ``tok``: the word first (so the regex engine scans for it
    like ``str.find``), then no token character before it or after it."""
    word = re.escape(tok)
    return re.compile(word + r"(?<![^\W_]" + word + ")" + _END_TOKEN)


@functools.lru_cache(maxsize=512)
def _tail_pattern(tokens: tuple[str, ...], prefix: bool) -> re.Pattern[str]:
    """The words of a phrase after its first, matched right where the first one ends."""
    parts = [re.escape(t) for t in tokens]
    if prefix:
        parts[-1] += r"[^\W_]*"
    return re.compile("".join(r"[\W_]+" + p for p in parts) + _END_TOKEN)
