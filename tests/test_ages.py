"""One relative-age rule for the command line and the app: same unit, same number, same
cut-offs; the app writes it compactly (``3d ago``), the command line in words."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from session_browser.cli.common import when_text as cli_when
from session_browser.core.text import relative_age
from session_browser.tui.common.render import age_text, when_text

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

CASES = [
    (-3600.0, "in the future", "in the future"),
    (-30.0, "just now", "just now"),  # a clock a little ahead is not the future
    (0.0, "just now", "just now"),
    (59.0, "just now", "just now"),
    (60.0, "1m ago", "1 minute ago"),
    (3 * 3600 + 59 * 60, "3h ago", "3 hours ago"),
    (86400.0, "1d ago", "1 day ago"),
    (40 * 86400.0, "1mo ago", "1 month ago"),
    (800 * 86400.0, "2y ago", "2 years ago"),
]


@pytest.mark.parametrize(("seconds", "short", "words"), CASES)
def test_one_rule_two_spellings(seconds: float, short: str, words: str) -> None:
    assert relative_age(seconds) == short
    assert relative_age(seconds, words=True) == words


@pytest.mark.parametrize(("seconds", "short", "words"), CASES)
def test_the_app_and_the_command_line_agree(seconds: float, short: str, words: str) -> None:
    when = NOW - timedelta(seconds=seconds)
    iso = when.isoformat()
    stamp = f"{when:%Y-%m-%d %H:%M}"
    assert age_text(iso, NOW) == short
    assert when_text(iso, NOW) == f"{stamp} ({short})"
    assert cli_when(iso, now=NOW) == f"{stamp} ({words})"
