"""The one table of source kinds (:data:`SOURCES`): ``--store KIND:DIR``, the default store
list, the agent tool and the benchmark learn from it which sources exist. A new format is one
reader module plus one row here (see :mod:`session_browser.core.sources`)."""

from __future__ import annotations

from . import aider, cline, codex_source, copilot, gemini, goose, kimi, opencode, praisonai
from .base import SourceKind
from .claude import source as claude_source
from .pi import source as pi_source

#: Every source kind by name, the default kind (named by a bare ``DIR``) first.
SOURCES: dict[str, SourceKind] = {
    praisonai.KIND.name: praisonai.KIND,
    pi_source.KIND.name: pi_source.KIND,
    claude_source.KIND.name: claude_source.KIND,
    codex_source.KIND.name: codex_source.KIND,
    gemini.KIND.name: gemini.KIND,
    opencode.KIND.name: opencode.KIND,
    kimi.KIND.name: kimi.KIND,
    aider.KIND.name: aider.KIND,
    cline.KIND.name: cline.KIND,
    goose.KIND.name: goose.KIND,
    copilot.KIND.name: copilot.KIND,
}
#: The kind of a store named without a prefix.
DEFAULT_KIND = praisonai.PRAISONAI_SOURCE
