"""Who "the user" is in a persona: a user without a name is one person, never a second one beside
their own name.

Messages without a ``name`` (every proxied turn) make atoms about "the user". When the tenant's
memories name exactly one person (a message that carried a name) or the user gave a name ("my name
is Ana"), that is who "the user" is: their facts are that person's, and read with the name ("Ana
lives in Porto": the English pack's ``named``), rather than a profile split into "Ana" and
"Others: The user ...".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from memstrata.engines.offline import atom_text as st
from memstrata.engines.offline.draft import Form, form_of
from memstrata.engines.offline.l1.context import ROLE_LABELS
from memstrata.engines.offline.lang.en import named
from memstrata.models import USER_NAME, Atom

_USER_LABELS = frozenset({"the user", "user"})


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
    given = Counter(str(a.metadata[USER_NAME]) for a in atoms if isinstance(a.metadata.get(USER_NAME), str))
    return given.most_common(1)[0][0] if given else None


def statement_as(a: Atom, alias: str | None) -> str:
    """The atom's statement as a scene or the persona shows it: a nameless user's read with the name
    they go by (``alias``: "Craig is trying ...", not "The user is Craig, ... the user is trying
    ..."); "" when it only gave the name, which the heading says already. ``named`` reads English
    "the user" only, so other statements come back as they are."""
    text = st.statement(a)
    return named(text, alias) if alias and about_nameless_user(a) else text
