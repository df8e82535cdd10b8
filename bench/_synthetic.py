"""Deterministic synthetic conversation text for the speed benchmarks (seeded, no data files).

Sentences combine people, verbs, adjectives, things, places and times from word lists, so term
frequencies spread the way conversation vocabulary does (many mid-frequency words), instead of a
handful of phrases repeated everywhere.
"""

from __future__ import annotations

import random

PEOPLE = (
    "I We Sam Priya Jonas Mei Tom Ana Lena Omar Yuki Carlos Nina Ravi Sofia Ben Aisha Leo Maria Ivan "
    "Chloe Diego Hana Kofi Elena Noah Zara Felix Ines Arjun"
).split()
VERBS = (
    "visited painted cooked booked planned fixed bought sold found repaired borrowed photographed "
    "cleaned built ordered tried sketched packed shipped tasted"
).split()
ADJECTIVES = (
    "old new tiny huge spicy quiet noisy vintage modern wooden blue red golden broken shiny "
    "handmade local famous rare cheap expensive cozy rusty fresh frozen"
).split()
THINGS = (
    "bicycle cabin recipe guitar camera fence cake trail kayak tent lamp sofa painting scarf "
    "notebook telescope garden piano drone novel teapot jacket violin puzzle aquarium skateboard "
    "backpack mural quilt lantern bonsai canoe typewriter helmet map"
).split()
PLACES = (
    "Lisbon Porto Tokyo Oslo Nairobi Lima Austin Berlin Hanoi Quebec Sydney Dublin Cairo Seoul "
    "Vienna Bogota Krakow Denver Kyoto Tunis"
).split()
TIMES = (
    "yesterday",
    "last week",
    "on Saturday",
    "this morning",
    "two days ago",
    "last summer",
    "tonight",
    "in March",
    "last year",
    "on Friday",
)
EXTRA = ("It was great.", "Honestly, it was stressful.", "I'd love to do it again.", "Can't wait!", "")


def sentences(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [
        f"{rng.choice(PEOPLE)} {rng.choice(VERBS)} a {rng.choice(ADJECTIVES)} {rng.choice(THINGS)} in "
        f"{rng.choice(PLACES)} {rng.choice(TIMES)}. {rng.choice(EXTRA)}".strip()
        for _ in range(n)
    ]


def queries(n: int, seed: int = 13) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.choice(ADJECTIVES)} {rng.choice(THINGS)} in {rng.choice(PLACES)}" for _ in range(n)]
