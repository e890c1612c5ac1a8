"""Worker failures told once, never the end of the app."""

from __future__ import annotations

from typing import Any

from textual.worker import Worker, WorkerState


class ReportsWorkerErrors:
    """Mixed into a screen (or the app): a worker it runs that raises becomes one toast.

    Textual's worker state messages do not bubble, so each node that runs workers listens
    for its own; the app says it (once per distinct error).
    """

    app: Any

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        error = event.worker.error
        if event.state != WorkerState.ERROR or error is None:
            return
        self.app.report_error(error, where=event.worker.name or "")
