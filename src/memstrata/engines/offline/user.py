"""Who "the user" is in a persona: a user without a name is one person, never a second one beside
their own name.

Messages without a ``name`` (every proxied turn) make atoms about "the user". When the tenant's
memories name exactly one person (a message that carried a name) or the user gave a name ("my name
is Ana"), that is who "the user" is: their facts are that person's, and read with the name ("Ana
lives in Porto"), rather than a profile split into "Ana" and "Others: The user ...".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from memstrata.engines.offline.draft import Form, form_of
from memstrata.engines.offline.l1.context import ROLE_LABELS
from memstrata.models import Atom

_USER_LABELS = frozenset({"the user", "user"})
# "the user" as the person, not as a noun's modifier ("the user experience", "the user table"):
# followed by "'s", punctuation or the end, or by a verb (an auxiliary, "-s" or "-ed" form).
_THE_USER = re.compile(
    r"\b[Tt]he user(?='s\b|\s*[,.;:!?)]|\s*$|\s+(?:is|was|has|had|does|did|will|would|can|could|should|"
    r"may|might|must|wants|\w+(?<!s)s|\w+ed)\b)"
)


def about_nameless_user(a: Atom) -> bool:
    """An atom about the nameless user: said by them, or stated back to them by the assistant."""
    speaker = a.metadata.get("speaker")
    if not isinstance(speaker, str):
        return False
    if speaker.lower() in _USER_LABELS:
        return True
    return speaker in ROLE_LABELS and form_of(a) is Form.CONFIRMED


def user_name(atoms: Sequence[Atom], people: Sequence[str]) -> str | None:
    """The name "the user" goes by: the one named person of ``people`` when nameless-user atoms are
    there too, else the name the user gave most often; None when there is no telling."""
    if not any(about_nameless_user(a) for a in atoms):
        return None
    if len(people) == 1:
        return people[0]
    if people:
        return None  # two named people and a nameless user: no telling which one it is
    given = Counter(
        str(a.metadata["user_name"]) for a in atoms if isinstance(a.metadata.get("user_name"), str)
    )
    return given.most_common(1)[0][0] if given else None


def named(text: str, name: str) -> str:
    """``text`` with "the user" read as ``name``: "The user lives in Porto" -> "Ana lives in Porto";
    the name itself goes ("The user's name is Ana and the user lives in Porto" -> "Ana lives in
    Porto": the profile is headed by the name already), leaving "" when nothing else is said."""
    gave = re.match(
        rf"^the user's name is {re.escape(name)}\b(?:\s*(?:,|and|so)\s*)*(?P<rest>.*)$", text, re.I
    )
    if gave is not None:
        text = gave.group("rest").strip()
        text = text[:1].upper() + text[1:] if len(text.split()) > 1 else ""
    return _THE_USER.sub(name, text)
