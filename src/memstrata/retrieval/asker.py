"""Who a first-person question is about: the tenant's user, named as the index and the atoms name them.

A question put to a tenant's memory in the first person ("where do I live?") is the user's own:
its "I" is the person the tenant's user messages speak for. The index does not hold that "I":
an atom states the user's fact in the third person ("Maya moved to Lisbon", "The user moved to
Lisbon"), and a named speaker's message is indexed with their first person replaced by their
name (``documents.py``). Searched as said, such a question meets its own answer at about the
cosine of unrelated text (0.21 for "where do I live?" and "Maya moved to Lisbon" with the bundled
model, against 0.60 for "where does Maya live?"), and the relevance floor silences it.

So the question is read as the index reads records (``read_as_user``): in the layers whose texts
name the user, the vectors are searched and judged with the question's first person read as that
name (the language pack's ``as_said_of``; a nameless user is the pack's ``nameless_user`` in the
atoms, and said as "I" in messages, which are then searched as asked). Keywords stay the
question's own: the name would match every record of the user. Nothing is read when the question
has no first person, when its language has no such rule, or when two named people speak as the
tenant's user (LoCoMo's conversations: "I" could be either).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from memstrata import lang
from memstrata.models import Layer, Role, Tenant, Vectors
from memstrata.ports import Store


@dataclass(frozen=True, slots=True)
class Reading:
    """A first-person question as one layer is searched: ``text`` said of ``who``."""

    text: str
    who: str


@dataclass(frozen=True, slots=True)
class ReadVectors:
    """The vectors of a ``Reading``: the question read (``read``) and the user's name alone (``who``)."""

    read: Vectors
    who: Vectors


def judged_cosine(record: Vectors, asked: Vectors, reading: ReadVectors) -> tuple[float, bool]:
    """The cosine a record of a layer searched by ``reading`` is judged by, and whether the
    reading counted: the question read as said of the user where that is closer to the record
    than the user's name alone is (the question then says something of the record beyond whom
    it is about: "where does Maya live?" 0.60 against "Maya" 0.54 for "Maya moved to Lisbon"),
    else the question as asked ("how does Maya configure TLS?" 0.40 against "Maya" 0.67 for
    "Maya instructed the assistant: ..."; as asked, 0.02). No constant: the name's own cosine is
    the bar, record by record."""
    read = float(record @ reading.read)
    if read > float(record @ reading.who):
        return read, True
    return float(record @ asked), False


# The tenant's first messages say who its user is: a named speaker names themselves from the start.
FIRST_MESSAGES = 64


class Askers:
    """Reads who a tenant's user is, for first-person questions. Read again at each one, through
    the tenant's time index (its first messages, whatever its size): a cache would outlive an
    erasure done by another process."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def users(self, tenant: Tenant) -> tuple[frozenset[str], bool]:
        """The names the tenant's first user messages give, and whether one of them gives none."""
        first = self._store.messages.first(tenant, FIRST_MESSAGES)
        said = [m.name for m in first if m.role == Role.USER]
        return frozenset(n for n in said if n), any(not n for n in said)

    def read_as_user(self, tenant: Tenant, query: str, layers: tuple[Layer, ...]) -> Mapping[Layer, Reading]:
        """The query as each of ``layers`` is searched by vector, where that differs from the
        query as asked (see the module docstring)."""
        pack = lang.get(lang.language_of(query))
        if pack.as_said_of(query, "someone") is None:
            return {}
        names, nameless = self.users(tenant)
        if len(names) > 1:
            return {}
        reading: dict[Layer, Reading] = {}
        if names:
            (name,) = names
            said = pack.as_said_of(query, name)
            targets = (Layer.L1,) if nameless else (Layer.L1, Layer.L0)
            reading = {layer: Reading(said, name) for layer in targets if said}
        elif pack.nameless_user and (said := pack.as_said_of(query, pack.nameless_user)):
            reading = {Layer.L1: Reading(said, pack.nameless_user)}
        return {layer: r for layer, r in reading.items() if layer in layers}
