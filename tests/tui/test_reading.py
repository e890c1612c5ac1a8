"""Reading comfort: titles with their agent, Markdown, hidden content, highlight terms."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input

from session_browser.core.model import SUMMARY_PREFIX, is_summary_message
from session_browser.core.paths import safe_id
from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.recent.listing import RecentList
from session_browser.tui.search.hits import HitList
from session_browser.tui.viewer.screen import SCROLL_OFF, ViewerScreen, find_matches
from session_browser.tui.viewer.transcript import TranscriptView

from .conftest import make_app, screen_text, settle
from .stores import BASE, NOW, _session, conversation, long_session

SIZE = (120, 36)


def write(store: Path, data: dict[str, Any]) -> None:
    store.mkdir(parents=True, exist_ok=True)
    path = store / f"{safe_id(data['session_id'])}.json"
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")


def agent_store(root: Path) -> Path:
    store = root / "sessions"
    for i, question in enumerate(["How do I rotate a PDF?", "Plan a weekend in Porto"]):
        turns = [("user", question), ("assistant", "Here is how, in short.")]
        write(
            store,
            _session(f"chat-{i}", conversation(BASE + i * 86400, turns), agent_name="ChatGPT"),
        )
    return store


async def test_titles_are_first_user_messages_with_the_agent_beside(tmp_path: Path) -> None:
    app = make_app(agent_store(tmp_path / "home"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press(*"rotate")
        await settle(pilot, app)
        hits = app.screen.query_one(HitList)
        assert [h.display_title for h in hits.hits] == ["How do I rotate a PDF?"]
        assert "How do I rotate a PDF? · ChatGPT" in screen_text(app)
        await pilot.press("enter", "enter")
        await settle(pilot, app)
        assert isinstance(app.screen, ViewerScreen)
        assert "How do I rotate a PDF? · ChatGPT  ·  chat-0" in screen_text(app)
        await pilot.press("escape", "f3")
        await settle(pilot, app)
        recent = app.screen.query_one(RecentList)
        assert recent.total == 2
        text = screen_text(app)
        assert "Plan a weekend in Porto · ChatGPT" in text
        assert "How do I rotate a PDF? · ChatGPT" in text


MARKDOWN_REPLY = """## Plan

Some **bold** words and a [@bold]literal[/bold] tag.

| step | owner |
|------|-------|
| build | ci |

```python
def double(x):
    return x * 2
```

```sh
echo second
```
"""


def markdown_store(root: Path) -> Path:
    store = root / "sessions"
    turns = [("user", "How should we plan the **release**?"), ("assistant", MARKDOWN_REPLY)]
    write(store, _session("md", conversation(BASE, turns)))
    return store


async def open_only_session(pilot: Pilot[int], app: SessionBrowserApp) -> TranscriptView:
    await settle(pilot, app)
    await pilot.press("f3")
    await settle(pilot, app)
    await pilot.press("down", "enter")
    await settle(pilot, app)
    assert isinstance(app.screen, ViewerScreen)
    return app.screen.query_one(TranscriptView)


async def test_markdown_renders_and_r_shows_the_raw_text(tmp_path: Path) -> None:
    app = make_app(markdown_store(tmp_path / "home"))
    async with app.run_test(size=SIZE) as pilot:
        view = await open_only_session(pilot, app)
        text = screen_text(app)
        assert "## Plan" not in text and "Plan" in text
        assert "**bold**" not in text and "Some bold words" in text
        assert "[@bold]literal[/bold]" in text  # never read as Rich markup
        assert "```" not in text
        assert "def double(x):" in text
        assert "step" in text and "owner" in text and "|------|" not in text
        assert "How should we plan the release?" in text  # the title, markup taken out
        rendered_height = view.virtual_size.height
        await pilot.press("v")
        await pilot.pause()
        raw = screen_text(app)
        assert "## Plan" in raw and "**bold**" in raw and "```python" in raw
        assert "| build | ci |" in raw
        assert "raw text" in raw
        await pilot.press("v")
        await pilot.pause()
        assert "## Plan" not in screen_text(app)
        assert view.virtual_size.height == rendered_height


async def test_c_copies_the_code_blocks_of_the_message_in_turn(tmp_path: Path) -> None:
    app = make_app(markdown_store(tmp_path / "home"))
    async with app.run_test(size=SIZE) as pilot:
        view = await open_only_session(pilot, app)
        assert view.cursor == 1  # opened at the latest turn: the reply
        await pilot.press("c")
        assert app.clipboard == "def double(x):\n    return x * 2"
        await pilot.press("c")
        assert app.clipboard == "echo second"
        await pilot.press("c")
        assert app.clipboard == "def double(x):\n    return x * 2"
        await pilot.press("K", "c")  # the question has no code block: nothing copied
        assert view.cursor == 0
        assert app.clipboard == "def double(x):\n    return x * 2"


def pi_store(root: Path) -> Path:
    """One Pi session: a question, a turn that only called a tool, its result, an answer."""
    pi_dir = root / "pi" / "--work--"
    pi_dir.mkdir(parents=True)
    t0 = 1768035600000

    def entry(n: int, message: dict[str, Any]) -> dict[str, Any]:
        message = {**message, "timestamp": t0 + n * 60_000}
        parent = f"e{n - 1}" if n > 1 else None
        stamp = f"2026-01-10T09:{n:02d}:00.000Z"
        return {
            "id": f"e{n}",
            "parentId": parent,
            "timestamp": stamp,
            "type": "message",
            "message": message,
        }

    lines = [
        {
            "type": "session",
            "version": 3,
            "id": "pi-tools",
            "timestamp": "2026-01-10T09:00:00.000Z",
            "cwd": "/work",
        },
        entry(1, {"role": "user", "content": "Which files are in the repo?"}),
        entry(
            2,
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "I should list the directory first."},
                    {
                        "type": "toolCall",
                        "id": "c1",
                        "name": "bash",
                        "arguments": {"command": "ls -la"},
                    },
                ],
            },
        ),
        entry(
            3,
            {
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": "bash",
                "content": [{"type": "text", "text": "README.md\nsetup.py\nsrc"}],
            },
        ),
        entry(4, {"role": "assistant", "content": [{"type": "text", "text": "Three entries."}]}),
    ]
    path = pi_dir / "2026-01-10_pi-tools.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return root / "pi"


async def test_t_shows_tool_calls_and_thinking_of_a_pi_session(tmp_path: Path) -> None:
    app = SessionBrowserApp(
        Backend([f"pi:{pi_store(tmp_path)}"], indexed=False), now=NOW, animate=False
    )
    async with app.run_test(size=SIZE) as pilot:
        view = await open_only_session(pilot, app)
        assert len(view.messages) == 4
        text = screen_text(app)
        # the turns without text (the call, its result) are one folded run, not stubs
        assert "▸ 1 tool call: bash" in text and "(called bash)" not in text
        assert "(tool result: bash)" not in text
        assert "ls -la" not in text and "list the directory" not in text
        await pilot.press("t")  # every turn, one line each: the call as a command
        await pilot.pause()
        text = screen_text(app)
        assert "▸ tool call: bash: $ ls -la" in text and '{"command"' not in text
        assert "▸ thinking: I should list the directory first." in text
        assert "▸ tool result: bash: README.md setup.py src" in text
        assert text.index("▸ thinking") < text.index("(called bash)") < text.index("▸ tool call")
        assert "tool calls and thinking shown" in text
        await pilot.press("t")  # whole
        await pilot.pause()
        text = screen_text(app)
        assert "▾ tool result: bash" in text
        for line in ("README.md", "setup.py", "src"):
            assert f"│    {line}" in text or f"▌    {line}" in text
        await pilot.press("t")  # hidden again
        await pilot.pause()
        assert "README.md" not in screen_text(app)


async def test_filter_values_are_neither_highlighted_nor_stepped_through(tmp_path: Path) -> None:
    store = tmp_path / "home" / "sessions"
    turns = [
        ("user", "Should the billing export say yes or no?"),
        ("assistant", "Say yes."),
        ("user", "And the billing totals?"),
    ]
    write(store, _session("filters", conversation(BASE, turns)))
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press(*"billing archived:no")
        await settle(pilot, app)
        hits = app.screen.query_one(HitList)
        assert [h.session_id for h in hits.hits] == ["filters"]
        assert hits.terms == ["billing"]
        await pilot.press("enter", "enter")
        await settle(pilot, app)
        viewer = app.screen
        assert isinstance(viewer, ViewerScreen)
        assert viewer.terms == ["billing"]
        assert viewer.matches == [0, 2]  # "no" (a filter value) is not looked for
        await pilot.press("slash")
        await pilot.press("ctrl+u", *"source:praisonai yes", "enter")
        await settle(pilot, app)
        assert viewer.terms == ["yes"]
        assert viewer.matches == [0, 1]


async def test_paging_through_markdown_messages_keeps_heights_true(tmp_path: Path) -> None:
    store = tmp_path / "home" / "sessions"
    reply = "## Step {i}\n\nSome **bold** text.\n\n```python\nprint({i})\n```\n- a\n- b"
    turns = [("user" if i % 2 == 0 else "assistant", reply.format(i=i)) for i in range(80)]
    write(store, _session("paged", conversation(BASE, turns)))
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_only_session(pilot, app)
        last = view.cursor
        for key in ["pageup"] * 6 + ["pagedown"] * 2:  # upwards: messages not yet measured
            await pilot.press(key)
            await pilot.pause(0.05)
        await settle(pilot, app)
        assert app.is_running and 0 < view.cursor < last
        text = screen_text(app)
        assert "## Step" not in text and "```" not in text
        # Each message in view has the height of what it shows: its header, body, gap.
        for index in range(len(view.messages)):
            if index in view._measured:
                body = view._body(index)
                assert view._full_heights[index] == 2 + len(body)
        assert len(view._measured) >= 3


async def test_find_as_you_type_in_a_big_session_keeps_every_keystroke(tmp_path: Path) -> None:
    store = long_session(tmp_path, 20_000)
    app = SessionBrowserApp(Backend([store], indexed=False), now=NOW, animate=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.open_session("long", store="", anchor=-1, terms=[], title="long")
        await settle(pilot, app)
        viewer = app.screen
        assert isinstance(viewer, ViewerScreen)
        view = viewer.query_one(TranscriptView)
        await pilot.press("g", "slash")
        find = viewer.query_one("#find", Input)
        # Typed with no pause: each key starts a find that overtakes the one before.
        await pilot.press(*"message 12345 ")
        assert find.value == "message 12345 "
        await settle(pilot, app)
        assert find.display and find.has_focus  # found while typing: the field stays open
        assert viewer.terms == ["message", "12345"]
        assert viewer.matches == [12345]
        assert view.cursor == 12345
        # The match has a few lines of what comes before it above it.
        assert view.block_top(12345) - int(view.scroll_y) == SCROLL_OFF
        await pilot.press("backspace", "backspace", *"6", "enter")
        await settle(pilot, app)
        assert not find.display and view.has_focus
        assert viewer.terms == ["message", "12346"] and viewer.matches == [12346]
        assert view.cursor == 12346


def test_an_overtaken_find_stops() -> None:
    messages: list[dict[str, Any]] = [{"content": f"m {i}"} for i in range(5000)]
    looks: list[int] = []

    def cancelled() -> bool:
        looks.append(1)
        return len(looks) > 2

    assert find_matches(messages, ["m"], cancelled) == []
    assert len(looks) == 3
    assert find_matches(messages, ["4999"], lambda: False) == [4999]


async def test_markdown_messages_still_show_escapes_and_markup_as_written(tmp_path: Path) -> None:
    store = tmp_path / "home" / "sessions"
    hostile = (
        "## Title \x1b[2J\x1b]0;pwned\x07\n\n**bold** \u202e rtl [@click=app.quit]q[/]\n\n<b>x</b>"
    )
    write(store, _session("hostile-md", conversation(BASE, [("user", hostile)])))
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_only_session(pilot, app)
        text = screen_text(app)
        assert "Title \\x1b[2J\\x1b]0;pwned\\x07" in text
        assert "bold \\u202e rtl [@click=app.quit]q[/]" in text
        assert "<b>x</b>" in text  # raw HTML is text, never dropped
        assert "## Title" not in text and "**bold**" not in text
        strips = [view.render_line(y) for y in range(8)]
        shown = "".join(seg.text for strip in strips for seg in strip)
        assert "\x1b" not in shown and "\u202e" not in shown and "\x07" not in shown
        assert app.is_running


async def test_the_viewer_finds_what_search_found_with_accents_folded(tmp_path: Path) -> None:
    store = tmp_path / "home" / "sessions"
    turns = [
        ("user", "What should I order at the corner place?"),
        ("assistant", "Try the Café au lait and a croissant."),
        ("user", "And for lunch?"),
    ]
    write(store, _session("order", conversation(BASE, turns)))
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press(*"cafe")
        await settle(pilot, app)
        hits = app.screen.query_one(HitList)
        assert [h.session_id for h in hits.hits] == ["order"]
        await pilot.press("enter", "enter")
        await settle(pilot, app)
        viewer = app.screen
        assert isinstance(viewer, ViewerScreen)
        assert viewer.terms == ["cafe"]
        assert viewer.matches == [1]  # the message search found, found again in the viewer
        view = viewer.query_one(TranscriptView)
        match = view._style("match")
        marked = {
            segment.text
            for y in range(view.size.height)
            for segment in view.render_line(y)
            if segment.style is not None and segment.style.bgcolor == match.bgcolor
        }
        assert "Café" in marked  # highlighted as written
        await pilot.press("g", "slash")
        await pilot.press("ctrl+u", *"CAFE", "enter")
        await settle(pilot, app)
        assert viewer.terms == ["CAFE"]
        assert viewer.matches == [1]
    assert find_matches([{"content": "Ça va, Café?"}], ["ca", "cafe"], None) == [0]


async def test_only_a_compaction_summary_is_labelled_one(tmp_path: Path) -> None:
    """The viewer calls a message a summary when the core does: a system message saying
    "[Session Summary]" that compaction did not write (no ``compaction`` flag) is not one."""
    store = tmp_path / "home" / "sessions"
    archived = conversation(BASE, [("user", "Old question"), ("assistant", "Old answer")])
    summary = {
        "role": "system",
        "content": f"{SUMMARY_PREFIX} the user asked an old question.",
        "timestamp": BASE + 3 * 3600,
        "metadata": {"compaction": True},
    }
    quoted = {
        "role": "system",
        "content": f"{SUMMARY_PREFIX} pasted by hand, not written by compaction.",
        "timestamp": BASE + 4 * 3600,
    }
    messages = [summary, quoted, *conversation(BASE + 5 * 3600, [("user", "New question")])]
    assert [is_summary_message(m) for m in (summary, quoted)] == [True, False]
    write(store, _session("compacted", messages, archived=archived))
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.open_session("compacted", store="", anchor=-1, terms=[], title="compacted")
        await settle(pilot, app)
        await pilot.press("g")
        await settle(pilot, app)
        text = screen_text(app)
        assert "pasted by hand" in text and "the user asked an old question" in text
        assert text.count("SUMMARY of the archived turns") == 1
