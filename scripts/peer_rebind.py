"""A pytest plugin (``-p peer_rebind``) that re-binds praisonaiagents' session store classes
to session-browser's before PraisonAI's tests are collected: ``DefaultSessionStore`` and
``SqliteSessionStore`` in ``praisonaiagents.session.store``, ``...sqlite_store`` and the
``praisonaiagents.session`` package. Used by ``scripts/peer_tests.py``.

The stand-ins are our classes with ``read_side_effects=True`` by default (praisonaiagents'
read semantics: a read moves a corrupt file aside and folds spill files in), the opt-in for
code that relies on them. praisonaiagents' own subclasses of its store
(``HierarchicalSessionStore``, ``SqliteTranscriptStore``) are imported first, so they keep
their own base class: they are its code, not stand-ins.
"""

from __future__ import annotations

from typing import Any

import praisonaiagents.session as package
import praisonaiagents.session.hierarchy  # keeps its own base class
import praisonaiagents.session.sqlite_store as peer_sqlite
import praisonaiagents.session.sqlite_transcript_store  # noqa: F401  (likewise)
import praisonaiagents.session.store as peer_store

from session_browser.core import DefaultSessionStore as OurStore
from session_browser.core import SqliteSessionStore as OurIndex


class DefaultSessionStore(OurStore):
    def __init__(self, *args: Any, read_side_effects: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, read_side_effects=read_side_effects, **kwargs)


class SqliteSessionStore(OurIndex):
    def __init__(self, *args: Any, read_side_effects: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, read_side_effects=read_side_effects, **kwargs)


DefaultSessionStore.register(SqliteSessionStore)
peer_store.DefaultSessionStore = DefaultSessionStore  # type: ignore[misc]
peer_sqlite.SqliteSessionStore = SqliteSessionStore  # type: ignore[misc]
package._module_cache["DefaultSessionStore"] = DefaultSessionStore
package._module_cache["SqliteSessionStore"] = SqliteSessionStore
package.DefaultSessionStore = DefaultSessionStore  # type: ignore[attr-defined]
package.SqliteSessionStore = SqliteSessionStore  # type: ignore[attr-defined]
peer_store._default_store = None
