"""The scroll viewer: one session's archived+active projection, opened at the match."""

from __future__ import annotations

import json
import threading
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, Static
from textual.worker import get_current_worker

from session_browser.core.model import content_text
from session_browser.core.query import fold, highlight_terms
from session_browser.core.resume_line import Resume, ResumeLine, resume_agents
from session_browser.core.text import clip, code_blocks
from session_browser.tui.backend import collect_and_release
from session_browser.tui.common.chrome import AppHeader, IndexBar, StatusLine
from session_browser.tui.common.errors import ReportsWorkerErrors
from session_browser.tui.common.render import error_text, one_line, printable, raw_value, with_agent
from session_browser.tui.messages import FindFinished, ProjectionLoaded, ResumeKnown
from session_browser.tui.viewer.transcript import (
    CONTEXT_LEVELS,
    HIDDEN_LINES,
    HIDDEN_OFF,
    HIDDEN_WHOLE,
    TranscriptView,
    count_lines,
    message_text,
    run_text,
)
from session_browser.tui.viewer.versions import KeptVersions

if TYPE_CHECKING:
    from session_browser.tui.app import SessionBrowserApp


TITLE_CHARS = 80  # of a session's title in the viewer's top line
EARLY_MATCHES = 5000  # up to this many messages, the matches are found before the first paint
SCROLL_OFF = 4  # lines of what comes before a match shown above it
FIND_DEBOUNCE = 0.15  # seconds of no typing before the find runs again
CANCEL_EVERY = 1000  # messages between two looks at whether a find was overtaken
COLLECT_AFTER = 0.3  # seconds after the viewer closed: its memory is collected and given back
# A full collection walks every object the app holds (about 100 ms with a 30,000-session
# Recent list): worth it, and done, only after a session this long closed.
COLLECT_MESSAGES = 1000


def find_matches(
    messages: list[dict[str, Any]],
    terms: list[str],
    cancelled: Callable[[], bool] | None = None,
) -> list[int]:
    """Indices of the messages containing every term, folded as search folds (case and
    accents: ``cafe`` finds "Café"); [] as soon as ``cancelled`` says so (a newer find took
    over)."""
    needles = [n for n in (fold(t) for t in terms) if n]
    if not needles:
        return []
    out: list[int] = []
    some: list[int] = []  # messages with any term: the answer when none has every one
    for i, m in enumerate(messages):
        if cancelled is not None and i % CANCEL_EVERY == 0 and cancelled():
            return []
        text = _search_text(m)
        found = [n in text for n in needles]
        if all(found):
            out.append(i)
        elif any(found):
            some.append(i)
    return out or some


def _search_text(message: dict[str, Any]) -> str:
    try:
        return fold(content_text(message.get("content")))
    except Exception:  # a message that cannot be read matches nothing
        return ""


class ViewerScreen(KeptVersions, ReportsWorkerErrors, Screen[None]):
    """Keys: n/N hits, [/] user turns, g/G ends, / find, +/- context, y copy, i metadata,
    w a long message whole, Enter a run of tool calls opened or folded, v raw text,
    c copy a code block, t tool calls and thinking,
    C copy the command that resumes a Claude Code or Codex session, </> the versions the
    vault keeps of it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,backspace", "back", "Back", id="viewer.back"),
        Binding("n", "next_hit", "Next hit", id="viewer.next_hit"),
        Binding("N", "prev_hit", "Prev hit", id="viewer.prev_hit"),
        Binding(
            "right_square_bracket", "next_user", "Next user turn", show=False, id="viewer.next_user"
        ),
        Binding(
            "left_square_bracket", "prev_user", "Prev user turn", show=False, id="viewer.prev_user"
        ),
        Binding("g,home", "first", "Start", show=False, id="viewer.first"),
        Binding("G,end", "last", "End", show=False, id="viewer.last"),
        Binding("slash", "find", "Find", id="viewer.find"),
        Binding("plus,equals_sign", "widen", "Widen", id="viewer.widen"),
        Binding("minus", "narrow", "Narrow", id="viewer.narrow"),
        Binding("y", "copy", "Copy msg", id="viewer.copy"),
        Binding("i", "metadata", "Metadata", id="viewer.metadata"),
        Binding("w", "full_message", "Whole message", show=False, id="viewer.full_message"),
        Binding("enter", "open_run", "Open tool calls", show=False, id="viewer.open_run"),
        Binding("J", "next_message", "Next message", show=False, id="viewer.next_message"),
        Binding("K", "prev_message", "Prev message", show=False, id="viewer.prev_message"),
        Binding("v", "toggle_raw", "Raw text", show=False, id="viewer.raw"),
        Binding("c", "copy_code", "Copy code", show=False, id="viewer.copy_code"),
        Binding("t", "toggle_hidden", "Tools/thinking", show=False, id="viewer.hidden"),
        Binding("C", "copy_resume", "Copy resume command", show=False, id="viewer.resume"),
        Binding(
            "less_than_sign",
            "older_version",
            "Older kept version",
            show=False,
            id="viewer.older_version",
        ),
        Binding(
            "greater_than_sign",
            "newer_version",
            "Newer kept version",
            show=False,
            id="viewer.newer_version",
        ),
    ]

    def __init__(
        self,
        session_id: str,
        *,
        store: str = "",
        anchor: int = -1,
        terms: list[str] | None = None,
        title: str = "",
        agent: str | None = None,
    ) -> None:
        super().__init__()
        self.session_id = session_id
        self.store_label = store
        self.anchor_index = anchor
        self.terms = list(terms or [])
        self.title_text = title
        self.agent = agent
        self.matches: list[int] = []
        self._code_copied: tuple[int, int] = (-1, -1)  # (message, block) last copied with c
        self._find_generation = 0  # of the latest find started; older answers are dropped
        self._find_origin = 0  # the cursor when / was pressed: typing finds from there
        self._find_timer: Timer | None = None
        self.loaded = False
        self._most_messages = 0  # the most messages this viewer has held
        # The session file's (size, mtime_ns, inode) when it was read: the app compares it
        # every second and calls :meth:`reload` when it changed (a turn was appended).
        self.identity: tuple[int, ...] | None = None
        self.reloading = False
        self._matches_pending = False
        self._painted = threading.Event()  # set once the loaded transcript is on screen
        # the line that resumes the session in the agent that wrote it (or why none is
        # offered), once known
        self.resume: Resume | None = None
        self._init_versions()

    @property
    def browser(self) -> SessionBrowserApp:
        from session_browser.tui.app import SessionBrowserApp

        return cast(SessionBrowserApp, self.app)

    def compose(self) -> ComposeResult:
        yield AppHeader("Session", id="header")
        yield Static(self._title_line(), id="viewer-title")
        resume = Static("", id="viewer-resume")
        resume.display = False  # a line of its own, for the sessions that have one
        yield resume
        view = TranscriptView(id="transcript")
        view.loading = True
        yield view
        find = Input(placeholder="Find in this session (Enter: find, Esc: close)", id="find")
        find.display = False
        yield find
        yield Static("", id="viewer-info")
        yield IndexBar(id="index-bar")
        yield StatusLine(id="status")
        yield Footer()

    def _title_line(self) -> Text:
        text = Text(end="")
        # Cut, so the id beside it stays on the line.
        text.append(clip(one_line(self.title_text or self.session_id), TITLE_CHARS), style="bold")
        with_agent(text, self.agent, "")
        text.append("  ·  ")
        text.append(one_line(self.session_id), style="dim")
        return text

    def on_mount(self) -> None:
        view = self.query_one(TranscriptView)
        view.full_key = self._key_of("viewer.full_message")
        level = self.browser.settings.context
        if level is not None and 0 <= level < len(CONTEXT_LEVELS):
            view.context_level = level  # the reader's last choice (+/-)
        view.focus()
        # Heights are computed in the worker for the width the view will have (the screen's,
        # less the vertical scrollbar, which is always shown): started now, not after the
        # first layout, so a big session reads while the screen paints.
        self.load(view.body_width())

    def on_unmount(self) -> None:
        """Closed: a load or find still running stops, and once the screen is gone (its
        widgets refer to each other, so only the cycle collector frees them) the memory
        a long session took is collected and given back to the system (a short one's is
        left to the collector's own rounds, without a pause)."""
        self.workers.cancel_group(self, "projection")
        self.workers.cancel_group(self, "find")
        self._painted.set()  # a load waiting for the first paint goes on, and ends
        if self.app.is_running and self._most_messages >= COLLECT_MESSAGES:
            self.app.set_timer(COLLECT_AFTER, collect_and_release)

    # ------------------------------------------------------------------ loading

    def reload(self) -> None:
        """Read the session again (its file changed): the reader keeps their place, unless
        they were at the end, which then follows the new turns (as ``tail -f``). An older
        kept version on screen stays (the file's change shows when the reader comes back
        to the latest)."""
        if self.on_old_version:
            return
        self.reloading = True
        self.load(self._view().body_width())

    @work(thread=True, exclusive=True, group="projection", exit_on_error=False)
    def load(self, width: int) -> None:
        # Before the read: a change while it reads is seen at the next look.
        self.identity = self.browser.backend.session_identity(self.session_id, self.store_label)
        try:
            messages = self.browser.backend.projection(self.session_id, self.store_label)
        except KeyError:
            self.post_message(
                ProjectionLoaded(self.session_id, [], [], width, set(), "session not found")
            )
            return
        except Exception as exc:  # shown on screen, never fatal
            error = error_text(exc)
            self.post_message(ProjectionLoaded(self.session_id, [], [], width, set(), error))
            return
        if get_current_worker().is_cancelled:
            return
        # A turn that is not a JSON object is shown as the value it is.
        messages = [m if isinstance(m, dict) else {"content": raw_value(m)} for m in messages]
        key = self.query_one(TranscriptView).full_key
        heights = [2 + count_lines(message_text(m, key=key), width) for m in messages]
        # The matching messages (n/N) come with the first paint; in a very big session after
        # it (the info line says they are on their way meanwhile).
        early = bool(self.terms) and len(messages) <= EARLY_MATCHES
        matches = set(find_matches(messages, self.terms)) if early else set()
        self.post_message(ProjectionLoaded(self.session_id, messages, heights, width, matches))
        try:
            resume = self.browser.backend.resume_of(self.session_id, self.store_label)
        except Exception:  # the session can be read: only its resume line is missing
            resume = None
        if resume is not None and not get_current_worker().is_cancelled:
            self.post_message(ResumeKnown(self.session_id, resume))
        if self.terms and not early:
            self._painted.wait(timeout=2.0)
            if not get_current_worker().is_cancelled:
                found = find_matches(messages, self.terms)
                self.post_message(FindFinished("", found, initial=True))

    def on_projection_loaded(self, message: ProjectionLoaded) -> None:
        self._most_messages = max(self._most_messages, len(message.messages))
        if self.reloading:
            self.reloading = False
            if not message.error:
                self._reloaded(message)
                return
        self.call_after_refresh(self._painted.set)
        view = self.query_one(TranscriptView)
        view.loading = False
        view.focus()
        self.loaded = True
        if message.error:  # (no versions: their info line would cover why it failed)
            view.display = False
            info = Text(f"Cannot open this session: {printable(message.error, one_line=True)}")
            self.query_one("#viewer-info", Static).update(info)
            return
        self.load_versions()
        anchor = self.anchor_index
        if anchor < 0 or anchor >= len(message.messages):
            anchor = -1
        # The message the search matched is a match, whatever the plain-text find says.
        found = set(message.matches) | ({anchor} if anchor >= 0 and self.terms else set())
        self.matches = sorted(found)
        self._matches_pending = bool(self.terms) and len(message.messages) > EARLY_MATCHES
        view.load(
            message.messages,
            anchor=anchor,
            terms=self.terms,
            heights=message.heights,
            heights_width=message.width,
        )
        view.matches = set(self.matches)
        if anchor < 0 and message.messages:
            view.set_cursor(len(message.messages) - 1, top=False)
            view.scroll_end(animate=False, immediate=True)
        self._info()

    def _reloaded(self, message: ProjectionLoaded) -> None:
        view = self._view()
        before = len(view.messages)
        follow = view.at_end()
        view.replace_messages(message.messages, message.heights, message.width, follow=follow)
        found = set(message.matches) if message.matches else set(self.matches)
        anchor = view.anchor_index
        self.matches = sorted(found | ({anchor} if anchor >= 0 and self.terms else set()))
        view.matches = set(self.matches)
        added = len(message.messages) - before
        if added > 0 and not follow:
            plural = "s" if added != 1 else ""
            key = self._key_of("viewer.last")
            self.notify(f"{added} new turn{plural} below ({key} goes to the end).", timeout=3)
        self._info()

    def on_resume_known(self, message: ResumeKnown) -> None:
        self.resume = message.resume
        line = Text("resume: ", end="")
        if isinstance(self.resume, ResumeLine):
            line.append(printable(self.resume.line, one_line=True), style="bold")
            line.append(f"  ({self._key_of('viewer.resume')} copies it)")
        else:
            line.append(f"not offered: {printable(self.resume.reason, one_line=True)}")
        widget = self.query_one("#viewer-resume", Static)
        widget.update(line)
        widget.display = True

    # ------------------------------------------------------------------ info line

    @on(TranscriptView.CursorMoved)
    def _cursor_moved(self) -> None:
        self._info()

    def _info(self) -> None:
        view = self.query_one(TranscriptView)
        total = len(view.messages)
        info = Text(end="")
        self.version_info(info)
        if not total:
            info.append("This session has no messages.")
            self.query_one("#viewer-info", Static).update(info)
            return
        # "#8 · 9 of 19": the index (0-based, as every API and the hit list name it) and
        # the position among all the messages.
        run = view.run_at_cursor()
        if run is not None:  # the turns a folded run of tool calls stands for
            info.append(f"#{run.start}–#{run.end} · {run.end + 1} of {total}", style="bold")
        else:
            info.append(f"#{view.cursor} · {view.cursor + 1} of {total}", style="bold")
        info.append(f" · {view.archived_count} archived, {total - view.archived_count} active")
        if self.terms:
            info.append(" · ")
            info.append(printable(" ".join(self.terms), one_line=True), style="italic")
            pos = bisect_right(self.matches, view.cursor)
            n = len(self.matches)
            at = f"{pos}/{n}" if view.cursor in self.matches else f"{n}"
            if self._matches_pending:
                info.append(": finding the matching messages…")
            else:
                plural = "s" if n != 1 else ""
                info.append(f": {at} matching message{plural} (n/N)")
        level = CONTEXT_LEVELS[view.context_level]
        ctx = "all turns expanded" if level is None else f"±{level} turns expanded"
        info.append(f" · {ctx} (+/-)")
        if view.raw:
            info.append(" · raw text")
        if view.hidden_mode != HIDDEN_OFF:
            info.append(" · tool calls and thinking shown")
        self.query_one("#viewer-info", Static).update(info)

    # ------------------------------------------------------------------ actions

    def action_back(self) -> None:
        find = self.query_one("#find", Input)
        if find.display and find.has_focus:
            find.display = False
            self.query_one(TranscriptView).focus()
            return
        self.app.pop_screen()

    def _view(self) -> TranscriptView:
        return self.query_one(TranscriptView)

    def action_next_hit(self) -> None:
        view = self._view()
        if not self.matches:
            self.notify("No matches in this session: press / to find.", severity="warning")
            return
        pos = bisect_right(self.matches, view.cursor)
        target = self.matches[pos % len(self.matches)]
        if pos >= len(self.matches):
            self.notify("Wrapped to the first match.", timeout=2)
        self._jump(target)

    def action_prev_hit(self) -> None:
        view = self._view()
        if not self.matches:
            self.notify("No matches in this session: press / to find.", severity="warning")
            return
        pos = bisect_left(self.matches, view.cursor) - 1
        if pos < 0:
            self.notify("Wrapped to the last match.", timeout=2)
        self._jump(self.matches[pos])

    def _jump(self, index: int) -> None:
        """The cursor on message ``index`` with a few lines of what comes before above it."""
        view = self._view()
        if CONTEXT_LEVELS[view.context_level] is not None:
            view.cursor = index
            view.set_context(view.context_level)
        view.set_cursor(index, top=True, context=SCROLL_OFF)

    def _user_turn(self, step: int) -> None:
        view = self._view()
        i = view.cursor + step
        while 0 <= i < len(view.messages):
            if view.messages[i].get("role") == "user":
                self._jump(i)
                return
            i += step
        self.notify("No more user turns that way.", timeout=2)

    def action_next_user(self) -> None:
        self._user_turn(1)

    def action_prev_user(self) -> None:
        self._user_turn(-1)

    def action_next_message(self) -> None:
        view = self._view()
        view.set_cursor(view.step(view.cursor, 1), top=True)

    def action_prev_message(self) -> None:
        view = self._view()
        view.set_cursor(view.step(view.cursor, -1), top=True)

    def action_first(self) -> None:
        view = self._view()
        if view.messages:
            view.set_cursor(0, top=True)
            view.scroll_home(animate=False, immediate=True)

    def action_last(self) -> None:
        view = self._view()
        if view.messages:
            view.set_cursor(len(view.messages) - 1, top=False)
            view.scroll_end(animate=False, immediate=True)

    def action_widen(self) -> None:
        self._set_context(self._view().context_level + 1)

    def action_narrow(self) -> None:
        self._set_context(self._view().context_level - 1)

    def _set_context(self, level: int) -> None:
        """Show ``level``'s turns around the cursor in full; the choice is remembered."""
        view = self._view()
        view.set_context(level)
        if self.browser.settings.context != view.context_level:
            self.browser.settings.context = view.context_level
            self.browser.save_settings()
        self._info()

    def _key_of(self, binding_id: str) -> str:
        """The first key (as shown) of binding ``binding_id``, keymap applied."""
        return self.browser.key_for(binding_id)

    def action_open_run(self) -> None:
        """Open the run of tool calls under the cursor: each call (again: fold it)."""
        view = self._view()
        if view.toggle_run(view.cursor) is None:
            self.notify("Enter opens a run of tool calls: the cursor is on none.", timeout=2)
        self._info()

    def action_full_message(self) -> None:
        """Show the long message under the cursor whole (again: cut it again); on a run of
        tool calls, open it (again: fold it)."""
        view = self._view()
        if view.toggle_run(view.cursor) is not None:
            self._info()
            return
        shown = view.toggle_full(view.cursor)
        if shown is None:
            self.notify("This message is shown whole already.", timeout=2)
            return
        view.set_cursor(view.cursor, top=True)
        self._info()

    def action_copy(self) -> None:
        view = self._view()
        if not view.messages:
            return
        run = view.run_at_cursor()
        if run is not None:
            text = run_text(run)
        else:
            text = content_text(view.messages[view.cursor].get("content"))
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied message #{view.cursor} ({len(text)} characters).", timeout=3)

    def action_copy_resume(self) -> None:
        """Copy the command that resumes this session in the agent that wrote it."""
        if not isinstance(self.resume, ResumeLine):
            reason = (
                f"only {resume_agents()} sessions have one"
                if self.resume is None
                else self.resume.reason
            )
            self.notify(f"No resume command for this session: {reason}.", timeout=5)
            return
        line = self.resume.line
        self.app.copy_to_clipboard(line)
        self.notify(printable(line, one_line=True), title="Copied the resume command", timeout=5)

    def action_toggle_raw(self) -> None:
        """Messages as rendered Markdown, or as the plain text they are."""
        view = self._view()
        view.set_raw(not view.raw)
        self.notify("Raw text." if view.raw else "Markdown rendered.", timeout=2)
        self._info()

    def action_toggle_hidden(self) -> None:
        """Tool calls and results and thinking: hidden, one line each, whole."""
        view = self._view()
        mode = {HIDDEN_OFF: HIDDEN_LINES, HIDDEN_LINES: HIDDEN_WHOLE}.get(
            view.hidden_mode, HIDDEN_OFF
        )
        view.set_hidden(mode)
        key = self._key_of("viewer.hidden")
        said = {
            HIDDEN_OFF: "Tool calls folded into runs, thinking hidden.",
            HIDDEN_LINES: f"Every turn, tool calls and thinking one line each ({key} again: "
            "whole, with the client's bookkeeping).",
            HIDDEN_WHOLE: f"Everything shown whole, bookkeeping too ({key} again: folded).",
        }
        self.notify(said[mode], timeout=2)
        self._info()

    def action_copy_code(self) -> None:
        """Copy a fenced code block of the message under the cursor (again: the next one)."""
        view = self._view()
        if not view.messages:
            return
        index = view.cursor
        try:
            blocks = code_blocks(content_text(view.messages[index].get("content")))
        except Exception:  # content that cannot be read has no code blocks
            blocks = []
        if not blocks:
            self.notify(f"Message #{index} has no code block.", severity="warning", timeout=3)
            return
        last_index, last_block = self._code_copied
        which = (last_block + 1) % len(blocks) if last_index == index else 0
        self._code_copied = (index, which)
        lang, code = blocks[which]
        self.app.copy_to_clipboard(code)
        what = f" ({one_line(lang)})" if lang else ""
        self.notify(
            f"Copied code block {which + 1} of {len(blocks)}{what} of message #{index}.",
            timeout=3,
        )

    def action_metadata(self) -> None:
        view = self._view()
        if not view.messages:
            return
        from session_browser.tui.common.explain import TextScreen

        m = view.messages[view.cursor]
        details = {k: v for k, v in m.items() if k != "content"}
        try:
            body = json.dumps(details, indent=2, ensure_ascii=False, default=str)
        except (ValueError, RecursionError) as exc:  # nested too deep, or a huge number
            why = error_text(exc)
            body = f"Not shown as JSON ({why}):\n{raw_value(details, 4000)}"
        self.app.push_screen(TextScreen(f"Message #{view.cursor}: metadata", body))

    def action_find(self) -> None:
        find = self.query_one("#find", Input)
        self._find_origin = self._view().cursor
        find.display = True
        with find.prevent(Input.Changed):
            find.value = " ".join(self.terms)
        self.set_focus(find)  # now: the keys typed right after / go to it

    @on(Input.Changed, "#find")
    def _find_typed(self, event: Input.Changed) -> None:
        """Find as the query is typed: after a short pause, the newest query only (an older
        find still running is overtaken and stops; the field never waits for it)."""
        if self._find_timer is not None:
            self._find_timer.stop()
        query = event.value
        self._find_timer = self.set_timer(FIND_DEBOUNCE, lambda: self._start_find(query, True))

    @on(Input.Submitted, "#find")
    def _find_submitted(self, event: Input.Submitted) -> None:
        if self._find_timer is not None:
            self._find_timer.stop()
        self._start_find(event.value, False)

    def _start_find(self, query: str, typing: bool) -> None:
        self._find_generation += 1
        self.run_find(query, typing, self._find_generation)

    @work(thread=True, exclusive=True, group="find", exit_on_error=False)
    def run_find(self, query: str, typing: bool = False, generation: int = 0) -> None:
        worker = get_current_worker()
        terms = highlight_terms(query)
        matches = find_matches(self._view().messages, terms, lambda: worker.is_cancelled)
        if not worker.is_cancelled:
            self.post_message(FindFinished(query, matches, typing=typing, generation=generation))

    def on_find_finished(self, message: FindFinished) -> None:
        view = self._view()
        if message.initial:  # the search terms' matches, found after the first paint
            self._matches_pending = False
            self.matches = sorted(set(message.matches) | set(self.matches))
            view.set_terms(self.terms, set(self.matches))
            self._info()
            return
        if message.generation != self._find_generation:
            return  # a newer find is on its way
        self.terms = highlight_terms(message.query)
        self.matches = message.matches
        view.set_terms(self.terms, set(self.matches))
        if message.typing:  # the field stays open: show the first match from where / began
            if self.matches:
                pos = bisect_left(self.matches, self._find_origin)
                self._jump(self.matches[pos % len(self.matches)])
            self._info()
            return
        find = self.query_one("#find", Input)
        find.display = False
        view.focus()
        if self.matches:
            self.notify(f"{len(self.matches)} matching messages: n/N to move.", timeout=3)
            pos = bisect_left(self.matches, self._find_origin)
            self._jump(self.matches[pos % len(self.matches)])
        elif self.terms:
            self.notify("No message matches that.", severity="warning", timeout=3)
        self._info()
