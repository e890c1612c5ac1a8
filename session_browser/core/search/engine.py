"""What the relevance procedure (:mod:`.procedure`) asks of a search engine: the ``Engine``
protocol, and the named results that pass between them.

An engine answers questions over its stored sessions (statistics, document frequencies,
bounded candidate rows, counts, a filter-only listing, the vocabulary for the typo pass, the
rows of given sessions) and builds one hit from a session's rows; the procedure decides what
to ask and in which order, scores, refines, orders, folds lineage and picks the hits. The
SQLite index (:mod:`session_browser.core.index.engine`) and the team index
(:mod:`session_browser.core.pgindex.engine`) are the two engines. Nothing here imports one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..model import SessionHit
from ..query import ParsedQuery, Term
from .lexical import SessionPostings
from .rank import CorpusStats, Scored, SessionInfo

#: A candidate message row (:data:`~.candidates.ROW_COLUMNS`).
Row = tuple[Any, ...]
#: Which of a query's terms (numbers in the first item) to look for in a session.
Ask = tuple[Sequence[int], SessionInfo]


@dataclass(frozen=True)
class Backlog:
    """The files an engine has not indexed yet when a search reads it (an index being built):
    ``pending`` are read and scored on the fly (newest first), ``unscanned`` more are not read
    at all; ``stale`` are index keys of sessions whose file changed or went (left out);
    ``waiting_new`` of the files to index are not in the index at all yet."""

    pending: Sequence[str] = ()
    unscanned: int = 0
    stale: frozenset[int] = frozenset()
    waiting_new: int = 0


@dataclass
class Scoring:
    """One scoring pass of a query: the scored sessions, what it noted, and the sessions that
    are hits over the whole index (``counted``: (count, exact), None when not counted)."""

    scored: list[Scored]
    warnings: list[str] = field(default_factory=list)
    counted: tuple[int, bool] | None = None
    hybrid: bool = False  # fused with the nearest sessions by meaning (.hybrid)


@dataclass
class Found:
    """What a relevance search read before its hits are built."""

    scored: list[Scored]
    pq: ParsedQuery  # the query searched (typo-corrected when ``fuzzy``)
    matched: int
    exact: bool
    fuzzy: bool
    warnings: list[str]
    mode: str
    searched: tuple[int, int] | None  # (sessions searched, sessions) while a build runs


class Engine(Protocol):
    """A search engine under the relevance procedure."""

    label: str  # the store's name on its hits
    source_kind: str  # the kind of source on its hits
    mode: str  # how words are looked up: "index" (full-text), "like" (substring scan)
    typo_pass: bool  # whether unknown words can be corrected from its vocabulary
    #: whether it answers :meth:`session_postings` and :meth:`session_rows` (session recall
    #: of a question no message answers whole); without it, such a question is ranked by
    #: its best messages
    session_recall: bool

    def reading(self) -> AbstractContextManager[None]:
        """One consistent view for the scoring reads (a read transaction, where it has one)."""
        ...

    def backlog(self) -> Backlog:
        """The files not indexed yet, as the view of :meth:`reading` sees them."""
        ...

    def notes(self, pq: ParsedQuery) -> list[str]:
        """What the engine says about ``pq`` before searching it (say, what it cannot search)."""
        ...

    def corpus(self) -> tuple[int, float]:
        """(messages, mean characters a message)."""
        ...

    def document_frequencies(self, terms: Sequence[Term]) -> list[int]:
        """The messages holding each of ``terms`` (an upper bound for phrases)."""
        ...

    def candidate_rows(
        self, pq: ParsedQuery, dfs: Sequence[int], limit: int, warnings: list[str], rare: set[int]
    ) -> list[Row]:
        """The bounded candidate messages of ``pq`` (see :func:`~.candidates.bounded`)."""
        ...

    def one_message_holds(self, pq: ParsedQuery) -> bool:
        """Whether some message holds every term of ``pq`` (plain words; only when
        :attr:`session_recall`)."""
        ...

    def session_postings(self, words: Sequence[str]) -> SessionPostings:
        """Which sessions hold each of the content ``words`` (:mod:`.lexical`), with the
        sessions' count and lengths (only when :attr:`session_recall`)."""
        ...

    def session_rows(self, pq: ParsedQuery, keys: Sequence[int]) -> list[Row]:
        """Candidate rows of the sessions ``keys``: each one's best messages holding a term of
        ``pq``, else its first message (only when :attr:`session_recall`)."""
        ...

    def expect_neighbours(self, pq: ParsedQuery, k: int) -> None:
        """A hint: ``pq``'s ``k`` nearest sessions will be asked by meaning
        (:meth:`neighbours`) once its lexical part is done; an engine may start working
        them out meanwhile, on another core. Nothing to do in lexical mode."""
        ...

    def neighbours(self, pq: ParsedQuery, k: int) -> list[tuple[float, Row]] | None:
        """Hybrid mode (:mod:`.hybrid`): the ``k`` sessions nearest ``pq``'s words by meaning
        that pass its filters, nearest first, each as (cosine of its best window, the
        candidate row of that window's first message passing the filters, else of its
        session's first one); None when the engine answers lexically (:meth:`notes` says why
        when hybrid mode was asked for). ``k`` = 0 asks none: ``[]`` in hybrid mode, the query
        not embedded."""
        ...

    def hidden_rows(self, pq: ParsedQuery, limit: int) -> list[Row]:
        """``in:tools``: the hidden parts matching ``pq``, as candidate rows (ids negated)."""
        ...

    def holds(self, terms: Sequence[Term], asks: Sequence[Ask]) -> list[set[int]]:
        """For each ask, which of its terms some message of its session holds."""
        ...

    def excluded_sessions(self, pq: ParsedQuery) -> set[int]:
        """The keys of the sessions with a message holding one of ``pq``'s excluded terms."""
        ...

    def count_matches(
        self, pq: ParsedQuery, dfs: Sequence[int], rare: set[int]
    ) -> tuple[int, bool] | None:
        """(sessions that are hits for ``pq`` over everything stored, exact), or None when the
        engine does not count them (the scored sessions are counted)."""
        ...

    def recent(self, pq: ParsedQuery, limit: int) -> tuple[list[Scored], int]:
        """A filter-only query: the newest sessions passing its filters (the shown ones and
        their continuations), and how many sessions pass them."""
        ...

    def known(self, token: str) -> bool:
        """Whether some stored message holds the word ``token``."""
        ...

    def correct(self, token: str) -> str | None:
        """The vocabulary word that ``token`` most likely misspells, if any."""
        ...

    def score_files(
        self, pq: ParsedQuery, names: Sequence[str], corpus: CorpusStats | None
    ) -> list[Scored]:
        """The files of :attr:`Backlog.pending` read and scored."""
        ...

    def listed_count(self) -> int:
        """How many sessions are listed (all of them, no filter)."""
        ...

    def rows_of(self, keys: Sequence[int]) -> Mapping[int, Any]:
        """What :meth:`full_hit` needs of the sessions ``keys``, read at once (an engine may
        leave any out: it reads them one by one then)."""
        ...

    def full_hit(
        self, s: Scored, pq: ParsedQuery, window: int, rows: Any | None
    ) -> SessionHit | None:
        """The hit of ``s`` with its context (``rows``: what :meth:`rows_of` read for it);
        None when the session is gone or has no message any more."""
        ...
