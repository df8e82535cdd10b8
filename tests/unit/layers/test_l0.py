"""L0 sanitize: one test per rule, and messages that must pass through unchanged."""

from __future__ import annotations

import pytest

from memstrata.layers.l0.sanitize import NOISE, for_extraction, sanitize
from memstrata.models import Role

U, A = Role.USER, Role.ASSISTANT


# --- survivors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "I went to the LGBTQ support group yesterday and it was so powerful.",
        "Thanks, Mel!",
        "Thanks, Mel! That means a lot.",
        "我上周去了杭州，西湖很美。",
        "Line one\n\nLine two\twith a tab",
        "Use `pip install x` then run it.",
        "See /usr/bin/python for the interpreter.",
        "ok, see you at 5",
        "Yes",
    ],
)
@pytest.mark.parametrize("role", [U, A])
def test_normal_text_is_unchanged(role: Role, text: str) -> None:
    assert sanitize(role, text) == text


def test_user_code_blocks_are_kept() -> None:
    text = "My script fails:\n```python\nprint(1/0)\n```\nWhy?"
    assert sanitize(U, text) == text


# --- rule 1: control characters ----------------------------------------------------------------------


def test_nul_and_control_characters_are_removed() -> None:
    assert sanitize(U, "he\x00llo\x07 wor\x1bld\x0b!") == "hello world!"


def test_newlines_and_tabs_survive_and_crlf_is_normalised() -> None:
    assert sanitize(U, "a\r\nb\rc\td") == "a\nb\nc\td"


# --- rule 2: injected memory blocks ---------------------------------------------------------------


@pytest.mark.parametrize(
    "tag", ["relevant-memories", "user-persona", "scene-navigation", "memory-tools-guide"]
)
def test_memory_blocks_are_stripped(tag: str) -> None:
    text = f"<{tag}>\n- [persona] Alice likes tea\n- more\n</{tag}>\nWhat should I drink?"
    assert sanitize(U, text) == "What should I drink?"


def test_memory_blocks_are_case_insensitive_and_may_have_attributes() -> None:
    text = 'Before <Relevant-Memories source="recall">x\ny</RELEVANT-MEMORIES> after'
    assert sanitize(U, text) == "Before  after"


def test_several_blocks_and_text_between_them() -> None:
    text = "<user-persona>p</user-persona>keep me<scene-navigation>n</scene-navigation> and me"
    assert sanitize(U, text) == "keep me and me"


def test_unclosed_memory_block_runs_to_the_end() -> None:
    assert sanitize(U, "Hello there\n<relevant-memories>\n- a\n- b") == "Hello there"


def test_message_that_was_only_a_memory_block_is_dropped() -> None:
    assert sanitize(U, "<relevant-memories>- a</relevant-memories>\n\n") is None


# --- rule 3: base64 images ----------------------------------------------------------------------------


def test_bare_data_uri_becomes_image() -> None:
    text = "Look: data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA+/== isn't it nice?"
    assert sanitize(U, text) == "Look: [image] isn't it nice?"


def test_markdown_image_of_a_data_uri_becomes_image() -> None:
    text = "My cat ![cat photo](data:image/jpeg;base64,/9j/4AAQSkZJRg==) sleeping"
    assert sanitize(U, text) == "My cat [image] sleeping"


def test_html_image_of_a_data_uri_becomes_image() -> None:
    text = 'Here <img alt="x" src="data:image/webp;base64,UklGRh4AAABXRUJQ"/> it is'
    assert sanitize(U, text) == "Here [image] it is"


def test_linked_images_are_not_touched() -> None:
    text = "See ![chart](https://example.com/chart.png)"
    assert sanitize(U, text) == text


# --- rule 4: code blocks are kept; extraction reads an assistant's without them ------------------


def test_assistant_code_blocks_are_kept() -> None:
    text = "Try this:\n```python\nimport os\nprint(os.getcwd())\n```\nIt prints the folder."
    assert sanitize(A, text) == text


def test_extraction_reads_an_assistant_backtick_block_as_code() -> None:
    text = "Try this:\n```python\nimport os\nprint(os.getcwd())\n```\nIt prints the folder."
    assert for_extraction(A, text) == "Try this:\n[code]\nIt prints the folder."


def test_extraction_reads_a_tilde_block_with_inner_shorter_fence_as_code() -> None:
    text = "Example:\n~~~~md\n~~~\nnested\n~~~\n~~~~\nDone."
    assert for_extraction(A, text) == "Example:\n[code]\nDone."


def test_an_unclosed_fence_runs_to_the_end() -> None:
    assert for_extraction(A, "Start:\n```\nx = 1\ny = 2") == "Start:\n[code]"


def test_inline_triple_backticks_are_not_a_fence() -> None:
    assert for_extraction(A, "Call ```f()``` here") == "Call ```f()``` here"


def test_extraction_reads_a_user_s_code() -> None:
    text = "My config:\n```\nretries = 3\n```"
    assert for_extraction(U, text) == text


# --- rule 5: blank lines and trimming --------------------------------------------------------------


def test_runs_of_blank_lines_collapse_to_one() -> None:
    assert sanitize(U, "  one\n\n\n\ntwo\n \n\t\nthree\n\n") == "one\n\ntwo\n\nthree"


# --- rule 6: drops -------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t", "\x00\x00"])
def test_empty_is_dropped(text: str) -> None:
    assert sanitize(U, text) is None


@pytest.mark.parametrize("text", ["/reset", "/help foo", "  /new-session  ", "/model gpt-4o\nplease"])
def test_slash_commands_are_dropped(text: str) -> None:
    assert sanitize(U, text) is None


@pytest.mark.parametrize(
    "text",
    [
        "ok",
        "OK.",
        "Okay!",
        "k",
        "Thanks!",
        "thank you 🙏",
        "thx",
        "Ty",
        "noted",
        "HEARTBEAT",
        "NO_REPLY",
        "👍",
        "...",
        "Got it.",
    ],
)
def test_noise_is_dropped(text: str) -> None:
    assert sanitize(U, text) is None
    assert sanitize(A, text) is None


def test_noise_set_is_small_and_exact() -> None:
    assert isinstance(NOISE, frozenset)
    assert {"ok", "okay", "k", "thanks", "thank you", "thx", "ty", "noted", "heartbeat", "no_reply"} <= NOISE
    assert len(NOISE) <= 20
    assert sanitize(U, "thanks mel") == "thanks mel"
    assert sanitize(U, "ok sure, 6pm works") == "ok sure, 6pm works"
