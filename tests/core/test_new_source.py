"""A new transcript format is one reader plus one row in the table of source kinds.

``TextSource`` below reads a made-up plain-text format (one ``*.txt`` file per session: a title
line, then ``role: text`` lines). Registered in :data:`SOURCES` by the test and nowhere else,
it gets search (indexed and ``--no-index``, with filters), recent, the viewer's reads and
export through the CLI, and its files are never written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.model import JSONDict, SessionHit
from session_browser.core.sources import SOURCES
from session_browser.core.sources.base import Identity, SessionDoc, SessionSource, Skip, SourceKind
from session_browser.core.stores import open_stores

T0 = 1_760_000_000.0  # messages of a session are an hour apart (never machine-paced)


class TextSource(SessionSource):
    """One ``*.txt`` file per session: the first line is its title, every other line is a
    message ``role: text`` (turns an hour apart, from the file's number of lines)."""

    kind = "text"
    read_only = True
    watchable = False
    index_prefix = "text-"
    state_table: str | None = None
    content_version: str | None = None

    def __init__(self, root: Path) -> None:
        self.root = root

    def list_files(self) -> dict[str, Identity]:
        out: dict[str, Identity] = {}
        for path in sorted(self.root.glob("*.txt")):
            st = path.stat()
            out[path.name] = (st.st_size, st.st_mtime_ns, st.st_ino)
        return out

    def identities(self, names: Iterable[str]) -> dict[str, Identity | None]:
        files = self.list_files()
        return {name: files.get(name) for name in names}

    def parse(self, name: str, ident: Identity, prior: bytes | None) -> SessionDoc | Skip:
        data = self.load(name)
        return Skip("not a text session") if data is None else SessionDoc(data)

    def load(self, name: str, *, include_hidden: bool = False) -> JSONDict | None:
        # This format has no hidden parts (tool calls, reasoning): the flag changes nothing.
        try:
            lines = (self.root / name).read_text(encoding="utf-8").splitlines()
        except OSError:
            return None
        if not lines:
            return None
        start = T0 + 86400.0 * int(name.split("-")[0])  # "<day>-<id>.txt"
        messages = []
        for n, line in enumerate(lines[1:]):
            role, _, text = line.partition(": ")
            messages.append({"role": role, "content": text, "timestamp": start + 3600.0 * n})
        stamp = datetime.fromtimestamp(start + 3600.0 * len(messages), UTC).isoformat()
        return {
            "session_id": name[:-4].split("-", 1)[1],
            "messages": messages,
            "metadata": {"title": lines[0]},
            "created_at": stamp,
            "updated_at": stamp,
        }

    def file_order(self, names: set[str]) -> list[str]:
        return sorted(names)

    def automated(self, data: JSONDict) -> bool | None:
        return None

    def settle_hit(self, hit: SessionHit, data: JSONDict) -> None:
        return None


TEXT = SourceKind(
    name="text",
    prefix="text:",
    read_only=True,
    default_dirs=lambda cwd: [],
    only_if_present=True,
    source=TextSource,
    describe="text session dir",
)


@pytest.fixture
def text_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setitem(SOURCES, TEXT.name, TEXT)
    root = tmp_path / "text"
    root.mkdir()
    (root / "1-zoo.txt").write_text(
        "Zoo visit\nuser: when does the zebra enclosure open\nassistant: at nine, by the gate\n",
        encoding="utf-8",
    )
    (root / "2-farm.txt").write_text(
        "Farm notes\nuser: the goats need hay\nassistant: a zebra would need hay too\n",
        encoding="utf-8",
    )
    (root / "3-empty.txt").write_text("", encoding="utf-8")
    yield root


def _snapshot(root: Path) -> dict[str, tuple[bytes, int, int]]:
    out = {}
    for path in sorted(root.iterdir()):
        st = path.stat()
        out[path.name] = (path.read_bytes(), st.st_ino, st.st_mtime_ns)
    return out


def _cli(*args: str) -> JSONDict:
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code == 0, res.output
    out: JSONDict = json.loads(res.output)
    return out


def _ids(result: JSONDict) -> list[str]:
    return [h["session_id"] for h in result["results"]]


@pytest.mark.parametrize("index", [True, False])
def test_a_registered_source_is_searched_with_and_without_the_index(
    text_dir: Path, index: bool
) -> None:
    before = _snapshot(text_dir)
    store = f"text:{text_dir}"
    extra = [] if index else ["--no-index"]
    found = _cli("search", "zebra", "--store", store, "--json", *extra)
    assert sorted(_ids(found)) == ["farm", "zoo"]
    assert {h["source"] for h in found["results"]} == {"text"}
    both = _cli("search", "zebra enclosure", "--store", store, "--json", *extra)
    assert _ids(both)[0] == "zoo"
    # a filter of the query language: only assistant turns
    said = _cli("search", "role:assistant", "zebra", "--store", store, "--json", *extra)
    assert _ids(said) == ["farm"]
    assert _snapshot(text_dir) == before


def test_a_registered_source_lists_reads_and_exports(text_dir: Path, tmp_path: Path) -> None:
    before = _snapshot(text_dir)
    store = f"text:{text_dir}"
    for extra in ([], ["--no-index"]):
        recent = _cli("recent", "--store", store, "--json", *extra)
        assert _ids(recent) == ["farm", "zoo"]
        assert {r["source"] for r in recent["results"]} == {"text"}
    with open_stores([store], indexed=True) as group:
        (member,) = group.stores
        assert member.label == store
        assert group.session_exists("zoo")
        session = group.get_session("zoo")
        assert [m["content"] for m in session.to_dict()["messages"]] == [
            "when does the zebra enclosure open",
            "at nine, by the gate",
        ]
        assert [m["content"] for m in group.window("zoo", 1, window=0)] == ["at nine, by the gate"]
        with pytest.raises(PermissionError):
            member.add_user_message("zoo", "written?")  # type: ignore[attr-defined]
        status = member.status()  # type: ignore[attr-defined]
        assert status["sessions"] == 2
        assert status["skipped"] == [{"file": "3-empty.txt", "reason": "not a text session"}]
    out = tmp_path / "export.json"
    res = CliRunner().invoke(main, ["export", "zoo", "--store", store, "-o", os.fspath(out)])
    assert res.exit_code == 0, res.output
    payload = json.loads(out.read_text(encoding="utf-8"))
    assert "zebra enclosure" in json.dumps(payload)
    assert _snapshot(text_dir) == before
