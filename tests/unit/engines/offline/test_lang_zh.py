"""The Chinese pack, rule by rule, each from the sentence that failed before it: dates resolved
against the message's day, one fact per atom in Chinese without English framing, the speaker put
in front of a clause that drops its subject, instructions, and the Chinese framing words."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memstrata.engines.offline import extract_window
from memstrata.engines.offline.draft import Form, Parts
from memstrata.engines.offline.lang.zh import CHINESE
from memstrata.engines.offline.lang.zh.dates import number, resolve
from memstrata.engines.offline.lang.zh.topics import scene_label
from memstrata.models import AtomType
from tests.unit.engines.offline.conftest import Turn, WindowFactory

TUESDAY = date(2026, 12, 1)
# Tuesday 1 December 2026, 09:00 UTC
TUESDAY_MS = int(datetime(2026, 12, 1, 9, tzinfo=UTC).timestamp() * 1000)

DATES = [
    # (sentence, resolved text, start, end)
    ("我昨天去了北京", "我2026年11月30日去了北京", "2026-11-30", "2026-11-30"),
    ("前天下雨了", "2026年11月29日下雨了", "2026-11-29", "2026-11-29"),
    ("我上周刚搬到深圳", "我上周（2026年11月23日至29日）刚搬到深圳", "2026-11-23", "2026-11-29"),
    ("下周六去爬梧桐山", "2026年12月12日去爬梧桐山", "2026-12-12", "2026-12-12"),
    ("这周末去看电影", "这周末（2026年12月5日至6日）去看电影", "2026-12-05", "2026-12-06"),
    ("下个月十五号去成都", "2027年1月15日去成都", "2027-01-15", "2027-01-15"),
    ("她明年三月搬来深圳", "她2027年3月搬来深圳", "2027-03-01", "2027-03-31"),
    ("去年十月开了一家店", "2025年10月开了一家店", "2025-10-01", "2025-10-31"),
    ("三天后有个面试", "2026年12月4日有个面试", "2026-12-04", "2026-12-04"),
    ("月底交报告", "月底（2026年12月31日）交报告", "2026-12-31", "2026-12-31"),
    ("上个月开始卖面包", "2026年11月开始卖面包", "2026-11-01", "2026-11-30"),
    ("7月12日出发", "2026年7月12日出发", "2026-07-12", "2026-07-12"),
]


@pytest.mark.parametrize(("text", "resolved", "start", "end"), DATES)
def test_a_relative_date_is_resolved_against_the_message_day(
    text: str, resolved: str, start: str, end: str
) -> None:
    r = resolve(text, TUESDAY)
    assert (r.text, str(r.start), str(r.end)) == (resolved, start, end)


@pytest.mark.parametrize(
    "text",
    [
        "农历八月十五是我妈妈的生日",  # a lunar date: kept, no Gregorian day
        "每周六下午去上课",  # a habit, not a date
        "你到底想去哪里",  # 到底 is no month end
        "我一个月跑两次",  # a frequency, not a month
    ],
)
def test_what_is_no_date_stays_as_it_is(text: str) -> None:
    r = resolve(text, TUESDAY)
    assert (r.text, r.start, r.end) == (text, None, None)


@pytest.mark.parametrize(("text", "value"), [("三", 3), ("十", 10), ("十五", 15), ("二十三", 23), ("31", 31)])
def test_chinese_numbers(text: str, value: int) -> None:
    assert number(text) == value


EXTRACTED = [
    # one fact per clause; the dropped subject is the speaker's
    (
        [("小王", "我上周刚搬到深圳，在一家无人机公司做嵌入式工程师。")],
        ["小王上周（2026年11月23日至29日）刚搬到深圳。", "小王在一家无人机公司做嵌入式工程师。"],
    ),
    # an answer is stored with its question; the next fact is its own atom
    (
        [("Assistant", "新工作怎么样？", "assistant"), ("小王", "挺忙的。我对花生过敏。")],
        ["助手问：新工作怎么样？小王答：小王挺忙的。", "小王对花生过敏。"],
    ),
    # a pronoun takes the person named before it; what another person does is quoted
    (
        [("小王", "小李现在还在杭州，她明年三月搬来深圳。")],
        ["小王说：小李现在还在杭州。", "小王说：小李2027年3月搬来深圳。"],
    ),
    # fillers go, greetings give nothing
    ([("小王", "你好！顺便说一下，我下周六要和女朋友去爬山。")], ["小王2026年12月12日要和女朋友去爬山。"]),
    # a user without a name is 用户, never "User"
    ([(None, "我养了一只猫，叫年糕。")], ["用户养了一只猫，叫年糕。"]),
    # a lunar date is kept as it was said, with its speaker named in it
    ([("小王", "农历八月十五是我妈妈的生日。")], ["农历八月十五是小王妈妈的生日。"]),
    # 她 is the person the message before named after a relation
    (
        [("李娜", "我女儿朵朵下周三过六岁生日。"), ("李娜", "她对鸡蛋过敏。")],
        ["李娜女儿朵朵2026年12月9日过六岁生日。", "李娜说：朵朵对鸡蛋过敏。"],
    ),
    # the listener's name and a greeting say nothing; someone else speaking is quoted
    (
        [("小美", "在吗？"), ("阿杰", "小美，好久不见！"), ("小美", "医生说要休息两周。")],
        ["小美说：医生说要休息两周。"],
    ),
    # an answer that names a thing is not said of the speaker
    (
        [("阿杰", "在哪个学校？"), ("小美", "同济大学。")],
        ["阿杰问：在哪个学校？小美答：同济大学。"],
    ),
    # a clause opening with 是 describes what the one before named
    ([("小王", "我三天后有个面试，是一家互联网公司。")], ["小王2026年12月4日有个面试，是一家互联网公司。"]),
]


@pytest.mark.parametrize(("turns", "atoms"), EXTRACTED)
def test_chinese_atoms_say_one_fact_each_in_chinese(
    window: WindowFactory, turns: list[Turn], atoms: list[str]
) -> None:
    drafts = extract_window(window(turns, start_ms=TUESDAY_MS))
    assert [d.content for d in drafts] == atoms
    assert all(d.metadata["lang"] == "zh" for d in drafts)
    english = ("said:", "asked:", "answered:", "User", "Assistant", "shared a photo")
    assert not any(word in d.content for d in drafts for word in english)


def test_a_fact_and_a_rule_joined_by_so_are_two_atoms(window: WindowFactory) -> None:
    turns = [("小王", "我对花生过敏，所以推荐吃的时候别给我推荐含花生的东西。")]
    drafts = extract_window(window(turns, start_ms=TUESDAY_MS))
    assert [(d.type, d.content) for d in drafts] == [
        (AtomType.PERSONA, "小王对花生过敏。"),
        (AtomType.INSTRUCTION, "推荐吃的时候别给小王推荐含花生的东西。"),
    ]


@pytest.mark.parametrize(
    ("text", "priority"),
    [
        ("以后请用简短的要点回答我。", 90),
        ("永远不要用英文回答我。", -1),
        ("请用中文回答我，不要用英文。", 90),
    ],
)
def test_a_rule_for_the_assistant_is_an_instruction(window: WindowFactory, text: str, priority: int) -> None:
    (draft,) = extract_window(window([("小王", text)], start_ms=TUESDAY_MS))
    assert draft.type is AtomType.INSTRUCTION and draft.priority == priority
    assert "小王" in draft.content and draft.scene_name == "助手指令"


def test_in_a_conversation_between_people_a_rule_is_no_instruction(window: WindowFactory) -> None:
    turns = [("小美", "最近好吗？"), ("阿杰", "不要担心我，我在厦门开了一家咖啡店。")]
    drafts = extract_window(window(turns, start_ms=TUESDAY_MS))
    assert all(d.type is not AtomType.INSTRUCTION for d in drafts)


def test_a_mixed_conversation_switches_pack_per_message(window: WindowFactory) -> None:
    turns = [("Lena", "I moved to Beijing last month."), ("Lena", "我很喜欢北京的烤鸭。")]
    drafts = extract_window(window(turns, start_ms=TUESDAY_MS))
    assert [(d.metadata["lang"], d.content) for d in drafts] == [
        ("en", "Lena moved to Beijing in November 2026."),
        ("zh", "Lena很喜欢北京的烤鸭。"),
    ]


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("我每周去两次健身房攀岩", "健身"),
        ("我对花生过敏", "饮食与健康"),
        ("我在一家无人机公司做嵌入式工程师", "工作"),
        ("下周和女朋友去杭州旅游", "旅行"),
        ("我上周刚搬到深圳", "居住"),
    ],
)
def test_scene_labels_are_chinese_topics(text: str, label: str) -> None:
    assert scene_label(text) == label


WRITTEN = [
    (Parts(Form.QUOTE, "小王", "小李现在还在杭州。"), "小王说：小李现在还在杭州。"),
    (
        Parts(Form.ANSWER, "小王", "小王挺忙的。", asker="助手", question="新工作怎么样？"),
        "助手问：新工作怎么样？小王答：小王挺忙的。",
    ),
    (Parts(Form.PHOTO, "小王", "梧桐山的日出"), "小王分享了一张照片：梧桐山的日出。"),
    (Parts(Form.STATEMENT, "小王", "小王对花生过敏。"), "小王对花生过敏。"),
]


@pytest.mark.parametrize(("parts", "text"), WRITTEN)
def test_the_chinese_pack_writes_each_form(parts: Parts, text: str) -> None:
    assert CHINESE.write(parts) == text
