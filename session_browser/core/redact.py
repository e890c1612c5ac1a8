"""Redaction of secrets and email addresses on the way out of an export.

:class:`Redactor` replaces API keys, tokens, private keys, ``key=value`` secrets and email
addresses with ``[REDACTED:<kind>]`` and counts what it replaced, per kind, so an export
can say exactly how much it hid. Redaction is best effort: it catches the common token
shapes, not every secret a transcript may hold.

A redacted copy must never replace its original: :func:`has_placeholder` finds the
``[REDACTED:<kind>]`` placeholders so an import can tell a redacted copy even when the
payload carries no marker.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

# (kind, pattern). Order matters: specific token shapes before the generic key=value rule.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private_key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
            re.S,
        ),
    ),
    ("api_key", re.compile(r"\bsk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{16,}")),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("bearer_token", re.compile(r"(?i)(?<=\bbearer )[A-Za-z0-9\-._~+/]{8,}=*")),
    (
        "secret",
        re.compile(
            r"(?i)(?P<key>\b[\w.-]*(?:api[_-]?key|secret|token|passw(?:or)?d|pwd|access[_-]?key"
            r"|private[_-]?key|credential)[\w.-]*)(?P<sep>[\"']?\s*[:=]\s*[\"']?)"
            r"(?P<value>(?!\[REDACTED)(?=[^\s\"',;]*[A-Za-z])[^\s\"',;]{6,})"
        ),
    ),
    ("email", re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")),
)

# What each pattern's match must contain (checked first: most text holds none of them, and
# a plain substring test costs far less than the pattern); bearer: "bearer " in any case.
_NEEDS: dict[str, tuple[str, ...]] = {
    "private_key": ("-----BEGIN ",),
    "api_key": ("sk-",),
    "github_token": ("gh", "github_pat_"),
    "aws_access_key": ("AKIA", "ASIA"),
    "slack_token": ("xox",),
    "google_api_key": ("AIza",),
    "jwt": ("eyJ",),
    "bearer_token": (),
    "secret": (":", "="),
    "email": ("@",),
}

PLACEHOLDER_PREFIX = "[REDACTED:"
_PLACEHOLDER = re.compile(rb"\[REDACTED:[a-z_]+\]")


def placeholder(kind: str) -> str:
    """What a secret of ``kind`` is replaced with."""
    return f"{PLACEHOLDER_PREFIX}{kind}]"


def has_placeholder(data: bytes) -> bool:
    """Whether serialised JSON (or text, UTF-8) holds a ``[REDACTED:<kind>]`` placeholder."""
    return _PLACEHOLDER.search(data) is not None


# Keys of a session dict whose values are identifiers or times, never redacted.
_KEEP_KEYS = frozenset({"session_id", "created_at", "updated_at", "timestamp", "role"})


class Redactor:
    """Replace secrets in text and count the replacements per kind."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def text(self, text: str) -> str:
        """``text`` with every recognised secret replaced by ``[REDACTED:<kind>]``."""
        lowered: str | None = None
        for kind, pattern in _PATTERNS:
            needs = _NEEDS[kind]  # a pattern whose literal part is absent cannot match
            if kind == "bearer_token":
                lowered = text.lower() if lowered is None else lowered
                if "bearer " not in lowered:
                    continue
            elif not any(n in text for n in needs):
                continue
            if kind == "secret":
                text = pattern.sub(self._secret, text)
                continue
            text, n = pattern.subn(placeholder(kind), text)
            if n:
                self.counts[kind] += n
        return text

    def _secret(self, match: re.Match[str]) -> str:
        self.counts["secret"] += 1
        return f"{match.group('key')}{match.group('sep')}{placeholder('secret')}"

    def value(self, value: Any) -> Any:
        """A copy of a JSON value with every string (not keys, not ids/times) redacted.

        Iterative, so a deeply nested value cannot exhaust the stack.
        """
        root: list[Any] = [value]
        stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]
        while stack:
            parent, key, item = stack.pop()
            if isinstance(item, str):
                parent[key] = self.text(item)
            elif isinstance(item, dict):
                copy: dict[str, Any] = dict(item)
                parent[key] = copy
                for k, v in item.items():
                    if k in _KEEP_KEYS and not isinstance(v, (dict, list)):
                        continue
                    stack.append((copy, k, v))
            elif isinstance(item, list):
                lst = list(item)
                parent[key] = lst
                for i, v in enumerate(item):
                    stack.append((lst, i, v))
        return root[0]

    def as_dict(self) -> dict[str, Any]:
        return {"total": self.total, "by_kind": dict(sorted(self.counts.items()))}
