"""Who "the user" is in a persona: the name they go by, read into their facts."""

from __future__ import annotations

import pytest

from memstrata.engines.offline.lang.en import named


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "The user lives in Porto and the user works at a clinic.",
            "Ana lives in Porto and Ana works at a clinic.",
        ),
        ("The user's name is Ana and the user lives in Porto.", "Ana lives in Porto."),
        ("The user's name is Ana.", ""),  # the heading names her already
        ("The user keeps the user experience simple.", "Ana keeps the user experience simple."),
        ("The user table has an id.", "The user table has an id."),
    ],
)
def test_the_user_is_read_as_their_name(text: str, expected: str) -> None:
    assert named(text, "Ana") == expected
