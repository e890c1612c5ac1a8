"""Human exports: one self-contained Markdown or HTML file of sessions or of search hits.

Archived turns and the compaction boundary are marked; with redaction every string a
person reads goes through one :class:`~session_browser.core.redact.Redactor`.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .. import recall
from ..model import (
    JSONDict,
    SessionHit,
    content_text,
    is_summary_message,
)
from ..redact import Redactor
from ..text import printable
from .errors import PortableError

# --------------------------------------------------------------------------- human exports


@dataclass
class Rendered:
    """A human export and what redaction hid in it."""

    text: str
    redactions: dict[str, int] = field(default_factory=dict)

    @property
    def redacted(self) -> int:
        return sum(self.redactions.values())


@dataclass
class _Entry:
    """One rendered message of a transcript."""

    index: int
    role: str
    when: str
    content: str
    archived: bool = False
    summary: bool = False
    anchor: bool = False
    tool: str = ""


@dataclass
class _Block:
    """One session (or one search hit) to render."""

    title: str
    facts: list[tuple[str, str]]
    entries: list[_Entry | str]  # a str is a marker line (the compaction boundary)


def _fmt_ts(ts: Any) -> str:
    if isinstance(ts, bool) or not isinstance(ts, (int, float)):
        return "" if ts is None else str(ts)
    try:
        return datetime.fromtimestamp(float(ts), UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return str(ts)


class _Text:
    """Untrusted text prepared for output: controls made visible, optionally redacted."""

    def __init__(self, redactor: Redactor | None) -> None:
        self.redactor = redactor

    def __call__(self, value: Any, *, one_line: bool = False) -> str:
        text = value if isinstance(value, str) else str(value)
        if self.redactor is not None:
            text = self.redactor.text(text)
        return printable(text, one_line=one_line)


def _tool_text(msg: JSONDict) -> str:
    parts: list[str] = []
    calls = msg.get("tool_calls")
    if calls:
        try:
            parts.append("tool calls: " + json.dumps(calls, ensure_ascii=False, indent=2))
        except (TypeError, ValueError, RecursionError):
            parts.append("tool calls: (unprintable)")
    call_id = msg.get("tool_call_id")
    if call_id is not None:
        parts.append(f"tool call id: {call_id}")
    return "\n".join(parts)


def _entry(msg: JSONDict, index: int, clean: _Text, *, anchor: bool = False) -> _Entry:
    role = msg.get("role", "")
    tool = _tool_text(msg)
    return _Entry(
        index=index,
        role=clean(role if isinstance(role, str) else str(role), one_line=True),
        when=clean(_fmt_ts(msg.get("timestamp")), one_line=True),
        content=clean(content_text(msg.get("content"))),
        archived=bool(msg.get("archived")),
        summary=is_summary_message(msg),
        anchor=anchor,
        tool=clean(tool) if tool else "",
    )


def _boundary(count: int, present: bool) -> str:
    turns = "turn" if count == 1 else "turns"
    where = "above" if present else "not in this export"
    return f"compaction boundary: {count} earlier {turns} archived here ({where})"


def _session_block(data: JSONDict, clean: _Text) -> _Block:
    messages = recall.project(data)
    archived_count = sum(1 for m in messages if m.get("archived"))
    entries: list[_Entry | str] = []
    boundary_done = False
    for i, msg in enumerate(messages):
        if not boundary_done and not msg.get("archived"):
            if archived_count or is_summary_message(msg):
                count = archived_count
                if not count:
                    meta = msg.get("metadata")
                    n = meta.get("compacted_count") if isinstance(meta, dict) else None
                    count = n if isinstance(n, int) and not isinstance(n, bool) else 0
                entries.append(_boundary(count, archived_count > 0))
            boundary_done = True
        entries.append(_entry(msg, i, clean))
    if archived_count and not boundary_done:
        entries.append(_boundary(archived_count, True))
    sid = str(data.get("session_id") or "")
    facts = [
        ("session id", printable(sid, one_line=True)),
        ("created", clean(data.get("created_at") or "", one_line=True)),
        ("updated", clean(data.get("updated_at") or "", one_line=True)),
        ("messages", f"{len(messages) - archived_count} active, {archived_count} archived"),
    ]
    agent = data.get("agent_name")
    if agent:
        facts.append(("agent", clean(agent, one_line=True)))
    lineage = recall.lineage_key(data)
    if lineage:
        facts.append(("lineage", clean(lineage, one_line=True)))
    return _Block(clean(recall.session_title(data), one_line=True), facts, entries)


def _hit_block(hit: SessionHit, clean: _Text) -> _Block:
    entries: list[_Entry | str] = []
    for msg in hit.messages:
        idx = msg.get("index")
        index = idx if isinstance(idx, int) else -1
        entries.append(_entry(msg, index, clean, anchor=index == hit.anchor_index))
    facts = [
        ("session id", printable(hit.session_id, one_line=True)),
        ("when", clean(hit.when or "", one_line=True)),
        ("score", f"{hit.score:g}"),
        ("anchor", f"#{hit.anchor_index}" + (" (archived turn)" if hit.archived else "")),
    ]
    if hit.snippet:
        facts.append(("snippet", clean(hit.snippet, one_line=True)))
    return _Block(clean(hit.display_title or hit.session_id, one_line=True), facts, entries)


# ---- Markdown


_MD_ESCAPES = str.maketrans(
    {**{ch: "\\" + ch for ch in "\\`*_{}[]#|>~"}, "<": "&lt;", "&": "&amp;"}
)


def _md_inline(text: str) -> str:
    """Text safe in a Markdown heading or list item (markup and raw HTML escaped)."""
    return text.translate(_MD_ESCAPES)


def _fence_for(text: str) -> str:
    """The shortest fence of at least three backticks that no run of backticks in ``text``
    can close: one longer than the longest run.

    Found with substring searches (a run of ``n`` backticks holds every shorter run, so
    whether ``n`` backticks occur is monotonic in ``n``): a doubling then a halving search,
    each step one linear scan in C, so a message of any size costs O(size x log(longest
    run)), never a Python step per character.
    """
    if "```" not in text:
        return "```"
    low, high = 3, 6  # low backticks occur in text; find a count that does not
    while high <= len(text) and "`" * high in text:
        low, high = high, min(high * 2, len(text) + 1)
    while high - low > 1:  # low occurs, high does not
        mid = (low + high) // 2
        if "`" * mid in text:
            low = mid
        else:
            high = mid
    return "`" * high


def _md_fenced(text: str) -> list[str]:
    """The lines of ``text`` in a fenced block whose fence no run of backticks inside can
    close. ``text`` stays one item (never copied into a bigger string): a writer streams it."""
    fence = _fence_for(text)
    return [f"{fence}text", text, fence]


def _md_block(block: _Block, level: int) -> list[str]:
    hashes = "#" * level
    lines = [f"{hashes} {_md_inline(block.title)}", ""]
    lines += [f"- **{name}:** {_md_inline(value)}" for name, value in block.facts]
    lines.append("")
    for item in block.entries:
        if isinstance(item, str):
            lines += ["---", "", f"> **{_md_inline(item)}**", "", "---", ""]
            continue
        tags = []
        if item.anchor:
            tags.append("▶ match")
        if item.archived:
            tags.append("archived")
        if item.summary:
            tags.append("compaction summary")
        tag = f" · *{', '.join(tags)}*" if tags else ""
        when = f" · {_md_inline(item.when)}" if item.when else ""
        lines.append(f"{hashes}# #{item.index} {_md_inline(item.role)}{when}{tag}")
        lines += ["", *_md_fenced(item.content), ""]
        if item.tool:
            lines += [*_md_fenced(item.tool), ""]
    return lines


def _md_head(title: str, note: str) -> list[str]:
    lines = [f"# {_md_inline(title)}", ""]
    if note:
        lines += [f"*{_md_inline(note)}*", ""]
    return lines


def _md_document(title: str, blocks: Sequence[_Block], note: str) -> str:
    lines = _md_head(title, note)
    for block in blocks:
        lines += _md_block(block, 2)
    return "\n".join(lines).rstrip("\n") + "\n"


# ---- HTML

_CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f6f7f9;
color:#1d2330}
main{max-width:60rem;margin:0 auto;padding:1.5rem}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2.5rem;border-bottom:2px solid #ccd}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;font-size:.9rem}
dl.facts dt{color:#667}dl.facts dd{margin:0;overflow-wrap:anywhere}
.msg{background:#fff;border:1px solid #dde;border-left:4px solid #89a;border-radius:6px;
margin:.7rem 0;padding:.5rem .8rem}
.msg header{font-size:.85rem;color:#556}.msg header b{color:#1d2330}
.role-user{border-left-color:#3a7bd5}.role-assistant{border-left-color:#2e9e6a}
.role-tool{border-left-color:#c98a1b}.role-system{border-left-color:#8a5cc9}
.archived{background:#eef0f3;opacity:.9}.summary{border-style:dashed}
.anchor{box-shadow:0 0 0 2px #e0a800}
.tag{display:inline-block;font-size:.75rem;padding:0 .4rem;border-radius:4px;background:#dde;
margin-left:.3rem}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:.3rem 0 0;font:13px/1.45 ui-monospace,
SFMono-Regular,Menlo,Consolas,monospace}
.boundary{text-align:center;color:#8a5cc9;font-weight:600;margin:1.2rem 0;
border-top:2px dashed #8a5cc9;padding-top:.4rem}
.note{color:#667;font-style:italic}
"""


def _h(text: str) -> str:
    return html.escape(text, quote=True)


def _html_block(block: _Block) -> list[str]:
    out = [f"<section><h2>{_h(block.title)}</h2>", '<dl class="facts">']
    out += [f"<dt>{_h(name)}</dt><dd>{_h(value)}</dd>" for name, value in block.facts]
    out.append("</dl>")
    for item in block.entries:
        if isinstance(item, str):
            out.append(f'<div class="boundary">{_h(item)}</div>')
            continue
        role_class = "".join(c if c.isalnum() else "-" for c in item.role.lower())[:20]
        classes = ["msg", f"role-{role_class}"]
        tags = []
        if item.archived:
            classes.append("archived")
            tags.append("archived")
        if item.summary:
            classes.append("summary")
            tags.append("compaction summary")
        if item.anchor:
            classes.append("anchor")
            tags.append("match")
        tag_html = "".join(f'<span class="tag">{_h(t)}</span>' for t in tags)
        when = f" · {_h(item.when)}" if item.when else ""
        out.append(
            f'<article class="{" ".join(classes)}"><header>#{item.index} '
            f"<b>{_h(item.role)}</b>{when}{tag_html}</header><pre>{_h(item.content)}</pre>"
        )
        if item.tool:
            out.append(f"<pre>{_h(item.tool)}</pre>")
        out.append("</article>")
    out.append("</section>")
    return out


HTML_END = "</main></body></html>"


def _html_head(title: str, note: str) -> list[str]:
    head = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_h(title)}</title>",
        f"<style>{_CSS}</style></head><body><main>",
        f"<h1>{_h(title)}</h1>",
    ]
    if note:
        head.append(f'<p class="note">{_h(note)}</p>')
    return head


def _html_document(title: str, blocks: Sequence[_Block], note: str) -> str:
    head = _html_head(title, note)
    body: list[str] = []
    for block in blocks:
        body += _html_block(block)
    return "\n".join([*head, *body, HTML_END]) + "\n"


def _note(redactor: Redactor | None) -> str:
    if redactor is None:
        return ""
    return f"Redacted: {redactor.total} secret(s) and email address(es) replaced."


def _render(title: str, blocks: Sequence[_Block], fmt: str, redactor: Redactor | None) -> Rendered:
    note = _note(redactor)
    if fmt == "md":
        text = _md_document(title, blocks, note)
    elif fmt == "html":
        text = _html_document(title, blocks, note)
    else:
        raise PortableError(f"unknown format {fmt!r} (expected md or html)")
    return Rendered(text, dict(redactor.counts) if redactor is not None else {})


def sessions_title(first: str, count: int) -> str:
    """The title of a human export of ``count`` sessions (``first``: the first one's)."""
    return first if count == 1 else f"{count} sessions"


def render_sessions(
    sessions: Sequence[JSONDict], fmt: str, *, redact: bool = False, title: str | None = None
) -> Rendered:
    """Markdown (``fmt="md"``) or self-contained HTML (``"html"``) of stored session dicts."""
    redactor = Redactor() if redact else None
    clean = _Text(redactor)
    blocks = [_session_block(s, clean) for s in sessions]
    if title is None:
        title = sessions_title(blocks[0].title if blocks else "", len(blocks))
    return _render(clean(title, one_line=True), blocks, fmt, redactor)


def render_hits(
    hits: Sequence[SessionHit], fmt: str, *, query: str = "", redact: bool = False
) -> Rendered:
    """Markdown or HTML of search hits, each with its window of messages in context."""
    redactor = Redactor() if redact else None
    clean = _Text(redactor)
    blocks = [_hit_block(h, clean) for h in hits]
    title = f"Search: {query}" if query else "Search results"
    return _render(clean(title, one_line=True), blocks, fmt, redactor)
