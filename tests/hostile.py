"""Hostile session files: one of each kind that has broken a reader, for any test to use.

Each writer puts one bad file into a store beside whatever good sessions the test made,
and returns the session id the file claims. The bytes are written raw (not through our
serialiser), exactly as another program would leave them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

# A word the good sessions of a hostile-store test can share with the bad ones, so a search
# for it touches every file.
SHARED_WORD = "marmalade"

LONE_SURROGATE = "cut emoji \\ud83d"  # JSON text: a high surrogate with no low one after it
HUGE_INT = "1" + "0" * 400  # JSON text: an integer of 401 digits
EARLY_DATE = "0001-01-01T00:00:00+14:00"
LATE_DATE = "9999-12-31T23:59:59-14:00"
# Terminal escapes, Rich markup, bidi marks and a line separator inside one text.
NASTY_TEXT = (
    "[@click=app.quit]x[/] \x1b[31mred\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07 "
    "\u202egnp.exe\u202c \u200eltr\u200f \u2028sep \x07bell \x9bC1"
)


def _session_json(
    sid: str,
    *,
    content: str = f'"{SHARED_WORD} from a hostile file"',
    timestamp: str = "1767225600.0",
    created_at: str = '"2026-01-01T00:00:00+00:00"',
    updated_at: str = '"2026-01-01T00:00:00+00:00"',
    title: str | None = None,
) -> bytes:
    """A session file's JSON text with the given raw JSON fragments spliced in."""
    meta = "{}" if title is None else '{"title": ' + title + "}"
    text = (
        "{\n"
        f'  "session_id": {json.dumps(sid)},\n'
        '  "messages": [\n'
        '    {"role": "user", "content": ' + content + ", "
        '"timestamp": ' + timestamp + ', "metadata": {}},\n'
        '    {"role": "assistant", "content": "a reply", "timestamp": 1767225660.0, '
        '"metadata": {}}\n'
        "  ],\n"
        f'  "created_at": {created_at},\n'
        f'  "updated_at": {updated_at},\n'
        '  "agent_name": null,\n'
        '  "user_id": null,\n'
        f'  "metadata": {meta}\n'
        "}\n"
    )
    return text.encode("utf-8")


def _write(store: Path, sid: str, raw: bytes) -> str:
    store.mkdir(parents=True, exist_ok=True)
    (store / f"{sid}.json").write_bytes(raw)
    return sid


def lone_surrogate(store: Path) -> str:
    """Content and title hold a lone surrogate escape (what JavaScript writes when it cuts
    an emoji in half)."""
    sid = "hostile-surrogate"
    text = f'"{SHARED_WORD} {LONE_SURROGATE} and \\udc00 too"'
    return _write(store, sid, _session_json(sid, content=text, title=f'"{LONE_SURROGATE}"'))


def huge_int(store: Path) -> str:
    """A message timestamp (and ``created_at``) that is an integer of hundreds of digits."""
    sid = "hostile-huge-int"
    return _write(store, sid, _session_json(sid, timestamp=HUGE_INT, created_at=HUGE_INT))


def early_date(store: Path) -> str:
    """``created_at``/``updated_at`` at the very start of the date range, east of UTC."""
    sid = "hostile-early-date"
    date = json.dumps(EARLY_DATE)
    return _write(store, sid, _session_json(sid, created_at=date, updated_at=date))


def late_date(store: Path) -> str:
    """``created_at``/``updated_at`` at the very end of the date range, west of UTC."""
    sid = "hostile-late-date"
    date = json.dumps(LATE_DATE)
    return _write(store, sid, _session_json(sid, created_at=date, updated_at=date))


def nested(depth: int) -> str:
    """A JSON content value nested ``depth`` levels deep, with the shared word at the bottom."""
    return '[{"type": "text", "text": "' + SHARED_WORD + ' nested", "deep": ' + (
        "[" * depth
    ) + '"bottom"' + ("]" * depth) + "}]"


def deep_800(store: Path) -> str:
    """Content nested 800 levels deep (parses; breaks naive recursion)."""
    sid = "hostile-deep-800"
    return _write(store, sid, _session_json(sid, content=nested(800)))


def deep_980(store: Path) -> str:
    """Content nested about 980 levels deep (at the edge of the JSON parsers' limits)."""
    sid = "hostile-deep-980"
    return _write(store, sid, _session_json(sid, content=nested(980)))


def nasty_text(store: Path) -> str:
    """Markup, terminal escapes, bidi marks and U+2028 in the content, the title and the
    string timestamp."""
    sid = "hostile-nasty-text"
    text = json.dumps(f"{SHARED_WORD} {NASTY_TEXT}", ensure_ascii=False)
    return _write(
        store,
        sid,
        _session_json(sid, content=text, title=text, timestamp=json.dumps(NASTY_TEXT)),
    )


def absurd_numbers(store: Path) -> str:
    """Floats and ints that are out of every range: ``1e308``, negative epochs, ``NaN``."""
    sid = "hostile-absurd-numbers"
    raw = _session_json(sid, timestamp="1e308").replace(
        b'"timestamp": 1767225660.0', b'"timestamp": NaN'
    )
    raw = raw.replace(b'"created_at": "2026', b'"created_at": -62135596801, "x": "2026')
    return _write(store, sid, raw)


def big_message(store: Path, size: int = 50 << 20) -> str:
    """One message of ``"ab ab ab ..."`` of about ``size`` bytes (whitespace everywhere)."""
    sid = "hostile-big-message"
    body = "ab " * (size // 3)
    return _write(store, sid, _session_json(sid, content=json.dumps(f"{SHARED_WORD} {body}")))


# Every small kind: a store with one of each plus good sessions must work for the good ones.
KINDS: dict[str, Callable[[Path], str]] = {
    "lone_surrogate": lone_surrogate,
    "huge_int": huge_int,
    "early_date": early_date,
    "late_date": late_date,
    "deep_800": deep_800,
    "deep_980": deep_980,
    "nasty_text": nasty_text,
    "absurd_numbers": absurd_numbers,
}


def write_all(store: Path) -> dict[str, str]:
    """One file of every small hostile kind in ``store``: kind -> the session id it claims."""
    return {kind: writer(store) for kind, writer in KINDS.items()}


def write_good(store: Path, count: int = 3) -> list[str]:
    """``count`` ordinary sessions that mention :data:`SHARED_WORD`."""
    ids = []
    for n in range(count):
        sid = f"good-{n}"
        data: dict[str, Any] = {
            "session_id": sid,
            "messages": [
                {
                    "role": "user",
                    "content": f"good session {n} about {SHARED_WORD} and billing",
                    "timestamp": 1767225600.0 + n,
                    "metadata": {},
                },
                {
                    "role": "assistant",
                    "content": f"reply {n}",
                    "timestamp": 1767225601.0 + n,
                    "metadata": {},
                },
            ],
            "created_at": "2026-01-01T00:00:00+00:00",
            "updated_at": f"2026-01-0{n + 2}T00:00:00+00:00",
            "agent_name": None,
            "user_id": None,
            "metadata": {},
        }
        store.mkdir(parents=True, exist_ok=True)
        (store / f"{sid}.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
        ids.append(sid)
    return ids


def pi_lines(kind: str) -> list[str]:
    """A Pi JSONL session (as raw lines) carrying one hostile kind."""
    header = (
        '{"type":"session","version":3,"id":"pi-' + kind + '","timestamp":'
        '"2026-01-01T00:00:00.000Z","cwd":"/work/proj"}'
    )
    ts = '"2026-01-01T00:00:01.000Z"'
    text = f'"{SHARED_WORD} pi {kind}"'
    if kind == "lone_surrogate":
        text = f'"{SHARED_WORD} {LONE_SURROGATE}"'
    elif kind == "huge_int":
        ts = HUGE_INT
    elif kind == "early_date":
        ts = json.dumps(EARLY_DATE)
    elif kind == "late_date":
        ts = json.dumps(LATE_DATE)
    elif kind == "nasty_text":
        text = json.dumps(f"{SHARED_WORD} {NASTY_TEXT}", ensure_ascii=False)
    content = '[{"type":"text","text":' + text + "}]"
    if kind.startswith("deep_"):
        content = nested(int(kind.split("_")[1]))
    user = (
        '{"type":"message","id":"u1","parentId":null,"timestamp":' + ts + ',"message":'
        '{"role":"user","content":' + content + ',"timestamp":1767225601000}}'
    )
    reply = (
        '{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z",'
        '"message":{"role":"assistant","content":[{"type":"text","text":"ok"}],'
        '"timestamp":1767225602000}}'
    )
    return [header, user, reply]


def write_pi_all(pi_dir: Path) -> dict[str, Path]:
    """One Pi session file per small hostile kind under ``pi_dir/--work-proj--/``."""
    folder = pi_dir / "--work-proj--"
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for kind in KINDS:
        if kind == "absurd_numbers":
            continue
        path = folder / f"2026-01-01T00-00-00-000Z_pi-{kind}.jsonl"
        path.write_text("\n".join(pi_lines(kind)) + "\n", encoding="utf-8")
        out[kind] = path
    return out
