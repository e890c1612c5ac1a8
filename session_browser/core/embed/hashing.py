"""A deterministic embedder with no model: words hashed into a fixed number of buckets.

Texts that share words get close vectors, texts that share none get orthogonal ones (up to
bucket collisions). The same text gives the same vector on every machine and every run
(BLAKE2b, not Python's salted ``hash``). Meant for tests of what is built on embeddings.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

_WORD = re.compile(r"\w+")


class HashEmbedder:
    """Each lower-cased word adds ``±1`` to two buckets chosen by its hash; rows are unit."""

    def __init__(self, dim: int = 256, *, max_tokens: int = 512) -> None:
        if dim < 2:
            raise ValueError("dim must be at least 2")
        if max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        self._dim = dim
        self._max_tokens = max_tokens

    @property
    def name(self) -> str:
        return f"hash-words-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    def _buckets(self, word: str) -> tuple[int, float, int, float]:
        digest = hashlib.blake2b(word.encode("utf-8", "surrogatepass"), digest_size=8).digest()
        a = int.from_bytes(digest[:4], "little")
        b = int.from_bytes(digest[4:], "little")
        return (
            (a >> 1) % self._dim,
            1.0 if a & 1 else -1.0,
            (b >> 1) % self._dim,
            (1.0 if b & 1 else -1.0),
        )

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for count, match in enumerate(_WORD.finditer(text)):
                if count >= self._max_tokens:
                    break
                i, si, j, sj = self._buckets(match.group().lower())
                out[row, i] += si
                out[row, j] += sj
            norm = float(np.linalg.norm(out[row]))
            if norm > 0.0:
                out[row] /= norm
        return out
