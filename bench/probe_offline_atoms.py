"""Probe: LoCoMo evidence recall of BM25 over offline-engine atoms, beside BM25 over raw turns.

    .venv/bin/python bench/probe_offline_atoms.py [DATA.json] [--show N] [--sample conv-26]

Builds extraction windows the way the L1 pipeline does (per LoCoMo session: windows of 10 new
messages plus the 5 before them as background), runs the offline extractor, then for every question
of categories 1-4 ranks (a) raw turns, (b) atoms (mapped to dia ids via source_message_ids) and
(c) an RRF fusion (k=10) of both item lists, and prints ``score(...)`` for each, the atom count and
the extraction time. The ``+`` variants index records as the store does
(``memstrata.retrieval.documents``: a turn with its speaker, day and the turn before it; an atom
with its scene and day words), the closest keyword-only approximation of the full system. A
diagnostic script, not a test.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rank_bm25 import BM25Okapi

from memstrata.engines.offline import extract_window
from memstrata.engines.offline.l1.extract import ExtractOptions
from memstrata.models import Atom, AtomDraft, ExtractionWindow, Message, Role, Tenant
from memstrata.retrieval.documents import atom_body, message_body

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _dev_set import DEV_SET, load, score

DATA = str(DEV_SET)
STOP = frozenset(
    str.split(
        "a an the is are was were be been to of and or in on at for with i you he she it we they my your me "
        "what when where who how did do does that this"
    )
)
WINDOW, BACKGROUND, DEPTH, RRF_K = 10, 5, 50, 10
NAMES = ("turns", "atoms", "rrf", "turns+", "atoms+", "rrf+")
Item = tuple[str, set[str]]


def toks(text: str) -> list[str]:
    """Lowercased word tokens without stopwords (the tokenisation of locomo_check's baseline)."""
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in STOP]


def session_time(text: str) -> int:
    """A LoCoMo session time such as "1:56 pm on 8 May, 2023" as ms since the epoch (UTC)."""
    dt = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    return int(dt.timestamp() * 1000)


def messages(sample_id: str, turns: Sequence[Any]) -> dict[int, list[Message]]:
    """LoCoMo turns as memstrata messages, grouped by session number."""
    tenant = Tenant(sample_id)
    out: dict[int, list[Message]] = {}
    for t in turns:
        group = out.setdefault(t.session, [])
        ts = session_time(t.date) + 10_000 * len(group)  # a few seconds per turn
        group.append(
            Message(
                id=f"{sample_id}/{t.dia_id}",
                tenant=tenant,
                session_key=f"{sample_id}/session_{t.session}",
                session_id=f"session_{t.session}",
                role=Role.USER,
                content=t.text,
                timestamp=ts,
                recorded_at=ts,
                name=t.speaker,
            )
        )
    return out


def windows(sample_id: str, msgs: Sequence[Message]) -> list[ExtractionWindow]:
    """Windows as the L1 pipeline reads them: 10 new messages, the 5 before them as background."""
    out = []
    for start in range(0, len(msgs), WINDOW):
        new = tuple(msgs[start : start + WINDOW])
        background = tuple(msgs[max(0, start - BACKGROUND) : start])
        out.append(ExtractionWindow(Tenant(sample_id), new[0].session_key, new, background))
    return out


def bm25_rank(docs: Sequence[str]) -> Callable[[str], list[int]]:
    """A function from a query to the indexes of the best ``DEPTH`` documents."""
    bm = BM25Okapi([toks(d) or ["_"] for d in docs])

    def rank(query: str) -> list[int]:
        """Document indexes by descending BM25 score."""
        scores = bm.get_scores(toks(query))
        return sorted(range(len(docs)), key=lambda i: -scores[i])[:DEPTH]

    return rank


def rrf(lists: Sequence[Sequence[Item]]) -> list[Item]:
    """Reciprocal-rank fusion (k=RRF_K) of ranked item lists; ties keep list order."""
    fused: dict[tuple[int, int], float] = {}
    items: dict[tuple[int, int], Item] = {}
    for li, lst in enumerate(lists):
        for rank, item in enumerate(lst):
            key = (li, rank)
            items[key] = item
            fused[key] = 1.0 / (RRF_K + rank + 1)
    order = sorted(fused, key=lambda k: (-fused[k], k))
    return [items[k] for k in order[:DEPTH]]


def dia(sample_id: str, ids: Sequence[str]) -> set[str]:
    """LoCoMo dia ids of ``<sample_id>/<dia_id>`` message ids."""
    return {i[len(sample_id) + 1 :] for i in ids if i.startswith(sample_id + "/")}


def indexed_text(sample_id: str, i: int, d: AtomDraft) -> str:
    """What the store's keyword index holds for an atom (content, scene words, day words)."""
    atom = Atom(
        id=f"{sample_id}/a{i}",
        tenant=Tenant(sample_id),
        type=d.type,
        content=d.content,
        priority=d.priority,
        scene_name=d.scene_name,
        source_message_ids=d.source_message_ids,
        metadata=dict(d.metadata),
    )
    return atom_body(atom)


def _value(text: str) -> Any:
    """An option value from the command line: a boolean word or an integer."""
    low = text.lower()
    if low in ("true", "yes", "false", "no"):
        return low in ("true", "yes")
    return int(text)


def extract_sample(sample_id: str, groups: dict[int, list[Message]], opts: ExtractOptions) -> list[AtomDraft]:
    """Every atom of one conversation, window after window, session after session."""
    atoms: list[AtomDraft] = []
    for group in groups.values():
        for w in windows(sample_id, group):
            atoms.extend(extract_window(w, opts))
    return atoms


def rank_sample(
    sample_id: str,
    turns: Sequence[Any],
    flat: Sequence[Message],
    atoms: Sequence[AtomDraft],
    qs: Sequence[Any],
) -> dict[str, list[list[Item]]]:
    """Per ranking name, the ranked items of each question of one conversation."""
    turn_docs = [f"{t.speaker}: {t.text}" for t in turns]
    turn_items = [(doc, {t.dia_id}) for doc, t in zip(turn_docs, turns, strict=True)]
    atom_items = [(d.content, dia(sample_id, d.source_message_ids)) for d in atoms]
    l0_docs = [message_body(m, flat[i - 1] if i else None) for i, m in enumerate(flat)]
    rankers = {
        "turns": (bm25_rank(turn_docs), turn_items),
        "atoms": (bm25_rank([d.content for d in atoms]), atom_items),
        "turns+": (bm25_rank(l0_docs), turn_items),
        "atoms+": (bm25_rank([indexed_text(sample_id, i, d) for i, d in enumerate(atoms)]), atom_items),
    }
    out: dict[str, list[list[Item]]] = {name: [] for name in NAMES}
    for q in qs:
        lists = {name: [items[i] for i in rank(q.question)] for name, (rank, items) in rankers.items()}
        for name, lst in lists.items():
            out[name].append(lst)
        out["rrf"].append(rrf([lists["turns"], lists["atoms"]]))
        out["rrf+"].append(rrf([lists["turns+"], lists["atoms+"]]))
    return out


def main() -> int:
    """Run the probe and print one line per ranking, then the extraction figures."""
    ap = argparse.ArgumentParser()
    ap.add_argument("data", nargs="?", default=DATA)
    ap.add_argument("--show", type=int, default=0, help="print the first N atoms of each sample")
    ap.add_argument("--sample", default=None, help="only this sample id")
    ap.add_argument("--option", action="append", default=[], help="ExtractOptions field=value (ints/bools)")
    a = ap.parse_args()
    opts = ExtractOptions(**{k: _value(v) for k, v in (o.split("=", 1) for o in a.option)})
    qs_all: list[Any] = []
    ranked: dict[str, list[list[Item]]] = {name: [] for name in NAMES}
    n_atoms = n_msgs = 0
    elapsed = 0.0
    for sid, _, _, turns, qs in (s for s in load(a.data) if a.sample in (None, s[0])):
        groups = messages(sid, turns)
        flat = [m for group in groups.values() for m in group]
        t0 = time.perf_counter()
        atoms = extract_sample(sid, groups, opts)
        elapsed += time.perf_counter() - t0
        n_msgs, n_atoms = n_msgs + len(flat), n_atoms + len(atoms)
        for d in atoms[: a.show]:
            print(f"  [{d.type}|{d.priority}|{d.scene_name}] {d.content}  {list(d.source_message_ids)}")
        for name, lists in rank_sample(sid, turns, flat, atoms, qs).items():
            ranked[name].extend(lists)
        qs_all.extend(qs)
    for name, lists in ranked.items():
        print(f"{name:6s}", score(qs_all, lists))
    rate = n_msgs / elapsed if elapsed else float("inf")
    print(f"atoms {n_atoms} from {n_msgs} messages; extraction {elapsed:.2f} s ({rate:.0f} messages/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
