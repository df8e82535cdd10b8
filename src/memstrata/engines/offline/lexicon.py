"""Word lists the offline engine reasons with. General English only: no names, no dataset terms."""

from __future__ import annotations

import calendar

from memstrata.retrieval.terms import STOPWORDS as QUERY_STOPWORDS


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text`` (word lists read better as paragraphs)."""
    return frozenset(text.split())


# The English function words search drops from queries, plus what chat adds on top: filler words
# ("gonna", "kinda") and vague nouns ("thing", "stuff") that never carry a fact. One base list, so
# the engine and the search agree on what a content word is.
STOPWORDS = QUERY_STOPWORDS | word_set(
    """
    mine even still yet now gonna wanna gotta kinda sorta cause 'cause 's one ones something anything
    everything nothing someone anyone everyone way ways stuff bit well back
    """
)

# Words that carry no fact on their own: reactions, politeness, fillers, vague verbs.
GENERIC = word_set(
    """
    hi hey hello hiya yo bye goodbye cheers thanks thank thx ty welcome congrats congratulations wow whoa
    oh ooh ah aw aww awesome amazing great cool nice good fine lovely sweet wonderful fantastic fabulous
    incredible inspiring inspirational impressive brilliant beautiful gorgeous stunning excellent perfect
    super
    glad happy proud pleased excited thrilled sorry sad bummer yeah yes yep yup nope nah ok okay sure totally
    absolutely definitely indeed exactly true right agree agreed really truly seriously honestly actually
    lol haha hahaha omg sounds sound seems seem looks look looking hear heard hearing see seeing talk
    talking chat chatting soon later luck care take keep going doing done know knew think thought feel
    feeling felt mean means meant appreciate appreciated word words kind kindly hope hoping wish wishes
    catch share sharing tell telling told say said glad best better lot fun tough hard easy pretty
    cute wild crazy insane whole entire always never sometimes often guess bet maybe perhaps probably
    thing stuff things time times day days moment moments news update anyway anyways btw man dude girl guys
    buddy pal dear hun honey bro sis let lets come came makes make made want wanted need needed like likes
    check gotta
    """
)

# Adverbs allowed between a subject pronoun and its verb ("I really love").
ADVERBS = word_set(
    """
    really also just still usually always never often sometimes totally actually absolutely definitely
    even truly kinda sorta personally mostly only already recently finally now currently generally
    seriously honestly certainly especially deeply particularly mainly normally occasionally rarely
    seldom hardly barely nearly almost probably typically basically literally genuinely sincerely
    strictly strongly firmly completely entirely deliberately consciously much greatly highly
    """
)

# Sentence adverbs, connectives and politeness words that open a statement ("However, ...",
# "Unfortunately the ...", "Please compare ..."); capitalised there, they are never a name.
DISCOURSE = word_set(
    """
    however although though whereas while meanwhile moreover furthermore additionally besides also
    anyway anyhow otherwise therefore thus hence consequently nevertheless nonetheless instead still
    again plus overall basically essentially ultimately eventually initially originally currently
    recently lately finally lastly first firstly second secondly third thirdly next then afterwards
    alternatively specifically similarly likewise notably importantly interestingly surprisingly
    unfortunately fortunately luckily sadly hopefully ideally apparently obviously clearly naturally
    admittedly frankly honestly actually thankfully regardless accordingly please kindly
    """
)

# Third-person forms that are not "+s": the common irregulars and auxiliaries.
IRREGULAR_3SG = {
    "am": "is",
    "are": "is",
    "have": "has",
    "do": "does",
    "go": "goes",
    "were": "was",
    "don't": "doesn't",
    "haven't": "hasn't",
    "aren't": "isn't",
    "weren't": "wasn't",
    "dont": "doesn't",
}

# Base-form verbs safe to conjugate after "I" / subject "you" (unknown words are left alone).
BASE_VERBS = word_set(
    """
    accept add admire adore agree aim appreciate ask attend avoid bake believe belong bike blog build buy
    call care carry celebrate change chat check cherish choose clean climb coach collect come cook count
    cover crave create cycle dance decide deserve design dislike do draw dream drink drive earn eat enjoy
    exercise expect explore feel find finish fish fix focus follow forget get give go grow hate have
    help hike hold hope host identify imagine intend keep knit know lead learn leave like listen live
    look love make manage mean meditate meet mentor miss need own paint participate plan play practice
    practise pray prefer prepare promise read recommend relax remember rent research ride run save see
    sell send sew shop sing sketch ski skate sleep speak spend stay struggle study support surf swim take
    talk teach tend think train travel try understand use value visit volunteer wake walk want watch wear
    wish wonder work worry write
    fly move start join arrive return head commute graduate retire switch deploy host launch ship test
    review refactor prioritize prioritise despise detest refuse
    """
)

# Irregular past forms: after "I" they are verbs already in the past, never base forms to conjugate.
IRREGULAR_PAST = word_set(
    """
    was were went had did made said got came saw took knew thought told became left felt brought began
    kept held wrote stood heard meant met ran paid sat spoke led grew lost fell sent built understood
    drew broke spent chose sought threw caught dealt won forgot fought ate drank drove bought wore
    flew hung hid sang sank swam rang shook slept swept struck taught tore woke bent blew bled dug fled
    froze forgave lent overcame rode shone slid spun stole stung swore swung sprang underwent withdrew
    wept found gave sold mistook
    """
)  # not "bit", "lay", "rose", "shot", "stuck", "fed": as often a noun or a present state

# Modals and past forms after which nothing is conjugated.
NO_CONJUGATE = word_set(
    """
    can could will would shall should may might must did didn't was wasn't had hadn't can't couldn't
    won't wouldn't shouldn't
    """
)

# English names from the standard library (its C locale: Python never sets another by itself).
WEEKDAYS = tuple(d.lower() for d in calendar.day_name)
MONTHS = tuple(m.lower() for m in calendar.month_name[1:])
MONTH_ABBREV = {m[:3]: i + 1 for i, m in enumerate(MONTHS)} | {"sept": 9}

NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a couple": 2,
    "couple of": 2,
    "a few": 3,
    "few": 3,
    "several": 3,
}
