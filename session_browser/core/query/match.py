"""Which sessions a query matches: ONE rule for the index, the team index and every scan.

A session matches a parsed query when

- it passes the session filters (``session:``, ``source:``, ``agent:``, ``project:``, ...);
- no message of it holds an excluded term (``-word``, ``-"a phrase"``);
- with words: a message passing the message filters (``role:``, ``since:``, ``archived:``, ...)
  holds one of the query's *rarer* terms, or any of its terms when none is common or all
  are (see :func:`is_common`, :func:`rare_terms`);
- without words (filters and excluded words only): a message with text passes the message
  filters (so ``-word`` alone lists every session without that word).

How well a session matches (how many of the words it holds, where, how often) is the
ranking's business, not this rule's. Whether a word is common depends on how many messages
hold it: the index counts that in its postings, a scan as it reads the files
(:class:`TermStats`), both the same way.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

from .terms import Term

COMMON_SHARE = 0.1  # a word in more than this share of the messages is common
COMMON_MIN_MESSAGES = 50  # ... counted only in a store of at least this many messages
PREFIX_WORDS = 200  # the words of a prefix counted one by one (beyond: the index's cap)
RARE_DF = 1000  # the index's "rare" bound, used to cap a prefix with too many words

# Words that never make a session a hit on their own when the query has rarer ones.
_STOPWORD_TEXT = """
    a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers him his how i if in into is it its
    just me more most my no nor not now of off on once only or other our ours out over own
    same she should so some such than that the their theirs them then there these they this
    those through to too under until up very was we were what when where which while who
    whom why will with would you your yours"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def is_common(term: Term, df: int, total: int) -> bool:
    """A term too common to make a session a hit on its own: every token an English
    stopword (:data:`STOPWORDS`), or held by more than :data:`COMMON_SHARE` of the messages
    (by document frequency, when the store counts it)."""
    if term.tokens and not term.prefix and all(t in STOPWORDS for t in term.tokens):
        return True
    return total >= COMMON_MIN_MESSAGES and df > COMMON_SHARE * total


def rare_terms(terms: Sequence[Term], dfs: Sequence[int], total: int) -> set[int]:
    """The numbers of the terms a session must hold one of, when the query mixes common and
    rarer terms; empty when any term will do (none is common, or every one is)."""
    n = max(total, 1)
    rare = {i for i, (t, df) in enumerate(zip(terms, dfs, strict=True)) if not is_common(t, df, n)}
    return rare if len(rare) < len(terms) else set()


def session_matches(held: Iterable[int], rare: set[int]) -> bool:
    """Whether a session whose filter-passing messages hold the terms numbered ``held``
    matches (``rare``: see :func:`rare_terms`)."""
    found = set(held)
    return bool(found & rare) if rare else bool(found)


def needs_stats(terms: Sequence[Term]) -> bool:
    """Whether :func:`rare_terms` can depend on the document frequencies: a query of one
    term never does (that term, common or not, is what a session must hold)."""
    return len(terms) > 1


@functools.lru_cache(maxsize=256)
def _prefix_words(tok: str) -> re.Pattern[str]:
    return re.compile(r"(?<![^\W_])" + re.escape(tok) + r"[^\W_]*")


class TermStats:
    """Document frequencies of a query's terms counted over the messages a scan reads, the
    way the index reads them from its postings (:meth:`df`): a word's messages; a phrase's,
    as its rarest word's (an upper bound); a prefix's, as the sum over the words it
    starts (capped as the index caps it)."""

    def __init__(self, terms: Sequence[Term]) -> None:
        self.terms = list(terms)
        self.total = 0  # messages with text
        self._plain: dict[str, int] = {}
        self._prefix: dict[str, int] = {}
        self._prefix_vocab: dict[str, set[str]] = {}
        for t in self.terms:
            for i, tok in enumerate(t.tokens):
                if t.prefix and i == len(t.tokens) - 1:
                    self._prefix.setdefault(tok, 0)
                    self._prefix_vocab.setdefault(tok, set())
                else:
                    self._plain.setdefault(tok, 0)

    def add(self, folded: str) -> None:
        """Count one message's folded text (see :func:`~.terms.fold`)."""
        self.total += 1
        for tok in self._plain:
            if tok in folded and Term((tok,), tok).count_in(folded, 1):
                self._plain[tok] += 1
        for tok in self._prefix:
            if tok in folded:
                words = set(_prefix_words(tok).findall(folded))
                self._prefix[tok] += len(words)
                self._prefix_vocab[tok] |= words

    def df(self, term: Term) -> int:
        dfs: list[int] = []
        for i, tok in enumerate(term.tokens):
            if term.prefix and i == len(term.tokens) - 1:
                total = self._prefix[tok]
                many = len(self._prefix_vocab[tok]) >= PREFIX_WORDS
                dfs.append(max(total, RARE_DF * 10) if many else total)
            else:
                dfs.append(self._plain[tok])
        return min(dfs) if dfs else 0

    def rare(self) -> set[int]:
        """:func:`rare_terms` with the frequencies counted so far."""
        return rare_terms(self.terms, [self.df(t) for t in self.terms], self.total)
