"""``walk_real``: the listing the agents' sources walk their trees with (no lstat a folder)."""

from __future__ import annotations

import os
from pathlib import Path

from session_browser.core.files import real_dir, walk_real


def tree(root: Path) -> Path:
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "deep.jsonl").write_text("{}")
    (root / "a" / "f.jsonl").write_text("{}")
    (root / "c").mkdir()
    (root / "top.json").write_text("{}")
    os.symlink(root / "a", root / "linked-dir")
    os.symlink(root / "a" / "f.jsonl", root / "c" / "linked-file.jsonl")
    os.symlink(root / "missing", root / "c" / "dangling.jsonl")
    os.mkfifo(root / "c" / "pipe.jsonl")
    return root


def walked(entries: object, prune: str = "") -> list[tuple[str, list[str], list[str]]]:
    out = []
    for dirpath, dirnames, filenames in entries:  # type: ignore[attr-defined]
        dirnames[:] = sorted(d for d in dirnames if d != prune)
        out.append((dirpath, list(dirnames), sorted(filenames)))
    return out


def test_it_lists_what_os_walk_lists_but_symlinked_folders(tmp_path: Path) -> None:
    top = str(tree(tmp_path / "t"))
    before: dict[str, int] = {}
    expected = []  # what the sources did: os.walk, its folders filtered by real_dir
    for dp, dn, fn in os.walk(top):
        dn[:] = sorted(d for d in dn if real_dir(os.path.join(dp, d), before))
        expected.append((dp, list(dn), sorted(fn)))
    refused: dict[str, int] = {}
    got = walked(walk_real(top, refused))
    assert got == expected
    assert refused == before == {"symlink": 1}
    assert [p for p, _d, _f in got] == [top, f"{top}/a", f"{top}/a/b", f"{top}/c"]
    assert got[3][2] == ["dangling.jsonl", "linked-file.jsonl", "pipe.jsonl"]


def test_a_pruned_folder_is_not_listed(tmp_path: Path) -> None:
    top = str(tree(tmp_path / "t"))
    got = walked(walk_real(top), prune="a")
    assert [p for p, _d, _f in got] == [top, f"{top}/c"]


def test_a_folder_that_cannot_be_listed_is_passed_over(tmp_path: Path) -> None:
    assert list(walk_real(str(tmp_path / "nowhere"))) == []
    (tmp_path / "file").write_text("x")
    assert list(walk_real(str(tmp_path / "file"))) == []


def test_walked_rel_is_relpath_for_every_folder_a_walk_gives(tmp_path: Path) -> None:
    """The listings name a walked folder relative to the root by slicing: the same names as
    ``os.path.relpath``, whatever way the root is written."""
    from session_browser.core.files import rel_below

    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "d").mkdir()
    checked = 0
    for top in (str(tmp_path), str(tmp_path) + os.sep, f"{tmp_path}/a/..", "."):
        cwd = tmp_path if top == "." else None
        old = os.getcwd()
        if cwd is not None:
            os.chdir(cwd)
        try:
            for dirpath, _dirs, _files in os.walk(top):
                assert rel_below(dirpath, top) == os.path.relpath(dirpath, top), (top, dirpath)
                checked += 1
        finally:
            os.chdir(old)
    assert checked == 4 * 5
    assert rel_below("/", "/") == "." and rel_below("/srv", "/") == "srv"
