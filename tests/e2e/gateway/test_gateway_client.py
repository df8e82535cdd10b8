"""``memstrata.client`` against a real server: code written against the library works unchanged."""

from __future__ import annotations

from typing import cast

import pytest

from memstrata import AsyncMemory, ConflictError, InputError, Memory, NotFoundError, PathError
from memstrata.client import AsyncMemoryClient, MemoryClient
from memstrata.errors import ConfigError
from memstrata.models import Atom, Layer, SearchResult
from tests.e2e.gateway.conftest import KEY
from tests.support.live_server import LiveServer


def test_memory_open_with_a_url_returns_the_client(server: LiveServer, user: str) -> None:
    with Memory.open(server.url, api_key=KEY) as mem:
        assert isinstance(cast(object, mem), MemoryClient)
        done = mem.capture(
            [{"role": "user", "content": "I moved to Lisbon in 2021."}], session_key="c", user_id=user
        )
        assert len(done.stored) == 1 and done.stored[0].tenant.user_id == user
        mem.end_session("c", user_id=user)
        result = mem.search("Lisbon", user_id=user, layers=("L1", "L0"))
        assert isinstance(result, SearchResult) and [h.layer for h in result] == [Layer.L1]
        assert result[0].source_message_ids == (done.stored[0].id,)  # the atom stands for its message
        assert result[0].explain["keyword"] == 1.0 and 0 < result[0].score <= 1
        atom = next(a for a in mem.atoms(user_id=user) if "Lisbon" in a.content)
        assert isinstance(atom, Atom)
        newer = mem.update_atom(atom.id, content="User moved to Porto in 2021.", user_id=user)
        assert (
            newer.version == atom.version + 1
            and mem.get_atom(atom.id, user_id=user).superseded_by == newer.id
        )
        with pytest.raises(ConflictError) as conflict:
            mem.update_atom(atom.id, content="again", user_id=user)
        assert conflict.value.current == newer.id
        with pytest.raises(NotFoundError):
            mem.get_message("nope", user_id=user)
        with pytest.raises(NotFoundError) as missing:
            mem.read_scene("nope.md", user_id=user)
        assert missing.value.kind == "scene"
        with pytest.raises(PathError):
            mem.read_scene("../persona.md", user_id=user)
        assert not mem.delete_scene("nope.md", user_id=user)
        with pytest.raises(InputError) as invalid:
            mem.search("x", limit=0, user_id=user)
        assert invalid.value.item == "limit"
        assert mem.get_atom(newer.id, user_id=user).tenant.user_id == user
        assert mem.counts(user_id=user).messages == 1
        recall = mem.before_prompt("where did I move?", session_key="c", transcript_length=2, user_id=user)
        assert "Porto" in recall.prepend_context
        st = mem.status()
        assert any(s.tenant.user_id == user for s in st.sessions)
        with pytest.raises(ConfigError, match="server's host"):
            mem.import_tdai("/tmp/anything")


async def test_async_memory_open_with_a_url_returns_the_async_client(server: LiveServer, user: str) -> None:
    mem = await AsyncMemory.open(server.url, api_key=KEY)
    try:
        assert isinstance(cast(object, mem), AsyncMemoryClient)
        transcript = [
            {"role": "user", "content": "I am allergic to peanuts."},
            {"role": "assistant", "content": "Noted, no peanuts."},
        ]
        first = await mem.turn_committed(transcript, session_key="t", user_id=user)
        again = await mem.turn_committed(transcript, session_key="t", user_id=user)
        assert len(first.stored) == 2 and again.stored == () and len(again.duplicates) == 2
        scene = await mem.write_scene("health.md", "Peanut allergy.", summary="health", user_id=user)
        assert (await mem.read_scene("scene_blocks/health.md", user_id=user)).body == scene.body
        assert [e.name for e in await mem.scenes(user_id=user)] == ["health.md"]
        persona = await mem.write_persona("Allergic to peanuts.", user_id=user)
        assert persona.body == "Allergic to peanuts." and (await mem.persona(user_id=user)) == persona
        assert await mem.delete_scene("health.md", user_id=user)
        assert sorted(await mem.delete_messages(session_keys=["t"], user_id=user)) == sorted(
            m.id for m in first.stored
        )
    finally:
        await mem.close()


def test_a_wrong_key_is_a_config_error(server: LiveServer) -> None:
    with MemoryClient(server.url, api_key="wrong") as mem, pytest.raises(ConfigError, match="invalid token"):
        mem.status()
