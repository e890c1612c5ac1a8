"""Claude Code transcripts as a read-only source.

Where they live
    ``$CLAUDE_CONFIG_DIR`` (else ``~/.claude``) ``/projects/<dir>/<sessionId>.jsonl``, one
    folder per working directory. Newer builds write each subagent run to
    ``<sessionId>/subagents/agent-<agentId>.jsonl``; older ones write it inline in the main file
    with ``isSidechain: true``. :func:`claude_session_files` lists the main files only.

The format (not a stable contract: unknown record types and fields are skipped and counted)
    One JSON object a line with a ``type``: ``user`` and ``assistant`` lines carry a
    ``message`` whose ``content`` is a string or a list of blocks (``text``, ``thinking``,
    ``tool_use``, ``tool_result``, ``image``); ``system`` lines carry a ``subtype``; the rest is
    bookkeeping (``progress``, ``file-history-snapshot``, ``queue-operation``, ``attachment``,
    titles ...). One API response is written as several ``assistant`` lines, one block each,
    sharing ``message.id``.

The mapping (one PraisonAI-shaped session dict per main file, as the Pi reader gives)
    - ``user`` turns: what the person typed (text blocks of a user line that is not ``isMeta``,
      not a compaction summary and not a tool result); a slash command is shown as the command
      line the person typed (``/compact and continue``, ``!git status``), not its XML.
    - ``assistant`` turns: the text blocks of all lines sharing one ``message.id``; thinking and
      tool calls of that response are hidden parts of the same turn.
    - ``tool`` turns: one per ``tool_result`` block, with empty content (never searched); its
      output is a hidden part.
    - Everything else (``isMeta`` text, command output and caveats, interruption markers,
      ``progress``, snapshots, queue operations, attachments, ``system`` lines) is no turn: it
      is counted in ``hidden_records`` and, with ``include_hidden``, kept as a one-line hidden
      part of the turn before it. Both modes give the SAME list of messages.
    - The last ``system``/``compact_boundary`` splits the transcript: the turns before it are
      ``archived_messages``; ``messages`` opens with the summary (the ``isCompactSummary``
      line, as a ``system`` ``[Session Summary]`` message with ``compaction: true``), then the
      rest. Earlier boundaries stay in place as ``superseded`` summary markers.
    - Subagent runs belong to their parent: their turns (metadata ``subagent``) are placed just
      before the result of the Task call that started them, so a search finds them in the
      parent. The compaction summariser's run (``agent-acompact-*``) is left out.
    - ``metadata.title``: the latest ``custom-title``, else ``ai-title``, else ``summary`` line;
      without one the shared rule takes the first prompt. ``metadata.cwd`` / ``project``: the
      session's cwd; ``git_branch``.

Reading
    Lines are read one at a time from a file opened ``rb``. A line that is not a JSON object is
    skipped and counted; a last line without its newline (a file being written) is never
    consumed: it is used when it parses and counted as a partial tail when it does not, and
    ``end_offset`` stays before it. The returned ``state`` lets the next read of a grown file
    (Claude Code only appends) parse just the new lines (``prior=``); a file that changed
    otherwise is read from the start. Nothing here writes, locks, renames or creates
    anything.
"""

from __future__ import annotations

from .places import (
    claude_config_dir,
    claude_session_files,
    default_claude_dir,
    is_subagent_file,
    sibling_subagents,
    subagent_files,
)
from .reader import (
    CLAUDE_SOURCE,
    KNOWN_TYPES,
    ClaudeParseState,
    ClaudeSession,
    block_text,
    claude_summaries,
    iter_claude_sessions,
    read_claude_session,
)
from .transcript import MAX_LINE_BYTES, JsonLines, Turn, read_json_lines, split_compaction

__all__ = [
    "CLAUDE_SOURCE",
    "KNOWN_TYPES",
    "MAX_LINE_BYTES",
    "ClaudeParseState",
    "ClaudeSession",
    "JsonLines",
    "Turn",
    "block_text",
    "claude_config_dir",
    "claude_session_files",
    "claude_summaries",
    "default_claude_dir",
    "is_subagent_file",
    "iter_claude_sessions",
    "read_claude_session",
    "read_json_lines",
    "sibling_subagents",
    "split_compaction",
    "subagent_files",
]
