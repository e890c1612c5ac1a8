"""The search index: ``SqliteSessionStore``, the store API with an SQLite FTS5 index for its reads.

The JSON files stay the only truth; the index is derived data in our cache dir
(``paths.cache_dir()/index/<dir_key>.sqlite3``), never in the session dir, and deleting it loses
nothing. Opening, reconciling and searching write nothing in the session dir.

Layout
    ``sessions``: one row per session file: file identity (size, mtime_ns, inode), title,
    when, created, counts, source tag, agent, the automated flags (tagged / documented rate
    rule / machine-paced) and lineage key, plus the contiguous rowid range of its messages.
    ``messages``: one row per message of the archived+active projection that has text
    (session, projection index, role, archived flag, timestamp, text).
    ``fts``: an external-content FTS5 table over ``messages.text``
    (``unicode61 remove_diacritics 2``), ``fts_vocab`` its term statistics.
    ``skipped``: files that could not be indexed and why (kept until the file changes).
    ``common_terms``: the message counts of the frequent words (FTS5 counts a word by
    reading its whole posting list; these are taken once, at the end of a first build).
    ``meta``: settings, and ``scan_fp``, the fingerprint of the directory scan the index
    reflects (removed by every change, kept only after a complete pass).
    Without FTS5 (or with ``fts=False``) the same tables are kept without ``fts`` and the
    search runs ``LIKE`` over a folded copy of the text.

Freshness
    :meth:`SqliteSessionStore.reconcile` compares every ``*.json`` file's identity with the
    index, parses only new or changed files and drops deleted ones. Files are written in
    batches, each inside one ``BEGIN IMMEDIATE`` transaction that re-checks what is there, so
    two processes reconciling at once never index a file twice. Writes made through this
    store update the index in the same call. Two shortcuts keep this cheap on a large dir:
    when the scan is exactly the one the last complete pass indexed (same fingerprint, and no
    change to the index since), nothing is compared (reopening an up-to-date index costs
    one ``stat`` per file); and from a process's second pass on (a command that reconciles
    once never walks a tree to watch it), a :class:`DirWatch` (inotify) names the files
    that changed, so a later reconcile stats only those (a full pass again when the
    watch lost events, or every :data:`FULL_PASS_INTERVAL` seconds for what inotify cannot
    see, such as changes made on another machine to a network dir).
    A first build parses in the calling thread, writes a few statements per batch of
    files (FTS5 reads the new rows straight from ``messages``), turns FTS5's automerge off
    while rows stream in and merges everything into one segment at the end.

Relevance ranking (``ranking="relevance"``)
    Candidates are bounded whatever the words: the newest messages holding every term, the
    messages of the rarest terms (document frequency from ``common_terms``/``fts_vocab``),
    so a very common word never costs its whole posting list, and when that finds fewer
    sessions than asked for, the newest messages with any term. Each candidate message gets
    a BM25 score (k1=1.2, b=0.4, length in characters relative to the mean, damped as
    ``1 + ln r`` above it so a long message holding every word is not outranked by a short
    one holding one), x1.5 when the query's words occur as a phrase, x1.25 when one
    message holds every term. Term counts come from substring search plus a check of the
    neighbouring characters (exactly the index's tokens, without tokenising the text).
    A session scores its best message plus a little of its others, times how much of the
    query (idf-weighted) the session covers (the other messages of the best sessions are
    looked up for missing words, unless even full coverage could not lift a session among
    the results). Scores are rounded to 4 digits so near-ties fall to the newest session.
    Sessions that really are automated (tagged, or machine-paced: many messages at
    near-constant sub-10 s gaps) are multiplied by 0.25; continuations sharing a lineage
    key fold into their best hit.
    Common words: a term whose tokens are all English stopwords (:data:`STOPWORDS`), or
    held by more than 10% of the messages (:data:`COMMON_SHARE`, from an index of 50
    messages up), is common. When a query mixes common and rarer terms, a session must hold
    one of the rarer ones to be a hit, and the common ones weigh x0.25 (idf, in the score
    and the coverage); a query of common words only keeps them all. ``explain`` lists them
    under ``common``.
    A query of filters only (no words) lists every session with a message passing the
    filters (and none holding an excluded word), newest first: the score is
    ``1 / (1 + age in days)`` of its latest matching message, where the hit is anchored;
    no automated demotion.
    ``matched_sessions`` counts the sessions that are hits over the whole index, not only
    the bounded candidates: filter-only, every session passing the filters; with words,
    the sessions with a message passing the filters that holds a rarer term (any term when
    all are common) and no excluded term, counted with FTS5 while that reads at most
    :data:`COUNT_BUDGET` postings (beyond, the scored candidates, a lower bound); plus the
    not-yet-indexed files scanned.
    Passing shared :class:`CorpusStats` (as a group of stores does) scores with collection
    statistics summed over several indexes, so their scores can be ranked together.

Other formats
    Every file-level read goes to the store's ``source``, a
    :class:`~session_browser.core.sources.base.SessionSource` (PraisonAI's JSON files by
    default): listing the files with their identity, parsing one (resuming from a parse state
    the index keeps for it, when the source has one), loading one for reading, its file order
    and its automation rule. One store class serves every source: a store over another
    agent's files passes its source and the reader its sessions are read through (a
    scanning store over the source by default; Pi's is
    :class:`~session_browser.core.sources.pi.indexed.PiIndexReader`); without a writer,
    every write is refused.

Modules
    The ranking and the relevance procedure are :mod:`session_browser.core.search` (shared
    with the team index); here: :mod:`.watch` directory scans and the inotify watch;
    :mod:`.write` rows written to and removed from the database; :mod:`.hidden` the hidden
    parts' tables; :mod:`.schema` the database file, connection and schema;
    :mod:`.reconcile` the :class:`~.reconcile.Reconciler` a store holds, which brings
    its index in line with the files; :mod:`.plan` candidate
    reads, document frequencies and counts; :mod:`.typos` the typo pass's vocabulary;
    :mod:`.hits` hits with their context; :mod:`.engine` the index as the procedure's
    ``Engine``; :mod:`.api` the store API by composition (reads to a reader, writes to the
    JSON store it holds, which tells the index of each); :mod:`.browse` lists, status and
    live changes; :mod:`.store` :class:`SqliteSessionStore`, the search API. The names here
    are imported on first use: the parsing worker of a first build imports :mod:`.parsing`
    and what it needs, not the store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import on_first_use

if TYPE_CHECKING:
    from ..query import QueryError
    from ..search.rank import CorpusStats
    from ..search.results import (
        Cancelled,
        ReconcileReport,
        Relevance,
        SearchCancelled,
        SearchResult,
    )
    from ..search.rows import machine_paced
    from .schema import SCHEMA_VERSION, default_db_path
    from .store import _LOWERS_TO_ASCII, RANKINGS, SqliteSessionStore
    from .watch import DirWatch

#: Where each name imported on first use is defined.
_LAZY = {
    "QueryError": "..query",
    "CorpusStats": "..search.rank",
    **dict.fromkeys(
        ("Cancelled", "ReconcileReport", "Relevance", "SearchCancelled", "SearchResult"),
        "..search.results",
    ),
    "machine_paced": "..search.rows",
    "SCHEMA_VERSION": ".schema",
    "default_db_path": ".schema",
    "_LOWERS_TO_ASCII": ".store",
    "RANKINGS": ".store",
    "SqliteSessionStore": ".store",
    "DirWatch": ".watch",
}


__getattr__ = on_first_use(__name__, _LAZY)


__all__ = [
    "RANKINGS",
    "SCHEMA_VERSION",
    "_LOWERS_TO_ASCII",
    "Cancelled",
    "CorpusStats",
    "DirWatch",
    "QueryError",
    "ReconcileReport",
    "Relevance",
    "SearchCancelled",
    "SearchResult",
    "SqliteSessionStore",
    "default_db_path",
    "machine_paced",
]
