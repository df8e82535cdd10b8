"""Sentence splitting, captions, and scene labels."""

from __future__ import annotations

from memstrata.engines.offline.l1.labels import FALLBACK_SCENE, scene_name
from memstrata.engines.offline.l1.sentences import clean_caption, split_message, split_sentences


def test_split_on_end_marks_newlines_and_spaced_dashes() -> None:
    text = "I went out! Was it fun? Yes.\nNew line here - Another clause starts"
    assert split_sentences(text) == (
        "I went out!",
        "Was it fun?",
        "Yes.",
        "New line here",
        "Another clause starts",
    )


def test_abbreviations_and_numbers_do_not_split() -> None:
    text = "Did you go? No. I met Dr. Smith, e.g. at noon. Room No. 5 costs 3.5 dollars."
    assert split_sentences(text) == (
        "Did you go?",
        "No.",
        "I met Dr. Smith, e.g. at noon.",
        "Room No. 5 costs 3.5 dollars.",
    )


def test_cjk_end_marks_split() -> None:
    assert split_sentences("我去了北京。很好！") == ("我去了北京。", "很好！")


def test_captions_are_taken_out_of_the_text() -> None:
    parts = split_message("Look at this! [shares a photo: a photo of a dog on a beach] So cute.")
    assert parts.sentences == ("Look at this!", "So cute.")
    assert parts.captions == ("a dog on a beach",)


def test_caption_lead_ins_are_dropped() -> None:
    assert clean_caption("a photography of a sign for a new arrival.") == "a sign for a new arrival"
    assert clean_caption("a photo of a picture of a cat") == "a cat"


def test_a_lead_in_to_code_inside_a_line_is_dropped() -> None:
    text = (
        "I'm stuck on the navbar of my Bootstrap 5.3 portfolio, here's my code:\n"
        '<nav class="navbar"></nav>\n'
        "It works on desktop. Here's my current deployment script:\n"
        "npm run build\n"
        "I've been using the following code to measure TTI on the landing page:\n"
        "I have two cats: Miso and Tofu."
    )
    assert split_message(text).sentences == (
        "I'm stuck on the navbar of my Bootstrap 5.3 portfolio",
        "It works on desktop.",
        "I've been using the following code to measure TTI on the landing page:",
        "I have two cats: Miso and Tofu.",
    )


def test_control_characters_and_curly_quotes_are_normalised() -> None:
    assert split_message("I\x00 don’t\x07 know").sentences == ("I don't know",)


def test_scene_names_are_stable_topic_labels() -> None:
    assert scene_name("Caroline painted a sunset", ["caroline"]) == "art-outdoors"
    assert scene_name("Caroline painted a sunset over the lake", ["caroline"]) == "outdoors"
    assert scene_name("I adopted a puppy") == scene_name("We adopted two puppies")
    assert scene_name("Melanie loves the violin", ["melanie"]) == "music"
    assert scene_name("contemporary expressive choreography") == "dance"
    assert scene_name("quantum entanglement yesterday") == "entanglement-quantum"
    assert scene_name("hello thanks") == FALLBACK_SCENE
