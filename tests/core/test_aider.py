"""Aider chat histories as a read-only source: the real ``.aider.chat.history.md`` of
../shared/data/aider, and histories laid out as aider's ``aider/io.py`` writes them (Aider-AI/aider
at 5dc9490bb35f9729ef2c95d00a19ccd30c26339c): a launch header, ``####`` prompt lines, ``>`` lines
of aider's own output, the reply, and a reasoning model's ``<thinking-content-<hex>>`` block."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core import recall
from session_browser.core.model import hidden_parts
from session_browser.core.open import index_store
from session_browser.core.resume_line import resume_line
from session_browser.core.settings import settings_path
from session_browser.core.sources import SOURCES
from session_browser.core.sources.aider import HISTORY, AiderSource, read_history
from tests.agents import cli, ids, snapshot

TAG = "thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b"
#: Three launches as aider writes them (tests/fixtures/aider, see its README).
WRITTEN = (Path(__file__).resolve().parents[1] / "fixtures" / "aider" / HISTORY).read_text()


def repo(base: Path, name: str, text: str = WRITTEN) -> Path:
    path = base / name / HISTORY
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path


def test_real_history_one_session_per_launch(shared_data: Path) -> None:
    path = shared_data / "aider" / "monochromatic" / HISTORY
    text = path.read_text()
    sessions = read_history(path)
    heads = re.findall(r"^# aider chat started at (.+)$", text, re.M)
    assert len(heads) == 19 and len(sessions) == 13  # the launches with no prompt are none
    launched = [data["metadata"]["launched"] for data, _read in sessions]
    assert launched == [h for h in heads if h in launched]  # in file order
    ids = [data["session_id"] for data, _read in sessions]
    assert len(set(ids)) == 13 and all(i.startswith("aider-") for i in ids)
    # Every prompt, in order: each run of #### lines is one user turn of its launch.
    runs: list[str] = []
    block: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("#### "):
            block.append(line[5:].rstrip())
        elif block:
            runs.append("\n".join(block).strip())
            block = []
    projections = [recall.project(data) for data, _read in sessions]
    users = [m["content"] for p in projections for m in p if m["role"] == "user"]
    assert users == runs
    first = sessions[0][0]
    assert recall.session_title(first) == "What can you say about this package?"
    assert first["metadata"]["cwd"] == str(path.parent)
    assert first["created_at"].startswith("2025-06-02T11:49:34")
    assert all(data["archived_messages"] == [] for data, _read in sessions)
    # aider's own output and the thinking: hidden, and only with include_hidden.
    assert "Repo-map can't include" in text
    assert not any("Repo-map can't include" in json.dumps(d) for d, _r in sessions)
    assert not any(hidden_parts(m) for p in projections for m in p)
    full = read_history(path, include_hidden=True)
    labels = [
        label for data, _r in full for m in recall.project(data) for label, _t in hidden_parts(m)
    ]
    assert labels.count("thinking") == text.count(f"<{TAG}>")
    assert f"<{TAG}>" not in json.dumps([d for d, _r in full])


def test_written_launches_prompts_thinking_and_a_cut_start(tmp_path: Path) -> None:
    path = repo(tmp_path, "parser")
    [(one, _r1), (two, _r2)] = read_history(path, include_hidden=True)
    assert [(m["role"], m["content"].splitlines()[0]) for m in recall.project(one)] == [
        ("user", "fix the tokenizer so it keeps CRLF"),
        ("assistant", "The tokenizer splits on LF only. Here is the change:"),
        ("user", "/run pytest -q"),
    ]
    assert recall.project(one)[0]["content"] == (
        "fix the tokenizer so it keeps CRLF\nin quoted strings too"
    )
    assert "<<<<<<< SEARCH" in recall.project(one)[1]["content"]  # the edit is in the reply
    assert [(m["role"], m["content"]) for m in recall.project(two)] == [
        ("user", "why did the heron test fail"),
        ("assistant", "The heron fixture starts with a byte-order mark that the reader keeps."),
    ]
    assert (one["metadata"]["launched"], two["metadata"]["launched"]) == (
        "2026-03-01 09:15:02",
        "2026-03-02 18:40:11",
    )
    hidden = {label: text for m in recall.project(two) for label, text in hidden_parts(m)}
    assert "BOM" in hidden["thinking"]
    assert "BOM" not in json.dumps(read_history(path)[1][0])
    # A file whose start was cut (no header first) is read from its first line.
    cut = repo(tmp_path, "cut", "from mid-output\n\n#### and a prompt  \n\nan answer\n")
    [(data, _read)] = read_history(cut)
    assert data["session_id"].endswith("-start")
    assert [(m["role"], m["content"]) for m in recall.project(data)] == [
        ("assistant", "from mid-output"),
        ("user", "and a prompt"),
        ("assistant", "an answer"),
    ]


def test_a_launch_appended_leaves_the_earlier_ones_as_they_were(tmp_path: Path) -> None:
    path = repo(tmp_path, "parser")
    store = index_store(SOURCES["aider"], tmp_path)
    try:
        assert store.reconcile().unchanged == 2  # both launches indexed when it opened
        [before] = store.search("heron")
        with path.open("a") as fh:  # aider starts again and appends a launch
            fh.write(
                "\n# aider chat started at 2026-03-04 10:00:00\n\n#### and now the egret  \n"
                "\nThe egret test passes.\n\n"
            )
        report = store.reconcile()
        assert (report.added, report.updated, report.unchanged) == (1, 0, 2)
        [after] = store.search("heron")
        assert after.session_id == before.session_id  # the same session, not read again
        [egret] = store.search("egret")
        assert egret.session_id.endswith("-2026-03-04T10:00:00")
    finally:
        store.close()


def test_a_dir_of_repos_is_searched_to_a_depth(tmp_path: Path) -> None:
    repo(tmp_path, "parser")
    repo(tmp_path, "work/client/app")  # three levels down
    repo(tmp_path, "work/client/app/deeper")  # four: not searched
    repo(tmp_path, ".cache/old")  # hidden dirs are skipped
    repo(tmp_path, "web/node_modules/pkg")
    (tmp_path / "link").symlink_to(tmp_path / "parser")  # never followed
    assert sorted(AiderSource(tmp_path).list_files()) == [
        f"parser/{HISTORY}#2026-03-01T09:15:02",
        f"parser/{HISTORY}#2026-03-02T18:40:11",
        f"work/client/app/{HISTORY}#2026-03-01T09:15:02",
        f"work/client/app/{HISTORY}#2026-03-02T18:40:11",
    ]
    assert len(AiderSource(tmp_path / "parser").list_files()) == 2  # a repo itself


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
    [heron] = ids(cli("search", "source:aider", "heron", "--store", store, "--json", *extra))
    assert heron != sid and heron.endswith("-2026-03-02T18:40:11")  # the other launch
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
    assert len(ids(cli("search", "source:aider", "fixture", "--json"))) == 2  # one launch each
    assert snapshot(tmp_path) == before


def test_no_resume_command() -> None:
    assert resume_line("aider", "aider-0123456789abcdef", "/home/dev/parser") is None


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
    assert agent["dir"] == str(repos) and agent["sessions"] == 4  # two launches a repo
    assert agent["retention"] == (
        "Aider keeps its chat history until the file is deleted (it only appends to it)"
    )
    assert snapshot(repos) == before
