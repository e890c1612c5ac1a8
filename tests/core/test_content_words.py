"""The content words of a text, read through the table of tokens seen before, are those the
stop list and the stemmer give, the first time and every time after (and when the table is
full)."""

from __future__ import annotations

import pytest

from session_browser.core.search import lexical
from session_browser.core.search.lexical import STOP_WORDS, content_words, reduced, tokenize

TEXT = (
    "I booked the reservations for Cities and the theatre, a colour booking; shopping books "
    "x y 42 we decided the favourite dialogues boxes 2024 booking booked the the"
)


def expected(tokens: list[str]) -> list[str]:
    return [reduced(t) for t in tokens if len(t) > 1 and t not in STOP_WORDS]


@pytest.mark.parametrize("room", [0, 3, 1 << 18])
def test_content_words_are_the_stemmed_non_stop_words(
    room: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lexical, "_CONTENT", {})
    monkeypatch.setattr(lexical, "_CONTENT_MAX", room)
    tokens = tokenize(TEXT)
    first = content_words(tokens)
    assert first == expected(tokens) == content_words(tokens)
    assert "book" in first and "the" not in first and "x" not in first
    assert len(lexical._CONTENT) <= room
    assert content_words(tokens, stemming=False) == [
        t for t in tokens if len(t) > 1 and t not in STOP_WORDS
    ]
