"""A transcript record's time read without building the UTC datetime is the one
:func:`utc_datetime` gives, at the range's edges and for what it refuses too."""

from __future__ import annotations

import pytest

from session_browser.core.model import iso_epoch, utc_datetime

CASES = [
    "2018-05-05T21:01:14.000Z",
    "2020-01-01T10:00:00+05:30",
    " 2020-01-01T00:00:00 ",
    "2020-01-01",
    "0001-01-01T00:00:00+14:00",  # no UTC equivalent
    "9999-12-31T23:59:59-14:00",
    "0001-01-01T23:59:59-00:01",
    "0001-01-02T00:00:00Z",
    "9999-12-30T00:00:00Z",
    "9999-12-30T00:00:01Z",
    "2020-13-01",
    "bad",
    "",
    "2020-01-01T00:00:00Z" + " " * 60,
    1.7e9,
    float("nan"),
    True,
    None,
]


@pytest.mark.parametrize("value", CASES)
def test_iso_epoch_is_the_utc_datetimes_epoch(value: object) -> None:
    found = utc_datetime(value)
    assert iso_epoch(value) == (None if found is None else found.timestamp())
