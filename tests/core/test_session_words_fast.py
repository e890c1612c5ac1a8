"""A session's recall words (:func:`~session_browser.core.search.lexical.session_words`) are
counted over the session's tokens at once; they are exactly those read message by message,
word by word: the same words, in the same first-seen order, the same marks and length."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from session_browser.core.search import lexical
from session_browser.core.search.lexical import SLICE, mark, session_words, slices, words_of


def message_by_message(texts: list[str]) -> tuple[list[str], int]:
    """The words as they were read before: each message (a long one in slices) on its own."""
    counts: Counter[str] = Counter()
    for text in texts:
        for part in (text,) if len(text) <= SLICE else slices(text):
            counts.update(words_of(part))
    marks = [mark(w, n) for w, c in counts.items() for n in lexical.TF_MARKS if c >= n]
    return [*counts, *marks], counts.total()


WORDS = (
    "booked booking books the colour theatre Cities reservations ΟΔΟΣ Σ ΣΑΣ ς café CAFÉ "
    "e\u0301 \u0301start ﬁle Ǆemal İstanbul K\u212a x 4 42 two nights under_score a-b "
    "don't 日本語 shopping dialogues 👍"
)
PIECES = [*WORDS.split(" "), "\n", " ", "\t", ".", ",", "!", "_", "\u00a0", "\u2028"]


def random_texts(rng: random.Random, messages: int) -> list[str]:
    out = []
    for _ in range(messages):
        n = rng.randint(0, 30)
        out.append("".join(rng.choice(PIECES) + rng.choice(["", " ", ""]) for _ in range(n)))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_the_words_of_random_sessions_are_those_read_message_by_message(seed: int) -> None:
    rng = random.Random(seed)
    texts = random_texts(rng, rng.randint(0, 40))
    assert session_words(texts) == message_by_message(texts)


def test_sigma_at_a_message_end_stays_final() -> None:
    # Folding is per message: a capital sigma ending one message and one starting the
    # next are not read as one word's middle.
    texts = ["ΟΔΟΣ", "ΑΣ", "ΣΑΣ ΟΔΟΣ", "Σ"]
    assert session_words(texts) == message_by_message(texts)


def test_long_messages_and_many_short_ones_around_them() -> None:
    rng = random.Random(7)
    short = random_texts(rng, 50)
    words = " ".join(rng.choice(PIECES) for _ in range(SLICE // 5))
    long = words + " tail" + ("z" * 300) + " end"  # past one slice, a long run at a cut
    many = [f"word{i} booking" for i in range(SLICE // 12)]  # more than a slice together
    texts = [*short, long, *short, *many, "x" * (SLICE - 1), *short, long[: SLICE + 1]]
    assert session_words(texts) == message_by_message(texts)


def test_words_of_nothing() -> None:
    assert session_words([]) == ([], 0) == message_by_message([])
    assert session_words(["", " ", "the a"]) == ([], 0)


def test_ascii_tokens_are_the_regex_ones() -> None:
    # Folded text that is ASCII is split without the regex: the same tokens, every ASCII
    # character included, and a capital that folding leaves ("ℂ" folds to "C").
    from session_browser.core.query.terms import _TOKEN_RE, fold, tokenize

    rng = random.Random(3)
    alphabet = [chr(c) for c in range(128)] + ["ℂ", "ﬁ", "é", "Ǆ", "ℌ"]
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert tokenize(text) == _TOKEN_RE.findall(fold(text))
    assert tokenize("ℂafé ﬁle_x") == ["Cafe", "file", "x"]
