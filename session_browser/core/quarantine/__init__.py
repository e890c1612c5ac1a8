"""The quarantine workbench: corrupt session files and spill files, listed, salvaged, put back.

- :func:`list_items` finds every ``<id>.json.corrupt-<ms>`` in the session dirs and every
  spill file in the spill dirs, with size, age, owning session id, whether that session
  is live, and the parse error with its line, column and byte offset. The file name is the
  item's identity, for the list and every action alike: an id written inside that names
  another file is shown as a claim (``inner_id``), never acted on.
- :func:`salvage` recovers what the bytes still hold: invalid UTF-8 is replaced (its byte
  ranges reported), the longest valid prefix is closed into a document, and every complete
  message object of ``messages`` and ``archived_messages`` is kept (also past a damaged
  region in the middle). What was lost is reported: the partial message at the cut, the
  bytes after it, the non-object entries skipped.
- Actions (:func:`restore`, :func:`merge`, :func:`fold`, :func:`discard`) each take a dry
  run, back up every file they touch into our journal (``data_dir()/journal``) first, and
  write one journal entry listing each file's bytes before and state after, so
  :func:`undo` puts everything back byte-identical (mode and mtime included) and removes
  what the action created; it refuses when a file changed since. Session files are
  written under the session's lock with an atomic write and without the retention
  window. Discarded files go to ``data_dir()/trash``; nothing is ever deleted.
  Lock files (``<id>.json.lock``) are the cross-process protocol shared with PraisonAI
  and stay in place, as PraisonAI leaves them.
"""

from __future__ import annotations

from ..files import dumps_session, sha256_of
from .actions import (
    AlreadyRestored,
    _merge_into,
    _write_session_bytes,
    discard,
    fold,
    merge,
    merge_in_time_order,
    restore,
    undo,
)
from .items import (
    KIND_CORRUPT,
    KIND_LIVE,
    KIND_SPILL,
    LISTS,
    MAX_SALVAGE_BYTES,
    ParseProblem,
    QuarantineError,
    QuarantineItem,
    diagnose,
    id_from_bytes,
)
from .journal import (
    PRIVATE_DIR_MODE,
    PRIVATE_FILE_MODE,
    ActionResult,
    JournaledWrites,
    SessionWrite,
    _FileChange,
    _Journal,
    _sha,
    _SourceJournal,
    journal_dir,
    journal_entries,
    recover_pending,
    trash_dir,
    write_sessions_journaled,
)
from .listing import (
    find_item,
    item_history,
    list_items,
    unavailable,
)
from .salvage import (
    Comparison,
    Salvage,
    _missing,
    compare,
    decode_replacing,
    salvage,
    salvage_bytes,
)

# Every name other modules import from here (a few private helpers for the tests too).
__all__ = [
    "KIND_CORRUPT",
    "KIND_LIVE",
    "KIND_SPILL",
    "LISTS",
    "MAX_SALVAGE_BYTES",
    "PRIVATE_DIR_MODE",
    "PRIVATE_FILE_MODE",
    "ActionResult",
    "AlreadyRestored",
    "Comparison",
    "JournaledWrites",
    "ParseProblem",
    "QuarantineError",
    "QuarantineItem",
    "Salvage",
    "SessionWrite",
    "_FileChange",
    "_Journal",
    "_SourceJournal",
    "_merge_into",
    "_missing",
    "_sha",
    "_write_session_bytes",
    "compare",
    "decode_replacing",
    "diagnose",
    "discard",
    "dumps_session",
    "find_item",
    "fold",
    "id_from_bytes",
    "item_history",
    "journal_dir",
    "journal_entries",
    "list_items",
    "merge",
    "merge_in_time_order",
    "recover_pending",
    "restore",
    "salvage",
    "salvage_bytes",
    "sha256_of",
    "trash_dir",
    "unavailable",
    "undo",
    "write_sessions_journaled",
]
