"""Untrusted text made safe to show: no control or bidi character reaches a terminal raw.

Transcripts, titles, ids and file names can hold ANSI/OSC escape sequences, bells,
carriage returns and right-to-left marks. :func:`printable` turns each such character into
a visible escape (``\\x1b``, ``\\u200f``) so it is shown, never obeyed. Markup is not this
module's concern: renderers must treat text as plain text (``markup=False`` / ``Text``).
"""

from __future__ import annotations

import re

# C0 controls except tab and newline, DEL, C1 controls, and the Unicode bidi controls.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]"
)
_UNSAFE_ONE_LINE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\u2028\u2029]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, one_line: bool = False) -> str:
    """``text`` with every control/bidi character replaced by a visible escape.

    With ``one_line`` newlines and tabs are escaped too (for titles, ids, table cells).
    """
    pattern = _UNSAFE_ONE_LINE if one_line else _UNSAFE
    return pattern.sub(_escape, text)


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters with an ellipsis."""
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"
