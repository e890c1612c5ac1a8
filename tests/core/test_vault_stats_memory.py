"""The vault's status reads sizes with SQL: what it takes does not grow with the number of
files kept (the app's status line asks for it at every start)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from session_browser.core.vault import Vault
from session_browser.core.vault.bulk import keep_many


def test_stats_of_thousands_of_files_take_no_memory_per_file(tmp_path: Path) -> None:
    n = 4000
    items = [
        (tmp_path / "sessions" / f"s{i}.json", f"s{i}", f'{{"session_id": "s{i}"}}'.encode(), 1)
        for i in range(n)
    ]
    with Vault(tmp_path / "vault") as vault:
        assert keep_many(vault, "praisonai", items, now=1000.0) == n
        later = [(p, sid, data + b" ", m) for p, sid, data, m in items[:10]]
        keep_many(vault, "praisonai", later, now=2000.0)  # a second version of ten
        tracemalloc.start()
        try:
            stats = vault.stats()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert (stats.files, stats.versions) == (n, n + 10)
    expected = sum(len(d) for _p, _s, d, _m in items) + 10  # the latest version of each
    assert stats.kept_bytes == expected
    # Listing every latest version took about 500 bytes a file (2 MB here).
    assert peak < 400_000, peak
