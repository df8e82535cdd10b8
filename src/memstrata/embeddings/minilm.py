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
all-MiniLM-L6-v2: post-norm layers, GELU (tanh form); a batch's texts packed one after another
(attention within each text), a query group's padding masked out of attention and pooling.
"""

from __future__ import annotations

import itertools
import math
import threading
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
# Attention runs: (texts, length) of consecutive texts of one length in a pass's rows.
Runs = Sequence[tuple[int, int]]
_MASKED = np.float32(-1e9)  # added to attention scores of padding: exp() of it is exactly 0
_FFN_ROWS = 256
# A pass's rows are padded to a multiple of this (rows no text reads): OpenBLAS' float32 kernels
# work on blocks of rows, and a product with a ragged last block cost up to 40% more than the next
# multiple of 4 (one core, (15 x 384) @ (384 x 1536): 285 us; (16 x 384): 208 us). A batch's
# groups have hundreds of rows, where a ragged block costs next to nothing.
_ROW_ALIGN = 4
# A thin pass (a query's) multiplies by each weight block by block (``_stack``): for products this
# thin OpenBLAS packs the whole weight before it multiplies, which triples the memory traffic of a
# pass that is bound by reading 42 MB of weights, while a product of at most _UNPACKED
# multiply-adds it runs directly on the operands. Blocks of _INNER x _WIDTH keep a pass of up to
# _FEW_ROWS rows under that. One core, a query pass of 8 rows: 9.4 ms whole, 4.5 ms by blocks; 32
# rows (a few queries batched): 14.1 and 9.3 ms (docs/benchmarks.md, "Thin query passes").
_UNPACKED = 1_000_000
_INNER = 384
_WIDTH = 64
_FEW_ROWS = _UNPACKED // (_INNER * _WIDTH)  # 40
# Attention scores computed at once (1 MB): a few of a text's heads, in a core's cache.
_SCORES = 1 << 18


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


@dataclass(frozen=True, slots=True)
class _Stacked:
    """A layer's weights in blocks for thin products (see ``_stack``)."""

    qkv: F32
    out: F32
    up: F32
    down: F32


def _stack(weight: F32) -> F32:
    """``weight`` (inner, cols) as contiguous ``(inner chunks, column blocks, _INNER, _WIDTH)``
    blocks (a dimension that does not divide by its block size stays whole)."""
    inner, cols = weight.shape
    rows = _INNER if inner % _INNER == 0 else inner
    width = _WIDTH if cols % _WIDTH == 0 else cols
    blocks = weight.reshape(inner // rows, rows, cols // width, width).transpose(0, 2, 1, 3)
    return np.ascontiguousarray(blocks)


def _times(x: F32, weight: F32, stacked: F32 | None) -> F32:
    """``x @ weight``, block by block when the weight's ``stacked`` blocks are given."""
    if stacked is None:
        return np.asarray(x @ weight, dtype=np.float32)
    chunks, blocks, inner, width = stacked.shape
    parts = x.reshape(len(x), chunks, inner).transpose(1, 0, 2)[:, None] @ stacked  # one BLAS call a block
    summed = parts.sum(axis=0) if chunks > 1 else parts[0]  # (blocks, rows, width)
    return np.asarray(summed.transpose(1, 0, 2).reshape(len(x), blocks * width), dtype=np.float32)


def dequantise(q: npt.NDArray[np.int8], scale: F32) -> F32:
    """``q`` (rows, cols) times one scale per group of ``cols // scale.shape[1]`` values of a row."""
    rows, cols = q.shape
    groups = scale.shape[1]
    grouped = q.reshape(rows, groups, cols // groups).astype(np.float32)
    grouped *= scale[:, :, None]
    return grouped.reshape(rows, cols)


class MiniLM:
    """Token ids -> unit sentence vectors. Thread-safe: immutable after construction, but for the
    weights' column blocks, made once under a lock on the first thin pass that asks for them."""

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
        self._stacked: list[_Stacked] | None = None
        self._stack_lock = threading.Lock()

    @property
    def dimensions(self) -> int:
        return self.config.hidden

    def encode(
        self,
        batch: Sequence[Sequence[int]],
        pair: Pair | None = None,
        *,
        thin: bool = False,
    ) -> F32:
        """Unit mean-pooled vectors of ``batch``, shape ``(len, hidden)``, in input order.

        A batch (neither ``pair`` nor ``thin``) is packed: every text's rows one after another,
        no padding, so the matrix products and the row-wise steps run on real word pieces only;
        attention runs over each run of texts of one length (sorted here). With ``pair`` or
        ``thin`` (a query: a caller waits) the batch is padded to its longest row and masked, one
        attention run for all.

        With ``pair``, each layer runs as two halves (heads 0-5 and 6-11 with their share of the
        output projection, then each half of the feed-forward units) whose partial sums are added:
        two hand-offs per layer let a short input use two cores. The result is the same up to
        float rounding.

        With ``thin``, a pass of at most ``_FEW_ROWS`` rows multiplies by the weights' column
        blocks, made on the first such pass (another 42 MB, so only where asked for), on one core
        whatever ``pair`` says; the result is the same up to float rounding.
        """
        lengths = [len(ids) for ids in batch]
        if pair is None and not thin:
            order = sorted(range(len(batch)), key=lengths.__getitem__)
            runs = [(len(list(same)), n) for n, same in itertools.groupby(lengths[i] for i in order)]
            ids = np.fromiter(itertools.chain.from_iterable(batch[i] for i in order), np.int64, sum(lengths))
            positions = np.concatenate([np.arange(lengths[i]) for i in order])
            starts = itertools.accumulate((lengths[i] for i in order), initial=0)
            spans, bias = [(start, lengths[i]) for start, i in zip(starts, order, strict=False)], None
        else:
            order, width = list(range(len(batch))), max(lengths)
            runs = [(len(batch), width)]
            padded = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.float32)
            for row, seq in enumerate(batch):
                padded[row, : len(seq)] = seq
                mask[row, : len(seq)] = 1.0
            ids, positions = padded.ravel(), np.tile(np.arange(width), len(batch))
            spans = [(row * width, n) for row, n in enumerate(lengths)]
            # Rows of one length need no mask at all (a single query is the common case).
            bias = ((1.0 - mask) * _MASKED)[:, None, None, :] if mask.min() == 0.0 else None
        # Rows no text owns, up to a multiple of _ROW_ALIGN: never attended to, never pooled.
        extra = -len(ids) % _ROW_ALIGN
        x = self._embed(np.pad(ids, (0, extra)), np.pad(positions, (0, extra)))
        stacks: list[_Stacked] | list[None] = [None] * len(self._layers)
        if thin and len(x) <= _FEW_ROWS:
            # On one core: such a pass is bound by reading the weights, and two cores reading
            # halves of them took more CPU and no less time than one reading all (7.9 ms of wall
            # and 12.4 of CPU against 4.5 and 4.5, 8 rows).
            stacks, pair = self._stacks(), None
        for layer, stacked in zip(self._layers, stacks, strict=True):
            if pair is None:
                x = self._block(x, layer, stacked, runs, bias)
            else:
                x = self._halved_block(x, layer, runs, bias, pair)
        pooled = np.empty((len(batch), self.config.hidden), dtype=np.float32)
        for i, (start, n) in zip(order, spans, strict=True):
            pooled[i] = x[start : start + n].mean(axis=0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.maximum(norms, 1e-12), dtype=np.float32)

    def _embed(self, ids: npt.NDArray[np.int64], positions: npt.NDArray[np.int64]) -> F32:
        words = dequantise(self._words[ids], self._word_scales[ids])
        return self._layer_norm(words + self._positions[positions] + self._token_type, self._norm)

    def _stacks(self) -> list[_Stacked] | list[None]:
        if self._stacked is None:
            with self._stack_lock:
                if self._stacked is None:
                    self._stacked = [
                        _Stacked(_stack(la.qkv), _stack(la.out), _stack(la.up), _stack(la.down))
                        for la in self._layers
                    ]
        return self._stacked

    def _block(self, x: F32, layer: _Layer, st: _Stacked | None, runs: Runs, bias: F32 | None) -> F32:
        qkv = _times(x, layer.qkv, None if st is None else st.qkv)
        qkv += layer.qkv_bias
        attended = _times(self._attend(qkv, runs, bias, 2), layer.out, None if st is None else st.out)
        attended += layer.out_bias
        attended += x
        x = self._layer_norm(attended, layer.norm1)
        out: F32 = np.empty_like(x)
        # The feed-forward part row block by row block: its 4x wider activations (and GELU's
        # temporaries) stay a few MB and in cache, whatever the batch size.
        for start in range(0, x.shape[0], _FFN_ROWS):
            rows = x[start : start + _FFN_ROWS]
            hidden = _times(rows, layer.up, None if st is None else st.up)
            hidden += layer.up_bias
            _gelu_inplace(hidden)
            block = out[start : start + _FFN_ROWS]
            if st is None:
                np.matmul(hidden, layer.down, out=block)
            else:
                block[...] = _times(hidden, layer.down, st.down)
            block += layer.down_bias
            block += rows
        return self._layer_norm(out, layer.norm2)

    def _halved_block(self, x: F32, layer: _Layer, runs: Runs, bias: F32 | None, pair: Pair) -> F32:
        hidden = self.config.hidden
        qkv_cols, head_rows, units = 3 * hidden // 2, hidden // 2, layer.up.shape[1] // 2

        def attention(half: int) -> F32:  # half of the heads, and their part of the output projection
            cols = slice(half * qkv_cols, (half + 1) * qkv_cols)
            qkv = x @ layer.qkv[:, cols]
            qkv += layer.qkv_bias[cols]
            return self._attend(qkv, runs, bias, 1) @ layer.out[half * head_rows : (half + 1) * head_rows]

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

    def _attend(self, qkv: F32, runs: Runs, bias: F32 | None, halves: int) -> F32:
        """Self-attention within each text of the heads whose q/k/v columns ``qkv`` holds
        (``halves`` halves of the heads, laid out as in ``_Layer.qkv``): ``runs`` are (texts,
        length) of consecutive texts of one length, ``bias`` masks padding (one run). Returns
        their context, ``(rows, heads * size)``; rows no text owns stay 0."""
        heads = halves * self.config.heads // 2
        size = self.config.hidden // self.config.heads
        context = np.zeros((len(qkv), heads * size), dtype=np.float32)
        start = 0
        for texts, width in runs:
            end = start + texts * width
            # (texts, width, halves, 3, heads, size) -> three (texts * halves * heads, width, size)
            parts = qkv[start:end].reshape(texts, width, halves, 3, heads // halves, size)
            q, k, v = np.ascontiguousarray(parts.transpose(3, 0, 2, 4, 1, 5)).reshape(3, -1, width, size)
            masks = (
                None if bias is None else np.repeat(bias[:, 0], heads, axis=0)
            )  # (texts * heads, 1, width)
            attended = np.empty_like(q)
            # A few (text, head) matrices at a time: their scores stay in a core's cache (one text
            # of 256 pieces, all heads at once: 2.9 ms a layer; 2 to 4 heads at a time: 2.2 ms).
            step = max(1, _SCORES // (width * width))
            for at in range(0, len(q), step):
                cut = slice(at, at + step)
                scores = q[cut] @ k[cut].transpose(0, 2, 1)
                if masks is not None:
                    scores += masks[cut]
                scores -= scores.max(axis=-1, keepdims=True)
                np.exp(scores, out=scores)
                # Normalised after the product, which has size columns where the scores have width.
                np.matmul(scores, v[cut], out=attended[cut])
                attended[cut] /= scores.sum(axis=-1, keepdims=True)
            context[start:end] = (
                attended.reshape(texts, heads, width, size).transpose(0, 2, 1, 3).reshape(end - start, -1)
            )
            start = end
        return context

    def _layer_norm(self, x: F32, params: tuple[F32, F32]) -> F32:
        centred: F32 = x - x.mean(axis=-1, keepdims=True)
        # The variance as one product per row (no squared copy): 0.75 ms against 0.95 for 1,024 rows.
        scale = np.einsum("ij,ij->i", centred, centred)[:, None]
        scale *= np.float32(1.0 / x.shape[-1])
        scale += np.float32(self.config.eps)
        np.sqrt(scale, out=scale)
        np.divide(np.float32(1.0), scale, out=scale)
        centred *= scale
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
