"""Export (JSON, Markdown, HTML; optional redaction) and import (dry run first) screens.

Every read and write runs in a thread worker calling :mod:`session_browser.core.portable`;
an export never replaces an existing file without a second confirmation, and an import
is only run after a dry run of the same file with the same options, and a confirmation
(a second one before existing sessions are replaced with a redacted export's copies).
An import is one journal entry: the quarantine workbench's undo puts it back.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import (
    Footer,
    Input,
    ProgressBar,
    RadioSet,
    Static,
)
from textual.worker import get_current_worker

from session_browser.core import portable
from session_browser.core.actions import export as export_actions
from session_browser.core.actions.export import (
    TARGET_EXISTS,
    ExportJob,
    ExportOutcome,
    ExportTargetError,
    check_target,
)
from session_browser.core.actions.import_ import ImportRequest, run_import
from session_browser.core.actions.rescue import writable_stores
from session_browser.core.model import ImportReport
from session_browser.core.paths import safe_id
from session_browser.core.store import DefaultSessionStore
from session_browser.tui.backend import collect_and_release
from session_browser.tui.common.base import ContextScreen, shown_path
from session_browser.tui.common.chrome import AppHeader, StatusLine
from session_browser.tui.common.confirm import ConfirmScreen
from session_browser.tui.common.render import human_size, one_line, printable
from session_browser.tui.common.toggles import TextCheckbox, TextRadioButton

if TYPE_CHECKING:
    from session_browser.tui.app import ScreenContext

FORMAT_NAMES = {"json": "JSON", "md": "Markdown", "html": "HTML"}
MAX_CONFIRM_LINES = 25
COLLECT_AFTER = 0.3  # seconds after an export finished: its memory is given back
PROGRESS_EVERY = 0.1  # seconds between two progress updates of an export

SCREEN_CSS = """
.xfer-intro { height: auto; padding: 0 1 1 1; color: $text-muted; }
.xfer-options { height: auto; }
.xfer-col { width: 36; height: auto; padding: 0 1; }
.xfer-wide { width: 1fr; }
.xfer-label { height: 1; padding: 0 1; text-style: bold; }
.xfer-col .xfer-label { padding: 0; }
.xfer-col RadioSet { width: 100%; }
.xfer-col TextCheckbox { width: 100%; border: none; padding: 0 1; height: 1; margin: 0 0 1 0; }
.xfer-path { margin: 0 1; }
.xfer-summary { height: auto; padding: 0 1; }
.xfer-progress { height: 1; padding: 0 1; }
.xfer-report { height: 1fr; margin: 0 1; border: round $primary 40%; padding: 0 1; }
.xfer-keys { height: 1; padding: 0 1; background: $boost; }
/* Narrow terminals (80 columns): the columns share the width, so no choice is squeezed out. */
ExportScreen.-narrow .xfer-col, ImportScreen.-narrow .xfer-col { width: 1fr; padding: 0 0 0 1; }
"""

# Below this width the option columns share the width (the fixed ones leave "What" no room).
BREAKPOINTS: list[tuple[int, str]] = [(0, "-narrow"), (110, "-wide")]


def _store_label(context: ScreenContext, store: DefaultSessionStore) -> str:
    """The label the app shows for ``store`` (its own labels when it was given some)."""
    stores = list(context.backend.stores)
    labels = context.app.store_labels
    if len(labels) == len(stores):
        for s, label in zip(stores, labels, strict=True):
            if s is store:
                return one_line(label)
    return shown_path(store.session_dir)


def _keys(text: str) -> Static:
    return Static(
        Text(text, style="dim", no_wrap=True, overflow="ellipsis", end=""), classes="xfer-keys"
    )


def _label(text: str) -> Static:
    return Static(Text(text, end=""), classes="xfer-label")


# --------------------------------------------------------------------------- export: worker side


class ExportProgress(Message):
    def __init__(self, done: int, total: int, stage: str) -> None:
        super().__init__()
        self.done = done
        self.total = total
        self.stage = stage


class ExportFinished(Message):
    def __init__(self, outcome: ExportOutcome) -> None:
        super().__init__()
        self.outcome = outcome


# --------------------------------------------------------------------------- export: screen


class ExportScreen(ContextScreen):
    """Export the open session, the selected ones or all, as JSON, Markdown or HTML."""

    DEFAULT_CSS = "ExportScreen { layout: vertical; }\n" + SCREEN_CSS
    HORIZONTAL_BREAKPOINTS = BREAKPOINTS

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back / cancel", id="export.back"),
        Binding("ctrl+s", "export", "Export", id="export.run"),
    ]

    def __init__(self, context: ScreenContext) -> None:
        super().__init__(context)
        self.running = False
        self.outcome: ExportOutcome | None = None
        self._auto_path = ""
        scopes: list[tuple[str, Text]] = []
        if context.current_session:
            label = Text("Open session: ", end="")
            label.append(one_line(context.current_session), style="bold")
            scopes.append(("current", label))
        elif context.session_ids:
            ids = context.session_ids
            label = Text("Selected: ", end="")
            label.append(one_line(ids[0]) if len(ids) == 1 else f"{len(ids)} sessions")
            scopes.append(("selected", label))
        count = context.app.session_count
        scopes.append(
            ("all", Text(f"All sessions{f' ({count})' if isinstance(count, int) else ''}"))
        )
        self.scopes = scopes

    def compose(self) -> ComposeResult:
        yield AppHeader("Export", id="header")
        yield Static(
            Text(
                "A portable JSON payload (re-importable here or by PraisonAI), Markdown, or one "
                "self-contained HTML file; archived turns and the compaction boundary are marked."
            ),
            classes="xfer-intro",
        )
        with Horizontal(classes="xfer-options"):
            with Vertical(classes="xfer-col xfer-wide"):
                yield _label("What")
                with RadioSet(id="x-scope"):
                    for n, (_key, label) in enumerate(self.scopes):
                        yield TextRadioButton(label, value=n == 0)
            with Vertical(classes="xfer-col"):
                yield _label("Format")
                with RadioSet(id="x-format"):
                    yield TextRadioButton(Text("JSON (portable)"), value=True)
                    yield TextRadioButton(Text("Markdown"))
                    yield TextRadioButton(Text("HTML (self-contained)"))
            with Vertical(classes="xfer-col"):
                yield _label("Options")
                yield TextCheckbox(Text("Redact secrets and emails"), id="x-redact")
                yield TextCheckbox(Text("Add continuations (lineage)"), value=True, id="x-lineage")
        yield _label(f"Write to (relative to {shown_path(Path.cwd())})")
        yield Input(id="x-path", classes="xfer-path", select_on_focus=False)
        yield Static("", id="x-summary", classes="xfer-summary")
        yield ProgressBar(id="x-progress", classes="xfer-progress", show_eta=False)
        with VerticalScroll(id="x-report", classes="xfer-report"):
            yield Static("", id="x-report-body")
        yield _keys(
            "Tab moves · ↑/↓ and Space choose · Enter in the path or Ctrl+S exports · "
            "Esc cancels a running export, else goes back"
        )
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#x-progress").display = False
        self._auto_path = self._default_path()
        self.query_one("#x-path", Input).value = self._auto_path
        self.query_one("#x-report-body", Static).update(Text("Nothing exported yet.", style="dim"))
        self._summary()
        self.query_one("#x-scope", RadioSet).focus()

    # ------------------------------------------------------------------ state

    @property
    def scope(self) -> str:
        index = self.query_one("#x-scope", RadioSet).pressed_index
        return self.scopes[max(0, index)][0]

    @property
    def fmt(self) -> str:
        index = self.query_one("#x-format", RadioSet).pressed_index
        return ("json", "md", "html")[max(0, index)]

    def _ids(self) -> list[str]:
        if self.scope == "current" and self.context.current_session:
            return [self.context.current_session]
        if self.scope == "selected":
            return list(self.context.session_ids)
        return []

    def _default_path(self) -> str:
        ids = self._ids()
        stamp = f"{self.context.now:%Y%m%d}"
        if self.scope == "all":
            stem = f"sessions-all-{stamp}"
        elif len(ids) == 1:
            stem = safe_id(ids[0])[:60] or "session"
        else:
            stem = f"sessions-{len(ids)}-{stamp}"
        return f"{stem}.{self.fmt}"

    def _target(self) -> Path:
        value = self.query_one("#x-path", Input).value.strip()
        return Path(value).expanduser()

    def _summary(self) -> None:
        ids = self._ids()
        text = Text(end="")
        text.append("Will write ", style="dim")
        if self.scope == "all":
            text.append("every session", style="bold")
        elif len(ids) == 1:
            text.append("session ", style="bold")
            text.append(one_line(ids[0]), style="bold")
            if (
                self.query_one("#x-lineage", TextCheckbox).value and self.fmt == "json"
            ) or self.query_one("#x-lineage", TextCheckbox).value:
                text.append(" (with its continuations)")
        else:
            text.append(f"{len(ids)} sessions", style="bold")
        text.append(f" as {FORMAT_NAMES[self.fmt]}", style="bold")
        if self.query_one("#x-redact", TextCheckbox).value:
            text.append(", redacted", style="bold")
        text.append(" to ", style="dim")
        value = self.query_one("#x-path", Input).value.strip()
        text.append(printable(value or "(no path)", one_line=True), style="bold")
        if value and self._target().exists():
            text.append("  (exists: asks before replacing)", style="yellow")
        self.query_one("#x-summary", Static).update(text)

    @on(RadioSet.Changed)
    @on(TextCheckbox.Changed)
    def _options_changed(self) -> None:
        path = self.query_one("#x-path", Input)
        if path.value == self._auto_path:  # follow the options until the user edits it
            self._auto_path = self._default_path()
            path.value = self._auto_path
        self._summary()

    @on(Input.Changed, "#x-path")
    def _path_changed(self) -> None:
        self._summary()

    @on(Input.Submitted, "#x-path")
    def _path_submitted(self) -> None:
        self.action_export()

    # ------------------------------------------------------------------ export

    def action_back(self) -> None:
        if self.running:
            self.workers.cancel_group(self, "export")
            self.notify("Cancelling the export…", timeout=2)
            return
        self.app.pop_screen()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "export" and self.running:
            return None
        return True

    def action_export(self) -> None:
        if self.running:
            return
        value = self.query_one("#x-path", Input).value.strip()
        if not value:
            self.notify("Type a path to write to.", severity="warning")
            self.query_one("#x-path", Input).focus()
            return
        ids = self._ids()
        if self.scope != "all" and not ids:
            self.notify("No session selected.", severity="warning")
            return
        path = self._target()
        job = ExportJob(
            scope=self.scope,
            session_ids=ids,
            fmt=self.fmt,
            redact=self.query_one("#x-redact", TextCheckbox).value,
            lineage=self.query_one("#x-lineage", TextCheckbox).value,
            path=path,
        )
        try:
            check_target(path, self.context.backend.stores)
        except ExportTargetError as exc:
            if exc.code != TARGET_EXISTS:
                message = printable(str(exc), one_line=True)
                self.query_one("#x-report-body", Static).update(
                    Text.assemble(("Not exported: ", "bold red"), message)
                )
                self.notify(message, title="Export refused", severity="error")
                return
            body = Text(end="")
            body.append("This file exists and would be replaced:\n  ", style="bold")
            body.append(shown_path(path.absolute()))
            body.append(f"\n\nIts current content ({human_size(path.stat().st_size)}) is lost.")

            def answered(ok: bool | None) -> None:
                if ok:
                    job.replace = True
                    self._start(job)
                else:
                    self.notify("Not exported; the file is unchanged.", timeout=3)

            self.app.push_screen(
                ConfirmScreen(f"Replace {printable(value, one_line=True)}?", body, yes="Replace"),
                answered,
            )
            return
        self._start(job)

    def _start(self, job: ExportJob) -> None:
        self.running = True
        self.refresh_bindings()
        bar = self.query_one("#x-progress", ProgressBar)
        bar.update(total=None, progress=0)
        bar.display = True
        self.query_one("#x-report-body", Static).update(Text("Exporting… (Esc cancels)"))
        self.run_export(job)

    @work(thread=True, exclusive=True, group="export", exit_on_error=False)
    def run_export(self, job: ExportJob) -> None:
        worker = get_current_worker()
        last = [0.0]

        def progress(done: int, total: int, stage: str) -> None:
            # A few a second: one a session would queue 30,000 repaints behind the export,
            # each made while the sessions are read (memory the export can never give back).
            now = time.monotonic()
            if now - last[0] >= PROGRESS_EVERY or done >= total:
                last[0] = now
                self.post_message(ExportProgress(done, total, stage))

        outcome = export_actions.run_export(
            self.context.backend.group,
            job,
            progress=progress,
            cancelled=lambda: worker.is_cancelled,
        )
        self.post_message(ExportFinished(outcome))

    def on_export_progress(self, message: ExportProgress) -> None:
        bar = self.query_one("#x-progress", ProgressBar)
        bar.update(total=max(1, message.total), progress=message.done)
        self.query_one("#x-report-body", Static).update(
            Text(f"Exporting… {message.stage} {message.done}/{message.total} (Esc cancels)")
        )

    def on_export_finished(self, message: ExportFinished) -> None:
        self.running = False
        self.refresh_bindings()
        self.query_one("#x-progress").display = False
        out = message.outcome
        self.outcome = out
        report = Text(end="")
        if out.cancelled:
            report.append("Cancelled: nothing was written.", style="bold yellow")
            self.notify("Export cancelled; nothing written.", timeout=4)
        elif out.error:
            report.append("Not exported: ", style="bold red")
            report.append(printable(out.error, one_line=True))
            self.notify(
                printable(out.error, one_line=True), title="Export failed", severity="error"
            )
        else:
            report.append(
                f"Exported {out.sessions} session{'s' if out.sessions != 1 else ''} as "
                f"{FORMAT_NAMES[out.fmt]} to ",
                style="bold",
            )
            report.append(shown_path(out.path.absolute()))
            report.append(f" ({human_size(out.size)})")
            if out.redactions or self.query_one("#x-redact", TextCheckbox).value:
                kinds = ", ".join(f"{k}: {v}" for k, v in sorted(out.redactions.items()))
                report.append(
                    f"\nRedacted {sum(out.redactions.values())} item(s)"
                    f"{f' ({kinds})' if kinds else ''}."
                )
            for path in out.skipped[:20]:
                report.append("\nskipped unreadable: ", style="yellow")
                report.append(shown_path(path))
            if len(out.skipped) > 20:
                report.append(f"\n… and {len(out.skipped) - 20} more unreadable files skipped")
            self.notify(
                f"Exported {out.sessions} session(s) to {printable(out.path.name, one_line=True)}.",
                timeout=5,
            )
        self.query_one("#x-report-body", Static).update(report)
        self._summary()
        # What the export read and rendered (every session, for "All") is garbage now: give
        # it back once the worker has let go of it.
        self.set_timer(COLLECT_AFTER, collect_and_release)


# --------------------------------------------------------------------------- import


class ImportDone(Message):
    def __init__(
        self,
        request: ImportRequest,
        report: ImportReport | None,
        changes: list[tuple[str, str]],
        error: str | None = None,
    ) -> None:
        super().__init__()
        self.request = request
        self.report = report
        self.changes = changes
        self.error = error


class ImportScreen(ContextScreen):
    """A path, a dry-run report of what would be imported or skipped, then a confirmed import."""

    DEFAULT_CSS = "ImportScreen { layout: vertical; }\n" + SCREEN_CSS
    HORIZONTAL_BREAKPOINTS = BREAKPOINTS

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="import.back"),
        Binding("f5", "dry_run", "Dry run", id="import.dry_run"),
        Binding("ctrl+s", "run_import", "Import", id="import.run"),
    ]

    def __init__(self, context: ScreenContext) -> None:
        super().__init__(context)
        self.stores = writable_stores(context.backend.stores)
        self.running = False
        self.checked: ImportRequest | None = None
        self.changes: list[tuple[str, str]] = []
        self.last_report: ImportReport | None = None

    def compose(self) -> ComposeResult:
        yield AppHeader("Import", id="header")
        yield Static(
            Text(
                "Import a portable JSON export (this app's or PraisonAI's). A dry run first "
                "shows what would be imported or skipped; nothing is written until you confirm."
            ),
            classes="xfer-intro",
        )
        yield _label(f"File to import (relative to {shown_path(Path.cwd())})")
        yield Input(placeholder="e.g. sessions-all-20260201.json", id="i-path", classes="xfer-path")
        with Horizontal(classes="xfer-options"):
            with Vertical(classes="xfer-col xfer-wide"):
                yield _label("Into")
                with RadioSet(id="i-store"):
                    for n, store in enumerate(self.stores):
                        yield TextRadioButton(Text(_store_label(self.context, store)), value=n == 0)
            with Vertical(classes="xfer-col"):
                yield _label("Options")
                yield TextCheckbox(Text("Overwrite existing sessions"), id="i-overwrite")
                yield TextCheckbox(Text("Keep gateway/agent ids"), id="i-keep-live")
                yield TextCheckbox(Text("Skip unusable entries"), id="i-skip")
        with VerticalScroll(id="i-report", classes="xfer-report"):
            yield Static("", id="i-report-body")
        yield _keys(
            "Enter in the path or F5: dry run (writes nothing) · Ctrl+S: import what the dry run "
            "showed · Tab moves · Esc back"
        )
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        body = self.query_one("#i-report-body", Static)
        if not self.stores:
            body.update(Text("No JSON session store is open: there is nowhere to import to."))
        else:
            body.update(Text("Type a path and press Enter for a dry run.", style="dim"))
        self.query_one("#i-path", Input).focus()

    def _request(self) -> ImportRequest:
        return ImportRequest(
            path=self.query_one("#i-path", Input).value.strip(),
            store_index=max(0, self.query_one("#i-store", RadioSet).pressed_index),
            overwrite=self.query_one("#i-overwrite", TextCheckbox).value,
            keep_live=self.query_one("#i-keep-live", TextCheckbox).value,
            skip_invalid=self.query_one("#i-skip", TextCheckbox).value,
        )

    @on(Input.Changed, "#i-path")
    @on(RadioSet.Changed)
    @on(TextCheckbox.Changed)
    def _changed(self) -> None:
        if self.checked is not None and self.checked != self._request():
            self.checked = None
            self.refresh_bindings()
            self.query_one("#i-report-body", Static).update(
                Text(
                    "The path or options changed: press Enter or F5 for a new dry run.",
                    style="yellow",
                )
            )

    @on(Input.Submitted, "#i-path")
    def _submitted(self) -> None:
        self.action_dry_run()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "run_import":
            return True if self.checked is not None and not self.running else None
        if action == "dry_run":
            return None if self.running else True
        return True

    def action_back(self) -> None:
        if not self.running:
            self.app.pop_screen()

    def action_dry_run(self) -> None:
        request = self._request()
        if not request.path:
            self.notify("Type the path of an export file.", severity="warning")
            return
        if not self.stores or self.running:
            return
        self.running = True
        self.refresh_bindings()
        self.query_one("#i-report-body", Static).update(Text("Checking…"))
        self.run_import_worker(request, True)

    def action_run_import(self) -> None:
        request = self._request()
        if self.checked is None or self.checked != request or self.last_report is None:
            self.notify("Run a dry run first (Enter or F5).", severity="warning")
            return
        report = self.last_report
        if report.imported == 0:
            self.notify("The dry run found nothing to import.", severity="warning")
            return
        store = self.stores[request.store_index]
        body = Text(end="")
        body.append("These session files will be written in ", style="bold")
        body.append(_store_label(self.context, store), style="bold")
        body.append(":\n")
        for change, sid in self.changes[:MAX_CONFIRM_LINES]:
            body.append(f"  {change:<8}", style="bold red" if change == "replace" else "bold")
            body.append(shown_path(store.session_path(sid)))
            body.append("\n")
        if len(self.changes) > MAX_CONFIRM_LINES:
            body.append(f"  … and {len(self.changes) - MAX_CONFIRM_LINES} more\n")
        if report.skipped:
            body.append(f"\n{report.skipped_count} skipped (see the dry-run report).")
        replaced = sum(1 for change, _ in self.changes if change == "replace")
        title = f"Import {report.imported} session{'s' if report.imported != 1 else ''}"
        title += f", replacing {replaced}?" if replaced else "?"

        if replaced:
            body.append("\nReplaced files are backed up first: undo puts them back.")

        def start(allow_redacted: bool) -> None:
            self.running = True
            self.refresh_bindings()
            self.query_one("#i-report-body", Static).update(Text("Importing…"))
            self.run_import_worker(request, False, allow_redacted)

        def answered(ok: bool | None) -> None:
            if not ok:
                self.notify("Cancelled; nothing imported.", timeout=3)
            elif report.refused:
                self._confirm_redacted(report.refused, start)
            else:
                start(False)

        self.app.push_screen(ConfirmScreen(title, body, yes="Import"), answered)

    def _confirm_redacted(self, ids: list[str], start: Callable[[bool], None]) -> None:
        """The second confirmation: existing sessions replaced with redacted copies."""
        body = Text(end="")
        body.append("This file is a redacted export: ", style="bold red")
        body.append(
            "its secrets and email addresses are [REDACTED:…] placeholders. Importing it "
            f"replaces {len(ids)} existing session{'s' if len(ids) != 1 else ''} with "
            "those copies:\n"
        )
        for sid in ids[:MAX_CONFIRM_LINES]:
            body.append("  replace ", style="bold red")
            body.append(one_line(sid))
            body.append("\n")
        if len(ids) > MAX_CONFIRM_LINES:
            body.append(f"  … and {len(ids) - MAX_CONFIRM_LINES} more\n")
        body.append("\nThe originals are kept in the journal: F4 then u undoes the import.")

        def answered(ok: bool | None) -> None:
            if ok:
                start(True)
            else:
                self.notify("Cancelled; nothing imported.", timeout=3)

        self.app.push_screen(
            ConfirmScreen(
                f"Replace {len(ids)} session{'s' if len(ids) != 1 else ''} with redacted copies?",
                body,
                yes="Replace",
            ),
            answered,
        )

    @work(thread=True, exclusive=True, group="import", exit_on_error=False)
    def run_import_worker(
        self, request: ImportRequest, dry_run: bool, allow_redacted: bool = False
    ) -> None:
        store = self.stores[request.store_index]
        try:
            report, changes = run_import(
                store, request, dry_run=dry_run, allow_redacted=allow_redacted
            )
        except portable.PortableError as exc:
            self.post_message(ImportDone(request, None, [], str(exc)))
            return
        except (OSError, ValueError, RecursionError) as exc:
            self.post_message(ImportDone(request, None, [], f"{type(exc).__name__}: {exc}"))
            return
        if not dry_run:
            self.context.backend.refresh()
        self.post_message(ImportDone(request, report, changes))

    def on_import_done(self, message: ImportDone) -> None:
        self.running = False
        body = self.query_one("#i-report-body", Static)
        report = message.report
        if report is None:
            self.checked = None
            self.last_report = None
            text = Text("Cannot import: ", style="bold red", end="")
            text.append(printable(message.error or "unknown error", one_line=True), style="")
            text.append("\nNothing was written.")
            body.update(text)
            self.refresh_bindings()
            return
        store = self.stores[message.request.store_index]
        if report.dry_run:
            self.checked = message.request
            self.last_report = report
            self.changes = message.changes
        else:
            self.checked = None
            self.last_report = None
            self.notify(import_toast(report), timeout=8)
            self._refresh_app()
        body.update(self._report_text(report, message.changes, store, message.request))
        self.refresh_bindings()

    def _report_text(
        self,
        report: ImportReport,
        changes: list[tuple[str, str]],
        store: DefaultSessionStore,
        request: ImportRequest,
    ) -> Text:
        text = Text(end="")
        where = _store_label(self.context, store)
        if report.dry_run:
            text.append("Dry run of ", style="bold")
            text.append(printable(request.path, one_line=True), style="bold")
            text.append(": nothing was written.\n", style="bold")
            text.append(f"Would import {report.imported} session(s) into ")
        else:
            text.append(f"Imported {report.imported} session(s) into ", style="bold")
        text.append(where)
        text.append(":\n" if changes else ".\n")
        if report.redacted:
            text.append("  (a redacted export: its secrets are placeholders)\n", style="yellow")
        for kind, ids in (("create", report.created_ids), ("replace", report.replaced_ids)):
            if not ids:
                continue
            head = {"create": "created", "replace": "replaced"}[kind]
            if report.dry_run:
                head = f"would {kind}"
            style = "bold red" if kind == "replace" else "bold green"
            text.append(f"{head[0].upper()}{head[1:]} {len(ids)}:\n", style=style)
            for sid in ids[:200]:
                text.append(f"  {kind:<8}", style="red" if kind == "replace" else "green")
                text.append(one_line(sid))
                text.append(f"  → {one_line(store.session_path(sid).name)}\n", style="dim")
            if len(ids) > 200:
                text.append(f"  … and {len(ids) - 200} more\n")
        if report.refused:
            text.append(
                f"\nA redacted export would replace {len(report.refused)} existing "
                "session(s): the import asks a second time before it does.\n",
                style="bold yellow",
            )
        if report.skipped:
            verb = "Would skip" if report.dry_run else "Skipped"
            text.append(f"{verb} {report.skipped_count}:\n", style="bold")
            for entry in report.skipped[:200]:
                text.append("  ")
                text.append(one_line(entry.get("session_id") or "(no id)"), style="bold")
                text.append(": ")
                text.append(one_line(entry.get("reason", "")))
                text.append("\n")
        if report.dry_run:
            if report.imported:
                text.append("\nCtrl+S imports these (you confirm first).", style="italic")
            else:
                text.append("\nNothing to import.", style="italic")
        elif report.action_id:
            text.append("\nUndo: F4 (quarantine workbench), then u; journal entry ")
            text.append(printable(report.action_id, one_line=True), style="bold")
            text.append(".")
        return text


def import_toast(report: ImportReport) -> str:
    """The notification after an import: what changed and how to undo it."""
    counts = (
        ("created", len(report.created_ids)),
        ("replaced", len(report.replaced_ids)),
        ("skipped", report.skipped_count),
    )
    parts = ", ".join(f"{name} {n}" for name, n in counts if n)
    undo = " Undo: F4, then u." if report.action_id else ""
    return f"Imported {report.imported} session(s){f' ({parts})' if parts else ''}.{undo}"
