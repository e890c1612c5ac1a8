"""Saved searches: kept by name, replaced by name, deleted; a bad file is never written over."""

from __future__ import annotations

from pathlib import Path

import pytest

from session_browser.core.saved_searches import (
    SavedSearch,
    SavedSearchesError,
    delete_search,
    load_saved,
    save_search,
)


def test_save_replace_delete(tmp_path: Path) -> None:
    path = tmp_path / "data" / "saved-searches.json"
    assert load_saved(path) == []
    save_search("billing", "chargefox", path)
    save_search("pg", "tenant_id role:user", path)
    save_search("billing", "stripe -card", path)  # the same name: replaced, kept last
    assert load_saved(path) == [
        SavedSearch("pg", "tenant_id role:user"),
        SavedSearch("billing", "stripe -card"),
    ]
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert delete_search("pg", path) == [SavedSearch("billing", "stripe -card")]
    assert load_saved(path) == [SavedSearch("billing", "stripe -card")]
    with pytest.raises(ValueError):
        save_search("  ", "x", path)
    with pytest.raises(ValueError):
        save_search("two\nlines", "x", path)


@pytest.mark.parametrize("text", ['{"searches": [', "[1, 2]", '{"searches": 3}'])
def test_a_bad_file_is_an_error_and_stays_as_it_was(tmp_path: Path, text: str) -> None:
    path = tmp_path / "saved-searches.json"
    path.write_text(text)
    with pytest.raises(SavedSearchesError):
        load_saved(path)
    with pytest.raises(SavedSearchesError):
        save_search("x", "y", path)
    assert path.read_text() == text
