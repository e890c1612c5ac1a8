"""How a session reads: prose turns, and the tool calls between them folded into runs.

A coding agent's transcript is mostly tool calls and their results: each is a turn without
text. A reader follows the prose (what was asked, what the agent said) and glances at the
work in between, so the work is folded: a run of turns without prose between two prose
turns is one :class:`ToolRun`, summed up in one line (``6 tool calls: Bash ×4, Read, Edit``)
that opens to one short entry per call: a shell call as ``$ git status`` with the first
lines of its output, an edit as its file and a small diff, a read as its file. Arguments
are never shown as raw JSON here.

Bookkeeping records (hook progress, file snapshots, queue operations...) are kept by the
readers as hidden parts; :func:`is_bookkeeping` tells them apart from what a reader wants.
An interruption (Claude Code's ``[Request interrupted by user]``, Codex's ``turn_aborted``)
is named by :func:`interruption`.

Plain data only: the viewer draws it.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .model import JSONDict, content_text, hidden_parts

#: Lines of a call's output shown under it, and of an edit's diff.
OUTPUT_LINES = 3
DIFF_LINES = 12
LINE_CHARS = 200  # of one shown line (the viewer cuts it to the screen)
PATH_CHARS = 60

SHELL_TOOLS = frozenset(
    {"bash", "shell", "exec_command", "local_shell_call", "run_shell_command", "shell_command"}
)
EDIT_TOOLS = frozenset({"edit", "multiedit", "str_replace", "replace", "str_replace_editor"})
WRITE_TOOLS = frozenset({"write", "write_file", "create_file"})
READ_TOOLS = frozenset({"read", "read_file", "view", "notebookread"})
PATCH_TOOLS = frozenset({"apply_patch"})

#: Hidden part types that are a client's bookkeeping, not the conversation.
BOOKKEEPING = frozenset(
    {
        "progress",
        "file snapshot",
        "ghost snapshot",
        "queue",
        "attachment",
        "world_state",
        "thread settings applied",
        "token count",
        "inter_agent_communication_metadata",
        "item completed",
        "exec command end",
        "patch apply end",
        "web search end",
        "mcp tool call end",
        "context compacted",
    }
)
_INTERRUPTED = "[Request interrupted by user"
_SLASH_COMMAND = re.compile(r"^/[A-Za-z][\w:.-]*(?:\s|$)")


def is_slash_command(text: str) -> bool:
    """Whether a user turn is a slash command (``/model``, ``/mode plan``), not a prompt. A
    command given a sentence (``/orchestrator create a TODO app``: three words or more after
    it) is a prompt: the sentence is what was asked."""
    stripped = text.strip()
    return (
        bool(_SLASH_COMMAND.match(stripped))
        and "\n" not in stripped
        and len(stripped.split()) <= 3
    )


def is_bookkeeping(part: Any) -> bool:
    """Whether a hidden part (a dict of ``metadata.hidden``) is a client's bookkeeping."""
    if not isinstance(part, dict):
        return False
    kind = str(part.get("type") or "")
    return kind in BOOKKEEPING or kind.startswith("system ")


def _hidden(message: JSONDict) -> list[JSONDict]:
    meta = message.get("metadata")
    hidden = meta.get("hidden") if isinstance(meta, dict) else None
    return [h for h in hidden if isinstance(h, dict)] if isinstance(hidden, list) else []


def has_prose(message: JSONDict) -> bool:
    """Whether ``message`` has text a person reads (not only tool calls, results, thinking)."""
    content = message.get("content")
    if isinstance(content, str):
        return bool(content) and not content.isspace()
    try:
        return bool(content_text(content).strip())
    except Exception:
        return False


def interruption(message: JSONDict) -> str | None:
    """'interrupted by user' when the turn ends in an interruption (Claude Code's marker,
    Codex's ``turn_aborted``); None otherwise."""
    for part in _hidden(message):
        kind = part.get("type")
        text = part.get("text") if isinstance(part.get("text"), str) else ""
        if kind == "custom" and isinstance(text, str):
            stripped = text.lstrip()
            if stripped.startswith(_INTERRUPTED) or stripped.startswith("<turn_aborted>"):
                return "interrupted by user"
        elif kind == "turn aborted":
            block = str(part.get("block") or "")
            return "interrupted by user" if "interrupted" in block else "turn aborted"
    return None


# ---------------------------------------------------------------------- calls


@dataclass
class ToolCall:
    """One call as a reader sees it: ``summary`` (``$ git status``, ``Edit app.py``) and
    ``lines`` under it as (kind, text): kind ``out`` (output), ``del``/``add`` (diff lines),
    ``more`` (what was left out)."""

    name: str
    summary: str
    lines: list[tuple[str, str]] = field(default_factory=list)
    error: bool = False
    done: bool = False  # its result is in the transcript


def _args(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _one_line(text: Any, limit: int = LINE_CHARS) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _short_path(path: Any) -> str:
    text = str(path)
    if len(text) <= PATH_CHARS:
        return text
    parts = text.split("/")
    out = parts[-1]
    for part in reversed(parts[:-1]):
        if len(out) + len(part) + 2 > PATH_CHARS:
            break
        out = f"{part}/{out}"
    return f"…/{out}"


def _shell_command(args: Any) -> str | None:
    if isinstance(args, str):
        return args
    if not isinstance(args, dict):
        return None
    command = args.get("command", args.get("cmd"))
    if isinstance(command, list):
        words = [str(w) for w in command]
        # ["bash", "-lc", "ls"]: the script is what was meant
        if len(words) == 3 and words[1] in ("-lc", "-c") and words[0].endswith("sh"):
            return words[2]
        return " ".join(words)
    return None if command is None else str(command)


def _capped(lines: list[tuple[str, str]], cap: int) -> list[tuple[str, str]]:
    if len(lines) <= cap:
        return lines
    more = len(lines) - cap
    return [*lines[:cap], ("more", f"… {more} more line{'s' if more != 1 else ''}")]


def _diff(old: Any, new: Any) -> list[tuple[str, str]]:
    """The changed lines from ``old`` to ``new`` as -/+ lines (the lines both share left out)."""
    before = old.split("\n") if isinstance(old, str) and old else []
    after = new.split("\n") if isinstance(new, str) and new else []
    out: list[tuple[str, str]] = []
    for line in difflib.unified_diff(before, after, n=0, lineterm=""):
        if line.startswith(("---", "+++", "@@")):
            continue
        kind = "add" if line.startswith("+") else "del"
        out.append((kind, line[:LINE_CHARS]))
    return out


def _patch(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The files and the -/+ lines of an ``apply_patch`` body."""
    files: list[str] = []
    lines: list[tuple[str, str]] = []
    for line in text.split("\n"):
        for prefix in ("*** Update File: ", "*** Add File: ", "*** Delete File: "):
            if line.startswith(prefix):
                files.append(_short_path(line[len(prefix) :].strip()))
        if line.startswith("***"):
            continue
        if line.startswith("+"):
            lines.append(("add", line[:LINE_CHARS]))
        elif line.startswith("-"):
            lines.append(("del", line[:LINE_CHARS]))
    return files, lines


def _output(text: str) -> list[tuple[str, str]]:
    """The first lines of a result, as a reader would glance at them."""
    parsed = _args(text) if text.lstrip().startswith("{") else text
    if isinstance(parsed, dict) and isinstance(parsed.get("output"), str):
        text = parsed["output"]  # Codex's shell result: {"output": ..., "metadata": ...}
    elif "\nOutput:\n" in text:  # Codex's exec_command result: a header, then the output
        text = text.split("\nOutput:\n", 1)[1]
    lines = [line for line in text.split("\n") if line.strip()]
    return _capped([("out", line[:LINE_CHARS]) for line in lines], OUTPUT_LINES)


def _first_value(args: Any) -> str:
    """A call's arguments in a few words: its first short text values, never raw JSON."""
    if isinstance(args, str):
        return _one_line(args, 80)
    if not isinstance(args, dict):
        return ""
    values = [v for v in args.values() if isinstance(v, (str, int, float)) and str(v).strip()]
    return _one_line(" · ".join(str(v) for v in values[:2]), 80)


def describe_call(name: str, arguments: Any) -> ToolCall:
    """A call of tool ``name`` with ``arguments`` as a reader sees it."""
    args = _args(arguments)
    low = name.lower()
    get = args.get if isinstance(args, dict) else (lambda _k, _d=None: None)
    if low in SHELL_TOOLS:
        command = _shell_command(args)
        if command is not None:
            return ToolCall(name, "$ " + _one_line(command))
    if low in PATCH_TOOLS:
        body = args if isinstance(args, str) else get("input") or get("patch")
        if isinstance(body, str):
            files, lines = _patch(body)
            where = ", ".join(files) if files else "patch"
            return ToolCall(name, f"Patch {where}", _capped(lines, DIFF_LINES))
    path = get("file_path") or get("path") or get("notebook_path")
    if low in EDIT_TOOLS and path:
        edits = get("edits")
        lines = []
        if isinstance(edits, list):
            for edit in edits:
                if isinstance(edit, dict):
                    lines.extend(_diff(edit.get("old_string"), edit.get("new_string")))
        else:
            old = get("old_string", get("oldText", get("old_str")))
            new = get("new_string", get("newText", get("new_str")))
            lines = _diff(old, new)
        return ToolCall(name, f"Edit {_short_path(path)}", _capped(lines, DIFF_LINES))
    if low in WRITE_TOOLS and path:
        body = get("content")
        lines = _diff(None, body) if isinstance(body, str) else []
        size = f" ({len(lines)} line{'s' if len(lines) != 1 else ''})" if lines else ""
        return ToolCall(name, f"Write {_short_path(path)}{size}", _capped(lines, DIFF_LINES))
    if low in READ_TOOLS and path:
        return ToolCall(name, f"Read {_short_path(path)}")
    for key in ("pattern", "query", "url", "description", "skill", "prompt"):
        value = get(key)
        if isinstance(value, str) and value.strip():
            within = get("path")
            tail = f" in {_short_path(within)}" if isinstance(within, str) and within else ""
            return ToolCall(name, f"{name} {_one_line(value, 100)}{tail}")
    return ToolCall(name, f"{name} {_first_value(args)}".rstrip())


# ---------------------------------------------------------------------- runs


class _Source:
    """The projection runs are read from, and its calls by id (found once, when first
    needed: a run is only read through when it is shown)."""

    def __init__(
        self, messages: Sequence[JSONDict], known: dict[str, tuple[str, Any]] | None = None
    ) -> None:
        self.messages = messages
        self._known = known

    def known(self) -> dict[str, tuple[str, Any]]:
        if self._known is None:
            self._known = calls_by_id(self.messages)
        return self._known


class ToolRun:
    """Turns ``start``..``end`` (inclusive) of a projection, none with prose, and the calls
    made in them (with those of the prose turn just before, whose results they hold). The
    calls are read from the turns when first asked for: finding the runs of a 20,000-turn
    session costs no more than a look at each turn."""

    def __init__(self, start: int, end: int, source: _Source) -> None:
        self.start = start
        self.end = end
        self._source = source
        self._read: tuple[list[ToolCall], int, str | None] | None = None

    def _contents(self) -> tuple[list[ToolCall], int, str | None]:
        if self._read is None:
            try:
                self._read = _run_contents(
                    self._source.messages, self.start, self.end, self._source.known()
                )
            except Exception as exc:  # one unusable turn never takes the session down
                why = f"{type(exc).__name__}: {exc}"
                self._read = ([ToolCall("?", f"⚠ these calls cannot be shown ({why})")], 0, None)
        return self._read

    @property
    def calls(self) -> list[ToolCall]:
        return self._contents()[0]

    @property
    def thinking(self) -> int:
        """Thinking blocks in the run."""
        return self._contents()[1]

    @property
    def note(self) -> str | None:
        """'interrupted by user' when the run ends in an interruption."""
        return self._contents()[2]

    def title(self) -> str:
        """``6 tool calls: Bash ×4, Read, Edit`` (names by first use; ``· 2 failed``...)."""
        counts: dict[str, int] = {}
        for call in self.calls:
            counts[call.name] = counts.get(call.name, 0) + 1
        n = len(self.calls)
        if n:
            names = ", ".join(f"{k} ×{v}" if v > 1 else k for k, v in counts.items())
            text = f"{n} tool call{'s' if n != 1 else ''}: {names}"
        elif self.thinking:
            text = "thinking"
        else:
            turns = self.end - self.start + 1
            text = f"{turns} turn{'s' if turns != 1 else ''} without text"
        failed = sum(1 for c in self.calls if c.error)
        if failed:
            text += f" · {failed} failed"
        if self.note:
            text += f" · {self.note}"
        return text


def _calls_of(message: JSONDict) -> list[tuple[str, ToolCall]]:
    out: list[tuple[str, ToolCall]] = []
    for part in _hidden(message):
        if part.get("type") == "toolCall":
            name = str(part.get("name") or "?")
            out.append((str(part.get("id") or ""), describe_call(name, part.get("arguments"))))
        elif part.get("type") == "bash":  # Pi's shell run typed by the person: call and output
            call = describe_call("bash", {"command": part.get("command") or ""})
            call.lines = _output(str(part.get("output") or ""))
            call.done = True
            code = part.get("exit_code")
            call.error = code not in (None, 0)
            out.append(("", call))
    tool_calls = message.get("tool_calls")
    for raw in tool_calls if isinstance(tool_calls, list) else []:
        function = raw.get("function") if isinstance(raw, dict) else None
        if isinstance(function, dict):
            call = describe_call(str(function.get("name") or "?"), function.get("arguments"))
            out.append((str(raw.get("id") or ""), call))
    return out


def _result_of(message: JSONDict) -> tuple[str, bool] | None:
    for part in _hidden(message):
        if part.get("type") == "toolResult":
            return str(part.get("text") or ""), part.get("is_error") is True
    meta = message.get("metadata")
    if message.get("role") == "tool":
        error = isinstance(meta, dict) and meta.get("is_error") is True
        return content_text(message.get("content")), error
    return None


def _quiet(message: JSONDict) -> bool:
    return message.get("role") in ("assistant", "tool") and not has_prose(message)


def tool_runs(messages: Sequence[JSONDict]) -> list[ToolRun]:
    """The runs of turns without prose in ``messages``, in order. A run never crosses the
    archived/active line or a compaction summary (those have text)."""
    runs: list[ToolRun] = []
    source = _Source(messages)
    i, n = 0, len(messages)
    while i < n:
        if not _quiet(messages[i]):
            i += 1
            continue
        start = i
        archived = bool(messages[i].get("archived"))
        while i < n and _quiet(messages[i]) and bool(messages[i].get("archived")) == archived:
            i += 1
        runs.append(ToolRun(start, i - 1, source))
    return runs


def calls_by_id(messages: Sequence[JSONDict]) -> dict[str, tuple[str, Any]]:
    """(name, arguments) of every call of ``messages`` with an id."""
    out: dict[str, tuple[str, Any]] = {}
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for part in _hidden(message):
            if part.get("type") == "toolCall" and part.get("id"):
                out[str(part["id"])] = (str(part.get("name") or "?"), part.get("arguments"))
    return out


def build_run(
    messages: Sequence[JSONDict],
    start: int,
    end: int,
    known: dict[str, tuple[str, Any]] | None = None,
) -> ToolRun:
    """The :class:`ToolRun` of turns ``start``..``end``: calls paired with their results
    by call id (else in order); a result whose call was made before an earlier prose turn
    (a subagent's Task call, say) is shown with that call (``known``: :func:`calls_by_id`,
    found when needed if not given)."""
    return ToolRun(start, end, _Source(messages, known))


def _run_contents(
    messages: Sequence[JSONDict], start: int, end: int, known: dict[str, tuple[str, Any]]
) -> tuple[list[ToolCall], int, str | None]:
    """(calls, thinking blocks, note) of turns ``start``..``end`` (see :func:`build_run`)."""
    calls: list[ToolCall] = []
    thinking = 0
    note: str | None = None
    pending: dict[str, ToolCall] = {}
    order: list[ToolCall] = []
    before = messages[start - 1] if start > 0 else None
    sources = [before] if before is not None and before.get("role") == "assistant" else []
    for message in [*sources, *messages[start : end + 1]]:
        for call_id, call in _calls_of(message):
            calls.append(call)
            if not call.done:
                order.append(call)
                if call_id:
                    pending[call_id] = call
        if message is not before:
            thinking += sum(1 for p in _hidden(message) if p.get("type") == "thinking")
            note = interruption(message) or note
        result = _result_of(message) if message.get("role") == "tool" else None
        if result is None:
            continue
        call_id = str(message.get("tool_call_id") or "")
        target = pending.pop(call_id, None)
        if target is None and call_id in known:
            target = describe_call(*known[call_id])
            calls.append(target)
        if target is None:
            target = next((c for c in order if not c.done), None)
        if target is None:
            continue
        target.done = True
        text, error = result
        target.error = error
        if target.name.lower() in READ_TOOLS and not error:
            count = text.count("\n") + 1 if text else 0
            target.lines = [("out", f"{count} line{'s' if count != 1 else ''}")]
        elif not target.lines:
            target.lines = _output(text)
        elif error:
            target.lines = [*target.lines, *_output(text)]
    return calls, thinking, note


def reader_parts(message: JSONDict, *, bookkeeping: bool) -> list[tuple[str, str]]:
    """:func:`~.model.hidden_parts` of ``message``, with a client's bookkeeping only when
    ``bookkeeping``, and (without it) each call as a reader sees it, not its raw arguments."""
    if bookkeeping:
        return hidden_parts(message)
    out: list[tuple[str, str]] = []
    for part in _hidden(message):
        if is_bookkeeping(part):
            continue
        if part.get("type") == "toolCall":
            name = str(part.get("name") or "?")
            out.append((f"tool call: {name}", describe_call(name, part.get("arguments")).summary))
            continue
        out.extend(hidden_parts({"metadata": {"hidden": [part]}}))
    tool_calls = message.get("tool_calls")
    for raw in tool_calls if isinstance(tool_calls, list) else []:
        function = raw.get("function") if isinstance(raw, dict) else None
        if isinstance(function, dict):
            name = str(function.get("name") or "?")
            call = describe_call(name, function.get("arguments"))
            out.append((f"tool call: {name}", call.summary))
        else:
            out.extend(hidden_parts({"tool_calls": [raw]}))
    return out
