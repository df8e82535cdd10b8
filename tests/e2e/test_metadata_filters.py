"""Custom metadata and metadata filters through the Python API, on real SQLite (and the scenario
on PostgreSQL): capture with metadata, then search, recall and listings filtered by it; bounds;
the export round trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata import FakeClock, InputError, Memory
from memstrata.embeddings.hashing import HashingEmbedder
from tests.support.metadata_scenario import CRM, capture_two_apps, check_filters


def test_capture_with_metadata_then_filtered_reads(empty_memory: Memory) -> None:
    capture_two_apps(empty_memory, "ann")
    check_filters(empty_memory, "ann")


def test_capture_with_metadata_then_filtered_reads_on_postgresql(postgres_url: str) -> None:
    with Memory.open(postgres_url, clock=FakeClock(), embedder=HashingEmbedder(64)) as mem:
        capture_two_apps(mem, "ann")
        check_filters(mem, "ann")


@pytest.mark.parametrize(
    ("metadata", "words"),
    [
        ("crm", "must be a JSON object"),
        ({"blob": "x" * 20_000}, "at most 16384 bytes"),
        ({"n": float("nan")}, "must be JSON"),
        ({1: "x"}, "keys must be strings"),
        ({"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {"i": {"j": {"k": 1}}}}}}}}}}}, "levels deep"),
    ],
)
def test_bad_metadata_is_an_input_error_naming_the_message(
    empty_memory: Memory, metadata: object, words: str
) -> None:
    ok = {"role": "user", "content": "fine"}
    with pytest.raises(InputError, match=words) as bad:
        empty_memory.capture([ok, {"role": "user", "content": "x", "metadata": metadata}])
    assert bad.value.item == "messages[1].metadata"
    assert empty_memory.messages() == []  # nothing of the batch was stored


def test_remember_keeps_its_metadata_on_the_note_message_too(empty_memory: Memory) -> None:
    atom = empty_memory.remember("Ann is allergic to peanuts", metadata={"app": "crm"})
    note = empty_memory.get_message(atom.source_message_ids[0])
    assert note.metadata == {"app": "crm"}
    assert [h.id for h in empty_memory.search("peanuts", filters={"app": "crm"}, layers=("L1",))] == [atom.id]
    assert empty_memory.search("peanuts", filters={"app": "erp"}).hits == ()


def test_message_metadata_survives_export_and_import(empty_memory: Memory, tmp_path: Path) -> None:
    capture_two_apps(empty_memory, "ann")
    before = empty_memory.messages(user_id="ann")
    for layout in ("jsonl", "tdai"):
        out = tmp_path / layout
        empty_memory.export(out, format=layout, user_id="ann", agent_id="default")
        with Memory.open(
            tmp_path / f"copy-{layout}", clock=FakeClock(), embedder=HashingEmbedder(64)
        ) as copy:
            copy.import_export(out)
            after = copy.messages(user_id="ann")
            assert [(m.id, m.metadata) for m in after] == [(m.id, m.metadata) for m in before]
            assert [m.metadata for m in copy.messages(user_id="ann", filters={"ticket": 7})] == [CRM]
