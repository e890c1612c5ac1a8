"""The transcript viewer: one Line-API ``ScrollView`` over a whole archived+active projection.

Layout is a list of blocks (a message, or the rule where compaction happened) with prefix
sums of their heights; a line on screen is found with ``bisect``. Message bodies are wrapped
only when shown and kept in an LRU cache, as are the rendered strips, so a 20,000-message
session opens and scrolls without building anything per message beyond one height.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Sequence
from itertools import accumulate
from typing import Any, ClassVar, cast

from markdown_it import MarkdownIt
from rich.cells import cell_len, get_character_cell_size
from rich.console import Console
from rich.markdown import Markdown
from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from session_browser.core.model import called_tools, content_text, is_summary_message
from session_browser.core.reading import ToolRun, interruption, reader_parts, tool_runs
from session_browser.tui.backend import release_free_memory
from session_browser.tui.common.lineview import LineView
from session_browser.tui.common.render import (
    error_text,
    highlight,
    printable,
    raw_value,
    role_label,
    short_time,
)
from session_browser.tui.common.rowlist import component_style

GUTTER = 3  # "▌  " before every body line
CONTEXT_LEVELS: tuple[int | None, ...] = (0, 1, 3, 10, 30, None)
WRAP_CACHE = 512
COLLAPSED_HEIGHT = 3
# A longer message shows its first this-many characters and a line saying how many more
# there are (wrapping and laying out 50 MB of one message is not what a reader wants first).
SHOWN_CHARS = 20_000
FULL_KEY = "w"  # the default key that shows a cut message whole (viewer.full_message)
# A message shown whole and longer than this is shown as plain text, not rendered Markdown.
MARKDOWN_CHARS = 100_000
CODE_THEME = "monokai"
# Hidden content (tool calls and results, thinking): off, one line each, or whole.
HIDDEN_OFF, HIDDEN_LINES, HIDDEN_WHOLE = 0, 1, 2
HIDDEN_CHARS = 20_000  # of one hidden part shown whole
# Text that reads as Markdown: a heading, list item, quote, fence or table row at the start of
# a line, or emphasis, inline code or a link anywhere. Anything else is wrapped as plain text
# (the fast path, and exactly the text as written).
_MARKDOWN_HINT = re.compile(
    r"^ {0,3}(?:#{1,6}\s|[-*+]\s|\d{1,9}[.)]\s|>|```|~~~|\|)"
    r"|\*\*|__|`|~~|\[[^\]\n]*\]\(|(?<![\w*])\*[^\s*]",
    re.MULTILINE,
)

# A line of a message body: plain text (wrapped), styled text (rendered Markdown), or
# (kind, text) drawn in the style of its kind: "marker" and "hidden" dim, and the lines of a
# run of tool calls ("run" its title, "call" a call, "out" output, "del"/"add" a diff).
BodyLine = str | Text | tuple[str, str]
RUN_CLOSED, RUN_OPEN = "▸", "▾"


def looks_like_markdown(text: str) -> bool:
    return _MARKDOWN_HINT.search(text) is not None


class SafeMarkdown(Markdown):
    """Rich's Markdown with raw HTML read as text: a ``<div>`` in a transcript is shown,
    never dropped. Links are shown with their address (no terminal hyperlinks)."""

    def __init__(self, markup: str) -> None:
        super().__init__("", code_theme=CODE_THEME, hyperlinks=False)
        self.markup = markup
        parser = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table")
        self.parsed = parser.parse(markup)


def markdown_lines(text: str, width: int, console: Console) -> list[Text]:
    """``text`` rendered as Markdown ``width`` cells wide, one ``Text`` a line (never Rich
    markup: the text is only ever read as Markdown)."""
    options = console.options.update(width=width, height=None)
    rendered = console.render_lines(SafeMarkdown(text), options, pad=False, new_lines=False)
    out: list[Text] = []
    for segments in rendered:
        line = Text(end="", no_wrap=True)
        for segment in segments:
            if not segment.control:
                line.append(segment.text, segment.style)
        out.append(line)
    while out and not out[-1].plain.strip():
        out.pop()
    while out and not out[0].plain.strip():
        out.pop(0)
    return out or [Text("")]


def cut_marker(more: int, key: str = FULL_KEY) -> str:
    return f"… {more:,} more character{'s' if more != 1 else ''} — press {key} to show all"


def message_parts(
    message: dict[str, Any], limit: int | None = SHOWN_CHARS, key: str = FULL_KEY
) -> tuple[str, str]:
    """(body, cut marker) of a message as shown: controls escaped, tabs expanded, cut after
    ``limit`` characters (None: whole) with a marker saying how many more there are ('' when
    whole); a placeholder saying why when the content cannot be shown at all. A turn with
    no text that called tools says which."""
    try:
        text = content_text(message.get("content"))
        if not text:
            names = called_tools(message)
            if names:
                text = f"(called {', '.join(names)})"
            elif message.get("tool_calls"):
                text = f"(tool calls: {raw_value(message.get('tool_calls'), 2000)})"
            elif message.get("role") == "tool":
                parts = reader_parts(message, bookkeeping=False)
                if parts:
                    text = f"({parts[0][0]})"
        more = len(text) - limit if limit is not None else 0
        if more > 0:
            return printable(text[:limit]).expandtabs(4), cut_marker(more, key)
        return printable(text).expandtabs(4), ""
    except Exception as exc:  # one unusable message never takes the session down
        return f"⚠ this message cannot be shown ({error_text(exc)})", ""


def message_text(
    message: dict[str, Any], limit: int | None = SHOWN_CHARS, key: str = FULL_KEY
) -> str:
    """The body of a message as plain text, the cut marker as its last line."""
    body, marker = message_parts(message, limit, key)
    return f"{body}\n{marker}" if marker else body


def hidden_lines(
    message: dict[str, Any], width: int, whole: bool
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The hidden parts of ``message`` as body lines, one line each (a client's bookkeeping
    left out, calls as a reader sees them) or wrapped whole (everything): those to show
    before its text (thinking, as it came first) and after it (tool calls...)."""
    before: list[tuple[str, str]] = []
    after: list[tuple[str, str]] = []
    try:
        parts = reader_parts(message, bookkeeping=whole)
    except Exception as exc:
        return [], [("hidden", f"⚠ hidden content cannot be shown ({error_text(exc)})")]
    for label, text in parts:
        out = before if label == "thinking" else after
        if not whole:
            first = " ".join(text[: width * 2].split())
            out.append(("hidden", printable(f"▸ {label}: {first}", one_line=True)))
            continue
        out.append(("hidden", printable(f"▾ {label}", one_line=True)))
        shown = printable(text[:HIDDEN_CHARS]).expandtabs(4)
        if len(text) > HIDDEN_CHARS:
            shown += f"\n… {len(text) - HIDDEN_CHARS:,} more characters"
        out.extend(("hidden", "  " + line) for line in wrap(shown, max(1, width - 2)))
    return before, after


def run_lines(run: ToolRun, opened: bool) -> list[tuple[str, str]]:
    """The lines of a run of tool calls: its title, and when ``opened`` each call with the
    first lines of its output or its diff."""
    lines = [("run", f"{RUN_OPEN if opened else RUN_CLOSED} {run.title()}")]
    if not opened:
        return lines
    for call in run.calls:
        mark = "✗ " if call.error else ""
        lines.append(("call", printable(f"  {mark}{call.summary}", one_line=True)))
        lines.extend((kind, printable(f"      {text}", one_line=True)) for kind, text in call.lines)
    return lines


def run_text(run: ToolRun) -> str:
    """A run of tool calls as plain text, opened (what ``y`` copies)."""
    return "\n".join(text for _kind, text in run_lines(run, True))


def is_cut(message: dict[str, Any], limit: int = SHOWN_CHARS) -> bool:
    """Whether :func:`message_text` cuts this message at ``limit``."""
    content = message.get("content")
    if isinstance(content, str):
        return len(content) > limit
    try:
        return len(content_text(content)) > limit
    except Exception:
        return False


def _wrap_line(line: str, width: int) -> list[str]:
    """Greedy word wrap of one line to ``width`` cells (long words are cut)."""
    if line.isascii():
        # By offsets into the line (never re-slicing the rest of it): linear in its length.
        end = len(line)
        if end <= width:
            return [line]
        out: list[str] = []
        start = 0
        while end - start > width:
            cut = line.rfind(" ", start, start + width + 1)
            if cut <= start:
                out.append(line[start : start + width])
                start += width
            else:
                out.append(line[start:cut])
                start = cut + 1
        out.append(line[start:])
        return out
    if cell_len(line) <= width:
        return [line]
    out = []
    start = 0
    cells = 0
    last_space = -1
    i = 0
    while i < len(line):
        size = get_character_cell_size(line[i])
        if cells + size > width and i > start:
            if last_space > start:
                out.append(line[start:last_space])
                start = last_space + 1
            else:
                out.append(line[start:i])
                start = i
            cells = cell_len(line[start:i])
            last_space = -1
            continue
        if line[i] == " ":
            last_space = i
        cells += size
        i += 1
    out.append(line[start:])
    return out


def wrap(text: str, width: int) -> list[str]:
    width = max(1, width)
    out: list[str] = []
    for line in text.split("\n"):
        out.extend(_wrap_line(line, width))
    return out or [""]


def count_lines(text: str, width: int) -> int:
    """The number of lines :func:`wrap` gives (fast path for short ASCII lines)."""
    width = max(1, width)
    total = 0
    for line in text.split("\n"):
        if len(line) <= width and line.isascii():
            total += 1
        else:
            total += len(_wrap_line(line, width))
    return total


class TranscriptView(LineView, can_focus=True):
    """Scrolls a projection; the cursor is the message that keys act on."""

    STRIP_CACHE: ClassVar[int] = 4000  # rendered lines kept (a few screens, at any width)

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "transcript--user",
        "transcript--assistant",
        "transcript--system",
        "transcript--tool",
        "transcript--archived",
        "transcript--summary",
        "transcript--rule",
        "transcript--cursor",
        "transcript--match",
        "transcript--anchor",
        "transcript--dim",
        "transcript--label",
        "transcript--run",
        "transcript--del",
        "transcript--add",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "scroll_up", "Scroll up", show=False, id="viewer.scroll_up"),
        Binding("down,j", "scroll_down", "Scroll down", show=False, id="viewer.scroll_down"),
        # Space marks rows in lists: here it would mean something else, so it is not bound.
        Binding("pageup,ctrl+b", "page_up", "Page up", show=False, id="viewer.page_up"),
        Binding("pagedown,ctrl+f", "page_down", "Page down", show=False, id="viewer.page_down"),
    ]

    cursor: reactive[int] = reactive(0, always_update=True, init=False)

    class CursorMoved(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.messages: list[dict[str, Any]] = []
        self.archived_count = 0
        self.anchor_index = -1
        self.focus_index = 0
        self.terms: list[str] = []
        self.matches: set[int] = set()
        self.context_level = len(CONTEXT_LEVELS) - 1
        self._blocks: list[int] = []  # message index, or -1 for the compaction rule
        self._block_of: list[int] = []
        self._full_heights: list[int] = []
        self._heights_width = -1
        self._wrap_cache: OrderedDict[tuple[int, int], list[BodyLine]] = OrderedDict()
        self.full: set[int] = set()  # long messages the reader asked to see whole
        self.full_key = FULL_KEY  # named in the cut marker
        self.raw = False  # True: every message as the plain text it is (no Markdown)
        self.hidden_mode = HIDDEN_OFF
        # Turns of a kept version that its successor no longer holds, and their label.
        self.removed: set[int] = set()
        self.removed_label = " removed later "
        # Messages whose height is that of their shown body at the current width (the
        # others are estimated from their plain text until they come into view).
        self._measured: set[int] = set()
        self._measuring = False
        self._measure_pending = False
        # Runs of turns without prose (tool calls and results), by their first turn: one
        # block each while tool calls and thinking are hidden; the opened ones show each call.
        self.runs: dict[int, ToolRun] = {}
        self._run_at: dict[int, int] = {}  # a turn of a run -> the run's first turn
        self.open_runs: set[int] = set()

    # ------------------------------------------------------------------ loading

    def load(
        self,
        messages: list[dict[str, Any]],
        *,
        anchor: int,
        terms: Sequence[str] = (),
        heights: list[int] | None = None,
        heights_width: int = -1,
    ) -> None:
        self.messages = messages
        self.archived_count = sum(1 for m in messages if m.get("archived"))
        self.anchor_index = anchor if 0 <= anchor < len(messages) else -1
        self.focus_index = max(0, self.anchor_index)
        self.terms = list(terms)
        self.full = set()
        self._measured = set()
        self._wrap_cache.clear()
        self.runs = {run.start: run for run in tool_runs(messages)}
        self.open_runs = set()
        self._build_blocks()
        self._full_heights = list(heights) if heights else []
        self._heights_width = heights_width if heights else -1
        if self._full_heights:
            self._run_heights()
        self._layout()
        start = max(0, self.anchor_index)
        self.set_cursor(start, top=self.anchor_index >= 0)

    @property
    def grouped(self) -> bool:
        """Whether runs of tool calls are folded (tool calls and thinking are hidden)."""
        return self.hidden_mode == HIDDEN_OFF

    def _build_blocks(self) -> None:
        """Blocks: message indices (a run's first turn stands for the run while runs are
        folded), with -1 for the compaction rule after the archived turns."""
        messages = self.messages
        n = len(messages)
        cut = self.archived_count
        rule = bool(cut) and (cut == n or not messages[cut].get("archived"))
        self._run_at = {}
        if not (self.grouped and self.runs):
            # C-level list operations: a 20,000-message session costs milliseconds.
            if rule:
                self._blocks = [*range(cut), -1, *range(cut, n)]
                self._block_of = [*range(cut), *range(cut + 1, n + 1)]
            else:
                self._blocks = list(range(n))
                self._block_of = list(range(n))
            return
        blocks: list[int] = []
        block_of = [0] * n
        i = 0
        while i < n:
            if rule and i == cut:
                blocks.append(-1)
            run = self.runs.get(i)
            block_of[i] = len(blocks)
            blocks.append(i)
            if run is None:
                i += 1
                continue
            for j in range(run.start + 1, run.end + 1):
                block_of[j] = block_of[i]
                self._run_at[j] = i
            i = run.end + 1
        if rule and cut == n:
            blocks.append(-1)
        self._blocks, self._block_of = blocks, block_of

    def run_start(self, index: int) -> int:
        """The block ``index`` is shown in: its run's first turn when runs are folded."""
        return self._run_at.get(index, index)

    def _is_run(self, index: int) -> bool:
        return self.grouped and index in self.runs

    def _run_heights(self) -> None:
        """Heights of the runs' blocks (the other turns of a run take no lines)."""
        for start, run in self.runs.items():
            if self.grouped:
                # a folded run is its title line (read only when shown) and a blank line
                opened = start in self.open_runs
                self._full_heights[start] = 1 + (len(run_lines(run, True)) if opened else 1)
                for j in range(start + 1, run.end + 1):
                    self._full_heights[j] = 0

    def toggle_run(self, index: int) -> bool | None:
        """Open the run of tool calls ``index`` is in (again: fold it); None when it is in
        none (or runs are not folded: every turn is shown)."""
        start = self.run_start(index)
        if not self._is_run(start):
            return None
        if start in self.open_runs:
            self.open_runs.discard(start)
        else:
            self.open_runs.add(start)
        self._ensure_heights()
        self._wrap_cache.pop((start, self._heights_width), None)
        self._full_heights[start] = 1 + len(self._body(start))
        self._measured.add(start)
        self._layout()
        self.set_cursor(start, top=False)
        return start in self.open_runs

    def run_at_cursor(self) -> ToolRun | None:
        """The run of tool calls under the cursor (None: a turn of its own)."""
        start = self.run_start(self.cursor)
        return self.runs[start] if self._is_run(start) else None

    def step(self, index: int, step: int) -> int:
        """The first turn of the block ``step`` blocks from the one ``index`` is in."""
        if not self._blocks:
            return index
        b = self._block_of[max(0, min(index, len(self._block_of) - 1))]
        direction = 1 if step > 0 else -1
        for _ in range(abs(step)):
            nb = b + direction
            while 0 <= nb < len(self._blocks) and self._blocks[nb] < 0:
                nb += direction
            if not 0 <= nb < len(self._blocks):
                break
            b = nb
        return self._blocks[b]

    def on_unmount(self) -> None:
        """The viewer closed: drop the messages and all laid out or cached for them, and
        give the memory back (a 20,000-message session is tens of MB)."""
        self.messages = []
        self._blocks, self._block_of, self._offsets = [], [], [0]
        self._full_heights = []
        self._wrap_cache.clear()
        self._strips.clear()
        self._measured = set()
        release_free_memory()

    def at_end(self) -> bool:
        """Whether the reader is at the end: the cursor on the last message, or scrolled to
        the last line of a session longer than the view (or no messages)."""
        if not self.messages or self.cursor == len(self.messages) - 1:
            return True
        return 0 < self.max_scroll_y <= self.scroll_y

    def replace_messages(
        self,
        messages: list[dict[str, Any]],
        heights: list[int],
        heights_width: int,
        *,
        follow: bool,
    ) -> None:
        """The same session read again (turns were appended, or it was rewritten): the
        cursor, scroll position, context and whole-shown messages stay; with ``follow``,
        the view moves to the new end instead."""
        cursor, top, focus = self.cursor, self.scroll_y, self.focus_index
        full = self.full
        opened = self.open_runs
        self.load(
            messages,
            anchor=self.anchor_index,
            terms=self.terms,
            heights=heights,
            heights_width=heights_width,
        )
        if not messages:
            return
        self.focus_index = min(focus, len(messages) - 1)
        self.full = {i for i in full if i < len(messages)}
        for i in self.full:
            self._full_heights[i] = 2 + count_lines(self._text(i), self._heights_width)
        self.open_runs = {i for i in opened if i in self.runs}
        self._run_heights()
        self._layout()
        if follow:
            self.set_cursor(len(messages) - 1, top=False)
            self.scroll_end(animate=False, immediate=True)
        else:
            self.cursor = self.run_start(min(cursor, len(messages) - 1))
            self.scroll_to(y=top, animate=False, immediate=True)
            self._measure_visible()

    def body_width(self) -> int:
        width = self.scrollable_content_region.width
        if width <= 0:  # not laid out yet: the screen's width less the scrollbar
            width = self.app.size.width - self.styles.scrollbar_size_vertical
        return max(10, width - GUTTER - 1)

    def _ensure_heights(self) -> None:
        width = self.body_width()
        if self._heights_width == width and len(self._full_heights) == len(self.messages):
            return
        self._full_heights = [
            2 + count_lines(self._text(i), width) for i in range(len(self.messages))
        ]
        self._run_heights()
        self._heights_width = width
        self._wrap_cache.clear()
        self._measured.clear()

    def _text(self, index: int) -> str:
        limit = None if index in self.full else SHOWN_CHARS
        return message_text(self.messages[index], limit, self.full_key)

    def _make_body(self, index: int, width: int) -> list[BodyLine]:
        """The lines of message ``index`` as shown ``width`` cells wide: its text as rendered
        Markdown (or wrapped plain text), the cut marker, and hidden parts when shown."""
        if self._is_run(index):
            return list(run_lines(self.runs[index], index in self.open_runs))
        message = self.messages[index]
        limit = None if index in self.full else SHOWN_CHARS
        body, marker = message_parts(message, limit, self.full_key)
        lines: list[BodyLine] = []
        markdown = not self.raw and len(body) <= MARKDOWN_CHARS and looks_like_markdown(body)
        if markdown:
            try:
                lines.extend(markdown_lines(body, width, self.app.console))
            except Exception:  # Markdown that cannot be rendered is shown as written
                markdown = False
        if not markdown:
            lines.extend(wrap(body, width))
        if marker:
            lines.append(("marker", marker))
        note = interruption(message)
        if note:
            lines.append(("marker", f"[{note}]"))
        if self.hidden_mode != HIDDEN_OFF:
            before, after = hidden_lines(message, width, self.hidden_mode == HIDDEN_WHOLE)
            lines = [*before, *lines, *after]
        return lines

    def set_raw(self, raw: bool) -> None:
        """Show every message as its plain text (True) or rendered Markdown (False)."""
        self.raw = raw
        self._relayout_all()

    def set_hidden(self, mode: int) -> None:
        """Hide tool calls/results and thinking (runs of them folded), show them one line
        each, or whole (every turn on its own)."""
        self.hidden_mode = mode
        self._build_blocks()
        self._relayout_all()

    def _relayout_all(self) -> None:
        keep = self.run_start(self.cursor)
        self._heights_width = -1  # every height estimated again, the shown ones measured
        self._layout()
        if self.messages:
            self.set_cursor(keep, top=True)

    def toggle_full(self, index: int) -> bool | None:
        """Show message ``index`` whole (or cut again); None when it is not a long one.

        Only that message is wrapped again: its height changes, the others stay."""
        if not 0 <= index < len(self.messages) or not is_cut(self.messages[index]):
            return None
        if index in self.full:
            self.full.discard(index)
        else:
            self.full.add(index)
        self._ensure_heights()
        self._wrap_cache.pop((index, self._heights_width), None)
        self._full_heights[index] = 2 + len(self._body(index))
        self._measured.add(index)
        self._layout()
        return index in self.full

    def _shown_height(self, index: int) -> int:
        """Lines of block ``index`` shown whole: a header, its body and a blank line (a
        run has no header)."""
        return (1 if self._is_run(index) else 2) + len(self._body(index))

    def _expanded(self, index: int) -> bool:
        level = CONTEXT_LEVELS[self.context_level]
        return level is None or abs(index - self.focus_index) <= level

    def _layout(self) -> None:
        self._ensure_heights()
        self._offsets_from_heights()
        self._measure_visible()

    def _offsets_from_heights(self) -> None:
        full = self._full_heights
        if CONTEXT_LEVELS[self.context_level] is None:  # everything expanded: no per-block test
            heights = [2 if i < 0 else full[i] for i in self._blocks]
        else:
            heights = [
                2
                if i < 0
                else (full[i] if self._expanded(i) or self._is_run(i) else COLLAPSED_HEIGHT)
                for i in self._blocks
            ]
        self._offsets = [0, *accumulate(heights)]
        self._strips.clear()
        self.virtual_size = Size(self.scrollable_content_region.width, self._offsets[-1])
        self.refresh()

    def _measure_visible(self) -> None:
        """Give each message in view the height of its shown body (rendered Markdown and
        hidden parts are not what the plain-text estimate counted); a message above the top
        that changes height moves the scroll position with it, so the view stays put."""
        if self._measuring or not self._blocks or not self.messages:
            return
        self._measuring = True
        try:
            for _ in range(8):
                top = int(self.scroll_y)
                view = self.scrollable_content_region.height or self.app.size.height
                first = max(0, bisect_right(self._offsets, top) - 1)
                last = min(len(self._blocks), bisect_right(self._offsets, top + view))
                shift = 0
                changed = False
                for b in range(first, last):
                    index = self._blocks[b]
                    if index < 0 or index in self._measured or not self._expanded(index):
                        continue
                    self._measured.add(index)
                    old = self._full_heights[index]
                    new = self._shown_height(index)
                    if new != old:
                        self._full_heights[index] = new
                        changed = True
                        if self._offsets[b] < top:
                            shift += new - old
                if not changed:
                    break
                self._offsets_from_heights()
                if shift and not self.app.animator.is_being_animated(self, "scroll_y"):
                    self.scroll_to(y=top + shift, animate=False, immediate=True)
        finally:
            self._measuring = False

    def _measure_later(self) -> None:
        if not self._measure_pending:
            self._measure_pending = True

            def run() -> None:
                self._measure_pending = False
                self._measure_visible()

            self.call_after_refresh(run)

    # ------------------------------------------------------------------ geometry

    def block_top(self, index: int) -> int:
        return self._offsets[self._block_of[index]]

    def message_at_line(self, y: int) -> int:
        if not self._blocks:
            return -1
        b = bisect_right(self._offsets, max(0, min(y, self._offsets[-1] - 1))) - 1
        block = self._blocks[b]
        if block < 0:
            return self._blocks[b + 1] if b + 1 < len(self._blocks) else b - 1
        return block

    def set_cursor(self, index: int, *, top: bool = True, context: int = 1) -> None:
        """Put the cursor on message ``index``, scrolled into view; with ``top``, at the top
        with ``context`` lines of what comes before it above."""
        if not self.messages:
            return
        index = self.run_start(max(0, min(index, len(self.messages) - 1)))
        self.cursor = index
        y = self.block_top(index)
        b = self._block_of[index]
        if b > 0 and self._blocks[b - 1] < 0:  # keep the compaction rule in view
            y = self._offsets[b - 1] + 1
        height = self._offsets[self._block_of[index] + 1] - y
        view = self.scrollable_content_region.height
        if top or y < self.scroll_offset.y or y + min(height, view) > self.scroll_offset.y + view:
            self.scroll_to(y=max(0, y - context), animate=False, immediate=True)
        self._measure_visible()

    def watch_cursor(self, old: int, new: int) -> None:
        # Only the message the cursor left and the one it reached are drawn again.
        for index in (old, new):
            if 0 <= index < len(self._block_of):
                self.forget_block(self._block_of[index])
        self.post_message(self.CursorMoved(self.cursor))

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if not self.messages:
            return
        if self.app.animator.is_being_animated(self, "scroll_y"):
            # Not inside a scroll animation's step (it must not be stopped from there).
            self._measure_later()
        else:
            self._measure_visible()
        top = int(new)
        bottom = top + self.scrollable_content_region.height
        y = self.block_top(self.cursor)
        if y < top or y >= bottom:
            first = self.message_at_line(top + 1 if top else 0)
            if first >= 0 and first != self.cursor:
                self.cursor = first

    def set_context(self, level: int) -> None:
        self.context_level = max(0, min(level, len(CONTEXT_LEVELS) - 1))
        self.focus_index = self.cursor
        self._layout()
        self.set_cursor(self.cursor, top=True)

    def set_terms(self, terms: Sequence[str], matches: set[int]) -> None:
        self.terms = list(terms)
        self.matches = matches
        self._strips.clear()
        self.refresh()

    def on_resize(self) -> None:
        if self.messages:
            keep = self.cursor
            # The lines above the cursor's message stay above it (a match keeps its context).
            above = self.block_top(keep) - int(self.scroll_y)
            self._layout()
            self.set_cursor(keep, top=True, context=above if 0 < above <= 10 else 1)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    # ------------------------------------------------------------------ rendering

    def _style(self, name: str) -> Style:
        return component_style(self, f"transcript--{name}")

    def _body(self, index: int) -> list[BodyLine]:
        key = (index, self._heights_width)
        lines = self._wrap_cache.get(key)
        if lines is None:
            lines = self._make_body(index, self.body_width())
            self._wrap_cache[key] = lines
            if len(self._wrap_cache) > WRAP_CACHE:
                self._wrap_cache.popitem(last=False)
        else:
            self._wrap_cache.move_to_end(key)
        return lines

    def _role_style(self, message: dict[str, Any]) -> Style:
        role = str(message.get("role", ""))
        name = role if role in ("user", "assistant", "system", "tool") else "system"
        return self._style(name)

    def _header(self, index: int) -> Text:
        m = self.messages[index]
        role_style = self._role_style(m)
        label = self._style("label")
        text = Text(end="")
        text.append(f"#{index:<5}", style=self._style("dim"))
        text.append(f" {role_label(str(m.get('role', '')))} ", style=role_style + Style(bold=True))
        stamp = short_time(m.get("timestamp"))
        if stamp:
            text.append(f" {stamp}", style=self._style("dim"))
        if is_summary_message(m):
            text.append("  ")
            text.append(" SUMMARY of the archived turns ", style=self._style("summary") + label)
        if m.get("archived"):
            text.append("  ")
            text.append(" archived ", style=self._style("archived") + label)
        if index == self.anchor_index:
            text.append("  ")
            text.append(" search match ", style=self._style("anchor") + label)
        elif index in self.matches:
            text.append("  ")
            text.append(" match ", style=self._style("match"))
        if index in self.removed:
            text.append("  ")
            text.append(
                self.removed_label, style=self._style("archived") + label + Style(bold=True)
            )
        if m.get("tool_calls"):
            text.append("  tool calls", style=self._style("dim"))
        return text

    def _block_line(self, b: int, line: int, width: int) -> Strip:
        index = self._blocks[b]
        base = self.rich_style
        if index < 0:
            if line == 0:
                n = self.archived_count
                label = f" {n} earlier turn{'s' if n != 1 else ''} archived here (compaction) "
                side = max(2, (width - len(label)) // 2)
                text = Text("─" * side + label + "─" * side, style=self._style("rule"), end="")
                text.truncate(width)
                return Strip(list(text.render(self.app.console))).adjust_cell_length(width, base)
            return Strip.blank(width, base)
        m = self.messages[index]
        is_cursor = index == self.cursor
        archived = bool(m.get("archived"))
        gutter_style = self._role_style(m)
        if is_cursor:
            gutter_style = self._style("cursor")
        elif index == self.anchor_index:
            gutter_style = self._style("anchor")
        expanded = self._expanded(index)
        height = self._offsets[b + 1] - self._offsets[b]
        if line == height - 1:
            return Strip.blank(width, base)
        if self._is_run(index):
            return self._run_line(index, line, width, gutter_style, is_cursor)
        if line == 0:
            mark = "▌" if is_cursor else ("┆" if archived else "│")
            text = Text(end="")
            text.append(f"{mark} ", style=gutter_style)
            text.append_text(self._header(index))
        else:
            body = self._body(index)
            content: BodyLine
            if expanded:
                content = body[line - 1] if line - 1 < len(body) else ""
                suffix = ""
            else:
                content = body[0] if body else ""
                more = len(body) - 1
                plural = "s" if more != 1 else ""
                suffix = f"  … {more} more line{plural} (+ to expand)" if more > 0 else ""
            mark = "▌" if is_cursor else ("┆" if archived else "│")
            text = Text(end="")
            text.append(f"{mark}  ", style=gutter_style)
            body_style = self._style("archived") if archived else Style()
            if is_summary_message(m):
                body_style = self._style("summary")
            if isinstance(content, tuple):  # the cut marker or hidden parts: not the text
                kind, line_text = content
                style = self._style("dim")
                body_text = Text(line_text, style=style + Style(italic=kind == "marker"), end="")
            elif isinstance(content, Text):  # a line of rendered Markdown
                body_text = content.copy()
                body_text.style = body_style
            else:
                body_text = Text(content, style=body_style, end="")
            if index == self.anchor_index or index in self.matches:
                highlight(body_text, self.terms, self._style("match"))
            text.append_text(body_text)
            if suffix:
                text.append(suffix, style=self._style("dim"))
        text.no_wrap = True
        text.truncate(width, overflow="ellipsis")
        return Strip(list(text.render(self.app.console))).adjust_cell_length(width, base)

    def _run_line(
        self, index: int, line: int, width: int, gutter_style: Style, is_cursor: bool
    ) -> Strip:
        """Line ``line`` of the run of tool calls that starts at turn ``index``."""
        body = self._body(index)
        kind, line_text = ("", "")
        if line < len(body) and isinstance(body[line], tuple):
            kind, line_text = cast(tuple[str, str], body[line])
        text = Text(end="")
        text.append(f"{'▌' if is_cursor else '│'}  ", style=gutter_style)
        style = {
            "run": self._style("run"),
            "call": Style(),
            "del": self._style("del"),
            "add": self._style("add"),
        }.get(kind, self._style("dim"))
        text.append(line_text, style=style)
        if kind == "run" and is_cursor and index not in self.open_runs:
            text.append("  (Enter opens)", style=self._style("dim"))
        text.no_wrap = True
        text.truncate(width, overflow="ellipsis")
        return Strip(list(text.render(self.app.console))).adjust_cell_length(width, self.rich_style)

    def render_block_line(self, b: int, line: int, width: int) -> Strip:
        index = self._blocks[b]
        if index >= 0 and index not in self._measured and self._expanded(index):
            self._measure_later()  # shown before it was measured: put right next frame
        try:
            strip = self._block_line(b, line, width)
        except Exception as exc:  # a placeholder line, never a crash
            text = Text(f"│  ⚠ this line cannot be shown ({error_text(exc)})", end="")
            text.truncate(width, overflow="ellipsis")
            strip = Strip(list(text.render(self.app.console))).adjust_cell_length(width)
        return strip.apply_style(self.rich_style)
