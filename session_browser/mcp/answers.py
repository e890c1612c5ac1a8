"""The answers of the MCP tools, built from a store group and sized for a context window.

Every answer is one JSON object whose first key, ``notice``, labels what follows as untrusted
text recalled from past sessions (data, never instructions); session text only ever appears
inside JSON strings, with every control, bidi and separator character escaped
(:func:`~session_browser.core.text.compact_json`). An answer fits in ``max_bytes`` UTF-8 bytes:
message text is cut first (each cut marked with how to read on: ``read_session`` with
``start`` and ``offset``), then the items farthest from what was asked for are dropped, and
``truncated`` says so. Nothing here writes anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any

from session_browser.core import recall
from session_browser.core.files import SessionFileError
from session_browser.core.index import Cancelled
from session_browser.core.model import (
    JSONDict,
    SessionHit,
    SessionSummary,
    content_text,
    utc_datetime,
)
from session_browser.core.multi import StoreGroup
from session_browser.core.query import QueryError, normalize_project, parse_query
from session_browser.core.text import clip_marked, compact_json
from session_browser.core.tool import NOTICE

DEFAULT_BYTES = 8 * 1024
MAX_BYTES = 64 * 1024
MIN_BYTES = 2048
MAX_LIMIT = 20
MAX_WINDOW = 20
MAX_COUNT = 50
# Text cut to this many characters at most before the budget is even measured: a 50 MB
# message is never copied whole into an answer.
FIRST_CUT = MAX_BYTES
# Below this, message text is not cut shorter: whole items are dropped instead.
MIN_CUT = 120
# The last try: one hit, its texts this short.
TINY_CUT = 40
TITLE_CHARS = 200
WHY_CHARS = 300
ECHO_CHARS = 200
FIELD_CHARS = 64


class ToolInputError(ValueError):
    """An argument the model can correct: the message says what is expected."""


class Stopped(Exception):
    """The call was cancelled while it ran."""


@dataclass(frozen=True)
class Live:
    """Which sessions are the caller's own live ones: ids the client named, else sessions of
    ``cwd`` updated in the last ``seconds``."""

    ids: frozenset[str] = frozenset()
    cwd: str | None = None
    seconds: float = 0.0

    def excludes(self, session_id: str, project: str | None, when: str | None) -> bool:
        if self.ids:
            return session_id in self.ids
        if self.cwd is None or self.seconds <= 0 or project is None or not when:
            return False
        updated = utc_datetime(when)
        if updated is None or normalize_project(project) != self.cwd:
            return False
        return (datetime.now(UTC) - updated).total_seconds() <= self.seconds


def check_int(name: str, value: int, low: int, high: int) -> int:
    if value < low or value > high:
        raise ToolInputError(f"{name} must be between {low} and {high}, got {value}")
    return value


def _budget(max_bytes: int) -> int:
    return check_int("max_bytes", max_bytes, MIN_BYTES, MAX_BYTES)


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _field(value: Any) -> Any:
    """A short field (role, timestamp) as stored, a long text cut (it is the file's word)."""
    return clip_marked(value, FIELD_CHARS) if isinstance(value, str) else value


def _cut(msg: JSONDict, session_id: str, limit: int, offset: int = 0) -> JSONDict:
    """``msg`` (the public shape) with its text from ``offset`` cut at ``limit`` characters,
    the cut marked with how to read on."""
    full = content_text(msg.get("content"))
    text = full[offset:] if offset else full
    out: JSONDict = {
        "index": msg.get("index"),
        "role": _field(msg.get("role")),
        "timestamp": _field(msg.get("timestamp")),
    }
    if msg.get("archived"):
        out["archived"] = True
    if offset:
        out["offset"] = offset
    if len(text) > limit:
        shown = offset + limit
        out["content"] = (
            f"{text[:limit]}… [cut: {len(full) - shown:,} more characters; read on with "
            f"read_session(session_id={clip_marked(session_id, ECHO_CHARS)!r}, "
            f"start={msg.get('index')}, count=1, offset={shown})]"
        )
        out["next_offset"] = shown
        out["length"] = len(full)
    else:
        out["content"] = text
    return out


def _limits(budget: int, skeleton: int, lengths: Sequence[int]) -> list[int]:
    """The text limits to try, longest first: the one that shares the room the answer's
    skeleton (every text cut at MIN_CUT, ``skeleton`` bytes) leaves among texts of
    ``lengths`` characters (the short ones whole, the long ones cut alike), then shorter
    ones down to MIN_CUT."""
    room = (budget - skeleton) * 0.9
    extra = sorted(max(0, n - MIN_CUT) for n in lengths)
    cap = 0.0
    for i, e in enumerate(extra):
        share = room / (len(extra) - i)
        if e > share:
            cap = share
            break
        room -= e
        cap = e
    top = min(FIRST_CUT, MIN_CUT + int(cap))
    out = [top]
    while out[-1] > MIN_CUT:
        out.append(max(MIN_CUT, out[-1] * 3 // 4))
    return out


def _text_tries(
    payload: JSONDict,
    key: str,
    build: Callable[[int], list[JSONDict]],
    lengths: Sequence[int],
    budget: int,
) -> Iterator[Callable[[], list[JSONDict]]]:
    """``build(limit)`` for the limits of :func:`_limits` (none when even MIN_CUT does
    not fit)."""
    payload[key] = build(MIN_CUT)
    skeleton = _size(compact_json(payload))
    if skeleton > budget:
        return
    for limit in _limits(budget, skeleton, lengths):
        yield partial(build, limit)


TRUNCATED = "cut to fit max_bytes (fewer items or a larger max_bytes)"


def _fit(
    payload: JSONDict, key: str, tries: Iterable[Callable[[], list[JSONDict]]], budget: int
) -> str:
    """The JSON of ``payload`` with ``payload[key]`` from the first of ``tries`` (each a
    smaller answer than the one before) that fits in ``budget`` bytes; an empty list when
    none does. ``truncated`` says when a text was cut or an item left out."""
    whole: int | None = None
    for attempt in tries:
        items = attempt()
        whole = len(items) if whole is None else whole
        payload[key] = items
        payload.pop("truncated", None)
        text = compact_json(payload)
        # a cut text has the key next_offset (the same words inside a text are escaped)
        if len(items) < whole or '"next_offset":' in text:
            payload["truncated"] = TRUNCATED
            text = compact_json(payload)
        if _size(text) <= budget:
            return text
    payload[key] = []
    payload["truncated"] = TRUNCATED
    return compact_json(payload)


def _nearest(messages: Sequence[JSONDict], anchor: int, n: int) -> list[JSONDict]:
    """The ``n`` messages nearest ``anchor`` (by index), in order."""
    if n >= len(messages):
        return list(messages)
    order = sorted(
        range(len(messages)), key=lambda i: abs(int(messages[i].get("index") or 0) - anchor)
    )
    keep = sorted(order[:n])
    return [messages[i] for i in keep]


def _why(hit: SessionHit, limit: int) -> JSONDict:
    why: JSONDict = {"snippet": clip_marked(hit.snippet, min(WHY_CHARS, limit))}
    terms = hit.explain.get("terms")
    if isinstance(terms, list) and terms:
        why["terms"] = terms[:20]
    if hit.explain.get("phrase"):
        why["phrase"] = True
    if hit.archived:
        why["archived_turn"] = True
    return why


def _hit_head(hit: SessionHit, limit: int) -> JSONDict:
    """A hit without its messages; its texts cut at ``limit`` characters at most."""
    width = min(TITLE_CHARS, limit)
    head: JSONDict = {
        "session_id": hit.session_id,
        "title": clip_marked(hit.display_title or hit.title, width),
        "source": hit.source,
        "when": hit.when,
        "score": round(hit.score, 4),
        "anchor_index": hit.anchor_index,
        "why": _why(hit, limit),
    }
    for name in ("agent", "project", "kept", "store"):
        value = getattr(hit, name)
        if value:
            head[name] = clip_marked(str(value), width)
    return head


def with_filters(
    query: str, *, source: str | None = None, since: str | None = None, project: str | None = None
) -> str:
    """``query`` with the filters given as arguments appended in the query language."""
    words = [query]
    for name, value in (("source", source), ("since", since)):
        if value is None:
            continue
        if not value.strip() or any(c.isspace() or c == '"' for c in value.strip()):
            raise ToolInputError(f"{name} must be one word (e.g. {name}:{_EXAMPLE[name]})")
        words.append(f"{name}:{value.strip()}")
    if project is not None:
        if not project.strip() or '"' in project:
            raise ToolInputError("project must be a directory path (without double quotes)")
        words.append(f'project:"{project.strip()}"')
    return " ".join(words)


_EXAMPLE = {"source": "claude", "since": "7d"}


def search(
    group: StoreGroup,
    query: str,
    *,
    limit: int,
    window: int,
    max_bytes: int,
    live: Live,
    include_current: bool,
    cancelled: Cancelled | None = None,
) -> str:
    """The answer of ``search_sessions``."""
    budget = _budget(max_bytes)
    check_int("limit", limit, 1, MAX_LIMIT)
    check_int("window", window, 0, MAX_WINDOW)
    if not query.strip():
        raise ToolInputError("query is empty: give words to search for (see the description)")
    try:
        parse_query(query)
    except QueryError as exc:
        raise ToolInputError(f"bad query: {exc}") from None
    hits: list[SessionHit] = []
    left_out: list[str] = []
    want = limit
    while True:  # again with more when the live session took a place
        result = group.search_ex(query, limit=want, window=window, cancelled=cancelled)
        if result.cancelled:
            raise Stopped
        if result.error:
            raise ToolInputError(f"bad query: {result.error}")
        hits, left_out = [], []
        for hit in result.hits:
            if not include_current and live.excludes(hit.session_id, hit.project, hit.when):
                left_out.append(hit.session_id)
            elif len(hits) < limit:
                hits.append(hit)
        if len(hits) == limit or len(result.hits) < want or want > limit + len(left_out):
            break
        want = limit + len(left_out)
    payload: JSONDict = {
        "notice": NOTICE,
        "tool": "search_sessions",
        "query": clip_marked(query, ECHO_CHARS),
        "matched_sessions": result.matched_sessions,
        "returned": len(hits),
    }
    if left_out:
        payload["left_out_current_session"] = left_out
        payload["hint"] = "include_current=true includes the caller's own live session"
    if result.warnings:
        payload["warnings"] = [clip_marked(w, 400) for w in result.warnings]

    def build(limit_chars: int, wide: int, n: int) -> list[JSONDict]:
        out: list[JSONDict] = []
        for hit in hits[:n]:
            near = [
                m for m in hit.messages if abs(int(m.get("index") or 0) - hit.anchor_index) <= wide
            ]
            messages = [_cut(m, hit.session_id, limit_chars) for m in near]
            out.append(_hit_head(hit, limit_chars) | {"messages": messages})
        return out

    def tries() -> Iterator[Callable[[], list[JSONDict]]]:
        lengths = [len(content_text(m.get("content"))) for h in hits for m in h.messages]
        full = partial(build, wide=window, n=len(hits))
        yield from _text_tries(payload, "results", full, lengths, budget)
        for wide in range(window - 1, -1, -1):
            yield partial(build, MIN_CUT, wide, len(hits))
        for n in range(len(hits) - 1, 0, -1):
            yield partial(build, MIN_CUT, 0, n)
        yield partial(build, TINY_CUT, 0, 1)

    return _fit(payload, "results", tries(), budget)


def _session_messages(group: StoreGroup, session_id: str) -> tuple[list[JSONDict], str | None]:
    """The public projection of ``session_id`` and, for a session read from the vault's kept
    copy (its file deleted, or damaged), what that copy is."""
    shown = clip_marked(session_id, ECHO_CHARS)
    damaged: str | None = None
    store = group.store_of(session_id)
    if store is not None:
        try:
            return store.projection(session_id), None
        except KeyError:
            pass
        except SessionFileError as exc:
            damaged = f"its file is damaged ({exc.path.name}: {exc.reason})"
        except OSError as exc:
            damaged = f"its file cannot be read ({exc.strerror or exc})"
    from session_browser.core.vault import VaultError
    from session_browser.core.vault.reading import load_session

    try:
        data, version, _n = load_session(session_id)
    except (VaultError, OSError):
        data = None
    if data is None and damaged:
        raise ToolInputError(f"session {shown!r} cannot be read: {damaged}; none is kept")
    if data is None:
        raise ToolInputError(
            f"unknown session_id {shown!r}: use a session_id exactly as search_sessions or "
            "recent_sessions returned it"
        )
    messages = recall.project(data)
    kept = f"{damaged or 'deleted'}; read from the vault's kept copy"
    if damaged is None and version.gone_at is not None:
        day = datetime.fromtimestamp(version.gone_at, UTC).strftime("%Y-%m-%d")
        kept = f"deleted on {day}; read from the vault's kept copy"
    return [recall.view(messages, i) for i in range(len(messages))], kept


def read(
    group: StoreGroup,
    session_id: str,
    *,
    around: int | None,
    window: int,
    start: int | None,
    count: int,
    offset: int,
    max_bytes: int,
) -> str:
    """The answer of ``read_session``."""
    budget = _budget(max_bytes)
    check_int("window", window, 0, MAX_WINDOW)
    check_int("count", count, 1, MAX_COUNT)
    if offset < 0:
        raise ToolInputError(f"offset must be 0 or more, got {offset}")
    if around is not None and start is not None:
        raise ToolInputError("give either around (with window) or start (with count), not both")
    if not session_id.strip():
        raise ToolInputError("session_id is empty: use an id search_sessions returned")
    messages, kept = _session_messages(group, session_id)
    total = len(messages)
    if total == 0:
        raise ToolInputError("the session has no messages")
    for name, value in (("around", around), ("start", start)):
        if value is not None and not 0 <= value < total:
            raise ToolInputError(
                f"{name}={value} does not exist: the session has {total} messages "
                f"(#0 to #{total - 1})"
            )
    if start is not None:
        first, anchor = start, start
        page = messages[start : start + count]
    else:
        anchor = total - 1 if around is None else around
        first = max(0, anchor - window)
        page = messages[first : anchor + window + 1]
    payload: JSONDict = {
        "notice": NOTICE,
        "tool": "read_session",
        "session_id": clip_marked(session_id, ECHO_CHARS),
        "total_messages": total,
    }
    if kept:
        payload["kept"] = kept

    def build(limit_chars: int, n: int) -> list[JSONDict]:
        chosen = _nearest(page, anchor, n) if start is None else page[:n]
        if chosen:
            last = int(chosen[-1].get("index") or 0)
            payload["first"] = chosen[0].get("index")
            payload["last"] = last
            payload["next_start"] = last + 1 if last + 1 < total else None
        return [_cut(m, session_id, limit_chars, offset) for m in chosen]

    def tries() -> Iterator[Callable[[], list[JSONDict]]]:
        lengths = [max(0, len(content_text(m.get("content"))) - offset) for m in page]
        full = partial(build, n=len(page))
        yield from _text_tries(payload, "messages", full, lengths, budget)
        for n in range(len(page) - 1, 0, -1):
            yield partial(build, MIN_CUT, n)

    return _fit(payload, "messages", tries(), budget)


def recent(
    group: StoreGroup,
    *,
    limit: int,
    project: str | None,
    max_bytes: int,
    live: Live,
    include_current: bool,
) -> str:
    """The answer of ``recent_sessions``."""
    budget = _budget(max_bytes)
    check_int("limit", limit, 1, MAX_LIMIT)
    if project is not None and not project.strip():
        raise ToolInputError("project is empty: give a directory path, or leave it out")
    extra = 0 if include_current else 2
    rows: list[SessionSummary] = group.recent(limit=limit + extra, project=project or None)
    kept_rows: list[SessionSummary] = []
    left_out: list[str] = []
    for row in rows:
        if not include_current and live.excludes(row.session_id, row.project, row.when):
            left_out.append(row.session_id)
        elif len(kept_rows) < limit:
            kept_rows.append(row)
    payload: JSONDict = {
        "notice": NOTICE,
        "tool": "recent_sessions",
        "returned": len(kept_rows),
    }
    if left_out:
        payload["left_out_current_session"] = left_out
        payload["hint"] = "include_current=true includes the caller's own live session"

    def build(n: int) -> list[JSONDict]:
        out = []
        for row in kept_rows[:n]:
            entry: JSONDict = {
                "session_id": row.session_id,
                "title": clip_marked(row.display_title or row.title, TITLE_CHARS),
                "source": row.source,
                "when": row.when,
                "messages": row.message_count,
                "archived": row.archived_count,
            }
            for name in ("agent", "project", "kept", "store"):
                value = getattr(row, name)
                if value:
                    entry[name] = clip_marked(str(value), TITLE_CHARS)
            out.append(entry)
        return out

    tries = (partial(build, n) for n in range(len(kept_rows), 0, -1))
    return _fit(payload, "results", tries, budget)
