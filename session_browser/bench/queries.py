"""Known-item queries: generated from a store's files with their known answers, and as the
harness runs them.

``make_queries(corpus)`` reads the store back (it needs nothing but the files) and derives
queries whose answer is known. Text is tokenized as lowercase ``\\w+`` words; document
frequency (``df``) counts *conversations* (a session id with its ``-copyN`` / ``-partN``
suffixes stripped), so copies and chain parts do not make a word look common. A word is *rare*
when it is alphabetic, 3+ letters long and its ``df`` is at most
``max(2, ceil(0.0005 * conversations))``; *common* when it is alphabetic, 4+ letters long and its
``df`` is at least ``max(3, ceil(0.02 * conversations))``. Targets are
user/assistant messages of sessions that are not corrupt and not automated, one query per
conversation at most. Slices:

* ``rare``: 2-3 rare alphabetic words of one active message, in message order, lowercase;
* ``phrase``: 3-5 consecutive words of one active message separated by single spaces, quoted
  with their original casing (``"..."``); the span holds a word with ``df`` <= 4x the rare limit;
* ``archived``: like ``rare``, from an archived turn of a compacted session;
* ``mixed``: one rare word plus one or two common words of the same message;
* ``casing``: a ``rare`` query in Title or UPPER case, different from the message's own casing;
* ``fragment``: 4-6 ordinary consecutive words of one active message (a sentence fragment typed
  from memory: unquoted, lowercase, no rare word, at least two words of 4+ letters).

Relevance is computed by brute force over every message of every readable session (archived
turns, the compaction summary and spilled turns included): a session is relevant when one of its
messages contains all the query words as tokens (for a phrase: the words consecutively). Every
other session of a lineage chain with such a session is relevant too (a chain is one
conversation). Queries are dropped when the token-based answer differs from a plain
case-insensitive substring scan (so engines matching substrings or tokens agree on the truth)
or when the relevant sessions span more than five conversations (copies of the target
conversation count once).
"""

from __future__ import annotations

import math
import random
import re
from array import array
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from session_browser.bench.corpus import CorpusInfo
from session_browser.bench.sessions import (
    WORD_RE,
    JSONDict,
    conversation_key,
    is_automated,
    load_session,
    read_spills,
    session_messages,
    tokenize,
)
from session_browser.core import recall

SLICES = ("rare", "phrase", "archived", "mixed", "casing", "fragment")
MAX_RELEVANT_CONVERSATIONS = 5
_MAX_SUBSTRING_CANDIDATES = 20000
_TRIES_PER_SESSION = 6


@dataclass
class KnownItem:
    """A query with its known answer.

    ``target_index`` indexes the target session's ``archived_messages + messages``; ``terms``
    are the lowercase query words (in order; for a phrase, the phrase's words).
    """

    query: str
    relevant: set[str]
    slice: str
    target_id: str
    target_index: int
    terms: tuple[str, ...] = ()
    conversations: int = 1  # distinct source conversations among ``relevant``


class MessageIndex:
    """Every readable message of a store, lowercased, with token postings and conversation df."""

    def __init__(self, sessions_dir: Path, spill_dir: Path | None) -> None:
        self.ids: list[str] = []
        self.paths: list[Path] = []
        self.conv: list[str] = []
        self.lineage: list[str | None] = []
        self.n_archived: list[int] = []
        self.automated: list[bool] = []
        self.corrupt: list[str] = []
        self.text: list[str] = []
        self.msg_session: array[int] = array("I")
        self.postings: dict[str, array[int]] = {}
        self.df: dict[str, int] = {}
        self.members: dict[str, set[str]] = {}

        spilled = read_spills(spill_dir)
        entries = sorted((conversation_key(p.stem), p.stem, p)
                         for p in Path(sessions_dir).glob("*.json"))
        current: str | None = None
        conv_tokens: set[str] = set()
        for conv, stem, path in entries:
            data = load_session(path)
            if data is None:
                self.corrupt.append(stem)
                continue
            if conv != current:
                self._count(conv_tokens)
                conv_tokens = set()
                current = conv
            sid = str(data.get("session_id") or stem)
            index = len(self.ids)
            messages = session_messages(data)
            self.ids.append(sid)
            self.paths.append(path)
            self.conv.append(conv)
            lineage = recall.lineage_key(data)
            self.lineage.append(lineage)
            if lineage is not None:
                self.members.setdefault(lineage, set()).add(sid)
            self.n_archived.append(
                sum(isinstance(m, dict) for m in data.get("archived_messages") or []))
            self.automated.append(is_automated(data, messages))
            for msg in [*messages, *spilled.get(sid, [])]:
                content = msg.get("content")
                low = content.lower() if isinstance(content, str) else ""
                tokens = set(WORD_RE.findall(low))
                mid = len(self.text)
                self.text.append(low)
                self.msg_session.append(index)
                for token in tokens:
                    plist = self.postings.get(token)
                    if plist is None:
                        plist = self.postings[token] = array("I")
                    plist.append(mid)
                conv_tokens |= tokens
        self._count(conv_tokens)
        self.n_conv = len(set(self.conv))
        self.vocab = sorted(self.postings)
        self.blob = "\n".join(self.vocab)
        self.starts: list[int] = []
        pos = 0
        for word in self.vocab:
            self.starts.append(pos)
            pos += len(word) + 1

    def _count(self, tokens: set[str]) -> None:
        for token in tokens:
            self.df[token] = self.df.get(token, 0) + 1

    def vocab_containing(self, needle: str) -> list[str]:
        """Vocabulary words that contain ``needle`` (a ``\\w+`` string) as a substring."""
        out: list[str] = []
        pos = self.blob.find(needle)
        while pos >= 0:
            i = bisect_right(self.starts, pos) - 1
            out.append(self.vocab[i])
            nxt = self.starts[i + 1] if i + 1 < len(self.starts) else len(self.blob)
            pos = self.blob.find(needle, nxt)
        return out

    def match(self, terms: Sequence[str], phrase: bool) -> set[int] | None:
        """Sessions with a message holding all terms (or the phrase); None if ambiguous."""
        anchor = min(terms, key=lambda t: (len(self.postings.get(t, ())), t))
        wanted = set(terms)
        by_token: set[int] = set()
        for mid in self.postings.get(anchor, ()):
            tokens = WORD_RE.findall(self.text[mid])
            ok = _has_run(tokens, terms) if phrase else wanted.issubset(tokens)
            if ok:
                by_token.add(self.msg_session[mid])
        candidates: set[int] = set()
        for word in self.vocab_containing(anchor):
            candidates.update(self.postings[word])
            if len(candidates) > _MAX_SUBSTRING_CANDIDATES:
                return None
        joined = " ".join(terms)
        by_substring: set[int] = set()
        for mid in candidates:
            text = self.text[mid]
            ok = joined in text if phrase else all(t in text for t in terms)
            if ok:
                by_substring.add(self.msg_session[mid])
        return by_token if by_token == by_substring else None

    def relevant_ids(self, sessions: set[int]) -> set[str]:
        """Session ids of ``sessions`` plus the rest of their lineage chains."""
        ids = {self.ids[s] for s in sessions}
        for s in sessions:
            lineage = self.lineage[s]
            if lineage is not None:
                ids |= self.members[lineage]
        return ids


def _has_run(tokens: Sequence[str], run: Sequence[str]) -> bool:
    k = len(run)
    first = run[0]
    for i in range(len(tokens) - k + 1):
        if tokens[i] == first and list(tokens[i:i + k]) == list(run):
            return True
    return False




_APOSTROPHES = frozenset({"'", "\u2019"})


def _wordlike(token: str) -> bool:
    return len(token) >= 3 and token.isalpha()


class _Builder:
    """Turns a target message into a query of one slice (or None)."""

    def __init__(self, index: MessageIndex) -> None:
        self.index = index
        self.rare_max = max(2, math.ceil(0.0005 * index.n_conv))
        self.common_min = max(3, math.ceil(0.02 * index.n_conv))

    def _df(self, token: str) -> int:
        return self.index.df.get(token, 0)

    def _rare(self, tokens: Sequence[str]) -> list[str]:
        seen: dict[str, None] = {}
        for t in tokens:
            if _wordlike(t) and self._df(t) <= self.rare_max:
                seen.setdefault(t, None)
        return list(seen)

    def build(self, slice_: str, content: str,
              rng: random.Random) -> tuple[str, tuple[str, ...]] | None:
        """``(query, terms)`` for a message, or None when it has no suitable words."""
        tokens = tokenize(content)
        position = {t: i for i, t in reversed(list(enumerate(tokens)))}
        if slice_ in ("rare", "archived", "casing"):
            rare = self._rare(tokens)
            if len(rare) < 2:
                return None
            chosen = rng.sample(rare, min(len(rare), rng.choice((2, 3))))
            chosen.sort(key=position.__getitem__)
            if slice_ != "casing":
                return " ".join(chosen), tuple(chosen)
            return self._recase(content, chosen, rng)
        if slice_ == "mixed":
            rare = self._rare(tokens)
            common = list(dict.fromkeys(
                t for t in tokens
                if len(t) >= 4 and t.isalpha() and self._df(t) >= self.common_min))
            if not rare or not common:
                return None
            chosen = [rng.choice(rare), *rng.sample(common, min(len(common),
                                                                 rng.choice((1, 2))))]
            chosen.sort(key=position.__getitem__)
            return " ".join(chosen), tuple(chosen)
        if slice_ == "phrase":
            return self._phrase(content, rng)
        if slice_ == "fragment":
            return self._fragment(content, rng)
        raise ValueError(f"unknown slice {slice_!r}")

    def _recase(self, content: str, chosen: list[str],
                rng: random.Random) -> tuple[str, tuple[str, ...]] | None:
        surface: dict[str, str] = {}
        for match in WORD_RE.finditer(content):
            surface.setdefault(match.group().lower(), match.group())
        original = " ".join(surface.get(t, t) for t in chosen)
        styles = ["title", "upper"]
        rng.shuffle(styles)
        for style in styles:
            words = [t.upper() if style == "upper" else t.capitalize() for t in chosen]
            query = " ".join(words)
            if query not in (original, " ".join(chosen)) and tokenize(query) == chosen:
                return query, tuple(chosen)
        return None

    def _phrase(self, content: str, rng: random.Random) -> tuple[str, tuple[str, ...]] | None:
        limit = self.rare_max * 4

        def span(run: list[re.Match[str]]) -> tuple[int, int] | None:
            if min(self._df(w.group().lower()) for w in run) > limit:
                return None
            return run[0].start(), run[-1].end()

        chosen = _pick_span(content, [3, 4, 5], span, rng)
        if chosen is None:
            return None
        text = content[chosen[0]:chosen[1]]
        return f'"{text}"', tuple(tokenize(text))

    def _fragment(self, content: str,
                  rng: random.Random) -> tuple[str, tuple[str, ...]] | None:
        """4-6 ordinary consecutive words as typed from memory: unquoted, lowercase, no rare
        word among them, at least two of four letters or more."""

        def span(run: list[re.Match[str]]) -> tuple[int, int] | None:
            lower = [w.group().lower() for w in run]
            if not all(t.isalpha() for t in lower) or sum(len(t) >= 4 for t in lower) < 2:
                return None
            if min(self._df(t) for t in lower) <= self.rare_max:
                return None
            lo, hi = run[0].start(), run[-1].end()
            if content[lo - 1:lo] in _APOSTROPHES or content[hi:hi + 1] in _APOSTROPHES:
                return None  # half of "don't" is not a word anyone types
            return lo, hi

        chosen = _pick_span(content, [4, 5, 6], span, rng)
        if chosen is None:
            return None
        text = content[chosen[0]:chosen[1]].lower()
        return text, tuple(tokenize(text))


def _pick_span(
    content: str,
    lengths: list[int],
    span: Callable[[list[re.Match[str]]], tuple[int, int] | None],
    rng: random.Random,
) -> tuple[int, int] | None:
    """A run of consecutive words separated by single spaces, of one of ``lengths`` (tried in a
    seeded order), that ``span`` accepts: its ``(start, end)`` in ``content``, picked at random
    among those of the first length that has any."""
    words = list(WORD_RE.finditer(content))
    rng.shuffle(lengths)
    for length in lengths:
        spans: list[tuple[int, int]] = []
        for i in range(len(words) - length + 1):
            run = words[i:i + length]
            if any(content[a.end():b.start()] != " " for a, b in pairwise(run)):
                continue
            found = span(run)
            if found is not None:
                spans.append(found)
        if spans:
            return rng.choice(spans)
    return None


def make_queries(corpus: Path | CorpusInfo, *, n: int = 200, seed: int = 7) -> list[KnownItem]:
    """Up to ``n`` known-item queries over a store, evenly over :data:`SLICES` (see module doc).

    ``corpus`` is a :class:`CorpusInfo`, a sessions dir, or a home holding ``sessions/``.
    Spill files are read from ``<sessions dir>/../state/session_spill``. Deterministic.
    """
    if isinstance(corpus, CorpusInfo):
        sessions_dir, spill_dir = corpus.sessions_dir, corpus.spill_dir
    else:
        sessions_dir = Path(corpus)
        if (sessions_dir / "sessions").is_dir():
            sessions_dir = sessions_dir / "sessions"
        spill_dir = sessions_dir.parent / "state" / "session_spill"
    index = MessageIndex(sessions_dir, spill_dir)
    builder = _Builder(index)
    quotas = {s: n // len(SLICES) + (i < n % len(SLICES)) for i, s in enumerate(SLICES)}
    used: set[str] = set()
    items: list[KnownItem] = []
    for slice_ in SLICES:
        rng = random.Random(f"session-browser-queries/{seed}/{slice_}")
        pool = [s for s in range(len(index.ids))
                if not index.automated[s] and (slice_ != "archived" or index.n_archived[s])]
        rng.shuffle(pool)
        got = 0
        for s in pool:
            if got >= quotas[slice_]:
                break
            if index.conv[s] in used:
                continue
            item = _make_item(index, builder, s, slice_, rng)
            if item is not None:
                items.append(item)
                used.add(index.conv[s])
                got += 1
    return items


def _make_item(index: MessageIndex, builder: _Builder, s: int, slice_: str,
               rng: random.Random) -> KnownItem | None:
    data = load_session(index.paths[s])
    if data is None:
        return None
    messages = session_messages(data)
    archived = index.n_archived[s]
    positions = [
        i for i, m in enumerate(messages)
        if m.get("role") in ("user", "assistant") and isinstance(m.get("content"), str)
        and (i < archived if slice_ == "archived" else i >= archived)
    ]
    rng.shuffle(positions)
    for pos in positions[:_TRIES_PER_SESSION]:
        built = builder.build(slice_, str(messages[pos]["content"]), rng)
        if built is None:
            continue
        query, terms = built
        hits = index.match(terms, phrase=slice_ == "phrase")
        if hits is None or s not in hits:
            continue
        relevant = index.relevant_ids(hits)
        convs = len({conversation_key(i) for i in relevant})
        if convs > MAX_RELEVANT_CONVERSATIONS:
            continue
        return KnownItem(query, relevant, slice_, index.ids[s], pos, terms, convs)
    return None


# --------------------------------------------------------------------------------------------
# as the harness runs them


@dataclass
class Query:
    """A known-item query as the harness uses it."""

    query: str
    relevant: list[str]
    slice: str
    target_id: str = ""
    n: int = 0  # position in the query list

    def to_json(self) -> JSONDict:
        return {
            "n": self.n,
            "query": self.query,
            "relevant": self.relevant,
            "slice": self.slice,
            "target_id": self.target_id,
        }

    @classmethod
    def from_json(cls, data: JSONDict) -> Query:
        return cls(
            query=str(data["query"]),
            relevant=[str(x) for x in data["relevant"]],
            slice=str(data.get("slice", "")),
            target_id=str(data.get("target_id", "")),
            n=int(data.get("n", 0)),
        )



def common_queries(top_words: Sequence[str]) -> list[str]:
    """The most frequent words alone, then each with the next one (a ring of pairs)."""
    singles = list(top_words)
    if len(singles) < 2:
        return singles
    pairs = [f"{singles[i]} {singles[(i + 1) % len(singles)]}" for i in range(len(singles))]
    return singles + pairs


def peer_subset(items: Sequence[Query], n: int) -> list[Query]:
    """``n`` queries taken round-robin over the slices (deterministic)."""
    by_slice: dict[str, list[Query]] = {}
    for q in items:
        by_slice.setdefault(q.slice, []).append(q)
    out: list[Query] = []
    queues = [list(v) for _, v in sorted(by_slice.items())]
    while len(out) < n and any(queues):
        for queue in queues:
            if queue and len(out) < n:
                out.append(queue.pop(0))
    return out


def peer_common_subset(queries: Sequence[str], n: int) -> list[str]:
    """Half singles, half pairs of the common-word queries."""
    half = len(queries) // 2
    singles, pairs = list(queries[:half]), list(queries[half:])
    take_single = (n + 1) // 2
    return singles[:take_single] + pairs[: n - take_single]

