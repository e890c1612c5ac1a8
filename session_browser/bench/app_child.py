"""The measuring process of ``session-browser bench-app`` (see :mod:`.app`): the real app
under ``App.run_test``, driven by a Pilot, in a fresh interpreter that :func:`.app.run_child`
spawns with one measurement's spec; what it measured is written as JSON to the spec's
``out`` file, also when a wait timed out (then with the wait named)."""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from session_browser.bench.app import (
    BIG_ID,
    BIG_WORD,
    SETTLE_S,
    SIZE,
    WAIT_LIMIT,
    WaitTimedOut,
    current_rss_mb,
)
from session_browser.bench.metrics import max_rss_mb


async def measure(spec: dict[str, Any], spawned: float, result: dict[str, Any]) -> None:
    """One measurement; what it measured goes into ``result`` as it goes (a wait that times
    out leaves what was measured before it)."""
    t_import = time.time()
    from textual import events
    from textual.pilot import Pilot

    from session_browser.tui.app import SessionBrowserApp
    from session_browser.tui.backend import Backend
    from session_browser.tui.recent.listing import RecentList
    from session_browser.tui.rescue.screen import QuarantineScreen
    from session_browser.tui.search.hits import HitList
    from session_browser.tui.transfer.screen import ExportScreen
    from session_browser.tui.viewer.screen import ViewerScreen
    from session_browser.tui.viewer.transcript import TranscriptView

    painted: dict[str, float] = {}
    errors: dict[str, str] = {}

    # Every search's error, by query: an answer the app did not get is never timed as shown.
    backend_search = Backend.search

    def recorded_search(self: Any, query: str, **kwargs: Any) -> Any:
        try:
            outcome = backend_search(self, query, **kwargs)
        except Exception as exc:
            errors[query] = f"{type(exc).__name__}: {exc}"
            raise
        if outcome.error:
            errors[query] = str(outcome.error)
        return outcome

    Backend.search = recorded_search  # type: ignore[method-assign]

    # Instrumentation of this process only: when a hit list or a transcript first renders
    # a line for a given content, note the time.
    hit_render = HitList.render_line

    def timed_hits(self: Any, y: int) -> Any:
        strip = hit_render(self, y)
        key = "hits:" + getattr(self.screen, "last_query", "")
        if self.hits and key not in painted:
            painted[key] = time.time()
        return strip

    view_render = TranscriptView.render_line

    def timed_view(self: Any, y: int) -> Any:
        strip = view_render(self, y)
        if self.messages and "transcript" not in painted:
            painted["transcript"] = time.time()
        return strip

    HitList.render_line = timed_hits  # type: ignore[method-assign]
    TranscriptView.render_line = timed_view  # type: ignore[method-assign]

    class TimedApp(SessionBrowserApp):
        CSS_PATH = str(
            Path(sys.modules[SessionBrowserApp.__module__].__file__ or "").parent / "app.tcss"
        )

        def on_ready(self) -> None:
            painted.setdefault("ready", time.time())

    t_construct = time.time()
    app = TimedApp(Backend([spec["store"]]), animate=False, keymap={})
    cap = spec.get("wait_limit")

    def ceiling(limit: float) -> float:
        return min(limit, float(cap)) if cap is not None else limit

    async def until(
        check: Callable[[], bool], pilot: Pilot[Any], what: str, limit: float = 120.0
    ) -> None:
        """Wait until ``check()``, at most ``limit`` s (:class:`WaitTimedOut` names ``what``)."""
        limit = ceiling(limit)
        deadline = time.time() + limit
        while not check():
            if time.time() > deadline:
                raise WaitTimedOut(what, limit)
            await asyncio.sleep(0.001)
        await pilot.pause()

    async def workers_done(limit: float = 120.0) -> None:
        limit = ceiling(limit)
        try:
            await asyncio.wait_for(app.workers.wait_for_complete(), limit)
        except TimeoutError as exc:
            raise WaitTimedOut("the app's workers to finish", limit) from exc

    def index_settled() -> bool:
        return app.session_count is not None and app.index_state.mode != "building"

    def progress() -> list[int]:
        state = app.backend.index_state()
        return [state.done, state.total] if state.mode == "building" else []

    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: "ready" in painted, pilot, "the first frame")
        if spec["kind"] == "cold":
            result["first_paint_s"] = round(painted["ready"] - spawned, 4)
            query = spec["queries"][0]
            app.screen.query_one("#query").focus()
            await pilot.pause()
            # Keys as a terminal sends them, without the Pilot's wait for an idle process
            # after each (it measures the CPU time of every thread, so while the index
            # builds it waits a second or two a key: not what a user types into).
            driver = app._driver
            assert driver is not None
            sent = time.time()
            for n, char in enumerate(query):
                if n:
                    await asyncio.sleep(float(spec.get("key_delay", 0.08)))
                sent = time.time()
                key = events.Key("space" if char == " " else char, char)
                key.set_sender(app)
                driver.send_message(key)

            def answered(q: str = query) -> bool:
                if f"hits:{q}" in painted or getattr(app.screen, "last_query", None) == q:
                    painted.setdefault(f"answer:{q}", time.time())  # hits, or "no hits"
                    return True
                return False

            await until(answered, pilot, f"the answer to {query!r}", WAIT_LIMIT)
            answer = painted[f"answer:{query}"]
            result["cold_answer_s"] = round(answer - sent, 4)
            result["answer_from_start_s"] = round(answer - spawned, 4)
            result["query"] = query
            result["hits"] = len(app.screen.query_one(HitList).hits)
            result["error"] = errors.get(query)
            result["building_at_answer"] = progress()
            # The known session itself may wait for the index (a build indexes the oldest
            # files first, a search reads only the newest ones not indexed yet).
            try:
                await until(
                    lambda: f"hits:{query}" in painted, pilot, f"hits for {query!r}", WAIT_LIMIT
                )
            except WaitTimedOut:  # never found: said in the report
                result["hits_s"] = None
            else:
                result["hits_s"] = round(painted[f"hits:{query}"] - sent, 4)
            result["building_at_hits"] = progress()
            recent = app.screen.query_one(RecentList)
            asked = time.time()
            f3 = events.Key("f3", None)
            f3.set_sender(app)
            driver.send_message(f3)
            await until(
                lambda: bool(recent.pages.get(0)), pilot, "the Recent list's first rows", WAIT_LIMIT
            )
            result["recent_s"] = round(time.time() - asked, 4)
            result["recent_rows"] = recent.total
            result["building_at_recent"] = progress()
            result["status"] = app.status_text
            result["peak_rss_mb"] = round(max_rss_mb(), 1)
            return
        await until(lambda: app.session_count is not None, pilot, "the session count")
        t_counts = time.time()
        result["first_paint_s"] = round(painted["ready"] - spawned, 4)
        result["from_construction_s"] = round(painted["ready"] - t_construct, 4)
        result["imports_s"] = round(t_construct - t_import, 4)
        result["counts_shown_s"] = round(t_counts - spawned, 4)
        await until(index_settled, pilot, "the index to be up to date")
        delay = float(spec.get("key_delay", 0.08))

        async def type_query(query: str) -> float:
            """Type ``query``; the time the last key was sent."""
            box = app.screen.query_one("#query")
            box.focus()
            box.value = ""  # type: ignore[attr-defined]
            await pilot.pause(0.2)
            await workers_done()
            keys = ["space" if c == " " else c for c in query]
            for key in keys[:-1]:
                await pilot.press(key)
                await asyncio.sleep(delay)
            sent = time.time()
            await pilot.press(keys[-1])
            return sent

        async def search_phase() -> None:
            samples: list[dict[str, Any]] = []
            for query in spec["queries"]:
                sent = await type_query(query)

                def shown(q: str = query) -> bool:
                    if f"hits:{q}" in painted:
                        return True
                    screen = app.screen
                    if (
                        getattr(screen, "last_query", None) == q
                        and not screen.query_one(HitList).hits
                    ):  # no hits: nothing to paint in the list
                        painted[f"hits:{q}"] = time.time()
                        return True
                    return False

                await until(shown, pilot, f"the hit list for {query!r}", 30.0)
                ms = (painted[f"hits:{query}"] - sent) * 1000.0
                hits = len(app.screen.query_one(HitList).hits)
                samples.append(
                    {"query": query, "ms": round(ms, 1), "hits": hits, "error": errors.get(query)}
                )
            result["samples"] = samples

        async def open_phase() -> None:
            await type_query(BIG_WORD)
            await until(lambda: f"hits:{BIG_WORD}" in painted, pilot, "the big session's hit", 30.0)
            found = app.screen.query_one(HitList)
            if not found.hits or found.hits[0].session_id != BIG_ID:
                raise RuntimeError("the big session was not the first hit")
            await workers_done()
            await pilot.pause(SETTLE_S)
            result["rss_before_open_mb"] = round(current_rss_mb(), 1)
            sent = time.time()
            await pilot.press("enter")  # Enter in the query opens the best hit
            await until(
                lambda: "transcript" in painted, pilot, "the big session's transcript", 60.0
            )
            result["open_big_s"] = round(painted["transcript"] - sent, 4)
            screen = app.screen
            if not isinstance(screen, ViewerScreen):
                raise RuntimeError("the viewer did not open")
            view = screen.query_one(TranscriptView)
            result["opened_messages"] = len(view.messages)
            result["opened_at"] = view.cursor

            async def repaint_ms(key: str) -> float:
                """From sending ``key`` to the first transcript line rendered after it."""
                await pilot.pause()
                painted.pop("transcript", None)
                sent = time.time()
                await pilot.press(key)
                await until(
                    lambda: "transcript" in painted, pilot, f"the transcript after {key}", 30.0
                )
                return (painted["transcript"] - sent) * 1000.0

            pages: list[float] = []
            for _ in range(30):
                if view.scroll_y >= view.max_scroll_y:  # at the end: nothing to repaint
                    break
                pages.append(await repaint_ms("pagedown"))
            jump = "G" if view.scroll_y < view.max_scroll_y else "g"
            result["jump_end_ms"] = round(await repaint_ms(jump), 1)
            pages = pages or [0.0]
            result["page_ms_p50"] = round(statistics.median(pages), 1)
            result["page_ms_max"] = round(max(pages), 1)
            result["rss_open_mb"] = round(current_rss_mb(), 1)
            await pilot.press("escape")
            await until(
                lambda: not isinstance(app.screen, ViewerScreen), pilot, "the viewer to close", 30.0
            )
            await workers_done()
            await pilot.pause(SETTLE_S)
            result["rss_after_close_mb"] = round(current_rss_mb(), 1)

        async def workbench_phase() -> None:
            """The quarantine workbench (F4), listed, then back to the search (F2)."""
            await pilot.press("f4")
            await until(
                lambda: isinstance(app.screen, QuarantineScreen), pilot, "the workbench", 30.0
            )
            await workers_done()
            await pilot.pause(SETTLE_S)
            result["rss_workbench_mb"] = round(current_rss_mb(), 1)
            await pilot.press("f2")
            await until(
                lambda: not isinstance(app.screen, QuarantineScreen),
                pilot,
                "the workbench to close",
                30.0,
            )

        async def export_phase() -> None:
            await pilot.press("f6")
            await until(
                lambda: isinstance(app.screen, ExportScreen), pilot, "the Export screen", 30.0
            )
            screen = app.screen
            assert isinstance(screen, ExportScreen)
            scope = screen.query_one("#x-scope")
            scope.focus()
            await pilot.pause()
            while screen.scope != "all":
                await pilot.press("down")
                await pilot.press("enter")
            target = Path(spec["export_to"])
            path_input = screen.query_one("#x-path")
            path_input.value = str(target)  # type: ignore[attr-defined]
            await workers_done()
            await pilot.pause(SETTLE_S)
            result["rss_before_export_mb"] = round(current_rss_mb(), 1)
            sent = time.time()
            await pilot.press("ctrl+s")
            await until(
                lambda: screen.outcome is not None, pilot, "the export to finish", WAIT_LIMIT
            )
            result["export_s"] = round(time.time() - sent, 3)
            outcome = screen.outcome
            assert outcome is not None
            if outcome.error or outcome.cancelled:
                raise RuntimeError(f"the export failed: {outcome.error or 'cancelled'}")
            result["exported_sessions"] = outcome.sessions
            result["export_bytes"] = outcome.size
            target.unlink(missing_ok=True)
            await workers_done()
            await pilot.pause(SETTLE_S)
            result["rss_after_export_mb"] = round(current_rss_mb(), 1)

        if spec["kind"] == "session":  # a whole session of work: its peak is the app's
            for step in (search_phase, open_phase, workbench_phase, export_phase):
                await step()
        await workers_done()
    result["peak_rss_mb"] = round(max_rss_mb(), 1)


def main(payload: str, spawned: str) -> int:
    spec = json.loads(payload)
    result: dict[str, Any] = {"kind": spec["kind"]}
    try:
        asyncio.run(measure(spec, float(spawned), result))
    except WaitTimedOut as exc:  # what was measured before it, and which wait it was
        result["timed_out"] = {"wait": exc.what, "limit_s": exc.limit}
        result["peak_rss_mb"] = round(max_rss_mb(), 1)
    Path(spec["out"]).write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3:
        sys.exit(main(sys.argv[1], sys.argv[2]))
    print("usage: python -m session_browser.bench.app_child SPEC SPAWNED", file=sys.stderr)
    sys.exit(2)
