"""While the first index build runs, a search in the app answers from what is indexed so far
(plus the newest files) and says how much it searched."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from session_browser.core.index.reconcile import BATCH_FILES, PARSE_FILES
from session_browser.core.index.store import PENDING_SCAN_FILES
from session_browser.tui.app import SessionBrowserApp
from session_browser.tui.backend import Backend
from session_browser.tui.search.hits import HitList

from .stores import NOW
from .test_live import SIZE, _session, _until

FILES = 2000
WORD = "quokkafish"
T0 = 1_700_000_000


def _store(root: Path) -> Path:
    """2,000 sessions, file times a minute apart (a build indexes the oldest first); the word
    lives only in an archived turn of the oldest."""
    root.mkdir(parents=True)
    for i in range(FILES):
        data = _session(f"s{i:05d}", [f"note {i} about the harbour", "a reply"], T0 + i * 60)
        if i == 0:
            data["archived_messages"] = [
                {"role": "user", "content": f"the archived {WORD} turn", "timestamp": T0 - 60},
                {"role": "assistant", "content": "an old answer", "timestamp": T0 - 59},
            ]
        path = root / f"s{i:05d}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        os.utime(path, (T0 + i * 60, T0 + i * 60))
    return root


async def test_a_word_of_an_old_indexed_session_is_found_while_the_build_is_paused(
    tmp_path: Path,
) -> None:
    backend = Backend([_store(tmp_path / "sessions")])  # indexed; nothing built yet
    index = backend.stores[0]
    # A search before the build got to the old session: the word is in no index yet.
    assert backend.search(WORD).hits == []
    reached, go = threading.Event(), threading.Event()

    first: list[int] = []

    def hold(done: int, total: int) -> None:  # after the first batch: hold the build there
        first.append(done)
        reached.set()
        go.wait(60)

    index.reconciler.on_batch = hold  # type: ignore[union-attr]
    app = SessionBrowserApp(backend, now=NOW, store_labels=["store"], animate=False)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await _until(pilot, reached.is_set, 30)
            # the app reads the build's progress on its own poll: wait for it to show
            # (a batch: PARSE_FILES files parsed by a worker process, as a first build of
            # this many files is, else BATCH_FILES)
            assert first[0] in (PARSE_FILES, BATCH_FILES)
            await _until(
                pilot,
                lambda: app.index_state.mode == "building" and app.index_state.done == first[0],
                30,
            )
            await pilot.press(*WORD)
            hits = app.main.query_one(HitList)
            await _until(pilot, lambda: [h.session_id for h in hits.hits] == ["s00000"], 30)
            assert hits.hits[0].archived
            await _until(
                pilot,
                lambda: (
                    f"searched {first[0] + PENDING_SCAN_FILES:,} of 2,000 sessions; full "
                    "results when the index is ready"
                    in str(app.main.query_one("#search-info").render())
                ),
                30,
            )
            assert app.index_state.mode == "building"  # still held: the answer came meanwhile
            go.set()
            await _until(pilot, lambda: app.index_state.mode == "ready", 60)
            # the search is asked again when the build is done: every session searched
            await _until(
                pilot,
                lambda: "searched" not in str(app.main.query_one("#search-info").render()),
                10,
            )
            assert [h.session_id for h in hits.hits] == ["s00000"]
    finally:
        go.set()
        backend.close()
