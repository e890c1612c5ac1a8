"""A small PraisonAI store for the team-index tests (the same one on both engines)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

T0 = 1_760_000_000.0
HOUR = 3600.0

SESSIONS: list[tuple[str, list[str], dict[str, Any]]] = [
    (
        "billing",
        [
            "The billing migration failed on invoice totals",
            "Rerun the billing migration with the new schema",
            "Done: invoices reconciled",
        ],
        {"agent_name": "Planner"},
    ),
    (
        "deploy",
        [
            "How do I deploy the service to staging?",
            "Use the deploy script, then check the health endpoint",
            "Deploy succeeded",
        ],
        {"metadata": {"cwd": "/home/a/app"}},
    ),
    ("cafe", ["Notes from the Café meeting about résumé parsing", "Résumé parser uses a CRF"], {}),
    (
        "postgres",
        [
            "Postgres vacuum is slow on the events table",
            "Try autovacuum tuning and partitioning the events table",
            "Partitioning by month fixed it",
        ],
        {},
    ),
    (
        "kafka",
        [
            "Kafka consumer lag keeps growing",
            "Increase partitions and consumers",
            "The lag is back to zero",
        ],
        {"metadata": {"source": "scheduled"}},
    ),
    (
        "mixed",
        ["billing question about the deploy pipeline", "The pipeline bills per minute"],
        {"agent_name": "coder"},
    ),
    (
        "archive",
        ["Rotate the TLS certificates before expiry", "Certificates rotated"],
        {"archived": ["An old talk about certificate pinning and billing"]},
    ),
    (
        "python",
        ["Python asyncio gather versus TaskGroup", "TaskGroup cancels siblings on error"],
        {},
    ),
    (
        "typo",
        [
            "Kubernetes ingress returns 502 behind the load balancer",
            "Check the readiness probe of the ingress backend",
        ],
        {},
    ),
    (
        "secret",
        ["my key is sk-abcdefghijklmnopqrstuvwx1234 and mail bob@example.com", "Never paste keys"],
        {},
    ),
]


def write_store(root: Path, *, start: float = T0, only: list[str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for n, (sid, texts, extra) in enumerate(SESSIONS):
        if only is not None and sid not in only:
            continue
        put(root, sid, texts, start=start + n * 24 * HOUR, **extra)
    return root


def put(
    d: Path,
    sid: str,
    texts: list[str],
    *,
    start: float = T0,
    archived: list[str] | None = None,
    **top: Any,
) -> Path:
    roles = ["user", "assistant"]
    arch = archived or []

    def msg(role: str, text: str, ts: float) -> dict[str, Any]:
        return {"role": role, "content": text, "metadata": {}, "timestamp": ts}

    data: dict[str, Any] = {
        "session_id": sid,
        "messages": [
            msg(roles[i % 2], t, start + (len(arch) + i) * HOUR) for i, t in enumerate(texts)
        ],
        "archived_messages": [msg(roles[i % 2], t, start + i * HOUR) for i, t in enumerate(arch)],
        "created_at": "2025-12-01T00:00:00+00:00",
        "updated_at": "2026-01-01T00:00:00+00:00",
        "agent_name": None,
        "user_id": None,
        "metadata": {},
    }
    data.update(top)
    path = d / f"{sid}.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path
