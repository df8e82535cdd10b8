"""Each harness rule (``layers.host_turns.HARNESS_RULES``) on the text its harness sends: the
harness's part goes, the user's words stay."""

from __future__ import annotations

import pytest

from memstrata.layers.host_turns import clean_prompt, strip_harness

PROMPT = "Where are my beehives?"
SENT = [
    "<system-reminder>\nContents of CLAUDE.md:\nBe brief.\n</system-reminder>\n"
    "<system-reminder>\nToday's date is 2026-12-05.\n</system-reminder>\n" + PROMPT,
    "<local-command-caveat>Caveat: run locally.</local-command-caveat>\n"
    "<command-name>/compact</command-name>\n  <command-message>compact</command-message>\n"
    "  <command-args></command-args>\n<local-command-stdout>Compacted</local-command-stdout>\n" + PROMPT,
    "<bash-input>ls</bash-input>\n<bash-stdout>a b</bash-stdout><bash-stderr></bash-stderr>\n" + PROMPT,
    "This session is being continued from a previous conversation that ran out of context. The "
    "summary below covers the earlier portion of the conversation.\n\nThe user keeps bees.\n\n"
    "Continue the conversation. Pick up the last task as if the break never happened.\n" + PROMPT,
    "[Request interrupted by user for tool use]\n" + PROMPT,
    "# AGENTS.md instructions for /home/ana/diary\n\n<INSTRUCTIONS>\nBe brief.\n</INSTRUCTIONS>\n"
    "<environment_context>\n  <cwd>/home/ana/diary</cwd>\n  <shell>bash</shell>\n</environment_context>\n"
    + PROMPT,
    "<user_instructions>Be brief.</user_instructions>\n<turn_aborted>x</turn_aborted>\n" + PROMPT,
]


@pytest.mark.parametrize("text", SENT)
def test_harness_text_goes_and_the_prompt_stays(text: str) -> None:
    assert strip_harness(text).strip() == PROMPT
    assert clean_prompt(text) == PROMPT


def test_text_without_harness_markup_is_left_as_it_is() -> None:
    for text in (PROMPT, "I wrote <b>bold</b> and [a link] in # a heading", "This session is fun."):
        assert strip_harness(text) == text
