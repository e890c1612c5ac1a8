"""The recent-sessions list: two lines a session, pages fetched from the store on demand."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message

from session_browser.core.model import SessionSummary
from session_browser.tui.common.render import (
    age_text,
    human_size,
    join_badges,
    one_line,
    summary_badges,
    when_text,
    with_agent,
)
from session_browser.tui.common.rowlist import RowList, right_column

ROW_HEIGHT = 2
PAGE_SIZE = 200


class RecentList(RowList):
    """Most recent first; rows outside the loaded pages are fetched by the screen."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "cycle_sort", "Sort", id="recent.sort"),
        Binding("space", "toggle_mark", "Mark", id="recent.mark"),
        Binding("a", "mark_all", "Mark all/none", id="recent.mark_all"),
    ]

    class PageWanted(Message):
        def __init__(self, page: int) -> None:
            super().__init__()
            self.page = page

    class SortRequested(Message):
        pass

    class MarksChanged(Message):
        """The set of marked sessions changed."""

    class MarkAllWanted(Message):
        """Mark every session of the list (or unmark them when all are marked already)."""

    def __init__(self, *, now: datetime | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self._fixed_now = now
        self.sort = "updated"  # "created": the rows show when each session was created
        self.total = 0
        self.pages: dict[int, list[SessionSummary]] = {}
        self.failed: dict[int, str] = {}  # pages the stores could not give: why
        self._wanted: set[int] = set()
        self.marked: dict[str, None] = {}  # session ids, in the order they were marked
        self.fresh: frozenset[str] = frozenset()  # new or changed since the user looked

    @property
    def now(self) -> datetime:
        """What ages are measured against: the live clock unless one was given (tests)."""
        return self._fixed_now or datetime.now(UTC)

    def reset(self, total: int) -> None:
        self.total = total
        self.pages.clear()
        self.failed.clear()
        self._wanted.clear()
        self.cursor = 0
        self.set_heights(self.row_heights())
        self.scroll_to(0, 0, animate=False)

    def row_heights(self) -> list[int]:
        return [1 if self.compact else ROW_HEIGHT] * self.total

    def set_fresh(self, fresh: frozenset[str]) -> None:
        if fresh != self.fresh:
            self.fresh = fresh
            self.invalidate()

    def add_page(self, page: int, rows: list[SessionSummary]) -> None:
        self.pages[page] = rows
        self._wanted.discard(page)
        self.invalidate()

    def page_failed(self, page: int, error: str) -> None:
        """The rows of ``page`` could not be read: they say so (and are not asked again
        until the list reloads)."""
        self.failed[page] = error
        self.invalidate()

    def summary(self, index: int) -> SessionSummary | None:
        page = self.pages.get(index // PAGE_SIZE)
        if page is None:
            return None
        offset = index % PAGE_SIZE
        return page[offset] if offset < len(page) else None

    def current(self) -> SessionSummary | None:
        return self.summary(self.cursor) if self.row_count else None

    def action_cycle_sort(self) -> None:
        self.post_message(self.SortRequested())

    # ------------------------------------------------------------------ marks

    def action_toggle_mark(self) -> None:
        """Mark (or unmark) the session under the cursor and move down."""
        summary = self.current()
        if summary is None:
            return
        if summary.session_id in self.marked:
            del self.marked[summary.session_id]
        else:
            self.marked[summary.session_id] = None
        self.invalidate()
        self.post_message(self.MarksChanged())
        self.move_cursor(self.cursor + 1)

    def action_mark_all(self) -> None:
        self.post_message(self.MarkAllWanted())

    def mark_many(self, ids: list[str]) -> None:
        """Mark all of ``ids``; when every one is marked already, unmark them instead."""
        if ids and all(i in self.marked for i in ids):
            for session_id in ids:
                self.marked.pop(session_id, None)
        else:
            for session_id in ids:
                self.marked[session_id] = None
        self.invalidate()
        self.post_message(self.MarksChanged())

    def clear_marks(self) -> None:
        self.marked.clear()
        self.invalidate()
        self.post_message(self.MarksChanged())

    def row_lines(self, index: int, width: int) -> list[Text]:
        summary = self.summary(index)
        if summary is None:
            page = index // PAGE_SIZE
            if page in self.failed:
                return [
                    Text(
                        f"  ⚠ cannot read this row: {self.failed[page]}", style=self.style_of("dim")
                    ),
                    Text(""),
                ]
            if page not in self._wanted:
                self._wanted.add(page)
                self.post_message(self.PageWanted(page))
            return [Text("  …", style=self.style_of("dim")), Text("")]
        dim = self.style_of("dim")
        title = Text(" ", end="")
        if summary.session_id in self.marked:
            title.append("✓ ", style=self.style_of("accent"))
        else:
            title.append("  ")
        title.append(
            one_line(summary.display_title) or one_line(summary.session_id),
            style=self.style_of("title"),
        )
        with_agent(title, summary.agent, dim)
        if summary.session_id in self.fresh:
            join_badges(title, ["new"], self.style_of("accent"))
        join_badges(title, summary_badges(summary), self.style_of("badge"))
        if summary.kept:  # "deleted from <path> on <date>": kept by the vault, as in hits
            join_badges(title, [one_line(summary.kept)], self.style_of("badge"))
        counts = f"{summary.message_count} msgs"
        if summary.archived_count:
            counts += f" + {summary.archived_count} archived"
        counts += f" · {human_size(summary.size)}"
        if self.compact:  # one line: the age joins the counts on the right
            created = self.sort == "created" and summary.created_at
            age = age_text(summary.created_at if created else summary.when, self.now)
            right_column(title, f"{'created ' if created else ''}{age} · {counts}", width, dim)
            return [title]
        right_column(title, counts, width, dim)
        meta = Text("     ", end="")
        if self.sort == "created" and summary.created_at:
            meta.append("created ", style=dim)
            meta.append(when_text(summary.created_at, self.now), style=dim)
        else:
            meta.append(when_text(summary.when, self.now), style=dim)
        meta.append("  ·  ", style=dim)
        meta.append(one_line(summary.session_id), style=dim)
        return [title, meta]
