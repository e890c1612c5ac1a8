"""An experiment, not product code: lexical recall of a session from a question in other words.

Candidates are the sessions holding any content word of the question (an OR; stop and question
words aside, :data:`~session_browser.bench.stop_words.STOP_WORDS`), each word reduced by a light
suffix stemmer (:func:`stem`). A session is scored by weighted coverage of the question's words,
BM25-class, twice:

* over the whole session (its user, assistant and system turns);
* over windows of ``window`` consecutive turns (every ``stride`` turns), keeping the best window:
  a question is usually about one stretch of a conversation.

The score is ``session_weight * session + (1 - session_weight) * best_window``. A term's
weight is its BM25 idf over sessions (over windows for the window part); term frequency
saturates quickly (``k1``) and length is normalised (``b``), so a long "hub" session that holds
many words many times does not win by length; the BM25 sum is multiplied by the share of the
question's idf weight the session covers, to the power ``coverage_power``. No word is required:
one absent word only costs its own weight.

Measured on the tune half of the question set at 30,000 sessions (the defaults are the best of
that grid): stemming adds about 4 points of Recall@10 over the same BM25 without it; windows of
turns (2, 4 or 6 turns) lower both Rank@1 and Recall@10 at every weight tried (a question is
about the gist of the whole session more often than about one stretch of it), so the default
scores the session only; weighing rare words more (idf squared) lowers both; the coverage factor
(power 0.5) adds about 3 points of Recall@10.

Alone, the method answers known-item queries (the session's own words) worse than our search
(quoted phrases and sentence fragments of common words most of all), and fusing the two rankings
by reciprocal rank lets our search's hub sessions back into the first place. Gated, it keeps
both: when one message holds every content word of the question (:meth:`one_message_holds_all`)
our search answers, as today; otherwise this coverage ranking does (the ``gated`` engine of
``bench --questions``).

Everything is in memory, plain Python: postings are per term arrays of (row, tf). It is here to
measure what works (``session-browser bench --questions`` with the ``recall`` engine, and
:func:`run_grid`) before the method moves into the search core.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from session_browser.bench.sessions import JSONDict, tokenize
from session_browser.bench.stop_words import STOP_WORDS
from session_browser.core.search.lexical import spelling, stem


def terms(text: str, stemming: bool = True) -> list[str]:
    """The content words of a text, spelling folded and stemmed, in order (repeats kept)."""
    words = [t for t in tokenize(text) if len(t) > 1 and t not in STOP_WORDS]
    return [stem(spelling(t)) for t in words] if stemming else words


@dataclass(frozen=True)
class RecallParams:
    """The knobs of the method."""

    k1: float = 0.6
    b: float = 0.9
    window: int = 0  # turns per window; 0: no window part
    stride: int = 2
    session_weight: float = 1.0
    stemming: bool = True
    idf_power: float = 1.0  # > 1 weighs rare words more against common ones
    coverage_power: float = 0.5  # > 0 favours sessions covering more of the question


class _Bm25:
    """BM25 over rows (sessions or windows): per-term postings of (row, tf), row lengths."""

    def __init__(self) -> None:
        self.post_rows: dict[str, array[int]] = {}
        self.post_tf: dict[str, array[int]] = {}
        self.lengths: array[int] = array("I")
        self.owner: array[int] = array("I")  # the session of each row

    def add(self, owner: int, words: Sequence[str]) -> None:
        row = len(self.lengths)
        self.lengths.append(len(words))
        self.owner.append(owner)
        for word, tf in Counter(words).items():
            rows = self.post_rows.get(word)
            if rows is None:
                rows = self.post_rows[word] = array("I")
                self.post_tf[word] = array("I")
            rows.append(row)
            self.post_tf[word].append(tf)

    def finish(self) -> None:
        n = len(self.lengths)
        self.avg = (sum(self.lengths) / n) if n else 1.0

    def best_by_owner(
        self,
        words: Sequence[str],
        k1: float,
        b: float,
        idf_power: float = 1.0,
        coverage_power: float = 0.0,
    ) -> dict[int, float]:
        """BM25 of every row holding a word, times the share of the question's idf weight the
        row covers to the power ``coverage_power``, reduced to the best row of each session."""
        n = len(self.lengths)
        scores: dict[int, float] = {}
        covered: dict[int, float] = {}
        total = 0.0
        lengths, avg = self.lengths, self.avg or 1.0
        for word in words:
            rows = self.post_rows.get(word)
            df = 0 if rows is None else len(rows)
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5)) ** idf_power
            total += idf
            if rows is None:
                continue
            tfs = self.post_tf[word]
            for row, tf in zip(rows, tfs, strict=True):
                norm = k1 * (1.0 - b + b * lengths[row] / avg)
                scores[row] = scores.get(row, 0.0) + idf * tf * (k1 + 1.0) / (tf + norm)
                covered[row] = covered.get(row, 0.0) + idf
        if coverage_power and total:
            for row in scores:
                scores[row] *= (covered[row] / total) ** coverage_power
        best: dict[int, float] = {}
        owner = self.owner
        for row, score in scores.items():
            s = owner[row]
            if score > best.get(s, 0.0):
                best[s] = score
        return best


class LexicalRecall:
    """The experiment's index over a store's sessions (see the module doc)."""

    def __init__(self, params: RecallParams | None = None) -> None:
        self.params = params or RecallParams()
        self.ids: list[str] = []
        self.sessions = _Bm25()
        self.windows = _Bm25()
        self.messages: _Bm25 | None = None

    @classmethod
    def build(
        cls,
        sessions: Iterable[tuple[str, Sequence[JSONDict]]],
        params: RecallParams | None = None,
        *,
        messages: bool = False,
    ) -> LexicalRecall:
        """Index ``(session id, messages)`` pairs; with ``messages``, every message too (for
        :meth:`one_message_holds_all`)."""
        self = cls(params)
        p = self.params
        if messages:
            self.messages = _Bm25()
        for sid, msgs in sessions:
            index = len(self.ids)
            self.ids.append(sid)
            turns = [
                terms(m["content"], p.stemming)
                for m in msgs
                if isinstance(m.get("content"), str) and m.get("role") != "tool"
            ]
            self.sessions.add(index, [w for t in turns for w in t])
            if self.messages is not None:
                for turn in turns:
                    self.messages.add(index, turn)
            if p.window > 0:
                last = max(1, len(turns) - p.window + 1)
                for start in range(0, last, max(1, p.stride)):
                    chunk = turns[start : start + p.window]
                    self.windows.add(index, [w for t in chunk for w in t])
        self.sessions.finish()
        self.windows.finish()
        return self

    def one_message_holds_all(self, query: str) -> bool:
        """Whether one message holds every content word of ``query`` (needs ``messages``)."""
        if self.messages is None:
            raise ValueError("built without messages")
        post = self.messages.post_rows
        words = sorted(set(terms(query, self.params.stemming)), key=lambda w: len(post.get(w, ())))
        if not words or words[0] not in post:
            return False
        rows = set(post[words[0]])
        for word in words[1:]:
            rows.intersection_update(post.get(word, ()))
            if not rows:
                return False
        return True

    def scores(self, query: str) -> dict[int, float]:
        """The combined score of every candidate session."""
        p = self.params
        words = list(dict.fromkeys(terms(query, p.stemming)))
        if not words:
            return {}
        whole = self.sessions.best_by_owner(words, p.k1, p.b, p.idf_power, p.coverage_power)
        if p.window <= 0 or p.session_weight >= 1.0:
            return whole
        parts = self.windows.best_by_owner(words, p.k1, p.b, p.idf_power, p.coverage_power)
        w = p.session_weight
        out: dict[int, float] = {}
        for s in whole.keys() | parts.keys():
            out[s] = w * whole.get(s, 0.0) + (1.0 - w) * parts.get(s, 0.0)
        return out

    def search(self, query: str, limit: int = 10) -> list[str]:
        """The ``limit`` best sessions (ties: the earlier indexed first)."""
        scored = self.scores(query)
        top = heapq.nsmallest(limit, scored.items(), key=lambda kv: (-kv[1], kv[0]))
        return [self.ids[s] for s, _ in top]
