"""Which texts are requests of their asker's own (the English pack's ``request``): a user's standing
preferences apply to them though they share none of their words (``search.standing_floor``)."""

from __future__ import annotations

import pytest

from memstrata import lang

REQUESTS = [
    "I'll be visiting Rome soon. What restaurants would you recommend?",
    "Can you suggest some running shoes for me?",
    "What should I cook tonight?",
    "What are some activities I can do in Switzerland?",
    "Tell me a good book to read",
]
NOT_REQUESTS = [
    "What is the boiling point of mercury?",
    "Who won the 1954 football world cup?",
    "bananas",
    "where do I live?",
    "What is my blood type?",
    "How do I configure TLS on a Kubernetes ingress?",
]


@pytest.mark.parametrize("text", REQUESTS)
def test_a_request_of_the_askers_own(text: str) -> None:
    assert lang.get("en").request(text)


@pytest.mark.parametrize("text", NOT_REQUESTS)
def test_questions_about_the_world_or_a_fact_are_not_requests(text: str) -> None:
    assert not lang.get("en").request(text)


def test_a_pack_without_the_rule_has_no_requests() -> None:
    assert not lang.get("zh").request("你能给我推荐一家餐厅吗？")
