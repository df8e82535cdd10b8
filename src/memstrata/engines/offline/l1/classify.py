"""What a sentence is worth: small talk to skip, a question, an instruction, or a fact of some type.

The rules look at the speaker's own words (before pronouns are rewritten): first-person cues
("my sister", "I love", "I work as") make lasting persona facts; dates, past-tense events and plans
make episodic facts; imperatives addressed to the assistant make instructions.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from memstrata.engines.offline.l1.bare import only_pronoun
from memstrata.engines.offline.l1.sentences import lower_words
from memstrata.engines.offline.lexicon import GENERIC, IRREGULAR_PAST, STOPWORDS
from memstrata.models import AtomType
from memstrata.retrieval.terms import has_unspaced

_I = re.IGNORECASE
_RELATION = re.compile(
    r"\b(?:my|our)\s+(?:\w+\s+)?(?:husband|wife|partner|boyfriend|girlfriend|fianc[ée]e?|spouse|son|sons|"
    r"daughters?|kids?|children|child|baby|babies|mom|mum|mother|dad|father|parents?|sisters?|brothers?|"
    r"siblings?|grand\w+|aunt|uncle|cousins?|niece|nephew|family|friends?|bff|roommate|neighbou?rs?|boss|"
    r"co-?workers?|colleagues?|dogs?|cats?|pets?|puppy|kitten)\b|\b(?:married|divorced|engaged|single "
    r"parent|widowed|pregnant)\b",
    _I,
)
# A preference or aversion the speaker states about themselves, the kind an assistant must keep to
# in later requests that do not mention it ("I avoid gluten", "I prefer window seats", "I don't
# wear wool", "I have a fear of heights"). Not "I love/like/enjoy": chat is full of those, and they
# are likes (``_PREFERENCE``), not rules for the assistant. Present tense: "I avoided" is an event.
_STATED = re.compile(
    r"\b(?:i|we)(?:'m| am| are| have| 've)?\s+(?:(?!(?:can|could|should|might|may|would|maybe)\b)\w+\s+){0,2}?"
    r"(?:prefer|prefers|avoid|dislike|despise|"
    r"detest|loathe|hate|refuse|prioriti[sz]e|can't stand|cannot stand|stay away from|steer clear of|"
    r"(?:don't|do not|never|won't|will not|no longer) (?:really )?(?:eat|drink|wear|use|like|enjoy|buy|"
    r"watch|consume|tolerate)|(?:won't|will not) consider|"
    r"only (?:eat|drink|wear|use|buy|watch|shop))\b|"
    r"\b(?:i|we) (?:have|'ve got|have got) (?:a |an )?(?:\w+ ){0,2}(?:preference|aversion|objection|"
    r"fear|phobia|allergy|intolerance|dislike)\b|"
    r"\b(?:i'm|i am|we're|we are) (?:a |an )?(?:\w+ )?(?:advocate|allergic|afraid|terrified|scared|not a fan|"
    r"not into|against|not interested|uncomfortable|not comfortable)\b|\b(?:don't|doesn't|do not) interest me\b|\b(?:i have|i've got) no interest\b|\bmy (?:strong )?preference\b|"
    r"\b(?:i|we) (?:\w+ )?(?:follow|keep|stick to|am on|'m on) (?:a |an )?(?:\w+ ){0,2}diet\b",
    _I,
)
_PREFERENCE = re.compile(
    r"\b(?:i|we|i've|we've|i've always|i always)\s+(?:\w+\s+)?(?:love|loved|like|liked|enjoy|enjoyed|adore|"
    r"hate|hated|prefer|dislike|disliked)\b|\bfavou?rite\b|\bfave\b|\bfan of\b|\bpassionate about\b|"
    r"\bcan't stand\b|\bobsessed with\b|\bi'm (?:really |so |big )?into\b",
    _I,
)
_IDENTITY = re.compile(
    r"\b(?:i am|i'm)\s+(?:a|an)\s+\w+|\bmy name is\b|\bcall me\b|\bi work\b|\bmy (?:job|career|work)\b|"
    r"\bi live\b|\b(?:i'm|i am) from\b|\bgrew up\b|\bmoved (?:here|to|from)\b|\bi study\b|\bmy major\b|"
    r"\byears old\b|\bi identify\b|\bmy (?:home|hometown|country)\b",
    _I,
)
# Standing facts: health, work, home and partners. They describe how things are, so they are persona
# even when told as news with a date ("I just started a new job", "I moved here last week").
_STANDING = re.compile(
    r"\b(?:allerg(?:y|ies|ic)|intoleran(?:t|ce)|(?:i'm|i am|i've been|we're|we are) (?:a )?(?:vegetarian|vegan)|"
    r"diabetic|diabetes|asthma|celiac|coeliac|"
    r"diagnosed with|i work(?:ed)? (?:as|at|for|in)|(?:i'm|i am) working (?:as|at|for)|(?:my|new|a) job (?:as|at)|"
    r"(?:i|we) (?:just )?(?:started|began) (?:a |my )?(?:new )?(?:job|position|role|working)|"
    r"i (?:live|lived) in|(?:i|we) (?:just )?moved (?:here|to|from|in)|grew up in|(?:i'm|i am) from|"
    r"i was born in|my hometown|my favou?rite \w+(?: \w+)? (?:is|are)|"
    r"my (?:husband|wife|partner|boyfriend|girlfriend|fianc[ée]e?|spouse) (?-i:[A-Z])|"
    r"(?:i'm|i am|i got|we got|we're|we are) (?:married|engaged|divorced))",
    _I,
)
# Past tense that tells of an event: an irregular past verb or a time gone by (not an "-ed" word,
# which is as often an adjective: "married", "excited", "motivated").
_EVENT_PAST = re.compile(rf"\b(?:{'|'.join(sorted(IRREGULAR_PAST))}|last|ago|yesterday)\b", _I)
_HABIT = re.compile(
    r"\b(?:i|we)\s+(?:\w+\s+)?(?:have|own|play|paint|read|write|run|swim|hike|cook|bake|draw|dance|sing|"
    r"practice|practise|volunteer|collect|go)\b|\bhobby|hobbies|\bevery (?:day|week|morning|weekend)\b",
    _I,
)
_PLAN = re.compile(
    r"\b(?:going to|gonna|plan|plans|planning|will|i'll|we'll|want to|wanna|hope to|hoping to|intend|"
    r"thinking (?:about|of)|looking forward|can't wait|upcoming|about to|next)\b",
    _I,
)
# An aim or a difficulty under way: the task of the moment, told the way a plan is ("I'm trying to
# handle the 429 errors", "I've been struggling with the proofs", "I'm having trouble with the
# config", "I'm not sure how to ..."). Like "I want to ..." it is episodic: it holds while the task
# lasts, not as a lasting fact of the speaker's (the persona would fill with the week's bugs).
_UNDER_WAY = re.compile(
    r"\b(?:i'm|i am|we're|we are|i've been|we've been|i have been|we have been)\s+"
    r"(?:(?:still|really|just|currently|now|also)\s+)?(?:"
    r"(?:trying|attempting)\s+to\b|struggling\b|"
    r"having\s+(?:(?:some|a\s+lot\s+of|a\s+bit\s+of|real|serious)\s+)?(?:trouble|issues|problems|difficulty|"
    r"difficulties|a\s+hard\s+time|a\s+tough\s+time)\b|"
    r"(?:not\s+sure|unsure|stuck)\b)",
    _I,
)
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself|i'm|i've|i'll|i'd|we|us|our|ours|we're|we've)\b", _I)
_QUESTION_START = re.compile(
    r"^(?:what|when|where|who|whom|whose|why|how|which|do|does|did|are|is|was|were|have|has|had|can|"
    r"could|would|will|should|any|anything)\b",
    _I,
)
_ANSWER_WORDS = r"yeah|yes|yep|yup|sure|totally|absolutely|definitely|true|right|exactly|indeed"
_FILLER_WORDS = (
    r"oh|wow|whoa|hey|hi|hello|well|so|also|haha|hahaha|lol|omg|aw+|ah|ok|okay|honestly|anyway|anyways|btw|"
    r"by the way|oh my gosh|oh wow"
)
_FILLER = re.compile(rf"^(?:(?:{_FILLER_WORDS}|{_ANSWER_WORDS})\b[\s,!.:;-]*)+", _I)
_FILLER_ONLY = re.compile(rf"^(?:(?:{_FILLER_WORDS})\b[\s,!.:;-]*)+", _I)
_ANSWER_START = re.compile(rf"^(?:{_ANSWER_WORDS}|no|nope|nah|not|of course|maybe|probably|kind of)\b", _I)
# A reaction to what was said ("That sounds great", "Must be fun", "Wow, ..."), not an answer.
_REACTION_WORDS = frozenset(("sounds", "sound", "looks", "seems", "must", "wow", "congrats", "glad", "aww"))
_LEAD_NAME = re.compile(r"^([A-Z][a-z]+)\s*[,!.:]+\s*")
_TRAIL_NAME = re.compile(r",\s*([A-Z][a-z]+)\s*([!.?]*)$")
_THANK_WORDS = r"thanks|thank you|thank u|thx"
_THANKS = re.compile(rf"^(?:{_THANK_WORDS}|ty|congrats|congratulations|aw+|wow)\b", _I)
# Thanks for the other's help: appreciation of what the other gave is thanks too ("I really
# appreciate your help", "Appreciate the offer"); "I appreciate the little things in life" is not.
_THANKED = re.compile(
    rf"^(?:{_THANK_WORDS}|(?:(?:i|we)\s+)?(?:(?:really|truly|so|greatly)\s+)?appreciate\s+"
    r"(?:it|that|this|you|your|the\s+(?:\w+\s+)?(?:help|offer|support|advice|words|encouragement|"
    r"compliment|tips?)))\b",
    _I,
)
# The rest of thanks for what the other did, the whole sentence ("Thanks, Mel, for walking me
# through it!", "Really appreciate you keeping me in the loop"): its "me" / "us" is only the one
# helped, so it tells nothing of the speaker; "... my pottery show" or a clause after it ("Thanks,
# it was amazing being around people like me") still may.
_THANKS_FOR = re.compile(
    r"^(?:\s+(?:so|very)\s+much|\s+a\s+(?:lot|ton|bunch)|\s+again)?"
    r"(?:[,\s]+(?-i:[A-Z])\w*)?[,\s]+for\s+(?P<what>[^,;:.!?]+)(?:,\s*(?-i:[A-Z])\w*)?[.!\s]*$",
    _I,
)
# A closing that only says the thanks are meant ("..., it means a lot to me").
_MEANS_A_LOT = re.compile(
    r"^(?:and\s+)?(?:it|that|this)(?:'s|\s+is)?(?:\s+(?:really|truly))?\s+(?:means|meant)\s+"
    r"(?:a\s+lot|so\s+much|the\s+world|a\s+great\s+deal)(?:\s+to\s+(?:me|us))?[.!\s]*$",
    _I,
)
_GOES_ON = re.compile(r"[.!?]\s+\w")
_APPRECIATED = re.compile(r"^\s*(?P<what>[^,;:.!?]*)(?:,\s*(?-i:[A-Z])\w*)?[.!\s]*$")
_ACK_LEAD = re.compile(r"^([^,;]{1,30}?)[,;]\s*(?=thanks\b|thank you\b)", _I)
_HELPED_ONE = frozenset(("me", "us", "myself", "ourselves"))
# Words of a reply that only acknowledges help ("That helps a lot!", "Everything's clear now",
# "Yes, please"): no fact of the speaker or of the world.
_UNDERSTOOD = frozenset(
    "help helps helped helpful useful clear clears clearer clarifies clarified sense works worked please "
    "everything everything's".split()
)


# A check-in rather than a question about a fact: "How is the first week going?", "How are you?",
# "How was your weekend?", "What's up?". Not "How long / how many / how old ...": those ask facts.
_CHECK_IN = re.compile(
    r"^(?:(?:so|and|hey|hi|oh)[,\s]+)*(?:"
    r"how(?:'s|'re| is| are| was| were| has| have| did)\s+(?:\w+\s+){0,5}?(?:going|gone|go|been|doing|"
    r"treating|holding up|coming along|feeling|today|lately|so far|week|weekend|day|morning|evening|things)\b|"
    r"how are you\b|how(?:'s| is) (?:it|everything|life)\b|what's (?:up|new)\b|how have you been\b)",
    _I,
)
# An answer to a check-in this short, with at most one content word ("Busy.", "Good, thanks!"),
# says no fact; "Went camping!" does.
SMALL_TALK_WORDS = 4


@dataclass(frozen=True, slots=True)
class Kind:
    """An atom's type and priority."""

    type: AtomType
    priority: int
    preference: bool = False  # a preference the speaker stated about themselves (``states_preference``)


def strip_filler(sentence: str, names: Collection[str] = (), *, keep_answer: bool = False) -> str:
    """``"Yeah, I painted it"`` -> ``"I painted it"``; ``"Hey Mel, I ..."`` -> ``"I ..."``.

    Drops leading interjections and a leading or trailing vocative naming one of ``names``. With
    ``keep_answer`` a leading "yes"/"no" stays (it is the answer to a question). The sentence is
    returned unchanged when nothing would be left.
    """
    rest = (_FILLER_ONLY if keep_answer else _FILLER).sub("", sentence.strip())
    lead = _LEAD_NAME.match(rest)
    if lead and lead.group(1).lower() in names:
        rest = rest[lead.end() :]
    trail = _TRAIL_NAME.search(rest)
    if trail and trail.group(1).lower() in names:
        rest = rest[: trail.start()] + trail.group(2)
    if not any(c.isalnum() for c in rest):
        return sentence.strip()
    return rest[:1].upper() + rest[1:]


def is_reaction(sentence: str) -> bool:
    """A sentence that reacts to the other speaker ("That sounds amazing!", "Must be fun")."""
    return any(w in _REACTION_WORDS for w in lower_words(sentence)[:5])


def is_answer_start(sentence: str) -> bool:
    """A sentence opening like an answer: "Yes, ...", "No, ...", "Not really", "Definitely"."""
    return bool(_ANSWER_START.match(sentence.strip()))


def content_words(text: str, names: Collection[str] = ()) -> list[str]:
    """Words that can carry a fact: not stopwords, not reactions or fillers, not the given names."""
    return [w for w in lower_words(text) if w not in STOPWORDS and w not in GENERIC and w not in names]


def is_question(sentence: str) -> bool:
    """A sentence that asks rather than tells."""
    s = sentence.strip()
    return s.endswith(("?", "？")) or (bool(_QUESTION_START.match(s)) and s.endswith("?!"))


# Where a run-on sentence turns from telling to asking: "I'm vegan, so I prefer X, how can I ...?"
_TURN_TO_ASK = re.compile(
    r",\s+(?:so\s+|and\s+|but\s+)?(?:how|what|which|where|when|why|who|can you|could you|would you|will you|"
    r"do you|should i|can i|could i|is there|are there|any (?:tips|ideas|suggestions))\b",
    _I,
)


def told_before_asking(sentence: str) -> str | None:
    """The statement a question opens with, when it tells something about the speaker first ("I'm
    trying to keep my app under 2.5MB, so I prefer dependency-free solutions, can you help me ...?"
    -> "I'm trying to keep my app under 2.5MB, so I prefer dependency-free solutions."); else None."""
    turn = _TURN_TO_ASK.search(sentence)
    if turn is None:
        return None
    head = sentence[: turn.start()].strip()
    if _QUESTION_START.match(head) or not is_first_person(head) or len(head.split()) < 4:
        return None
    return head + "."


def is_thanks(sentence: str) -> bool:
    """A sentence that starts as thanks or a reaction ("Thanks, Mel!", "Aww ...")."""
    return bool(_THANKS.match(sentence.strip()))


def is_small_talk(question: str, answer: Collection[str], names: Collection[str] = ()) -> bool:
    """A check-in ("How is the first week going?") answered in a few words without a fact ("Busy."):
    small talk that makes no memory. "Went camping!" or a longer answer ("Busy, I started at the
    clinic on Monday") still does."""
    said = " ".join(strip_filler(a, names, keep_answer=True) for a in answer)
    short = len(lower_words(said)) < SMALL_TALK_WORDS and len(content_words(said, names)) < 2
    return short and bool(_CHECK_IN.match(strip_filler(question, names)))


def is_first_person(sentence: str) -> bool:
    """Whether the speaker talks about themselves (I, me, my, we, our ...)."""
    return bool(_FIRST_PERSON.search(sentence))


# The speaker opens the sentence: the preference is what they say, not a clause of it ("Sounds
# fun, even if I'm not into games"); and it is no condition ("... if I find one I'm not allergic to").
_OPENS_WITH_ME = re.compile(r"^(?:i|i'm|i've|i'd|we|we're|we've|my|our)\b", _I)
_CONDITION = re.compile(r"\b(?:if|unless|whether)\b", _I)


def states_preference(sentence: str) -> bool:
    """Whether the speaker states a preference or aversion of their own ("I avoid gluten", "I'm
    keeping my app small, so I prefer minimal dependencies")."""
    plain = _FILLER.sub("", sentence.strip())
    found = _STATED.search(plain)
    return (
        found is not None
        and _OPENS_WITH_ME.match(plain) is not None
        and _CONDITION.search(plain, 0, found.start()) is None
    )


def is_standing(sentence: str) -> bool:
    """Whether the sentence states a standing fact: health, work, home or a partner."""
    return bool(_STANDING.search(sentence))


def _weight(word: str) -> int:
    """How many words a token stands for: a run of unsegmented script (CJK) packs several."""
    return 1 + len(word) // 3 if has_unspaced(word) else 1


def thanks_only(sentence: str) -> bool:
    """Thanks (or appreciation) that tell nothing of the speaker: none in the first person ("Thanks
    for the detailed review!"), or one whose first person is only the one helped or the thanker
    ("Thanks for walking me through it!", "I really appreciate your help, it means a lot to me").
    "Thank you for coming to my party" tells something."""
    s = sentence.strip()
    lead = _ACK_LEAD.match(s)
    if lead and all(w in _UNDERSTOOD for w in content_words(lead.group(1))):
        s = s[lead.end() :]  # "Makes sense, thanks for breaking it down!"
    head = _THANKED.match(s)
    if head is None or _GOES_ON.search(s):
        return False  # a statement joined after it ("Appreciate your support. It's been a journey.")
    main, _, tail = s.rpartition(", ")
    if main and (_MEANS_A_LOT.match(tail) or thanks_only(tail)):
        s = main  # "Thanks for the compliment, I really appreciate it!"; "..., it means a lot to me"
    rest = s[head.end() :]  # after "I appreciate your", whose "I" is the thanks itself
    if not is_first_person(rest):
        return True
    found = (_THANKS_FOR if head.group().lower().startswith(("than", "thx")) else _APPRECIATED).match(rest)
    return found is not None and not any(
        w not in _HELPED_ONE and is_first_person(w) for w in found.group("what").split()
    )


def acknowledges(sentence: str, names: Collection[str] = ()) -> bool:
    """A sentence that only takes what the other said or offered: agreement ("Yes.", "Sure!"),
    understanding ("Yeah, that helps a lot!", "Everything's clear now") or thanks that tell
    nothing of the speaker. "Python, please." names a choice: no acknowledgement."""
    if thanks_only(sentence):
        return True
    return all(w in _UNDERSTOOD for w in content_words(strip_filler(sentence, names), names))


def worth_keeping(sentence: str, names: Collection[str], *, dated: bool) -> bool:
    """False for greetings, thanks, reactions and other sentences with too few content words, for
    thanks that tell nothing of the speaker (``thanks_only``: "Thanks for the detailed review!",
    "Thanks for walking me through it!", "I really appreciate your help"; "Thank you for coming to
    my party" and a dated one still tell something), and for a sentence whose one thing is a bare
    pronoun ("Highly recommend it for sure!", ``bare.only_pronoun``) unless dated or a standing
    fact ("I'm allergic to it" still tells of the speaker)."""
    if not dated and thanks_only(sentence):
        return False
    if only_pronoun(strip_filler(sentence, names), names) and not dated and not is_standing(sentence):
        return False  # "Highly recommend it for sure!": what "it" is, is said elsewhere
    n = sum(_weight(w) for w in content_words(sentence, names))
    if n >= 2:
        return True
    return n == 1 and (dated or is_first_person(sentence))


def classify(sentence: str, *, dated: bool, past: bool) -> Kind:
    """Type and priority of a fact sentence, judged on the speaker's own words.

    persona 60-85: stated preferences and aversions ("I avoid gluten") 85 unless dated, standing
    facts (health, work, home, partner) 80 whatever the tense or date, relationships and identity
    80, likes 75, habits and possessions 70, other first-person present facts 60. episodic 40-60:
    dated 60, plans and tasks under way ("I'm trying to ...") 55, past events 50, other 40. A
    stated preference is marked whatever its type.
    """
    stated = states_preference(sentence)
    if is_standing(sentence):
        return Kind(AtomType.PERSONA, 80, stated)
    if stated and not dated:
        # before the past-tense test: "I don't wear clothing made from wool" is no event
        return Kind(AtomType.PERSONA, 85, True)
    relation = bool(_RELATION.search(sentence)) or bool(_IDENTITY.search(sentence))
    if dated:
        return Kind(AtomType.EPISODIC, 60)
    if _PLAN.search(sentence) and not relation:
        return Kind(AtomType.EPISODIC, 55)
    if past and (not relation or _EVENT_PAST.search(sentence)):
        # "I took my kids to the park" is an event, family in it or not; "I'm lucky to have my
        # husband, he keeps me motivated" is no event for its "-ed" word
        return Kind(AtomType.EPISODIC, 50)
    if _UNDER_WAY.search(sentence) and not relation:
        return Kind(AtomType.EPISODIC, 55)  # "I'm trying to ...": a task of the moment, as a plan is
    if relation:
        return Kind(AtomType.PERSONA, 80)
    if _PREFERENCE.search(sentence):
        return Kind(AtomType.PERSONA, 75)
    if _HABIT.search(sentence):
        return Kind(AtomType.PERSONA, 70)
    if is_first_person(sentence):
        return Kind(AtomType.PERSONA, 60)
    return Kind(AtomType.EPISODIC, 40)
