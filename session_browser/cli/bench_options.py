"""The option shapes ``bench`` and ``bench-app`` share: counts and amounts with a floor,
on/off switches and directories."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def count_option(*decls: str, minimum: int = 1, default: int | None, help: str) -> Callable[[F], F]:
    """An integer option of at least ``minimum`` (its default shown when it has one)."""
    return click.option(
        *decls,
        type=click.IntRange(min=minimum),
        default=default,
        show_default=default is not None,
        help=help,
    )


def amount_option(*decls: str, minimum: float, default: float, help: str) -> Callable[[F], F]:
    """A number option of at least ``minimum``, its default shown."""
    return click.option(
        *decls, type=click.FloatRange(min=minimum), default=default, show_default=True, help=help
    )


def switch_option(decl: str, *, help: str) -> Callable[[F], F]:
    """An on/off flag (``--x/--no-x``), on by default."""
    return click.option(decl, default=True, show_default=True, help=help)


def dir_option(
    *decls: str, exists: bool = False, metavar: str | None = "DIR", help: str
) -> Callable[[F], F]:
    """A directory option (``exists``: it must be there already)."""
    return click.option(
        *decls,
        type=click.Path(path_type=Path, file_okay=False, exists=exists),
        metavar=metavar,
        help=help,
    )


#: ``--no-sgd``: which data a generated corpus is built from.
no_sgd_option = click.option(
    "--no-sgd",
    is_flag=True,
    help="Build the corpus from the pip-installable data only (chitchat + demo), even when "
    "the SGD data (../shared/data or $SESSION_BROWSER_DATA_DIR) is present.",
)
