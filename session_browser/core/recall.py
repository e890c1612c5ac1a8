"""Cross-session recall: ONE implementation shared by every store.

The projection
    A session is read as ``archived_messages`` (each flagged ``archived: true``) followed by
    ``messages``. Non-object entries are skipped. Indices into this list are the only
    message coordinates any API uses (``anchor_index``, ``window(around_message_id=...)``).

Classic scoring (the documented heuristic, identical in every store)
    Per message: +2 if the whole lowercased query is a substring, +1 for each
    whitespace-separated query term that is a substring. The session score is the sum; the
    anchor is the best-scoring message (the first on ties). Automated sessions are multiplied
    by 0.25. Ties are broken by ``updated_at``, newest first. Continuations sharing a lineage
    key collapse to their best hit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .hidden import hidden_snippet, with_hidden
from .model import JSONDict, SessionHit, SessionSummary, content_text, finite_float, stored_epoch
from .query import (
    MessageFacts,
    ParsedQuery,
    SessionFacts,
    Term,
    classic_text,
    fold,
    parse_query,
)
from .query.match import TermStats, needs_stats, session_matches
from .reading import is_slash_command
from .text import strip_markdown

BOOKEND_SIZE = 2
SNIPPET_WIDTH = 120
AUTOMATED_SOURCES = frozenset({"scheduled", "automated", "cron", "system", "batch"})
AUTOMATED_RATE_THRESHOLD = 60.0  # messages per hour over the session's span
AUTOMATED_DEMOTION = 0.25
LINEAGE_KEYS = ("lineage_id", "root_session_id", "thread_id")
TITLE_CHARS = 60
# praisonaiagents' cut of a first user message used as a title (no whole-word cut, no mark).
PEER_TITLE_CHARS = 60
# An explicit title or agent name is shown whole up to this many characters.
TITLE_MAX_CHARS = 1000
# A snippet of a longer message is cut from this many characters around its match, so
# neither time nor memory depends on the message's length (only finding the match does).
SNIPPET_SPAN = 8 * SNIPPET_WIDTH
_WORD_RE = re.compile(r"\S+")


def _meta(data: JSONDict) -> JSONDict:
    meta = data.get("metadata")
    return meta if isinstance(meta, dict) else {}


def project(data: JSONDict) -> list[JSONDict]:
    """The archived+active projection of a stored session dict.

    Archived entries are shallow copies with ``archived: True``; active entries are the
    stored dicts themselves (treat them as read-only).
    """
    merged: list[JSONDict] = []
    archived = data.get("archived_messages")
    if isinstance(archived, list):
        merged.extend({**m, "archived": True} for m in archived if isinstance(m, dict))
    active = data.get("messages")
    if isinstance(active, list):
        merged.extend(m for m in active if isinstance(m, dict))
    return merged


def turn_count(data: JSONDict) -> int:
    """How many turns a session dict has: the entries of its projection (:func:`project`),
    the ones the viewer numbers ``#0``.. and counts ("9 of 344"). The one rule every count
    of turns shown follows (``vault log`` too), whatever the index keeps rows for."""
    return len(project(data))


def view(messages: Sequence[JSONDict], index: int) -> JSONDict:
    """The public shape of projection entry ``index``."""
    msg = messages[index]
    role = msg.get("role", "")
    return {
        "index": index,
        "role": role if isinstance(role, str) else str(role),
        "content": msg.get("content", ""),
        "timestamp": msg.get("timestamp"),
        "archived": bool(msg.get("archived")),
    }


def full_view(messages: Sequence[JSONDict]) -> list[JSONDict]:
    """Every projection entry in the public shape plus ``metadata`` and the tool fields."""
    return [
        view(messages, i)
        | {
            "metadata": msg.get("metadata") or {},
            "tool_calls": msg.get("tool_calls"),
            "tool_call_id": msg.get("tool_call_id"),
        }
        for i, msg in enumerate(messages)
    ]


def window_slice(messages: Sequence[JSONDict], anchor: int, window: int) -> list[JSONDict]:
    """±``window`` entries around ``anchor`` (clamped)."""
    if not messages:
        return []
    window = max(0, window)
    anchor = max(0, min(anchor, len(messages) - 1))
    start = max(0, anchor - window)
    end = min(len(messages), anchor + window + 1)
    return [view(messages, i) for i in range(start, end)]


def parse_anchor(around_message_id: Any, count: int) -> int:
    """An anchor index from the tool's string argument; the latest message when absent/bad."""
    anchor = count - 1
    if around_message_id is not None and str(around_message_id).strip() != "":
        try:
            anchor = int(str(around_message_id).strip())
        except ValueError:
            anchor = count - 1
    return max(0, min(anchor, count - 1))


def fold_prefix(text: str, limit: int) -> str:
    """``" ".join(text.split())[:limit]``, reading only as much of ``text`` as it needs.

    Time and memory are bounded by ``limit`` (and by the leading whitespace), never by the
    length of ``text``: a 300 MB message folds its first words only.
    """
    out: list[str] = []
    size = -1
    for match in _WORD_RE.finditer(text):
        word = match.group()
        out.append(word)
        size += len(word) + 1
        if size >= limit:
            break
    return " ".join(out)[:limit]


def _label(value: Any) -> str:
    """An explicit title or name, whitespace folded, at most :data:`TITLE_MAX_CHARS`."""
    return fold_prefix(value if isinstance(value, str) else str(value), TITLE_MAX_CHARS)


_FIRST_TEXT = re.compile(r"\S")


def _first_words(text: str) -> str:
    """At most :data:`TITLE_CHARS` characters of a message's start as plain words: Markdown
    markup taken out (a title shows ``Fix the build``, not ``**Fix** the `build```),
    whitespace folded, a longer text cut after a whole word with ``…``. Reads a bounded
    prefix, whatever the length of ``text``."""
    start = _FIRST_TEXT.search(text)
    if start is None:
        return ""
    prefix = text[start.start() : start.start() + TITLE_CHARS * 4]
    words = fold_prefix(strip_markdown(prefix), TITLE_CHARS + 1)
    if len(words) <= TITLE_CHARS:
        return words
    cut = words.rfind(" ", 0, TITLE_CHARS)
    return (words[:cut] if cut > TITLE_CHARS // 2 else words[: TITLE_CHARS - 1]) + "…"


def agent_of(data: JSONDict) -> str | None:
    """The agent a session was held with: ``agent_name``, else ``agent_id`` (top level or
    metadata), whitespace folded; None when it names none."""
    for value in (data.get("agent_name"), data.get("agent_id"), _meta(data).get("agent_id")):
        if value is None or value == "" or isinstance(value, (dict, list, bool)):
            continue
        label = _label(value)
        if label:
            return label
    return None


def session_title(data: JSONDict, messages: Sequence[JSONDict] | None = None) -> str:
    """``metadata.title``, else the first user message that is not a slash command (its
    first :data:`TITLE_CHARS` characters, whitespace folded), else the agent name, else
    the id.

    The first user message says more than the agent name: every session held with one
    agent would otherwise share its title (the agent is shown beside the title instead,
    see :func:`agent_of`)."""
    explicit = _meta(data).get("title")
    if explicit:
        return _label(explicit)
    for msg in project(data) if messages is None else messages:
        if msg.get("role") == "user":
            full = content_text(msg.get("content"))
            if is_slash_command(full[: TITLE_CHARS * 4]):  # /model, /mode plan: no title
                continue
            text = _first_words(full)
            if text:
                return text
    agent = agent_of(data)
    if agent:
        return agent
    return str(data.get("session_id", "") or "")


def peer_title(data: JSONDict) -> str:
    """A session's title by praisonaiagents 1.7.17's rule (``_session_title``), exactly: an
    explicit ``metadata.title``, else ``agent_name``, else the first active user message
    with content (whitespace folded, its first :data:`PEER_TITLE_CHARS` characters), else
    the id. The library's ``title`` fields; the app shows :func:`session_title`."""
    explicit = _meta(data).get("title")
    if explicit:
        return str(explicit)
    agent_name = data.get("agent_name")
    if agent_name:
        return str(agent_name)
    messages = data.get("messages", [])
    if isinstance(messages, list):
        for msg in messages:
            if isinstance(msg, dict) and msg.get("role") == "user" and msg.get("content"):
                content = msg["content"]
                try:
                    text = content if isinstance(content, str) else str(content)
                except (RecursionError, ValueError):  # nested too deep to show as the peer does
                    text = content_text(content)
                return _peer_cut(text)
    return str(data.get("session_id", ""))


def _peer_cut(text: str) -> str:
    """``" ".join(text.split())[:PEER_TITLE_CHARS]``, reading only the words it keeps."""
    out: list[str] = []
    size = 0
    for word in _WORD_RE.finditer(text):
        out.append(word.group())
        size += len(out[-1]) + 1
        if size > PEER_TITLE_CHARS:
            break
    return " ".join(out)[:PEER_TITLE_CHARS]


def titles(data: JSONDict, messages: Sequence[JSONDict], source: str) -> tuple[str, str]:
    """(``title``, ``display_title``) of a session of ``source``: PraisonAI's rule and ours
    for a PraisonAI session, ours for both for a session of another agent."""
    shown = session_title(data, messages)
    return (peer_title(data) if source == "praisonai" else shown), shown


def source_of(data: JSONDict) -> str:
    """The ``source`` tag of a session (top level or metadata), lowercased; '' if none."""
    return str(data.get("source") or _meta(data).get("source") or "").strip().lower()


def tagged_automated(data: JSONDict) -> bool:
    """Explicitly tagged automated: a scheduled/cron/... source or ``metadata.automated``."""
    return source_of(data) in AUTOMATED_SOURCES or _meta(data).get("automated") is True


def message_rate(messages: Sequence[JSONDict]) -> float | None:
    """Messages per hour over the span of timestamps; None with fewer than 4 timestamps."""
    stamps: list[float] = []
    for m in messages:
        ts = m.get("timestamp")
        if ts is None:
            continue
        try:
            stamps.append(float(ts))
        except (TypeError, ValueError, OverflowError):
            return None
    return stamps_rate(stamps)


def stamps_rate(stamps: Sequence[float]) -> float | None:
    """Messages per hour of messages whose timestamps are ``stamps`` (the others have
    none); None with fewer than 4."""
    if len(stamps) < 4:
        return None
    span_hours = (max(stamps) - min(stamps)) / 3600.0
    if span_hours <= 0:
        return None
    return len(stamps) / span_hours


def is_automated(data: JSONDict, messages: Sequence[JSONDict]) -> bool:
    """The documented rule: tagged, or more than 60 messages an hour (>= 4 timestamps)."""
    if tagged_automated(data):
        return True
    rate = message_rate(messages)
    return rate is not None and rate > AUTOMATED_RATE_THRESHOLD


def lineage_key(data: JSONDict) -> str | None:
    """The continuation chain a session belongs to (never ``parent_session_id``)."""
    meta = _meta(data)
    for key in LINEAGE_KEYS:
        val = data.get(key) or meta.get(key)
        if val:
            return str(val)
    return None


def has_content(content: Any) -> bool:
    """Whether a message's ``content`` is more than nothing: a string that is not blank, or
    a value that is not null or an empty list (the index reads verbatim entries the same
    way). A turn without it (a tool call, its result) is no bookend."""
    if isinstance(content, str):
        return bool(content.strip(" \t\n\r"))
    return content is not None and content != []


def bookends(messages: Sequence[JSONDict], size: int = BOOKEND_SIZE) -> dict[str, list[JSONDict]]:
    """First and last ``size`` user/assistant messages with content (a turn that only
    called tools is none), in praisonaiagents' shape: empty without any, no ``closing`` ones
    with ``size`` or fewer."""
    convo = [
        i
        for i, m in enumerate(messages)
        if m.get("role") in ("user", "assistant") and has_content(m.get("content"))
    ]
    if not convo:
        return {}
    return {
        "opening": [view(messages, i) for i in convo[:size]],
        "closing": [view(messages, i) for i in convo[-size:]] if len(convo) > size else [],
    }


def when_of(data: JSONDict) -> str | None:
    """``updated_at``, else ``created_at``, as a string (None when neither is set)."""
    value = data.get("updated_at") or data.get("created_at")
    return None if value is None else str(value)


def fold_ws(text: str) -> str:
    return " ".join(text.split())


def make_snippet(
    content: str, query: str, terms: Sequence[str] = (), width: int = SNIPPET_WIDTH
) -> str:
    """About ``width`` characters centred on the first match, whitespace folded, ``…`` where cut.

    Centred on the whole query if it occurs, else on the earliest occurrence of any term.
    A message longer than :data:`SNIPPET_SPAN` is cut around its first match first, so
    only that span is folded.
    """
    if len(content) > SNIPPET_SPAN:
        return _long_snippet(content, query, terms, width)
    text = fold_ws(content)
    lowered = text.lower()
    pos = lowered.find(query.lower()) if query else -1
    length = len(query)
    if pos < 0:
        best = -1
        for term in terms:
            p = lowered.find(term.lower()) if term else -1
            if p >= 0 and (best < 0 or p < best):
                best, length = p, len(term)
        pos = best
    start = 0 if pos < 0 else max(0, pos + length // 2 - width // 2)
    end = min(len(text), start + width)
    start = max(0, min(start, end - width))
    snippet = text[start:end]
    if start > 0:
        snippet = "…" + snippet
    if end < len(text):
        snippet += "…"
    return snippet


def _first_match(lowered: str, query: str, terms: Sequence[str]) -> tuple[int, int]:
    """(position, length) of the whole query in ``lowered``, else of the earliest term."""
    pos = lowered.find(query.lower()) if query else -1
    if pos >= 0:
        return pos, len(query)
    best, length = -1, 0
    for term in terms:
        p = lowered.find(term.lower()) if term else -1
        if p >= 0 and (best < 0 or p < best):
            best, length = p, len(term)
    return best, length


def _long_snippet(content: str, query: str, terms: Sequence[str], width: int) -> str:
    """:func:`make_snippet` of a long message: fold only the span around the first match."""
    pos, length = _first_match(content.lower(), query, terms)
    pos = max(0, pos)
    start = max(0, pos + length // 2 - SNIPPET_SPAN // 2)
    end = min(len(content), start + SNIPPET_SPAN)
    start = max(0, end - SNIPPET_SPAN)
    snippet = make_snippet(content[start:end], query, terms, width)
    if start > 0 and not snippet.startswith("…"):
        snippet = "…" + snippet
    if end < len(content) and not snippet.endswith("…"):
        snippet += "…"
    return snippet


@dataclass(frozen=True)
class ClassicQuery:
    """A query under the classic heuristic: the whole needle and its whitespace terms.

    Read as the query language (``language``, what the app and the CLI do), a message
    matches as the index matches it (words, phrases and prefixes on folded text, filters,
    excluded words: ``filters`` is the parsed query; see :func:`keeps_session`,
    :func:`keeps_message`) and the classic score ranks the matches; read literally
    (PraisonAI's own search), any substring of the query matches.
    """

    text: str
    needle: str
    terms: tuple[str, ...]
    filters: ParsedQuery | None = None

    @property
    def searchable(self) -> bool:
        """Whether anything can match: a needle, or words or filters of the language."""
        if self.filters is None:
            return bool(self.needle)
        return not self.filters.empty

    @classmethod
    def parse(cls, query: str, *, language: bool = False) -> ClassicQuery:
        """Raises :class:`~session_browser.core.query.QueryError` for a bad filter value
        (``language`` only)."""
        text = (query or "").strip()
        if not language:
            needle = text.lower()
            return cls(text, needle, tuple(t for t in needle.split() if t))
        pq = parse_query(text)
        text = classic_text(text)
        needle = fold(text)
        return cls(text, needle, tuple(t for t in needle.split() if t), pq)

    def score(self, lowered: str) -> float:
        score = 2.0 if self.needle in lowered else 0.0
        for term in self.terms:
            if term in lowered:
                score += 1.0
        return score


@dataclass
class Candidate:
    """A scored session before ranking: its hit and its lineage key."""

    hit: SessionHit
    lineage: str | None
    # The query's terms (numbers) held by the session's messages that pass the filters
    # (read as the query language; see :func:`keep_matching`).
    held: frozenset[int] = frozenset()


def build_hit(
    data: JSONDict,
    messages: Sequence[JSONDict],
    *,
    anchor: int,
    score: float,
    snippet: str,
    window: int,
    automated: bool,
    source: str = "praisonai",
    store: str = "",
    explain: JSONDict | None = None,
) -> SessionHit:
    """A :class:`SessionHit` for session ``data`` anchored at projection index ``anchor``."""
    title, shown = titles(data, messages, source)
    return SessionHit(
        session_id=str(data.get("session_id", "") or ""),
        title=title,
        display_title=shown,
        agent=agent_of(data),
        when=when_of(data),
        snippet=snippet,
        score=score,
        anchor_index=anchor,
        messages=window_slice(messages, anchor, window),
        bookends=bookends(messages),
        source=source,
        store=store,
        archived=bool(messages[anchor].get("archived")) if messages else False,
        automated=automated,
        explain=explain or {},
    )


def project_of(data: JSONDict) -> str | None:
    """The project dir a session belongs to (``metadata.cwd``/``project`` or ``cwd``)."""
    meta = _meta(data)
    value = meta.get("cwd") or meta.get("project") or data.get("cwd")
    return None if value is None or value == "" else str(value)


def keeps_session(
    pq: ParsedQuery, data: JSONDict, *, file_name: str | None, source_kind: str
) -> bool:
    """Whether session ``data`` (in file ``file_name`` of a ``source_kind`` store) passes
    the session filters of ``pq`` (``session:``, ``source:``, ``project:``, ``agent:``):
    the filter table's predicate, as the index's clauses read them."""
    active = pq.session_filters
    if not active:
        return True
    facts = SessionFacts(
        session_id=str(data.get("session_id")),
        file_name=file_name,
        store_kind=source_kind,
        source=source_of(data),
        project=project_of(data),
        agent=agent_of(data),
    )
    return all(f.keeps(value, facts) for f, value in active)


def keeps_message(pq: ParsedQuery, role: str, archived: bool, when: float | None) -> bool:
    """Whether a message passes the message filters of ``pq`` (``role:``, ``archived:``,
    ``since:``/``until:`` on its time, else its session's)."""
    active = pq.message_filters
    if not active:
        return True
    facts = MessageFacts(role, archived, when)
    return all(f.keeps(value, facts) for f, value in active)


def holds_any(terms: Sequence[Term], messages: Sequence[JSONDict]) -> bool:
    """Whether a message of ``messages`` holds one of ``terms`` (excluded words)."""
    if not terms:
        return False
    for msg in messages:
        text = content_text(msg.get("content"))
        if text:
            folded = fold(text)
            if any(t.count_in(folded, 1) for t in terms):
                return True
    return False


def scan_stats(query: ClassicQuery) -> TermStats | None:
    """What a scan counts while it reads a store, for :func:`keep_matching` to tell common
    words from rarer ones as the index does (None when the query does not need it)."""
    pq = query.filters
    return TermStats(pq.terms) if pq is not None and needs_stats(pq.terms) else None


def keep_matching(
    cands: Iterable[Candidate], query: ClassicQuery, rare: set[int] | None = None
) -> list[Candidate]:
    """The candidates of sessions the query matches (:mod:`~.query.match`: one of the rarer
    terms, when the query mixes common and rarer ones; ``rare``: their numbers, from
    :meth:`TermStats.rare` or the index's frequencies). A literal query keeps them all."""
    pq = query.filters
    if pq is None or not pq.terms:
        return list(cands)
    return [c for c in cands if session_matches(c.held, rare or set())]


def classic_candidate(
    data: JSONDict,
    query: ClassicQuery,
    *,
    window: int,
    source: str = "praisonai",
    store: str = "",
    file_name: str | None = None,
    stats: TermStats | None = None,
) -> Candidate | None:
    """Score one session under the classic heuristic; None when nothing matches (or, with
    the query's filters, when the session or every matching message is filtered out).
    ``stats`` counts the session's messages (every session of a store must be handed to
    it: the frequencies are the store's); then the caller keeps the candidates
    :func:`keep_matching` keeps."""
    pq = query.filters
    messages = project(data)
    folded: list[str] = []
    if pq is not None:
        folded = [fold(content_text(m.get("content"))) for m in messages]
        if stats is not None:
            for text in folded:
                if text:
                    stats.add(text)
        if not keeps_session(pq, data, file_name=file_name, source_kind=source):
            return None
        if pq.excluded and any(t.count_in(f, 1) for f in folded if f for t in pq.excluded):
            return None
    session_when = stored_epoch(when_of(data)) if pq is not None else None
    best_index = -1
    best_score = 0.0
    total = 0.0
    held: set[int] = set()
    tools = pq is not None and pq.tools
    for idx, msg in enumerate(messages):
        text = content_text(msg.get("content"))
        if tools:  # in:tools: its hidden parts as the index keeps them
            text = with_hidden(text, msg)
        if not text:
            continue
        if pq is not None:
            ts = finite_float(msg.get("timestamp"))
            role = msg.get("role", "")
            when = ts if ts is not None else session_when
            role = role if isinstance(role, str) else str(role)
            if not keeps_message(pq, role, bool(msg.get("archived")), when):
                continue
            here = fold(text) if tools else folded[idx]
            found = {i for i, t in enumerate(pq.terms) if t.count_in(here, 1)}
            if pq.terms and not found:
                continue
            held |= found
            s = max(query.score(here), 1.0)
        else:
            s = query.score(text.lower())
        total += s
        if s > best_score:
            best_score, best_index = s, idx
    if best_index < 0:
        return None
    automated = is_automated(data, messages)
    raw = total
    if automated:
        total *= AUTOMATED_DEMOTION
    anchor_text = content_text(messages[best_index].get("content"))
    if tools and pq is not None:
        anchor_text = hidden_snippet(pq, anchor_text, messages[best_index])
    hit = build_hit(
        data,
        messages,
        anchor=best_index,
        score=total,
        snippet=make_snippet(anchor_text, query.text, query.terms),
        window=window,
        automated=automated,
        source=source,
        store=store,
        explain={
            "ranking": "classic",
            "raw_score": raw,
            "anchor_score": best_score,
            "demotion": AUTOMATED_DEMOTION if automated else 1.0,
            "terms": [t for t in query.terms if t in anchor_text.lower()],
            "phrase": query.needle in anchor_text.lower(),
        },
    )
    return Candidate(hit, lineage_key(data), frozenset(held))


def search(
    query: str, limit: int, candidates: Callable[[], Iterable[Candidate]]
) -> list[SessionHit]:
    """The best ``limit`` hits of a scanning store's ``candidates()`` (none asked for an
    empty query or no hits: then nothing is read)."""
    if limit <= 0 or not (query or "").strip():
        return []
    return rank(candidates(), limit)


def rank(candidates: Iterable[Candidate], limit: int) -> list[SessionHit]:
    """Sort by score then ``when`` (newest first) and fold lineage continuations.

    A folded continuation is recorded on the surviving hit's ``folded`` list.
    """
    ordered = sorted(candidates, key=lambda c: (c.hit.score, c.hit.when or ""), reverse=True)
    out: list[SessionHit] = []
    by_lineage: dict[str, SessionHit] = {}
    for cand in ordered:
        if cand.lineage is not None:
            kept = by_lineage.get(cand.lineage)
            if kept is not None:
                kept.folded.append(cand.hit.session_id)
                continue
            by_lineage[cand.lineage] = cand.hit
        if len(out) < limit:
            out.append(cand.hit)
    for hit in out:
        if hit.folded:
            hit.explain["folded"] = list(hit.folded)
    return out


def summary_of(
    data: JSONDict,
    *,
    size: int = 0,
    source: str = "praisonai",
    store: str = "",
    project_dir: str | None = None,
) -> SessionSummary:
    """The browse summary of a stored session dict."""
    active = data.get("messages")
    archived = data.get("archived_messages")
    active_n = sum(1 for m in active if isinstance(m, dict)) if isinstance(active, list) else 0
    archived_n = (
        sum(1 for m in archived if isinstance(m, dict)) if isinstance(archived, list) else 0
    )
    messages = project(data)
    created = data.get("created_at")
    title, shown = titles(data, messages, source)
    return SessionSummary(
        session_id=str(data.get("session_id", "") or ""),
        title=title,
        display_title=shown,
        agent=agent_of(data),
        when=when_of(data),
        message_count=active_n,
        archived_count=archived_n,
        created_at=created if isinstance(created, str) else None,
        size=size,
        source=source,
        store=store,
        automated=is_automated(data, messages),
        lineage=lineage_key(data),
        project=project_dir,
    )


def sort_recent(summaries: Iterable[SessionSummary], limit: int) -> list[SessionSummary]:
    """Most recently updated first."""
    if limit <= 0:
        return []
    return sort_summaries(summaries, "updated")[:limit]


# The orders of the session list: most recently updated, created, or biggest first.
SORT_KEYS: dict[str, Callable[[SessionSummary], Any]] = {
    "updated": lambda s: s.when or "",
    "created": lambda s: s.created_at or "",
    "size": lambda s: s.size,
}
SORTS = tuple(SORT_KEYS)


def sort_summaries(summaries: Iterable[SessionSummary], sort: str) -> list[SessionSummary]:
    """``summaries`` in the order ``sort`` names (raises ``ValueError`` for another)."""
    key = SORT_KEYS.get(sort)
    if key is None:
        raise ValueError(f"sort must be one of {SORTS}, not {sort!r}")
    return sorted(summaries, key=key, reverse=True)


def title_or_id_matches(summary: SessionSummary, text: str) -> bool:
    """The session list's filter: ``text`` (any case) in the title or the id; an empty
    ``text`` keeps every session."""
    needle = (text or "").strip().lower()
    return (
        not needle
        or needle in summary.display_title.lower()
        or needle in summary.session_id.lower()
    )
