"""Fixtures named for the state they give, on real SQLite files in tmp_path."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from memstrata import FakeClock, Memory
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.memory import AsyncMemory
from tests.support.engines import NoDedup, RecordingExtractor
from tests.support.openai_server import openai_server  # noqa: F401 - a fixture
from tests.support.parts import memory_from

REPO = Path(__file__).resolve().parents[1]
LOCOMO = REPO.parent / "shared" / "data" / "locomo" / "locomo-dev.json"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def empty_memory(home: Path, clock: FakeClock) -> Iterator[Memory]:
    """A sync Memory on a fresh data dir: offline engine, hashing embedder, fake clock."""
    with Memory.open(home, clock=clock, embedder=HashingEmbedder(64)) as mem:
        yield mem


@pytest.fixture
def keyword_memory(home: Path, clock: FakeClock) -> Iterator[Memory]:
    """A sync Memory with no embedder: search is keyword only."""
    with Memory.open(home, clock=clock, embedder=None) as mem:
        yield mem


@pytest.fixture
def extractor() -> RecordingExtractor:
    return RecordingExtractor()


@pytest.fixture
async def recording_memory(
    home: Path, clock: FakeClock, extractor: RecordingExtractor
) -> AsyncIterator[AsyncMemory]:
    """An AsyncMemory whose L1 engine records its windows (no dedup): for scheduler rules."""
    mem = memory_from(home, clock, extractor, NoDedup())
    yield mem
    await mem.close()


@pytest.fixture
def locomo_sample(tmp_path: Path) -> Path:
    """The first LoCoMo conversation of the dev set, cut to its first two sessions."""
    if not LOCOMO.exists():
        pytest.skip("LoCoMo dev set not present")
    sample = json.loads(LOCOMO.read_text())[0]
    conv = sample["conversation"]
    keep = {k: v for k, v in conv.items() if not k.startswith("session_")}
    for n in (1, 2):
        keep[f"session_{n}"] = conv[f"session_{n}"]
        keep[f"session_{n}_date_time"] = conv[f"session_{n}_date_time"]
    sample["conversation"] = keep
    path = tmp_path / "locomo-two-sessions.json"
    path.write_text(json.dumps([sample]))
    return path
