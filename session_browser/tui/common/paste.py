"""Terminal input where a bracketed paste arrives whole, in place.

Textual's parser reads an escape character inside a paste as the start of a key sequence:
what follows it was sent as separate keys at once and the text before it as the paste, at
the end (``abcXX<ESC>…YY`` became ``abc…YYXX``). Here the text between the paste markers is
taken as it is, one paste, in its place among the keys; everything else is Textual's.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual import events
from textual._xterm_parser import XTermParser
from textual.message import Message

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"


def _partial(data: str, marker: str, least: int = 1) -> int:
    """How many characters (``least`` or more) at the end of ``data`` could begin
    ``marker``: a marker the terminal's read split in two."""
    for size in range(min(len(marker) - 1, len(data)), least - 1, -1):
        if marker.startswith(data[-size:]):
            return size
    return 0


class PasteParser(XTermParser):
    """:class:`XTermParser` with bracketed pastes taken whole (control characters too)."""

    def __init__(self, debug: bool = False) -> None:
        super().__init__(debug)
        self._pasted: list[str] | None = None  # inside a paste: its text so far
        self._held = ""  # the end of a read that may be the start of a paste marker

    def feed(self, data: str) -> Iterable[Message]:
        if not data:  # the end of input
            yield from super().feed(data)
            return
        data, self._held = self._held + data, ""
        while data:
            if self._pasted is None:
                start = data.find(PASTE_START)
                if start < 0:
                    # A start marker cut by the read waits for its rest (a lone ESC, the
                    # Escape key, never waits).
                    keep = _partial(data, PASTE_START, least=2)
                    self._held = data[len(data) - keep :] if keep else ""
                    if len(data) > keep:
                        yield from super().feed(data[: len(data) - keep])
                    return
                if start:
                    yield from super().feed(data[:start])
                self._pasted = []
                data = data[start + len(PASTE_START) :]
                continue
            end = data.find(PASTE_END)
            if end < 0:
                keep = _partial(data, PASTE_END)
                self._pasted.append(data[: len(data) - keep])
                self._held = data[len(data) - keep :]
                return
            self._pasted.append(data[:end])
            text = "".join(self._pasted).replace("\x00", "")
            self._pasted = None
            yield events.Paste(text)
            data = data[end + len(PASTE_END) :]


def use_paste_parser() -> None:
    """Read the terminal with :class:`PasteParser` (the Linux/macOS driver)."""
    from textual.drivers import linux_driver

    linux_driver.XTermParser = PasteParser  # type: ignore[attr-defined]
