"""Lexical recall of a session from a question in other words: weighted coverage of the
question's words over whole sessions.

When no message holds every word of a query (a paraphrase, a question asked months later),
the relevance procedure ranks sessions by this instead of by their best message: the query's
content words (stop and question words aside, :data:`STOP_WORDS`), spelling folded and
reduced by a light suffix stemmer (:func:`stem`), each weighted by its BM25 idf over sessions.
A session's score is the BM25 sum of the words it holds (term frequency taken as presence:
a word said a hundred times in a long session weighs what it weighs once), length-normalised
strongly (``b``), so a long "hub" session holding many words does not win by length, times the
share of the question's idf weight the session covers to the power :data:`COVERAGE_POWER`.
No word is required: one absent word only costs its own weight.

An engine keeps, per session, the set of these words (:func:`session_words` of its messages)
and hands over their postings (:class:`SessionPostings`); the scoring is here, once.
"""

from __future__ import annotations

import functools
import heapq
import math
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from ..query import ParsedQuery
from ..query.terms import tokenize

#: Words that carry no content in a question: English function words, the words people use to
#: ask ("what did we decide about..."), and chat filler.
_STOP_TEXT = """
    a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can cannot could couldn d did didn do does doesn doing
    don down during each else ever few for from further get got had hadn has hasn have haven
    having he her here hers herself him himself his how i if in into is isn it its itself just
    ll m me might more most much must mustn my myself no nor not now o of off on once one only or
    other ought our ours ourselves out over own re s same shan she should shouldn so some such t
    than that the their theirs them themselves then there these they this those through to too
    under until up upon us ve very was wasn we were weren what when where which while who whom
    whose why will with won would wouldn y you your yours yourself yourselves
    ask asked asking back decide decided did remember recall said say talk talked talking tell
    thing things think thought time times told way went ago earlier last ones someone something
    anything really actually maybe like
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())

#: BM25 over sessions: term frequency saturates at once (presence), length weighs strongly.
K1 = 0.6
B = 0.9
#: A session's score is multiplied by the share of the question's idf it covers, to this power.
COVERAGE_POWER = 0.5
#: Words held by more than this share of the sessions add to the score of the sessions the
#: rarer words found, never bring candidates of their own (a word that common says little
#: about which session is meant, and its postings are the longest to read).
COMMON_SHARE = 0.05
#: The messages of a recalled session its anchor is chosen among: its newest this many
#: holding a word of the query as written (the same on every engine).
ANCHOR_MESSAGES = 8
#: How often a session holds a word is kept up to the last of these (term frequency
#: saturates fast at :data:`K1`); the best :data:`RERANK` sessions by presence are ranked
#: again with it.
TF_MARKS = (2, 3, 4)
RERANK = 50

#: Suffixes stripped by :func:`stem`, longest first, with what replaces them.
_SUFFIXES = (
    ("ational", "ate"),
    ("ations", "ate"),
    ("ation", "ate"),
    ("ments", ""),
    ("ment", ""),
    ("ings", ""),
    ("ing", ""),
    ("ies", "y"),
    ("ied", "y"),
    ("ers", ""),
    ("er", ""),
    ("ed", ""),
    ("es", ""),
    ("ly", ""),
    ("s", ""),
)
_MIN_STEM = 3
_VOWELS = "aeiou"


def measure(word: str) -> int:
    """Porter's measure of ``word``: how many vowel-consonant sequences it holds (``tak`` 1,
    ``weath`` 1, ``speak`` 1, ``comput`` 2)."""
    m, vowel = 0, False
    for i, c in enumerate(word):
        now = c in _VOWELS or (c == "y" and i > 0 and word[i - 1] not in _VOWELS)
        if vowel and not now:
            m += 1
        vowel = now
    return m


def _short(base: str) -> bool:
    """Whether ``base`` is one short syllable ending consonant-vowel-consonant (``shar``,
    ``tak``, ``nam``): the ``-e`` an ``-ed`` or ``-ing`` dropped comes back."""
    return (
        measure(base) == 1
        and len(base) >= 3
        and base[-1] not in _VOWELS + "wxy"
        and base[-2] in _VOWELS
        and base[-3] not in _VOWELS
    )


def stem(word: str) -> str:
    """A light suffix stemmer: ``booked``/``booking``/``books`` -> ``book``,
    ``shared``/``sharing`` -> ``share`` (the dropped ``-e`` of a short syllable restored),
    ``reservation``/``reservations`` -> ``reservate``, ``cities`` -> ``city``; a doubled
    final consonant left by ``-ing``/``-ed`` is undoubled (``shopping`` -> ``shop``).
    ``-er`` goes only after two syllables (``computer`` -> ``comput``, but ``weather``,
    ``number``, ``speaker`` stay). Words of four letters or fewer, numbers and words ending in
    ``ss`` or ``eed`` are kept."""
    if len(word) <= 4 or not word.isalpha() or word.endswith(("ss", "eed")):
        return word
    for suffix, repl in _SUFFIXES:
        if suffix == "es" and not word[:-2].endswith(("s", "x", "z", "ch", "sh")):
            continue  # "dialogues" -> "dialogue" (by "-s"), "boxes" -> "box"
        if word.endswith(suffix) and len(word) - len(suffix) >= _MIN_STEM:
            base = word[: len(word) - len(suffix)] + repl
            if suffix in ("er", "ers") and measure(base) < 2:
                return word[:-1] if suffix == "ers" else word  # "speakers" -> "speaker"
            undouble = suffix in ("ing", "ed", "er", "ings", "ers") and len(base) > 3
            if undouble and base[-1] == base[-2] and base[-1] not in "aeiouls":
                return base[:-1]
            if suffix in ("ing", "ed", "ings") and _short(base):
                return base + "e"
            return base
    return word


#: British spellings folded to American ones before stemming (``favourite`` -> ``favorite``,
#: ``theatre`` -> ``theater``), as (suffix, replacement) for words of 6+ letters.
_SPELLING = (
    ("ourites", "orites"),
    ("ourite", "orite"),
    ("ours", "ors"),
    ("our", "or"),
    ("tres", "ters"),
    ("tre", "ter"),
)


def spelling(word: str) -> str:
    """Fold a British spelling to the American one (``colour`` -> ``color``)."""
    if len(word) >= 6 and word.isalpha():
        for suffix, repl in _SPELLING:
            if word.endswith(suffix):
                return word[: len(word) - len(suffix)] + repl
    return word


#: Numbers people write out, folded to the digits a session often holds instead ("four
#: nights" for "4 nights"; "one" is a stop word).
_WRITTEN = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven")
NUMBERS = {w: str(n) for n, w in enumerate((*_WRITTEN, "twelve"), start=2)}


@functools.lru_cache(maxsize=1 << 16)
def reduced(word: str) -> str:
    """``word`` spelling folded and stemmed, a written-out number as its digits (words
    repeat: each is reduced once)."""
    return NUMBERS.get(word) or stem(spelling(word))


def is_content(token: str) -> bool:
    """Whether a folded token is a content word: not a stop or question word, and longer
    than one character unless a digit (``4`` of "4 nights" is one)."""
    return (len(token) > 1 or token.isdigit()) and token not in STOP_WORDS


#: token -> its content word (:func:`reduced`), or "" when it is none (a stop word, one
#: character): every message of every session is read into words, and words repeat.
_CONTENT: dict[str, str] = {}
_CONTENT_MAX = 1 << 18  # tokens remembered at most


def content_words(tokens: Iterable[str], stemming: bool = True) -> list[str]:
    """The content words of folded ``tokens``, spelling folded and stemmed, in order (repeats
    kept)."""
    if not stemming:
        return [t for t in tokens if is_content(t)]
    out: list[str] = []
    known = _CONTENT
    for token in tokens:
        word = known.get(token)
        if word is None:
            word = reduced(token) if is_content(token) else ""
            if len(known) < _CONTENT_MAX:
                known[token] = word
        if word:
            out.append(word)
    return out


def words_of(text: str) -> list[str]:
    """The content words of a text (:func:`content_words` of its index tokens)."""
    return content_words(tokenize(text))


def mark(word: str, times: int) -> str:
    """The token saying a session holds ``word`` at least ``times`` times (``_`` is in no
    word)."""
    return f"{word}_{times}"


#: How much of one text is read into words at a time: a huge message (a pasted log of
#: 200 MB) costs memory for its distinct words, not a list of all of them.
SLICE = 1 << 20


def slices(text: str, size: int = SLICE) -> Iterator[str]:
    """``text`` in parts of about ``size`` characters, each cut after a whitespace (a word
    is never split; a part with no whitespace in its last 256 characters is cut there)."""
    start, end = 0, len(text)
    while end - start > size:
        cut = start + size
        space = max(text.rfind(" ", cut - 256, cut), text.rfind("\n", cut - 256, cut))
        if space > start:
            cut = space + 1
        yield text[start:cut]
        start = cut
    yield text[start:]


def session_words(texts: Iterable[str]) -> tuple[list[str], int]:
    """What an engine keeps of a session's message ``texts``: its distinct content words (in
    first-seen order), then the :func:`mark` of each held at least 2, 3, 4 times
    (:data:`TF_MARKS`), and how many content words it has in all (its length)."""
    # The tokens of the whole session are counted first (a message's words repeat in the
    # others), then each distinct token is read into its content word once: the same words,
    # in the same first-seen order and with the same counts as word by word. Short texts are
    # tokenized together, joined by a newline (no token spans one, and folding a text
    # joined so is folding each alone), up to about :data:`SLICE` characters at a time.
    tokens: Counter[str] = Counter()
    group: list[str] = []
    held = 0
    for text in texts:
        if held + len(text) > SLICE and group:
            tokens.update(tokenize("\n".join(group)))
            group, held = [], 0
        if len(text) <= SLICE:
            group.append(text)
            held += len(text) + 1
            continue
        for part in slices(text):
            tokens.update(tokenize(part))
    if group:
        tokens.update(tokenize("\n".join(group)))
    counts: dict[str, int] = {}
    known = _CONTENT
    for token, times in tokens.items():
        word = known.get(token)
        if word is None:
            word = reduced(token) if is_content(token) else ""
            if len(known) < _CONTENT_MAX:
                known[token] = word
        if word:
            counts[word] = counts.get(word, 0) + times
    least = TF_MARKS[0]  # (most words are said once: they have no mark to look for)
    marks = [mark(w, n) for w, c in counts.items() if c >= least for n in TF_MARKS if c >= n]
    return [*counts, *marks], sum(counts.values())


def marks_of(words: Sequence[str]) -> list[str]:
    """The :func:`mark` tokens of ``words``."""
    return [mark(w, n) for w in words for n in TF_MARKS]


def marks_to_read(words: Sequence[str], found: SessionPostings) -> list[str]:
    """The :func:`mark` tokens saying how often sessions hold the ``words`` some session
    holds: every one of a word few sessions hold; of a common one (:func:`common_limit`) only
    whether it is said twice (among sessions alike, as near-duplicate bookings are, "hotel"
    or "4" said again is what tells the one meant apart; its longer marks are the longest
    lists to read and tell little more)."""
    most = common_limit(found.sessions)
    out: list[str] = []
    for w in words:
        holders = len(found.postings.get(w, ()))
        if holders:
            out.extend(marks_of([w]) if holders <= most else [mark(w, TF_MARKS[0])])
    return out


def content_terms(pq: ParsedQuery) -> list[int]:
    """The numbers of ``pq``'s terms that are content words (not stop or question words)."""
    return [i for i, t in enumerate(pq.terms) if any(is_content(tok) for tok in t.tokens)]


def query_words(pq: ParsedQuery) -> list[str]:
    """The distinct content words of ``pq``'s terms (a phrase's words each), in order."""
    tokens = [tok for t in pq.terms for tok in t.tokens]
    return list(dict.fromkeys(content_words(tokens)))


def eligible(pq: ParsedQuery) -> bool:
    """Whether ``pq`` may be answered by session recall: plain words only (no quoted phrase,
    prefix, excluded word, filter or ``in:tools``: those ask for what a message holds; a word
    written with an apostrophe or a hyphen is its parts), at least two content words."""
    if pq.excluded or pq.has_filters or pq.tools:
        return False
    if any(t.prefix or (t.quoted and any(c.isspace() for c in t.raw)) for t in pq.terms):
        return False
    return len(query_words(pq)) >= 2


@dataclass
class SessionPostings:
    """What an engine hands over for a question's words: how many sessions it holds and their
    mean length (content words), which sessions hold each word (``postings``: a common word's
    as a set, looked up only for the sessions the rarer words found), and the length of
    every session in them (``lengths``)."""

    sessions: int
    mean_length: float
    postings: Mapping[str, Collection[int]]
    lengths: Mapping[int, int] = field(default_factory=dict)


def common_limit(sessions: int) -> int:
    """The session count above which a word is common (:data:`COMMON_SHARE`)."""
    return max(50, int(sessions * COMMON_SHARE))


def idf(df: int, n: int) -> float:
    """BM25's idf of a word held by ``df`` of ``n`` sessions."""
    df = min(df, n)
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def _smallest(scores: list[float], keys: list[int], k: int) -> list[tuple[float, int]]:
    """The ``k`` smallest (score, key) pairs of ``scores`` and ``keys`` (ties: the lower key),
    in order, building a pair only for the scores at or below the ``k``-th."""
    if len(scores) > k:
        cut = sorted(scores)[k - 1]
        return sorted((s, key) for s, key in zip(scores, keys, strict=True) if s <= cut)[:k]
    return sorted(zip(scores, keys, strict=True))


def _among(
    covered: dict[int, float], members: set[int] | frozenset[int]
) -> set[int] | frozenset[int]:
    """The keys of ``covered`` in ``members``, looking up the fewer in the other (``keys() &
    a frozenset`` walks the whole frozenset: a common word's thousands of sessions, when
    the candidates are fewer)."""
    if len(members) <= len(covered):
        return covered.keys() & members
    return members.intersection(covered)


def rank_sessions(
    words: Sequence[str], found: SessionPostings, limit: int, include: Collection[int] = ()
) -> list[tuple[int, float]]:
    """The ``limit`` best sessions for ``words`` (session key, score), best first (ties: the
    lower key first). The candidates are the sessions holding a word that is not common
    (:func:`common_limit`; every word when all are), and the sessions ``include`` names
    that hold any of them; common words add their weight to them."""
    n = max(found.sessions, 1)
    avg = found.mean_length or 1.0
    common = common_limit(n)
    posted = [(w, found.postings.get(w, ())) for w in words]
    weights = {w: idf(len(keys), n) for w, keys in posted}
    total = sum(weights.values()) or 1.0
    rare = [(w, keys) for w, keys in posted if 0 < len(keys) <= common]
    usual = [(w, keys) for w, keys in posted if len(keys) > common]
    covered: dict[int, float] = {}
    get = covered.get
    for word, keys in rare or usual:
        weight = weights[word]
        members = keys if isinstance(keys, (set, frozenset)) else set(keys)
        # (the keys new to ``covered`` taken whole; those it holds added one by one)
        for key in _among(covered, members):
            covered[key] += weight
        covered.update(dict.fromkeys(members.difference(covered), weight))
    if rare:
        for word, keys in usual:
            members = keys if isinstance(keys, (set, frozenset)) else set(keys)
            weight = weights[word]
            for key in _among(covered, members):
                covered[key] += weight
    extra = [key for key in include if key not in covered]
    if extra:  # scored by every word they hold, as the others are
        for word, keys in posted:
            members = keys if isinstance(keys, (set, frozenset)) else set(keys)
            weight = weights[word]
            for key in members.intersection(extra):
                covered[key] = get(key, 0.0) + weight
    lengths = found.lengths
    size = lengths.get
    # by presence first: bm25 = cover * (K1 + 1) / (1 + norm), times coverage ** power
    lift, slope, flat = K1 + 1.0, K1 * B / avg, K1 * (1.0 - B)
    # (negated, the smallest first; floats, not a tuple a session: compared in C, and nothing
    # for the garbage collector to walk)
    scores = [
        -cover * lift / (1.0 + flat + slope * size(key, 0)) * (cover / total) ** COVERAGE_POWER
        for key, cover in covered.items()
    ]
    best = _smallest(scores, list(covered), max(RERANK, limit))
    # then the best again, with how often each holds each word (as far as ``found`` says)
    held: list[tuple[float, Collection[int], list[Collection[int]]]] = [
        (
            weights[w],
            found.postings.get(w, ()),
            [found.postings.get(mark(w, n), ()) for n in TF_MARKS],
        )
        for w in words
    ]
    again: list[tuple[float, int]] = []
    for _negated, key in best:
        norm = flat + slope * size(key, 0)
        bm25 = 0.0
        for weight, holders, tiers in held:
            if key in holders:
                tf = 1 + sum(1 for tier in tiers if key in tier)
                bm25 += weight * tf * lift / (tf + norm)
        cover = covered[key]
        again.append((bm25 * (cover / total) ** COVERAGE_POWER, key))
    top = heapq.nsmallest(limit, again, key=lambda sk: (-sk[0], sk[1]))
    return [(key, score) for score, key in top]
