"""Aider chat histories as a read-only source: the real ``.aider.chat.history.md`` of
../shared/data/aider, and histories laid out as aider's ``aider/io.py`` writes them (Aider-AI/aider
at 5dc9490bb35f9729ef2c95d00a19ccd30c26339c): a launch header, ``####`` prompt lines, ``>`` lines
of aider's own output, the reply, and a reasoning model's ``<thinking-content-<hex>>`` block."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core import recall
from session_browser.core.model import hidden_parts
from session_browser.core.resume_line import resume_line
from session_browser.core.settings import settings_path
from session_browser.core.sources import SOURCES
from session_browser.core.sources.aider import HISTORY, AiderSource, read_history
from session_browser.core.vault import Vault
from session_browser.core.vault.reading import kept_session

TAG = "thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b"
#: Three launches as aider writes them (tests/fixtures/aider, see its README).
WRITTEN = (Path(__file__).resolve().parents[1] / "fixtures" / "aider" / HISTORY).read_text()


def repo(base: Path, name: str, text: str = WRITTEN) -> Path:
    path = base / name / HISTORY
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path


def snapshot(root: Path) -> dict[str, tuple[bytes, int, int, int]]:
    """Every file and dir under ``root``: bytes, inode, mode, mtime."""
    out: dict[str, tuple[bytes, int, int, int]] = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        body = path.read_bytes() if path.is_file() else b""
        out[str(path.relative_to(root))] = (body, st.st_ino, st.st_mode, st.st_mtime_ns)
    return out


def cli(*args: str) -> Any:
    """The JSON a command prints (exit 1: it found nothing)."""
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code in (0, 1), res.output
    out = json.loads(res.output[res.output.index("{") :])
    assert (res.exit_code == 1) == (not out["results"])
    return out


def ids(result: Any) -> list[str]:
    return [h["session_id"] for h in result["results"]]


def test_real_history_turns_launches_and_hidden_output(shared_data: Path) -> None:
    path = shared_data / "aider" / "monochromatic" / HISTORY
    text = path.read_text()
    data, read = read_history(path)
    projection = recall.project(data)
    # Every prompt, in order: each run of #### lines is one user turn.
    runs: list[str] = []
    block: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("#### "):
            block.append(line[5:].rstrip())
        elif block:
            runs.append("\n".join(block).strip())
            block = []
    assert [m["content"] for m in projection if m["role"] == "user"] == runs
    assert recall.session_title(data) == "What can you say about this package?"
    assert data["metadata"]["cwd"] == str(path.parent)
    # Each turn carries its launch's time; the launches with no prompt add nothing.
    heads = re.findall(r"^# aider chat started at (.+)$", text, re.M)
    launched = {m["metadata"]["launch"] for m in projection}
    assert launched < set(heads) and len(heads) == 19 and len(launched) == 13
    assert data["archived_messages"] == []
    # aider's own output and the thinking: hidden, and only with include_hidden.
    assert "Repo-map can't include" in text and "Repo-map can't include" not in json.dumps(data)
    assert not any(hidden_parts(m) for m in projection)
    full, _read = read_history(path, include_hidden=True)
    labels = [label for m in recall.project(full) for label, _t in hidden_parts(m)]
    assert labels.count("thinking") == text.count(f"<{TAG}>")
    quoted = sum(1 for line in text.splitlines() if line.startswith(">"))
    assert read.hidden_records["output"] == quoted
    assert f"<{TAG}>" not in json.dumps(full)


def test_written_launches_prompts_thinking_and_a_cut_start(tmp_path: Path) -> None:
    path = repo(tmp_path, "parser")
    data, _read = read_history(path, include_hidden=True)
    projection = recall.project(data)
    assert [(m["role"], m["content"].splitlines()[0]) for m in projection] == [
        ("user", "fix the tokenizer so it keeps CRLF"),
        ("assistant", "The tokenizer splits on LF only. Here is the change:"),
        ("user", "/run pytest -q"),
        ("user", "why did the heron test fail"),
        ("assistant", "The heron fixture starts with a byte-order mark that the reader keeps."),
    ]
    assert projection[0]["content"] == "fix the tokenizer so it keeps CRLF\nin quoted strings too"
    assert "<<<<<<< SEARCH" in projection[1]["content"]  # the edit is part of the reply
    hidden = {label: text for m in projection for label, text in hidden_parts(m)}
    assert "BOM" in hidden["thinking"]
    assert "BOM" not in json.dumps(recall.project(read_history(path)[0]))
    assert [m["metadata"]["launch"] for m in projection] == [
        "2026-03-01 09:15:02",
        "2026-03-01 09:15:02",
        "2026-03-01 09:15:02",
        "2026-03-02 18:40:11",
        "2026-03-02 18:40:11",
    ]
    # A file whose start was cut (no header first) is read from its first line.
    cut = repo(tmp_path, "cut", "from mid-output\n\n#### and a prompt  \n\nan answer\n")
    roles = [(m["role"], m["content"]) for m in recall.project(read_history(cut)[0])]
    assert roles == [
        ("assistant", "from mid-output"),
        ("user", "and a prompt"),
        ("assistant", "an answer"),
    ]


def test_a_dir_of_repos_is_searched_to_a_depth(tmp_path: Path) -> None:
    repo(tmp_path, "parser")
    repo(tmp_path, "work/client/app")  # three levels down
    repo(tmp_path, "work/client/app/deeper")  # four: not searched
    repo(tmp_path, ".cache/old")  # hidden dirs are skipped
    repo(tmp_path, "web/node_modules/pkg")
    (tmp_path / "link").symlink_to(tmp_path / "parser")  # never followed
    assert sorted(AiderSource(tmp_path).list_files()) == [
        f"parser/{HISTORY}",
        f"work/client/app/{HISTORY}",
    ]
    assert list(AiderSource(tmp_path / "parser").list_files()) == [HISTORY]  # a repo itself


@pytest.mark.parametrize("index", [True, False])
def test_search_filters_and_reads_never_write(tmp_path: Path, index: bool) -> None:
    repos = tmp_path / "src"
    repo(repos, "parser")
    before = snapshot(repos)
    store = f"aider:{repos}"
    extra = [] if index else ["--no-index"]
    [hit] = cli("search", "tokenizer CRLF", "--store", store, "--json", *extra)["results"]
    assert hit["source"] == "aider" and hit["project"] == str(repos / "parser")
    assert hit["title"] == "fix the tokenizer so it keeps CRLF in quoted strings too"
    sid = hit["session_id"]
    assert ids(cli("search", "source:aider", "heron", "--store", store, "--json", *extra)) == [sid]
    assert ids(cli("search", "source:codex", "heron", "--store", store, "--json", *extra)) == []
    # aider's own output ("Applied edit to ...") is found with in:tools only
    assert ids(cli("search", "Applied edit", "--store", store, "--json", *extra)) == []
    tools = cli("search", "in:tools", "Applied edit", "--store", store, "--json", *extra)
    assert ids(tools) == [sid]
    assert snapshot(repos) == before


def test_bare_aider_names_the_roots_of_the_settings(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["search", "heron", "--store", "aider:"])
    assert res.exit_code == 2
    assert (
        res.output.strip()
        .splitlines()[-1]
        .endswith(
            "'aider:' alone names no Aider repo dir: name one (aider:DIR) or list them in "
            "aider_roots in settings.json"
        )
    )
    one, two = tmp_path / "one", tmp_path / "two"
    repo(one, "parser")
    repo(two, "client", WRITTEN.replace("heron", "egret"))
    settings_path().parent.mkdir(parents=True, exist_ok=True)
    settings_path().write_text(json.dumps({"aider_roots": [str(one), str(two)]}))
    before = snapshot(tmp_path)
    assert len(ids(cli("search", "heron", "--store", "aider:", "--json", "--no-index"))) == 1
    assert len(ids(cli("search", "egret", "--store", "aider:", "--json", "--no-index"))) == 1
    # no store named: the configured roots are among the default stores
    assert len(ids(cli("search", "source:aider", "fixture", "--json"))) == 2
    assert snapshot(tmp_path) == before


def test_no_resume_command() -> None:
    assert resume_line("aider", "aider-0123456789abcdef", "/home/dev/parser") is None


def test_a_deleted_history_is_kept_by_the_vault(tmp_path: Path) -> None:
    path = repo(tmp_path, "parser")
    original = path.read_bytes()
    store = SOURCES["aider"].index(tmp_path, vault=True)
    try:
        [hit] = store.search("heron")
        sid = hit.session_id
        path.unlink()  # the user deletes the history
        assert store.reconcile().removed == 1
        [hit] = store.search("heron", limit=5)
        assert hit.session_id == sid and hit.kept is not None
        assert hit.kept.startswith(f"deleted from {path} on ")
    finally:
        store.close()
    kept = kept_session(sid)
    assert kept is not None and kept["session_id"] == sid
    assert "byte-order mark" in json.dumps(kept)
    with Vault() as vault:
        [version] = vault.versions(sid)
        vault.restore(version)
    assert path.read_bytes() == original


def test_doctor_lists_the_agent_its_count_and_its_retention(tmp_path: Path) -> None:
    repos = tmp_path / "src"
    repo(repos, "parser")
    repo(repos, "client")
    shutil.copy(repos / "parser" / HISTORY, tmp_path / "unlisted.md")
    settings_path().parent.mkdir(parents=True, exist_ok=True)
    settings_path().write_text(json.dumps({"aider_roots": [str(repos)]}))
    before = snapshot(repos)
    res = CliRunner().invoke(main, ["doctor", "--json"])
    assert res.exit_code == 0, res.output
    [agent] = [a for a in json.loads(res.output)["agents"] if a["source"] == "aider"]
    assert agent["dir"] == str(repos) and agent["sessions"] == 2
    assert agent["retention"] == (
        "Aider keeps its chat history until the file is deleted (it only appends to it)"
    )
    assert snapshot(repos) == before
