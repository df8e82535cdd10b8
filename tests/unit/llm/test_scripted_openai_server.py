"""The loopback test server's embeddings endpoint, as the openai SDK sees it."""

from __future__ import annotations

import base64
import math
import struct

import openai
import pytest

from tests.support.openai_server import ScriptedOpenAIServer, hashing_vector

TEXTS = ["red apple", "apple red", "blue sky"]


def client_for(server: ScriptedOpenAIServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)


async def test_embeddings_are_deterministic_unit_vectors(openai_server: ScriptedOpenAIServer) -> None:
    async with client_for(openai_server) as client:
        result = await client.embeddings.create(model="embed", input=TEXTS)
    vectors = [item.embedding for item in result.data]
    assert [len(v) for v in vectors] == [64, 64, 64]
    assert vectors[0] == pytest.approx(hashing_vector("red apple", 64))
    assert vectors[0] == pytest.approx(vectors[1])  # same words, same vector
    assert math.isclose(sum(x * x for x in vectors[2]), 1.0, rel_tol=1e-5)
    assert openai_server.bodies("embeddings")[0]["input"] == TEXTS


async def test_base64_embeddings_decode_to_the_same_vectors(openai_server: ScriptedOpenAIServer) -> None:
    async with client_for(openai_server) as client:
        result = await client.embeddings.create(model="embed", input=TEXTS, encoding_format="base64")
    # Asked for explicitly, base64 comes back as the raw string: little-endian float32.
    raw = base64.b64decode(str(result.data[2].embedding))
    assert list(struct.unpack("<64f", raw)) == pytest.approx(hashing_vector("blue sky", 64))


async def test_embedding_errors_can_be_scripted(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.enqueue_error(503, "overloaded", endpoint="embeddings")
    async with client_for(openai_server) as client:
        with pytest.raises(openai.APIStatusError) as caught:
            await client.embeddings.create(model="embed", input="hello")
        assert caught.value.status_code == 503
        ok = await client.embeddings.create(model="embed", input="hello", dimensions=8)
    assert len(ok.data[0].embedding) == 8
