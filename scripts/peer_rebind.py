"""A pytest plugin (``-p peer_rebind``) that re-binds praisonaiagents' session store classes
to session-browser's before PraisonAI's tests are collected: ``DefaultSessionStore`` and
``SqliteSessionStore`` in ``praisonaiagents.session.store``, ``...sqlite_store`` and the
``praisonaiagents.session`` package. Used by ``scripts/peer_tests.py``."""

from __future__ import annotations

import praisonaiagents.session as package
import praisonaiagents.session.sqlite_store as peer_sqlite
import praisonaiagents.session.store as peer_store

from session_browser.core import DefaultSessionStore, SqliteSessionStore

peer_store.DefaultSessionStore = DefaultSessionStore  # type: ignore[misc]
peer_sqlite.SqliteSessionStore = SqliteSessionStore  # type: ignore[misc]
package._module_cache["DefaultSessionStore"] = DefaultSessionStore
package._module_cache["SqliteSessionStore"] = SqliteSessionStore
package.DefaultSessionStore = DefaultSessionStore  # type: ignore[attr-defined]
package.SqliteSessionStore = SqliteSessionStore  # type: ignore[attr-defined]
peer_store._default_store = None
