"""The L3 prompt asks for the same shape as the offline writer: a budgeted profile, not a log."""

from __future__ import annotations

from pathlib import Path

from memstrata.engines.llm.l3_prompt import persona_messages
from memstrata.models import Tenant
from memstrata.ports import PersonaRequest
from memstrata.stores.files.folder import DirectoryFolder


def test_the_persona_prompt_asks_for_a_dated_profile_within_the_budget(tmp_path: Path) -> None:
    request = PersonaRequest(
        Tenant(), DirectoryFolder(tmp_path, only="persona.md"), "", True, (), (), (), (), 0
    )
    system = persona_messages(request, 900)[0].content
    assert "within 900 characters" in system
    assert "A profile, not a log" in system
    for section in (
        "Health",
        "Work and education",
        "Home",
        "Family and relationships",
        "Pets",
        "Likes",
        "Plans",
    ):
        assert f'"{section}' in system
    assert "month and year" in system and "belong in the scenes" in system
