"""Markdown in transcripts: code blocks, plain previews, hidden parts of a message."""

from __future__ import annotations

from session_browser.core import recall
from session_browser.core.model import called_tools, hidden_parts
from session_browser.core.text import code_blocks, strip_markdown


def test_code_blocks_in_order_with_their_language() -> None:
    text = "intro\n```python\nprint(1)\n\n```\nmid\n  ~~~~\nx ``` y\n~~~~\n```sh\nopen"
    assert code_blocks(text) == [("python", "print(1)\n"), ("", "x ``` y"), ("sh", "open")]
    assert code_blocks("no code `here`") == []


def test_strip_markdown_keeps_the_words() -> None:
    text = "## Fix **the** `build` and *this* [link](http://x) ~~old~~\n> quoted\n```py"
    assert strip_markdown(text) == "Fix the build and this link old\nquoted\npy"
    # Not markup: identifiers, arithmetic, a lone star.
    assert strip_markdown("snake_case_name 2 * 3 * 4 a*b") == "snake_case_name 2 * 3 * 4 a*b"


def test_title_of_a_markdown_first_message_is_plain() -> None:
    data = {"messages": [{"role": "user", "content": "# Deploy **now**\n```sh\nmake\n```"}]}
    assert recall.session_title(data) == "Deploy now sh make"


def test_hidden_parts_of_pi_and_openai_messages() -> None:
    pi = {
        "role": "assistant",
        "content": "",
        "metadata": {
            "hidden": [
                {"type": "thinking", "text": "hmm"},
                {"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": "a"}},
                {"type": "toolCall", "id": "2", "name": "read", "arguments": {"path": "b"}},
                {"type": "bash", "command": "ls", "output": "a b", "exit_code": 2},
                {"type": "toolResult", "tool_name": "grep", "text": "none", "is_error": True},
            ]
        },
    }
    assert hidden_parts(pi) == [
        ("thinking", "hmm"),
        ("tool call: read", '{"path": "a"}'),
        ("tool call: read", '{"path": "b"}'),
        ("shell (exit 2)", "$ ls\na b"),
        ("tool error: grep", "none"),
    ]
    assert called_tools(pi) == ["read"]
    openai = {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]}
    assert hidden_parts(openai) == [("tool call: f", "{}")]
    assert called_tools({"role": "user", "content": "hi"}) == []
