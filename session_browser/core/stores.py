"""The opener's former name: :mod:`session_browser.core.open` decides and opens the stores."""

from __future__ import annotations

from .open import (
    PI_PREFIX,
    StoreNotFound,
    StoreSpec,
    default_store_dirs,
    default_store_specs,
    index_store,
    open_index,
    open_pi_store,
    open_spec,
    open_store,
    open_stores,
    parse_store_spec,
    parse_store_specs,
    pi_index_store,
    scan_store,
    store_specs,
)

__all__ = [
    "PI_PREFIX",
    "StoreNotFound",
    "StoreSpec",
    "default_store_dirs",
    "default_store_specs",
    "index_store",
    "open_index",
    "open_pi_store",
    "open_spec",
    "open_store",
    "open_stores",
    "parse_store_spec",
    "parse_store_specs",
    "pi_index_store",
    "scan_store",
    "store_specs",
]
