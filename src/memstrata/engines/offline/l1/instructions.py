"""Instructions a user gives the assistant: "always answer in French", "call me Sam", "don't ...".

Only sentences addressed to the assistant count (in a conversation between two people "don't
worry" is not an instruction to anyone's assistant); the caller decides that. Only standing rules
count: a one-off task ("Explain X", "Write a poem about Y", "can you help me finish this function")
is not an instruction, while one that says it lasts ("always", "whenever", "from now on", "every
time", a condition on later answers: "when you show me HTML") or is about how answers look ("in
French", "short", "bullet points") is. The rule must be what the sentence opens with: "I want you
to ...", "Use ...", "I prefer short answers"; the same words deep in a run-on request ("I'm trying
to ..., I want to make sure that ..., I've never ..., can you ...") are the user's own goals, not
rules for the assistant. Absolute rules ("always ...", "never ...", "don't ever ...") are strict
global instructions, priority -1; the rest get priority 90.
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
# A request that opens the sentence and speaks to the assistant ("I want you to ...", "Make sure
# to ..."); "I want to make sure that my code ..." or "I'll make sure to ..." is the user's own aim.
_REQUEST = re.compile(
    _LEAD + r"(?:i want you to|i'd like you to|i would like you to|i need you to|you should|you must|"
    r"make sure (?:to|you|that))\b",
    _I,
)
# A preference the sentence opens with: a rule for the assistant when it is about answers or says it
# lasts ("I prefer short answers", "I prefer X whenever possible"); otherwise a persona preference.
_PREFER = re.compile(
    _LEAD + r"(?:i|we)(?:'d|\s+would)?\s+(?:(?:really|generally|usually|much|always)\s+)?(?:prefer|rather)\b",
    _I,
)
# A condition on the assistant's later answers: "when I ask about ...", "whenever you show me code",
# "if you suggest ...". Present tense: "when I asked you yesterday" is an event.
_WHEN = (
    r"\b(?:when|whenever|if|every time|each time|any ?time)\s+(?:i|you)\s+(?:\w+\s+)?(?:ask|asks|request|"
    r"show|give|write|explain|send|answer|reply|respond|suggest|recommend|provide|share|talk|help|mention|"
    r"generate|create|list|describe|quote|cite|refer)\b"
)
_FUTURE_ANSWER = re.compile(_WHEN, _I)
# A conditional rule that opens the sentence: "Whenever I ask about code, use TypeScript" (not "When I
# run the tests, keep getting errors": the condition must be on asking or answering).
_WHEN_THEN = re.compile(
    _LEAD + _WHEN + r"[^,;]{0,80}[,;]\s*(?:(?:please|always|also)\s+)*(?:never\s+|don't\s+|do not\s+)?"
    r"(?:answer|respond|reply|write|speak|talk|use|keep|avoid|format|include|add|give|show|provide|mention|"
    r"list|explain|cite|start|end|put|stick|assume|be|remind|tell|ask)\b",
    _I,
)
# What makes a request this turn's: "can you ...", "help me ...", "I need help ...", "this time".
_ONE_OFF = re.compile(
    r"\b(?:can|could|would|will) you\b|\bhelp me\b|\bi need (?:some )?help\b|\bthis (?:time|once)\b|"
    r"\bfor (?:this|that) (?:one|answer|reply|question|task|problem|example)\b|\bright now\b",
    _I,
)
# Where a rule gives way to the rest of a run-on sentence: "..., can you help me ...", "..., so ...".
_TURN = re.compile(
    r"[,;:]\s+(?:and\s+|but\s+|so\s+|then\s+)?(?:can you|could you|would you|will you|help me|"
    r"i'm|i am|i've|i have|i was|i need|i want to|which|so that)\b|\s[-–—]\s",
    _I,
)
# "never" about the user's own past ("I've never completed ...") is no rule for the assistant.
_ALWAYS = re.compile(r"(?<!i've )(?<!i have )(?<!i had )(?<!i )\b(?:always|never)\b", _I)


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
    head = _TURN.split(s, maxsplit=1)[0]  # the rule, without the run-on request that may follow it
    prefers = _PREFER.match(s) is not None
    asks = bool(_IMPERATIVE.match(s) or _REQUEST.match(s))
    strict = bool(_STRICT.match(s)) or ((asks or prefers) and _ALWAYS.search(head) is not None)
    lasting = bool(_LASTING.search(head) or _FUTURE_ANSWER.search(head))
    styled = bool(_STYLE.search(head)) and not _ONE_OFF.search(s)
    if not (
        strict or _NEGATIVE.match(s) or _WHEN_THEN.match(s) or ((asks or prefers) and (lasting or styled))
    ):
        return None  # "Explain X", "Write a poem", "can you help me ...": a task for now, not a rule
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
