"""One session turned into index rows (what :mod:`.reconcile` writes), and the rows written to and
removed from the database."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import recall
from ..files import FileIdentity
from ..model import (
    JSONDict,
    content_text,
    finite_float,
    stored_epoch,
)
from ..query import (
    fold,
)
from ..sources.base import LinesSkipped

MACHINE_MIN_MESSAGES = 8
MACHINE_MAX_GAP = 10.0
IN_CHUNK = 500  # names per ``IN (...)`` list
COMPOUND_CHUNK = 100  # SELECTs joined by UNION ALL at most (SQLite allows 500)
PART_CHARS = 1 << 20  # a longer message is stored as parts of about this many characters
# A session holding a longer message builds its hits from its file, whose reads are
# bounded: joining its parts back would hold the message several times over.
ROWS_HIT_MAX_CHARS = 4 << 20


def timestamps(messages: Sequence[JSONDict]) -> list[float]:
    out: list[float] = []
    for m in messages:
        ts = finite_float(m.get("timestamp"))
        if ts is not None:
            out.append(ts)
    return out


_SURROGATES = re.compile("[\ud800-\udfff]")


def clean(value: Any) -> Any:
    """``value`` with lone surrogates (which SQLite cannot store) replaced by U+FFFD, for
    the indexed copy only (the file is never changed); other values as they are."""
    if isinstance(value, str):
        return _SURROGATES.sub("\ufffd", value)
    return value


def safely(default: Any, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, or ``default`` when one session's content makes it raise."""
    try:
        return fn(*args)
    except Exception:  # a value that cannot be used is treated as absent
        return default


def skip_reason(exc: BaseException) -> str:
    """A one-line reason for skipping a file, from the exception its content raised."""
    text = clean(str(exc)).replace("\n", " ")
    return f"unusable session: {type(exc).__name__}: {text}"[:300]


def machine_paced(messages: Sequence[JSONDict]) -> bool:
    """True for sessions written by a machine: many messages, all arriving within seconds.

    Needs at least 8 timestamps spanning a second or more, and 90% of the gaps between
    consecutive messages under 10 s. A person's chat, however quick the replies, has the
    person's own turns in it (tens of seconds apart), so it is not caught; the documented
    rate rule (more than 60 messages an hour) is, which is why relevance does not use it.
    """
    return paced(timestamps(messages))


def paced(stamps: list[float]) -> bool:
    """:func:`machine_paced` over the finite timestamps of a session's messages."""
    if len(stamps) < MACHINE_MIN_MESSAGES:
        return False
    stamps = sorted(stamps)
    if stamps[-1] - stamps[0] < 1.0:
        return False
    gaps = sorted(b - a for a, b in itertools.pairwise(stamps))
    p90 = gaps[int(0.9 * (len(gaps) - 1))]
    return p90 < MACHINE_MAX_GAP


# One indexed message: (projection index, role, archived 1/0, time, text). A plain tuple,
# not a named one: a build makes one per message, and a named tuple's constructor costs a
# few percent of a whole build.
MessageRow = tuple[int, str, int, float | None, str]
# A projection entry whose public view (recall.view) the message rows do not give as it is:
# (projection index, 1 when its role is user/assistant, its view's role, content, timestamp
# and archived flag as JSON). Entries without text have no message row; the others here
# have content that is not a string or a timestamp that is not a finite float.
VerbatimRow = tuple[int, int, str]
_CONVO = ("user", "assistant")


def verbatim_row(idx: int, msg: JSONDict, role: str, archived: int) -> VerbatimRow:
    """The :data:`VerbatimRow` of projection entry ``idx`` (ASCII JSON: lone surrogates
    kept as escapes; raises for content nested too deep to write)."""
    raw = [role, msg.get("content", ""), msg.get("timestamp"), archived]
    return (idx, 1 if msg.get("role") in _CONVO else 0, json.dumps(raw))


@dataclass
class SessionRow:
    """The ``sessions`` columns of one session beside its file, identity and row range (in
    the order of :data:`SESSION_COLUMNS`). Flags are stored as 1/0."""

    session_id: str
    title: str | None
    when: str | None
    created: str | None
    updated_ts: float | None
    message_count: int
    archived_count: int
    source: str | None
    agent: str | None
    tagged: int
    rate_auto: int  # the documented rate rule (or the source's own automation rule)
    machine: int  # what relevance demotes besides tagged sessions
    lineage: str | None
    project: str | None
    # Whether a hit's context (title, snippet, window, bookends) can be built from the rows
    # as it would be from the file (see :mod:`.hits`): 0 sends hits to the file; n > 0
    # builds them from the rows, with n - 1 entries of the session in ``verbatim``.
    hit_rows: int = 0
    # praisonaiagents' title of a PraisonAI session (:func:`~..recall.peer_title`); None
    # when it is ``title`` (a session of another agent).
    peer_title: str | None = None
    # praisonaiagents' gateway route: the gateway session the session is linked to.
    gateway: str | None = None

    def values(self) -> tuple[Any, ...]:
        """The columns in the order of :data:`SESSION_COLUMNS`."""
        return (
            self.session_id,
            self.title,
            self.when,
            self.created,
            self.updated_ts,
            self.message_count,
            self.archived_count,
            self.source,
            self.agent,
            self.tagged,
            self.rate_auto,
            self.machine,
            self.lineage,
            self.project,
            self.hit_rows,
            self.peer_title,
            self.gateway,
        )

    def settle_automation(self, automated: bool) -> None:
        """Apply a source's own automation rule: it sets the automated flag, and sessions it
        calls automated (and not tagged) are demoted in relevance."""
        self.rate_auto = 1 if automated else 0
        self.machine = 1 if automated and not self.tagged else 0


@dataclass
class Parsed:
    """One session file turned into index rows."""

    file: str
    identity: FileIdentity
    session_id: str
    row: SessionRow
    messages: list[MessageRow]
    chars: int
    state: bytes | None = None  # the source's parse state, kept to resume the next parse
    hidden: list[MessageRow] | None = None  # its hidden parts (see .hidden), for in:tools
    partly: LinesSkipped | None = None  # what was skipped inside the file (see .partly)
    verbatim: list[VerbatimRow] | None = None
    raw: bytes | None = None  # the file's bytes as read, when the source kept them (the vault)
    kept: bool = False  # the vault holds those bytes already (the reader kept them)
    # its content words as the index keeps them (see .lexical), when taken where it was
    # parsed: (distinct words and marks, space-separated; how many content words in all)
    words: tuple[str, int] | None = None


SESSION_COLUMNS = (
    "session_id, title, when_, created, updated_ts, message_count, archived_count, "
    "source, agent, tagged, rate_auto, machine, lineage, project, hit_rows, peer_title, "
    "gateway"
)


def extract(file: str, identity: FileIdentity, data: JSONDict, *, folded: bool) -> Parsed:
    """The index rows of one parsed session dict (one pass over its messages)."""
    # Hits are built from the rows only when they give what the file gives: text as it
    # is (not folded), an id of its own, and every derived value computed without error.
    exact = not folded and bool(data.get("session_id"))
    if not data.get("session_id"):
        data["session_id"] = Path(file).stem
    session_id = str(data["session_id"])
    active = data.get("messages")
    archived = data.get("archived_messages")
    old = [m for m in archived if isinstance(m, dict)] if isinstance(archived, list) else []
    new = [m for m in active if isinstance(m, dict)] if isinstance(active, list) else []
    messages = old + new  # the projection's entries (without the ``archived`` copies)
    n_old = len(old)
    rows: list[MessageRow] = []
    verbatim: list[VerbatimRow] = []
    stamps: list[float] = []
    chars = 0
    plain_stamps = True  # every timestamp a finite float or none: ``stamps`` gives the rate
    for idx, msg in enumerate(messages):
        get = msg.get
        stamp = get("timestamp")
        # the view's timestamp is the stored one only for a finite float or none
        if type(stamp) is float and stamp - stamp == 0.0:  # finite (inf - inf is nan)
            tsf = stamp
            stamps.append(stamp)
            odd = False
        elif stamp is None:
            tsf = None
            odd = False
        else:
            tsf = finite_float(stamp)
            if tsf is not None:
                stamps.append(tsf)
            odd = True
            plain_stamps = False
        content = get("content")
        role = get("role", "")
        if type(role) is not str:
            role = str(role)
        flag = 1 if idx < n_old or get("archived") else 0
        if type(content) is str:
            text = content
        else:
            try:
                text = content_text(content)
            except Exception:  # a value that cannot be used is treated as absent
                text = ""
                exact = False
            odd = True
        if not text:
            if exact:
                try:
                    verbatim.append(verbatim_row(idx, msg, role, flag))
                except Exception:  # content too deep to write: hits read the file
                    exact = False
            continue
        if odd and exact:
            try:
                verbatim.append(verbatim_row(idx, msg, role, flag))
            except Exception:
                exact = False
        chars += len(text)
        if len(text) > ROWS_HIT_MAX_CHARS:
            exact = False
        rows.append((idx, role, flag, tsf, fold(text) if folded else text))
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    # Each derived value on its own: one that the content makes unusable is left out,
    # not the whole session (and then hits read the file, which fails the same way).
    failed: list[bool] = []

    def derived(default: Any, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except Exception:
            failed.append(True)
            return default

    tagged = safely(False, recall.tagged_automated, data)
    if plain_stamps:
        rate = recall.stamps_rate(stamps)
    else:
        rate = safely(None, recall.message_rate, messages)
    rate_auto = rate is not None and rate > recall.AUTOMATED_RATE_THRESHOLD
    when = derived(None, recall.when_of, data)
    when = when if isinstance(when, str) else None
    created = data.get("created_at")
    project = derived(None, recall.project_of, data)
    row = SessionRow(
        session_id,
        derived(session_id, recall.session_title, data, messages),
        when,
        created if isinstance(created, str) else None,
        stored_epoch(when),
        len(new),
        n_old,
        safely(None, recall.source_of, data),
        derived(None, recall.agent_of, data),
        1 if tagged else 0,
        1 if rate_auto else 0,
        1 if paced(stamps) else 0,
        safely(None, recall.lineage_key, data),
        project,
        1 + len(verbatim) if exact and not failed else 0,
        derived(session_id, recall.peer_title, data),
        gateway if isinstance(gateway := data.get("gateway_session_id"), str) else None,
    )
    return Parsed(file, identity, session_id, row, rows, chars, verbatim=verbatim or None)


def cleaned(item: Parsed) -> Parsed:
    """``item`` with lone surrogates replaced in every indexed text (see :func:`clean`).
    When that changed anything, hits of the session read its file (the rows no longer
    hold its text as it is)."""
    session_id = clean(item.session_id)
    values = item.row.values()
    row_values = tuple(clean(v) for v in values)
    rows = [
        (idx, clean(role), archived, ts, clean(text))
        for idx, role, archived, ts, text in item.messages
    ]
    changed = session_id != item.session_id or row_values != values or rows != item.messages
    item.session_id = session_id
    item.row = SessionRow(*row_values)
    item.messages = rows
    if changed:
        item.row.hit_rows = 0
    return item
