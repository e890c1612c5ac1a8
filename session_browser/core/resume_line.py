"""The shell line that resumes a coding agent's session, for a user to paste into a shell.

The line is built from what wrote the session (its source kind), its id and its dir, never
from anything stored with the session: a transcript, a PraisonAI session's metadata or a
session pushed to the team index by someone else does not choose what runs. The kinds in
:data:`COMMANDS` have a resume command; the other kinds have none (:func:`resume_line` gives
None).

A pasted line must run exactly the command it shows, so a value a shell or a terminal would
act on is refused, with the reason, rather than quoted:

- C0 and C1 controls and DEL (``\\x15`` Ctrl-U and ``\\r`` edit and submit a plain paste;
  ``ESC [201~`` ends a bracketed paste), format characters (Unicode ``Cf``: bidi overrides
  and isolates, zero-width ones), the line and paragraph separators U+2028/U+2029, spaces other
  than the ASCII space (the no-break ones) and lone surrogates, in the dir or the id;
- an id that is not a UUID (OpenCode's: not ``ses_`` and letters and digits): these agents
  name a session so, and such an id never starts with ``-`` (which would make it a flag such
  as ``--dangerously-skip-permissions``).

The dir is quoted with :func:`shlex.quote`. Codex's ``resume`` takes the id as a clap
positional, so ``codex resume -- <id>`` binds it and ends the flags; Claude Code's
``--resume [value]`` is an optional-value option (commander), which ``--`` would leave without
its value, so its line is ``claude --resume <id>`` and the UUID check alone keeps the id a value.
Gemini CLI's ``--resume`` is a string option (yargs) that takes ``latest``, an index or a session
UUID and finds the session among the chats of the dir it runs in: ``cd <dir> && gemini --resume
<id>``, the UUID check again keeping the id a value. OpenCode's ``--session`` (yargs) takes
its ``ses_...`` id: ``cd <dir> && opencode --session <id>``. Kimi Code CLI's ``--session``
(typer; without a value it opens a picker) takes a session UUID and looks for it among the
sessions of the dir it runs in: ``cd <dir> && kimi --session <id>``. GitHub Copilot CLI's
``--resume [sessionId]`` takes a session UUID: ``cd <dir> && copilot --resume <id>``. Goose's
``session --resume --session-id <id>`` (clap) takes its ``YYYYMMDD_N`` id.
"""

from __future__ import annotations

import re
import shlex
import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True)
class ResumeCommand:
    """How an agent's resume line starts before the id (``command``), and the agent's name."""

    agent: str
    command: str


#: The source kinds that have a resume command.
COMMANDS: dict[str, ResumeCommand] = {
    "claude": ResumeCommand("Claude Code", "claude --resume"),
    "codex": ResumeCommand("Codex", "codex resume --"),
    "gemini": ResumeCommand("Gemini CLI", "gemini --resume"),
    "opencode": ResumeCommand("OpenCode", "opencode --session"),
    "kimi": ResumeCommand("Kimi Code CLI", "kimi --session"),
    "copilot": ResumeCommand("GitHub Copilot CLI", "copilot --resume"),
    "goose": ResumeCommand("Goose", "goose session --resume --session-id"),
}


def resume_agents() -> str:
    """The agents that have a resume command, for a sentence (``A, B and C``)."""
    names = [c.agent for c in COMMANDS.values()]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
#: The kinds whose session ids are no UUIDs: (their id's form, what it is called).
IDS: dict[str, tuple[re.Pattern[str], str]] = {
    "opencode": (re.compile(r"ses_[0-9A-Za-z]{8,64}"), "an OpenCode session id (ses_...)"),
    "goose": (re.compile(r"[0-9]{8}_[0-9]{1,9}"), "a Goose session id (YYYYMMDD_N)"),
}


@dataclass(frozen=True)
class ResumeLine:
    """A line safe to paste: ``cd <dir> && <command> <id>`` (no ``cd`` without a dir)."""

    line: str


@dataclass(frozen=True)
class ResumeRefused:
    """No line is offered, and why (one sentence a user reads)."""

    reason: str


Resume = ResumeLine | ResumeRefused


def unsafe_character(text: str) -> str | None:
    """What makes ``text`` unsafe to paste into a shell (the first such character, named),
    or None when it holds none."""
    for ch in text:
        code = ord(ch)
        category = unicodedata.category(ch)
        if code < 0x20 or 0x7F <= code < 0xA0:
            what = "a control character"
        elif category == "Cf":
            what = "a format character (bidi or zero-width)"
        elif category in ("Zl", "Zp"):
            what = "a line or paragraph separator"
        elif category == "Zs" and ch != " ":
            what = "a space other than the ASCII space"
        elif category == "Cs":
            what = "a lone surrogate"
        else:
            continue
        return f"{what} (U+{code:04X})"
    return None


def resume_line(kind: str, session_id: str, cwd: str | None) -> Resume | None:
    """The line that resumes session ``session_id`` of source kind ``kind`` in dir ``cwd``
    (None or empty: no ``cd``); a refusal that says why; None when ``kind`` has no resume
    command."""
    entry = COMMANDS.get(kind)
    if entry is None:
        return None
    command = entry.command
    bad = unsafe_character(session_id)
    if bad is not None:
        return ResumeRefused(f"the session id holds {bad}")
    if session_id.startswith("-"):
        return ResumeRefused("the session id starts with '-' (it would be read as a flag)")
    form, called = IDS.get(kind, (_UUID, "a UUID"))
    if not form.fullmatch(session_id):
        return ResumeRefused(f"the session id is not {called}")
    if cwd:
        bad = unsafe_character(cwd)
        if bad is not None:
            return ResumeRefused(f"the session's dir holds {bad}")
        if cwd.startswith("-"):
            return ResumeRefused("the session's dir starts with '-' (cd would read it as a flag)")
        return ResumeLine(f"cd {shlex.quote(cwd)} && {command} {session_id}")
    return ResumeLine(f"{command} {session_id}")


def session_resume(kind: str | None, session_id: str, metadata: object) -> Resume | None:
    """:func:`resume_line` of a session whose ``metadata`` (a session's ``metadata`` dict)
    may name the dir it ran in (``cwd``); None when ``kind`` is unknown or has no command.
    Nothing else of the metadata is read."""
    if kind is None:
        return None
    cwd = metadata.get("cwd") if isinstance(metadata, dict) else None
    return resume_line(kind, session_id, cwd if isinstance(cwd, str) and cwd else None)
