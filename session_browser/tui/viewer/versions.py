"""The versions the vault keeps of the session the viewer shows: ``<``/``>`` step between
them, the info line says which one is shown (and that the session was deleted, when it
was), and the turns a newer version no longer has are marked in the transcript."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual import work
from textual.message import Message
from textual.worker import get_current_worker

from session_browser.core.model import content_text
from session_browser.core.text import human_size
from session_browser.core.vault import Version
from session_browser.core.vault.feed import kept_note
from session_browser.tui.common.render import error_text, one_line
from session_browser.tui.viewer.transcript import TranscriptView, count_lines, message_text

if TYPE_CHECKING:
    from session_browser.tui.viewer.screen import ViewerScreen


class VersionsKnown(Message):
    def __init__(self, versions: list[Version]) -> None:
        super().__init__()
        self.versions = versions


class VersionLoaded(Message):
    def __init__(
        self,
        number: int,
        messages: list[dict[str, Any]],
        heights: list[int],
        width: int,
        removed: set[int],
        matches: list[int],
        error: str | None = None,
    ) -> None:
        super().__init__()
        self.number = number
        self.messages = messages
        self.heights = heights
        self.width = width
        self.removed = removed
        self.matches = matches
        self.error = error


def _turn_key(message: dict[str, Any]) -> tuple[str, str]:
    try:
        return str(message.get("role", "")), content_text(message.get("content"))
    except Exception:  # content that cannot be read is compared as nothing
        return str(message.get("role", "")), ""


def removed_turns(older: list[dict[str, Any]], newer: list[dict[str, Any]]) -> set[int]:
    """Indices of the turns of ``older`` that ``newer`` no longer holds."""
    have = {_turn_key(m) for m in newer}
    return {i for i, m in enumerate(older) if _turn_key(m) not in have}


def version_line(version: Version, number: int, total: int) -> str:
    """ "version 2 of 3 (2026-02-12 14:00, 1.2 KB)"."""
    when = datetime.fromtimestamp(version.seen).astimezone().strftime("%Y-%m-%d %H:%M")
    return f"version {number} of {total} ({when}, {human_size(version.size)})"


class KeptVersions:
    """The viewer's part that knows the kept versions (mixed into :class:`ViewerScreen`)."""

    versions: list[Version]
    version_no: int | None  # the kept version shown; None: the session as its store has it

    @property
    def _screen(self) -> ViewerScreen:
        return cast("ViewerScreen", self)

    def _init_versions(self) -> None:
        self.versions = []
        self.version_no = None
        self.version_removed = 0  # turns of the shown version its successor removed
        self.seek_dropped = False  # opened from a hit on dropped turns: show a version with them

    def seeking_dropped(self, dropped: bool) -> ViewerScreen:
        """Opened from a hit on turns a rewrite dropped: once the versions are known, the
        newest older version that matches the search is shown (the file has them no more)."""
        self.seek_dropped = dropped
        return self._screen

    @property
    def deleted(self) -> bool:
        """No store has the file any more: what is shown is the vault's latest copy."""
        return bool(self.versions) and self.versions[-1].gone_at is not None

    @property
    def on_old_version(self) -> bool:
        """An older version than the latest is shown (the live reload leaves it alone)."""
        return self.version_no is not None and self.version_no < len(self.versions)

    @work(thread=True, exclusive=True, group="versions", exit_on_error=False)
    def load_versions(self) -> None:
        versions = self._screen.browser.backend.kept_versions(self._screen.session_id)
        if not get_current_worker().is_cancelled:
            self._screen.post_message(VersionsKnown(versions))

    def on_versions_known(self, message: VersionsKnown) -> None:
        self.versions = message.versions
        if self.deleted:
            self.version_no = len(self.versions)
        elif self.seek_dropped and len(self.versions) >= 2:
            self.load_kept(len(self.versions) - 1, self._screen._view().body_width(), seek=True)
        self.seek_dropped = False
        self._screen._info()

    def version_info(self, info: Text) -> None:
        """The info line's start: deleted (where from, when) and the version shown."""
        if self.deleted:
            last = self.versions[-1]
            note = kept_note(last.path, last.gone_at or last.seen, None)
            info.append(one_line(note), style="bold reverse")
            info.append(" · ")
        if self.version_no is not None:
            n = self.version_no
            info.append(version_line(self.versions[n - 1], n, len(self.versions)), style="bold")
            if self.version_removed:
                k = self.version_removed
                info.append(f", {k} turn{'s' if k != 1 else ''} removed in version {n + 1}")
            info.append(" (</>) · ")

    def _step_version(self, step: int) -> None:
        total = len(self.versions)
        if total < 2:
            self._screen.notify("The vault keeps no other version of this session.", timeout=3)
            return
        target = (self.version_no or total) + step
        if not 1 <= target <= total:
            which = "oldest" if step < 0 else "newest"
            self._screen.notify(f"This is the {which} version the vault keeps.", timeout=2)
            return
        if target == total and not self.deleted:  # the latest: the session as it is now
            self.version_no = None
            self.version_removed = 0
            self._screen._view().removed = set()
            self._screen.reload()
            return
        self.load_kept(target, self._screen._view().body_width())

    def action_older_version(self) -> None:
        self._step_version(-1)

    def action_newer_version(self) -> None:
        self._step_version(1)

    @work(thread=True, exclusive=True, group="kept-version", exit_on_error=False)
    def load_kept(self, number: int, width: int, seek: bool = False) -> None:
        """Version ``number`` read in the background; with ``seek``, the newest version from
        there down that matches the search terms."""
        from session_browser.tui.viewer.screen import find_matches

        backend = self._screen.browser.backend
        try:
            sid, terms = self._screen.session_id, self._screen.terms
            messages, _version, n = backend.kept_projection(sid, number)
            while seek and terms and n > 1 and not find_matches(messages, terms):
                messages, _version, n = backend.kept_projection(sid, n - 1)
            last = n >= len(self.versions)  # the latest kept: no newer version to compare
            newer = [] if last else backend.kept_projection(sid, n + 1)[0]
        except Exception as exc:  # shown, never fatal: the view stays as it was
            self._screen.post_message(
                VersionLoaded(number, [], [], width, set(), [], error_text(exc))
            )
            return
        if get_current_worker().is_cancelled:
            return
        key = self._screen.query_one(TranscriptView).full_key
        heights = [2 + count_lines(message_text(m, key=key), width) for m in messages]
        matches = find_matches(messages, self._screen.terms) if self._screen.terms else []
        removed = set() if last else removed_turns(messages, newer)
        self._screen.post_message(VersionLoaded(n, messages, heights, width, removed, matches))

    def on_version_loaded(self, message: VersionLoaded) -> None:
        if message.error:
            self._screen.notify(f"Cannot read that version: {message.error}", severity="error")
            return
        view = self._screen._view()
        self.version_no = message.number
        self.version_removed = len(message.removed)
        view.removed = message.removed
        view.removed_label = f" removed in version {message.number + 1} "
        view.replace_messages(message.messages, message.heights, message.width, follow=False)
        self._screen.matches = message.matches
        view.matches = set(message.matches)
        first = sorted(set(message.matches) & message.removed) or sorted(message.removed)
        if first:
            view.set_cursor(first[0], top=True)
        self._screen._info()
