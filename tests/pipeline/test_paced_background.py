"""The background pipeline waits for lulls in the callers' operations (``memstrata.pace``), and
still gets its work done when the operations never pause."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memstrata import pace
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.memory import AsyncMemory

FACTS = [
    "I moved to Lisbon last spring for a job at a bakery.",
    "My sister Ana is a nurse and lives in Porto.",
    "I am allergic to peanuts, so I never eat satay.",
    "I play the cello in a small orchestra on Thursdays.",
    "My dog Bruno is a three year old beagle.",
]


async def test_atoms_are_extracted_while_recalls_come_without_a_pause(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pace, "MOST_SECONDS", 0.02)
    mem = await AsyncMemory.open(home, embedder=HashingEmbedder(64), background=True)
    try:
        for i, fact in enumerate(FACTS):  # five turns: the session's L1 run is due at once
            await mem.capture(
                [{"role": "user", "content": fact}, {"role": "assistant", "content": f"Noted ({i})."}],
                session_key="s1",
            )
        deadline = time.monotonic() + 30
        recalls = 0
        while (await mem.status()).atoms == 0:
            assert time.monotonic() < deadline, "the paced pipeline never extracted the session"
            for _ in range(20):  # back to back: never a lull of QUIET_SECONDS
                await mem.recall("where does my sister live?")
                recalls += 1
        paced = (await mem.status()).background
        assert recalls >= 20
        assert paced.steps > 0
        assert paced.deferred > 0  # it did wait for the recalls
    finally:
        await mem.close()
