"""The search query language (see :mod:`.parse`), its filter table (:mod:`.filters`) and
the text folding every search path shares (:mod:`.terms`)."""

from __future__ import annotations

from .filters import (
    BY_KEY,
    FILTER_KEYS,
    FILTERS,
    ROLES,
    Filter,
    MessageFacts,
    SessionFacts,
    local_machine,
    local_user,
    normalize_project,
    pg_where,
    project_matches,
    sql_where,
)
from .parse import (
    MAX_TERMS,
    NOTHING_SEARCHABLE,
    ParsedQuery,
    classic_text,
    fts_expr,
    highlight_terms,
    like_pattern,
    loosened,
    parse_query,
    why_empty,
)
from .terms import MIN_PREFIX, QueryError, Term, fold, folded_spans, tokenize

__all__ = [
    "BY_KEY",
    "FILTERS",
    "FILTER_KEYS",
    "MAX_TERMS",
    "MIN_PREFIX",
    "NOTHING_SEARCHABLE",
    "ROLES",
    "Filter",
    "MessageFacts",
    "ParsedQuery",
    "QueryError",
    "SessionFacts",
    "Term",
    "classic_text",
    "fold",
    "folded_spans",
    "fts_expr",
    "highlight_terms",
    "like_pattern",
    "local_machine",
    "local_user",
    "loosened",
    "normalize_project",
    "parse_query",
    "pg_where",
    "project_matches",
    "sql_where",
    "tokenize",
    "why_empty",
]
