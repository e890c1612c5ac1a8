"""Pi coding-agent sessions as a read-only source.

Where they live
    ``$PI_CODING_AGENT_SESSION_DIR``, else the ``sessionDir`` of ``<agent dir>/settings.json``,
    else ``<agent dir>/sessions`` (agent dir: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``), laid
    out as ``--<cwd with / replaced by ->--/<timestamp>_<uuid>.jsonl``. :class:`PiStore` reads
    ``root/**/*.jsonl`` whatever the layout below the root.

The format
    One JSON object a line. The first is a header ``{"type": "session", "id", "timestamp",
    "cwd", "version"?}``. Every later entry has ``type`` and ``timestamp``; v2/v3 entries also
    have ``id`` and ``parentId``, forming a tree whose last entry is the active leaf. Legacy v1
    files have neither: each entry is the child of the one before, and a ``compaction`` names
    its first kept entry by position (``firstKeptEntryIndex``, counting the header as 0)
    instead of by id.

The mapping (one PraisonAI-shaped session dict per file, so :mod:`..recall` works unchanged)
    - ``session_id``: the header id (the file stem when there is none); ``metadata.title``: the
      latest ``session_info.name``; ``metadata.cwd`` / ``metadata.project``: the header cwd;
      ``metadata.source``: ``"pi"``.
    - The transcript is the active branch: the path from the last entry back to the root.
    - Every ``message`` entry becomes one message: ``user`` and ``assistant`` keep their role,
      ``toolResult`` and ``bashExecution`` become ``tool``, ``custom`` messages, custom message
      entries and branch summaries become ``system``. ``content`` is the visible prose only:
      user and assistant text blocks, visible custom messages and summaries. Thinking, images,
      tool-call arguments, tool results and bash commands and output are never content, so
      search never matches them; with ``include_hidden`` they are kept in ``metadata.hidden``
      for the viewer. Both modes give the SAME list of messages (tool entries are present with
      empty content), so a projection index found by search is valid in the viewer.
    - The latest ``compaction`` on the active branch splits the transcript: the turns before
      its first kept entry are ``archived_messages``; ``messages`` opens with the summary (a
      ``system`` message ``[Session Summary]\\n...`` with metadata ``compaction: true``), then
      the kept turns, then everything after the compaction. Earlier compactions stay in place
      as summary markers (``superseded: true``).

Reading
    :func:`read_pi_session` streams the file line by line. Blank lines are ignored; lines that
    are not JSON objects are skipped and counted; a last line without its newline is never
    consumed (it is used when it parses, and counted as a partial tail when it does not).
    ``end_offset`` is the byte offset after the last complete line and the returned
    :class:`PiParseState` resumes from there when the file only grew.

Nothing here writes, locks, renames or creates anything: files are opened ``rb`` and closed.
"""

from __future__ import annotations

from .build import pi_jsonl
from .entries import PI_SOURCE, USER_TURN_RATE_THRESHOLD, cwd_matches, default_pi_dir
from .session import PiBranch, PiSession, read_pi_branch, read_pi_session
from .state import PiParseState
from .store import PiStore, pi_is_automated, settle_automation

__all__ = [
    "PI_SOURCE",
    "USER_TURN_RATE_THRESHOLD",
    "PiBranch",
    "PiParseState",
    "PiSession",
    "PiStore",
    "cwd_matches",
    "default_pi_dir",
    "pi_is_automated",
    "pi_jsonl",
    "read_pi_branch",
    "read_pi_session",
    "settle_automation",
]
