"""Through the whole engine: a standing rule for the assistant makes an instruction atom; a request
for this turn, however rule-like its words, makes none (search ranks instructions in a list of their
own and finds them for any later request, so a mistyped one is noise in every later request)."""

from __future__ import annotations

from collections.abc import Callable

from memstrata.engines.offline import extract_window
from memstrata.models import AtomType, ExtractionWindow

WindowFactory = Callable[..., ExtractionWindow]


def _instructions(window: WindowFactory, *texts: str) -> list[str]:
    drafts = extract_window(window([(None, t, "user") for t in texts]))
    return [d.content for d in drafts if d.type is AtomType.INSTRUCTION]


def test_a_rule_about_later_answers_is_an_instruction(window: WindowFactory) -> None:
    assert _instructions(
        window,
        "Use semantic HTML5 tags when you show me HTML.",
        "Whenever I ask for a recipe, give the quantities in grams.",
        "Always mention the Python version when I ask about a library.",
    ) == [
        "The user instructed the assistant: Use semantic HTML5 tags when the assistant shows the user HTML.",
        "The user instructed the assistant: Whenever the user asks for a recipe, give the quantities in grams.",
        "The user instructed the assistant: Always mention the Python version when the user asks about a library.",
    ]


def test_a_run_on_request_for_this_turn_is_no_instruction(window: WindowFactory) -> None:
    found = _instructions(
        window,
        "I'm wiring up OAuth for the dashboard, which I've never done before, and I want to make sure the "
        "refresh tokens are stored safely, can you help me write the callback handler with proper error "
        "handling",
        "I'm trying to keep the bundle under 300KB, so I prefer small dependency-free helpers, could you "
        "sketch a debounce function for the search box",
        "Just tell me which config files you need, and I'll make sure to paste them in markdown.",
    )
    assert found == []


def test_a_preference_in_a_request_stays_a_persona_preference(window: WindowFactory) -> None:
    drafts = extract_window(
        window(
            [
                (
                    None,
                    "I'm revising for the geometry exam, and I prefer detailed proofs with diagrams to see each step.",
                    "user",
                )
            ]
        )
    )
    assert [(d.type, d.metadata.get("preference")) for d in drafts] == [(AtomType.PERSONA, True)]
