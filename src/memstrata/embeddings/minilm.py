"""The MiniLM (BERT) encoder forward pass in numpy, from a weight-quantised tensor file.

Why numpy: it is already a core dependency and adds nothing to install; onnxruntime alone is
37-76 MB installed (1.19-1.32), over the whole size budget of the embedder. Measured on the
project's 2-core machine a query costs about twice what onnxruntime does, and a fifth of
sentence-transformers/torch (docs/benchmarks.md).

The file (built by ``scripts/build_local_model.py``) holds every linear weight and the word
embedding table as int8 with one float32 scale per group of 32 input values, everything else in
float32. Linear weights are dequantised to float32 once at load (BLAS has no fast int8 path); the
word table stays int8 and only the rows a batch uses are dequantised.

The maths is ``BertModel`` + mean pooling + L2 normalisation, as sentence-transformers runs
all-MiniLM-L6-v2: post-norm layers, GELU (tanh form), padding masked out of attention and pooling.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from memstrata.errors import EmbeddingError

F32 = npt.NDArray[np.float32]
# ``pair(work)`` returns ``(work(0), work(1))``, the two calls possibly on two cores
# (``halves.on_two_cores``); a short input's layers are then split in two halves of heads and units.
Pair = Callable[[Callable[[int], F32]], tuple[F32, F32]]
_MASKED = np.float32(-1e9)  # added to attention scores of padding: exp() of it is exactly 0
_FFN_ROWS = 256
# One text's rows are padded (masked) to a multiple of this: OpenBLAS' float32 kernels work on
# blocks of rows, and a product with a ragged last block cost up to 40% more than the next
# multiple of 4 (one core, (15 x 384) @ (384 x 1536): 285 us; (16 x 384): 208 us). A batch's
# groups have hundreds of rows, where a ragged block costs next to nothing.
_ROW_ALIGN = 4


@dataclass(frozen=True, slots=True)
class Config:
    """The shape of the encoder, read from the tensor file's metadata."""

    hidden: int
    heads: int
    layers: int
    max_length: int
    group: int
    eps: float

    @classmethod
    def from_metadata(cls, meta: Mapping[str, str]) -> Config:
        try:
            config = cls(
                hidden=int(meta["hidden_size"]),
                heads=int(meta["num_attention_heads"]),
                layers=int(meta["num_hidden_layers"]),
                max_length=int(meta["max_seq_length"]),
                group=int(meta["quant_group_size"]),
                eps=float(meta["layer_norm_eps"]),
            )
        except (KeyError, ValueError) as exc:
            raise EmbeddingError(f"the model file's metadata lacks a valid {exc}") from exc
        if config.heads % 2 or config.hidden % config.heads:  # layers are run as two halves of heads
            raise EmbeddingError(f"the model's {config.heads} heads do not split in two equal halves")
        return config


@dataclass(frozen=True, slots=True)
class _Layer:
    # (hidden, 3 * hidden), columns [q k v of heads 0..5 | q k v of heads 6..11], so that either
    # half of the heads is one column slice; the query columns pre-scaled by 1/sqrt(head size)
    qkv: F32
    qkv_bias: F32
    out: F32
    out_bias: F32
    norm1: tuple[F32, F32]
    up: F32
    up_bias: F32
    down: F32
    down_bias: F32
    norm2: tuple[F32, F32]


def dequantise(q: npt.NDArray[np.int8], scale: F32) -> F32:
    """``q`` (rows, cols) times one scale per group of ``cols // scale.shape[1]`` values of a row."""
    rows, cols = q.shape
    groups = scale.shape[1]
    grouped = q.reshape(rows, groups, cols // groups).astype(np.float32)
    grouped *= scale[:, :, None]
    return grouped.reshape(rows, cols)


class MiniLM:
    """Token ids -> unit sentence vectors. Immutable after construction, so thread-safe."""

    def __init__(self, tensors: Mapping[str, npt.NDArray[Any]], config: Config) -> None:
        self.config = config
        try:
            self._words = tensors["embeddings.word_embeddings.weight"]
            self._word_scales = np.asarray(tensors["embeddings.word_embeddings.weight_scale"])
            self._positions = np.asarray(tensors["embeddings.position_embeddings.weight"], dtype=np.float32)
            self._token_type = np.asarray(tensors["embeddings.token_type_embeddings.weight"][0], np.float32)
            self._norm = self._pair(tensors, "embeddings.LayerNorm")
            self._layers = [self._layer(tensors, f"encoder.layer.{i}.") for i in range(config.layers)]
        except KeyError as exc:
            raise EmbeddingError(f"the model file has no tensor {exc}") from exc

    @property
    def dimensions(self) -> int:
        return self.config.hidden

    def encode(
        self,
        batch: Sequence[Sequence[int]],
        pair: Pair | None = None,
        pause: Callable[[], None] | None = None,
    ) -> F32:
        """Unit mean-pooled vectors of ``batch`` (padded to its longest row), shape ``(len, hidden)``.

        ``pause``, when given, is called before each layer: background batches wait there while a
        query runs (``local.py``), so a query never queues behind a whole batch's pass.

        With ``pair``, each layer runs as two halves (heads 0-5 and 6-11 with their share of the
        output projection, then each half of the feed-forward units) whose partial sums are added:
        two hand-offs per layer let a short input use two cores. The result is the same up to
        float rounding.
        """
        width = max(len(ids) for ids in batch)
        if len(batch) == 1:
            width += -width % _ROW_ALIGN  # masked like any padding, so the vector does not change
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.float32)
        for row, seq in enumerate(batch):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1.0
        # Rows of one length need no mask at all (a single query is the common case).
        ragged = bool(mask.min() == 0.0)
        x = self._embed(ids)
        bias = ((1.0 - mask) * _MASKED)[:, None, None, :] if ragged else None
        for layer in self._layers:
            if pause is not None:
                pause()
            if pair is None:
                x = self._block(x, layer, bias, len(batch), width)
            else:
                x = self._halved_block(x, layer, bias, len(batch), width, pair)
        tokens = x.reshape(len(batch), width, self.config.hidden)
        if ragged:
            pooled = np.einsum("btd,bt->bd", tokens, mask) / mask.sum(axis=1, keepdims=True)
        else:
            pooled = tokens.mean(axis=1)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.maximum(norms, 1e-12), dtype=np.float32)

    def _embed(self, ids: npt.NDArray[np.int64]) -> F32:
        batch, width = ids.shape
        words = dequantise(self._words[ids.ravel()], self._word_scales[ids.ravel()])
        x = words.reshape(batch, width, -1) + self._positions[:width] + self._token_type
        return self._layer_norm(x.reshape(batch * width, -1), self._norm)

    def _block(self, x: F32, layer: _Layer, bias: F32 | None, batch: int, width: int) -> F32:
        qkv = x @ layer.qkv
        qkv += layer.qkv_bias
        attended = self._attend(qkv, bias, batch, width, 2) @ layer.out
        attended += layer.out_bias
        attended += x
        x = self._layer_norm(attended, layer.norm1)
        out: F32 = np.empty_like(x)
        # The feed-forward part row block by row block: its 4x wider activations (and GELU's
        # temporaries) stay a few MB and in cache, whatever the batch size.
        for start in range(0, x.shape[0], _FFN_ROWS):
            rows = x[start : start + _FFN_ROWS]
            hidden = rows @ layer.up
            hidden += layer.up_bias
            _gelu_inplace(hidden)
            block = out[start : start + _FFN_ROWS]
            np.matmul(hidden, layer.down, out=block)
            block += layer.down_bias
            block += rows
        return self._layer_norm(out, layer.norm2)

    def _halved_block(
        self, x: F32, layer: _Layer, bias: F32 | None, batch: int, width: int, pair: Pair
    ) -> F32:
        hidden = self.config.hidden
        qkv_cols, head_rows, units = 3 * hidden // 2, hidden // 2, layer.up.shape[1] // 2

        def attention(half: int) -> F32:  # half of the heads, and their part of the output projection
            cols = slice(half * qkv_cols, (half + 1) * qkv_cols)
            qkv = x @ layer.qkv[:, cols]
            qkv += layer.qkv_bias[cols]
            return (
                self._attend(qkv, bias, batch, width, 1)
                @ layer.out[half * head_rows : (half + 1) * head_rows]
            )

        first, second = pair(attention)
        first += second
        first += layer.out_bias
        first += x
        mid = self._layer_norm(first, layer.norm1)

        def feed_forward(half: int) -> F32:  # half of the units
            cols = slice(half * units, (half + 1) * units)
            inner = mid @ layer.up[:, cols]
            inner += layer.up_bias[cols]
            _gelu_inplace(inner)
            return np.asarray(inner @ layer.down[cols], dtype=np.float32)  # no copy: float32 already

        first, second = pair(feed_forward)
        first += second
        first += layer.down_bias
        first += mid
        return self._layer_norm(first, layer.norm2)

    def _attend(self, qkv: F32, bias: F32 | None, batch: int, width: int, halves: int) -> F32:
        """Self-attention of the heads whose q/k/v columns ``qkv`` holds (``halves`` halves of the
        heads, laid out as in ``_Layer.qkv``); returns their context, ``(batch * width, heads * size)``."""
        heads = self.config.heads // 2
        size = self.config.hidden // self.config.heads
        # (batch, width, halves, 3, heads, size) -> three (batch, halves * heads, width, size) blocks
        parts = qkv.reshape(batch, width, halves, 3, heads, size).transpose(3, 0, 2, 4, 1, 5)
        q, k, v = np.ascontiguousarray(parts).reshape(3, batch, halves * heads, width, size)
        scores = q @ k.transpose(0, 1, 3, 2)
        if bias is not None:
            scores += bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context: F32 = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * width, halves * heads * size)
        return context

    def _layer_norm(self, x: F32, params: tuple[F32, F32]) -> F32:
        centred: F32 = x - x.mean(axis=-1, keepdims=True)
        variance = np.mean(np.square(centred), axis=-1, keepdims=True)
        centred *= 1.0 / np.sqrt(variance + self.config.eps)
        centred *= params[0]
        centred += params[1]
        return centred

    def _layer(self, t: Mapping[str, npt.NDArray[Any]], prefix: str) -> _Layer:
        size = self.config.hidden // self.config.heads
        q_scale = np.float32(1.0 / math.sqrt(size))  # folded into the query weights once
        att = prefix + "attention."
        q, k, v = (self._linear(t, f"{att}self.{n}") for n in ("query", "key", "value"))
        out = self._linear(t, att + "output.dense")
        up = self._linear(t, prefix + "intermediate.dense")
        down = self._linear(t, prefix + "output.dense")
        half = self.config.hidden // 2
        halves = [slice(0, half), slice(half, None)]
        return _Layer(
            qkv=np.ascontiguousarray(
                np.concatenate([w[:, h] for h in halves for w in (q[0] * q_scale, k[0], v[0])], axis=1)
            ),
            qkv_bias=np.concatenate([b[h] for h in halves for b in (q[1] * q_scale, k[1], v[1])]).astype(
                np.float32
            ),
            out=out[0],
            out_bias=out[1],
            norm1=self._pair(t, att + "output.LayerNorm"),
            up=up[0],
            up_bias=up[1],
            down=down[0],
            down_bias=down[1],
            norm2=self._pair(t, prefix + "output.LayerNorm"),
        )

    @staticmethod
    def _linear(t: Mapping[str, npt.NDArray[Any]], name: str) -> tuple[F32, F32]:
        """A dense layer's weight as (in, out) float32, ready for ``x @ w``, and its bias."""
        weight = dequantise(t[name + ".weight"], np.asarray(t[name + ".weight_scale"]))
        return np.ascontiguousarray(weight.T), np.asarray(t[name + ".bias"], dtype=np.float32)

    @staticmethod
    def _pair(t: Mapping[str, npt.NDArray[Any]], name: str) -> tuple[F32, F32]:
        return np.asarray(t[name + ".weight"], np.float32), np.asarray(t[name + ".bias"], np.float32)


def _gelu_inplace(x: F32) -> None:
    """GELU, tanh form: ``x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))``, in place.

    BERT's exact GELU uses erf, which numpy lacks; a polynomial erf took 6x the time of this (a
    fifth of a whole batch embedding). This differs from it by < 5e-4 per activation, and the
    cosine to sentence-transformers' vectors did not move (min 0.99922, mean 0.99983 either way).
    """
    inner = np.square(x)
    inner *= np.float32(0.044715)
    inner += np.float32(1.0)
    inner *= x
    inner *= np.float32(math.sqrt(2.0 / math.pi))
    np.tanh(inner, out=inner)
    inner += np.float32(1.0)
    inner *= np.float32(0.5)
    x *= inner
