"""Who "the user" is in a persona: the name they go by, read into their facts."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.engines.offline.atom_text import people
from memstrata.engines.offline.l3.writer import OfflinePersonaWriter
from memstrata.engines.offline.lang.en import named
from memstrata.models import Atom, AtomType, Tenant
from memstrata.ports import PersonaRequest
from memstrata.stores.files.folder import DirectoryFolder

T = Tenant("beam")
NOW = 1_785_405_720_000
DAY = 86_400_000
MAY_8 = 1_683_554_160_000  # 2023-05-08


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "The user lives in Porto and the user works at a clinic.",
            "Ana lives in Porto and Ana works at a clinic.",
        ),
        ("The user's name is Ana and the user lives in Porto.", "Ana lives in Porto."),
        ("The user's name is Ana.", ""),  # the heading names her already
        ("The user is Ana, a nurse at the clinic.", "Ana is a nurse at the clinic."),
        ("The user is Ana, and the user needs help with a rota.", "Ana needs help with a rota."),
        ("The user is Ana.", ""),
        ("The user keeps the user experience simple.", "Ana keeps the user experience simple."),
        ("The user table has an id.", "The user table has an id."),
    ],
)
def test_the_user_is_read_as_their_name(text: str, expected: str) -> None:
    assert named(text, "Ana") == expected


def _said(n: int, content: str) -> Atom:
    """An atom from a nameless user's turn (the speaker is the role, never a name)."""
    meta = {"speaker": "User", "message_time": MAY_8 + n * DAY}
    return Atom(f"a{n}", T, AtomType.PERSONA, content, 50, "work", metadata=meta, seq=n)


# Sentence openers that are capitalised only because they open the statement: never the user's name.
_OPENERS = [
    "However, the user is wondering if a service worker could cache the fonts.",
    "However, the user wants the navbar to collapse on small screens.",
    "However the user is not sure the lazy loading works on Safari.",
    "Also the user is trying to cut the bundle below 300 KB.",
    "Actually the user prefers Flexbox over CSS grid for the card layout.",
    "Anyway the user plans to deploy the portfolio on Netlify next week.",
    "Unfortunately, the user's build fails after upgrading webpack.",
    "Additionally the user wants every image to have alt text.",
    "Thanks to the CDN, the user's homepage now loads in 1.2 seconds.",
    "Sure, the user will share the Lighthouse report tomorrow.",
]


def test_a_sentence_opener_is_no_persons_name() -> None:
    assert people([_said(n, text) for n, text in enumerate(_OPENERS)]) == []


def test_a_name_that_opens_statements_is_still_a_person() -> None:
    atoms = [
        _said(1, "Maya lives in Porto with her two cats."),
        _said(2, "Maya works as a nurse at the city hospital."),
        _said(3, "However, the user is wondering about night shifts."),
        _said(4, "However, the user wants weekends off."),
    ]
    assert people(atoms) == ["Maya"]


async def test_the_persona_of_a_nameless_user_is_about_the_user(tmp_path: Path) -> None:
    atoms = tuple(_said(n, text) for n, text in enumerate(_OPENERS))
    request = PersonaRequest(
        T, DirectoryFolder(tmp_path, only="persona.md"), "", True, (), (), atoms, (), NOW
    )
    body = await OfflinePersonaWriter().write(request)
    assert body.startswith("# Persona\n\nWhat these memories say about the user")
    assert "However" not in body.split("\n", 3)[2]
    assert "## However" not in body and "However is" not in body and "However's" not in body
