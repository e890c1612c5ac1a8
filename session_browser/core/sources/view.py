"""What every transcript reader gives: a session record over a PraisonAI-shaped dict, and
that dict assembled the one way (Pi, Claude Code and Codex readers all build it)."""

from __future__ import annotations

from typing import Any, ClassVar

from .. import recall
from ..model import JSONDict, SessionData, iso_of_epoch


class SessionView:
    """What a transcript read as one session answers, from its PraisonAI-shaped ``data``."""

    data: JSONDict
    KIND: ClassVar[str]  # the source kind (``pi``, ``claude``, ``codex``)

    @property
    def session_id(self) -> str:
        return str(self.data.get("session_id", ""))

    @property
    def cwd(self) -> str | None:
        value = self.data["metadata"].get("cwd")
        return value if isinstance(value, str) else None

    @property
    def title(self) -> str:
        return recall.session_title(self.data)

    def projection(self) -> list[JSONDict]:
        """The archived+active projection (archived entries flagged ``archived: true``)."""
        return recall.project(self.data)

    def to_session_data(self) -> SessionData:
        session = SessionData.from_dict(self.data)
        session.source_kind = self.KIND
        return session


def session_dict(
    session_id: str,
    *,
    active: list[JSONDict],
    archived: list[JSONDict],
    created: Any,
    updated: Any,
    meta: JSONDict,
    last_compaction: JSONDict | None,
) -> JSONDict:
    """The PraisonAI-shaped session dict of a transcript (times as epochs, written in
    PraisonAI's ISO form; '' when unusable)."""
    data: JSONDict = {
        "session_id": session_id,
        "messages": active,
        "created_at": iso_of_epoch(created) or "",
        "updated_at": iso_of_epoch(updated) or "",
        "agent_name": None,
        "user_id": None,
        "metadata": meta,
        "archived_messages": archived,
    }
    if last_compaction is not None:
        data["last_compaction"] = last_compaction
    return data
