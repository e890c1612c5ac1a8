"""Where an export may be written: one rule for the CLI and the app (core.actions.export)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from session_browser.core.actions import export as ex
from session_browser.core.multi import StoreGroup
from session_browser.core.store import DefaultSessionStore


@pytest.fixture
def group(tmp_path: Path) -> StoreGroup:
    store = DefaultSessionStore(
        tmp_path / "home" / "sessions",
        spill_dir=tmp_path / "home" / "state" / "session_spill",
        retention="keep_all",
    )
    store.add_user_message("s1", "hello")
    store.spill_dir.mkdir(parents=True)
    return StoreGroup([store])


def _job(path: Path, *, replace: bool = False) -> ex.ExportJob:
    return ex.ExportJob("all", [], "json", False, False, path, replace=replace)


def test_each_refused_target_says_why_and_writes_nothing(group: StoreGroup, tmp_path: Path) -> None:
    [store] = group.stores
    real = tmp_path / "real.json"
    real.write_bytes(b"keep")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    cases = {
        ex.TARGET_STORE_DIR: store.session_path("s1"),
        ex.TARGET_SYMLINK: link,
        ex.TARGET_NOT_REGULAR: fifo,
        ex.TARGET_DIRECTORY: tmp_path,
        ex.TARGET_EXISTS: real,
        ex.TARGET_NO_PARENT: tmp_path / "missing" / "x.json",
    }
    for code, path in cases.items():
        with pytest.raises(ex.ExportTargetError) as caught:
            ex.check_target(path, group.stores)
        assert caught.value.code == code
        out = ex.run_export(group, _job(path, replace=code != ex.TARGET_EXISTS))
        assert out.error is not None and out.sessions == 0, code
    with pytest.raises(ex.ExportTargetError) as caught:
        ex.check_target(store.spill_dir / "x.json", group.stores, replace=True)
    assert caught.value.code == ex.TARGET_STORE_DIR
    assert real.read_bytes() == b"keep" and link.is_symlink()
    assert sorted(p.name for p in store.session_dir.iterdir()) == ["s1.json", "s1.json.lock"]
    assert list(store.spill_dir.iterdir()) == []


def test_a_replace_is_asked_for_and_the_export_written(group: StoreGroup, tmp_path: Path) -> None:
    target = tmp_path / "out.md"
    assert ex.format_for(str(target)) == "md" and ex.format_for("x.JSON") == "json"
    first = ex.run_export(group, ex.ExportJob("all", [], "md", False, False, target))
    assert first.error is None and first.sessions == 1 and target.stat().st_size == first.size
    again = ex.run_export(group, ex.ExportJob("all", [], "md", False, False, target))
    assert again.error is not None and "exists" in again.error
    replaced = ex.run_export(group, ex.ExportJob("all", [], "md", False, False, target, True))
    assert replaced.error is None


def test_an_agents_session_dir_and_the_index_of_a_store_are_refused_too(tmp_path: Path) -> None:
    """Every store says which dirs are its own (declared, not probed): a coding agent's
    session dir (read-only here) and an indexed store's dir take no export either."""
    from session_browser.core.open import open_stores

    claude = tmp_path / "claude" / "-home-u-proj"
    claude.mkdir(parents=True)
    (claude / "0b7e3c9a-6f21-4d58-9e0a-c4f8b2a1d6e3.jsonl").write_text(
        '{"type":"user","sessionId":"0b7e3c9a-6f21-4d58-9e0a-c4f8b2a1d6e3","uuid":"u1",'
        '"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hello"}}\n',
        encoding="utf-8",
    )
    json_dir = tmp_path / "home" / "sessions"
    DefaultSessionStore(json_dir, spill_dir=tmp_path / "spill").add_user_message("s1", "hi")
    for indexed in (False, True):
        group = open_stores([f"claude:{tmp_path / 'claude'}", str(json_dir)], indexed=indexed)
        try:
            for inside in (claude / "out.json", json_dir / "out.json"):
                with pytest.raises(ex.ExportTargetError) as caught:
                    ex.check_target(inside, group.stores)
                assert caught.value.code == ex.TARGET_STORE_DIR, (indexed, inside)
            assert ex.check_target(tmp_path / "out.json", group.stores) == tmp_path / "out.json"
        finally:
            group.close()
