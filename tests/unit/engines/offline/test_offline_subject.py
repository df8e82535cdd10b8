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
        # BEAM dev: "... or do you have any other questions?" read "or do the user have"
        (
            "Would you like more, or do you have questions?",
            "Would Melanie like more, or does Melanie have questions?",
        ),
        ("What do you do for fun?", "What does Melanie do for fun?"),
        ("Is this your own painting?", "Is this Melanie's own painting?"),
        ("I'm lucky to have you", "Caroline is lucky to have Melanie"),
        ("I think you like it", "Caroline thinks Melanie likes it"),
        ("I'll let you know", "Caroline will let Melanie know"),
        ("Take care of yourself", "Take care of Melanie"),
        # LoCoMo dev: "just like you are doing!" read "just like Caroline are doing"
        (
            "It reminds me to chase dreams, just like you are doing!",
            "It reminds Caroline to chase dreams, just like Melanie is doing!",
        ),
        ("It is the work you don't see", "It is the work Melanie doesn't see"),
        ("I'll let you have it", "Caroline will let Melanie have it"),
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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # BEAM dev: "... and SQLite 3.39, and I want to ensure ..." read "the user want"
        (
            "I use Flask and SQLite 3.39, and I want to ensure it works",
            "Maya uses Flask and SQLite 3.39, and Maya wants to ensure it works",
        ),
        (
            "I study it as a ratio, and I prefer examples",
            "Maya studies it as a ratio, and Maya prefers examples",
        ),
        (
            "I design it using Flask and I want it right",
            "Maya designs it using Flask and Maya wants it right",
        ),
        ("I have a dog and I have a cat", "Maya has a dog and Maya has a cat"),
        ("I love my job and I go running", "Maya loves Maya's job and Maya goes running"),
        # a subject of two opens its clause: the verb stays plural
        ("Tom and I go hiking", "Tom and Maya go hiking"),
        ("Last week Tom and I go hiking", "Last week Tom and Maya go hiking"),
        ("I think Tom and I need a break", "Maya thinks Tom and Maya need a break"),
        ("When my best friend and I go out, we dance", "When Maya's best friend and Maya go out, we dance"),
        ("Tom, Ana, and I go there", "Tom, Ana, and Maya go there"),
        ("My mom, my dad, and I go there", "Maya's mom, Maya's dad, and Maya go there"),
        # BEAM dev: a list of things, numbers' commas and "ASA criteria" (not "as") are no subject
        (
            "I list About, Skills, and Contact, and I want a layout",
            "Maya lists About, Skills, and Contact, and Maya wants a layout",
        ),
        ("I meet at 09:00 CET, and I want no overlap", "Maya meets at 09:00 CET, and Maya wants no overlap"),
        ("I use 3 objects, and I see a pattern", "Maya uses 3 objects, and Maya sees a pattern"),
        (
            "I use SAS, ASA criteria and I have two triangles",
            "Maya uses SAS, ASA criteria and Maya has two triangles",
        ),
        ("My friends and I love pizza", "Maya's friends and Maya love pizza"),
    ],
)
def test_and_i_opens_a_clause_unless_it_ends_a_subject_of_two(text: str, expected: str) -> None:
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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # PrefEval dev: "... a strict vegan diet and refuse to ..." kept the first person's verb
        (
            "I follow a strict vegan diet and refuse to consume honey",
            "Maya follows a strict vegan diet and refuses to consume honey",
        ),
        ("I love my job and hate the commute", "Maya loves Maya's job and hates the commute"),
        ("I walk or bike to work", "Maya walks or bikes to work"),
        # a noun after "and", an infinitive, another verb's subject or a relative clause: kept
        ("I need peace and love", "Maya needs peace and love"),
        ("I like to cook and eat", "Maya likes to cook and eat"),
        ("I help kids learn and grow", "Maya helps kids learn and grow"),
        ("the chances I get and leave a legacy", "the chances Maya gets and leave a legacy"),
    ],
)
def test_a_second_verb_of_the_subject_agrees_too(text: str, expected: str) -> None:
    assert rewrite(text, "Maya", None).text == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # LoCoMo dev (conv-26): "... will really help the people you work with" read "Caroline work"
        ("It will help the people you work with", "It will help the people Caroline works with"),
        ("Every time you visit, we cook", "Every time Caroline visits, we cook"),
        ("I love everything you do", "Mel loves everything Caroline does"),
        ("It's great you have people to support you", "It's great Caroline has people to support Caroline"),
        ("Love the way you go for it", "Love the way Caroline goes for it"),
        ("Ask a question anytime you need", "Ask a question anytime Caroline needs"),
        # no noun before "you": it stays an object
        ("a hobby that makes you feel good", "a hobby that makes Caroline feel good"),
        ("Every step's getting you closer", "Every step's getting Caroline closer"),
    ],
)
def test_you_after_a_noun_is_the_subject_of_a_relative_clause(text: str, expected: str) -> None:
    assert rewrite(text, "Mel", "Caroline").text == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # LoCoMo dev (conv-41): "... and reminding me I'm not alone" read "reminding Maria Maria is"
        ("They keep reminding me I'm not alone", "They keep reminding Maria that Maria is not alone"),
        ("They keep reminding you you're not alone", "They keep reminding John that John is not alone"),
        ("You told me I could come", "John told Maria that Maria could come"),
        # LoCoMo dev (conv-42): a preposition's object, "For me I just get ..."
        ("For me I just relax", "For Maria, Maria just relaxes"),
        # two people: nothing reads twice
        ("Thank you I love it", "Thank John Maria loves it"),
    ],
)
def test_a_name_is_not_doubled_across_object_and_subject(text: str, expected: str) -> None:
    assert rewrite(text, "Maria", "John").text == expected
