"""Through the whole engine: a task or difficulty under way ("I'm trying to ...", "I'm not sure how
to ...") is episodic, as a plan is, not a persona fact; what the speaker is, likes or avoids stays
persona in the same kind of sentence."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memstrata.engines.offline import extract_window
from memstrata.models import AtomType, ExtractionWindow

WindowFactory = Callable[..., ExtractionWindow]


def _types(window: WindowFactory, text: str) -> list[AtomType]:
    return [d.type for d in extract_window(window([(None, text, "user")]))]


@pytest.mark.parametrize(
    "text",
    [
        "I'm trying to handle the 429 Too Many Requests error in my apiClient.js with exponential backoff.",
        "I'm not sure how to structure the config for the staging server.",
        "I've been struggling with the proofs in chapter three.",
        "I'm having some trouble getting the validation to fire on the form.",
        "We're still stuck on the migration of the orders table.",
    ],
)
def test_a_task_under_way_is_episodic(window: WindowFactory, text: str) -> None:
    assert _types(window, text) == [AtomType.EPISODIC]


@pytest.mark.parametrize(
    "text",
    [
        "I'm trying to avoid gluten these days.",  # a stated aversion
        "I'm trying to get my daughter to read more.",  # family
        "I live in Porto with two cats.",
        "I work as a nurse at the county hospital.",
    ],
)
def test_what_the_speaker_is_or_avoids_stays_persona(window: WindowFactory, text: str) -> None:
    assert _types(window, text) == [AtomType.PERSONA]
