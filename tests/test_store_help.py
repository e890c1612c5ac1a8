"""One ``--store`` help for every command that reads sessions, written from the table of
source kinds: every kind is named, and a kind added to the table is named at once."""

from __future__ import annotations

import dataclasses

import click
import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.sources import SOURCES

# Commands whose --store means something else: the one PraisonAI dir an import writes into,
# the dir a benchmark copies and measures.
OTHER_MEANING = {"import", "bench", "bench-app"}


def _commands(group: click.Group, ctx: click.Context, prefix: str) -> dict[str, click.Command]:
    out: dict[str, click.Command] = {}
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        out[f"{prefix}{name}"] = command
        if isinstance(command, click.Group):
            out |= _commands(command, ctx, f"{prefix}{name} ")
    return out


def _store_helps() -> dict[str, str]:
    """The ``--store`` help of the top command and of every sub-command that reads
    sessions, by command, as ``--help`` prints it (whitespace folded)."""
    ctx = click.Context(main)
    commands = {"session-browser": main, **_commands(main, ctx, "")}
    out: dict[str, str] = {}
    for name, command in commands.items():
        option = next((p for p in command.params if "--store" in p.opts), None)
        if option is None or name in OTHER_MEANING:
            continue
        record = option.get_help_record(click.Context(command))
        assert record is not None, name
        out[name] = " ".join(record[1].split())
    return out


def test_every_command_says_the_same_naming_every_kind() -> None:
    helps = _store_helps()
    wanted = {"session-browser", "search", "show", "recent", "export", "quarantine list", "push"}
    assert wanted <= set(helps)
    assert len(set(helps.values())) == 1, helps
    text = next(iter(helps.values()))
    for kind in SOURCES.values():
        if kind.prefix:
            assert f"'{kind.prefix}DIR' ({kind.describe})" in text
    printed = " ".join(CliRunner().invoke(main, ["search", "--help"]).output.split())
    assert text in printed


def test_a_kind_added_to_the_table_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    zed = dataclasses.replace(SOURCES["pi"], name="zed", prefix="zed:", describe="Zed threads dir")
    monkeypatch.setitem(SOURCES, "zed", zed)
    for name, text in _store_helps().items():
        assert "'zed:DIR' (Zed threads dir)" in text, name
