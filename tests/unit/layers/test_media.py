"""A shared photo in a message's text: what importers write is what the readers find."""

from __future__ import annotations

from memstrata.layers.l0.media import photo_captions, photo_note


def test_an_importers_note_reads_back_as_its_caption() -> None:
    text = f"Look what we made! {photo_note('a cup with a dog face on it')}"
    assert photo_captions(text) == ["a cup with a dog face on it"]


def test_close_variants_hosts_write_are_read_too() -> None:
    assert photo_captions("[sent an image: a red bike] and [Shared a pic: sunset]") == [
        "a red bike",
        "sunset",
    ]
    assert photo_captions("No photo here [but brackets]") == []
