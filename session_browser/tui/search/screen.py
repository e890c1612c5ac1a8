"""The main screen: the search pane and the recent-sessions pane."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import ContentSwitcher, Footer, Input, Static
from textual.worker import get_current_worker

from session_browser.core.history import HistoryWalk, load_history, remember
from session_browser.core.model import SessionHit
from session_browser.core.notes import INDEXING, code_of
from session_browser.core.query import highlight_terms
from session_browser.core.saved_searches import SavedSearchesError, load_saved, save_search
from session_browser.core.search.hybrid import set_search_mode
from session_browser.core.search.results import WHEN_READY, SearchResult
from session_browser.tui.backend import SEARCH_LIMIT, SORTS
from session_browser.tui.common.chrome import AppHeader, IndexBar, StatusLine
from session_browser.tui.common.errors import ReportsWorkerErrors
from session_browser.tui.common.render import error_text, printable
from session_browser.tui.messages import (
    AllIdsLoaded,
    RecentCounted,
    RecentPageLoaded,
    SearchFinished,
)
from session_browser.tui.recent.listing import PAGE_SIZE, RecentList
from session_browser.tui.search.hits import HitList

if TYPE_CHECKING:
    from session_browser.tui.app import SessionBrowserApp

SEARCH_DEBOUNCE = 0.04  # seconds of quiet typing before a search starts
# ... while the index builds: a search then reads files and cannot stop half way, so one
# per keystroke would make the last one wait for the others.
SEARCH_DEBOUNCE_BUILDING = 0.2
FILTER_DEBOUNCE = 0.15
SEARCHING_HINT = 0.3  # seconds before a slow search says it is searching
# Seconds the hits of a query stay on screen before the query joins the history (as a
# shell keeps every command run, not only those whose output was used); opening one of
# its hits keeps it at once. Read when the hits arrive.
REMEMBER_AFTER = 1.5


class MainScreen(ReportsWorkerErrors, Screen[None]):
    """Search (type to search, Enter/Down into the hits) and Recent (filter, sort, open)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down", "into_list", "Into the list", show=False, id="main.into_list"),
        Binding("escape", "to_input", "Back to input", show=False, id="main.to_input"),
        Binding("slash", "to_input", "Back to input", show=False, id="main.slash"),
        Binding("ctrl+s", "save_search", "Save search", id="main.save_search"),
        Binding("up,ctrl+r", "history_older", "Earlier query", show=False, id="main.history"),
        Binding("ctrl+n", "more_hits", "More hits", show=False, id="main.more_hits"),
        Binding("ctrl+b", "toggle_search_mode", "Search mode", show=False, id="main.search_mode"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._search_gen = 0
        self._answered = -1  # the generation of the results on screen
        self._search_timer: Timer | None = None
        self._recent_gen = 0
        self._filter_timer: Timer | None = None
        self._recent_loaded = False
        self.sort = SORTS[0]
        self.last_query = ""
        self._keep_cursor = False
        self._limit = SEARCH_LIMIT  # hits asked for: one more page each time more are wanted
        self._paging_from = -1  # the cursor when the next page was asked for
        self._open_when_answered = False  # Enter came before the hits of the query
        self._history: HistoryWalk | None = None
        self._recalled: str | None = None  # the text the history walk put in the field
        self._mode = ""  # how the hits on screen were searched (their result's mode)
        self._remember_timer: Timer | None = None
        self._remembered = ""  # the query last kept (a refresh of its hits keeps it once)
        self._history_lock = threading.Lock()  # one history write at a time
        self._keep_recent: str | None = None  # the session the recent cursor stays on

    @property
    def browser(self) -> SessionBrowserApp:
        from session_browser.tui.app import SessionBrowserApp

        return cast(SessionBrowserApp, self.app)

    def compose(self) -> ComposeResult:
        now = self.browser.fixed_now  # None: the widgets read the live clock
        yield AppHeader("Search", id="header")
        with ContentSwitcher(initial="search-pane", id="panes"):
            with Vertical(id="search-pane"):
                yield Input(
                    placeholder='Search every session (words, "a phrase", role:user, -word)…',
                    id="query",
                    select_on_focus=False,
                )
                yield Static("", id="search-info")
                yield HitList(now=now, id="hits")
            with Vertical(id="recent-pane"):
                yield Input(
                    placeholder="Filter by title or id…", id="filter", select_on_focus=False
                )
                yield Static("", id="recent-info")
                yield RecentList(now=now, id="recent")
        yield Static("", id="empty-state")
        yield IndexBar(id="index-bar")
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        settings = self.browser.settings
        if settings.sort in SORTS:
            self.sort = settings.sort
        self.apply_compact(settings.compact)
        self.show_empty(None)
        self.browser.update_empty()
        self._search_hint()
        self.query_one("#query", Input).focus()

    def apply_compact(self, compact: bool) -> None:
        self.query_one("#hits", HitList).set_compact(compact)
        self.query_one("#recent", RecentList).set_compact(compact)

    # ------------------------------------------------------------------ panes

    @property
    def pane(self) -> str:
        return self.query_one("#panes", ContentSwitcher).current or "search-pane"

    def show_pane(self, name: str) -> None:
        """Show pane ``name`` as it is now: its list is read again (the cursor staying on
        its session) and the app looks at the stores at once, whatever changed while
        another pane or screen was shown. Its text field takes the focus at once, so the
        keys typed right after the switch go to it."""
        switcher = self.query_one("#panes", ContentSwitcher)
        switcher.current = f"{name}-pane"
        self.query_one(AppHeader).set_where("Search" if name == "search" else "Recent sessions")
        # Typing filters (like the search pane): ↓/Enter move into the list.
        field = self.query_one("#filter" if name == "recent" else "#query", Input)
        self.set_focus(field)  # now, not after the keys already queued
        self.refresh_pane()
        self.browser.look_now()

    def refresh_pane(self) -> None:
        """Read the shown pane's list again (the first time: read it)."""
        if self.pane == "recent-pane":
            first = not self._recent_loaded
            self._recent_loaded = True
            self.reload_recent(keep_cursor=not first)
        else:
            self.rerun_search(keep_cursor=True)

    def on_screen_resume(self) -> None:
        """Back from another screen (a session read, the quarantine): the pane is current."""
        if self.query("#query") and self._recent_loaded | bool(self.last_query):
            self.refresh_pane()
            self.browser.look_now()

    def show_empty(self, text: Text | None) -> None:
        empty = self.query_one("#empty-state", Static)
        panes = self.query_one("#panes")
        if text is None:
            empty.display = False
            panes.display = True
            if self.focused is None and self.is_current:
                self.action_to_input()
        else:
            empty.update(text)
            empty.display = True
            panes.display = False

    def action_into_list(self) -> None:
        focused = self.focused
        if isinstance(focused, Input) and focused.id == "query":
            hits = self.query_one("#hits", HitList)
            if hits.row_count:
                hits.focus()
        elif isinstance(focused, Input) and focused.id == "filter":
            self.query_one("#recent", RecentList).focus()

    def action_to_input(self) -> None:
        target = "#query" if self.pane == "search-pane" else "#filter"
        # The panes mount after the screen itself: a status message can arrive first.
        for field in self.query(target).results(Input):
            field.focus()

    # ------------------------------------------------------------------ search

    def _search_hint(self) -> None:
        key = self.browser.key_for
        info = self.query_one("#search-info", Static)
        info.update(
            Text(
                "Type to search titles and every turn, archived ones too. "
                f"Enter opens the best hit, ↓ moves into the hits, {key('main.history')} recalls"
                f" earlier queries, {key('main.save_search')} saves one,"
                f" {key('hits.explain')} explains a score.",
                style="italic",
            )
        )

    @on(Input.Changed, "#query")
    def _query_changed(self, event: Input.Changed) -> None:
        if event.value != self._recalled:
            self._history = None  # typing starts a new walk from what is typed
        self._open_when_answered = False
        self._search_gen += 1
        self._limit = SEARCH_LIMIT
        self._paging_from = -1
        if self._search_timer is not None:
            self._search_timer.stop()
        if self._remember_timer is not None:
            self._remember_timer.stop()
        query = event.value
        if not query.strip():
            self.workers.cancel_group(self, "search")
            self.query_one("#hits", HitList).set_hits([], [])
            self._search_hint()
            return
        gen = self._search_gen
        building = self.browser.index_state.mode == "building"
        delay = SEARCH_DEBOUNCE_BUILDING if building else SEARCH_DEBOUNCE
        self._search_timer = self.set_timer(delay, lambda: self._search_typed(query, gen))

    def _search_typed(self, query: str, generation: int) -> None:
        """The debounce of ``query`` ended: search it unless a later search took its place
        (a refresh of the lists asks the query again meanwhile). Started anyway, the stale
        search would cancel the current one (the group is exclusive) and then drop its own
        answer, and the hits of the query on screen would never come."""
        self._search_timer = None
        if generation == self._search_gen:
            self.run_search(query, generation)

    @on(Input.Submitted, "#query")
    def _query_submitted(self) -> None:
        """Enter opens the best hit (the one under the cursor): at once when the hits of this
        query are on screen, else as soon as they arrive."""
        if not self.query_one("#query", Input).value.strip():
            return
        if self._answered == self._search_gen:
            self._open_current()
        else:
            self._open_when_answered = True

    def _open_current(self) -> None:
        hits = self.query_one("#hits", HitList)
        if hits.row_count:
            self._open_hit(HitList.Opened(hits, hits.cursor))

    def action_history_older(self) -> None:
        """Up / Ctrl+R in the query: the previous earlier query containing what is typed."""
        field = self.query_one("#query", Input)
        if self.focused is not field:
            return
        if self._history is None:
            self._history = HistoryWalk(load_history(), typed=field.value)
        entry = self._history.older()
        if entry is None:
            self.app.bell()
            return
        self._recall(entry)

    def _recall(self, text: str) -> None:
        field = self.query_one("#query", Input)
        self._recalled = text
        field.value = text
        field.cursor_position = len(text)

    def remember_query(self) -> None:
        """Keep the query in the history (a session was opened from its hits)."""
        text = self.query_one("#query", Input).value
        self._remembered = text.strip()
        try:
            with self._history_lock:
                remember(text)
        except OSError as exc:  # the history is a convenience: say so, never stop
            self.browser.report_error(exc, where="saving the query history")
        self._history = None

    def _remember_later(self, out: SearchResult, generation: int) -> None:
        """Keep the query of hits just shown once they stayed :data:`REMEMBER_AFTER` on
        screen: not a query that found nothing or failed, nor one an Up walk shows (keeping
        it would reorder the history being walked)."""
        if self._remember_timer is not None:
            self._remember_timer.stop()
            self._remember_timer = None
        query = out.query.strip()
        if out.error or not out.hits or query == self._remembered:
            return
        self._remember_timer = self.set_timer(
            REMEMBER_AFTER, lambda: self._remember_shown(query, generation)
        )

    def _remember_shown(self, query: str, generation: int) -> None:
        self._remember_timer = None
        walking = self._history is not None and self._history.active
        if generation != self._answered or generation != self._search_gen or walking:
            return
        if not self.is_current or self.pane != "search-pane" or query == self._remembered:
            return
        if self.query_one("#query", Input).value.strip() != query:
            return
        self._remembered = query
        self._keep_query(query)

    @work(thread=True, group="history", name="saving the query history", exit_on_error=False)
    def _keep_query(self, query: str) -> None:
        """Add ``query`` to the history file (off the UI thread: it is written durably)."""
        with self._history_lock:
            remember(query)

    def _searching(self, generation: int) -> None:
        """Say a search is on its way when it has not answered in a moment."""
        if generation == self._search_gen and self._answered != generation:
            self.query_one("#search-info", Static).update(Text("searching…", style="italic"))

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def run_search(self, query: str, generation: int, limit: int = SEARCH_LIMIT) -> None:
        self.app.call_from_thread(
            self.set_timer, SEARCHING_HINT, lambda: self._searching(generation)
        )
        worker = get_current_worker()
        if worker.is_cancelled or generation != self._search_gen:
            return
        try:
            outcome = self.browser.backend.search(
                query, limit=limit, is_cancelled=lambda: worker.is_cancelled
            )
        except Exception as exc:  # shown, never fatal
            outcome = SearchResult(query=query, mode="scan", error=error_text(exc))
        if not worker.is_cancelled:
            self.post_message(SearchFinished(generation, outcome))

    def on_search_finished(self, message: SearchFinished) -> None:
        if message.generation != self._search_gen:
            return
        self._answered = message.generation
        out = message.outcome
        self._mode = out.mode
        hits = self.query_one("#hits", HitList)
        # A refresh keeps the cursor on its session only while the user is in the list: from
        # the query field, Enter opens the best hit, so the cursor stays on it.
        same = self._keep_cursor and out.query == self.last_query and hits.has_focus
        keep = hits.current() if same else None
        paging, self._paging_from = self._paging_from, -1
        self._keep_cursor = False
        before = len(hits.hits) if out.query == self.last_query else 0
        self.last_query = out.query
        more = "" if out.error else self._more_text(out, before if paging >= 0 else 0)
        cursor = paging if paging >= 0 else 0
        hits.set_hits(out.hits, highlight_terms(out.query), more=more, cursor=cursor)
        if keep is not None:
            ids = [h.session_id for h in out.hits]
            if keep.session_id in ids:
                hits.move_cursor(ids.index(keep.session_id))
        info = Text(end="")
        if out.error:
            info.append(printable(out.error, one_line=True), style="bold red")
        else:
            shown = len(out.hits)
            # A continuation folds into the hit of the session it continues, and another
            # version of a session (the turns rewrites dropped) into that session's hit: a
            # version is not a session of its own in the count.
            folded = sum(len(h.folded) for h in out.hits)
            continuations = sum(h.folded_counts()[0] for h in out.hits)
            versions = folded - continuations
            n = out.matched_sessions - versions
            bound = "" if out.matched_exact else "at least "
            info.append(f"{bound}{n:,} session{'s' if n != 1 else ''} matched", style="bold")
            if out.searched is not None:  # a build runs: say what this answer covers
                done, total = out.searched
                info.append(f" · searched {done:,} of {total:,} sessions", style="bold")
                info.append(f"; {WHEN_READY}")
            elif self.browser.index_state.mode == "building":
                info.append(" so far (more as the index builds)", style="bold")
            if n - continuations > shown:
                info.append(f" (best {shown} shown)")
            if continuations:
                info.append(
                    f" · {continuations} continuation{'s' if continuations != 1 else ''}"
                    " folded into the sessions they continue"
                )
            if versions:
                info.append(
                    f" · {versions} other version{'s' if versions != 1 else ''} of"
                    f" {'them' if shown != 1 else 'it'} folded in"
                )
            if self.browser.show_timings:
                info.append(f" · {out.elapsed_ms:.0f} ms")
            info.append(" · ")
            info.append(self._mode_text(out))
            for warning in out.warnings:
                if code_of(warning) == INDEXING:  # said beside the count
                    continue
                info.append(f" · {printable(warning, one_line=True)}", style="yellow")
        self.query_one("#search-info", Static).update(info)
        self._remember_later(out, message.generation)
        if self._open_when_answered:
            self._open_when_answered = False
            self._open_current()

    def _more_text(self, out: SearchResult, before: int) -> str:
        """The hit list's last row when more sessions matched than are shown ("" when all
        are); a page that brought nothing new (``before``: the hits shown until now) ends it."""
        shown = len(out.hits)
        folded = sum(len(h.folded) for h in out.hits)
        if shown < self._limit or shown <= before:
            return ""
        if out.matched_exact and out.matched_sessions - folded <= shown:
            return ""
        key = self.browser.key_for("main.more_hits")
        left = out.matched_sessions - folded - shown
        count = f"{left:,} more" if out.matched_exact else "more"
        return f"{count} — the next {SEARCH_LIMIT} hits ({key}, or move here)"

    def action_more_hits(self) -> None:
        """The next page of hits: the query asked again for one page more, the cursor
        staying where it was (the first new hit when it was on the "more" row)."""
        hits = self.query_one("#hits", HitList)
        query = self.query_one("#query", Input).value
        if not hits.more or not query.strip() or self._answered != self._search_gen:
            if query.strip() and self._answered == self._search_gen:
                self.notify("Every matching session is shown.", timeout=2)
            return
        hits.more_loading = True
        hits.invalidate()
        self._limit += SEARCH_LIMIT
        self._paging_from = hits.cursor
        self._search_gen += 1
        self.run_search(query, self._search_gen, self._limit)

    def action_toggle_search_mode(self) -> None:
        """Ctrl+B: hybrid search (words and meaning) or lexical (words only), the other one
        than the hits on screen were searched in; the query is searched again."""
        mode = "lexical" if "+hybrid" in self._mode else "hybrid"
        set_search_mode(mode)
        self.notify(f"Search mode: {mode}", timeout=3)
        query = self.query_one("#query", Input).value
        if query.strip():
            self._search_gen += 1
            self.run_search(query, self._search_gen, self._limit)

    @on(HitList.MoreWanted, "#hits")
    def _more_wanted(self) -> None:
        self.action_more_hits()

    def action_save_search(self) -> None:
        """Ctrl+S: save the query under a name (asked for); F9 lists the saved ones."""
        if self.pane != "search-pane":
            self.notify("Ctrl+S saves the query of the search pane (F2).", timeout=3)
            return
        query = self.query_one("#query", Input).value
        if not query.strip():
            self.notify("Type a query first: Ctrl+S saves it under a name.", timeout=3)
            return
        try:
            names = [s.name for s in load_saved()]
        except SavedSearchesError as exc:
            self.notify(f"{exc}: fix or remove it to save searches.", severity="warning")
            return
        from session_browser.tui.search.saved import SaveSearchScreen

        def named(name: str | None) -> None:
            if not name:
                return
            try:
                save_search(name, query)
            except ValueError as exc:
                self.notify(str(exc), severity="warning")
                return
            except SavedSearchesError as exc:
                self.notify(f"{exc}: fix or remove it to save searches.", severity="warning")
                return
            except OSError as exc:
                self.browser.report_error(exc, where="saving the search")
                return
            key = self.browser.key_for("app.saved")
            self.notify(f"Saved as {name!r} ({key} lists the saved searches).", timeout=3)

        self.app.push_screen(SaveSearchScreen(query, names), named)

    def run_query(self, query: str) -> None:
        """Show the search pane with ``query`` in the field (it is searched at once)."""
        self.show_pane("search")
        field = self.query_one("#query", Input)
        field.value = query
        field.cursor_position = len(query)

    def _mode_text(self, out: SearchResult) -> str:
        state = self.browser.index_state.describe()
        text = f"{out.mode}" if out.mode not in ("scan",) else "scanned the files"
        if out.fuzzy:
            text += " (fuzzy)"
        if self.browser.index_state.mode in ("building", "cancelled"):
            text += f" · {state}"
        return text

    @on(HitList.Opened, "#hits")
    def _open_hit(self, event: HitList.Opened) -> None:
        hits = self.query_one("#hits", HitList)
        hit = hits.hits[event.index]
        self.remember_query()
        self.browser.open_session(
            hit.session_id,
            store=hit.store,
            anchor=hit.anchor_index,
            terms=hits.terms,
            title=hit.display_title,
            agent=hit.agent,
            # turns a rewrite dropped: the viewer opens the kept version that has them
            dropped=bool(hit.kept) and " turns dropped from " in str(hit.kept),
        )

    def current_hit(self) -> SessionHit | None:
        return self.query_one("#hits", HitList).current()

    def action_explain_hit(self) -> None:
        hit = self.current_hit()
        if hit is not None:
            from session_browser.tui.common.explain import ExplainScreen

            self.app.push_screen(ExplainScreen(hit))

    def rerun_search(self, *, keep_cursor: bool = False) -> None:
        """Ask the current query again (the stores changed); ``keep_cursor`` keeps the
        cursor on the same session when it is still among the hits."""
        query = self.query_one("#query", Input).value
        if query.strip():
            if self._search_timer is not None:  # this asks the same query now
                self._search_timer.stop()
                self._search_timer = None
            self._search_gen += 1
            self._keep_cursor = keep_cursor
            self.run_search(query, self._search_gen, self._limit)

    # ------------------------------------------------------------------ recent

    def set_fresh(self, fresh: frozenset[str]) -> None:
        """Mark ``fresh`` (new or changed since the user looked) in both lists."""
        for widget in self.query(HitList).results():
            widget.set_fresh(fresh)
        for recent in self.query(RecentList).results():
            recent.set_fresh(fresh)

    def reload_recent(self, *, keep_cursor: bool = False) -> None:
        try:
            recent = self.query_one("#recent", RecentList)
            text = self.query_one("#filter", Input).value
        except NoMatches:  # a timer or an index message landing while the app shuts down
            return
        self._recent_gen += 1
        current = recent.current() if keep_cursor else None
        self._keep_recent = current.session_id if current is not None else None
        recent.sort = self.sort
        self.count_recent(self._recent_gen, self.sort, text)

    @work(thread=True, exclusive=True, group="recent", exit_on_error=False)
    def count_recent(self, generation: int, sort: str, text: str) -> None:
        backend = self.browser.backend
        try:
            total = backend.count(text)
            first = backend.browse(0, PAGE_SIZE, sort, text)
        except Exception as exc:  # shown in the pane, never fatal
            self.post_message(RecentCounted(generation, 0, [], error_text(exc)))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(RecentCounted(generation, total, first))

    @work(thread=True, group="recent-page", exit_on_error=False)
    def load_page(self, generation: int, page: int, sort: str, text: str) -> None:
        try:
            rows = self.browser.backend.browse(page * PAGE_SIZE, PAGE_SIZE, sort, text)
        except Exception as exc:  # the page's rows say so, never fatal
            self.post_message(RecentPageLoaded(generation, page, [], error_text(exc)))
            return
        self.post_message(RecentPageLoaded(generation, page, rows))

    def on_recent_counted(self, message: RecentCounted) -> None:
        if message.generation != self._recent_gen:
            return
        recent = self.query_one("#recent", RecentList)
        recent.reset(message.total)
        recent.add_page(0, message.first_page)
        ids = [s.session_id for s in message.first_page]
        if self._keep_recent in ids:
            recent.move_cursor(ids.index(self._keep_recent))
        self._keep_recent = None
        self._recent_info(message.error)

    def on_recent_page_loaded(self, message: RecentPageLoaded) -> None:
        if message.generation == self._recent_gen:
            recent = self.query_one("#recent", RecentList)
            if message.error:
                recent.page_failed(message.page, message.error)
                self.browser.report_error(message.error, where="listing sessions")
            else:
                recent.add_page(message.page, message.rows)

    @on(RecentList.PageWanted)
    def _page_wanted(self, event: RecentList.PageWanted) -> None:
        text = self.query_one("#filter", Input).value
        self.load_page(self._recent_gen, event.page, self.sort, text)

    def _recent_info(self, error: str | None = None) -> None:
        recent = self.query_one("#recent", RecentList)
        text = self.query_one("#filter", Input).value
        info = Text(end="")
        if error:
            info.append(f"Cannot list the sessions: {printable(error, one_line=True)}", "bold red")
            self.query_one("#recent-info", Static).update(info)
            return
        n = recent.total
        info.append(f"{n} session{'s' if n != 1 else ''}", style="bold")
        if text.strip():
            info.append(" matching the filter")
        sort_key = self.browser.key_for("recent.sort")
        info.append(f" · by {self.sort} · type to filter · ↓/Enter into the list")
        marked = len(recent.marked)
        if marked:
            info.append(f" · {marked} marked", style="bold")
            info.append(" (F6 exports them)")
        else:
            mark = self.browser.key_for("recent.mark")
            mark_all = self.browser.key_for("recent.mark_all")
            info.append(f" (Enter opens, {mark} marks, {mark_all} all, {sort_key} sorts)")
        self.query_one("#recent-info", Static).update(info)

    @on(Input.Changed, "#filter")
    def _filter_changed(self) -> None:
        if self._filter_timer is not None:
            self._filter_timer.stop()
        self._filter_timer = self.set_timer(FILTER_DEBOUNCE, self.reload_recent)

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        self.query_one("#recent", RecentList).focus()

    @on(RecentList.SortRequested)
    def action_cycle_sort(self) -> None:
        self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
        self.browser.settings.sort = self.sort
        self.browser.save_settings()
        if self.pane != "recent-pane":
            self.show_pane("recent")
        self.reload_recent()

    @on(RecentList.TypedText, "#recent")
    def _typed_in_list(self, event: RecentList.TypedText) -> None:
        """A printable key the list does not bind: it goes on the filter."""
        field = self.query_one("#filter", Input)
        field.focus()
        field.insert_text_at_cursor(event.text)

    @on(HitList.TypedText, "#hits")
    def _typed_in_hits(self, event: HitList.TypedText) -> None:
        """A printable key the hit list does not bind: it goes on the query."""
        field = self.query_one("#query", Input)
        field.focus()
        field.insert_text_at_cursor(event.text)

    @on(RecentList.Opened, "#recent")
    def _open_recent(self, event: RecentList.Opened) -> None:
        summary = self.query_one("#recent", RecentList).summary(event.index)
        if summary is not None:
            self.browser.open_session(
                summary.session_id,
                store=summary.store,
                anchor=-1,
                terms=[],
                title=summary.display_title,
                agent=summary.agent,
            )

    # ------------------------------------------------------------------ marks

    @on(RecentList.MarksChanged)
    def _marks_changed(self) -> None:
        self._recent_info()

    @on(RecentList.MarkAllWanted)
    def _mark_all(self) -> None:
        text = self.query_one("#filter", Input).value
        total = self.query_one("#recent", RecentList).total
        self.load_all_ids(self._recent_gen, total, self.sort, text)

    @work(thread=True, exclusive=True, group="recent-marks", exit_on_error=False)
    def load_all_ids(self, generation: int, total: int, sort: str, text: str) -> None:
        rows = self.browser.backend.browse(0, total, sort, text) if total else []
        ids = [r.session_id for r in rows]
        if not get_current_worker().is_cancelled:
            self.post_message(AllIdsLoaded(generation, ids))

    def on_all_ids_loaded(self, message: AllIdsLoaded) -> None:
        if message.generation == self._recent_gen:
            self.query_one("#recent", RecentList).mark_many(message.ids)

    def action_mark_all(self) -> None:
        if self.pane != "recent-pane":
            self.show_pane("recent")
        self._mark_all()

    def action_clear_marks(self) -> None:
        self.query_one("#recent", RecentList).clear_marks()

    def marked_ids(self) -> list[str]:
        return list(self.query_one("#recent", RecentList).marked)

    def session_under_cursor(self) -> tuple[str, str] | None:
        """(id, store label) of the row under the cursor of the pane shown."""
        if self.pane == "recent-pane":
            summary = self.query_one("#recent", RecentList).current()
            return (summary.session_id, summary.store) if summary else None
        hit = self.current_hit()
        return (hit.session_id, hit.store) if hit else None

    def current_session_ids(self) -> list[str]:
        """The marked sessions (recent list, Space); without marks, the row under the cursor."""
        marked = self.marked_ids()
        if marked:
            return marked
        if self.pane == "recent-pane":
            summary = self.query_one("#recent", RecentList).current()
            return [summary.session_id] if summary else []
        hit = self.current_hit()
        return [hit.session_id] if hit else []
