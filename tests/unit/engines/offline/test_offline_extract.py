"""Offline extraction: standalone atoms with named subjects, resolved dates and honest sources."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from memstrata.engines.offline import OfflineExtractor, extract_window
from memstrata.errors import EngineError
from memstrata.models import AtomDraft, AtomType, ExtractionWindow, Message, Tenant

WindowFactory = Callable[..., ExtractionWindow]
MessagesFactory = Callable[..., list[Message]]

CHAT = [
    ("Caroline", "Hey Mel! Good to see you! How have you been?"),
    ("Melanie", "Hey Caroline! I'm swamped with the kids & work. What's up with you?"),
    ("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful."),
    ("Melanie", "Wow, that's cool! How long have you been painting?"),
    ("Caroline", "Since 2016."),
    ("Melanie", "Your painting of the lake is gorgeous. I painted a sunrise last year!"),
    ("Caroline", "Thanks, Mel! Talk to you soon!"),
]


def contents(drafts: list[AtomDraft]) -> list[str]:
    return [d.content for d in drafts]


def find(drafts: list[AtomDraft], needle: str) -> AtomDraft:
    hits = [d for d in drafts if needle in d.content]
    assert len(hits) == 1, (needle, contents(drafts))
    return hits[0]


def test_speaker_named_and_date_resolved(window: WindowFactory, monday_ms: int) -> None:
    drafts = extract_window(window(CHAT))
    atom = find(drafts, "support group")
    assert atom.content == "Caroline went to a LGBTQ support group on 7 May 2023 and it was so powerful."
    assert atom.type is AtomType.EPISODIC
    assert 40 <= atom.priority <= 60
    assert atom.source_message_ids == ("m3",)
    assert atom.metadata["activity_start"] == "2023-05-07"
    assert atom.metadata["activity_end"] == "2023-05-07"
    assert atom.metadata["mentioned_at"] == "2023-05-08"
    assert atom.metadata["message_time"] == monday_ms + 20_000


def test_you_is_the_most_recent_other_speaker(window: WindowFactory) -> None:
    drafts = extract_window(window(CHAT))
    atom = find(drafts, "painting of the lake")
    assert atom.content.startswith("Melanie said: Caroline's painting of the lake")
    assert "Melanie painted a sunrise in 2022!" in find(drafts, "sunrise").content


def test_you_resolves_from_the_background(window: WindowFactory) -> None:
    turns = [("Ann", "We should catch up."), ("Bo", "Your garden looks lovely and your roses are huge.")]
    drafts = extract_window(window(turns, background=1))
    assert contents(drafts) == ["Bo said: Ann's garden looks lovely and Ann's roses are huge."]


def test_short_answer_carries_its_question(window: WindowFactory) -> None:
    drafts = extract_window(window(CHAT))
    atom = find(drafts, "Since 2016")
    assert (
        atom.content == "Melanie asked: How long has Caroline been painting? Caroline answered: Since 2016."
    )
    assert atom.source_message_ids == ("m4", "m5")
    assert atom.metadata["activity_start"] == "2016-01-01"


@pytest.mark.parametrize(
    ("question", "reply", "kept", "left"),
    [
        (  # replies often open with a reaction: the answer is the sentence after it
            "Do you do that often with the kids?",
            "Seeing my kids' faces so happy at the beach was the best! We don't go often, usually only "
            "once or twice a year. But those times are always special.",
            "once or twice a year",
            "always special",  # two sentences at most
        ),
        (  # a first sentence long enough is the whole answer
            "Where did you go last summer?",
            "We drove all the way down the coast from Porto to Faro with my two sisters and our dog. "
            "Best trip ever.",
            "Faro",
            "Best trip",
        ),
    ],
)
def test_how_much_of_a_reply_answers_the_question(
    window: WindowFactory, question: str, reply: str, kept: str, left: str
) -> None:
    atom = find(extract_window(window([("Bo", question), ("Ann", reply)])), "answered")
    assert kept in atom.content
    assert left not in atom.content


def test_two_questions_answered_in_turn_pair_in_order(window: WindowFactory) -> None:
    drafts = extract_window(
        window(
            [
                (
                    "Mel",
                    "So proud of you for taking this step. How does it feel? Also, do you have any pets?",
                ),
                (
                    "Caro",
                    "Thanks, Mel! Exciting but kinda nerve-wracking. Parenting's such a big responsibility. "
                    "And yup, I do- Oscar, my guinea pig. He's been great.",
                ),
            ]
        )
    )
    pets = find(drafts, "any pets?")
    assert "guinea pig" in pets.content and "nerve-wracking" not in pets.content
    # "How does it feel?" names nothing, so its answer is kept as said, not as a question and answer
    assert find(drafts, "nerve-wracking").content == "Caro said: Exciting but kinda nerve-wracking."


def test_a_reply_that_moves_on_answers_the_last_question_only(window: WindowFactory) -> None:
    drafts = extract_window(
        window(
            [
                ("Bo", "How was the trip? Did you see the lake?"),
                ("Ann", "Yes, we walked all around the lake at dawn. I started a new job at the bakery!"),
            ]
        )
    )
    assert find(drafts, "answered").content == (
        "Bo asked: Did Ann see the lake? Ann answered: Yes, we walked all around the lake at dawn."
    )
    assert "Ann started a new job at the bakery!" in contents(drafts)


def test_yes_answer_keeps_the_yes(window: WindowFactory) -> None:
    drafts = extract_window(window([("Bo", "Did you enjoy the concert?"), ("Ann", "Yes, it was amazing!")]))
    assert contents(drafts) == ["Bo asked: Did Ann enjoy the concert? Ann answered: Yes, it was amazing!"]


def test_question_in_background_is_used_but_not_cited(window: WindowFactory) -> None:
    drafts = extract_window(window([("Bo", "Where did you grow up?"), ("Ann", "In Lisbon.")], background=1))
    assert contents(drafts) == ["Bo asked: Where did Ann grow up? Ann answered: In Lisbon."]
    assert drafts[0].source_message_ids == ("m2",)


def test_small_talk_and_bare_questions_are_skipped(window: WindowFactory) -> None:
    turns = [
        ("Ann", "Hey Bo! How are you?"),
        ("Bo", "Hi Ann! Good, thanks! What's up?"),
        ("Ann", "Thanks so much! That's awesome, wow."),
        ("Bo", "Talk to you soon! Take care!"),
    ]
    assert extract_window(window(turns)) == []


def test_photo_caption(window: WindowFactory) -> None:
    drafts = extract_window(window([("Ann", "Look at this! [shares a photo: a photo of a dog on a beach]")]))
    assert contents(drafts) == ["Ann shared a photo of a dog on a beach."]


def test_pronoun_sentence_stays_with_what_it_refers_to(window: WindowFactory) -> None:
    text = "We had to say goodbye to Max. He was part of our family for 10 years."
    drafts = extract_window(window([("John", text)]))
    assert contents(drafts) == [
        "John said: We had to say goodbye to Max. He was part of John's family for 10 years."
    ]


def test_types_and_priorities(window: WindowFactory) -> None:
    turns = [
        ("Ann", "My sister lives in Berlin."),
        ("Ann", "I love hiking in the mountains."),
        ("Ann", "I'm going to visit Japan next month."),
    ]
    drafts = extract_window(window(turns))
    sister, hiking, japan = drafts
    assert (sister.type, sister.priority) == (AtomType.PERSONA, 80)
    assert (hiking.type, hiking.priority) == (AtomType.PERSONA, 75)
    assert japan.type is AtomType.EPISODIC
    assert japan.content == "Ann is going to visit Japan in June 2023."
    assert japan.metadata["activity_start"] == "2023-06-01"


def test_instructions_from_a_user_to_the_assistant(window: WindowFactory) -> None:
    turns = [
        (None, "Always answer in French."),
        (None, "Call me Sam."),
        (None, "Please don't use emojis."),
        (None, "Remember that I'm allergic to peanuts."),
    ]
    drafts = extract_window(window(turns))
    assert [(d.type, d.priority) for d in drafts] == [
        (AtomType.INSTRUCTION, -1),
        (AtomType.INSTRUCTION, 90),
        (AtomType.INSTRUCTION, 90),
        (AtomType.INSTRUCTION, 90),
    ]
    assert contents(drafts) == [
        "The user instructed the assistant: Always answer in French.",
        "The user wants to be called Sam.",
        "The user instructed the assistant: Please don't use emojis.",
        "The user asked the assistant to remember: the user is allergic to peanuts.",
    ]
    assert {d.scene_name for d in drafts} == {"assistant-instructions"}


def test_instruction_with_an_assistant_in_the_conversation(window: WindowFactory) -> None:
    turns = [
        ("Sam", "Hi!", "user"),
        (None, "Hello Sam!", "assistant"),
        ("Sam", "Never mention my ex.", "user"),
    ]
    drafts = extract_window(window(turns))
    assert [(d.type, d.priority, d.content) for d in drafts] == [
        (AtomType.INSTRUCTION, -1, "Sam instructed the assistant: Never mention Sam's ex.")
    ]


def test_no_instructions_between_two_people(window: WindowFactory) -> None:
    turns = [("Ann", "I lost my keys again."), ("Bo", "Don't worry about the keys, always keep a spare key.")]
    drafts = extract_window(window(turns))
    assert all(d.type is not AtomType.INSTRUCTION for d in drafts)


def test_assistant_messages_yield_only_what_they_confirm(window: WindowFactory) -> None:
    turns = [
        ("Sam", "Hello there.", "user"),
        (None, "Noted: you are vegetarian and you live in Porto. You should try the market!", "assistant"),
        (None, "I can help with recipes. The weather in Porto is mild.", "assistant"),
    ]
    drafts = extract_window(window(turns))
    assert contents(drafts) == ["Sam is vegetarian and Sam lives in Porto."]
    assert drafts[0].source_message_ids == ("m2",)


def test_without_names_the_user_and_the_assistant_are_used(window: WindowFactory) -> None:
    turns = [
        (None, "I adopted a puppy yesterday.", "user"),
        (None, "Congrats! What's the name?", "assistant"),
    ]
    drafts = extract_window(window(turns))
    assert contents(drafts) == ["The user adopted a puppy on 7 May 2023."]


def test_a_nameless_user_is_the_user_and_verbs_agree(window: WindowFactory) -> None:
    # Every proxied turn comes without a name: the user is "the user", not a person called "User"
    # ("User's name is Ana and User live in Porto", "User fly to Tokyo").
    turns = [
        (None, "My name is Ana and I live in Porto.", "user"),
        (None, "Nice to meet you, Ana!", "assistant"),
        (None, "I have a cat called Miso. On Friday I fly to Tokyo.", "user"),
    ]
    drafts = extract_window(window(turns))
    assert contents(drafts) == [
        "The user's name is Ana and the user lives in Porto.",
        "The user has a cat called Miso.",
        "On Friday, 12 May 2023 the user flies to Tokyo.",
    ]
    assert {d.metadata["speaker"] for d in drafts} == {"the user"}
    assert drafts[0].metadata["user_name"] == "Ana"  # the persona names the user after it
    assert all("ana" not in d.scene_name for d in drafts)  # a name is no topic: not "ana-live"
    assert drafts[1].type is AtomType.PERSONA  # "called" is no past event


@pytest.mark.parametrize(
    "turns",
    [
        [(None, "How is the first week going?", "assistant"), ("Maya", "Busy.", "user")],
        [(None, "How are you today?", "assistant"), (None, "Good, thanks!", "user")],
        [("Tom", "How was your weekend?", "user"), ("Maya", "Pretty relaxed.", "user")],
        [(None, "Understood, I'll keep that in mind.", "assistant"), (None, "Sounds good.", "user")],
    ],
)
def test_small_talk_makes_no_atoms(window: WindowFactory, turns: list[tuple[str | None, str, str]]) -> None:
    assert extract_window(window(turns)) == []


def test_a_short_answer_with_a_fact_is_no_small_talk(window: WindowFactory) -> None:
    turns = [("Tom", "How was your weekend?", "user"), ("Maya", "Went camping!", "user")]
    assert [d.content for d in extract_window(window(turns))] == [
        "Tom asked: How was Maya's weekend? Maya answered: Went camping!"
    ]


def test_a_check_in_answered_with_a_fact_still_makes_one(window: WindowFactory) -> None:
    turns = [
        (None, "How is the first week going?", "assistant"),
        ("Maya", "Busy, I started at the clinic.", "user"),
    ]
    assert [d.content for d in extract_window(window(turns))] == [
        "The assistant asked: How is the first week going? Maya answered: Busy, Maya started at the clinic."
    ]


def test_a_stated_preference_is_a_marked_persona_fact(window: WindowFactory) -> None:
    turns = [
        (None, "I don't wear clothing made from animal products like wool or silk.", "user"),
        (None, "I prefer window seats.", "user"),
        (None, "I have an acute fear of heights, so I avoid tall buildings.", "user"),
    ]
    drafts = extract_window(window(turns))
    assert [(d.type, d.metadata.get("preference")) for d in drafts] == [(AtomType.PERSONA, True)] * 3
    assert drafts[1].content == "The user prefers window seats."


def test_the_assistant_states_back_facts_not_advice(window: WindowFactory) -> None:
    turns = [
        (None, "I need a plan for my budget tracker.", "user"),
        (
            None,
            "### Step 1: Define Your Project Scope\nFirst, clearly define what your project entails. "
            "Since you're using Flask 2.3, sessions are built in.",
            "assistant",
        ),
    ]
    drafts = extract_window(window(turns))
    assert [d.content for d in drafts if d.metadata["form"] == "confirmed"] == [
        "Since the user is using Flask 2.3, sessions are built in."
    ]


def test_sources_are_always_new_messages(window: WindowFactory) -> None:
    w = window(CHAT, background=4)
    new_ids = {m.id for m in w.new}
    drafts = extract_window(w)
    assert drafts
    for d in drafts:
        assert d.source_message_ids
        assert set(d.source_message_ids) <= new_ids


def test_deterministic_and_scenes_stable(window: WindowFactory) -> None:
    first = extract_window(window(CHAT))
    second = extract_window(window(CHAT))
    assert first == second
    assert find(first, "support group").scene_name == "community"
    for d in first:
        assert d.scene_name
        assert d.scene_name == d.scene_name.lower()
        assert " " not in d.scene_name


def test_no_duplicate_texts_in_one_window(window: WindowFactory) -> None:
    drafts = extract_window(window([("Ann", "I love jazz."), ("Ann", "I love jazz.")]))
    assert contents(drafts) == ["Ann loves jazz."]
    assert drafts[0].source_message_ids == ("m1",)


async def test_port_method(messages: MessagesFactory) -> None:
    msgs = messages([("Ann", "I moved to Oslo last year.")])
    drafts = await OfflineExtractor().extract(ExtractionWindow(Tenant(), "s", tuple(msgs)))
    assert contents(drafts) == ["Ann moved to Oslo in 2022."]


def test_thousands_of_messages_are_fast(messages: MessagesFactory) -> None:
    texts = [t for _, t in CHAT] * 40  # 280 messages, 28 windows
    msgs = messages([("Ann" if i % 2 else "Bo", t) for i, t in enumerate(texts)])
    t0 = time.perf_counter()
    for start in range(0, len(msgs), 10):
        extract_window(ExtractionWindow(Tenant(), "s", tuple(msgs[start : start + 10])))
    assert time.perf_counter() - t0 < 1.0  # about 3,000 messages/s on one core


def test_accented_names_are_not_split_into_pronouns(window: WindowFactory) -> None:
    drafts = extract_window(window([("Ann", "Jérôme told me about his café in Lyon.")]))
    assert contents(drafts) == ["Jérôme told Ann about his café in Lyon."]


def test_a_chinese_message_is_written_by_the_chinese_pack(window: WindowFactory) -> None:
    drafts = extract_window(window([("李雷", "我昨天去了北京，参观了故宫。你呢？")]))
    assert contents(drafts) == ["李雷2023年5月7日去了北京。", "李雷参观了故宫。"]
    assert drafts[0].metadata["activity_start"] == "2023-05-07"
    assert {d.metadata["lang"] for d in drafts} == {"zh"}


def test_odd_text_never_breaks_extraction(window: WindowFactory) -> None:
    odd = [
        "",
        "   ",
        "?!?!",
        "[shares a photo: ]",
        "I I I me my mine you your",
        "On 31 February 2023 I went out. In 12 days ago last last week.",
        "Dr. J. K. Smith, Ph.D., said e.g. that... well... yes. https://example.com/a.b?c=d",
        "```python\nprint('I love code')\n```",
        "I'm going to visit " + "very " * 500 + "far away next month.",
        "\x00\x01 I went\tthere yesterday\r\n",
    ]
    turns = [("Ann" if i % 2 else "Bo", text) for i, text in enumerate(odd)]
    drafts = extract_window(window(turns))
    assert all(d.content.strip() for d in drafts)
    assert any("on 7 May 2023" in d.content for d in drafts)


def test_unusable_timestamp_is_an_engine_error(window: WindowFactory) -> None:
    with pytest.raises(EngineError, match="timestamp"):
        extract_window(window([("Ann", "I went there yesterday.")], start_ms=10**20))


def test_an_instruction_answering_the_assistant_stays_an_instruction(window: WindowFactory) -> None:
    turns = [(None, "How should I format answers?", "assistant"), (None, "Always answer in French.", "user")]
    drafts = extract_window(window(turns))
    assert [(d.type, d.priority) for d in drafts] == [(AtomType.INSTRUCTION, -1)]


def test_assistant_questions_give_the_users_answers_context(window: WindowFactory) -> None:
    turns = [(None, "What's your favourite food?", "assistant"), ("Sam", "Sushi, by far.", "user")]
    drafts = extract_window(window(turns))
    assert contents(drafts) == [
        "The assistant asked: What's Sam's favourite food? Sam answered: Sushi, by far."
    ]
    assert drafts[0].source_message_ids == ("m1", "m2")


def test_thanks_is_no_answer(window: WindowFactory) -> None:
    turns = [("Bo", "Have you tried the new bakery on Main Street?"), ("Ann", "Thanks!")]
    assert extract_window(window(turns)) == []


def test_thanks_that_tell_nothing_of_the_speaker_make_no_atom(window: WindowFactory) -> None:
    turns = [
        (None, "Here is the refactored parser with the edge cases covered.", "assistant"),
        (None, "Thanks for the detailed walkthrough of the parser!", "user"),
        (None, "Thank you for the clear examples and the reminder about tests.", "user"),
    ]
    assert extract_window(window(turns)) == []


def test_thanks_that_tell_something_or_congratulations_still_make_atoms(window: WindowFactory) -> None:
    turns = [
        ("Bo", "Thank you for coming to my pottery show, it meant a lot to me."),
        ("Ann", "Congrats on the new job at the bakery!"),
    ]
    found = contents(extract_window(window(turns)))
    assert any("pottery show" in c for c in found), found
    assert any("new job at the bakery" in c for c in found), found


# The demo conversation's sentences, said on 9 March 2026 (the assistant asks, Maya answers).
MARCH_9 = 1_773_050_400_000  # 2026-03-09 10:00 UTC


def test_an_allergy_is_a_standing_fact_not_an_event_dated_with_the_answer(window: WindowFactory) -> None:
    turns = [
        ("Assistant", "Nice! How long have you been climbing?", "assistant"),
        ("Maya", "Since 2019. I'm allergic to peanuts, by the way, so I skip the gym cafe snacks."),
    ]
    drafts = extract_window(window(turns, start_ms=MARCH_9))
    allergy = find(drafts, "allergic to peanuts")
    assert allergy.content == "Maya is allergic to peanuts, so Maya skips the gym cafe snacks."
    assert allergy.type is AtomType.PERSONA
    assert "activity_start" not in allergy.metadata
    since = find(drafts, "climbing")
    assert "Since 2019." in since.content and "peanuts" not in since.content


def test_a_job_a_home_and_a_partner_are_persona_even_when_told_as_news(window: WindowFactory) -> None:
    turns = [
        ("Maya", "Hi! I just started a new job as a data engineer at a bike-sharing startup in Lisbon."),
        ("Assistant", "Congratulations! How is the first week going?", "assistant"),
        (
            "Maya",
            "Busy. I moved here from Porto last week, so I'm still unpacking. My partner Tom stayed in Porto until June.",
        ),
    ]
    drafts = extract_window(window(turns, start_ms=MARCH_9 - 7 * 86_400_000))
    assert find(drafts, "data engineer").type is AtomType.PERSONA
    assert find(drafts, "moved to Lisbon from Porto").type is AtomType.PERSONA
    tom = find(drafts, "partner Tom")
    assert tom.type is AtomType.PERSONA
    assert "until June 2026" in tom.content


def test_an_event_with_family_in_it_stays_an_event(window: WindowFactory) -> None:
    turns = [
        ("Ann", "I went hiking with my sister last week."),
        ("Ann", "I took my kids to the zoo, they loved it."),
    ]
    drafts = extract_window(window(turns))
    assert find(drafts, "hiking").type is AtomType.EPISODIC
    assert find(drafts, "zoo").type is AtomType.EPISODIC
    assert find(drafts, "zoo").content.startswith("Ann took Ann's kids to the zoo")


def test_family_with_an_ed_adjective_is_still_a_fact(window: WindowFactory) -> None:
    drafts = extract_window(
        window([("Mel", "I'm lucky to have my husband and kids; they keep me motivated.")])
    )
    assert find(drafts, "husband").type is AtomType.PERSONA


def test_a_vegan_recipe_is_no_diet(window: WindowFactory) -> None:
    turns = [
        ("Nate", "I taught people vegan ice cream recipes on my show."),
        ("Nate", "I'm vegan, so no dairy for me."),
    ]
    drafts = extract_window(window(turns))
    assert find(drafts, "recipes").type is AtomType.EPISODIC
    assert find(drafts, "so no dairy").type is AtomType.PERSONA


def test_code_and_markup_make_no_atoms_but_the_prose_around_them_does(window: WindowFactory) -> None:
    text = (
        "I'm building a budget tracker with Flask and SQLite.\n"
        "### Components:\n"
        "1. **User Authentication**\n"
        "- Add Expense\n"
        "Here's my code:\n"
        "```python\n"
        "from flask import Flask\n"
        "app = Flask(__name__)\n"
        "```\n"
        "conn = sqlite3.connect('budget.db')\n"
        "CREATE TABLE IF NOT EXISTS users (\n"
        "I'd like to add charts with Matplotlib later."
    )
    drafts = extract_window(window([(None, text, "user")]))
    assert contents(drafts) == [
        "The user is building a budget tracker with Flask and SQLite.",
        "The user would like to add charts with Matplotlib later.",
    ]


def test_a_statement_before_a_question_is_kept(window: WindowFactory) -> None:
    text = "I'm keeping my app under 2.5MB, so I prefer dependency-free solutions, can you help me cache responses?"
    drafts = extract_window(window([(None, text, "user")]))
    assert contents(drafts) == [
        "The user is keeping the user's app under 2.5MB, so the user prefers dependency-free solutions."
    ]
    assert drafts[0].metadata["preference"] is True


def test_requests_and_pasted_material_make_no_atoms(window: WindowFactory) -> None:
    paper = " ".join(
        f"In setting {n}, labels of in-context examples are flipped so that priors and mappings disagree."
        for n in range(8)
    )
    turns = [
        (None, "Explain step by step how to organize the program, without writing any code yet.", "user"),
        (None, f"I'm a PhD student in Lisbon. Summary of the paper:\n{paper}", "user"),
        (None, "Video Transcript: " + "women need to understand that you cannot ask for it all " * 4, "user"),
    ]
    assert contents(extract_window(window(turns))) == ["The user is a PhD student in Lisbon."]
