"""Why a hit scored as it did, as lines of ``key: value`` (the app's Explain and
``search --explain`` print the same lines). The values are not escaped: callers make them
fit for the terminal."""

from __future__ import annotations

import json

from .model import SessionHit


def _one_line(value: object) -> str:
    return " ".join(str(value).split())


def explain_lines(hit: SessionHit) -> list[str]:
    """The explanation of ``hit``'s score: its score as the hit list orders by it, then the
    factors the store computed it from (for a relevance hit, ``formula`` says how they make
    the score)."""
    lines = [
        f"session: {_one_line(hit.session_id)}",
        f"score: {round(hit.score, 4):g}",
        f"matched message: #{hit.anchor_index}" + (" (archived turn)" if hit.archived else ""),
    ]
    if hit.automated:
        lines.append("automated session: demoted")
    continuations = [f for f in hit.folded if f != hit.session_id]
    if continuations:
        lines.append("folded continuations: " + ", ".join(_one_line(f) for f in continuations))
    if len(continuations) < len(hit.folded):
        lines.append(f"other versions folded: {len(hit.folded) - len(continuations)}")
    explain = dict(hit.explain or {})
    if explain:
        lines.append("")
        lines.append("how the store scored it:")
        for key, value in explain.items():
            rendered = value if isinstance(value, str) else json.dumps(value, default=str)
            lines.append(f"  {key}: {_one_line(rendered)}")
    return lines
