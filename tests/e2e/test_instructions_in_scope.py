"""A standing instruction reaches the requests within its scope (``Searcher._instructions``): "how
should I lay out a blog's header, navigation and footer?" shares no word with "always include
semantic HTML5 tag usage details when I ask about markup structure", and by meaning alone stands
below the records of its topic (the layout's own facts), yet it is the instruction the request is
under. The bundled model: what is judged is closeness in meaning, which a hashing embedder cannot say."""

from __future__ import annotations

from pathlib import Path

from memstrata import FakeClock, Memory

INSTRUCTION = "Always include semantic HTML5 tag usage details when I ask about markup structure."
TOLD = [
    "I'm building a single-page portfolio with sections for About, Skills, Projects and Contact.",
    "My header has a logo and a navigation bar with four links.",
    "I want the Projects section to show cards in a responsive grid.",
    "The footer should hold my email address and links to GitHub and LinkedIn.",
    "I'm using Flexbox for the navigation and CSS Grid for the project cards.",
    "My page loads slowly on mobile, the hero image is 2 MB.",
    "I added a contact form with name, email and message fields.",
    "I'm trying to make the layout work on screens narrower than 400 pixels.",
    "I deploy the site on GitHub Pages from the main branch.",
    "I chose a dark colour scheme with a teal accent colour.",
    INSTRUCTION,
    "I want the Skills section to show progress bars for each language.",
]
REQUEST = (
    "If I'm creating a blog layout, which HTML elements should I use for the header, navigation, "
    "main content and footer?"
)


def test_a_request_within_an_instructions_scope_finds_the_instruction(home: Path) -> None:
    with Memory.open(home, clock=FakeClock()) as mem:
        turns = []
        for text in TOLD:
            turns += [{"role": "user", "content": text}, {"role": "assistant", "content": "Sounds good."}]
        mem.capture(turns, session_key="site", user_id="u")
        mem.end_session("site", user_id="u")
        hits = mem.search(REQUEST, user_id="u", limit=2)
        instruction = [h for h in hits if "semantic HTML5" in h.content]
        assert instruction, [h.content for h in hits]  # 3rd without the instructions' list
        assert instruction[0].explain["instruction_rank"] == 1
