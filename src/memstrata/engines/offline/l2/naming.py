"""What a scene is called: the topic most of its atoms are about, in words a person would use
(``fitness``, ``work``, ``饮食与健康``), and a new name when the content drifts from the old one.

A scene is founded under one of its atoms' label words, which can be a pair of keywords
(``allergic-lisbon``, ``pipeline``) that later content no longer fits. When a scene changes and
half or more of its atoms carry one topic of the topic lexicon while its name is no topic (or a
topic fewer than a third of them carry), it takes that topic's name, if no other scene has it.

An atom carries a topic through its label's words or through its own words: a keyword label
(``bouldering-clears``, made when the lexicon lacked the word, or an LLM's ``climbing-trip``)
names no topic, and judged by labels alone a scene filling with such atoms never drifted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from memstrata.engines.offline.l1.labels import TOPIC_NAMES as ENGLISH_TOPICS
from memstrata.engines.offline.l1.labels import topics_in
from memstrata.engines.offline.l2.topics import tokens
from memstrata.engines.offline.packs import topic_names
from memstrata.layers.l2.names import stem_of
from memstrata.models import Atom

TOPIC_SHARE = 0.5  # of a scene's atoms carrying one topic: the scene is about it
KEPT_SHARE = 1 / 3  # of a scene's atoms still carrying its topic name: the name still fits


def carried(a: Atom, skip: frozenset[str] = frozenset()) -> frozenset[str]:
    """The topics ``a`` carries: its label's topic words and the topics its content's words name."""
    names = topic_names()
    return frozenset(t for t in tokens(a, skip) if t in ENGLISH_TOPICS or t in names) | topics_in(
        a.content, skip
    )


def main_topic(members: Sequence[Atom], skip: frozenset[str] = frozenset()) -> str | None:
    """The topic at least ``TOPIC_SHARE`` of ``members`` carry (ties: alphabetical)."""
    counts = Counter(t for a in members for t in carried(a, skip))
    if not counts:
        return None
    best, n = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return best if n >= TOPIC_SHARE * len(members) else None


def better_name(name: str, members: Sequence[Atom], skip: frozenset[str] = frozenset()) -> str | None:
    """The topic ``name`` should give way to, or None when it still says what the scene holds."""
    stem = stem_of(name)
    best = main_topic(members, skip)
    if best is None or best == stem:
        return None
    if stem in ENGLISH_TOPICS or stem in topic_names():
        carrying = sum(1 for a in members if stem in tokens(a, skip) or stem in carried(a, skip))
        if carrying >= KEPT_SHARE * len(members):
            return None
    return best
