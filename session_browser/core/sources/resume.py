"""Parse states kept in memory, so a file that only grew is read on from where the last read
stopped (Claude Code and Codex append to their transcripts).

Their readers' states are live objects (the turns built so far), not bytes. The index keeps
what :meth:`ResumeStates.keep` returns (a token) as the file's parse state and hands it back
as ``prior``; the state itself stays here, for the few files read last. A token from another
process or an older read matches nothing here, and the file is read whole: the long-running
app resumes the transcripts being written, a one-off command reads every changed file whole.
A copy sent to another process (a first build's parsing worker) starts empty, with tokens of
its own: its states serve that process only.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import Generic, TypeVar

S = TypeVar("S")

#: How many files' states are kept (a state holds that file's turns).
KEEP_STATES = 8


class ResumeStates(Generic[S]):
    """The parse states of the files read last, by file name (see the module doc)."""

    def __init__(self, keep: int = KEEP_STATES) -> None:
        self.keep_at_most = keep
        self._run = os.urandom(8).hex()  # tokens of this instance only
        self._count = 0
        self._states: OrderedDict[str, tuple[bytes, S]] = OrderedDict()

    def __reduce__(self) -> tuple[type[ResumeStates[S]], tuple[int]]:
        return (type(self), (self.keep_at_most,))  # a fresh, empty copy

    def take(self, name: str, prior: bytes | None) -> S | None:
        """The state the token ``prior`` stands for (None: none kept); it is given once."""
        entry = self._states.pop(name, None)
        if entry is None or prior is None or entry[0] != prior:
            return None
        return entry[1]

    def keep(self, name: str, state: S) -> bytes:
        """Keep ``state`` as the one of ``name``; the token the index keeps for it."""
        self._count += 1
        token = f"{self._run}:{self._count}".encode()
        self._states[name] = (token, state)
        self._states.move_to_end(name)
        while len(self._states) > self.keep_at_most:
            self._states.popitem(last=False)
        return token
