"""The search hits: title, when, score, badges, and bookends (opening -> match -> closing)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message

from session_browser.core.model import SessionHit
from session_browser.core.text import clip, strip_markdown
from session_browser.tui.common.render import (
    age_text,
    highlight,
    hit_badges,
    join_badges,
    one_line,
    role_label,
    safe,
    when_text,
    with_agent,
)
from session_browser.tui.common.rowlist import RowList, right_column

TURN_CHARS = 2000


def _turn_text(message: dict[str, Any]) -> str:
    from session_browser.core.model import content_text

    # A bounded prefix: the row shows 400 characters of it (folding a 50 MB turn's
    # whitespace would copy all of it, twice).
    return one_line(strip_markdown(content_text(message.get("content"))[:TURN_CHARS]))


class HitList(RowList):
    """Search results; Enter opens, ``e`` explains the score. When more sessions matched
    than are shown, a last row says so: the cursor reaching it (or Enter on it) asks for
    the next page (:class:`MoreWanted`)."""

    class MoreWanted(Message):
        """The cursor reached the "more" row (or Enter was pressed on it)."""

        def __init__(self, sender: HitList) -> None:
            super().__init__()
            self.list = sender

        @property
        def control(self) -> HitList:
            return self.list

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e", "screen.explain_hit", "Why this score", id="hits.explain"),
    ]

    def __init__(self, *, now: datetime | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self._fixed_now = now
        self.hits: list[SessionHit] = []
        self.terms: list[str] = []
        self.fresh: frozenset[str] = frozenset()  # new or changed since the user looked
        # The last row's text when more hits can be had ("" when all are shown).
        self.more = ""
        self.more_loading = False

    @property
    def now(self) -> datetime:
        """What ages are measured against: the live clock unless one was given (tests)."""
        return self._fixed_now or datetime.now(UTC)

    def set_hits(
        self, hits: list[SessionHit], terms: list[str], *, more: str = "", cursor: int = 0
    ) -> None:
        """Show ``hits`` with the cursor on row ``cursor``; ``more``: the text of a last row
        offering the next page ("" when every hit is shown)."""
        self.hits = hits
        self.terms = terms
        self.more = more
        self.more_loading = False
        self.cursor = 0
        self.set_heights(self.row_heights())
        if cursor:
            self.move_cursor(cursor)
        else:
            self.scroll_to(0, 0, animate=False)

    def row_heights(self) -> list[int]:
        heights = [self._height(h) for h in self.hits]
        return [*heights, 1] if self.more else heights

    def on_row_list_cursor_moved(self, event: RowList.CursorMoved) -> None:
        if event.list is self and self.more and event.index == len(self.hits):
            self._want_more()

    def action_open(self) -> None:
        if self.more and self.cursor == len(self.hits):
            self._want_more()
        else:
            super().action_open()

    def _want_more(self) -> None:
        if not self.more_loading:
            self.more_loading = True
            self.invalidate()
            self.post_message(self.MoreWanted(self))

    def set_fresh(self, fresh: frozenset[str]) -> None:
        if fresh != self.fresh:
            self.fresh = fresh
            self.invalidate()

    def _turn(self, line: Text, msg: dict[str, Any], dim: Style, match: Style) -> None:
        """One bookend turn on ``line``: its role and text (a turn with no text, such as
        a tool call or its result, says so)."""
        line.append(f"{role_label(str(msg.get('role', '')))}: ", style=dim)
        text = _turn_text(msg)
        if text:
            line.append(highlight(safe(clip(text, 400)), self.terms, match))
        else:
            line.append("(no text)", style=dim + Style(italic=True))

    @staticmethod
    def _ends(hit: SessionHit) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The bookend turns before and after the match, in index order, each once (the
        matched turn itself and repeats left out)."""
        ends = hit.bookends or {}
        if not ends.get("closing"):  # a short session: every turn of it is near the match
            return [], []
        seen: set[int] = {hit.anchor_index}
        turns: list[tuple[int, dict[str, Any]]] = []
        for side, msgs in ((-1, ends.get("opening", [])), (1, ends.get("closing", []))):
            for msg in msgs:
                index = msg.get("index")
                if not isinstance(index, int):  # unnumbered: keep it on its own side
                    index = hit.anchor_index + side * (10**9 + len(turns))
                if index in seen:
                    continue
                seen.add(index)
                turns.append((index, msg))
        turns.sort(key=lambda t: t[0])
        before = [m for i, m in turns if i < hit.anchor_index]
        after = [m for i, m in turns if i > hit.anchor_index]
        return before, after

    def _height(self, hit: SessionHit) -> int:
        if self.compact:
            return 1
        try:
            opening, closing = self._ends(hit)
        except Exception:  # its row says it cannot be shown
            return 1
        return 3 + len(opening) + len(closing) + 1

    def current(self) -> SessionHit | None:
        return self.hits[self.cursor] if 0 <= self.cursor < len(self.hits) else None

    def row_lines(self, index: int, width: int) -> list[Text]:
        if index >= len(self.hits):  # the "more" row
            text = "loading more hits…" if self.more_loading else self.more
            return [Text(f" ↓ {text}", style=self.style_of("dim"))]
        hit = self.hits[index]
        dim = self.style_of("dim")
        match = self.style_of("match")
        badge = self.style_of("badge")
        title = Text(" ", end="")
        title.append(
            one_line(hit.display_title) or one_line(hit.session_id), style=self.style_of("title")
        )
        with_agent(title, hit.agent, dim)
        if hit.session_id in self.fresh:
            join_badges(title, ["new"], self.style_of("accent"))
        join_badges(title, hit_badges(hit), badge)
        if self.compact:  # title, badges, the matched words; age and score on the right
            title.append("  ")
            title.append(highlight(safe(clip(one_line(hit.snippet), 400)), self.terms, match))
            right = f"{age_text(hit.when, self.now)} · {hit.score:.2f}"
            right_column(title, right, width, dim)
            return [title]
        score = f"score {hit.score:.2f}"
        right_column(title, score, width, dim)
        lines = [title]
        meta = Text("   ", end="")
        meta.append(when_text(hit.when, self.now), style=dim)
        meta.append("  ·  ", style=dim)
        meta.append(one_line(hit.session_id), style=dim)
        lines.append(meta)
        opening, closing = self._ends(hit)
        for msg in opening:
            line = Text("   ┌ " if msg is opening[0] else "   │ ", style=dim, end="")
            self._turn(line, msg, dim, match)
            lines.append(line)
        marker = "   ├ " if opening else "   ▸ "
        snippet = Text(end="")
        snippet.append(marker, style=dim)
        snippet.append(f"#{hit.anchor_index} ", style=dim)
        snippet.append(highlight(safe(one_line(strip_markdown(hit.snippet))), self.terms, match))
        lines.append(snippet)
        for i, msg in enumerate(closing):
            line = Text("   └ " if i == len(closing) - 1 else "   │ ", style=dim, end="")
            self._turn(line, msg, dim, match)
            lines.append(line)
        lines.append(Text(""))
        return lines
