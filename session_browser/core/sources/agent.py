"""What every coding agent's source shares (Claude Code, Codex, Gemini CLI, OpenCode, Kimi,
Aider, Cline / Roo Code, Goose, Copilot): files read in name order, the coding agents'
automation rule, and a hit's project from the session's cwd."""

from __future__ import annotations

from ..model import JSONDict, SessionHit
from .base import SessionSource
from .pi.store import pi_is_automated, settle_automation


def settle_agent_hit(hit: SessionHit, data: JSONDict, kind: str) -> None:
    """Complete a hit on a coding agent's session read straight from its file: its project
    (the session's cwd), and the coding agents' automation rule (user turns an hour, as for
    Pi: the shared rule counts every message, which tool loops exceed)."""
    demoted = hit.automated
    settle_automation(hit, data)
    if demoted and not hit.automated:
        hit.explain["automation_rule"] = f"{kind}: user turns per hour"
    meta = data.get("metadata")
    cwd = meta.get("cwd") if isinstance(meta, dict) else None
    hit.project = cwd if isinstance(cwd, str) else None


class CodingAgentSource(SessionSource):
    """The read order, automation rule and hit completion of a coding agent's source; a
    subclass lists and reads its files."""

    kind: str

    def file_order(self, names: set[str]) -> list[str]:
        return sorted(names)

    def automated(self, data: JSONDict) -> bool | None:
        return pi_is_automated(data)

    def settle_hit(self, hit: SessionHit, data: JSONDict) -> None:
        settle_agent_hit(hit, data, self.kind)
