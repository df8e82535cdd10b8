"""Who "the user" is in a persona: the name they go by, read into their facts."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from memstrata.engines.offline.atom_text import people
from memstrata.engines.offline.l2.writer import OfflineSceneWriter
from memstrata.engines.offline.l3.facts import candidates
from memstrata.engines.offline.l3.writer import OfflinePersonaWriter
from memstrata.engines.offline.lang.en import named
from memstrata.models import USER_NAME, Atom, AtomType, Tenant
from memstrata.ports import ConsolidationRequest, PersonaRequest
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
    # PrefEval dev: 14 of 101 personas were about "Please" (one-off requests kept as memories)
    "Please compare the two phone plans for the user.",
    "Please suggest a vegan recipe for the user's dinner.",
    "Please recommend a hotel near the beach.",
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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # BEAM dev beam5's persona: "Thanks for walking the user through these examples" under Craig
        (
            "Thanks for walking the user through these examples.",
            "Thanks for walking Ana through these examples.",
        ),
        ("Can the assistant help the user figure it out?", "Can the assistant help Ana figure it out?"),
        ("The user asked the assistant to let the user know.", "Ana asked the assistant to let Ana know."),
        ("Send it to the user and the user replies.", "Send it to Ana and Ana replies."),
        ("The user loading logic is slow.", "The user loading logic is slow."),
    ],
)
def test_the_user_as_an_object_is_read_as_their_name(text: str, expected: str) -> None:
    assert named(text, "Ana") == expected


def _pages(folder: Path) -> str:
    return "\n".join(p.read_text() for p in sorted(folder.glob("*.md")))


async def test_a_scene_reads_a_nameless_users_facts_with_the_name_they_gave(tmp_path: Path) -> None:
    # BEAM dev beam5's scene said "The user is Craig, a 44-year-old colour technologist, and the user
    # is trying ..." and "What the user said about ..." though the user goes by Craig.
    texts = [
        "The user is Craig, a colour technologist, and the user is trying to learn probability basics.",
        "The user's name is Craig.",
        "The user wants help with probability of dice rolls.",
        "The user is trying to understand probability as a ratio of dice outcomes.",
    ]
    atoms = [
        replace(_said(n, t), metadata={**_said(n, t).metadata, USER_NAME: "Craig"})
        for n, t in enumerate(texts)
    ]
    request = ConsolidationRequest(
        T, DirectoryFolder(tmp_path), tuple(atoms), (), {}, {}, 15, True, NOW, len(atoms)
    )
    await OfflineSceneWriter().consolidate(request)
    page = _pages(tmp_path)
    assert "Craig is a colour technologist, and Craig is trying to learn probability basics." in page
    assert "Craig wants help with probability" in page
    assert "What Craig said about" in page and "(Craig; " in page
    assert "The user" not in page and "the user" not in page


def test_the_user_before_an_adverb_or_a_negation_is_read_as_their_name() -> None:
    said = "The user wants charts, but the user also wants speed; the user hasn't missed anything."
    assert named(said, "Ana") == "Ana wants charts, but Ana also wants speed; Ana hasn't missed anything."
    assert (
        named("The user tried, but the user made a mistake.", "Ana") == "Ana tried, but Ana made a mistake."
    )


def test_a_statement_announcing_what_followed_it_is_no_persona_fact() -> None:
    # BEAM dev beam3's persona: "Also: For instance, if the user has a button like this: (January 2024)"
    atoms = [
        _said(1, "For instance, if the user has a button like this:"),
        _said(2, "The user keeps the portfolio's buttons accessible with aria labels."),
    ]
    texts = [f.text for f in candidates(atoms, [], frozenset())]
    assert texts == ["The user keeps the portfolio's buttons accessible with aria labels"]
