"""A query's thin pass multiplies by the weights' column blocks: the same vectors as the whole
weights (1e-5), the blocks made only when a thin pass asks for them."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController

from memstrata import blas
from memstrata.embeddings import halves, tensorfile
from memstrata.embeddings.local import _WEIGHTS, DATA_DIR, LocalEmbedder, bundled_local_model
from memstrata.embeddings.minilm import _FEW_ROWS, Config, MiniLM, _stack, _times
from memstrata.embeddings.wordpiece import WordPieceTokenizer

pytestmark = pytest.mark.skipif(bundled_local_model() is None, reason="the shipped model is not installed")


@pytest.fixture(scope="module")
def fresh_model() -> tuple[MiniLM, WordPieceTokenizer]:
    """A model of its own (not the process's shared one), so no other test has made its blocks."""
    path = DATA_DIR / _WEIGHTS
    config = Config.from_metadata(tensorfile.metadata(path))
    return MiniLM(tensorfile.load(path), config), LocalEmbedder()._model()[1]


def test_a_blocked_weight_gives_the_whole_weights_product() -> None:
    rng = np.random.default_rng(3)
    for inner, cols in ((384, 1152), (384, 384), (384, 1536), (1536, 384), (100, 30)):
        weight = rng.standard_normal((inner, cols), dtype=np.float32)
        stacked = _stack(weight)
        chunks, blocks, rows, width = stacked.shape
        assert (chunks * rows, blocks * width) == (inner, cols)
        for n in (1, 8, _FEW_ROWS):
            x = rng.standard_normal((n, inner), dtype=np.float32)
            np.testing.assert_allclose(_times(x, weight, stacked), x @ weight, rtol=1e-5, atol=1e-4)


def test_thin_passes_give_the_whole_weights_vectors(fresh_model: tuple[MiniLM, WordPieceTokenizer]) -> None:
    model, tokenizer = fresh_model
    assert model._stacked is None  # a batch pass never makes the blocks (42 MB)
    model.encode([tokenizer.encode("Where does Maya work?")])
    assert model._stacked is None
    inputs = [
        [tokenizer.encode("Hi")],
        [tokenizer.encode("Where does Maya work?")],
        [tokenizer.encode("When is it?"), tokenizer.encode("Who came to the party on Saturday?")],
    ]
    for batch in inputs:
        assert len(batch) * max(map(len, batch)) <= _FEW_ROWS
        whole = model.encode(batch)
        for pair in (None, halves.on_two_cores):
            np.testing.assert_allclose(model.encode(batch, pair, thin=True), whole, atol=1e-5)
    assert model._stacked is not None


def test_a_pass_of_more_rows_than_thin_ones_uses_the_whole_weights(
    fresh_model: tuple[MiniLM, WordPieceTokenizer], monkeypatch: pytest.MonkeyPatch
) -> None:
    model, tokenizer = fresh_model
    ids = tokenizer.encode(
        "She moved to Porto in June 2025 with Tom, and they bought an old blue canoe there; in "
        "September they paddled it down the Douro to a village whose name neither could pronounce."
    )
    assert len(ids) > _FEW_ROWS
    whole = model.encode([ids])

    def no_blocks() -> list[None]:
        raise AssertionError("a pass of more rows than a thin one asked for the weights' blocks")

    monkeypatch.setattr(model, "_stacks", no_blocks)
    np.testing.assert_allclose(model.encode([ids], thin=True), whole, atol=1e-6)


@pytest.mark.parametrize("unpacked", [True, False])
def test_queries_take_thin_passes_only_where_blas_runs_thin_products_unpacked(
    monkeypatch: pytest.MonkeyPatch, unpacked: bool
) -> None:
    """With other kernels (OpenBLAS' AVX2 ones, another BLAS) blocks cost more than the whole weights."""
    embedder = LocalEmbedder()
    whole = embedder.embed(["Where does Maya work?"])
    asked: list[bool] = []
    real = MiniLM._stacks

    def spy(self: MiniLM) -> object:
        asked.append(True)
        return real(self)

    monkeypatch.setattr(blas, "_thin", unpacked)
    monkeypatch.setattr(MiniLM, "_stacks", spy)
    np.testing.assert_allclose(embedder.embed_queries(["Where does Maya work?"]), whole, atol=1e-5)
    assert bool(asked) is unpacked


def test_openblas_avx2_kernels_take_no_thin_passes() -> None:
    """OpenBLAS reads its kernels' choice from the environment when numpy loads it: a process of
    its own, which says which kernels it runs and what ``blas_runs_thin_products`` makes of them."""
    code = (
        "import numpy\n"
        "from threadpoolctl import ThreadpoolController\n"
        "from memstrata import blas\n"
        "libs = ThreadpoolController().select(internal_api='openblas').lib_controllers\n"
        "print(sorted({lib.architecture for lib in libs}), blas.blas_runs_thin_products())\n"
    )
    env = {**os.environ, "OPENBLAS_CORETYPE": "Haswell"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    if not out.stdout.startswith("['Haswell']"):
        pytest.skip(f"OpenBLAS did not take the AVX2 kernels here: {out.stdout.strip()}")
    assert out.stdout.strip() == "['Haswell'] False"


def test_openblas_avx512_kernels_take_thin_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    architectures = {
        lib.architecture for lib in ThreadpoolController().select(internal_api="openblas").lib_controllers
    }
    if architectures != {"SkylakeX"}:
        pytest.skip(f"OpenBLAS runs its {architectures or 'no'} kernels here")
    monkeypatch.setattr(blas, "_thin", None)  # found again
    assert blas.blas_runs_thin_products()
