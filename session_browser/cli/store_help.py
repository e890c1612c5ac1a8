"""The one ``--store`` option of the commands that read sessions, its help written from the
table of source kinds (:data:`session_browser.core.sources.SOURCES`): a new kind is named in
every command's help without touching it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def store_help() -> str:
    """What ``--store`` takes, every kind of the table named."""
    # Read when help is shown, not when the command line is parsed: the table imports every
    # source's reader.
    from session_browser.core.sources import SOURCES

    agents = [f"'{kind.prefix}DIR' ({kind.describe})" for kind in SOURCES.values() if kind.prefix]
    first = next(k.prefix for k in SOURCES.values() if k.prefix)
    return (
        "Session dir to use (repeatable; before the command: for every command). A bare DIR "
        "is a PraisonAI session dir; the agents' dirs, read only, are named by prefix: "
        f"{', '.join(agents)}. A prefix alone ('{first}') names that agent's usual dirs. "
        "Default: ./.praisonai/sessions (if present), the global store, and the agents' "
        "sessions that are present."
    )


class StoreOption(click.Option):
    """``--store`` with :func:`store_help` as its help."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = store_help()
        return super().get_help_record(ctx)


def store_option(func: F) -> F:
    """``--store DIR`` (repeatable), into the ``stores`` argument."""
    return click.option("--store", "stores", cls=StoreOption, multiple=True, metavar="DIR")(func)
