"""Scene labels for atoms: a short, stable topic name derived from the content's words.

A fixed topic lexicon maps word stems to broad topics ("dog" -> pets, "violin" -> music); the label
is the best topic, joined with the runner-up when it scores as well (e.g. ``art-family``). Content
that hits no topic is labelled with its two most distinctive words. The same words always give the
same label.
"""

from __future__ import annotations

from collections.abc import Iterable

from memstrata.engines.offline.l1.sentences import lower_words
from memstrata.engines.offline.lexicon import GENERIC, MONTHS, STOPWORDS, WEEKDAYS, word_set

_TOPICS: dict[str, str] = {
    "family": "family famil fam kid kids child children son daughter husband wife mom mother dad father "
    "sister brother parent parents grandma grandmother grandpa grandfather grandparent baby married marri "
    "wedding niece nephew cousin aunt uncle adopt adoption foster sibling",
    "art": "paint painting painted art artist artwork drawing draw sketch pottery ceramic sculpt canvas "
    "gallery museum craft mural portrait",
    "music": "music song songs sing singing violin guitar piano concert band album drum drums playlist "
    "musician melody orchestra choir",
    "dance": "dance dances dancing dancer dancers choreography ballet hip-hop salsa tango",
    "books": "book books read reading novel author library poem poetry literature",
    "writing": "write writing writer wrote blog journal story stories screenplay script essay",
    "work": "job work working career office boss colleague coworker company business promotion interview "
    "internship project client salary hired startup manager engineer engineering pipeline deadline "
    "meeting meetings",
    "education": "school college university class classes course study studying degree student teacher "
    "exam graduate graduation lecture homework edu",
    "health": "health doctor hospital sick illness therapy therapist mental injury injured pain medicine "
    "surgery diet allergic allergy anxiety depression stress counseling",
    "fitness": "run running ran race marathon gym yoga swim swimming workout exercise fitness training "
    "soccer basketball football tennis baseball sport sports bike biking cycling team climb climbing "
    "climber bouldering boulder",
    "travel": "trip travel traveling travelled vacation holiday flight fly visit visited abroad tour "
    "country city cities road journey",
    "outdoors": "camping camp hike hiking mountain mountains beach lake forest park nature trail outdoors "
    "sunset sunrise garden gardening flower flowers",
    "food": "food cook cooking recipe bake baking baked restaurant dinner lunch breakfast cake coffee tea "
    "pizza meal dish cuisine chef vegan",
    "pets": "dog dogs cat cats pet pets puppy kitten horse horses bird turtle turtles",
    "home": "house home apartment moved move moving neighborhood rent room",
    "friends": "friend friends friendship party hangout buddy buddies",
    "community": "community volunteer volunteering charity donate donation nonprofit fundraiser shelter "
    "mentor mentorship activist activism support group",
    "identity": "lgbtq lgbt transgender trans gender identity pride queer gay lesbian transition "
    "transitioning",
    "relationships": "boyfriend girlfriend partner dating date breakup relationship relationships",
    "games": "game games video gaming gamer console tournament tournaments",
    "movies": "movie movies film films show series watch watched tv netflix theater cinema actor",
    "money": "money budget save savings invest investment loan bank finance finances",
    "faith": "church faith god pray prayer religion spiritual",
    "events": "festival conference event parade workshop talk speech convention meetup ceremony",
    "shopping": "bought buy shopping purchase car shoes clothes store",
    "technology": "computer app software code coding programming tech phone website online",
    "wellbeing": "stress stressed relax relaxing calm peaceful self-care meditation mindfulness rest sleep "
    "tired burnout motivation motivated confidence grateful gratitude",
    "creativity": "creative creativity imagination inspiration inspire inspired project projects",
}
TOPIC_NAMES = frozenset(_TOPICS)
_STEM_TO_TOPIC: dict[str, str] = {}
for _topic, _words in _TOPICS.items():
    for _w in _words.split():
        _STEM_TO_TOPIC.setdefault(_w, _topic)

# Time words say when, not what: they never name a scene.
_TIME_WORDS = (
    word_set(
        """
    yesterday today tonight tomorrow week weeks weekend weekends month months year years morning afternoon
    evening night ago last next recently lately soon later earlier early late around before after since
    """
    )
    | frozenset(MONTHS)
    | frozenset(WEEKDAYS)
)
INSTRUCTION_SCENE = "assistant-instructions"
FALLBACK_SCENE = "general"


_SUFFIXES = (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"))


def _topic_of(word: str) -> str | None:
    """The topic of a word or of its plain form ("puppies" -> puppy, "adopted" -> adopt)."""
    if word in _STEM_TO_TOPIC:
        return _STEM_TO_TOPIC[word]
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            topic = _STEM_TO_TOPIC.get(word[: -len(suffix)] + replacement)
            if topic is not None:
                return topic
    return None


def _fallback(words: list[str]) -> str:
    """The two longest distinctive words, alphabetical on ties, in a fixed order."""
    chosen = sorted(set(words), key=lambda w: (-len(w), w))[:2]
    return "-".join(sorted(chosen)) if chosen else FALLBACK_SCENE


def topics_in(text: str, ignore: Iterable[str] = ()) -> frozenset[str]:
    """The topics the words of ``text`` name (``Maya loves bouldering`` -> fitness), whatever
    label the text was given: a keyword label (``bouldering-clears``, an LLM's ``climbing-trip``)
    still says its topic through its words."""
    skip = {w.lower() for w in ignore}
    found = (_topic_of(w) for w in lower_words(text) if w not in skip and len(w) > 2)
    return frozenset(t for t in found if t is not None)


def scene_name(text: str, ignore: Iterable[str] = ()) -> str:
    """A lowercase topic label such as ``art`` or ``art-family`` for ``text``.

    ``ignore`` lists words (people's names) that must not shape the label.
    """
    skip = {w.lower() for w in ignore}
    words = [
        w
        for w in lower_words(text)
        if w not in STOPWORDS and w not in GENERIC and w not in _TIME_WORDS and w not in skip and len(w) > 2
    ]
    scores: dict[str, int] = {}
    for w in words:
        topic = _topic_of(w)
        if topic is not None:
            scores[topic] = scores.get(topic, 0) + 1
    if not scores:
        return _fallback([w for w in words if w.isascii() and w.isalpha()])
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], list(_TOPICS).index(kv[0])))
    if len(ranked) > 1 and ranked[1][1] == ranked[0][1]:
        return "-".join(sorted((ranked[0][0], ranked[1][0])))
    return ranked[0][0]
