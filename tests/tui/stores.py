"""Small session stores with fixed timestamps, written as PraisonAI writes them."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from session_browser.core.paths import safe_id

NOW = datetime(2026, 2, 1, 12, 0, tzinfo=UTC)
BASE = datetime(2026, 1, 10, 9, 0, tzinfo=UTC).timestamp()
HOUR = 3600.0
DAY = 86400.0

HOSTILE_TITLE = "[@click=app.quit]x[/x] \x1b[31mred\x1b[0m \x1b]8;;http://evil\x07link \u202eabc"
HOSTILE_ID = "evil[/x]\u202eid"
HOSTILE_BODY = (
    "[@click=app.quit]click me[/] and [/x] and [bold]bold[/bold]\n"
    "\x1b[2J\x1b]0;pwned\x07 clear screen attempt \u200f rtl mark \x07bell needle-hostile"
)


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat()


def _msg(role: str, content: str, ts: float, **meta: Any) -> dict[str, Any]:
    return {"role": role, "content": content, "timestamp": ts, "metadata": meta}


def _session(
    session_id: str,
    messages: list[dict[str, Any]],
    *,
    archived: list[dict[str, Any]] | None = None,
    title: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    stamps = [m["timestamp"] for m in (archived or []) + messages]
    meta: dict[str, Any] = {}
    if title is not None:
        meta["title"] = title
    meta.update(extra.pop("metadata", {}))
    data: dict[str, Any] = {
        "session_id": session_id,
        "messages": messages,
        "created_at": _iso(min(stamps)),
        "updated_at": _iso(max(stamps)),
        "agent_name": None,
        "user_id": None,
        "metadata": meta,
        "gateway_session_id": None,
        "agent_id": None,
        "runtime_state": {},
        "archived_messages": archived or [],
    }
    data.update(extra)
    return data


def conversation(
    start: float, turns: list[tuple[str, str]], gap: float = 2 * HOUR
) -> list[dict[str, Any]]:
    """Turns spaced ``gap`` apart (slow enough never to look automated)."""
    return [_msg(role, text, start + i * gap) for i, (role, text) in enumerate(turns)]


def sessions() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    out.append(
        _session(
            "billing-plan",
            conversation(
                BASE,
                [
                    ("user", "We need to move billing off Stripe to Chargefox. Where to start?"),
                    ("assistant", "Inventory every place that talks to Stripe first."),
                    ("user", "What about the card data export?"),
                    ("assistant", "Ask Stripe for a PCI card export to Chargefox now."),
                    ("user", "Decision: dual-run for two weeks, then cut over on March 3."),
                    ("assistant", "Agreed: dual-run, cut-over March 3, rollback plan ready."),
                ],
            ),
            title="Billing migration: Stripe to Chargefox",
        )
    )
    archived = conversation(
        BASE + 2 * DAY,
        [
            ("user", "Set the log retention policy to 30 days for the events table."),
            ("assistant", "Retention set: 30 days, partitions dropped nightly."),
            ("user", "And the index on tenant_id?"),
            ("assistant", "Added a partial index on (tenant_id, created_at)."),
        ],
    )
    summary = _msg(
        "system",
        "[Session Summary] Retention is 30 days; tenant index added.",
        BASE + 2 * DAY + 9 * HOUR,
        compaction=True,
    )
    active = conversation(
        BASE + 2 * DAY + 10 * HOUR,
        [
            ("user", "Now the slow query on the events page."),
            (
                "assistant",
                "EXPLAIN shows a seq scan; the new index is not used.\n"
                "Seq Scan on events  (cost=0.00..18334.00 rows=12 width=64)\n"
                "  Filter: (tenant_id = 42)",
            ),
            ("user", "Fixed after ANALYZE. Thanks."),
            ("assistant", "Good: plan now uses the index."),
        ],
    )
    out.append(
        _session(
            "pg-tuning",
            [summary, *active],
            archived=archived,
            title="Postgres events tuning",
            last_compaction={
                "summary": "Retention is 30 days; tenant index added.",
                "message_index": 0,
                "role": "system",
                "tokens_before": 900,
                "tokens_after": 120,
                "timestamp": BASE + 2 * DAY + 9 * HOUR,
                "metadata": {},
            },
        )
    )
    out.append(
        _session(
            "nightly-audit-412",
            conversation(
                BASE + 5 * DAY,
                [
                    ("user", "[scheduled] nightly audit: check billing-exports dependencies"),
                    ("assistant", "No vulnerable packages in billing-exports."),
                ],
                gap=2.0,
            ),
            title="nightly dependency audit",
            source="cron",
        )
    )
    for n in (1, 2):
        out.append(
            _session(
                f"jobs-temporal-{n}",
                conversation(
                    BASE + (6 + n) * DAY,
                    [
                        ("user", f"Temporal migration part {n}: the invoice workflow."),
                        ("assistant", f"Part {n}: invoice workflow ported to Temporal."),
                    ],
                ),
                title=f"Background jobs to Temporal (part {n})",
                metadata={"lineage_id": "jobs-temporal"},
            )
        )
    out.append(
        _session(
            HOSTILE_ID,
            conversation(
                BASE + 9 * DAY, [("user", HOSTILE_BODY), ("assistant", "[/x] reply " + "\x1b[1m")]
            ),
            title=HOSTILE_TITLE,
        )
    )
    return out


def build_store(root: Path, *, hostile: bool = True) -> Path:
    """Write the sessions into ``root/sessions`` (PraisonAI's format); returns the dir."""
    store = root / "sessions"
    store.mkdir(parents=True, exist_ok=True)
    for data in sessions():
        if not hostile and data["session_id"] == HOSTILE_ID:
            continue
        path = store / f"{safe_id(data['session_id'])}.json"
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    return store


def long_session(root: Path, count: int) -> Path:
    """One session of ``count`` messages (half archived), one an hour."""
    store = root / "sessions"
    store.mkdir(parents=True, exist_ok=True)
    half = count // 2
    turns = [
        ("user" if i % 2 == 0 else "assistant", f"message {i} " + ("lorem ipsum " * (i % 7)))
        for i in range(count)
    ]
    msgs = conversation(BASE, turns, gap=HOUR)
    data = _session("long", msgs[half:], archived=msgs[:half], title="A long session")
    (store / "long.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    return store


def snapshot_files(store: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file under ``store``: bytes, inode and mode (to prove browsing wrote nothing)."""
    out: dict[str, tuple[bytes, int, int]] = {}
    for path in sorted(store.rglob("*")):
        st = path.stat()
        out[str(path.relative_to(store))] = (
            path.read_bytes() if path.is_file() else b"",
            st.st_ino,
            st.st_mode,
        )
    return out
