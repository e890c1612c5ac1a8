"""What a forget will erase where (the dry run) and erasing it (``--yes``).

One plan names, for sessions by id or for every session holding a text: the indexed files
of each local index, the vault's files and versions (with their part files), our trash and
undo-journal copies, the query history and saved searches naming them, the team index's
copies (when one is configured or named), and with ``delete_file`` the PraisonAI session
files themselves (never a read-only source's). Carrying it out erases each of them, adds
the sessions (or the text's hashes) to the denylist so nothing takes them back in, and
writes one line to the forget log.
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..index import forget as index_forget
from ..model import JSONDict
from ..paths import session_file_name
from ..vault import compact
from ..vault.errors import VaultError
from ..vault.format import Version
from ..vault.store import Vault, default_vault_dir
from . import deny, ours
from .record import record

READ_ONLY = "is read-only to us (Claude Code, Codex and Pi keep their own files)"


class ForgetError(Exception):
    """What was asked cannot be done (the message says why)."""


@dataclass
class IndexHits:
    path: Path
    kind: str  # the source kind of the store indexed
    session_dir: str
    files: list[tuple[str, str]]  # (file, session id)


@dataclass
class Plan:
    """What :func:`carry_out` will erase (see the module doc); :meth:`lines` says it."""

    session_ids: list[str]
    text: str | None = None
    redact: bool = False
    indexes: list[IndexHits] = field(default_factory=list)
    vault_fids: list[int] = field(default_factory=list)
    vault_redact: list[Version] = field(default_factory=list)  # --redact: versions rewritten
    vault_versions: int = 0
    copies: list[Path] = field(default_factory=list)
    history: list[str] = field(default_factory=list)
    saved: list[str] = field(default_factory=list)
    team_url: str | None = None
    team: list[Any] = field(default_factory=list)  # pgindex.forget.TeamCopy
    files: list[Path] = field(default_factory=list)  # agent files to delete (PraisonAI)
    refused: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (
            self.indexes
            or self.vault_fids
            or self.vault_redact
            or self.copies
            or self.history
            or self.saved
            or self.team
            or self.files
        )

    def needles(self) -> ours.Needles:
        return ours.Needles(tuple(self.session_ids), (self.text,) if self.text else ())

    def stores(self) -> list[str]:
        out = [f"index {h.path.name}" for h in self.indexes]
        if self.vault_fids or self.vault_redact:
            out.append("vault")
        out += [f"{c.parent.name} {c.name}" for c in self.copies]
        if self.history:
            out.append("query history")
        if self.saved:
            out.append("saved searches")
        if self.team:
            out.append("team index")
        out += [f"session file {p}" for p in self.files]
        return out

    def lines(self) -> list[str]:
        """One line per place and what goes from it (no content is ever quoted)."""
        out: list[str] = []
        how = "text redacted in" if self.redact else "erased"
        for h in self.indexes:
            out.append(
                f"index {h.path} ({h.kind} store {h.session_dir}): {how} {len(h.files)} "
                "file(s): " + ", ".join(sorted({sid for _f, sid in h.files}))
            )
        if self.vault_redact:
            names = sorted({v.session_id for v in self.vault_redact})
            out.append(
                f"vault {default_vault_dir()}: text redacted in {len(self.vault_redact)} "
                f"version(s) of {', '.join(names)}, packs rewritten"
            )
        if self.vault_fids:
            out.append(
                f"vault {default_vault_dir()}: {len(self.vault_fids)} file(s), "
                f"{self.vault_versions} version(s), packs rewritten"
            )
        for c in self.copies:
            if c.parent.name == "journal":
                out.append(f"undo journal entry {c} (that action can no longer be undone)")
            else:
                out.append(f"trash folder {c}")
        if self.history:
            out.append(f"query history: {len(self.history)} quer(ies)")
        if self.saved:
            out.append(f"saved searches: {', '.join(self.saved)}")
        if self.team:
            by = sorted({f"{c.session_id} ({c.user}@{c.machine})" for c in self.team})
            out.append(f"team index: {len(self.team)} session(s): {', '.join(by)}")
        out += [f"session file {p} (deleted: --delete-file)" for p in self.files]
        return out


def _index_kind(db: sqlite3.Connection) -> tuple[str, str]:
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    states = sorted(t[: -len("_state")] for t in tables if t.endswith("_state"))
    row = db.execute("SELECT value FROM meta WHERE key='session_dir'").fetchone()
    return (states[0] if states else "praisonai"), (str(row[0]) if row else "?")


def plan(
    session_ids: list[str] | None = None,
    *,
    text: str | None = None,
    redact: bool = False,
    team_url: str | None = None,
    delete_file: bool = False,
) -> Plan:
    """What forgetting ``session_ids`` (or every session holding ``text``) will erase."""
    ids = list(dict.fromkeys(session_ids or []))
    if text is not None and not text.strip():
        raise ForgetError("--text needs a non-blank text")
    if not ids and text is None:
        raise ForgetError("name a session id or --text")
    if redact and text is None:
        raise ForgetError("--redact goes with --text")
    if redact and delete_file:
        raise ForgetError("--redact keeps the sessions: it does not go with --delete-file")
    try:
        deny.load()
    except (OSError, ValueError) as exc:
        raise ForgetError(f"the denylist cannot be read: {exc}") from exc
    out = Plan(ids, text=text, redact=redact, team_url=team_url)
    found_ids: dict[str, None] = dict.fromkeys(ids)
    for path in index_forget.index_files():
        db = index_forget.connect(path)
        if db is None:
            continue
        try:
            kind, session_dir = _index_kind(db)
            hits = index_forget.holding_ids(db, ids)
            if text is not None:
                hits += index_forget.holding_text(db, text)
        except sqlite3.Error as exc:
            raise ForgetError(f"the index {path} cannot be read: {exc}") from exc
        finally:
            db.close()
        hits = sorted(set(hits))
        if hits:
            out.indexes.append(IndexHits(path, kind, session_dir, hits))
            found_ids.update(dict.fromkeys(sid for _f, sid in hits))
    vault_root = default_vault_dir()
    if (vault_root / "catalog.sqlite").exists():
        try:
            with Vault(vault_root) as vault:
                if text is not None:
                    raw = ours.Needles(texts=(text,)).raw()
                    holding = compact.versions_holding(vault, raw)
                    for version in holding:
                        found_ids[compact.session_of(vault, version)] = None
                    if redact:
                        out.vault_redact = holding
                        out.vault_versions = len(holding)
                fids = [] if redact else compact.files_of_sessions(vault, list(found_ids))
                out.vault_fids = fids
                if fids:
                    marks = ",".join("?" * len(fids))
                    (out.vault_versions,) = vault._db.execute(
                        f"SELECT count(*) FROM versions WHERE fid IN ({marks})", fids
                    ).fetchone()
        except (VaultError, sqlite3.Error) as exc:
            raise ForgetError(f"the vault cannot be read: {exc}") from exc
    if team_url:
        from ..pgindex.forget import TeamIndex

        with TeamIndex(team_url) as team:
            copies = team.holding_ids(list(found_ids))
            if text is not None:
                copies += team.holding_text(text)
            seen: dict[int, Any] = {}
            for c in copies:
                seen.setdefault(c.sid, c)
            out.team = list(seen.values())
            found_ids.update(dict.fromkeys(c.session_id for c in out.team))
    out.session_ids = list(found_ids)
    needles = ours.Needles(tuple(out.session_ids), (text,) if text else ())
    out.copies = ours.copies(needles)
    out.history = ours.history_hits(needles)
    out.saved = ours.saved_hits(needles)
    if delete_file:
        _agent_files(out)
    return out


def _agent_files(out: Plan) -> None:
    """The PraisonAI files of the sessions (``--delete-file``); a read-only source's refused."""
    for hits in out.indexes:
        for file, sid in hits.files:
            if hits.kind != "praisonai":
                out.refused.append(
                    f"{sid}: its {hits.kind} file {Path(hits.session_dir) / file} {READ_ONLY}"
                    ": --delete-file leaves it"
                )
                continue
            path = Path(hits.session_dir) / session_file_name(sid)
            if path.exists() and path not in out.files:
                out.files.append(path)


def scrub_all() -> list[str]:
    """Scrub every local index (:func:`~..index.forget.scrub`): what a forget that found
    nothing left to erase still does, so one an open index held up is finished; the
    indexes still held up."""
    held: list[str] = []
    for path in index_forget.index_files():
        db = index_forget.connect(path)
        if db is None:
            continue
        try:
            if not index_forget.scrub(db):
                held.append(str(path))
        finally:
            db.close()
    return held


@dataclass
class Done:
    """What :func:`carry_out` erased."""

    lines: list[str]
    denied: list[str]
    stores: list[str]

    def as_dict(self) -> JSONDict:
        return {"erased": self.lines, "denied": self.denied, "stores": self.stores}


def carry_out(p: Plan) -> Done:
    """Erase everything ``p`` names, deny what it forgot, log it (see the module doc)."""
    done: list[str] = []
    # denied first: a pass that runs meanwhile takes nothing back in
    if p.text is not None:
        entry = deny.deny_text(p.text, redact=p.redact)
        denied = [entry.id]
        forget_ids = [] if p.redact else p.session_ids
    else:
        forget_ids = p.session_ids
        denied = []
    denied += [e.id for e in deny.deny_sessions(forget_ids)]
    texts = deny.variants(p.text) if p.text is not None else []
    for hits in p.indexes:
        db = index_forget.connect(hits.path)
        if db is None:
            continue
        try:
            if p.redact:
                files = [f for f, _sid in hits.files]
                n, scrubbed = index_forget.redact_text(db, texts, deny.REDACTED, files)
                line = f"index {hits.path}: text redacted in {n} row(s)"
            else:
                n, scrubbed = index_forget.delete_files(db, [f for f, _sid in hits.files])
                line = f"index {hits.path}: {n} session(s) removed"
            done.append(
                f"{line}, file vacuumed"
                if scrubbed
                else f"{line}; another process has it open, so its freed pages and WAL may "
                "still hold a copy until it closes: run this forget again then (it vacuums)"
            )
        finally:
            db.close()
    if p.vault_redact:
        pairs = [(t.encode("utf-8", "surrogatepass"), deny.REDACTED.encode()) for t in texts]
        with Vault(default_vault_dir()) as vault:
            redacted = compact.redact_versions(vault, p.vault_redact, pairs)
        done.append(
            f"vault: text redacted in {redacted.versions} version(s), "
            f"{redacted.packs_rewritten} pack(s) rewritten"
        )
    if p.vault_fids:
        with Vault(default_vault_dir()) as vault:
            dropped = compact.forget_files(vault, p.vault_fids)
        done.append(
            f"vault: {dropped.files} file(s), {dropped.versions} version(s) dropped, "
            f"{dropped.packs_rewritten} pack(s) rewritten"
        )
    for c in p.copies:
        ours.shred_tree(c)
        done.append(f"{c}: erased")
    needles = p.needles()
    if p.history:
        done.append(f"query history: {ours.forget_history(needles)} dropped")
    if p.saved:
        done.append(f"saved searches: {ours.forget_saved(needles)} dropped")
    if p.team and p.team_url:
        from ..pgindex.forget import TeamIndex

        with TeamIndex(p.team_url) as team:
            if p.redact:
                gone = team.redact(p.team, texts, deny.REDACTED)
                line = f"team index: text redacted in {gone.sessions} session(s)"
            else:
                gone = team.forget(p.team)
                line = f"team index: {gone.sessions} session(s) deleted"
        if gone.vacuumed:
            line += f"; VACUUM FULL of {', '.join(gone.vacuumed)}"
        if gone.not_vacuumed:
            line += (
                f"; not vacuumed (not the tables' owner): {', '.join(gone.not_vacuumed)}: "
                "the server keeps dead rows until its own vacuum"
            )
        done.append(line + "; the server may still hold copies in its WAL, replicas and backups")
    for path in p.files:
        from ..store import DefaultSessionStore

        sid = next(
            (s for h in p.indexes for f, s in h.files if path.name == session_file_name(s)), None
        )
        with contextlib.suppress(OSError):
            if sid is not None and DefaultSessionStore(path.parent).delete_session(sid):
                done.append(f"session file {path}: deleted")
    stores = p.stores()
    record(
        what="text" if p.text is not None else "session",
        session_ids=p.session_ids,
        stores=stores,
        mode="redact" if p.redact else "forget",
    )
    return Done(done, denied, stores)
