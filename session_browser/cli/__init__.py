"""The ``session-browser`` command.

With no sub-command it opens the app; every app action also has a command with ``--json``.
Sub-commands are imported lazily so ``session-browser search`` never loads Textual.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any

import click

# name -> "module:attribute" of a click command
COMMANDS: dict[str, str] = {
    "search": "session_browser.cli.recall_cmds:search",
    "show": "session_browser.cli.recall_cmds:show",
    "recent": "session_browser.cli.recall_cmds:recent",
    "index": "session_browser.cli.index_cmds:index",
    "bench": "session_browser.cli.bench_cmd:bench",
    "export": "session_browser.cli.portable_cmds:export",
    "import": "session_browser.cli.portable_cmds:import_",
    "quarantine": "session_browser.cli.quarantine_cmds:quarantine",
}


class LazyGroup(click.Group):
    """A group whose sub-commands are imported only when used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = set(super().list_commands(ctx))
        for name, target in COMMANDS.items():
            if importlib.util.find_spec(target.split(":")[0]) is not None:
                names.add(name)
        return sorted(names)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module_name, attr = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                return None
            raise
        command = getattr(module, attr)
        assert isinstance(command, click.Command)
        return command


@click.group(
    cls=LazyGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--store",
    "stores",
    multiple=True,
    metavar="DIR",
    help="Session dir to open (repeatable; 'pi:DIR' for a Pi store). "
    "Default: project + global store.",
)
@click.option("--demo", is_flag=True, help="Open the app on a generated demo store.")
@click.version_option(package_name="session-browser")
@click.pass_context
def main(ctx: click.Context, stores: tuple[str, ...], demo: bool) -> None:
    """Find, read and rescue AI-agent conversation transcripts.

    With no command, opens the keyboard-driven browser.
    """
    if ctx.invoked_subcommand is not None:
        ctx.ensure_object(dict)
        ctx.obj["stores"] = stores
        return
    try:
        from session_browser.tui.launch import run_app
    except ModuleNotFoundError as exc:  # pragma: no cover - the app is part of the package
        raise click.ClickException(f"the app is not available: {exc}") from exc
    code = run_app(list(stores), demo=demo)
    sys.exit(code)


def run(*args: Any) -> None:
    """Entry point for ``python -m session_browser``."""
    main(*args)
