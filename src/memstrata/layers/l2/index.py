"""The scene index (``.metadata/scene_index.json``) and which scene holds which atom.

The index is derived: META fields come from the scene files on disk, atom ids from the pipeline's
membership map (atom id -> scene file), which survives renames and merges. Atoms whose scene
vanished (a writer merged it away) are attributed to the most similar remaining scene.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from memstrata.errors import StoreError
from memstrata.layers.l2.scene_file import format_time, parse_time
from memstrata.models import Atom, Scene, SceneEntry
from memstrata.retrieval.terms import STOPWORDS

INDEX_VERSION = 1
_WORD = re.compile(r"[^\W_]{3,}", re.UNICODE)
# Words that say nothing about a topic: the shared stopwords, and the verbs atoms are told with.
_FILLER = STOPWORDS | frozenset("said says asked answered shared photo".split())


def rebuild(
    scenes: Sequence[Scene], membership: Mapping[str, str], seq_of: Mapping[str, int]
) -> list[SceneEntry]:
    """One entry per scene file, by name, with the atom ids ``membership`` gives it, by atom seq."""
    holders: dict[str, list[str]] = {}
    for atom_id, name in membership.items():
        holders.setdefault(name, []).append(atom_id)
    entries = []
    for s in sorted(scenes, key=lambda s: s.name):
        ids = sorted(holders.get(s.name, ()), key=lambda i: (seq_of.get(i, 1 << 62), i))
        entries.append(SceneEntry(s.name, s.summary, s.heat, s.created, s.updated, tuple(ids)))
    return entries


def to_json(entries: Sequence[SceneEntry]) -> str:
    """The index file's text."""
    doc = {
        "version": INDEX_VERSION,
        "scenes": [
            {
                "filename": e.name,
                "summary": e.summary,
                "heat": e.heat,
                "created": format_time(e.created),
                "updated": format_time(e.updated),
                "atom_ids": list(e.atom_ids),
            }
            for e in entries
        ],
    }
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def from_json(text: str) -> list[SceneEntry]:
    """Entries of an index file. Raises ``StoreError`` when it is not one."""
    try:
        doc = json.loads(text)
        return [_entry(item) for item in doc["scenes"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise StoreError(f"scene index is malformed: {exc}") from exc


def _entry(item: Mapping[str, Any]) -> SceneEntry:
    created = parse_time(str(item.get("created", ""))) or 0
    return SceneEntry(
        name=str(item["filename"]),
        summary=str(item.get("summary", "")),
        heat=int(item.get("heat", 0)),
        created=created,
        updated=parse_time(str(item.get("updated", ""))) or created,
        atom_ids=tuple(str(i) for i in item.get("atom_ids", ())),
    )


def words(text: str) -> set[str]:
    """Lowercase content words of ``text`` (3+ letters, filler removed): the attribution features."""
    return {w for w in _WORD.findall(text.lower()) if w not in _FILLER}


def attribute(atoms: Iterable[Atom], scenes: Sequence[Scene]) -> dict[str, str]:
    """Each atom's most similar scene by shared words, weighted by rarity across ``scenes``
    (a name on every scene decides nothing). Ties go to the hotter scene, then the name.
    Returns ``{}`` when there is no scene."""
    if not scenes:
        return {}
    bags = [words(f"{s.name} {s.summary} {s.body}") for s in scenes]
    df = Counter(w for bag in bags for w in bag)
    weight = {w: math.log(1 + len(scenes) / n) for w, n in df.items()}
    order = sorted(range(len(scenes)), key=lambda i: (-scenes[i].heat, scenes[i].name))
    out: dict[str, str] = {}
    for a in atoms:
        mine = words(a.content)
        best = max(order, key=lambda i: sum(weight[w] for w in mine & bags[i]))
        out[a.id] = scenes[best].name
    return out
