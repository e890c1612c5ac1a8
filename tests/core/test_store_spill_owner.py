"""A spilled turn folds back only into the store that spilled it (issue 9): stores not laid
out as ``<home>/sessions`` share PraisonAI's spill dir, and a turn never crosses stores."""

from __future__ import annotations

import json
from pathlib import Path

from session_browser.core.files import SPILL_OWNER_KEY, spill_belongs_to, write_spill
from session_browser.core.quarantine import list_items
from session_browser.core.store import DefaultSessionStore


def _contents(store: DefaultSessionStore, sid: str) -> list[str]:
    return [m.content for m in store.get_session(sid).messages]


def _praisonai_spill(spill: Path, sid: str, text: str) -> Path:
    spill.mkdir(parents=True, exist_ok=True)
    path = spill / f"{sid}.1700000000000.1.abcdef01.json"
    message = {"role": "user", "content": text}
    payload = {"session_id": sid, "spilled_at": "x", "messages": [message]}
    path.write_text(json.dumps(payload))
    return path


def test_two_stores_sharing_a_spill_dir_never_swap_turns(tmp_path: Path) -> None:
    home = tmp_path / "home"
    spill = home / "state" / "session_spill"
    global_store = DefaultSessionStore(home / "sessions", spill_dir=spill)
    project = DefaultSessionStore(tmp_path / "proj" / "store", spill_dir=spill)
    other = DefaultSessionStore(tmp_path / "other", spill_dir=spill)
    for store in (global_store, project, other):
        assert store.add_user_message("s1", f"first in {store.session_dir.name}")
    # our own spills, one per store, all for "s1" in the one spill dir
    ours = {
        store.session_dir: write_spill(
            spill, "s1", [{"role": "user", "content": f"spilled by {store.session_dir.name}"}],
            session_dir=store.session_dir,
        )
        for store in (project, other)
    }
    # PraisonAI's own spill (no owner key): the global store's, by its layout
    _praisonai_spill(spill, "s1", "spilled by praisonai")
    for owner, path in ours.items():
        assert json.loads(path.read_text())[SPILL_OWNER_KEY] == str(owner.resolve())
    # the workbench offers each store only its own spills
    for store, expected in (
        (global_store, {"spilled by praisonai"}),
        (project, {"spilled by store"}),
        (other, {"spilled by other"}),
    ):
        offered = [it for it in list_items([store]) if it.kind == "spill"]
        texts = {json.loads(it.path.read_text())["messages"][0]["content"] for it in offered}
        assert texts == expected, store.session_dir
    together = list_items([project, global_store, other])
    listed_together = [it for it in together if it.kind == "spill"]
    assert {(Path(it.session_dir), it.path) for it in listed_together} == {
        (Path(project.session_dir), ours[project.session_dir]),
        (Path(other.session_dir), ours[other.session_dir]),
        (Path(global_store.session_dir), spill / "s1.1700000000000.1.abcdef01.json"),
    }
    # a write to the project store folds only its own spill
    assert project.add_user_message("s1", "second")
    assert _contents(project, "s1") == ["first in store", "spilled by store", "second"]
    assert not ours[project.session_dir].exists()
    assert ours[other.session_dir].exists()
    assert global_store.add_user_message("s1", "second")
    assert _contents(global_store, "s1") == ["first in sessions", "spilled by praisonai", "second"]
    assert other.add_user_message("s1", "second")
    assert _contents(other, "s1") == ["first in other", "spilled by other", "second"]
    assert list(spill.iterdir()) == []


def test_ownership_rule() -> None:
    home = Path("/h")
    spill = home / "state" / "session_spill"
    assert spill_belongs_to({"session_id": "a"}, home / "sessions", spill)
    assert not spill_belongs_to({"session_id": "a"}, Path("/p/store"), spill)
    assert not spill_belongs_to({"session_id": "a"}, Path("/p/sessions"), spill)
    assert spill_belongs_to({SPILL_OWNER_KEY: "/p/store"}, Path("/p/store"), spill)
    assert not spill_belongs_to({SPILL_OWNER_KEY: "/p/store"}, home / "sessions", spill)
    assert not spill_belongs_to({SPILL_OWNER_KEY: 3}, home / "sessions", spill)
    assert not spill_belongs_to(["not", "a", "dict"], home / "sessions", spill)
