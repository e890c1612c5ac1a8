"""Titles and snippets read a bounded part of a message (issue 9: a 50 MB one-message file
peaked at 1.4 GB folding whitespace over the whole message)."""

from __future__ import annotations

import subprocess
import sys
import tracemalloc
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from session_browser.core import recall
from tests import hostile

SIZE = 6 << 20  # characters of "ab ab ..."


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab \n\t\u2028x"), max_size=300), st.integers(0, 80))
def test_fold_prefix_is_fold_then_cut(text: str, limit: int) -> None:
    assert recall.fold_prefix(text, limit) == " ".join(text.split())[:limit]


def test_short_snippets_unchanged() -> None:
    text = "x " * 200 + "the billing migration " + "y " * 200
    assert len(text) > recall.SNIPPET_WIDTH and len(text) <= recall.SNIPPET_SPAN
    snippet = recall.make_snippet(text, "billing migration")
    assert "billing migration" in snippet and snippet.startswith("…") and snippet.endswith("…")


def test_long_snippet_is_centred_and_marked() -> None:
    text = "ab " * 100_000 + "needle here " + "cd\n" * 100_000
    snippet = recall.make_snippet(text, "needle")
    assert "needle here" in snippet
    assert snippet.startswith("…") and snippet.endswith("…")
    assert len(snippet) <= recall.SNIPPET_WIDTH + 2
    head = recall.make_snippet("needle " + "ab " * 100_000, "needle")
    assert head.startswith("needle") and head.endswith("…")


def _peak(func: object, *args: object) -> int:
    tracemalloc.start()
    try:
        func(*args)  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_title_and_snippet_memory_is_bounded() -> None:
    body = "ab " * (SIZE // 3)
    data = {"session_id": "big", "messages": [{"role": "user", "content": body}]}
    title = recall.session_title(data)
    assert title.startswith("ab ab ab") and title.endswith("…")
    assert len(title) <= recall.TITLE_CHARS + 1
    assert _peak(recall.session_title, data) < 1 << 20
    # finding the match needs one lowered copy; the folding itself is bounded
    assert _peak(recall.make_snippet, body, "ab") < 2 * len(body)
    pi_like = recall.fold_prefix("  \n" * 1000 + body, 80)
    assert pi_like == ("ab " * 30)[:80]


_RSS_SCRIPT = """
import resource, sys
from pathlib import Path
from session_browser.core.store import DefaultSessionStore
store = DefaultSessionStore(Path(sys.argv[1]), spill_dir=Path(sys.argv[2]))
store.recent(limit=1)  # warm up imports on the small sessions only
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
Path(sys.argv[1], "hidden.tmp").rename(Path(sys.argv[1], "hostile-big-message.json"))
store.recent(limit=10)
store.search("ab", limit=5)
store.search("marmalade", limit=5)
store.window("hostile-big-message")
store.get_session("hostile-big-message")
print(before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def test_store_reads_of_a_big_message_stay_small(tmp_path: Path) -> None:
    """Every read of a store holding one big message needs a small multiple of its size
    (peak RSS of a fresh process; it was about 27x before titles/snippets were bounded)."""
    d = tmp_path / "sessions"
    sid = hostile.big_message(d, size=4 * SIZE)
    hostile.write_good(d)
    size = (d / f"{sid}.json").stat().st_size
    (d / f"{sid}.json").rename(d / "hidden.tmp")
    out = subprocess.run(
        [sys.executable, "-c", _RSS_SCRIPT, str(d), str(tmp_path / "spill")],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    before_kb, after_kb = map(int, out.stdout.split())
    assert (after_kb - before_kb) * 1024 < 4 * size, (before_kb, after_kb, size)
