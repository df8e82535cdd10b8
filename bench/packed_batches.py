"""Batch embedding packed (every text's own rows, no padding) vs padded (groups of similar length
padded to their longest text and masked), and packed with attention over all of a run's heads at
once instead of a few at a time, on the same texts, alternated, one core.

    python bench/packed_batches.py [--data BEAM.json] [--sessions N] [--rounds 3]

The texts are what an import embeds: each message's vector text (``message_vector_text``), one
batch per session as capture makes it, from BEAM dev by default (long technical turns: about half
reach the model's 256 word pieces). Each round runs every batch both ways (the order alternates
from round to round) in this thread with BLAS on one thread, and counts this thread's CPU time.
Prints word pieces, padded rows, the CPU times and packed over each other way; the largest
difference between the ways' vectors is printed too (float rounding: the same vectors).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from memstrata.blas import single_threaded_blas
from memstrata.embeddings import minilm
from memstrata.embeddings.local import LocalEmbedder, _groups
from memstrata.interchange.seed import parse_seed
from memstrata.models import Message, Role, Tenant
from memstrata.retrieval.documents import message_vector_text

BEAM = Path(__file__).resolve().parents[2] / "shared" / "data" / "beam" / "beam-dev.json"


def batches(data: Path, sessions: int) -> list[list[str]]:
    """Each session's message vector texts, as capture embeds them (one batch per session)."""
    out = []
    for s in parse_seed(json.loads(data.read_text(encoding="utf-8")))[:sessions]:
        texts = []
        for i, m in enumerate(s.messages):
            stored = Message("", Tenant(), "", "", Role(m.role), m.content, m.timestamp or 0, i, m.name)
            texts.append(message_vector_text(stored))
        out.append(texts)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=BEAM)
    ap.add_argument("--sessions", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    model, tokenizer = LocalEmbedder()._model()
    encoded = [[tokenizer.encode(t) for t in texts] for texts in batches(a.data, a.sessions)]
    pieces = sum(len(ids) for batch in encoded for ids in batch)
    padded_rows = sum(
        len(group) * len(batch[group[0]]) for batch in encoded for group in _groups(batch, packed=False)
    )

    def run(batch: list[list[int]], way: str) -> np.ndarray:
        packed = way != "padded"
        minilm._SCORES = 1 << 40 if way == "all heads" else scores
        out = np.zeros((len(batch), model.dimensions), dtype=np.float32)
        for rows in _groups(batch, packed=packed):
            # thin=True on a group this large pads and masks (the query path) without weight blocks
            out[rows] = model.encode([batch[i] for i in rows], thin=not packed)
        return out

    scores = minilm._SCORES
    ways = ["packed", "padded", "all heads"]
    cpu = dict.fromkeys(ways, 0.0)
    diff = 0.0
    with single_threaded_blas():
        for way in ways:  # warm every path
            run(encoded[0], way)
        for r in range(a.rounds):
            vectors = {}
            for way in ways[r % 3 :] + ways[: r % 3]:
                start = time.thread_time()
                vectors[way] = [run(batch, way) for batch in encoded]
                cpu[way] += time.thread_time() - start
            for way in ways[1:]:
                pairs = zip(vectors["packed"], vectors[way], strict=True)
                diff = max(diff, max(float(np.abs(p - q).max()) for p, q in pairs))
    minilm._SCORES = scores
    texts = sum(len(b) for b in encoded)
    per = {way: cpu[way] / a.rounds for way in ways}
    print(
        f"{texts} texts in {len(encoded)} batches, {pieces} word pieces ({padded_rows} padded rows), "
        f"CPU a round: packed {per['packed']:.2f} s, padded {per['padded']:.2f} s, packed with all heads "
        f"at once {per['all heads']:.2f} s; packed over padded x{per['packed'] / per['padded']:.2f}, over "
        f"all heads at once x{per['packed'] / per['all heads']:.2f} ({a.rounds} rounds); vectors differ "
        f"by at most {diff:.1e}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
