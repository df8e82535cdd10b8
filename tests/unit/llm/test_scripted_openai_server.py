"""The loopback test server's embeddings endpoint, as the openai SDK sees it."""

from __future__ import annotations

import math
from contextlib import aclosing

import openai
import pytest
from tests.support.openai_server import ScriptedOpenAIServer, hashing_vector


@pytest.mark.parametrize("encoding", ["float", "base64"])
async def test_embeddings_are_deterministic_unit_vectors(
    openai_server: ScriptedOpenAIServer, encoding: str
) -> None:
    async with aclosing(
        openai.AsyncOpenAI(base_url=openai_server.base_url, api_key="k", max_retries=0)
    ) as client:
        result = await client.embeddings.create(
            model="embed", input=["red apple", "apple red", "blue sky"], encoding_format=encoding
        )
    vectors = [item.embedding for item in result.data]
    assert [len(v) for v in vectors] == [64, 64, 64]
    assert vectors[0] == pytest.approx(hashing_vector("red apple", 64))
    assert vectors[0] == pytest.approx(vectors[1])  # same words, same vector
    assert math.isclose(sum(x * x for x in vectors[2]), 1.0, rel_tol=1e-5)
    assert openai_server.bodies("embeddings")[0]["input"] == ["red apple", "apple red", "blue sky"]


async def test_embedding_errors_can_be_scripted(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.enqueue_error(503, "overloaded", endpoint="embeddings")
    async with aclosing(
        openai.AsyncOpenAI(base_url=openai_server.base_url, api_key="k", max_retries=0)
    ) as client:
        with pytest.raises(openai.APIStatusError) as caught:
            await client.embeddings.create(model="embed", input="hello")
        assert caught.value.status_code == 503
        ok = await client.embeddings.create(model="embed", input="hello", dimensions=8)
    assert len(ok.data[0].embedding) == 8
