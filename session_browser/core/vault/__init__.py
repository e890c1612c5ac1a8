"""The vault: exact copies of the session files the index reads, kept in our data dir
(:mod:`.store`), fed by the index's reconcile (:mod:`.feed`), read back as sessions
(:mod:`.reading`), rebuilt from its packs when its catalog is lost (:mod:`.rebuild`), and the
settings of the sources that delete history (:mod:`.doctor`)."""

from __future__ import annotations

from .errors import CatalogDamaged, VaultDamaged, VaultError
from .format import VaultStats, Version
from .store import Vault, default_vault_dir

__all__ = [
    "CatalogDamaged",
    "Vault",
    "VaultDamaged",
    "VaultError",
    "VaultStats",
    "Version",
    "default_vault_dir",
]
