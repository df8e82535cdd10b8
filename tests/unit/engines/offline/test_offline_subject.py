"""Pronoun rewriting: the speaker and the listener named in place of I and you."""

from __future__ import annotations

import pytest

from memstrata.engines.offline.l1.subject import possessive, rewrite


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went to a support group", "Caroline went to a support group"),
        ("I love my dog", "Caroline loves Caroline's dog"),
        ("I'm a nurse and I've got two kids", "Caroline is a nurse and Caroline has got two kids"),
        ("I'll call you tomorrow", "Caroline will call Melanie tomorrow"),
        ("I'd love to see it", "Caroline would love to see it"),
        ("I'd never been there", "Caroline had never been there"),
        ("That book is mine", "That book is Caroline's"),
        ("I did it myself", "Caroline did it Caroline"),
        ("I really enjoy hiking", "Caroline really enjoys hiking"),
        ("I don't like tea", "Caroline doesn't like tea"),
        ("My husband and I go there", "Caroline's husband and Caroline go there"),
        ("I study history", "Caroline studies history"),
        ("I watch movies", "Caroline watches movies"),
        ("Our family grew", "Caroline's family grew"),
        ("I need some me-time", "Caroline needs some me-time"),
    ],
)
def test_first_person_becomes_the_speaker(text: str, expected: str) -> None:
    assert rewrite(text, "Caroline", "Melanie").text == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("You're so brave", "Melanie is so brave"),
        ("How long have you been painting?", "How long has Melanie been painting?"),
        ("Are you going?", "Is Melanie going?"),
        ("What do you do for fun?", "What does Melanie do for fun?"),
        ("Is this your own painting?", "Is this Melanie's own painting?"),
        ("I'm lucky to have you", "Caroline is lucky to have Melanie"),
        ("I think you like it", "Caroline thinks Melanie likes it"),
        ("I'll let you know", "Caroline will let Melanie know"),
        ("Take care of yourself", "Take care of Melanie"),
    ],
)
def test_second_person_becomes_the_listener(text: str, expected: str) -> None:
    assert rewrite(text, "Caroline", "Melanie").text == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "You guys look great and passionate about dancing.",
            "Melanie and company look great and passionate about dancing.",
        ),
        (
            "What else do you guys like doing together?",
            "What else do Melanie and company like doing together?",
        ),
        ("Must have been traumatizing for you guys.", "Must have been traumatizing for Melanie and company."),
        ("Thank you all!", "Thank Melanie and company!"),
        ("Y'all are the best", "Melanie and company are the best"),
        ("You always know what to say", "Melanie always knows what to say"),
        ("Are you all right?", "Is Melanie all right?"),
    ],
)
def test_a_plural_you_is_the_listener_and_company_and_keeps_its_verb(text: str, expected: str) -> None:
    assert rewrite(text, "Caroline", "Melanie").text == expected


def test_without_a_listener_you_is_kept() -> None:
    out = rewrite("I told you so", "Sam", None)
    assert out.text == "Sam told you so"
    assert out.first_person
    assert not out.second_person


def test_past_sentences_keep_ambiguous_past_forms() -> None:
    assert rewrite("I read it last year", "Ann", None, past=True).text == "Ann read it last year"
    assert rewrite("I read every night", "Ann", None).text == "Ann reads every night"


def test_flags_report_which_persons_appeared() -> None:
    out = rewrite("Your cat is cute", "Ann", "Bo")
    assert (out.first_person, out.second_person) == (False, True)


def test_possessive_of_names_ending_in_s() -> None:
    assert possessive("James") == "James'"
    assert possessive("Ross") == "Ross's"
    assert possessive("User") == "User's"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # "so I skip" said by Maya: the verb agrees with the new subject, known verb or not
        (
            "I'm allergic to peanuts, by the way, so I skip the gym cafe snacks.",
            "Maya is allergic to peanuts, by the way, so Maya skips the gym cafe snacks.",
        ),
        ("I commute by train", "Maya commutes by train"),
        ("I really crave sushi", "Maya really craves sushi"),
        ("I swam there", "Maya swam there"),
        ("I gonna try", "Maya gonna try"),
    ],
)
def test_verb_agrees_with_the_rewritten_subject(text: str, expected: str) -> None:
    assert rewrite(text, "Maya", None).text == expected


def test_unknown_words_after_i_stay_in_a_past_sentence() -> None:
    assert (
        rewrite("I swam and I dove yesterday", "Maya", None, past=True).text
        == "Maya swam and Maya dove yesterday"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Written from bench/first_impressions.py's "Sam is Sam, Sam teaches chemistry ...".
        ("I'm Sam, I teach chemistry at a school.", "Sam teaches chemistry at a school."),
        ("I am Sam - I play bass.", "Sam plays bass."),
        ("My name is Sam, and I love tea", "Sam loves tea"),
        ("i'm sam, my dog is old", "Sam's dog is old"),
        ("I'm Samantha, I code", "Sam is Samantha, Sam codes"),  # another name: not an introduction
        ("I'm tired, I slept badly", "Sam is tired, Sam slept badly"),
    ],
)
def test_the_speakers_own_introduction_is_not_a_fact(text: str, expected: str) -> None:
    assert rewrite(text, "Sam", "Assistant").text == expected
