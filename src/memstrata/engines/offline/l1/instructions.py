"""Instructions a user gives the assistant: "always answer in French", "call me Sam", "don't ...".

Only sentences addressed to the assistant count (in a conversation between two people "don't
worry" is not an instruction to anyone's assistant); the caller decides that. Only standing rules
count: a one-off task ("Explain X", "Write a poem about Y") is not an instruction, while an
imperative that says it lasts ("from now on", "in future") or is about how answers look
("in French", "short", "bullet points") is. Absolute rules ("always ...", "never ...", "don't
ever ...") are strict global instructions, priority -1; the rest get priority 90.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memstrata.engines.offline.l1.subject import rewrite

STRICT_PRIORITY = -1
PRIORITY = 90
ASSISTANT = "the assistant"

_I = re.IGNORECASE
_LEAD = r"^(?:(?:please|also|and|so|ok|okay|from now on|going forward|in the future|in future)[,\s]+)*"
_STRICT = re.compile(_LEAD + r"(?:always|never|do not ever|don't ever|dont ever)\b", _I)
_NEGATIVE = re.compile(_LEAD + r"(?:don't|do not|dont|stop)\s+(?!worry|mind|bother)\w+", _I)
_CALL_ME = re.compile(r"\b(?i:call me|refer to me as|address me as)\s+([A-Z][\w'-]*(?:\s[A-Z][\w'-]*)?)")
_ABOUT_ME = re.compile(r"\b(?:i|i'm|i've|i'll|i'd|me|my|mine|we|our|us)\b", _I)
_REMEMBER = re.compile(_LEAD + r"(?:remember|note|keep in mind|don't forget)(?:\s+that|\s*:)?\s+(.+)", _I)
# A rule, not a one-off task: it says it lasts, or it is about how answers look.
_LASTING = re.compile(
    r"\b(?:from now on|going forward|in (?:the )?future|whenever|every time|each time|by default|always|"
    r"never|all (?:your|the) (?:answers|responses|replies)|your (?:answers|responses|replies))\b",
    _I,
)
_STYLE = re.compile(
    r"\b(?:in (?:[A-Z][a-z]+ish|French|German|Spanish|Dutch|Chinese|Japanese|Korean|Portuguese|Italian|"
    r"Russian|Arabic|Hindi|plain \w+|a \w+ tone)|language|format|formatting|style|tone|short|shorter|brief|"
    r"concise|detailed|formal|informal|casual|bullet|bullets|markdown|emojis?|units|metric|imperial|jargon|"
    r"polite|friendly|answers|responses|replies|sentences|paragraphs|words)\b",
)
# Not "give": "Please give the detailed management of ..." is a task, however "detailed".
_IMPERATIVE = re.compile(
    _LEAD + r"(?:answer|respond|reply|write|speak|talk|use|keep|avoid|format|address|be|include|sign|limit|"
    r"prefer)\b",
    _I,
)
_REQUEST = re.compile(
    r"\b(?:i want you to|i'd like you to|i would like you to|i need you to|you should|you must|"
    r"make sure (?:to|you|that)|i prefer)\b",
    _I,
)


@dataclass(frozen=True, slots=True)
class Instruction:
    """An instruction atom's text and priority."""

    content: str
    priority: int


def detect(sentence: str, speaker: str) -> Instruction | None:
    """The instruction in ``sentence`` (spoken by ``speaker`` to the assistant), or None."""
    s = sentence.strip()
    if s.endswith("?"):
        return None  # "could you ...?" requests are one-off, not standing rules
    call = _CALL_ME.search(s)
    if call:
        return Instruction(f"{speaker} wants to be called {call.group(1)}.", PRIORITY)
    remember = _REMEMBER.match(s)
    if remember and _ABOUT_ME.search(remember.group(1)):  # "Note: regularization is on" is a doc's
        fact = rewrite(remember.group(1), speaker, ASSISTANT).text
        return Instruction(f"{speaker} asked the assistant to remember: {fact}", PRIORITY)
    asks = bool(_IMPERATIVE.match(s) or _REQUEST.search(s))
    strict = bool(_STRICT.match(s)) or (asks and re.search(r"\b(?:always|never)\b", s, _I) is not None)
    lasting = bool(_LASTING.search(s) or _STYLE.search(s))
    if not (strict or _NEGATIVE.match(s) or (asks and lasting)):
        return None  # "Explain X" or "Write a poem" is a task for now, not a standing rule
    text = rewrite(s, speaker, ASSISTANT).text
    return Instruction(f"{speaker} instructed the assistant: {text}", STRICT_PRIORITY if strict else PRIORITY)


# Verbs a one-off request to an assistant opens with ("Explain step by step how ...", "Write a bunch
# of tags for this", "Generate 300-500 character descriptions"): a task, which states no fact.
_TASK = re.compile(
    r"^(?:(?:please|now|also|then|ok|okay|and|so|next)[,\s]+)*(?:write|rewrite|generate|explain|list|create|"
    r"make|give|tell|show|help|provide|summari[sz]e|translate|describe|compare|suggest|fix|add|split|"
    r"cater|refrain|emphasi[sz]e|present|find|calculate|convert|draft|design|implement|build|update|check|"
    r"review|improve|correct|edit|continue|imagine|pretend|act|assume|analy[sz]e|identify|classify|"
    r"extract|paraphrase|rephrase|outline|recommend|plan|solve|answer|complete|fill|craft|compose|"
    r"output|return|print|format|sort|count|name|define|elaborate|expand|shorten|simplify|proofread)\b",
    _I,
)


def is_task(sentence: str) -> bool:
    """A one-off request to the assistant ("Explain how to ...", "Write a poem about ..."): no
    standing rule (``detect`` says when it is one) and no fact about the user."""
    return _TASK.match(sentence.strip()) is not None
