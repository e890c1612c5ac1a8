"""The query language: parsing, quoting for FTS5, and clear errors for bad filter values."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_browser.core.query import (
    QueryError,
    Term,
    fold,
    fts_expr,
    highlight_terms,
    like_pattern,
    parse_query,
    tokenize,
)


def labels(terms: list[Term]) -> list[str]:
    return [t.label for t in terms]


def test_words_phrases_exclusions_prefixes() -> None:
    pq = parse_query('hotel "grand plaza" -paris book*')
    assert labels(pq.terms) == ["hotel", '"grand plaza"', "book*"]
    assert labels(pq.excluded) == ["paris"]
    assert pq.terms[2].prefix
    assert pq.words == "hotel grand plaza book"


def test_filters_parse() -> None:
    pq = parse_query(
        'role:User since:2026-01-31 until:2026-02-01 session:abc source:CLI agent:"My Bot" '
        "archived:yes x"
    )
    assert pq.role == "user"
    assert pq.since == datetime(2026, 1, 31, tzinfo=UTC).timestamp()
    assert pq.until == datetime(2026, 2, 2, tzinfo=UTC).timestamp()  # the whole day
    assert pq.session == "abc"
    assert pq.source == "cli"
    assert pq.agent == "My Bot"
    assert pq.archived is True
    assert labels(pq.terms) == ["x"]
    assert parse_query("archived:no").archived is False


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("role:robot", "role: expects one of"),
        ("since:someday", "since: expects a date"),
        ("until:2026-13-40", "until: expects a date"),
        ("archived:maybe", "archived: expects yes or no"),
        ("role:", "role: needs a value"),
        ("since:2026-02-01 until:2026-01-01", "not before until"),
    ],
)
def test_bad_filter_values_are_clear_errors(query: str, fragment: str) -> None:
    with pytest.raises(QueryError, match=fragment):
        parse_query(query)
    assert issubclass(QueryError, ValueError)


def test_unknown_keys_and_punctuation_are_words() -> None:
    assert labels(parse_query("http://example.com").terms) == ['"http example com"']
    assert labels(parse_query("error:timeout").terms) == ['"error timeout"']
    assert labels(parse_query("foo_bar").terms) == ['"foo bar"']


@pytest.mark.parametrize(
    "query",
    ['"', "-", "*", "**", "-*", ":", '""', "()", '-"', "role", "NEAR(", "😀", "\x00\x1b[31m"],
)
def test_lone_symbols_parse_to_nothing_or_words(query: str) -> None:
    pq = parse_query(query)
    for term in pq.terms + pq.excluded:
        assert term.tokens and all(t.isalnum() for t in term.tokens)


def test_fts_expression_quotes_every_token() -> None:
    pq = parse_query('NEAR(a b) AND OR NOT "x" -y zz*')
    expr = fts_expr(pq.terms, excluded=pq.excluded)
    assert expr == '("near a" OR "b" OR "and" OR "or" OR "not" OR "x" OR "zz"*) NOT ("y")'


def test_unclosed_quote_runs_to_the_end() -> None:
    pq = parse_query('a "b c')
    assert labels(pq.terms) == ["a", '"b c"']


def test_short_prefix_is_a_plain_word() -> None:
    term = parse_query("a*").terms[0]
    assert not term.prefix and term.tokens == ("a",)


def test_fold_and_tokenize_match_the_index() -> None:
    assert fold("Café ÉCOLE") == "cafe ecole"
    assert tokenize("Hello, wörld_2!") == ["hello", "world", "2"]


def test_occurrences_words_phrases_prefixes() -> None:
    toks = tokenize("the grand hotel and the grand plaza, grandiose")
    assert parse_query("grand").terms[0].occurrences(toks) == 2
    assert parse_query('"the grand"').terms[0].occurrences(toks) == 2
    assert parse_query('"grand plaza"').terms[0].occurrences(toks) == 1
    assert parse_query("grand*").terms[0].occurrences(toks) == 3
    assert parse_query('"hotel plaza"').terms[0].occurrences(toks) == 0


def test_like_pattern_escapes_wildcards() -> None:
    term = Term(tokens=("50", "off"), raw="50% off")
    assert like_pattern(term) == "%50%off%"
    assert like_pattern(Term(tokens=("a_b",), raw="a_b")) == "%a\\_b%"


def test_huge_query_is_capped() -> None:
    pq = parse_query(" ".join(f"w{i}" for i in range(500)))
    assert len(pq.terms) == 32
    assert pq.warnings


_WORDS = ["a", "ab", "abc", "foo", "bar", "é", "Ü", "x1", "1", "the", "aa", "ⅷ", "²", "٣", "ß"]
_SEPS = [" ", "  ", "_", "-", ". ", ",", "\n", "é", "1", "", "²", "'"]


@given(
    parts=st.lists(st.tuples(st.sampled_from(_WORDS), st.sampled_from(_SEPS)), max_size=14),
    query=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3),
    star=st.booleans(),
)
@settings(max_examples=400, deadline=None)
def test_count_in_equals_counting_tokens(
    parts: list[tuple[str, str]], query: list[str], star: bool
) -> None:
    """The scorer's substring-and-boundary count is the token count, for words, phrases
    and prefixes, whatever the separators, case, digits and diacritics."""
    text = "".join(w + s for w, s in parts)
    pq = parse_query('"' + " ".join(query) + '"' + ("*" if star else ""))
    for term in pq.terms:
        assert term.count_in(fold(text)) == term.occurrences(tokenize(text))
        assert term.count_in(fold(text)) == len(term.pattern.findall(fold(text)))


def test_extreme_and_impossible_dates() -> None:
    assert parse_query("since:0001-01-01 x").since == datetime(1, 1, 1, tzinfo=UTC).timestamp()
    # The last representable day has no next day: the bound is clamped, not an error.
    end = parse_query("until:9999-12-31 x").until
    assert end is not None and end >= datetime(9999, 12, 31, 23, 59, tzinfo=UTC).timestamp()
    for bad in ("since:99999-01-01", "until:2026-02-30", "until:9999-12-31T99:00"):
        with pytest.raises(QueryError, match="expects a date"):
            parse_query(bad)


def test_highlight_terms_are_the_query_words_never_filter_values() -> None:
    from session_browser.core.query import highlight_terms

    assert highlight_terms("archived:yes source:pi billing") == ["billing"]
    assert highlight_terms('agent:"my bot" role:user "card data" export* -stripe') == [
        "card data",
        "export",
    ]
    assert highlight_terms("since:2026-13-99 word") == ["word"]  # a bad value is no word
    assert highlight_terms("foo AND bar OR (baz) foo") == ["foo", "bar", "baz"]
    assert highlight_terms("unknown:key") == ["unknown:key"]  # not a filter: words
    assert highlight_terms("archived:yes") == [] and highlight_terms("") == []


# ---------------------------------------------------------------- relative dates

_NOW = datetime(2026, 3, 10, 15, 30, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("query", "since", "until"),
    [
        ("since:7d", _NOW - 7 * 86400, None),
        ("since:12h", _NOW - 12 * 3600, None),
        ("since:2w", _NOW - 14 * 86400, None),
        ("since:30m", _NOW - 1800, None),
        ("until:1D", None, _NOW - 86400),
        ("since:today", datetime(2026, 3, 10, tzinfo=UTC).timestamp(), None),
        ("since:Yesterday", datetime(2026, 3, 9, tzinfo=UTC).timestamp(), None),
        # until: a day word is the whole day, as a bare date
        ("until:yesterday", None, datetime(2026, 3, 10, tzinfo=UTC).timestamp()),
        ("until:today", None, datetime(2026, 3, 11, tzinfo=UTC).timestamp()),
        (
            "since:yesterday until:today x",
            datetime(2026, 3, 9, tzinfo=UTC).timestamp(),
            datetime(2026, 3, 11, tzinfo=UTC).timestamp(),
        ),
    ],
)
def test_relative_dates(query: str, since: float | None, until: float | None) -> None:
    pq = parse_query(query, now=_NOW)
    assert (pq.since, pq.until) == (since, until)


def test_relative_dates_count_from_the_clock() -> None:
    import time

    before = time.time()
    since = parse_query("since:1d").since
    assert since is not None and before - 86400 <= since <= time.time() - 86400


@pytest.mark.parametrize("value", ["7", "d7", "7y", "-3d", "1234567d", "tomorrow"])
def test_bad_relative_dates_say_what_is_expected(value: str) -> None:
    with pytest.raises(QueryError, match="or an age like 7d"):
        parse_query(f'since:"{value}"')


def _write(store: Path, session_id: str, stamp: float, text: str) -> None:
    iso = datetime.fromtimestamp(stamp, UTC).isoformat()
    data = {
        "session_id": session_id,
        "messages": [
            {"role": "user", "content": text, "timestamp": stamp},
            {"role": "assistant", "content": f"about {text}", "timestamp": stamp + 60},
        ],
        "created_at": iso,
        "updated_at": datetime.fromtimestamp(stamp + 60, UTC).isoformat(),
        "metadata": {"title": session_id},
        "archived_messages": [],
    }
    (store / f"{session_id}.json").write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize("indexed", [True, False], ids=["index", "scan"])
def test_relative_dates_mean_the_same_with_and_without_the_index(
    tmp_path: Path, indexed: bool
) -> None:
    import time

    from session_browser.core.stores import open_stores

    store = tmp_path / "home" / "sessions"
    store.mkdir(parents=True)
    now = time.time()
    _write(store, "fresh", now - 3600, "kumquat plan")
    _write(store, "week-old", now - 8 * 86400, "kumquat plan")
    group = open_stores([store], indexed=indexed)
    try:
        ranking = "relevance" if indexed else "classic"
        found = group.search_ex("kumquat since:2d", limit=10, ranking=ranking)
        assert found.error is None
        assert [h.session_id for h in found.hits] == ["fresh"]
        older = group.search_ex("kumquat until:3d", limit=10, ranking=ranking)
        assert [h.session_id for h in older.hits] == ["week-old"]
        both = group.search_ex("kumquat", limit=10, ranking=ranking)
        assert sorted(h.session_id for h in both.hits) == ["fresh", "week-old"]
        bad = group.search_ex("kumquat since:someday", limit=10, ranking=ranking)
        assert bad.error is not None and "since: expects a date" in bad.error
        assert not bad.hits
    finally:
        group.close()


@pytest.mark.parametrize(
    ("query", "key"),
    [('zebraword session:abc"', "session"), ('agent:q"q', "agent"), ('role:us"er"', "role")],
)
def test_a_quote_inside_a_filter_value_is_an_error(query: str, key: str) -> None:
    # never the filter silently dropped for words (which widens the result)
    with pytest.raises(QueryError, match=rf"{key}: a value holding a quote must be quoted"):
        parse_query(query)
    # a value quoted whole is one value; a quoted phrase after a word is words
    assert parse_query('agent:"q q" zebra').agent == "q q"
    assert [t.tokens for t in parse_query('zebra:"q q"').terms] == [("zebra", "q", "q")]
    assert highlight_terms(query) == [w for w in query.split() if ":" not in w]
