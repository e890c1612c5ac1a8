"""What the app's full screens share: the screen context, a path shown for people, and the
modal asking for the id to restore a quarantined file under."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, Static

from session_browser.core import quarantine as q
from session_browser.tui.common.errors import ReportsWorkerErrors
from session_browser.tui.common.render import one_line, printable

if TYPE_CHECKING:
    from session_browser.tui.app import ScreenContext, SessionBrowserApp


def shown_path(path: str | Path) -> str:
    """A path for display: the home dir as ``~``, controls escaped."""
    text = str(path)
    home = str(Path.home())
    if home not in ("", "/") and (text == home or text.startswith(home + "/")):
        text = "~" + text[len(home) :]
    return printable(text, one_line=True)


# --------------------------------------------------------------------------- restore as…


class RestoreIdScreen(ModalScreen[str | None]):
    """Asks for the id to restore an item under: Enter gives it, Esc cancels.

    The id is prefilled with the session's own id when its live file is missing or is the
    damaged item itself (restore in place), else with ``<id>-restored``. What the restore
    would change is shown (and confirmed) next; nothing is written here.
    """

    DEFAULT_CSS = """
    RestoreIdScreen { align: center middle; }
    #restore-as {
        width: 90%;
        max-width: 100;
        height: auto;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    #restore-as-title { text-style: bold; padding: 0 0 1 0; }
    #restore-as-help { color: $text-muted; padding: 1 0 0 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="restore_as.cancel"),
    ]

    def __init__(self, item: q.QuarantineItem, default: str) -> None:
        super().__init__()
        self.item = item
        self.default = default

    def compose(self) -> ComposeResult:
        with Vertical(id="restore-as"):
            title = Text("Restore ")
            title.append(one_line(self.item.name))
            title.append(" as session:")
            yield Static(title, id="restore-as-title")
            yield Input(value=self.default, id="restore-as-id")
            help_text = Text(
                "Enter: show what this would change (asked again before anything is written) · "
                "Esc: cancel. The session's own id restores in place when its live file is "
                "missing or is this damaged file."
            )
            yield Static(help_text, id="restore-as-help")

    @on(Input.Submitted, "#restore-as-id")
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


# --------------------------------------------------------------------------- the screen


class ContextScreen(ReportsWorkerErrors, Screen[None]):
    """A screen opened with the app's :class:`ScreenContext`; it refreshes the app after writes."""

    def __init__(self, context: ScreenContext) -> None:
        super().__init__()
        self.context = context

    @property
    def browser(self) -> SessionBrowserApp:
        from session_browser.tui.app import SessionBrowserApp

        return cast(SessionBrowserApp, self.app)

    def _refresh_app(self) -> None:
        """Counts, status line and lists elsewhere in the app follow what changed."""
        browser = self.browser
        browser.refresh_status(skipped=True)
        try:
            browser.main.reload_recent()
            browser.main.rerun_search()
        except Exception:  # the main screen is not there (a bare test app)
            return
