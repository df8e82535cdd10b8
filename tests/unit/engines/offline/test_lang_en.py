"""The English pack writes the framing of English atoms from their parts, and records the parts."""

from __future__ import annotations

import pytest

from memstrata.engines.offline import extract_window
from memstrata.engines.offline.draft import Form, Parts, core_text, form_of
from memstrata.engines.offline.lang import pack_for
from memstrata.engines.offline.lang.en import ENGLISH
from memstrata.models import Atom, AtomType, Tenant
from tests.unit.engines.offline.conftest import WindowFactory

WRITTEN = [
    (Parts(Form.STATEMENT, "Maya", "Maya moved to Lisbon."), "Maya moved to Lisbon."),
    (Parts(Form.QUOTE, "Maya", "Tom is moving in June."), "Maya said: Tom is moving in June."),
    (
        Parts(Form.ANSWER, "Maya", "Since 2016.", asker="Mel", question="How long have you painted?"),
        "Mel asked: How long have you painted? Maya answered: Since 2016.",
    ),
    (Parts(Form.PHOTO, "Maya", "a sunset over the lake"), "Maya shared a photo of a sunset over the lake."),
    (Parts(Form.INSTRUCTION, "Maya", "Answer in short bullet points."), "Answer in short bullet points."),
]


@pytest.mark.parametrize(("parts", "text"), WRITTEN)
def test_the_english_pack_writes_each_form(parts: Parts, text: str) -> None:
    assert ENGLISH.write(parts) == text


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("I moved to Lisbon last week.", "en"),
        ("我上周刚搬到深圳。", "zh"),
        ("我在Google工作", "zh"),
        ("I love 北京烤鸭 so much", "en"),
        ("ok", "en"),
    ],
)
def test_the_pack_is_chosen_per_message(text: str, lang: str) -> None:
    assert pack_for(text).code == lang


def test_an_answer_records_its_parts_and_l2_reads_them(window: WindowFactory) -> None:
    drafts = extract_window(
        window([("Mel", "How long have you been painting?"), ("Ann", "Since 2016, mostly lakes.")])
    )
    (qa,) = [d for d in drafts if d.metadata.get("form") == "answer"]
    assert qa.content == "Mel asked: How long has Ann been painting? Ann answered: Since 2016, mostly lakes."
    assert qa.metadata["asker"] == "Mel"
    assert qa.metadata["statement"] == "Since 2016, mostly lakes."
    stored = Atom(
        id="a", tenant=Tenant(), type=AtomType.PERSONA, content=qa.content, metadata=dict(qa.metadata)
    )
    assert form_of(stored) is Form.ANSWER
    assert core_text(stored) == "Since 2016, mostly lakes."


def test_an_atom_stored_before_the_parts_is_read_from_its_text() -> None:
    old = Atom(id="a", tenant=Tenant(), type=AtomType.PERSONA, content="Mel said: Tom is moving in June.")
    assert form_of(old) is Form.QUOTE
    assert core_text(old) == "Tom is moving in June."


def test_a_recorded_statement_the_content_no_longer_holds_gives_way_to_the_content() -> None:
    edited = Atom(
        id="a",
        tenant=Tenant(),
        type=AtomType.PERSONA,
        content="Maya said: Tom moved in July.",
        metadata={"form": "quote", "statement": "Tom is moving in June."},
    )
    assert core_text(edited) == "Maya said: Tom moved in July."


STANDALONE = [
    # "here" is the one place the speaker named just before
    (
        [("Maya", "I work at a startup in Lisbon."), ("Maya", "I moved here from Porto.")],
        "Maya moved to Lisbon from Porto.",
    ),
    (
        [("Maya", "We spent a week in Kyoto."), ("Maya", "I visited three temples there.")],
        "Maya visited three temples in Kyoto.",
    ),
    # two places named: "here" stays
    (
        [("Maya", "I flew from Paris to Rome."), ("Maya", "I love it here.")],
        "Maya loves it here.",
    ),
    # an object "it" is the thing the sentence before was about
    (
        [("Maya", "My Airflow pipeline broke again. I'm migrating it to Dagster.")],
        "Maya is migrating Maya's Airflow pipeline to Dagster.",
    ),
    # discourse fillers go
    ([("Maya", "I'm allergic to peanuts, by the way.")], "Maya is allergic to peanuts."),
    # "and I" opening a clause agrees; "my wife and I" stays plural
    ([("Maya", "I'm vegan and I live in Porto.")], "Maya is vegan and Maya lives in Porto."),
    ([("Tom", "My wife and I live in Porto.")], "Tom's wife and Tom live in Porto."),
]


@pytest.mark.parametrize(("turns", "atom"), STANDALONE)
def test_an_english_atom_stands_alone(window: WindowFactory, turns: list[tuple[str, str]], atom: str) -> None:
    drafts = extract_window(window(turns))
    assert atom in [d.content for d in drafts]


def test_a_user_without_a_name_takes_the_one_name_the_window_gives(window: WindowFactory) -> None:
    turns = [("Maya", "I live in Porto."), (None, "I'm vegan.")]
    drafts = extract_window(window(turns))
    assert [d.content for d in drafts] == ["Maya lives in Porto.", "Maya is vegan."]
