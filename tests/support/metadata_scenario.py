"""One scenario of custom metadata and metadata filters, run by the library's and the HTTP
client's end-to-end tests alike (the client has the library's methods)."""

from __future__ import annotations

from typing import Any

import pytest

from memstrata import InputError
from memstrata.models import Layer

CRM = {"app": "crm", "ticket": 7}
ERP = {"app": "erp"}


def capture_two_apps(mem: Any, user: str) -> None:
    """Two sessions about dogs, one from each app; extracted to atoms."""
    mem.capture(
        [{"role": "user", "content": "I adopted a dog named Biscuit from the shelter.", "metadata": CRM}],
        session_key="crm-chat",
        user_id=user,
    )
    mem.capture(
        [
            {"role": "user", "content": "My dog Rex chews every shoe he finds.", "metadata": ERP},
            {"role": "user", "content": "The dog park near work opens at seven.", "metadata": ERP},
        ],
        session_key="erp-chat",
        user_id=user,
    )
    mem.end_session("crm-chat", user_id=user)
    mem.end_session("erp-chat", user_id=user)


def check_filters(mem: Any, user: str) -> None:
    everything = mem.search("dog", user_id=user, min_score=0)
    assert {h.metadata.get("app") for h in everything} == {"crm", "erp"}

    crm = mem.search("dog", filters={"app": "crm"}, user_id=user, min_score=0)
    assert crm.hits and all(h.metadata["app"] == "crm" for h in crm)
    assert Layer.L1 in {h.layer for h in crm}  # the atom inherited its message's keys
    assert all(h.metadata["ticket"] == 7 for h in crm)

    erp = mem.search_conversations("dog", filters={"app": {"in": ["erp"]}}, user_id=user, min_score=0)
    assert len(erp) == 2 and all(h.layer == Layer.L0 and h.metadata["app"] == "erp" for h in erp)

    listed = mem.messages(filters={"app": "erp"}, user_id=user)
    assert [m.metadata for m in listed] == [ERP, ERP]
    assert mem.get_message(listed[0].id, user_id=user).metadata == ERP
    atoms = mem.atoms(filters={"app": "crm"}, user_id=user)
    assert atoms and all(a.metadata["app"] == "crm" and "message_time" in a.metadata for a in atoms)
    assert mem.atoms(filters={"app": "none"}, user_id=user) == []

    assert "erp" in {h.metadata["app"] for h in mem.recall("dog", user_id=user).hits}
    recalled = mem.recall("dog", filters={"app": "crm"}, user_id=user)
    assert recalled.hits and all(h.metadata["app"] == "crm" for h in recalled.hits)
    assert "Biscuit" in recalled.prepend_context and "Rex" not in recalled.prepend_context

    with pytest.raises(InputError) as bad:
        mem.search("dog", filters={"app": {"like": "c%"}}, user_id=user)
    assert bad.value.item == "filters.app"
