"""Gemini CLI, Cline / Roo Code, Copilot and Kimi keep their sessions in trees of folders,
with files beside a session's own that are part of it (subagents' chats and logs, titles,
a chat's newer log). One inotify watch follows the whole tree: a reconcile after the first
stats only the sessions a change touched, and what it finds is what a full build finds."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from session_browser.core.index import SqliteSessionStore
from tests.core.test_cline import CLINE, ROO, ROO_TASK, TASK, config, storage
from tests.core.test_copilot import CHAT, CHAT_LOG, FIXTURE, WORKSPACE
from tests.core.test_copilot import SID as COPILOT_SID
from tests.core.test_gemini import AGENT, gemini_home
from tests.core.test_gemini import CHAT as GEMINI_CHAT
from tests.core.test_gemini import SID as GEMINI_SID
from tests.core.test_index_fresh import rows
from tests.core.test_kimi import python_wire
from tests.core.test_tree_watch import append, fresh, titles, watched


def lines(path: Path, records: list[dict[str, Any]]) -> Path:
    """``records`` written to ``path`` (folders made), one JSON object a line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def found(store: SqliteSessionStore, words: str) -> list[str]:
    return sorted(h.session_id for h in store.search(words))


def check(report: Any, scope: str, added: int = 0, updated: int = 0, removed: int = 0) -> None:
    got = (report.scope, report.added, report.updated, report.removed)
    assert got == (scope, added, updated, removed)


# ---------------------------------------------------------------------- Gemini CLI


def gemini_chat(sid: str, said: str, answer: str) -> list[dict[str, Any]]:
    stamp = "2026-09-01T10:00:00.000Z"
    return [
        {"sessionId": sid, "projectHash": "h", "startTime": stamp, "lastUpdated": stamp},
        {"id": f"{sid}-u", "timestamp": stamp, "type": "user", "content": [{"text": said}]},
        {"id": f"{sid}-g", "timestamp": stamp, "type": "gemini", "content": answer},
    ]


def gemini_turn(key: str, said: str) -> list[dict[str, Any]]:
    stamp = "2026-09-01T11:00:00.000Z"
    return [
        {"id": f"{key}-u", "timestamp": stamp, "type": "user", "content": [{"text": said}]},
        {"id": f"{key}-g", "timestamp": stamp, "type": "gemini", "content": f"Noted: {said}."},
    ]


def test_gemini_chats_their_subagents_and_new_projects_are_seen_by_the_watch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSION_BROWSER_VAULT", "off")
    root = gemini_home(tmp_path) / "tmp"
    chat = root / GEMINI_CHAT
    db_path = tmp_path / "g.sqlite3"
    store = watched("gemini", root, db_path)
    new_sid = "aaaabbbb-1111-4222-8333-444455556666"
    new_dir = root / "new-project" / "chats"
    new_chat = new_dir / "session-2026-09-01T10-00-aaaabbbb.jsonl"
    try:
        # A chat grows, and its title is set.
        append(chat, gemini_turn("k", "where do kestrels nest"))
        check(store.reconcile(), "changes", updated=1)
        assert found(store, "kestrels") == [GEMINI_SID]
        append(chat, [{"$set": {"summary": "Kestrels and CRLF"}}])
        check(store.reconcile(), "changes", updated=1)
        assert dict(titles(db_path))[GEMINI_SID] == "Kestrels and CRLF"
        # Its subagent's own chat (in the folder beside it) grows.
        append(chat.parent / GEMINI_SID / f"{AGENT}.jsonl", gemini_turn("o", "ospreys too"))
        check(store.reconcile(), "changes", updated=1)
        assert found(store, "ospreys") == [GEMINI_SID]
        # A new project folder with its first chat, then that chat's first subagent.
        lines(new_chat, gemini_chat(new_sid, "tell me about herons", "Herons wade."))
        check(store.reconcile(), "changes", added=1)
        assert found(store, "herons") == [new_sid]
        lines(new_dir / new_sid / "agent-1.jsonl", gemini_chat("agent-1", "egrets", "White."))
        check(store.reconcile(), "changes", updated=1)
        assert found(store, "egrets") == [new_sid]
        # A legacy chat, then its migrated log beside it (which is then the one read).
        legacy = new_dir / "session-2026-09-01T12-00-ccccdddd.json"
        legacy_sid = "ccccdddd-1111-4222-8333-444455556666"
        legacy.write_text(
            json.dumps(
                {
                    "sessionId": legacy_sid,
                    "startTime": "2026-09-01T12:00:00.000Z",
                    "lastUpdated": "2026-09-01T12:00:00.000Z",
                    "messages": gemini_turn("l", "the lapwing"),
                }
            )
        )
        check(store.reconcile(), "changes", added=1)
        lines(legacy.with_suffix(".jsonl"), gemini_chat(legacy_sid, "the lapwing", "Plovers."))
        check(store.reconcile(), "changes", added=1, removed=1)
        assert found(store, "plovers") == [legacy_sid]
        # What a project keeps beside its chats is not read.
        lines(root / "new-project" / "logs" / "session-2026-09-01-eeeeffff.jsonl", [{}])
        (root / "new-project" / "logs.json").write_text("[]\n")
        check(store.reconcile(), "changes")
        # A chat in no chats folder: a full pass (a chats folder made beside it hides it).
        odd = root / "odd" / "sub" / "session-2026-09-02T10-00-11112222.jsonl"
        lines(odd, gemini_chat("11112222-0000", "the odd dunlin", "Dunlins."))
        check(store.reconcile(), "full", added=1)
        beside = root / "odd" / "chats" / "session-2026-09-02T10-00-33334444.jsonl"
        lines(beside, gemini_chat("33334444-0000", "the stint", "Stints."))
        check(store.reconcile(), "full", added=1, removed=1)
        # A chat deleted.
        new_chat.unlink()
        check(store.reconcile(), "changes", removed=1)
        assert new_sid not in found(store, "herons")
    finally:
        store.close()
    assert (rows(db_path), titles(db_path)) == fresh("gemini", root, tmp_path / "fresh.sqlite3")


# ---------------------------------------------------------------------- Cline / Roo Code


def ui_messages(task: str, answer: str) -> str:
    return json.dumps(
        [
            {"ts": 1768000000000, "type": "say", "say": "task", "text": task},
            {"ts": 1768000001000, "type": "say", "say": "text", "text": answer},
        ]
    )


def test_cline_tasks_their_metadata_and_new_task_folders_are_seen_by_the_watch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSION_BROWSER_VAULT", "off")
    root = storage(config(tmp_path))
    tasks = root / CLINE / "tasks"
    db_path = tmp_path / "c.sqlite3"
    store = watched("cline", root, db_path)
    try:
        # A task grows (its file rewritten whole).
        ui = tasks / TASK / "ui_messages.json"
        messages = json.loads(ui.read_text())
        messages.append({"ts": 1767000999000, "type": "say", "say": "text", "text": "kestrels"})
        ui.write_text(json.dumps(messages))
        check(store.reconcile(), "changes", updated=1)
        assert found(store, "kestrels") == [TASK]
        # A new task folder.
        new = tasks / "1768000000000"
        new.mkdir()
        (new / "ui_messages.json").write_text(ui_messages("tell me about herons", "They wade."))
        check(store.reconcile(), "changes", added=1)
        assert found(store, "wade") == ["1768000000000"]
        # Roo Code's record of a task renames it.
        item_path = root / ROO / "tasks" / ROO_TASK / "history_item.json"
        item = json.loads(item_path.read_text())
        item["title"] = "Heron mode, renamed"
        item_path.write_text(json.dumps(item))
        check(store.reconcile(), "changes", updated=1)
        assert dict(titles(db_path))[ROO_TASK] == "Heron mode, renamed"
        # A task read from its API history gets its ui_messages.json: the task's file changes.
        only_api = tasks / "1767100000000"
        (only_api / "ui_messages.json").write_text(ui_messages("the ospreys", "Fish eaters."))
        check(store.reconcile(), "changes", added=1, removed=1)
        assert found(store, "eaters") == ["1767100000000"]
        # Files that are no task's.
        (new / "task_metadata.json").write_text("{}")
        (root / CLINE / "checkpoints" / "1234").mkdir(parents=True)
        (root / CLINE / "checkpoints" / "1234" / "ui_messages.json").write_text("[]")
        check(store.reconcile(), "changes")
        # A folder that becomes a task's hides the tasks below it: a full pass says which.
        (tasks / "ui_messages.json").write_text(ui_messages("the tasks dir", "Odd."))
        check(store.reconcile(), "full", added=1, removed=3)
        (tasks / "ui_messages.json").unlink()
        check(store.reconcile(), "full", added=3, removed=1)
        # A task deleted.
        (new / "ui_messages.json").unlink()
        check(store.reconcile(), "changes", removed=1)
        assert found(store, "wade") == []
    finally:
        store.close()
    assert (rows(db_path), titles(db_path)) == fresh("cline", root, tmp_path / "fresh.sqlite3")


# ---------------------------------------------------------------------- Copilot


def copilot_events(sid: str, said: str, answer: str) -> list[dict[str, Any]]:
    stamp = "2026-05-27T10:00:00.000Z"
    return [
        {
            "type": "session.start",
            "data": {"sessionId": sid, "context": {"cwd": "/w"}},
            "id": f"{sid}-0",
            "timestamp": stamp,
        },
        *copilot_turn(sid, said, answer),
    ]


def copilot_turn(key: str, said: str, answer: str) -> list[dict[str, Any]]:
    stamp = "2026-05-27T11:00:00.000Z"
    return [
        {"type": "user.message", "data": {"content": said}, "id": f"{key}-u", "timestamp": stamp},
        {
            "type": "assistant.message",
            "data": {"content": answer},
            "id": f"{key}-a",
            "timestamp": stamp,
        },
    ]


def vscode_chat(sid: str, said: str, answer: str, title: str) -> str:
    request = {
        "message": {"text": said},
        "response": [{"value": answer}],
        "timestamp": 1767225600000,
    }
    return json.dumps(
        {
            "version": 3,
            "sessionId": sid,
            "creationDate": 1767225600000,
            "customTitle": title,
            "requests": [request],
        }
    )


def test_copilot_sessions_and_vscode_chats_are_seen_by_the_watch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSION_BROWSER_VAULT", "off")
    root = tmp_path / "store"
    shutil.copytree(FIXTURE / "session-state", root / "session-state")
    shutil.copytree(FIXTURE / "Code" / "User", root / "User")
    state = root / "session-state"
    chats = root / "User" / WORKSPACE
    db_path = tmp_path / "p.sqlite3"
    store = watched("copilot", root, db_path)
    new_sid = "11111111-2222-4333-8444-555555555555"
    try:
        # A CLI session grows.
        append(state / COPILOT_SID / "events.jsonl", copilot_turn("k", "kestrels?", "Falcons."))
        check(store.reconcile(), "changes", updated=1)
        assert found(store, "kestrels") == [COPILOT_SID]
        # A new session folder, and an early build's flat file.
        lines(state / new_sid / "events.jsonl", copilot_events(new_sid, "herons?", "Waders."))
        flat = "22222222-2222-4333-8444-555555555555"
        lines(state / f"{flat}.jsonl", copilot_events(flat, "egrets?", "White ones."))
        check(store.reconcile(), "changes", added=2)
        assert found(store, "waders") == [new_sid]
        # A VS Code chat renamed; a chat's newer log goes, and its .json is the chat again.
        (chats / f"{CHAT}.json").write_text(vscode_chat(CHAT, "ospreys?", "Fish.", "Ospreys"))
        check(store.reconcile(), "changes", updated=1)
        assert dict(titles(db_path))[f"vscode-{CHAT}"] == "Ospreys"
        (chats / f"{CHAT_LOG}.jsonl").unlink()
        check(store.reconcile(), "changes", added=1, removed=1)
        # A new workspace's first chat.
        other = root / "User" / "workspaceStorage" / "0123abcd" / "chatSessions"
        other.mkdir(parents=True)
        (other / "c1.json").write_text(vscode_chat("c1", "plovers?", "Shore birds.", "Plovers"))
        check(store.reconcile(), "changes", added=1)
        assert found(store, "plovers") == ["vscode-c1"]
        # Files no session is read from.
        lines(root / "User" / "workspaceStorage" / "0123abcd" / "ext" / "state.json", [{}])
        lines(state / COPILOT_SID / "checkpoints" / "index.jsonl", [{}])
        check(store.reconcile(), "changes")
        # A session deleted.
        (state / new_sid / "events.jsonl").unlink()
        check(store.reconcile(), "changes", removed=1)
        assert found(store, "waders") == []
    finally:
        store.close()
    assert (rows(db_path), titles(db_path)) == fresh("copilot", root, tmp_path / "fresh.sqlite3")


# ---------------------------------------------------------------------- Kimi


def kimi_wire(said: str, answer: str, at: int = 1767000000000) -> list[dict[str, Any]]:
    parts = [{"type": "text", "text": said}]
    return [
        {"type": "turn.prompt", "input": parts, "origin": {"kind": "user"}, "time": at},
        {
            "type": "context.append_loop_event",
            "time": at + 1000,
            "event": {"type": "content.part", "part": {"type": "text", "text": answer}},
        },
    ]


def test_kimi_logs_subagents_and_titles_are_seen_by_the_watch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSION_BROWSER_VAULT", "off")
    root = tmp_path / ".kimi" / "sessions"
    sid, old_sid, new_sid = "s-newer", "s-python", "s-later"
    main = lines(root / "wd1" / sid / "agents" / "main" / "wire.jsonl", kimi_wire("hi", "Hello."))
    sub = lines(root / "wd1" / sid / "agents" / "agent-0" / "wire.jsonl", kimi_wire("go", "Ok."))
    old = root / "wd2" / old_sid
    old.mkdir(parents=True)
    (old / "wire.jsonl").write_text(python_wire())
    (old / "state.json").write_text(json.dumps({"custom_title": "CRLF in the tokenizer"}))
    db_path = tmp_path / "k.sqlite3"
    store = watched("kimi", root, db_path)
    try:
        # A session's log grows, then its subagent's.
        append(main, kimi_wire("kestrels?", "Small falcons.", 1767000100000))
        check(store.reconcile(), "changes", updated=1)
        assert found(store, "falcons") == [sid]
        append(sub, kimi_wire("ospreys?", "They fish.", 1767000200000))
        check(store.reconcile(), "changes", updated=1)
        assert found(store, "fish") == [sid]
        # A Python release's session gets its first subagent, then a new title.
        lines(old / "subagents" / "a1" / "wire.jsonl", kimi_wire("egrets?", "White herons."))
        check(store.reconcile(), "changes", updated=1)
        assert found(store, "white") == [old_sid]
        (old / "state.json").write_text(json.dumps({"custom_title": "Egrets"}))
        check(store.reconcile(), "changes", updated=1)
        assert dict(titles(db_path))[old_sid] == "Egrets"
        # A new session folder; a file that is no log.
        later = root / "wd1" / new_sid / "agents" / "main" / "wire.jsonl"
        lines(later, kimi_wire("plovers?", "Shore birds."))
        (old / "context.jsonl").write_text("{}\n")
        check(store.reconcile(), "changes", added=1)
        assert found(store, "shore") == [new_sid]
        # A session deleted.
        later.unlink()
        check(store.reconcile(), "changes", removed=1)
        assert found(store, "shore") == []
    finally:
        store.close()
    assert os.path.isdir(root / "wd1" / new_sid)
    assert (rows(db_path), titles(db_path)) == fresh("kimi", root, tmp_path / "fresh.sqlite3")
