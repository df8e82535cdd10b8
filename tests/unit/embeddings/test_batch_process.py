"""The batch process: a real child at the lowest CPU priority gives a server's background batches
the vectors of the in-process pass, and whatever happens to it the batch is embedded anyway."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from memstrata.embeddings import query_process
from memstrata.embeddings.local import DATA_DIR, LocalEmbedder
from memstrata.embeddings.query_process import BATCH_TIMEOUT_S, TIMEOUT_S, QueryProcess
from memstrata.embeddings.select import embedder_from_settings
from memstrata.settings import EmbeddingSettings
from tests.unit.embeddings.children import child_pid, running_child, wait_for
from tests.unit.embeddings.local_texts import AWKWARD

# Captured messages and atoms of several lengths: the child groups them by length, as the server did.
TEXTS = [
    "I moved to Lisbon last spring and started a pottery class.",
    "Caroline's birthday is on the 4th of May; she wants a bike.",
    "ok",
    "The meeting about the garden project moved to Thursday at six, in the library's back room. " * 6,
    *AWKWARD,
]


def nice_values(pid: int) -> list[int]:
    """The nice value of each thread of ``pid``."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        # stat: the command sits in parentheses and may hold spaces; nice is field 19.
        fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        found.append(int(fields[16]))
    return found


@pytest.fixture
def batching() -> Iterator[QueryProcess]:
    with running_child(batches=True) as process:
        yield process


@pytest.fixture(scope="module")
def in_process() -> LocalEmbedder:
    return LocalEmbedder()


@pytest.fixture
def no_children(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No child of an earlier test is shared into this one; this test's children end with it."""
    children: dict[tuple[Path, bool], QueryProcess] = {}
    monkeypatch.setattr(query_process, "_children", children)
    yield
    for process in children.values():
        process.close()


def test_the_batch_child_gives_the_vectors_of_a_batch_in_process(
    batching: QueryProcess, in_process: LocalEmbedder
) -> None:
    got = batching.embed(TEXTS)
    assert got is not None and got.shape == (len(TEXTS), 384) and got.dtype == np.float32
    np.testing.assert_allclose(got, in_process.embed(TEXTS), atol=1e-5)
    assert (batching.passes, batching.failures) == (1, 0)


def test_the_batch_child_runs_at_the_lowest_priority_and_waits_longer(batching: QueryProcess) -> None:
    assert batching.embed(TEXTS) is not None  # its batch workers have started too
    nice = nice_values(child_pid(batching))
    assert len(nice) > 1 and set(nice) == {19}  # BLAS' threads, started at numpy's import, included
    assert batching._timeout_s == BATCH_TIMEOUT_S > TIMEOUT_S  # a starved batch is not a hung child


def test_a_batch_too_big_for_one_frame_is_left_to_the_caller_and_the_child_kept(
    batching: QueryProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(query_process, "_MAX_FRAME", 2000)  # one row back is 1,537 bytes
    assert batching.embed(["word " * 400]) is None
    assert (batching.failures, batching.state) == (0, "running")
    assert batching.embed(["a short one"]) is not None


def test_a_local_embedder_with_a_batch_process_embeds_there_and_reports_it(
    in_process: LocalEmbedder, no_children: None
) -> None:
    served = LocalEmbedder(batch_process=True)
    child = query_process.shared(DATA_DIR, 384, batches=True)
    assert LocalEmbedder(batch_process=True)._batcher is child  # one child per model and role
    assert query_process.shared(DATA_DIR, 384) is not child  # the query process is another
    early = served.embed(TEXTS)  # starting or running: either way the right vectors
    wait_for(child, "running")
    got = served.embed(TEXTS)
    report = served.query_report()
    np.testing.assert_allclose(early, in_process.embed(TEXTS), atol=1e-5)
    np.testing.assert_allclose(got, in_process.embed(TEXTS), atol=1e-5)
    assert (report.batch_process, report.batch_process_failures) == ("running", 0)
    assert report.batch_process_passes >= 1 and report.process == "off"
    assert in_process.query_report().batch_process == "off"


def test_a_killed_batch_child_loses_no_batch(in_process: LocalEmbedder, no_children: None) -> None:
    served = LocalEmbedder(batch_process=True)
    child = query_process.shared(DATA_DIR, 384, batches=True)
    wait_for(child, "running")
    os.kill(child_pid(child), signal.SIGKILL)
    got = served.embed(TEXTS)  # the server's own pass, this once
    np.testing.assert_allclose(got, in_process.embed(TEXTS), atol=1e-5)
    assert child.failures == 1
    wait_for(child, "running")
    np.testing.assert_allclose(served.embed(TEXTS[:2]), in_process.embed(TEXTS[:2]), atol=1e-5)
    assert served.query_report().batch_process_passes >= 1


def test_a_server_warmed_with_both_children_loads_no_weights_of_its_own(no_children: None) -> None:
    served = LocalEmbedder(query_process=True, batch_process=True)
    served.warm_up(60)
    report = served.query_report()
    assert (report.process, report.batch_process) == ("running", "running")
    assert served._loaded is None  # every pass runs in a child: no weights in the server


@pytest.mark.parametrize(
    ("query", "batch", "expected"),
    [
        (True, None, (True, True)),
        (True, False, (True, False)),
        (None, None, (False, False)),
        (False, True, (False, True)),
    ],
)
def test_the_batch_process_follows_the_query_process_unless_set(
    query: bool | None, batch: bool | None, expected: tuple[bool, bool], no_children: None
) -> None:
    settings = EmbeddingSettings(provider="local", query_process=query, batch_process=batch)
    embedder = embedder_from_settings(settings)
    assert isinstance(embedder, LocalEmbedder)
    assert (embedder._process is not None, embedder._batcher is not None) == expected
