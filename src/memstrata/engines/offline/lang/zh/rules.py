"""Chinese sentence rules of the offline engine: splitting into one fact per clause, fillers and
chatter, questions, who a clause is about, instructions to the assistant, and the atom's type.

Written from sentences that failed: "挺忙的。我对花生过敏，所以别给我推荐..." held two facts in one
atom; "我上周刚搬到深圳，在一家无人机公司做嵌入式工程师" is a move and a job.
"""

from __future__ import annotations

import re

from memstrata.engines.offline.l1.classify import Kind
from memstrata.lang.zh.words import STOPWORDS as CHINESE_STOPWORDS
from memstrata.lang.zh.words import tagged
from memstrata.models import AtomType
from memstrata.retrieval.terms import plain_words

# Sentence ends, and the clause breaks inside a sentence (a comma starts a new fact when both
# sides say something: Chinese drops the repeated subject, which the rewrite puts back).
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;…])|\n+")
_CLAUSE_BREAK = re.compile(r"[，,]")
# A clause opening with one of these continues the one before ("所以...", "但是...").
_CONNECTIVE = re.compile(
    r"^(?:所以|因此|但是|但|可是|不过|而且|并且|因为|然后|就|才|否则|不然|而|以免|免得|能让|可以让|会让|让|使|"
    r"是(?!不是))"
)
_FILLER = re.compile(
    r"^(?:(?:嗯+|哦+|噢+|啊+|哈+|嘿+|喔+|唉+|哇+|哎+|呀+)[，,、！!。\s]*|"
    r"(?:对了|顺便(?:说一下|说一句|提一下|一提|问一下)?|其实|话说|另外|说实话|老实说|你知道吗|是的|对|好的|好|"
    r"没错|当然)(?:[，,、！!。\s]+|$))+"
)
_CHATTER = re.compile(
    r"^(?:你好|您好|早上好|晚上好|晚安|谢谢|谢啦|多谢|感谢|不客气|没问题|没事|加油|恭喜|太好了|太棒了|真棒|"
    r"好厉害|厉害|哈哈+|嗯+|好的|好吧|行|可以|明白了?|知道了|收到|再见|拜拜|好久不见|久违了|"
    r"(?:听起来|看起来|感觉)?(?:很|挺|真|太|好)?(?:有意思|有趣|不错|棒|好玩|酷|厉害|羡慕))[啊呀呢吧啦哦了！!。，,~\s]*$"
)
_QUESTION_END = re.compile(r"[？?]\s*$|[吗呢嘛][。！!]?\s*$")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_END = re.compile(r"[。！？!?]$")
# An instruction to the assistant: a standing rule, or how answers should look.
_INSTRUCTION = re.compile(
    r"^(?:以后|今后|从现在开始|从今天起|之后|请你?|麻烦你?|记得|记住|千万|务必|一定要|不要|别|永远|总是|每次)"
    r"|(?:回答|回复|称呼|叫我|用中文|用英文|用简体|说话|聊天时|推荐).{0,12}(?:时|的时候)?(?:请|要|别|不要)"
)
_RULE_GOES_ON = re.compile(r"^(?:不要|别|也|并且|而且)")  # "请用中文回答，不要用英文": one rule
_STRICT = re.compile(r"永远|总是|一定|务必|千万|每次|绝对|始终")
_REMEMBER = re.compile(r"^(?:请你?)?(?:记住|记得|别忘了)[：:，,]?\s*")
_STANDING = re.compile(
    r"过敏|吃素|素食|纯素|不吃|忌口|哮喘|糖尿病|怀孕|乳糖不耐|工程师|医生|老师|律师|设计师|程序员|学生|工作|上班|"
    r"公司|住在|搬到|搬来|搬去|搬家|老家|来自|出生|养了|宠物"
)
# Relationships are standing facts unless the clause is dated: "下周六和女朋友去爬山" is a plan.
_RELATIONS = re.compile(
    r"女朋友|男朋友|老婆|老公|妻子|丈夫|未婚妻|未婚夫|结婚|离婚|儿子|女儿|孩子|爸爸|妈妈|父母|哥哥|姐姐|弟弟|妹妹"
)
# A word that opens with a number (一家, 三天): no content word of a scene.
NUMERAL = re.compile(r"^[\d零〇一二两三四五六七八九十百千万几每]")
PREFERENCE = re.compile(r"喜欢|爱吃|爱喝|最爱|讨厌|受不了|偏爱|热爱|迷上")
_PLAN = re.compile(r"打算|计划|准备|要去|想去|将要|会去|要和|要跟|约了|报名")
_HABIT = re.compile(r"每天|每周|每个月|每年|经常|平时|一般|常常|总是|通常")
_PAST = re.compile(r"了|过")


def sentences(text: str) -> list[str]:
    """The sentences of a Chinese message, end marks kept."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def han_count(text: str) -> int:
    return len(_HAN.findall(text))


def clauses(sentence: str) -> list[str]:
    """One fact per clause: commas split a sentence, except before a connective (所以, 但是: the
    clause leans on the one before) and around a clause of three characters or fewer (下周六，我要...:
    the time belongs to what follows; 我养了一只猫，叫年糕: the name to what precedes)."""
    pieces = [p.strip() for p in _CLAUSE_BREAK.split(sentence) if p.strip()]
    out: list[str] = []
    lead = ""
    for k, piece in enumerate(pieces):
        if lead:
            piece, lead = f"{lead}，{piece}", ""
        short = han_count(piece) <= 3
        if short and k + 1 < len(pieces) and not out:
            lead = piece
        elif out and (short or _CONNECTIVE.match(piece) or (_RULE_GOES_ON.match(piece) and is_rule(out[-1]))):
            out[-1] = f"{out[-1]}，{piece}"
        elif short and k + 1 < len(pieces):
            lead = piece
        else:
            out.append(piece)
    if lead:
        out.append(lead)
    return out


def strip_filler(clause: str) -> str:
    """A clause without its leading interjections and discourse fillers (嗯, 对了, 顺便说一下)."""
    rest = _FILLER.sub("", clause.strip())
    return rest if han_count(rest) else clause.strip()


def is_chatter(clause: str) -> bool:
    """Greetings, thanks and reactions: no fact."""
    return bool(_CHATTER.match(clause.strip())) or not content_words(clause)


def is_question(clause: str) -> bool:
    return _QUESTION_END.search(clause.strip()) is not None


def content_words(text: str) -> list[str]:
    """Segmented words that carry meaning (Chinese stopwords and single particles dropped)."""
    return [
        w
        for w in plain_words(text)
        if w not in CHINESE_STOPWORDS and (len(w) > 1 or (w.isalnum() and not _HAN.match(w)))
    ]


def rewrite(clause: str, me: str, other: str) -> str:
    """First person -> ``me``, second person -> ``other`` ("我们" -> "小王他们")."""
    text = clause.replace("我们", f"{me}他们").replace("咱们", f"{me}他们")
    text = text.replace("我", me)
    return text.replace("您", other).replace("你们", f"{other}他们").replace("你", other)


_PRONOUN = ("他们", "她们", "它们", "他", "她", "它", "这", "那", "大家", "别人", "人家")
_THIRD = re.compile(r"^(?:他们|她们|他|她)")
# A relation opening a clause is the speaker's ("女朋友小李很喜欢爬山": the speaker's girlfriend).
_RELATION = re.compile(
    r"^(?:女朋友|男朋友|老婆|老公|妻子|丈夫|未婚妻|未婚夫|妈妈|爸爸|父母|爸妈|女儿|儿子|孩子|哥哥|姐姐|弟弟|妹妹|"
    r"爷爷|奶奶|外公|外婆|同事|老板|领导|室友|朋友|家人|团队|公司)"
)
_NAME_PREFIX = ("小", "老", "阿")
_SAYS = re.compile(r"^(?:说|让|要求|建议|觉得|认为|告诉|问|希望)$")  # "医生说...": someone else speaks
_TIME_LEAD = re.compile(r"^(?:\d{4}年)?(?:\d{1,2}月)?(?:\d{1,2}日)?(?:（[^）]*）)?[，,]?")


def _is_name(word: str, flag: str) -> bool:
    return flag in ("nr", "nrfg", "nrt") and 2 <= len(word) <= 3 and han_count(word) == len(word)


def _named_after_relation(word: str, flag: str) -> bool:
    """Whether the word after a relation is its name ("女儿朵朵": jieba tags 朵朵 a measure word)."""
    return (
        2 <= len(word) <= 3
        and han_count(word) == len(word)
        and flag.startswith(("n", "q", "j"))
        and not _RELATION.match(word)
    )


def last_person(text: str) -> str | None:
    """The last person ``text`` names: a name jieba tags as one ("张伟"), 小/老/阿 and a name
    character ("小李"), or the name after a relation ("女儿朵朵")."""
    pairs = tagged(text)
    found: str | None = None
    for k, (word, flag) in enumerate(pairs):
        nxt = pairs[k + 1] if k + 1 < len(pairs) else ("", "")
        if word in _NAME_PREFIX and nxt[1].startswith("nr") and len(nxt[0]) == 1:
            found = word + nxt[0]
        elif _is_name(word, flag):
            found = word
        elif _RELATION.match(word) and _named_after_relation(*nxt):
            found = nxt[0]
    return found


def person_at_start(clause: str) -> str | None:
    """A person's name opening ``clause`` ("小李现在还在杭州" -> 小李), else None."""
    pairs = tagged(clause[:8])
    if (
        len(pairs) >= 2
        and pairs[0][0] in _NAME_PREFIX
        and pairs[1][1].startswith("nr")
        and len(pairs[1][0]) == 1
    ):
        return pairs[0][0] + pairs[1][0]
    if pairs and pairs[0][1] in ("nr", "nrfg", "nrt") and 2 <= len(pairs[0][0]) <= 3:
        return pairs[0][0]
    return None


SPEAKER_WITHIN = 10  # characters: a clause naming its speaker this early needs no speaker in front


def opens_with(text: str, me: str) -> bool:
    """Whether ``text`` (rewritten) names ``me`` at its start, a leading date aside, or within its
    first characters ("农历八月十五是小王妈妈的生日")."""
    lead = _TIME_LEAD.sub("", text, count=1)
    return lead.startswith(me) or me in text[: SPEAKER_WITHIN + len(me)]


def subject(clause: str, me: str) -> str:
    """Who a rewritten clause is about: ``me`` (it opens with the speaker, with none, or with one of
    the speaker's relations: the speaker is put in front), ``other`` (a pronoun, a name or a
    "noun 的" opens it: the clause is quoted)."""
    if opens_with(clause, me) or _RELATION.match(clause):
        return "me"
    if clause.startswith(_PRONOUN) or person_at_start(clause):
        return "other"
    pairs = tagged(clause[:8])
    if (
        len(pairs) >= 2
        and pairs[0][1] in ("n", "ns", "nz")
        and (pairs[1][0] == "的" or _SAYS.match(pairs[1][0]))
    ):
        return "other"  # "深圳的房租太贵了", "医生说要休息两周": a noun is the subject
    return "me"


def opens_with_noun(clause: str) -> bool:
    """Whether ``clause`` opens with a noun or a number ("同济大学", "东京和京都"): an answer that
    names a thing, not something the speaker does."""
    pairs = tagged(clause[:8])
    return bool(pairs) and pairs[0][1].startswith(("n", "m")) and not _RELATION.match(clause)


def resolve_pronoun(clause: str, person: str | None) -> str:
    """A clause opening with 他/她 about the person the message named just before ("小李现在还在
    杭州，她明年三月搬来深圳" -> "小李明年三月搬来深圳"); unchanged when there is none."""
    m = _THIRD.match(clause)
    if m is None or person is None or m.group(0).endswith("们"):
        return clause
    return person + clause[m.end() :]


def split_rule(clause: str) -> tuple[str, str] | None:
    """``(fact, rule)`` when a clause joins a fact and a rule for the assistant with a connective
    ("我对花生过敏，所以...别给我推荐含花生的东西"): two atoms, one fact each."""
    head, sep, tail = clause.partition("，")
    if not sep:
        return None
    rest = _CONNECTIVE.sub("", tail, count=1)
    if rest != tail and _INSTRUCTION.search(rest) and han_count(head) >= 3:
        return head, rest
    return None


def is_rule(clause: str) -> bool:
    """Whether ``clause`` reads as a rule for the assistant (the caller knows who it is said to)."""
    return _INSTRUCTION.search(clause.strip()) is not None and not is_question(clause)


def instruction(clause: str, me: str) -> tuple[str, int] | None:
    """``(text, priority)`` of a rule the user gives the assistant, or None."""
    plain = clause.strip()
    if not _INSTRUCTION.search(plain) or is_question(plain):
        return None
    strict = _STRICT.search(plain) is not None
    body = _REMEMBER.sub("", plain)
    text = body.replace("我", me).replace("您", "助手").replace("你", "助手")
    return (text if _END.search(text) else f"{text}。"), (-1 if strict else 90)


def classify(clause: str, *, dated: bool) -> Kind:
    """Type and priority of a Chinese fact clause, on the English engine's scale (persona 60-80:
    standing facts 80, preferences 75, habits 70; episodic: dated 60, plans 55, past events 50)."""
    if _STANDING.search(clause):
        return Kind(AtomType.PERSONA, 80)
    if dated:
        return Kind(AtomType.EPISODIC, 60)
    if _RELATIONS.search(clause):
        return Kind(AtomType.PERSONA, 80)
    if _PLAN.search(clause):
        return Kind(AtomType.EPISODIC, 55)
    if PREFERENCE.search(clause):
        return Kind(AtomType.PERSONA, 75)
    if _HABIT.search(clause):
        return Kind(AtomType.PERSONA, 70)
    if _PAST.search(clause):
        return Kind(AtomType.EPISODIC, 50)
    return Kind(AtomType.PERSONA, 60)
