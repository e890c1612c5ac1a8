"""Messages the thread workers post back to the UI."""

from __future__ import annotations

from typing import Any

from textual.message import Message

from session_browser.core.model import SessionSummary
from session_browser.core.resume_line import Resume
from session_browser.core.search.results import SearchResult
from session_browser.tui.backend import IndexState


class SearchFinished(Message):
    def __init__(self, generation: int, outcome: SearchResult) -> None:
        super().__init__()
        self.generation = generation
        self.outcome = outcome


class RecentCounted(Message):
    def __init__(
        self,
        generation: int,
        total: int,
        first_page: list[SessionSummary],
        error: str | None = None,
    ) -> None:
        super().__init__()
        self.generation = generation
        self.total = total
        self.first_page = first_page
        self.error = error  # the stores could not list their sessions: why


class RecentPageLoaded(Message):
    def __init__(
        self, generation: int, page: int, rows: list[SessionSummary], error: str | None = None
    ) -> None:
        super().__init__()
        self.generation = generation
        self.page = page
        self.rows = rows
        self.error = error


class AllIdsLoaded(Message):
    """Every session id of the recent list (as filtered and sorted), to mark them all."""

    def __init__(self, generation: int, ids: list[str]) -> None:
        super().__init__()
        self.generation = generation
        self.ids = ids


class ProjectionLoaded(Message):
    def __init__(
        self,
        session_id: str,
        messages: list[dict[str, Any]],
        heights: list[int],
        width: int,
        matches: set[int],
        error: str | None = None,
    ) -> None:
        super().__init__()
        self.session_id = session_id
        self.messages = messages
        self.heights = heights
        self.width = width
        self.matches = matches
        self.error = error


class ResumeKnown(Message):
    """The shell line that resumes the open session in the agent that wrote it, or why none
    is offered."""

    def __init__(self, session_id: str, resume: Resume) -> None:
        super().__init__()
        self.session_id = session_id
        self.resume = resume


class FindFinished(Message):
    """Matching messages: of a find (``/``), or (``initial``) of the search that opened it."""

    def __init__(
        self,
        query: str,
        matches: list[int],
        *,
        initial: bool = False,
        typing: bool = False,
        generation: int = 0,
    ) -> None:
        super().__init__()
        self.query = query
        self.matches = matches
        self.initial = initial
        self.typing = typing  # found while the query is being typed (the field stays open)
        self.generation = generation


class StoreStatus(Message):
    """Counts and index state for the status line and the header badge."""

    def __init__(
        self,
        sessions: int | None,
        index: IndexState,
        attention: int | None,
        skipped: int | None = None,
        *,
        seq: int = 0,
        settled: bool = True,
    ) -> None:
        super().__init__()
        self.sessions = sessions
        self.index = index
        self.attention = attention  # files waiting in quarantine; None: not counted here
        self.skipped = skipped  # files the index could not take; None: not known (yet)
        # The order the counts were taken in: a status taken earlier that arrives later
        # (its worker was slower) is older than the one shown, and is dropped.
        self.seq = seq
        # Counted with no index build running or about to start: only then does a count of
        # 0 mean the stores hold no session.
        self.settled = settled
