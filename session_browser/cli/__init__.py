"""The ``session-browser`` command.

With no sub-command it opens the app; every app action also has a command with ``--json``.
Sub-commands are imported lazily so ``session-browser search`` never loads Textual.
"""

from __future__ import annotations

import errno
import importlib
import importlib.util
import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from .store_help import store_option

# name -> "module:attribute" of a click command
COMMANDS: dict[str, str] = {
    "search": "session_browser.cli.recall_cmds:search",
    "show": "session_browser.cli.recall_cmds:show",
    "recent": "session_browser.cli.recall_cmds:recent",
    "index": "session_browser.cli.index_cmds:index",
    "bench": "session_browser.cli.bench_cmd:bench",
    "bench-app": "session_browser.cli.bench_app_cmd:bench_app",
    "export": "session_browser.cli.portable_cmds:export",
    "import": "session_browser.cli.portable_cmds:import_",
    "quarantine": "session_browser.cli.quarantine_cmds:quarantine",
    "vault": "session_browser.cli.vault_cmds:vault",
    "push": "session_browser.cli.team_cmds:push",
    "doctor": "session_browser.cli.doctor_cmd:doctor",
    "mcp": "session_browser.cli.mcp_cmd:mcp",
    "forget": "session_browser.cli.forget_cmd:forget",
}


class LazyGroup(click.Group):
    """A group whose sub-commands are imported only when used.

    Every error ends as one line on stderr and a non-zero status: bad arguments (2),
    Ctrl-C or a closed input (130), an operating-system error (1); never a traceback
    (``SESSION_BROWSER_DEBUG=1`` shows one for an unexpected failure).
    """

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        from session_browser.core.pgindex.conn import PgIndexError

        from .common import BROKEN_PIPE_STATUS, fail, silence_stdout, use_error_status

        use_error_status(1)  # until a command chooses another
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.UsageError as exc:
            sub = exc.ctx.command_path.partition(" ")[2] if exc.ctx is not None else ""
            where = f"{sub}: " if sub else ""
            hint = ""
            if exc.ctx is not None and exc.ctx.command.get_help_option(exc.ctx) is not None:
                hint = f" (see '{exc.ctx.command_path} --help')"
            fail(f"{where}{exc.format_message()}{hint}", code=exc.exit_code)
        except click.ClickException as exc:
            fail(exc.format_message(), code=None if exc.exit_code == 1 else exc.exit_code)
        except PgIndexError as exc:  # the team index unreachable or failing: one line
            fail(str(exc))
        except click.Abort:
            fail("interrupted; every write that finished is complete, none is half-done", code=130)
        except OSError as exc:
            if exc.errno == errno.EPIPE:  # the reader went away (| head): no message
                silence_stdout()
                sys.exit(BROKEN_PIPE_STATUS)
            fail(f"{exc.filename}: {exc.strerror}" if exc.filename else str(exc))
        except (MemoryError, RecursionError) as exc:
            fail(f"out of resources: {type(exc).__name__}")
        except Exception as exc:
            if os.environ.get("SESSION_BROWSER_DEBUG"):
                raise
            fail(
                f"internal error: {type(exc).__name__}: {exc} (SESSION_BROWSER_DEBUG=1 shows more)"
            )
        sys.exit(code if isinstance(code, int) else 0)

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
@store_option
@click.option(
    "--index",
    "index",
    metavar="URL",
    default=None,
    help="Search and read the team index at URL (postgresql://...) instead of the local "
    "stores (default: $SESSION_BROWSER_INDEX_URL, else index_url in the config file's "
    "settings.json). 'push --to URL' fills it.",
)
@click.option("--demo", is_flag=True, help="Open the app on a generated demo store.")
@click.version_option(package_name="session-browser")
@click.pass_context
def main(ctx: click.Context, stores: tuple[str, ...], index: str | None, demo: bool) -> None:
    """Find, read and rescue AI-agent conversation transcripts.

    With no command, opens the keyboard-driven browser.
    """
    if ctx.invoked_subcommand is not None:
        from .common import setup_logging

        ctx.call_on_close(setup_logging())
        ctx.ensure_object(dict)
        ctx.obj["stores"] = stores
        ctx.obj["index"] = index
        return
    if index is not None:  # the app on the team index
        from session_browser.core.pgindex.conn import is_index_url

        from .common import fail

        if stores or demo:
            fail("--index opens the app on the team index: no --store or --demo with it")
        if not is_index_url(index):
            fail("--index must be a postgresql:// URL")
        stores = (index,)
    try:
        from session_browser.tui.launch import run_app
    except ModuleNotFoundError as exc:  # pragma: no cover - the app is part of the package
        raise click.ClickException(f"the app is not available: {exc}") from exc
    code = run_app(list(stores), demo=demo)
    sys.exit(code)


def run(*args: Any) -> None:
    """Entry point for ``python -m session_browser``."""
    main(*args)
