"""Instructions a user gives the assistant: "always answer in French", "call me Sam", "don't ...".

Only sentences addressed to the assistant count (in a conversation between two people "don't
worry" is not an instruction to anyone's assistant); the caller decides that. Absolute rules
("always ...", "never ...", "don't ever ...") are strict global instructions, priority -1;
the rest get priority 90.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memstrata.engines.offline.subject import rewrite

STRICT_PRIORITY = -1
PRIORITY = 90
ASSISTANT = "the assistant"

_I = re.IGNORECASE
_LEAD = r"^(?:(?:please|also|and|so|ok|okay|from now on|going forward|in the future|in future)[,\s]+)*"
_STRICT = re.compile(_LEAD + r"(?:always|never|do not ever|don't ever|dont ever)\b", _I)
_NEGATIVE = re.compile(_LEAD + r"(?:don't|do not|dont|stop)\s+\w+", _I)
_CALL_ME = re.compile(r"\b(?:call me|my name is|i go by|refer to me as)\s+([A-Z][\w'-]*(?:\s[A-Z][\w'-]*)?)")
_REMEMBER = re.compile(_LEAD + r"(?:remember|note|keep in mind|don't forget)(?:\s+that|\s*:)?\s+(.+)", _I)
_IMPERATIVE = re.compile(
    _LEAD + r"(?:answer|respond|reply|write|speak|talk|use|keep|avoid|format|give|explain|include|address|"
    r"be|make|add|summari[sz]e|list|show|translate|sign|start|end|limit|prefer)\b",
    _I,
)
_REQUEST = re.compile(
    r"\b(?:i want you to|i'd like you to|i would like you to|i need you to|you should always|"
    r"you should never|you must|make sure (?:to|you|that)|from now on|going forward|i prefer (?:that you|"
    r"you to|\w+ (?:answers|responses|replies|explanations)))\b",
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
    if call and re.search(r"\bcall me\b|\brefer to me as\b", s, _I):
        return Instruction(f"{speaker} wants to be called {call.group(1)}.", PRIORITY)
    remember = _REMEMBER.match(s)
    if remember:
        fact = rewrite(remember.group(1), speaker, ASSISTANT).text
        return Instruction(f"{speaker} asked the assistant to remember: {fact}", PRIORITY)
    strict = bool(_STRICT.match(s)) or bool(re.search(r"\b(?:always|never)\b", s, _I) and _REQUEST.search(s))
    if not (strict or _NEGATIVE.match(s) or _IMPERATIVE.match(s) or _REQUEST.search(s)):
        return None
    text = rewrite(s, speaker, ASSISTANT).text
    return Instruction(f"{speaker} instructed the assistant: {text}", STRICT_PRIORITY if strict else PRIORITY)
