"""``doctor --secrets``: the sessions whose copies we keep hold likely secrets, found with the
export's redaction rules (:mod:`~..redact`) in the local indexes, the vault's versions and
the team index; counted by kind, never quoted. E-mail addresses are not counted (not
secrets; an export with ``--redact`` hides them)."""

from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import dataclass, field

from ..index import forget as index_forget
from ..redact import Redactor
from ..vault.errors import VaultError
from ..vault.store import Vault, default_vault_dir

NOT_SECRETS = frozenset({"email"})


def kinds_in(text: str) -> Counter[str]:
    """How many likely secrets of each kind ``text`` holds."""
    redactor = Redactor()
    redactor.text(text)
    return Counter({k: n for k, n in redactor.counts.items() if k not in NOT_SECRETS and n})


@dataclass
class Finding:
    """One session holding likely secrets: where we keep them and how many of each kind
    (the largest count of any one copy)."""

    session_id: str
    kinds: Counter[str] = field(default_factory=Counter)
    where: set[str] = field(default_factory=set)

    def add(self, where: str, kinds: Counter[str]) -> None:
        self.where.add(where)
        for kind, n in kinds.items():
            self.kinds[kind] = max(self.kinds[kind], n)


@dataclass
class Scan:
    findings: dict[str, Finding] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def add(self, session_id: str, where: str, kinds: Counter[str]) -> None:
        if kinds:
            self.findings.setdefault(session_id, Finding(session_id)).add(where, kinds)


def scan(team_url: str | None = None) -> Scan:
    """Every session we keep a copy of that holds likely secrets (see the module doc)."""
    out = Scan()
    for path in index_forget.index_files():
        db = index_forget.connect(path)
        if db is None:
            continue
        try:
            per: dict[str, Counter[str]] = {}
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
            sources = ["messages"] + (["hidden"] if "hidden" in tables else [])
            for table in sources:
                for sid, text in db.execute(
                    f"SELECT s.session_id, t.text FROM {table} t JOIN sessions s ON s.sid = t.sid"
                ):
                    per.setdefault(str(sid), Counter()).update(kinds_in(str(text)))
            for sid, kinds in per.items():
                out.add(sid, "index", kinds)
        except sqlite3.Error as exc:
            out.problems.append(f"index {path} cannot be read: {exc}")
        finally:
            db.close()
    if (default_vault_dir() / "catalog.sqlite").exists():
        from ..vault.compact import session_of

        try:
            with Vault(default_vault_dir()) as vault:
                seen: set[str] = set()
                for row in vault._db.execute(f"{vault._SELECT} ORDER BY v.vid").fetchall():
                    version = vault._version(row)
                    if version.sha256 in seen:
                        continue
                    seen.add(version.sha256)
                    try:
                        data = vault.read(version)
                    except VaultError as exc:
                        out.problems.append(str(exc))
                        continue
                    kinds = kinds_in(data.decode("utf-8", "replace"))
                    out.add(session_of(vault, version), "vault", kinds)
        except (VaultError, sqlite3.Error) as exc:
            out.problems.append(f"the vault cannot be read: {exc}")
    if team_url:
        from ..pgindex.forget import TeamIndex

        with TeamIndex(team_url) as team:
            for sid, pushed in team.sessions_data():
                out.add(sid, "team index", kinds_in(pushed))
    return out
