"""Names a package imports on first use (PEP 562): a process that needs one module of the
core (the parsing worker of a first build runs one reader) does not pay for the others."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def on_first_use(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: each name of ``where`` (name -> the module that
    defines it, relative to ``package``) is imported when first asked for, then kept in the
    package (found there from then on); any other name is an ``AttributeError``."""

    def find(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    return find
