"""A bracketed paste holding control characters arrives whole and in place, through the
parser the app reads the terminal with."""

from __future__ import annotations

from textual import events
from textual.message import Message

from session_browser.tui.common.paste import PasteParser

from .conftest import make_app

PASTED = "XX\x1b[Amid\x1bOtab\there\x03YY"


def _read(chunks: list[str]) -> list[tuple[str, str]]:
    parser = PasteParser()
    out: list[Message] = []
    for chunk in chunks:
        out.extend(parser.feed(chunk))
    return [
        ("paste", e.text) if isinstance(e, events.Paste) else ("key", e.key)
        for e in out
        if isinstance(e, (events.Paste, events.Key))
    ]


def test_a_paste_with_control_characters_is_one_paste_in_its_place() -> None:
    raw = f"abc\x1b[200~{PASTED}\x1b[201~de"
    expected = [("key", "a"), ("key", "b"), ("key", "c"), ("paste", PASTED)]
    expected += [("key", "d"), ("key", "e")]
    assert _read([raw]) == expected
    # Read in pieces, the end marker split too: the same.
    pieces = [raw[i : i + 3] for i in range(0, len(raw), 3)]
    assert _read(pieces) == expected
    assert _read(["\x1b[200~a\x00b\x1b[201~"]) == [("paste", "ab")]  # NUL dropped, as before


def test_the_app_reads_the_terminal_with_it(store: object) -> None:
    from textual.drivers import linux_driver

    app = make_app(store)  # type: ignore[arg-type]
    app.get_driver_class()
    assert linux_driver.XTermParser is PasteParser
