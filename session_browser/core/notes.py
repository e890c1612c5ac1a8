"""Warnings that cross layers: the text every front end prints, with a stable code that code
tests instead of the wording.

A :class:`Note` is a ``str`` (so it prints, compares, joins and serialises as its text, and a
plain string is still a warning) that also carries ``code``. :func:`code_of` gives the code of
any warning (None for a plain string).
"""

from __future__ import annotations

from typing import Any

FUZZY = "fuzzy"  # no exact match: close spellings were searched
INDEXING = "indexing"  # a build runs: the sessions it has not indexed yet were not all searched
INDEX_FAILED = "index-failed"  # a build stopped on an error
INDEX_BROKEN = "index-broken"  # the index cannot be used: the files are searched
INDEX_BUSY = "index-busy"  # another process holds the index: results may be stale
SEARCH_FAILED = "search-failed"  # the index failed during one search
NOTHING_SEARCHABLE = "nothing-searchable"  # no letters or digits were typed
TERMS_CAPPED = "terms-capped"  # only the first terms of a long query are used
COMMON_WORDS = "common-words"  # very common words: the newest matches were ranked
WHY_EMPTY = "why-empty"  # nothing matched; what leaving a part out would find


class Note(str):
    """A warning's text with its ``code``."""

    code: str

    def __new__(cls, code: str, text: str) -> Note:
        note = super().__new__(cls, text)
        note.code = code
        return note

    def __reduce__(self) -> tuple[Any, ...]:
        return (Note, (self.code, str(self)))


def code_of(warning: str) -> str | None:
    """The code of ``warning`` (None for a warning given as a plain string)."""
    return warning.code if isinstance(warning, Note) else None
