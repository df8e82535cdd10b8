"""A first-person question's cosine with a record (``retrieval.asker.judged_cosine``): the reading
counts where it is closer to the record than the user's name alone is, else the question as asked."""

from __future__ import annotations

import numpy as np

from memstrata.retrieval.asker import ReadVectors, judged_cosine


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


RECORD = unit(1, 1, 0)  # a fact: half who it is about (axis 0), half what it says (axis 1)
NAME = unit(1, 0, 0)


def test_a_reading_that_says_more_than_the_name_counts() -> None:
    on_topic = ReadVectors(unit(1, 2, 0), NAME)  # about the person and what the fact says
    cos, read = judged_cosine(RECORD, unit(0, 1, 1), on_topic)
    assert read and cos == float(RECORD @ unit(1, 2, 0)) > float(RECORD @ NAME)


def test_a_reading_close_only_by_the_name_falls_back_to_the_question_as_asked() -> None:
    off_topic = ReadVectors(unit(1, 0, 1), NAME)  # the person and something the fact does not say
    asked = unit(0, 0, 1)
    cos, read = judged_cosine(RECORD, asked, off_topic)
    assert not read and cos == float(RECORD @ asked) == 0.0
