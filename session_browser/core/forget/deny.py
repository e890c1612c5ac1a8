"""The denylist: what was forgotten on purpose stays forgotten.

``<data dir>/forget/denied.json`` (0600) names the sessions forgotten by id and the texts
forgotten by content. A text is never written down: only salted SHA-256 hashes of it (as
typed, and as JSON writes it inside a string) and its length. The index, the vault and the
team push ask :func:`screen` (or :func:`screen_bytes`) about every session they take in: a
denied session is left out, a denied text leaves out the session holding it, or (an entry
made with ``--redact``) is replaced by :data:`REDACTED` in what is kept.

A hash cannot be searched for, so a text is looked for where a text can start (at the start
of a word, or at any character that is not a letter, digit or ``_``), and only in what holds
every one of its words (their hashes and lengths are kept too: most sessions are cleared by
one pass of a regular expression). So the denylist recognises a text standing as whole
words: one glued to other letters or digits (``xsk-live-...``) is not recognised by it;
``forget --text`` itself finds it anywhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..files import atomic_write_bytes, session_id_from_bytes
from ..model import JSONDict
from ..paths import data_dir, ensure_private_dir
from ..redact import Redactor
from ..settings import load_settings, settings_path

REDACTED = "[REDACTED:forgotten]"
MAX_FILE_BYTES = 4 << 20
_STARTS = re.compile(r"(?<!\w)(?=\w)|(?=\W)")
_WORD = re.compile(r"\w+")


def forget_dir() -> Path:
    """``<data dir>/forget``: the denylist and the log."""
    return data_dir() / "forget"


def deny_path() -> Path:
    return forget_dir() / "denied.json"


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def variants(text: str) -> list[str]:
    """``text`` as typed and as it sits inside a JSON string (when that differs)."""
    escaped = json.dumps(text, ensure_ascii=False)[1:-1]
    ascii_escaped = json.dumps(text)[1:-1]
    return list(dict.fromkeys([text, escaped, ascii_escaped]))


@dataclass
class Entry:
    """One denied session (``session``: its id) or text (``hashes``: never the text)."""

    id: str
    kind: str  # "session" or "text"
    at: str
    session: str | None = None
    hashes: dict[str, int] = field(default_factory=dict)  # hash -> length
    redact: bool = False
    # per form of the text (as typed, as JSON writes it): its words' hashes and lengths
    words: list[list[tuple[str, int]]] = field(default_factory=list)

    def as_dict(self) -> JSONDict:
        out: JSONDict = {"id": self.id, "kind": self.kind, "at": self.at}
        if self.kind == "session":
            out["session_id"] = self.session
        else:
            out["hashes"] = self.hashes
            out["redact"] = self.redact
            out["words"] = [[list(w) for w in form] for form in self.words]
        return out


@dataclass
class Denylist:
    """The denylist as read (see the module doc)."""

    salt: str
    entries: list[Entry]

    def __post_init__(self) -> None:
        self.sessions = {e.session for e in self.entries if e.kind == "session"}
        self._by_len: dict[int, dict[str, bool]] = {}
        # every form of every denied text as the hashes of its words (None: a text without
        # words, or an entry written before words were kept: no quick test for it)
        self._forms: list[list[tuple[str, int]]] | None = []
        for e in self.entries:
            if e.kind == "text":
                for digest, length in e.hashes.items():
                    self._by_len.setdefault(length, {})[digest] = e.redact
                if self._forms is not None and e.words and all(e.words):
                    self._forms.extend(e.words)
                else:
                    self._forms = None
        self._word_lens = (
            {n for form in self._forms for _h, n in form} if self._forms is not None else set()
        )

    def may_hold(self, text: str) -> bool:
        """False when ``text`` surely holds no denied text: some word of each form of each
        is missing from it (only words of the lengths they have are hashed: most text is
        decided by one pass of a regular expression)."""
        if self._forms is None:
            return True
        if not self._forms:
            return False
        found = {self.digest(w) for w in set(_WORD.findall(text)) if len(w) in self._word_lens}
        return any(all(h in found for h, _n in form) for form in self._forms)

    @property
    def has_texts(self) -> bool:
        return bool(self._by_len)

    def digest(self, text: str) -> str:
        return hashlib.sha256((self.salt + text).encode("utf-8", "surrogatepass")).hexdigest()

    def spans(self, text: str) -> list[tuple[int, int, bool]]:
        """Where denied texts are in ``text``: (start, end, redact) each, not overlapping."""
        if not self._by_len or len(text) < min(self._by_len):
            return []
        found: list[tuple[int, int, bool]] = []
        end = 0
        n = len(text)
        for m in _STARTS.finditer(text):
            i = m.start()
            if i < end:
                continue
            for length, hashes in self._by_len.items():
                if i + length <= n:
                    redact = hashes.get(self.digest(text[i : i + length]))
                    if redact is not None:
                        found.append((i, i + length, redact))
                        end = i + length
                        break
        return found

    def screen_text(self, text: str) -> str | None:
        """``text`` with its redacted texts replaced; None when it holds one forgotten whole."""
        spans = self.spans(text)
        if not spans:
            return text
        if not all(redact for _s, _e, redact in spans):
            return None
        out, last = [], 0
        for start, end, _r in spans:
            out.append(text[last:start])
            out.append(REDACTED)
            last = end
        out.append(text[last:])
        return "".join(out)


class _Drop(Exception):
    pass


def _walk(value: Any, deny: Denylist) -> Any:
    if isinstance(value, str):
        screened = deny.screen_text(value)
        if screened is None:
            raise _Drop
        return screened
    if isinstance(value, list):
        return [_walk(v, deny) for v in value]
    if isinstance(value, dict):
        return {k: _walk(v, deny) for k, v in value.items()}
    return value


def _strings(value: Any) -> list[str]:
    """Every string in a JSON value (keys too), iteratively."""
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            out.extend(k for k in item if isinstance(k, str))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


_cache_lock = threading.Lock()
_cache: tuple[tuple[str, int, int], Denylist] | None = None


def load() -> Denylist:
    """The denylist (empty when there is none; a file that cannot be read raises
    ``OSError``/``ValueError``: forgetting never goes on over a denylist it cannot read)."""
    global _cache
    path = deny_path()
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return Denylist(salt="", entries=[])
    key = (str(path), st.st_mtime_ns, st.st_size)
    with _cache_lock:
        if _cache is not None and _cache[0] == key:
            return _cache[1]
    if st.st_size > MAX_FILE_BYTES:
        raise ValueError(f"{path} is bigger than {MAX_FILE_BYTES >> 20} MiB")
    raw = json.loads(path.read_bytes())
    if not isinstance(raw, dict) or not isinstance(raw.get("entries"), list):
        raise ValueError(f"{path} is not a denylist")
    entries = []
    for item in raw["entries"]:
        if not isinstance(item, dict):
            continue
        found = item.get("hashes")
        hashes: dict[str, Any] = found if isinstance(found, dict) else {}
        entries.append(
            Entry(
                id=str(item.get("id")),
                kind=str(item.get("kind")),
                at=str(item.get("at")),
                session=item.get("session_id") if item.get("kind") == "session" else None,
                hashes={str(k): int(v) for k, v in hashes.items()},
                redact=bool(item.get("redact")),
                words=_words(item.get("words")),
            )
        )
    deny = Denylist(salt=str(raw.get("salt") or ""), entries=entries)
    with _cache_lock:
        _cache = (key, deny)
    return deny


def _words(value: Any) -> list[list[tuple[str, int]]]:
    """The ``words`` of an entry as written ([] when missing or not as written)."""
    if not isinstance(value, list):
        return []
    out: list[list[tuple[str, int]]] = []
    for form in value:
        if not isinstance(form, list):
            return []
        try:
            out.append([(str(h), int(n)) for h, n in form])
        except (TypeError, ValueError):
            return []
    return out


def _quiet_load() -> Denylist | None:
    """The denylist for the hooks (None: empty, or unreadable, reported by ``forget``)."""
    try:
        deny = load()
    except (OSError, ValueError):
        return None
    return deny if deny.entries else None


def _save(deny: Denylist) -> None:
    ensure_private_dir(forget_dir())
    payload = {"salt": deny.salt, "entries": [e.as_dict() for e in deny.entries]}
    atomic_write_bytes(deny_path(), json.dumps(payload, indent=1).encode("utf-8"))


def _writable() -> Denylist:
    deny = load()
    if not deny.salt:
        deny = Denylist(salt=os.urandom(16).hex(), entries=list(deny.entries))
    return deny


def _new_id() -> str:
    return "d" + os.urandom(4).hex()


def deny_sessions(session_ids: list[str]) -> list[Entry]:
    """Deny ``session_ids`` (an id denied already is not added again); the new entries."""
    deny = _writable()
    added = [
        Entry(_new_id(), "session", now_iso(), session=sid)
        for sid in dict.fromkeys(session_ids)
        if sid not in deny.sessions
    ]
    if added:
        _save(Denylist(deny.salt, [*deny.entries, *added]))
    return added


def deny_text(text: str, *, redact: bool) -> Entry:
    """Deny ``text`` (its hashes only are written); the entry."""
    deny = _writable()
    forms = variants(text)
    hashes = {deny.digest(v): len(v) for v in forms}
    for e in deny.entries:
        if e.kind == "text" and e.hashes == hashes and e.redact == redact:
            return e
    words = [sorted({(deny.digest(w), len(w)) for w in _WORD.findall(v)}) for v in forms]
    entry = Entry(_new_id(), "text", now_iso(), hashes=hashes, redact=redact, words=words)
    _save(Denylist(deny.salt, [*deny.entries, entry]))
    return entry


def undo_deny(entry_id: str) -> Entry | None:
    """Take entry ``entry_id`` (an entry id, or a denied session id) off the denylist; the
    entry taken off, None when there is none."""
    deny = load()
    gone = [e for e in deny.entries if entry_id in (e.id, e.session)]
    if not gone:
        return None
    _save(Denylist(deny.salt, [e for e in deny.entries if e not in gone]))
    return gone[0]


# ---------------------------------------------------------------------- the hooks


def screens() -> bool:
    """Whether :func:`screen` and :func:`screen_bytes` may change or refuse anything now (a
    denylist with entries, or ``redact_kept``): when not, a session is taken in as it is."""
    return _quiet_load() is not None or redact_kept()


def screen(session_id: str, data: JSONDict) -> JSONDict | None:
    """What may be taken in of session ``session_id`` (``data``: its dict): None when it is
    denied, else ``data`` (itself when nothing is denied or redacted in it; a redacted copy
    otherwise: the denylist's texts, and with ``redact_kept`` every likely secret)."""
    deny = _quiet_load()
    out = data
    if deny is not None:
        if session_id in deny.sessions or str(data.get("session_id") or "") in deny.sessions:
            return None
        if deny.has_texts and deny.may_hold("\n".join(_strings(data))):
            try:
                out = _walk(data, deny)
            except _Drop:
                return None
    if redact_kept():
        out = Redactor().value(out)
    return data if out == data else out


def keeps(text: str) -> bool:
    """Whether a cache of ours may keep ``text`` as it is: no denied text in it, and with
    ``redact_kept`` no likely secret (a cache that may not keep a text keeps nothing of
    it; what it would have saved is read again)."""
    deny = _quiet_load()
    if deny is not None and deny.has_texts and deny.may_hold(text) and deny.spans(text):
        return False
    return not redact_kept() or Redactor().text(text) == text


def screen_bytes(session_id: str, data: bytes) -> bytes | None:
    """:func:`screen` for the bytes of a session file (the vault's copies)."""
    deny = _quiet_load()
    out = data
    if deny is not None:
        if session_id in deny.sessions:
            return None
        text = data.decode("utf-8", "surrogateescape") if deny.has_texts else ""
        if deny.has_texts and deny.may_hold(text):
            screened = deny.screen_text(text)
            if screened is None:
                return None
            if screened != text:
                out = screened.encode("utf-8", "surrogateescape")
    if redact_kept():
        out = redact_file(out)
    return data if out == data else out


def redact_file(data: bytes) -> bytes:
    """The bytes of a session file (one JSON document, or JSON lines) with every likely
    secret redacted by the export's rules, each value inside its JSON string (so the copy
    stays readable); a line that is not JSON is left as it is."""
    try:
        whole = json.loads(data)
    except ValueError:
        whole = None
    if isinstance(whole, dict):
        red = Redactor().value(whole)
        if red == whole:
            return data
        if b"\n" in data.strip():  # a JSON file as PraisonAI writes it
            return json.dumps(red, ensure_ascii=False, indent=2).encode("utf-8")
        end = data[len(data.rstrip()) :]  # one JSON line: stays one line
        return json.dumps(red, ensure_ascii=False).encode("utf-8") + end
    lines = data.split(b"\n")
    changed = False
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        red = Redactor().value(obj)
        if red != obj:
            lines[i] = json.dumps(red, ensure_ascii=False).encode("utf-8")
            changed = True
    return b"\n".join(lines) if changed else data


_settings_cache: tuple[tuple[int, int], bool] | None = None
_BLOCK = 8 << 20


def redact_kept() -> bool:
    """Whether ``settings.json`` says ``"redact_kept": true`` (read again when it changes)."""
    global _settings_cache
    path = settings_path()
    try:
        st = os.stat(path)
    except OSError:
        return False
    key = (st.st_mtime_ns, st.st_size)
    if _settings_cache is not None and _settings_cache[0] == key:
        return _settings_cache[1]
    value = load_settings(path).redact_kept
    _settings_cache = (key, value)
    return value


def needs_bytes() -> bool:
    """Whether a keep must look at a file's bytes (a denied text, or ``redact_kept``)."""
    deny = _quiet_load()
    return (deny is not None and deny.has_texts) or redact_kept()


def denied_file(path: Path, session_id: str | None = None) -> bool:
    """Whether the file at ``path`` (a file of session ``session_id`` when known) must not be
    copied into our own dirs (the trash, the undo journal): its session is denied (by that
    id, by the file's name, or by the id written near its start), or it holds a denied text,
    forgotten whole or redacted. ``redact_kept`` plays no part. Read in blocks (memory stays
    bounded); a symlink is judged by its name alone, never followed."""
    deny = _quiet_load()
    if deny is None:
        return False
    if {session_id, path.stem, path.name.split(".")[0]} & deny.sessions:
        return True
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    overlap = 4 * max(deny._by_len, default=0)  # a denied text's bytes, at most
    tail = b""
    first = True
    with os.fdopen(fd, "rb") as fh:
        while block := fh.read(_BLOCK):
            if first and session_id_from_bytes(block) in deny.sessions:
                return True
            first = False
            if deny.has_texts:
                text = (tail + block).decode("utf-8", "surrogateescape")
                if deny.may_hold(text) and deny.spans(text):
                    return True
                tail = (tail + block)[-overlap:] if overlap else b""
    return False


def denied_session(session_id: str) -> bool:
    deny = _quiet_load()
    return deny is not None and session_id in deny.sessions
