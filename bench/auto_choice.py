"""Which model ``auto`` (with memstrata[multilingual]) gives each conversation's store, and by how
much: the rule has no fitted constant, so this shows how far every conversation is from its edge.

    python bench/auto_choice.py [--data LOCOMO.json]

A store is chosen by its first messages (``select.SAMPLE_MESSAGES``, 64) with the language packs'
rule: Chinese when Han characters / 2 outnumber Latin words. Printed per conversation (the LoCoMo
dev set, the Chinese set's conversations and its mixed one), for its first capture (the first two
messages, a live agent's first turn) and for the first 64 (an import): the ratio (Han / 2 over
Latin words; above 1 is Chinese) and the model chosen.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _dev_set import DEV_SET
from memstrata.embeddings.select import SAMPLE_MESSAGES, ByScript, embedder_from_settings
from memstrata.settings import EmbeddingSettings

ZH_SET = Path(__file__).resolve().parent / "data" / "zh_conversations.json"
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]+")


def ratio(texts: Sequence[str]) -> float:
    joined = "\n".join(texts)
    return len(_HAN.findall(joined)) / 2 / max(1, len(_LATIN.findall(joined)))


def locomo(path: Path) -> list[tuple[str, list[str]]]:
    out = []
    for s in json.loads(path.read_text(encoding="utf-8")):
        conv, texts, n = s["conversation"], [], 1
        while f"session_{n}" in conv:
            texts += [t["text"] for t in conv[f"session_{n}"]]
            n += 1
        out.append((f"LoCoMo {s['sample_id']}", texts))
    return out


def zh_set() -> list[tuple[str, list[str]]]:
    data = json.loads(ZH_SET.read_text(encoding="utf-8"))
    out = []
    for title, convs in (("zh", data["conversations"]), ("mixed", data["mixed"])):
        for c in convs:
            texts = [m["content"] for s in c["sessions"] for turn in s["conversations"] for m in turn]
            out.append((f"{title} {c['user_id']}", texts))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEV_SET)
    a = ap.parse_args()
    choice = embedder_from_settings(EmbeddingSettings())
    if not isinstance(choice, ByScript):
        print("auto does not choose by script here (memstrata[multilingual] is not installed)")
        return 1
    print(f"{'conversation':<24} {'first 2: ratio':>14} {'model':<34} {'first 64: ratio':>15} model")
    for name, texts in [*locomo(a.data), *zh_set()]:
        first, sample = texts[:2], texts[:SAMPLE_MESSAGES]
        print(
            f"{name:<24} {ratio(first):>14.2f} {choice.for_texts(first).name:<34} "
            f"{ratio(sample):>15.2f} {choice.for_texts(sample).name}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
