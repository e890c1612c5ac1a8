"""The lexical-recall experiment of the benchmark: coverage of the question's words over a
session, stemmed, with no single word required and no win by length."""

from __future__ import annotations

import pytest

from session_browser.bench.lexical_recall import LexicalRecall, RecallParams, spelling, stem, terms


def _msgs(*texts: str) -> list[dict[str, object]]:
    roles = ("user", "assistant")
    return [{"role": roles[i % 2], "content": t} for i, t in enumerate(texts)]


TARGET = _msgs(
    "I need a hotel room in London for one night, two rooms please.",
    "Abercorn House is a one star hotel. Booked 2 rooms for 1 night.",
)
OTHER = _msgs("Find me a flight from Atlanta to London.", "Delta has one at 8 am.")
# a long session that holds the question's words here and there among thousands of others
# (a screenplay, a statistics dump)
HUB = _msgs(
    *(
        f"scene {i}: act{i} line{i} prop{i} cue{i} stage{i} light{i} "
        + ("the cheap hotel in london, rooms booked for the night, a star " if i % 20 == 0 else "")
        for i in range(400)
    )
)


def _index(params: RecallParams | None = None) -> LexicalRecall:
    sessions = [("hub", HUB), ("target", TARGET), ("other", OTHER)]
    sessions += [(f"filler-{i}", _msgs(f"weather in town {i}", "sunny")) for i in range(40)]
    return LexicalRecall.build(sessions, params)


def test_stemming_and_spelling() -> None:
    assert {stem(w) for w in ("booked", "booking", "books", "book")} == {"book"}
    assert stem("cities") == "city"
    assert stem("shopping") == "shop"
    assert stem("dialogues") == stem("dialogue") == "dialogue"
    assert stem("boxes") == "box"
    assert stem("class") == "class"
    assert stem("2019") == "2019"
    assert spelling("favourite") == "favorite"
    assert stem(spelling("theatre")) == stem(spelling("theater"))
    # stop and question words are no terms
    assert terms("What did we decide about the cheap hotels?") == ["cheap", "hotel"]


def test_the_hub_does_not_win_by_length() -> None:
    question = "that cheap one star hotel in London where I booked two rooms for a night"
    assert _index().search(question, 3)[0] == "target"
    # without length normalisation and with unsaturated term counts the hub would win
    assert _index(RecallParams(k1=50.0, b=0.0)).search(question, 3)[0] == "hub"


def test_no_word_is_required_and_stems_match() -> None:
    recall = _index()
    # "Mayfair" is in no session: it costs its own weight, nothing more
    assert recall.search("booking two hotel rooms in Mayfair London", 1) == ["target"]
    # "bookings" and "nights" reach "Booked" and "night" only through the stemmer
    assert recall.search("bookings nights", 1) == ["target"]
    assert _index(RecallParams(stemming=False)).search("bookings nights", 1) == []
    assert recall.search("what did we say about it", 5) == []


def test_windows_score_the_best_stretch() -> None:
    params = RecallParams(window=2, stride=1, session_weight=0.0)
    long_target = _msgs(
        *(f"small talk about the weather number {i}" for i in range(20)),
        "book two rooms at a hotel in London",
        "done, two rooms for one night",
    )
    sessions = [("long", long_target), ("other", OTHER)]
    recall = LexicalRecall.build(sessions, params)
    assert recall.search("London hotel rooms", 2)[0] == "long"
    # 22 turns: 21 windows of 2 (one every turn); the 2-turn session: 1
    assert len(recall.windows.lengths) == 22


def test_one_message_holding_every_word() -> None:
    recall = LexicalRecall.build([("target", TARGET), ("other", OTHER)], messages=True)
    assert recall.one_message_holds_all("booked rooms, one night")
    assert recall.one_message_holds_all("Hotels in LONDON")
    # both words are in the session, but in different messages
    assert not recall.one_message_holds_all("Abercorn London")
    assert not recall.one_message_holds_all("Mayfair hotel")
    assert not recall.one_message_holds_all("what about it")
    with pytest.raises(ValueError, match="without messages"):
        _index().one_message_holds_all("hotel")
