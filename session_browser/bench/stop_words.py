"""The words a question or a session holds that carry no content, which the questions bench
(:mod:`.paraphrase`) and the lexical-recall experiment (:mod:`.lexical_recall`) both set
aside: the search's own list (session recall drops the same words)."""

from __future__ import annotations

from session_browser.core.search.lexical import STOP_WORDS

__all__ = ["STOP_WORDS"]
